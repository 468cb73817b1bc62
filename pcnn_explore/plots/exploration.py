"""Exploration figures (notebook 12): DeepSea success against N, coverage of the egocentric task,
and what each density model makes of the agent in each DeepSea cell.

Every function returns a matplotlib Figure and never selects a backend.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

__all__: list[str] = ["plot_deep_sea_success", "plot_coverage", "plot_count_maps"]


def _figure(nrows: int, ncols: int, width: float, height: float):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    return fig, fig.subplots(nrows, ncols, squeeze=False)


_NO_MODEL_COLOURS = ("black", "tab:grey", "tab:brown", "tab:olive")


def _styles(variants: Sequence[str], colours: Mapping[str, str | None] | None) -> dict[str, dict[str, Any]]:
    """Line style per variant: its density model's colour (variants without one: black, grey, ...),
    dashed for intrinsic-reward-only variants, so no two variants look alike."""
    spare = iter(_NO_MODEL_COLOURS)
    out = {}
    for v in variants:
        colour = (colours or {}).get(v) or next(spare, None)
        out[v] = {"color": colour, "ls": "--" if v.endswith("_intrinsic") else "-"}
    return out


def plot_deep_sea_success(table: Mapping[str, Mapping[int, Mapping[str, Any]]], labels: Mapping[str, str],
                          colours: Mapping[str, str | None] | None = None, title: str = "DeepSea"):
    """Left: fraction of seeds that reach the goal late in training, against N, per variant.
    Right: distinct cells visited by the end of the run as a fraction of the N (N + 1) / 2 cells the
    agent can occupy before an episode ends (mean over seeds, the seeds as dots).
    ``table``: :func:`pcnn_explore.experiments.exploration.laptop.success_table`."""
    if not table:
        raise ValueError("no DeepSea runs to plot")
    fig, axes = _figure(1, 2, 5.2, 3.6)
    left, right = axes[0]
    variants = list(table)
    styles = _styles(variants, colours)
    offsets = np.linspace(-0.25, 0.25, len(variants)) if len(variants) > 1 else [0.0]
    for k, v in enumerate(variants):
        sizes = sorted(table[v])
        rows = [table[v][n] for n in sizes]
        frac = [r["reached_late"] / r["seeds"] for r in rows]
        left.plot(np.array(sizes) + offsets[k], frac, marker="o", label=labels.get(v, v), lw=1.5, **styles[v])
        cover = [np.asarray(r["distinct_cells"], float) / r["reachable_cells"] for r in rows]
        (line,) = right.plot(sizes, [c.mean() for c in cover], lw=1.5, **styles[v])
        for n, c in zip(sizes, cover):
            right.plot(np.full(len(c), n + offsets[k]), c, ".", color=line.get_color(), alpha=0.6)
    left.set(xlabel="N (grid size, episode length)", ylabel="seeds reaching the goal late in training",
             ylim=(-0.05, 1.05), title=title)
    right.set(xlabel="N", ylabel="cells visited / reachable", ylim=(0, 1.05), title="coverage by the end of the run")
    for ax in (left, right):
        ax.grid(alpha=0.3)
    left.legend(fontsize=7, loc="best")
    return fig


def plot_coverage(rooms: Mapping[str, Any], labels: Mapping[str, str], colours: Mapping[str, str | None] | None = None,
                  reachable: int | None = None):
    """Distinct cells visited against agent steps on the egocentric task, per variant: the seeds'
    mean (line) and min-max (band). ``rooms``: :func:`pcnn_explore.experiments.exploration.laptop.run_rooms`."""
    fig, axes = _figure(1, 1, 6.0, 3.8)
    ax = axes[0][0]
    x = np.asarray(rooms["steps"], float)
    styles = _styles(list(rooms["cells"]), colours)
    for v, cells in rooms["cells"].items():
        c = np.asarray(cells, float)
        (line,) = ax.plot(x, np.nanmean(c, axis=0), lw=1.8, label=f"{labels.get(v, v)} ({len(c)} seeds)", **styles[v])
        if len(c) > 1:
            ax.fill_between(x, np.nanmin(c, axis=0), np.nanmax(c, axis=0), color=line.get_color(), alpha=0.2, lw=0)
    if reachable:
        ax.axhline(reachable, color="k", ls=":", lw=1, label=f"cells in the map ({reachable})")
    seeds = max((len(np.atleast_2d(np.asarray(c, float))) for c in rooms["cells"].values()), default=0)
    ax.set(xlabel="agent steps", ylabel="distinct cells visited",  # the run's real steps and seeds
           title=f"{rooms.get('env', '')}: coverage over {int(x.max()) if x.size else 0:,} agent steps, "
                 f"{seeds} seed{'s' if seeds != 1 else ''}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return fig


def plot_count_maps(maps, labels: Mapping[str, str] | None = None, models: Sequence[str] | None = None):
    """Top row: the random walk's visits of each DeepSea cell, then each model's log rho of the
    frame with the agent in that cell (nats). Bottom row: each model's prediction gain there (nats).
    The log rho maps share one colour scale; each PG map has its own (its range in the title).
    ``maps``: :class:`pcnn_explore.experiments.exploration.laptop.CountMaps`."""
    models = list(models or maps.log_rho)
    fig, axes = _figure(2, 1 + len(models), 3.0, 2.9)
    true = np.where(maps.reachable(), maps.true.astype(float), np.nan)
    im = axes[0][0].imshow(np.log1p(true), cmap="viridis")
    axes[0][0].set_title("visits (log 1 + n)", fontsize=9)
    fig.colorbar(im, ax=axes[0][0], shrink=0.8)
    axes[1][0].axis("off")
    axes[1][0].text(0, 0.5, "cells: row = step of the episode,\ncolumn = position;\nthe agent starts top left\n"
                    "and can reach the\nlower-left triangle only", fontsize=8, va="center")
    # log rho: one colour scale shared by the models (a map that looks flat is flat); PG: each its own
    low = np.nanmin([np.nanmin(maps.log_rho[n]) for n in models])
    high = np.nanmax([np.nanmax(maps.log_rho[n]) for n in models])
    for k, name in enumerate(models, start=1):
        title = (labels or {}).get(name, name)
        for row, (data, what) in enumerate(((maps.log_rho[name], "log rho"), (maps.pg[name], "PG"))):
            ax = axes[row][k]
            scale = dict(vmin=low, vmax=high) if row == 0 else {}
            im = ax.imshow(data, cmap="magma" if row == 0 else "coolwarm", **scale)
            ax.set_title(f"{title}: {what}\n(range {np.nanmin(data):.2g} to {np.nanmax(data):.2g} nats)", fontsize=8)
            fig.colorbar(im, ax=ax, shrink=0.8)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    return fig
