"""Pseudo-count figures (notebook 00)."""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from pcnn_explore.density import colour, label

__all__ = ["plot_stream_pseudo_counts", "plot_counts_vs_real", "plot_pg_schedules"]


def plot_stream_pseudo_counts(results) -> Figure:
    """PG (log scale) and pseudo-count per agent step for every model of ``results.traces``."""
    fig = Figure(figsize=(10, 5.5), layout="constrained")
    ax_pg, ax_n = fig.subplots(2, 1, sharex=True)
    for name, t in results.traces.items():
        steps = np.arange(1, len(t.prediction_gain) + 1)
        ax_pg.plot(steps, np.maximum(t.prediction_gain, 1e-6), lw=0.7, color=colour(name), label=label(name))
        ax_n.plot(steps, t.pseudo_count, lw=0.7, color=colour(name), label=label(name))
    for start in np.flatnonzero(results.stream.episode_starts)[1:]:
        ax_pg.axvline(start + 1, color="k", ls=":", lw=0.6)
    ax_pg.set(yscale="log", ylabel="prediction gain (nats, PG <= 1e-6 shown at 1e-6)")
    ax_n.set(yscale="log", xlabel="agent step (one density-model update each)", ylabel="pseudo-count (exact formula)")
    ax_pg.legend(loc="upper right")
    ax_pg.set_title("Online training on a random-policy stream (dotted: episode starts)")
    return fig


def plot_counts_vs_real(results) -> Figure:
    """Pseudo-count against real count: the empirical model over the stream, and each model's
    pseudo-count of one frame shown repeatedly."""
    fig = Figure(figsize=(10, 4), layout="constrained")
    ax_tab, ax_rep = fig.subplots(1, 2)
    ok = results.tabular_real_count >= 0
    ax_tab.scatter(results.tabular_real_count[ok], results.tabular_pseudo_count[ok], s=8, color="tab:grey")
    top = max(1, results.tabular_real_count.max())
    ax_tab.plot([0, top], [0, top], "k--", lw=0.8, label="pseudo-count = real count")
    ax_tab.set(xlabel="real count N_n(x) of the incoming frame", ylabel="pseudo-count", title="Empirical model")
    ax_tab.legend()
    for name, r in results.repeats.items():
        ax_rep.plot(r.real_count, np.clip(r.pseudo_count, 1e-8, None), "o-", ms=3, color=colour(name),
                    label=f"{label(name)}: model's pseudo-count 1/(e^PG - 1)")
        ax_rep.plot(r.real_count, np.clip(r.scaled_pseudo_count, 1e-8, None), "s--", ms=3, color=colour(name),
                    alpha=0.7, label=f"{label(name)}: agent's, 1/(e^(c n^-1/2 PG+) - 1)")
    top = len(next(iter(results.repeats.values())).real_count) if results.repeats else 1
    ax_rep.plot([1, top], [1, top], "k--", lw=0.8, label="pseudo-count = real count")
    ax_rep.set(yscale="log", xlabel="real visits of the repeated frame so far", ylabel="pseudo-count at the visit", title="One frame, shown again and again")
    ax_rep.legend(fontsize="small")
    return fig


def plot_pg_schedules(results) -> Figure:
    """The bonus sqrt(expm1(c * decay(n) * PG+)) under each PG decay schedule, same PG sequence."""
    fig = Figure(figsize=(10, 3.5), layout="constrained")
    ax = fig.subplots()
    labels = {"inverse_sqrt": "c n^-1/2 (paper)", "inverse": "c n^-1", "constant": "c"}
    for schedule, bonus in results.schedule_bonus.items():
        ax.plot(np.arange(1, len(bonus) + 1), np.clip(bonus, 1e-6, None), lw=0.8, label=labels.get(schedule, schedule))
    ax.set(yscale="log", xlabel="agent step n (model updates)", ylabel="bonus r+ (reward units, before clipping)")
    ax.set_title("PG decay schedules applied to the same prediction gains")
    ax.legend()
    return fig
