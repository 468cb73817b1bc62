"""Reactor and the bonus (notebook 13; the paper's Sec. 4.2, Fig. 7, 8, 16) at CPU scale.

Two questions, each answered on DeepSea-N (:mod:`pcnn_explore.deep_sea`), the task where notebook
12 shows the bonus at work on a laptop:

- **Fig. 7 / 8**: does the bonus help Reactor? Reactor against Reactor with the bonus (on a random
  25% of steps, as in the paper), and DQN with the bonus and MMC for reference; success is the
  share of episodes paying DeepSea's +1 (its area under the curve, the paper's AUC measure, is the
  mean over the run: the share of all episodes that paid it).
- **Sec. 4.2's hypothesis**: Retrace's truncated traces cut the propagation of a rare reward.
  Retrace carries the reward r_{T-1} of a replayed episode back to its start (x_0, a_0) with weight
  gamma^(T-1) prod_{s=1}^{T-1} c_s, c_s = lambda min(1, pi(a_s|x_s) / mu(a_s|x_s)); the MMC target
  carries it with beta gamma^(T-1) (beta = 0.1) whatever the policy. :func:`trace_products`
  measures prod c along every successful episode still in a trained Reactor's replay: the trained
  policy pi (from ``policy.pt``) against the behaviour probabilities mu stored when the episode
  was played (``checkpoint.pt``'s sequence replay). A product below beta means MMC carries more of
  the +1 to the episode's start than Retrace does in one update.

On DeepSea the paper's translation-invariant PixelCNN cannot tell the agent's cells apart (notebook
12), so the study's "PixelCNN" is the position-biased one (``pixelcnn_pos``); any variant of the
rule (:mod:`pcnn_explore.experiments.agent_variants`) may be named instead. Steps are agent steps.
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from pcnn_explore.deep_sea import deep_sea_id
from pcnn_explore.experiments.agent_runs import RunSpec, run_specs
from pcnn_explore.experiments.agent_variants import MMC_BETA, VARIANTS, check_variant, variant_agent, variant_label
from pcnn_explore.experiments.exploration import SUCCESS_RETURN, read_deep_sea_run, success_table
from pcnn_explore.profiles import ExperimentSettings, check_profile

__all__ = ["ReactorStudySettings", "PAPER", "specs", "run", "roles", "success_curves", "success_rates",
           "trace_products", "run_traces", "goals", "verdict", "summary", "metrics"]

PAPER = {
    "fig7_fig8": "Reactor-PixelCNN improves on Reactor on a large fraction of the 57 games, in area under the "
                 "curve (Fig. 8); Reactor beats DQN in about 50 of 57 games (Fig. 7, 16)",
    "sec4_2": "on hard, sparse-reward games Reactor seems unable to make full use of the bonus; the authors' "
              "hypothesis: Retrace's truncated importance ratios cut the propagation of reward over long horizons, "
              "which MMC keeps (no numbers given)",
    "mmc_beta": MMC_BETA,
    "bonus_fraction": "the bonus (and the density model's update) on a random 25% of Reactor's steps",
}


@dataclasses.dataclass
class ReactorStudySettings(ExperimentSettings):
    """Settings of notebook 13. Runs last ``episodes`` DeepSea episodes of ``size`` steps each."""

    profile: str = "study"
    seeds: tuple[int, ...] = (0, 1, 2)
    size: int = 8  # DeepSea N
    episodes: int = 600
    #: Reactor, Reactor with the bonus, DQN with the bonus and MMC (the reference)
    variants: tuple[str, ...] = ("reactor", "reactor_pixelcnn_pos", "pixelcnn_pos_mmc")
    #: TrainConfig fields for every run, on top of TrainConfig's preset and DeepSea's env_defaults
    overrides: tuple[tuple[str, Any], ...] = ()
    late_fraction: float = 0.25  # the last quarter of a run's steps is "late in training"
    window: int = 50  # episodes per point of the success curves
    workers: int = 2

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(seeds=(0,), size=5, episodes=40, overrides=(("learning_starts", 100),), window=10),
        "study": dict(),
        "paper": dict(seeds=(0, 1, 2), size=20, episodes=10_000, window=500,
                      variants=("reactor", "reactor_pixelcnn_pos", "pixelcnn_pos_mmc", "dqn")),
    }

    def check(self) -> None:
        """Raise ValueError/TypeError on bad settings, before any run starts."""
        from pcnn_explore.deep_sea import DEEP_SEA_SIZES

        check_profile(self.profile)
        for name in ("seeds", "variants"):
            v = getattr(self, name)
            if isinstance(v, str) or not isinstance(v, (tuple, list)) or not v:
                raise TypeError(f"{name} must be a non-empty tuple, got {v!r}")
        if len(set(self.variants)) != len(self.variants):
            raise ValueError(f"variants repeat: {', '.join(self.variants)}")
        for v in self.variants:
            check_variant(v)
        if self.size not in DEEP_SEA_SIZES or self.size > 33:
            raise ValueError(f"size: DeepSea-N with N in 3..33 (an episode must fit one 33-step Reactor sequence), "
                             f"got {self.size!r}")
        for name in ("episodes", "window", "workers"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not 0 < self.late_fraction <= 1:
            raise ValueError(f"late_fraction must be in (0, 1], got {self.late_fraction!r}")

    @property
    def env(self) -> str:
        return deep_sea_id(self.size)

    @property
    def steps(self) -> int:
        """Agent steps per run: ``episodes`` x N."""
        return self.episodes * self.size


# ------------------------------------------------------------------------------------- runs
def specs(settings: ReactorStudySettings, out_root: str | os.PathLike) -> list[RunSpec]:
    """One RunSpec per variant x seed, under ``out_root/<env>/<variant>_s<seed>``."""
    over = tuple(sorted(dict(settings.overrides).items()))
    root = Path(out_root) / settings.env
    return [RunSpec(v, settings.env, int(s), settings.steps, settings.profile, str(root / f"{v}_s{s}"), over)
            for v in settings.variants for s in settings.seeds]


def run(settings: ReactorStudySettings, output_dir: str | os.PathLike, progress: bool = False) -> list[RunSpec]:
    """Train (or read back finished) every run of ``settings`` under ``output_dir/runs``; their specs."""
    settings.check()
    todo = specs(settings, Path(output_dir) / "runs")
    run_specs(todo, settings.workers, progress=progress)
    return todo


def roles(variants) -> dict[str, str | None]:
    """Which variant is Reactor (no bonus), Reactor with a bonus, and DQN with a bonus (None: not run)."""
    def first(pred):
        return next((v for v in variants if pred(v)), None)

    return {"reactor": first(lambda v: variant_agent(v) == "reactor" and VARIANTS[v]["bonus"] == "none"),
            "reactor_bonus": first(lambda v: variant_agent(v) == "reactor" and VARIANTS[v]["bonus"] != "none"
                                   and not VARIANTS[v].get("intrinsic_only")),
            "dqn_bonus": first(lambda v: variant_agent(v) == "dqn" and VARIANTS[v]["bonus"] != "none"
                               and not VARIANTS[v].get("intrinsic_only"))}


def _episode_successes(out_dir: str | os.PathLike) -> np.ndarray:
    """1.0 where a complete episode of ``log.csv`` paid DeepSea's +1, else 0.0 (episode order)."""
    from pcnn_explore.train import read_log

    log = read_log(out_dir)
    done = log["complete"] == 1
    return (log["return"][done] > SUCCESS_RETURN).astype(np.float64)


