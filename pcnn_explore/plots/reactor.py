"""Reactor figures (notebook 13): per-seed success on DeepSea with intervals, success curves, and the
Retrace trace products the learn calls used against MMC's beta.

Every function returns a matplotlib Figure and never selects a backend.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["plot_reactor_study"]


def plot_reactor_study(study: Mapping[str, Any], seeds: Sequence[int], labels: Mapping[str, str],
                       colours: Mapping[str, str | None] | None = None, *, window: int, size: int,
                       title: str = "DeepSea"):
    """Three panels from :func:`pcnn_explore.experiments.agents.reactor_study.collect`'s ``study``.

    Reactor variants are dashed (squares), DQN solid (dots). Left: each seed's AUC (share of its episodes that found the +1, mean over the sizes) per variant
    as dots, the mean and its exact 95% interval (sign flip; none where too few seeds bound it) as a bar. Middle: on DeepSea-``size``, the share of
    episodes with the +1 per window of ``window`` episodes (mean over seeds; each seed thin).
    Right: for each Reactor variant and seed, the mean trace product prod c from x_0 to the last large
    reward (clipped reward > 0.5: the +1 or a large bonus) of the replayed sequences that start an
    episode, per tenth of the run (log scale; learn-time policy), with the DQN runs' MMC mix dashed.
    """
    from matplotlib.figure import Figure

    from pcnn_explore.verdicts import shown_interval, sign_flip_interval

    per = study["per_seed"]
    if not per:
        raise ValueError("no runs to plot")
    colours = colours or {}
    fig = Figure(figsize=(14.0, 3.9), layout="constrained")
    left, mid, right = fig.subplots(1, 3)
    names = list(per)
    reactor = {v: bool(study["traces"].get(v)) or v.startswith("reactor") for v in names}  # dashed / squares
    for k, v in enumerate(names):
        auc = np.asarray(per[v]["auc"], dtype=np.float64)
        colour = colours.get(v) or f"C{k}"
        left.scatter(np.full(len(auc), k) + np.linspace(-0.12, 0.12, len(auc)), auc, s=18, color=colour, zorder=3,
                     marker="s" if reactor[v] else "o")
        lo, hi = shown_interval(auc, sign_flip_interval)
        if np.isfinite(lo) and np.isfinite(hi):  # (too few seeds bound no interval)
            left.errorbar([k + 0.25], [auc.mean()], yerr=[[auc.mean() - lo], [hi - auc.mean()]], fmt="_",
                          color="k", capsize=4, lw=1.2)
    left.set_xticks(range(len(names)), [labels.get(v, v) for v in names], rotation=20, fontsize=8)
    left.set(ylabel="share of episodes with the +1 (AUC)", title=f"{title}: per seed, mean and exact 95% interval")
    for k, v in enumerate(names):
        rows = [r for r in study["runs"] if r["variant"] == v and r["size"] == size]
        curves = []
        for r in rows:
            s = np.asarray(r["success"], dtype=np.float64)
            m = len(s) // window
            curves.append(s[: m * window].reshape(m, window).mean(1))
        m = min((len(c) for c in curves), default=0)
        if not m:
            continue
        c = np.stack([x[:m] for x in curves])
        x = (np.arange(m) + 1) * window
        style = "--" if reactor[v] else "-"
        (line,) = mid.plot(x, c.mean(0), style, color=colours.get(v) or f"C{k}", lw=1.8, label=labels.get(v, v))
        for row in c:
            mid.plot(x, row, style, color=line.get_color(), lw=0.6, alpha=0.35)
    shown = [r for r in study["runs"] if r["variant"] in names and r["size"] == size]
    ran = max((len(r["success"]) for r in shown), default=0)
    seeds = len({r.get("seed") for r in shown})
    mid.set(xlabel="episodes", ylabel="share of episodes with the +1", ylim=(-0.03, 1.03),
            title=f"DeepSea-{size}: success, {ran:,} episodes, {seeds} seed{'s' if seeds != 1 else ''}")
    mid.legend(fontsize=8)
    drawn = 0
    for k, v in enumerate(names):
        rows = [r for r in study["runs"] if r["variant"] == v and "traces" in r and r["size"] == size]
        for j, r in enumerate(rows):
            steps, prods = (np.asarray(a, dtype=np.float64) for a in r["traces"]["curve"])
            ok = np.isfinite(prods)
            if ok.any():
                right.plot(steps[ok], np.maximum(prods[ok], 1e-6), "o-", ms=3, lw=0.8,
                           color=colours.get(v) or f"C{k}", label=labels.get(v, v) if j == 0 else None)
                drawn += 1
    beta = study["dqn_mmc_beta"]
    right.axhline(beta, color="k", lw=1, ls="--", label=f"MMC mix of the DQN runs = {beta:g}")
    right.set_yscale("log")
    right.set(xlabel="agent step of the learn calls", ylabel="prod c from x_0 to a large reward",
              title="Retrace traces at learning time" + ("" if drawn else " (none replayed)"),
              ylim=(min(1e-6, beta / 2) if beta > 0 else 1e-6, max(2.0, 2 * beta)))  # beta's line within the axes
    right.legend(fontsize=8)
    return fig
