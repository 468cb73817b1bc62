"""Reactor and the bonus (notebook 13; the paper's Sec. 4.2, Fig. 7, 8) on bsuite's deep-sea protocol.

The runs: Reactor, Reactor with the bonus (on a random 25% of steps, as in the paper) and DQN with
the bonus and MMC, each on DeepSea-N for the sizes and episode cap of the profile (a subset of
bsuite's protocol, :mod:`pcnn_explore.envs.deep_sea_protocol`: sizes up to N = 33, one Reactor sequence,
so a replayed sequence from an episode's start holds the whole episode). The seed is the unit: every
claim is decided on per-seed values with :mod:`pcnn_explore.verdicts`.

Per run (:func:`run_values`), over its complete episodes: ``auc``, the share of episodes that found
DeepSea's +1 (the mean of the success curve: the paper's area-under-the-curve measure, as a share);
``late``, the same over the last quarter; ``solve_episode`` by bsuite's rule (checked at every
episode) and ``solved`` (in time for the deep-sea score). Per seed: the mean over the sizes.

The claims (:func:`decide`):

- ``bonus_helps_reactor`` (Fig. 7/8): Reactor with the bonus above Reactor, in ``auc``; paired over seeds.
- ``dqn_mmc_above_reactor_bonus`` (Sec. 4.2: Reactor "seems unable to make full use of" the bonus on
  sparse games): each DQN with the bonus and MMC above Reactor with the bonus, in ``auc``.
- ``traces_cut`` (Sec. 4.2's hypothesis): Retrace carries a reward r_k back to a sequence's first
  state x_0 with weight gamma^k prod_{s=1}^{k} c_s, c_s = lambda min(1, pi(a_s|x_s) / mu(a_s|x_s));
  the MMC target carries it with beta gamma^k whatever the policy. Measured with the policy that
  was learning when the sequence was replayed: each Reactor run's ``traces.csv``
  (:mod:`pcnn_explore.run.trace_log`), over the replayed sequences that start at an episode's
  first step and hold a large reward: a clipped reward above 0.5 as the learner saw it, that is
  DeepSea's +1 or a bonus that large (the sequence replay keeps the sum only), with k its last
  such step (prod of k traces; on DeepSea the +1 comes at k = N - 1). Per seed: the mean product
  over all such replays of the run. Claim: below the beta of the study's DQN runs (``agrees`` when
  the t interval of beta - product lies above 0).

On DeepSea the paper's translation-invariant PixelCNN cannot tell the agent's cells apart (notebook
12), so the study's PixelCNN is the position-biased one (``pixelcnn_pos``), for Reactor and DQN alike.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from pcnn_explore.envs.deep_sea import deep_sea_id
from pcnn_explore.envs.deep_sea_protocol import solve_episode, solved_in_time, successes_from_log
from pcnn_explore.experiments.agents.agent_runs import RunSpec, run_specs
from pcnn_explore.run.variants import MMC_BETA, VARIANTS, check_variant, variant_agent, variant_label
from pcnn_explore.profiles import ExperimentSettings, check_profile
from pcnn_explore.verdicts import Verdict, combine_verdicts, difference_verdict, progress_verdict, t_interval

__all__ = ["ReactorStudySettings", "PAPER", "STUDY_SEEDS", "settings_for", "specs", "run", "roles", "run_values",
           "run_traces", "collect", "decide", "overall", "summary", "paper_rows", "metrics"]

PAPER = {
    "fig7_fig8": "Reactor-PixelCNN improves on Reactor on a large fraction of the 57 games, in area under the "
                 "curve (Fig. 8); Reactor beats DQN in about 50 of 57 games (Fig. 7, 16)",
    "sec4_2": "on hard, sparse-reward games Reactor seems unable to make full use of the bonus; the authors' "
              "hypothesis: Retrace's truncated importance ratios cut the propagation of reward over long horizons, "
              "which MMC keeps (no numbers given)",
    "mmc_beta": MMC_BETA,
    "bonus_fraction": "the bonus (and the density model's update) on a random 25% of Reactor's steps",
    # the claim the report shows beside the verdict
    "verdict": "the bonus helps Reactor (Fig. 7, 8), yet on hard, sparse-reward games DQN with the bonus and MMC "
               "makes more of it: Retrace's traces cut the reward's propagation (Sec. 4.2)",
}
#: the study profile's seeds: seeds the kit's tests never use
STUDY_SEEDS = (301, 302, 303, 304, 305)
_LONGEST = 33  # one Reactor sequence (pcnn_explore.agents.sequence_replay.SEQ_LEN)


@dataclasses.dataclass
class ReactorStudySettings(ExperimentSettings):
    """Settings of notebook 13: every variant x seed runs ``episodes`` episodes of DeepSea-N (N agent
    steps each) for each N in ``sizes``."""

    profile: str = "study"
    seeds: tuple[int, ...] = STUDY_SEEDS
    sizes: tuple[int, ...] = (10,)
    episodes: int = 400
    #: Reactor, Reactor-PixelCNN, and DQN with the bonus and MMC: DQN-PixelCNN (the paper's pairing) and DQN-CTS
    variants: tuple[str, ...] = ("reactor", "reactor_pixelcnn_pos", "pixelcnn_pos_mmc", "cts_mmc")
    #: TrainConfig fields for every run, on top of TrainConfig's preset and DeepSea's env_defaults
    overrides: tuple[tuple[str, Any], ...] = (("tensorboard", False),)
    late_fraction: float = 0.25  # the last quarter of a run's episodes is "late in training"
    window: int = 50  # episodes per point of the success curves
    workers: int = 2

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(seeds=(0, 1), sizes=(4,), episodes=25, window=5,
                      overrides=(("learning_starts", 20), ("tensorboard", False))),
        "study": dict(),
        "paper": dict(sizes=tuple(range(10, _LONGEST, 2)), episodes=10_000, window=500,
                      variants=("reactor", "reactor_pixelcnn_pos", "reactor_cts", "pixelcnn_pos_mmc", "cts_mmc")),
    }

    def check(self) -> None:
        """Raise ValueError/TypeError on bad settings, before any run starts."""
        from pcnn_explore.envs.deep_sea import DEEP_SEA_SIZES

        check_profile(self.profile)
        for name in ("seeds", "sizes", "variants"):
            v = getattr(self, name)
            if isinstance(v, str) or not isinstance(v, (tuple, list)) or not v:
                raise TypeError(f"{name} must be a non-empty tuple, got {v!r}")
            if len(set(v)) != len(v):
                raise ValueError(f"{name} repeat: {v!r}")
        for v in self.variants:
            check_variant(v)
        if not any(variant_agent(v) == "reactor" for v in self.variants):
            raise ValueError(f"variants: name at least one Reactor variant (reactor, reactor_pixelcnn_pos, ...), "
                             f"got {self.variants!r}")
        for n in self.sizes:
            if n not in DEEP_SEA_SIZES or n > _LONGEST:
                raise ValueError(f"sizes: DeepSea-N with N in 3..{_LONGEST} (an episode must fit one {_LONGEST}-step "
                                 f"Reactor sequence), got {n!r}")
        for s in self.seeds:
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
                raise ValueError(f"seeds must be non-negative integers, got {self.seeds!r}")
        for name in ("episodes", "window", "workers"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not 0 < self.late_fraction <= 1:
            raise ValueError(f"late_fraction must be in (0, 1], got {self.late_fraction!r}")

    def steps(self, size: int) -> int:
        """Agent steps per run on DeepSea-``size``: ``episodes`` x N."""
        return int(self.episodes) * int(size)


def settings_for(profile: str, seed: int | None = None, n_seeds: int | None = None, **given: Any) -> ReactorStudySettings:
    """The preset of ``profile``; ``seed``/``n_seeds`` pick seeds ``seed, seed + 1, ...`` (None: the
    preset's first seed / number of seeds); any other setting given (None: the preset's)."""
    if seed is None and n_seeds is None:
        return ReactorStudySettings.preset(profile, **given)
    first = ReactorStudySettings.preset(profile).seeds[0] if seed is None else seed
    return ReactorStudySettings.for_notebook(profile, seed=first, n_seeds=n_seeds, **given)


# ------------------------------------------------------------------------------------- runs
def specs(settings: ReactorStudySettings, out_root: str | os.PathLike) -> list[RunSpec]:
    """One RunSpec per size x variant x seed, under ``out_root/<env>/<variant>_s<seed>``."""
    over = tuple(sorted(dict(settings.overrides).items()))
    return [RunSpec(v, deep_sea_id(n), int(s), settings.steps(n), settings.profile,
                    str(Path(out_root) / deep_sea_id(n) / f"{v}_s{s}"), over)
            for n in settings.sizes for v in settings.variants for s in settings.seeds]


def run(settings: ReactorStudySettings, output_dir: str | os.PathLike, progress: bool = False) -> list[RunSpec]:
    """Train (or read back finished, resume unfinished) every run under ``output_dir/runs``; their specs."""
    settings.check()
    todo = specs(settings, Path(output_dir) / "runs")
    run_specs(todo, settings.workers, progress=progress)
    return todo


def roles(variants) -> dict[str, Any]:
    """``reactor`` (no bonus), ``reactor_bonus`` (the first Reactor with a bonus) and ``dqn_mmc`` (every
    DQN with a bonus and MMC), by the variant rule; None / [] where not run."""
    def bonus(v):
        return VARIANTS[v]["bonus"] != "none" and not VARIANTS[v].get("intrinsic_only")

    reactors = [v for v in variants if variant_agent(v) == "reactor"]
    return {"reactor": next((v for v in reactors if VARIANTS[v]["bonus"] == "none"), None),
            "reactor_bonus": next((v for v in reactors if bonus(v)), None),
            "dqn_mmc": [v for v in variants if variant_agent(v) == "dqn" and bonus(v) and VARIANTS[v].get("mmc_beta", 0) > 0]}


def run_values(out_dir: str | os.PathLike, size: int, late_fraction: float = 0.25) -> dict[str, Any]:
    """One run's values from its ``log.csv``: ``success`` (E,) 0/1 per complete episode; ``auc`` (their
    mean; NaN with none), ``late`` (mean over the last ``late_fraction`` of them), ``solve_episode``
    (1-based, bsuite's rule at every episode; None: never), ``solved`` (in time for the score, within
    the episodes run), ``first_success`` (1-based; None), ``episodes``."""
    from pcnn_explore.run.log import read_log

    won = successes_from_log(read_log(out_dir))
    e = len(won)
    late = won[int(round(e * (1.0 - late_fraction))):]
    solve = solve_episode(won)
    return {"success": won.astype(int).tolist(), "episodes": e, "auc": float(won.mean()) if e else math.nan,
            "late": float(late.mean()) if len(late) else math.nan, "solve_episode": solve,
            "solved": bool(solved_in_time(size, solve, max(e, 1))),
            "first_success": int(np.flatnonzero(won)[0]) + 1 if won.any() else None}


def run_traces(out_dir: str | os.PathLike, bins: int = 10) -> dict[str, Any]:
    """A Reactor run's ``traces.csv`` summed over its learn calls: ``from_start`` (replayed sequences
    that start at an episode's first step and hold a clipped reward above 0.5, the +1 or a large
    bonus), ``from_start_product`` (their mean trace product, NaN with none) and ``from_start_span``
    (their mean last large-reward step k, in steps), ``rewarded`` / ``rewarded_product`` (every replayed sequence
    holding such a reward, any start), ``c_mean`` (mean over learn calls of the mean c), ``learn_calls``,
    and ``curve``: (``bins`` agent steps (end of each bin), from-start product per bin, NaN where none)."""
    from pcnn_explore.run.trace_log import read_traces

    t = read_traces(out_dir)

    def weighted(count, value):
        w = np.nan_to_num(t[count])
        return float(np.nansum(w * np.nan_to_num(t[value])) / w.sum()) if w.sum() else math.nan

    edges = np.linspace(0, t["step"].max() if len(t["step"]) else 1, bins + 1)
    which = np.clip(np.searchsorted(edges, t["step"], side="left") - 1, 0, bins - 1)
    w = np.nan_to_num(t["from_start"]) * 1.0
    p = w * np.nan_to_num(t["from_start_product_mean"])
    num, den = np.bincount(which, p, bins), np.bincount(which, w, bins)
    return {"learn_calls": int(len(t["step"])), "from_start": int(np.nansum(t["from_start"])),
            "from_start_product": weighted("from_start", "from_start_product_mean"),
            "from_start_span": weighted("from_start", "from_start_span_mean"),
            "rewarded": int(np.nansum(t["rewarded"])), "rewarded_product": weighted("rewarded", "product_mean"),
            "c_mean": float(np.nanmean(t["c_mean"])) if len(t["c_mean"]) else math.nan,
            "curve": (edges[1:].tolist(), np.where(den > 0, num / np.maximum(den, 1e-300), np.nan).tolist())}


def _mean_of_known(values) -> float:
    known = [x for x in values if x == x]
    return float(np.mean(known)) if known else math.nan


def collect(settings: ReactorStudySettings, todo: list[RunSpec]) -> dict[str, Any]:
    """Every run's values and traces, and per variant the per-seed values (seeds order; the mean over
    the sizes): ``{"runs": [...], "per_seed": {variant: {"auc", "late", "solved", "solve_episode"
    (censored at episodes + 1)}}, "traces": {Reactor variant: {"from_start_product", "from_start",
    "from_start_span", "c_mean", per seed}}, "dqn_mmc_beta": beta of the DQN runs (the paper's 0.1 without any)}``."""
    from pcnn_explore.envs.deep_sea import deep_sea_size

    runs = []
    for s in todo:
        n = deep_sea_size(s.env)
        row = {"variant": s.variant, "size": n, "seed": s.seed, **run_values(s.out_dir, n, settings.late_fraction)}
        if variant_agent(s.variant) == "reactor":
            row["traces"] = run_traces(s.out_dir)
        runs.append(row)

    def per_seed(v, f):
        out = []
        for seed in settings.seeds:
            vals = [r[f] for r in runs if r["variant"] == v and r["seed"] == seed]
            if f == "solve_episode":
                vals = [settings.episodes + 1 if x is None else x for x in vals]
            out.append(float(np.mean(vals)))
        return out

    per = {v: {f: per_seed(v, f) for f in ("auc", "late", "solved", "solve_episode")} for v in settings.variants}
    traces = {}
    for v in settings.variants:
        if variant_agent(v) != "reactor":
            continue
        traces[v] = {f: [_mean_of_known([r["traces"][f] for r in runs if r["variant"] == v and r["seed"] == s])
                         for s in settings.seeds] for f in ("from_start_product", "from_start_span", "from_start", "c_mean")}
    dqn = [s for s in todo if s.variant in roles(settings.variants)["dqn_mmc"]]
    beta = json.loads((Path(dqn[0].out_dir) / "settings.json").read_text())["mmc_beta"] if dqn else MMC_BETA
    return {"runs": runs, "per_seed": per, "traces": traces, "dqn_mmc_beta": float(beta)}


# ------------------------------------------------------------------------------- verdicts
def _claim(verdict: Verdict | None, **extra: Any) -> dict[str, Any]:
    if verdict is None:
        return {"word": "inconclusive", **extra}
    return {"word": verdict.word, "estimate": verdict.estimate, "interval": list(verdict.interval),
            "values": list(verdict.values), "values_b": list(verdict.values_b), "method": verdict.method,
            "sentence": verdict.sentence, **extra}


def decide(study: dict[str, Any], seeds, variants) -> dict[str, dict[str, Any]]:
    """The claims (module docstring), each a dict with the verdict ``word`` (:data:`VERDICTS`), its
    ``interval``, ``values`` (per seed) and ``sentence``; claims whose variants were not run are left out.
    ``dqn_mmc_above_reactor_bonus`` holds one such dict per DQN variant (``by_variant``) and the word
    of the first."""
    r, per, seeds = roles(variants), study["per_seed"], list(seeds)
    out: dict[str, dict[str, Any]] = {}
    if r["reactor"] and r["reactor_bonus"]:
        out["bonus_helps_reactor"] = _claim(difference_verdict(
            per[r["reactor_bonus"]]["auc"], per[r["reactor"]]["auc"], "greater", seeds_a=seeds, seeds_b=seeds,
            claim=f"AUC {variant_label(r['reactor_bonus'])} - {variant_label(r['reactor'])}"))
    if r["reactor_bonus"] and r["dqn_mmc"]:
        by = {v: _claim(difference_verdict(per[v]["auc"], per[r["reactor_bonus"]]["auc"], "greater", seeds_a=seeds,
                                           seeds_b=seeds, claim=f"AUC {variant_label(v)} - "
                                                                f"{variant_label(r['reactor_bonus'])}"))
              for v in r["dqn_mmc"]}
        out["dqn_mmc_above_reactor_bonus"] = {**by[r["dqn_mmc"][0]], "by_variant": by}
    if r["reactor_bonus"]:
        beta = study["dqn_mmc_beta"]
        products = [p for p in study["traces"][r["reactor_bonus"]]["from_start_product"] if p == p]
        extra = {"mmc_beta": beta, "seeds_with_replays": len(products), "products": products}
        if len(products) < 2:
            out["traces_cut"] = _claim(None, sentence=f"inconclusive: {len(products)} seed(s) replayed a large reward "
                                                      "from an episode's first step (an interval needs 2)", **extra)
        else:
            out["traces_cut"] = _claim(progress_verdict([beta - p for p in products], 0.0,
                                                        claim=f"MMC beta {beta:g} - prod c from x_0"), **extra)
    return out


def overall(profile: str, claims: dict[str, dict[str, Any]]) -> str:
    """The claims' words combined by :func:`pcnn_explore.verdicts.combine_verdicts` (the one rule);
    smoke or no claim: not testable at this profile."""
    words = [c["word"] for c in claims.values()]
    if profile == "smoke" or not words:
        return "not testable at this profile"
    return combine_verdicts(words)


def summary(settings: ReactorStudySettings, study: dict[str, Any]) -> dict[str, Any]:
    """The verdict (:func:`overall`), the claims (:func:`decide`) and one line each with its numbers."""
    claims = decide(study, settings.seeds, settings.variants)
    sizes = ", ".join(str(n) for n in settings.sizes)
    lines = [f"DeepSea-N, N = {sizes}, {settings.episodes} episodes, {len(settings.seeds)} seeds "
             f"({', '.join(map(str, settings.seeds))}); a uniformly random policy finds the +1 in 2^-N of its "
             f"episodes ({0.5 ** min(settings.sizes):.2g} at N = {min(settings.sizes)}):"]
    for v, row in study["per_seed"].items():
        lo, hi = t_interval(row["auc"]) if len(row["auc"]) > 1 else (math.nan, math.nan)
        lines.append(f"  {variant_label(v)}: AUC per seed {', '.join(f'{x:.3f}' for x in row['auc'])} (mean "
                     f"{np.mean(row['auc']):.3f}, 95% [{lo:.3f}, {hi:.3f}]); solved (bsuite's rule) "
                     f"{sum(x >= 0.5 for x in row['solved'])}/{len(row['solved'])} seeds")
    names = {"bonus_helps_reactor": "Fig. 7/8, the bonus helps Reactor",
             "dqn_mmc_above_reactor_bonus": "Sec. 4.2, DQN with bonus + MMC makes more of the bonus than Reactor",
             "traces_cut": "Sec. 4.2, Retrace's traces carry less of a large reward (+1 or bonus) back to x_0 than MMC's beta"}
    for k, c in claims.items():
        for v, one in (c.get("by_variant") or {k: c}).items():
            lines.append(f"{names[k]}{'' if v == k else f' ({variant_label(v)})'}: {one['sentence']}")
    return {"verdict": overall(settings.profile, claims), "claims": claims, "lines": lines}


_PAPER_SAYS = {"bonus_helps_reactor": ("Reactor-PixelCNN over Reactor (AUC)", "improves on many of 57 games (Fig. 8)"),
               "dqn_mmc_above_reactor_bonus": ("DQN + bonus + MMC over Reactor + bonus (AUC)",
                                               "Reactor cannot make full use of the bonus on sparse games (Sec. 4.2)"),
               "traces_cut": ("MMC beta - Retrace prod c from x_0 (learn time)",
                              "hypothesis: truncated traces cut long-horizon reward (no numbers)")}


def paper_rows(summ: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(quantity, the paper, this run: verdict, mean and 95% interval) per claim, for
    :func:`pcnn_explore.report.paper_vs_run`."""
    rows = []
    for k, c in summ["claims"].items():
        for v, one in (c.get("by_variant") or {k: c}).items():
            what, paper = _PAPER_SAYS[k]
            got = (f"{one['word']}: {one['estimate']:+.3f} [{one['interval'][0]:+.3f}, {one['interval'][1]:+.3f}]"
                   if "interval" in one else one["word"])
            rows.append((what + ("" if v == k else f", {variant_label(v)}"), paper, got))
    return rows


def metrics(settings: ReactorStudySettings, study: dict[str, Any], summ: dict[str, Any],
            wall_s: float | None = None) -> dict[str, Any]:
    """What notebook 13 writes to ``metrics.json``."""
    return {"profile": settings.profile, "seeds": list(settings.seeds), "sizes": list(settings.sizes),
            "episodes": settings.episodes, "settings": settings.to_dict(), "per_seed": study["per_seed"],
            "runs": study["runs"], "traces": study["traces"], "dqn_mmc_beta": study["dqn_mmc_beta"],
            "summary": summ, "paper": PAPER, "wall_s": wall_s, "main_figure": "reactor_deep_sea.png"}
