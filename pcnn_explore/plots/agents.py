"""agents figures: training curves of the agent experiments (Fig. 5, 11, 12, 13) and the paper's table.

Every function returns a matplotlib Figure and never selects a backend.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

__all__: list[str] = ["plot_training_curves", "plot_curve_panels", "plot_paper_scores"]


def _new_axes(ncols: int = 1, width: float = 5.0, height: float = 3.4):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, height), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def _draw_curves(ax, curves: Mapping[str, Mapping[str, np.ndarray]], ylabel: str, title: str) -> None:
    if not curves:
        raise ValueError("no curves to plot: the experiment produced no runs")
    from pcnn_explore.plots.evaluation import LINE_STYLES, MARKERS, seeds_text

    for i, (label, c) in enumerate(curves.items()):
        x = np.asarray(c["steps"], dtype=float)
        (line,) = ax.plot(x, c["mean"], label=f"{label} ({seeds_text(len(c['runs']))})", lw=1.8,
                          ls=LINE_STYLES[i % len(LINE_STYLES)], marker=MARKERS[i % len(MARKERS)], mfc="none",
                          markevery=max(1, len(x) // 12))
        if len(c["runs"]) > 1:
            ax.fill_between(x, c["low"], c["high"], color=line.get_color(), alpha=0.2, lw=0)
    ax.set_xlabel("agent steps")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 4))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")


def plot_training_curves(curves: Mapping[str, Mapping[str, np.ndarray]], title: str = "",
                         ylabel: str = "episodic return (extrinsic)"):
    """Training curves: per label the seeds' mean (line) and min-max spread (band).

    ``curves``: as from :func:`pcnn_explore.experiments.agents.agent_runs.curves_by_variant`, i.e.
    {label: {"steps": (B,) agent steps, "mean", "low", "high": (B,), "runs": (seeds, B)}}.
    Each point is the mean undiscounted return of the episodes that ended in that window of steps.
    """
    fig, (ax,) = _new_axes()
    _draw_curves(ax, curves, ylabel, title)
    return fig


def plot_curve_panels(panels: Mapping[str, Mapping[str, Mapping[str, np.ndarray]]],
                      ylabel: str = "episodic return (extrinsic)"):
    """Side-by-side training curves, one panel per title ({title: curves}); e.g. one per game,
    or extrinsic return next to the summed intrinsic reward per episode."""
    if not panels:
        raise ValueError("no panels to plot")
    fig, axes = _new_axes(len(panels))
    for ax, (title, curves) in zip(axes, panels.items()):
        _draw_curves(ax, curves, ylabel if not title.startswith("intrinsic") else "intrinsic reward per episode", title)
    return fig


def plot_paper_scores(table: Mapping[str, Mapping[str, float]], agents: Sequence[str] = ("DQN", "DQN-CTS", "DQN-PixelCNN")):
    """The paper's appendix table as grouped bars, one group per game, scores relative to the best
    agent of that game (so games with scores in the tens and in the thousands share an axis).

    ``table``: {game: {agent: score}} as from :func:`pcnn_explore.experiments.agents.agent_figures.load_paper_table`.
    """
    if not table:
        raise ValueError("empty table")
    games = list(table)
    fig, (ax,) = _new_axes(width=8.0)
    width = 0.8 / len(agents)
    x = np.arange(len(games))
    for i, a in enumerate(agents):
        rel = []
        for g in games:
            scores = np.array([float(table[g][b]) for b in agents])
            lo, hi = min(scores.min(), 0.0), scores.max()
            rel.append((float(table[g][a]) - lo) / (hi - lo) if hi > lo else 1.0)
        ax.bar(x + (i - (len(agents) - 1) / 2) * width, rel, width, label=a)
    ax.set_xticks(x, [g.replace("Montezuma's Revenge", "Montezuma") for g in games], rotation=20)
    ax.set_ylabel("score / best of the three (min 0)")
    ax.set_ylim(0, 1.3)  # room above the bars for the legend
    ax.set_title("Paper: max score over 150M frames, mean of 3 seeds", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", ncols=len(agents))
    ax.grid(alpha=0.3, axis="y")
    return fig
