"""Reactor figures (notebook 13): success on DeepSea per variant, and Retrace's trace products along
the replayed successful episodes against MMC's beta.

Every function returns a matplotlib Figure and never selects a backend.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

__all__ = ["plot_reactor_study"]


def plot_reactor_study(curves: Mapping[str, np.ndarray], traces: Mapping[str, list[Mapping[str, Any]]],
                       labels: Mapping[str, str], colours: Mapping[str, str | None] | None = None, *,
                       window: int, mmc_beta: float = 0.1, title: str = "DeepSea"):
    """Left: share of episodes paying +1 per window of ``window`` episodes (mean over seeds, the
    seeds thin) per variant. Right: prod c of each successful episode in a Reactor's replay (log
    scale) against the agent step it ended at, with MMC's beta as a line: below it MMC carries more
    of the +1 back to the episode's start than Retrace does.

    ``curves``: :func:`pcnn_explore.experiments.reactor_study.success_curves`; ``traces``:
    :func:`~pcnn_explore.experiments.reactor_study.run_traces`."""
    from matplotlib.figure import Figure

    if not curves:
        raise ValueError("no runs to plot")
    fig = Figure(figsize=(11.0, 3.8), layout="constrained")
    left, right = fig.subplots(1, 2)
    styles = ["-", "--", ":", "-."]
    for k, (v, c) in enumerate(curves.items()):
        colour = (colours or {}).get(v)
        x = (np.arange(c.shape[1]) + 1) * window
        (line,) = left.plot(x, c.mean(0), styles[k % 4], color=colour, lw=1.8,
                            label=f"{labels.get(v, v)} ({c.shape[0]} seed{'s' if c.shape[0] != 1 else ''})")
        for seed_curve in c if c.shape[0] > 1 else []:
            left.plot(x, seed_curve, styles[k % 4], color=line.get_color(), lw=0.6, alpha=0.35)
    left.set(xlabel="episodes", ylabel="share of episodes paying +1", title=f"{title}: success", ylim=(-0.03, 1.03))
    left.legend(fontsize=8)
    markers = ["o", "s", "^", "D"]
    drawn = False
    for k, (v, runs) in enumerate(traces.items()):
        steps = [s for r in runs for s in r.get("steps", [])]
        prods = [max(p, 1e-6) for r in runs for p in r["products"]]
        if prods:
            right.scatter(steps, prods, s=14, marker=markers[k % 4], facecolors="none",
                          edgecolors=(colours or {}).get(v) or f"C{k}", label=f"{labels.get(v, v)} ({len(prods)})")
            drawn = True
    right.axhline(mmc_beta, color="k", lw=1, ls="--", label=f"MMC: beta = {mmc_beta:g}")
    right.set_yscale("log")
    right.set(xlabel="agent step the successful episode ended at", ylabel="prod c along the episode",
              title="Retrace traces of the replayed +1 episodes" + ("" if drawn else " (none)"), ylim=(1e-6, 2.0))
    right.legend(fontsize=8)
    return fig