def success_curves(settings: ReactorStudySettings, todo: list[RunSpec]) -> dict[str, np.ndarray]:
    """variant -> (seeds, points) share of episodes paying +1 in consecutive windows of ``window`` episodes."""
    out: dict[str, list[np.ndarray]] = {}
    for s in todo:
        wins = _episode_successes(s.out_dir)
        k = len(wins) // settings.window
        out.setdefault(s.variant, []).append(wins[: k * settings.window].reshape(k, settings.window).mean(1))
    return {v: np.stack(c) for v, c in out.items()}


def success_rates(settings: ReactorStudySettings, todo: list[RunSpec]) -> dict[str, dict[str, Any]]:
    """variant -> {"auc": per seed share of all episodes paying +1 (the success curve's mean),
    "late": per seed share of the late episodes paying +1, "auc_mean", "late_mean", and notebook 12's
    "reached_late" (seeds with a +1 late), "first_success_steps" (per seed, NaN: never)}."""
    table = success_table([read_deep_sea_run(s.out_dir, s.variant, settings.size, s.seed, s.steps,
                                             settings.late_fraction) for s in todo])
    out: dict[str, dict[str, Any]] = {}
    for s in todo:
        wins = _episode_successes(s.out_dir)
        late = wins[int(round(len(wins) * (1.0 - settings.late_fraction))):]
        row = out.setdefault(s.variant, {"auc": [], "late": []})
        row["auc"].append(float(wins.mean()) if len(wins) else 0.0)
        row["late"].append(float(late.mean()) if len(late) else 0.0)
    for v, row in out.items():
        t = table[v][settings.size]
        row.update(auc_mean=float(np.mean(row["auc"])), late_mean=float(np.mean(row["late"])),
                   reached_late=t["reached_late"], seeds=t["seeds"], first_success_steps=t["first_success_steps"])
    return out


