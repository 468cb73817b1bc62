"""The deep-sea scaling figure (bsuite's protocol, :mod:`pcnn_explore.envs.deep_sea_protocol`): episodes
to solve against the size N, log axes, 2^N dashed (what dithering needs), unsolved runs marked.

Returns a matplotlib Figure and never selects a backend.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

__all__ = ["plot_deep_sea_scaling"]

#: colours of variants without a density model's colour (DQN first: grey, as in the other figures)
_SPARE_COLOURS = ("0.25", "tab:brown", "tab:olive", "tab:cyan", "tab:pink", "tab:purple")


def plot_deep_sea_scaling(rows: Sequence[Mapping], labels: Mapping[str, str] | None = None,
                          colours: Mapping[str, str | None] | None = None, title: str = ""):
    """One point per run: its solve episode (filled) against N, or, unsolved, the episodes it ran (an x
    on the same axes, so "not solved in E episodes" reads as "more than E"); per variant, the median
    over seeds of the solved runs joined by a line. 2^N dashed (what dithering needs), drawn only up to
    the top of the axes and left out of the legend where it lies wholly above it. bsuite's score
    counts a size when its solve episode at bsuite's logged episodes is below 2^N + 100.

    ``rows``: dicts with ``size`` (N), ``variant``, ``seed``, ``episodes_run``, ``solve_episode``
    (the episode at which bsuite's rule first held, checked at every episode: int, or None when the
    run never met it), as :data:`pcnn_explore.sweep.deep_sea_report.SCALING_COLUMNS`' rows have them;
    ``labels`` / ``colours``: per variant; ``title``: the caller's (it should state the runs' episode
    cap), else one that names none.
    """
    from matplotlib.figure import Figure

    if not rows:
        raise ValueError("no deep-sea runs to plot: the sweep has no DeepSea trial")
    labels, colours = dict(labels or {}), dict(colours or {})
    fig = Figure(figsize=(6.4, 6.0), layout="constrained")
    ax = fig.add_subplot()
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    sizes = sorted({int(r["size"]) for r in rows})
    cycle = iter(_SPARE_COLOURS)
    markers = ("o", "s", "^", "D", "v", "P")
    jitter = np.linspace(-0.25, 0.25, len(variants)) if len(variants) > 1 else np.zeros(1)
    for i, variant in enumerate(variants):
        colour = colours.get(variant) or next(cycle, "0.25")
        mine = [r for r in rows if r["variant"] == variant]
        solved = [r for r in mine if r["solve_episode"] is not None]
        unsolved = [r for r in mine if r["solve_episode"] is None]
        label = labels.get(variant, variant)
        x = [int(r["size"]) + jitter[i] for r in solved]
        if solved:
            ax.scatter(x, [int(r["solve_episode"]) for r in solved], color=colour, marker=markers[i % len(markers)],
                       s=22, alpha=0.8, label=f"{label}: solved")
        if unsolved:
            ax.scatter([int(r["size"]) + jitter[i] for r in unsolved],
                       [max(int(r["episodes_run"]), 1) for r in unsolved], color=colour, marker="x", s=26,
                       alpha=0.8, label=f"{label}: not solved in the episodes run")
        med = [(n, float(np.median([r["solve_episode"] for r in solved if int(r["size"]) == n])))
               for n in sizes if any(int(r["size"]) == n for r in solved)]
        if med:
            ax.plot([n for n, _ in med], [m for _, m in med], color=colour, lw=1.2, alpha=0.9)
    episodes = [int(r["episodes_run"]) for r in rows] + [int(r["solve_episode"]) for r in rows
                                                         if r["solve_episode"] is not None]
    low, high = max(0.8, min([*episodes, 2 ** min(sizes)]) / 3), max([10, *episodes]) * 3
    # 2^N from the smallest size (a short stretch around it with one size) to where it leaves the axes
    left, right = (min(sizes), max(sizes)) if len(sizes) > 1 else (sizes[0] * 0.97, sizes[0] * 1.03)
    right = min(right, float(np.log2(high)))
    if right > left:
        grid = np.linspace(left, right, 200)
        ax.plot(grid, 2.0 ** grid, "k--", lw=1, label="$2^N$ (dithering)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    shown = sizes if len(sizes) <= 11 else sizes[::2]
    ax.set_xticks(shown)
    ax.set_xticklabels([str(n) for n in shown])
    ax.minorticks_off()
    ax.set_ylim(low, high)
    ax.set_xlabel("deep-sea size N")
    ax.set_ylabel("episodes to solve (bsuite's rule, every episode)")
    ax.set_title(title or "Episodes to solve deep sea against N")
    # below the axes: with four lines' solved and unsolved marks, a legend inside covers points
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), frameon=False)
    return fig
