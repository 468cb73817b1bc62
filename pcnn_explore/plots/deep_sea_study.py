"""Figures of a deep-sea agent study (:mod:`pcnn_explore.experiments.agents.deep_sea_study`): per-seed
values with the 95% interval of their mean (given by the caller), and coverage over episodes. Return matplotlib Figures; never
select a backend."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

__all__ = ["plot_per_seed", "plot_coverage"]


def plot_per_seed(values: Mapping[str, Sequence[float]], intervals: Mapping[str, tuple[float, float]],
                  ylabel: str, threshold: float | None = None, threshold_label: str = "", title: str = ""):
    """One column per line (``values``' keys are the legend texts): each seed's value as a dot, the
    mean as a bar and the 95% interval (``intervals``, NaN: none) as a vertical line; ``threshold``
    dashed (e.g. the random policy's 2^-N)."""
    from matplotlib.figure import Figure

    if not values:
        raise ValueError("no lines to plot: values is empty")
    fig = Figure(figsize=(1.2 + 1.5 * len(values), 3.8), layout="constrained")
    ax = fig.add_subplot()
    for i, (label, v) in enumerate(values.items()):
        v = np.asarray(v, dtype=np.float64)
        x = i + np.linspace(-0.12, 0.12, len(v)) if len(v) > 1 else np.full(len(v), float(i))
        ax.scatter(x, v, s=18, color="0.3", zorder=3)
        ax.hlines(np.mean(v), i - 0.25, i + 0.25, color="tab:blue", lw=2)
        low, high = intervals.get(label, (np.nan, np.nan))
        if np.isfinite(low) and np.isfinite(high):
            ax.vlines(i + 0.3, low, high, color="tab:blue", lw=1.5)
    if threshold is not None:
        ax.axhline(threshold, color="k", ls="--", lw=1, label=threshold_label or f"threshold {threshold:.3g}")
        ax.legend(fontsize=7, loc="best")
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels(list(values), fontsize=7, rotation=15, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title or f"{ylabel}: seeds (dots), mean (bar), 95% interval of the mean (line: the exact sign-flip interval)", fontsize=9)
    return fig


def plot_coverage(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], title: str = ""):
    """Coverage (share of the N(N+1)/2 cells) against episodes: ``curves`` maps a legend text to
    (episodes (P,), coverage (seeds, P)); one thin line per seed, the mean thick."""
    from matplotlib.figure import Figure

    if not curves:
        raise ValueError("no curves to plot: curves is empty")
    fig = Figure(figsize=(6.0, 3.8), layout="constrained")
    ax = fig.add_subplot()
    for i, (label, (at, cov)) in enumerate(curves.items()):
        colour = f"C{i}"
        for row in np.atleast_2d(cov):
            ax.plot(at, row, color=colour, lw=0.7, alpha=0.5)
        ax.plot(at, np.nanmean(np.atleast_2d(cov), axis=0), color=colour, lw=2, label=label)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("episode")
    ax.set_ylabel("cells visited (share of N(N+1)/2)")
    ran = max((float(np.max(at)) for at, _ in curves.values() if np.size(at)), default=0.0)
    ax.set_title(title or f"Coverage over {int(ran):,} episodes (thin: seeds; thick: mean)", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    return fig