# ------------------------------------------------------------------------------ trace products
def trace_products(run_dir: str | os.PathLike) -> dict[str, Any]:
    """prod_{s=1}^{T-1} c_s along each successful episode in a finished Reactor run's replay.

    c_s = lambda min(1, pi(a_s|x_s) / mu(a_s|x_s)): pi the run's final policy (``policy.pt``, its LSTM
    started from zero at x_0 as the actor's), mu the stored behaviour probability. Returns
    ``{"episodes": log episode numbers, "steps": agent step each ended at, "lengths": T,
    "products": prod c, "mean_c": mean c_s over s = 1 ... T-1, "lam": lambda, "replayed": episodes
    in the replay, "successes": successful episodes in the log}``. One env per run (num_envs 1).
    """
    import torch

    from pcnn_explore.agents.sequence_replay import SequenceShard
    from pcnn_explore.checkpoint import load
    from pcnn_explore.train import load_policy, read_log

    run_dir = Path(run_dir)
    cfg = json.loads((run_dir / "settings.json").read_text())
    if cfg.get("agent") != "reactor" or int(cfg.get("num_envs", 1)) != 1:
        raise ValueError(f"{run_dir}: trace products need a Reactor run with one env, got agent "
                         f"{cfg.get('agent')!r}, num_envs {cfg.get('num_envs')!r}")
    (state,) = load(run_dir / "checkpoint.pt")["replay"]["shards"]
    shard = SequenceShard(int(state["capacity"]), tuple(state["obs_shape"]), int(state["stack"]),
                          int(state["seq_len"]), int(state["burn_in"]))
    shard.load_state_dict(state)
    agent = load_policy(run_dir)[1].agent
    log = read_log(run_dir)
    won = np.flatnonzero((log["complete"] == 1) & (log["return"] > SUCCESS_RETURN))
    n = shard.filled()
    out: dict[str, Any] = {k: [] for k in ("episodes", "steps", "lengths", "products", "mean_c")}
    out.update(lam=float(agent.lam), successes=int(len(won)),
               replayed=int(len(np.unique(shard.episode_id[:n][shard.episode_id[:n] >= 0]))))
    for row in won:
        e = int(log["episode"][row])
        slots = np.flatnonzero((shard.episode_id[:n] == e) & (shard.episode_step[:n] == 0))
        if len(slots) != 1:
            continue  # overwritten by newer episodes
        batch = shard.gather(slots)
        T = int(batch.length[0])
        if T != int(log["length"][row]):
            raise ValueError(f"{run_dir}: episode {e} has {int(log['length'][row])} steps, longer than one "
                             f"{shard.seq_len}-step sequence ({T}): trace products need N <= {shard.seq_len}")
        with torch.no_grad():
            logits, _ = agent.net.unroll(torch.from_numpy(batch.obs), torch.from_numpy(batch.first),
                                         burn_in=batch.burn_in)
        pi = torch.softmax(logits[0, :T].double(), -1).numpy()[np.arange(T), batch.action[0, :T]]
        c = agent.lam * np.minimum(1.0, pi / batch.mu[0, :T].astype(np.float64))
        out["episodes"].append(e)
        out["steps"].append(int(log["step"][row]))
        out["lengths"].append(T)
        out["products"].append(float(np.prod(c[1:])))
        out["mean_c"].append(float(c[1:].mean()) if T > 1 else 1.0)
    return out


def run_traces(settings: ReactorStudySettings, todo: list[RunSpec]) -> dict[str, list[dict[str, Any]]]:
    """Reactor variant -> one :func:`trace_products` per seed."""
    return {v: [trace_products(s.out_dir) for s in todo if s.variant == v]
            for v in settings.variants if variant_agent(v) == "reactor"}


def _pooled(runs: list[dict[str, Any]]) -> dict[str, Any]:
    p = np.array([x for r in runs for x in r["products"]], np.float64)
    first = [r["products"][0] for r in runs if r["products"]]
    return {"successes_replayed": int(len(p)), "median_product": float(np.median(p)) if len(p) else None,
            "below_mmc_beta": float((p < MMC_BETA).mean()) if len(p) else None,
            "min_product": float(p.min()) if len(p) else None,
            "first_success_products": first, "mmc_beta": MMC_BETA}


