"""Turn agent runs into the figures' numbers: the paper's training curves, per-run summaries, and
per-variant key figures (success rates, first success) for tables, metrics.json and the
paper-versus-this-run comparison.

Units: ``step`` is counted in agent steps (one action; on Atari one agent step is 4 emulator
frames). Returns are undiscounted extrinsic episode returns (in MiniGrid, ``1 - 0.9 * t / T`` on
reaching the goal, else 0), also when the agent learns from the intrinsic reward alone. The runs
come from :mod:`pcnn_explore.experiments.agents.agent_runs`.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

if TYPE_CHECKING:
    from pcnn_explore.experiments.agents.agent_runs import RunResult

__all__ = ["curves_by_variant", "final_success_rate", "summarise_runs", "AgentExperimentResults"]


def curves_by_variant(results: Sequence[RunResult], window: int, intrinsic: bool = False) -> dict[str, dict[str, np.ndarray]]:
    """The paper's training curves (:func:`pcnn_explore.evaluation.training_curve`) per label.

    ``window``: agent steps per point. Returns {label: {"steps" (= "ends"): (K,) agent step at
    each window's end, "mean": seeds' mean per window, "low"/"high": min/max over seeds, "runs":
    (n_seeds, K)}}, NaN where no episode ended in a window (in every seed, for mean/low/high); a
    seed that ran fewer windows is NaN-padded. ``intrinsic=True``: the episodes' summed bonus.
    """
    from pcnn_explore.evaluation import training_curve

    out: dict[str, dict[str, np.ndarray]] = {}
    by_label: dict[str, list[RunResult]] = {}
    for r in results:
        by_label.setdefault(r.label, []).append(r)
    for label, runs in by_label.items():
        curves = [training_curve(r.episode_end_step, r.episode_intrinsic if intrinsic else r.episode_return,
                                 r.steps_done, window) for r in runs]
        k = max(len(c.means) for c in curves)
        m = np.full((len(curves), k), np.nan)
        for i, c in enumerate(curves):
            m[i, : len(c.means)] = c.means
        have = ~np.isnan(m)
        n = have.sum(0)
        mean, low, high = (np.full(k, np.nan) for _ in range(3))
        np.divide(np.where(have, m, 0.0).sum(0), n, out=mean, where=n > 0)
        np.copyto(low, np.where(have, m, np.inf).min(0, initial=np.inf), where=n > 0)
        np.copyto(high, np.where(have, m, -np.inf).max(0, initial=-np.inf), where=n > 0)
        ends = np.arange(1, k + 1, dtype=np.int64) * window
        out[label] = {"steps": ends, "ends": ends, "mean": mean, "low": low, "high": high, "runs": m}
    return out


def final_success_rate(result: RunResult, window: int = 20) -> float:
    """Fraction of the last ``window`` episodes with a positive extrinsic return (0 if none)."""
    last = result.episode_return[-window:]
    return float((last > 0).mean()) if last.size else 0.0


def summarise_runs(results: Sequence[RunResult], window: int = 20, solved_at: float = 0.5) -> list[dict[str, Any]]:
    """One row per run: episodes, successes, first success (agent step), final success rate, solved."""
    rows = []
    for r in results:
        wins = np.flatnonzero(r.episode_return > 0)
        rate = final_success_rate(r, window)
        rows.append({
            "variant": r.spec.variant,
            "key": r.key,
            "label": r.label,
            "env": r.spec.env,
            "seed": r.spec.seed,
            "steps": r.spec.steps,
            "steps_done": r.steps_done,
            "overrides": dict(r.spec.overrides),
            "episodes": int(r.episode_return.size),
            "successes": int(wins.size),
            "first_success_step": int(r.episode_end_step[wins[0]]) if wins.size else None,
            "final_success_rate": rate,
            "mean_return_last": float(r.episode_return[-window:].mean()) if r.episode_return.size else 0.0,
            "solved": bool(rate >= solved_at),
            "wall_s": float(r.wall_s),
            "steps_per_s": float(r.steps_done / r.wall_s) if r.wall_s > 0 else float("nan"),
        })
    return rows


@dataclasses.dataclass
class AgentExperimentResults:
    """All runs of one experiment, with the figures' numbers computed from them."""

    runs: list[RunResult]
    window: int = 20  # last episodes counted by the success rate
    curve_window: int = 1_000  # agent steps per curve point (the paper: 1M frames, 250K agent steps on Atari)

    @property
    def envs(self) -> list[str]:
        return list(dict.fromkeys(r.spec.env for r in self.runs))

    def curves(self, env: str | None = None, intrinsic: bool = False) -> dict[str, dict[str, np.ndarray]]:
        """Per-label training curves (seeds' mean, min, max) on ``env`` (default: the first env)."""
        env = env or self.envs[0]
        return curves_by_variant([r for r in self.runs if r.spec.env == env], self.curve_window, intrinsic)

    def summary(self) -> list[dict[str, Any]]:
        """One row per run (see :func:`summarise_runs`)."""
        return summarise_runs(self.runs, self.window)

    def by_key(self, env: str | None = None) -> dict[str, dict[str, Any]]:
        """Per variant key on ``env``: label, seeds, solved seeds, mean final success rate, median first success."""
        env = env or self.envs[0]
        out: dict[str, dict[str, Any]] = {}
        for row in self.summary():
            if row["env"] != env:
                continue
            d = out.setdefault(row["key"], {"label": row["label"], "rows": []})
            d["rows"].append(row)
        for d in out.values():
            rows = d.pop("rows")
            firsts = [r["first_success_step"] for r in rows if r["first_success_step"] is not None]
            d.update(
                seeds=len(rows),
                solved_seeds=sum(r["solved"] for r in rows),
                seeds_with_a_success=len(firsts),
                final_success_rate=float(np.mean([r["final_success_rate"] for r in rows])),
                mean_return_last=float(np.mean([r["mean_return_last"] for r in rows])),
                median_first_success_step=float(np.median(firsts)) if firsts else None,
                steps_per_s=float(np.mean([r["steps_per_s"] for r in rows])),
            )
        return out

    def evaluation(self, env: str | None = None, baseline: str = "dqn") -> dict[str, dict[str, Any]]:
        """The paper's evaluation per variant key on ``env`` (:func:`pcnn_explore.evaluation.compare`):
        maximum score (mean of the seeds' peaks), best peak, AUC over the windows every run has, and
        the improvement in % of AUC over ``baseline`` (a key; None where that line was not run)."""
        from pcnn_explore.evaluation import compare, training_curve

        env = env or self.envs[0]
        lines: dict[str, list] = {}
        for r in self.runs:
            if r.spec.env == env:
                lines.setdefault(r.key, []).append(
                    training_curve(r.episode_end_step, r.episode_return, r.steps_done, self.curve_window))
        return compare(lines, baseline if baseline in lines else None)

    def metrics(self) -> dict[str, Any]:
        """Flat key figures for metrics.json: ``<key>/<figure>`` on the first env, plus the run count."""
        m: dict[str, Any] = {"env": self.envs[0], "runs": len(self.runs), "curve_window": self.curve_window}
        for key, d in self.by_key().items():
            for fig in ("final_success_rate", "mean_return_last", "solved_seeds", "seeds",
                        "seeds_with_a_success", "median_first_success_step", "steps_per_s"):
                m[f"{key}/{fig}"] = d[fig]
        for key, d in self.evaluation().items():
            m[f"{key}/max_score"], m[f"{key}/auc"] = d["max_score"], d["auc"]
            if d["improvement"] is not None:
                m[f"{key}/auc_improvement_pct"], m[f"{key}/auc_improvement_symmetric"] = d["improvement"], d["symmetric"]
        return m

    def run_column(self, key: str, env: str | None = None) -> str:
        """This run's figures for one variant key, for the paper-versus-this-run table."""
        d = self.by_key(env).get(key)
        if d is None:
            return "not run"
        first = "never reached the goal" if d["median_first_success_step"] is None else \
            f"first goal at step {d['median_first_success_step']:,.0f} (median)"
        return (f"success rate {d['final_success_rate']:.2f} over the last {self.window} episodes, "
                f"solved {d['solved_seeds']} of {d['seeds']} seeds; {first}")

    def paper_rows(self, claims: dict[str, str], env: str | None = None) -> list[tuple[str, str, str]]:
        """(variant, paper's claim, this run) rows for :func:`pcnn_explore.report.paper_vs_run`."""
        rows = []
        for key, d in self.by_key(env).items():
            rows.append((d["label"], claims.get(key, "-"), self.run_column(key, env)))
        return rows

    def table(self, env: str | None = None) -> str:
        """Text table of :meth:`by_key` for a notebook."""
        rows = self.by_key(env)
        w = max([len("variant")] + [len(d["label"]) for d in rows.values()])
        head = f"{'variant':{w}s}  {'seeds solved':>12s} {'final success':>13s} {'return (last)':>13s} {'1st success (median step)':>26s}"
        lines = [head, "-" * len(head)]
        for d in rows.values():
            first = "never" if d["median_first_success_step"] is None else f"{d['median_first_success_step']:,.0f}"
            solved = f"{d['solved_seeds']} of {d['seeds']}"
            lines.append(f"{d['label']:{w}s}  {solved:>12s} {d['final_success_rate']:13.2f} "
                         f"{d['mean_return_last']:13.3f} {first:>26s}")
        return "\n".join(lines)
