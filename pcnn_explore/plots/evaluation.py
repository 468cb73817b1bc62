"""Figures of the paper's evaluation (:mod:`pcnn_explore.evaluation`): training curves per 1M
frames with the seeds' band (Fig. 5, 11-15), and the sorted AUC improvements of Fig. 6 and 8.

Every function returns a matplotlib Figure and never selects a backend.
"""
from __future__ import annotations

import math
from typing import Collection, Mapping

import numpy as np

from pcnn_explore.evaluation import SYMMETRIC_NOTE, Improvement

__all__ = ["LINE_STYLES", "MARKERS", "seeds_text", "plot_eval_curves", "plot_auc_improvements"]

#: one style per line of a figure, in order (colours come from the density model, see variant_colour)
LINE_STYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 2)))
#: one hollow marker per line, in order, so that lines drawn on top of each other stay visible
MARKERS = ("o", "s", "^", "D", "v", "P")


def seeds_text(n: int) -> str:
    """'1 seed', '3 seeds'."""
    return f"{n} seed" + ("" if n == 1 else "s")


def plot_eval_curves(lines: Mapping[str, Mapping[str, np.ndarray]], title: str = "", frames_per_step: int = 1,
                     colours: Mapping[str, str | None] | None = None,
                     ylabel: str = "episodic return (extrinsic)"):
    """Training curves of one env: per line the seeds' mean (line) and min-max band.

    ``lines``: {label: {"ends": (K,) agent steps at each window's end, "runs": (seeds, K) curve
    points (NaN: no episode ended in that window)}}. The x axis is environment frames
    (``ends * frames_per_step``, 4 on Atari); a gap in a line is an empty window.
    """
    from matplotlib.figure import Figure

    if not lines:
        raise ValueError("no curves to plot: the sweep has no finished trials on this env")
    fig = Figure(figsize=(6.0, 3.8), layout="constrained")
    ax = fig.subplots()
    for i, (label, c) in enumerate(lines.items()):
        runs = np.atleast_2d(np.asarray(c["runs"], dtype=float))
        x = np.asarray(c["ends"], dtype=float) * frames_per_step
        have = ~np.isnan(runs)
        n = have.sum(0)
        mean = np.full(runs.shape[1], np.nan)
        np.divide(np.where(have, runs, 0.0).sum(0), n, out=mean, where=n > 0)
        colour = (colours or {}).get(label)
        (line,) = ax.plot(x, mean, ls=LINE_STYLES[i % len(LINE_STYLES)], lw=1.8, color=colour,
                          marker=MARKERS[i % len(MARKERS)], mfc="none", ms=6 + 1.5 * (len(lines) - 1 - i),
                          markevery=max(1, runs.shape[1] // 15), label=f"{label} ({seeds_text(runs.shape[0])})")
        if runs.shape[0] > 1 and n.any():
            lo = np.where(n > 0, np.nanmin(np.where(have, runs, np.inf), axis=0), np.nan)
            hi = np.where(n > 0, np.nanmax(np.where(have, runs, -np.inf), axis=0), np.nan)
            ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.18, lw=0)
    ax.set_xlabel("environment frames" + (f" ({frames_per_step} per agent step)" if frames_per_step > 1 else ""))
    ax.set_ylabel(ylabel)
    import textwrap

    ax.set_title("\n".join(textwrap.wrap(title, 70)), fontsize=10)
    ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 4))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return fig


def plot_auc_improvements(improvements: Mapping[str, Mapping[str, Improvement]], hard: Collection[str] = (),
                          baseline: str = "DQN", names: Mapping[str, str] | None = None):
    """Fig. 6 / 8: per compared line (one panel each), the improvement in % of AUC over ``baseline``
    on each env, sorted; envs in ``hard`` (hard exploration, the appendix taxonomy) are hatched and
    counted (improved / worse), symmetric improvements marked with * (see the footnote).

    ``improvements``: {line label: {env: Improvement}}; ``names``: env -> short name for the axis.
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    panels = {k: v for k, v in improvements.items() if v}
    if not panels:
        raise ValueError(f"no improvements to plot: the sweep needs the baseline {baseline!r} and another line on one env")
    n_env = max(len(v) for v in panels.values())
    fig = Figure(figsize=(6.5 * len(panels), 1.2 + 0.22 * n_env), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(panels), squeeze=False)[0])
    marked = False
    for ax, (label, imp) in zip(axes, panels.items()):
        items = sorted(((e, i) for e, i in imp.items() if not math.isnan(i.percent)), key=lambda t: t[1].percent)
        y = np.arange(len(items))
        values = [i.percent for _, i in items]
        colours = ["tab:green" if v > 0 else "tab:red" for v in values]
        bars = ax.barh(y, values, color=colours, alpha=0.8)
        for bar, (env, i) in zip(bars, items):
            if env in hard:
                bar.set_hatch("///")
                bar.set_edgecolor("black")
        ticks = [(names or {}).get(e, e) + ("*" if i.symmetric else "") for e, i in items]
        marked |= any(i.symmetric for _, i in items)
        ax.set_yticks(y, ticks, fontsize=7)
        ax.axvline(0, color="black", lw=0.8)
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlabel(f"improvement over {baseline} (% of AUC)")
        up = sum(1 for e, i in items if e in hard and i.percent > 0)
        down = sum(1 for e, i in items if e in hard and i.percent < 0)
        ax.set_title(f"{label}: hard exploration games {down} worse, {up} better", fontsize=9)
        ax.grid(alpha=0.3, axis="x")
    handles = [Patch(facecolor="white", edgecolor="black", hatch="///", label="hard exploration (appendix taxonomy)")]
    axes[0].legend(handles=handles, fontsize=7, loc="lower right")
    if marked:
        fig.supxlabel(SYMMETRIC_NOTE, fontsize=7)
    return fig