# ------------------------------------------------------------------------------- summaries
def goals(rates: dict[str, dict[str, Any]], traces: dict[str, list[dict]], variants) -> dict[str, dict[str, Any]]:
    """The three claims, each ``{"holds": bool or None (not run / nothing to measure), ...numbers}``:
    ``bonus_helps_reactor`` (Fig. 7/8: the bonus Reactor's success AUC above Reactor's),
    ``dqn_bonus_above_reactor_bonus`` (Sec. 4.2: DQN with bonus and MMC succeeds late more often than
    Reactor with the bonus), ``traces_cut`` (Sec. 4.2: median prod c over the bonus Reactor's replayed
    successes below MMC's beta)."""
    r = roles(variants)
    base, bonus, dqn = (rates.get(r[k]) if r[k] else None for k in ("reactor", "reactor_bonus", "dqn_bonus"))
    out: dict[str, dict[str, Any]] = {}
    out["bonus_helps_reactor"] = {
        "holds": None if not (base and bonus) else bool(bonus["auc_mean"] > base["auc_mean"]),
        "auc": {v: rates[v]["auc_mean"] for v in (r["reactor"], r["reactor_bonus"]) if v in rates},
        "improvement_percent": (None if not (base and bonus) or base["auc_mean"] == 0 else
                                100.0 * (bonus["auc_mean"] - base["auc_mean"]) / abs(base["auc_mean"]))}
    out["dqn_bonus_above_reactor_bonus"] = {
        "holds": None if not (dqn and bonus) else bool(dqn["late_mean"] > bonus["late_mean"]),
        "late": {v: rates[v]["late_mean"] for v in (r["reactor_bonus"], r["dqn_bonus"]) if v in rates}}
    pooled = _pooled(traces.get(r["reactor_bonus"], [])) if r["reactor_bonus"] else None
    out["traces_cut"] = {"holds": None if not pooled or pooled["median_product"] is None
                         else bool(pooled["median_product"] < MMC_BETA),
                         **(pooled or {})}
    return out


def verdict(profile: str, g: dict[str, dict[str, Any]]) -> str:
    """agrees (every tested claim holds), partly (some), differs (none), or not testable (smoke, or none tested)."""
    tested = [x["holds"] for x in g.values() if x["holds"] is not None]
    if profile == "smoke" or not tested:
        return "not testable at this profile"
    return "agrees" if all(tested) else "partly" if any(tested) else "differs"


def summary(settings: ReactorStudySettings, rates: dict, traces: dict) -> dict[str, Any]:
    """The verdict, one line per claim with its numbers, the claims' numbers (``goals``) and each
    Reactor variant's pooled trace products (``traces``)."""
    g = goals(rates, traces, settings.variants)

    def status(h):
        return "nothing to measure" if h is None else ("holds" if h else "does not hold")

    def pct(x):
        return "n/a" if x is None else f"{x:+.0f}%"

    b, d, t = g["bonus_helps_reactor"], g["dqn_bonus_above_reactor_bonus"], g["traces_cut"]
    lines = [f"DeepSea-{settings.size}, {settings.episodes} episodes, {len(settings.seeds)} seed(s); a uniformly "
             f"random policy pays +1 in 2^-N = {0.5 ** settings.size:.4f} of its episodes:"]
    lines += [f"  {variant_label(v)}: +1 in {row['auc_mean']:.3f} of all episodes, {row['late_mean']:.3f} of the "
              f"late ones; seeds with a late +1: {row['reached_late']}/{row['seeds']}" for v, row in rates.items()]
    lines.append(f"Fig. 7/8, the bonus helps Reactor (success AUC): {status(b['holds'])} "
                 f"(improvement {pct(b['improvement_percent'])})")
    lines.append(f"Sec. 4.2, DQN with bonus + MMC succeeds late more often than Reactor with the bonus: "
                 f"{status(d['holds'])} (" + ", ".join(f"{variant_label(v)} {x:.3f}" for v, x in d["late"].items()) + ")")
    if t.get("median_product") is None:
        lines.append("Sec. 4.2, Retrace's traces cut the +1 on its way back: no successful episode in the replay")
    else:
        lines.append(f"Sec. 4.2, Retrace's traces cut the +1 on its way back (median prod c < MMC's beta = {MMC_BETA}): "
                     f"{status(t['holds'])} (median prod c {t['median_product']:.3f} over "
                     f"{t['successes_replayed']} replayed successes; {100 * t['below_mmc_beta']:.0f}% below beta)")
    return {"verdict": verdict(settings.profile, g), "lines": lines, "goals": g,
            "traces": {v: _pooled(runs) for v, runs in traces.items()}}


def metrics(settings: ReactorStudySettings, rates: dict, traces: dict, summ: dict) -> dict[str, Any]:
    """What notebook 13 writes to ``metrics.json``."""
    return {"profile": settings.profile, "seeds": list(settings.seeds), "settings": settings.to_dict(),
            "env": settings.env, "steps_per_run": settings.steps, "success": rates,
            "trace_products": {v: [{k: r[k] for k in ("episodes", "lengths", "products", "mean_c", "lam",
                                                       "successes", "replayed")} for r in runs]
                               for v, runs in traces.items()},
            "summary": summ, "paper": PAPER, "main_figure": "reactor_deep_sea.png"}
