"""density figures: the paper's density-model figures (Fig. 2 left and middle, 3, 4, 9; App. C).

Each function takes the results object of one experiment module
(:mod:`pcnn_explore.experiments`) and returns a matplotlib Figure; none selects a backend.
Losses are in nats per frame (-log rho(x)); prediction gains in nats.
"""
from __future__ import annotations

import math

import numpy as np

from pcnn_explore.density import colour, label
from pcnn_explore.experiments.density.density_stats import moving_average
from pcnn_explore.experiments.density.density_stats import DIVERGED_LOSS
from pcnn_explore.experiments.density.location import policy_label

__all__: list[str] = ["plot_training_orders", "plot_episode_spikes", "plot_lr_schedules", "plot_early_curves", "plot_samples",
                      "plot_pg_traces", "plot_model_comparison", "plot_location"]


def _figure(nrows: int = 1, ncols: int = 1, width: float = 5.0, height: float = 3.4):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    return fig, fig.subplots(nrows, ncols, squeeze=False)


def plot_training_orders(results, smooth: int = 200):
    """Fig. 2 (left): held-out loss and incoming-frame loss per training order, vs updates.

    Dotted verticals mark the policy switches of the online stream (every ``switch_every`` frames).
    """
    fig, axes = _figure(1, 2)
    ax_held, ax_in = axes[0]
    for method, trace in results.traces.items():
        ax_held.plot(trace.eval_steps, trace.eval_loss, marker="o", ms=3, label=method)
        ax_in.plot(np.arange(1, len(trace.loss) + 1), moving_average(trace.loss, smooth), lw=1, label=method)
    every = results.settings.switch_every
    for ax in (ax_held, ax_in):
        for x in range(every, len(results.train_index), every):
            ax.axvline(x, color="grey", ls=":", lw=0.8)
        ax.set_xlabel("updates (frames trained on)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    ax_held.set_ylabel("held-out loss (nats per frame)")
    ax_held.set_title(f"{results.settings.game}: held-out loss")
    ax_held.set_yscale("log")
    ax_in.set_ylabel(f"incoming-frame loss, mean of last {smooth} (nats)")
    ax_in.set_title("loss of each frame before training on it")
    ax_in.set_yscale("log")
    return fig


def plot_episode_spikes(results):
    """Fig. 2 (middle): loss per frame with episode ends (dashed) and the ranked spikes (circles)."""
    fig, axes = _figure(1, 1, width=9.0)
    ax = axes[0, 0]
    loss = results.trace.loss
    ax.plot(np.arange(len(loss)), loss, lw=0.6, color="tab:blue", label="loss of the incoming frame")
    for i, end in enumerate(results.episode_ends):
        ax.axvline(end, color="k", ls="--", lw=0.9, label="episode end" if i == 0 else None)
    a = results.alignment
    if len(a.spikes):
        near = a.near_start
        ax.scatter(a.spikes[near], loss[a.spikes[near]], s=40, facecolors="none", edgecolors="tab:red",
                   label="spike within window of an episode start")
        ax.scatter(a.spikes[~near], loss[a.spikes[~near]], s=40, marker="x", color="tab:grey",
                   label="spike elsewhere")
    ax.set_yscale("log")
    ax.set_xlabel("frames trained on")
    ax.set_ylabel("-log rho_n(x_n) (nats per frame)")
    ax.set_title(f"PixelCNN loss, first {len(loss)} frames of {results.settings.game}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def plot_lr_schedules(results, smooth: int = 500):
    """Fig. 3: final loss against initial learning rate per schedule (left; a cross at the top
    marks a diverged run), and the smoothed loss curves of each schedule's best rate (right)."""
    fig, axes = _figure(1, 2)
    ax, ax_curves = axes[0]
    labels = {"constant": "constant", "inverse": "n^-1", "inverse_sqrt": "n^-1/2"}
    finite = [v for v in results.final_loss.values() if math.isfinite(v)]
    top = max(finite) * 2.0 if finite else 1.0
    for schedule in results.settings.grid:
        rates = sorted(lr for s, lr in results.final_loss if s == schedule)
        values = [results.final_loss[(schedule, lr)] for lr in rates]
        (line,) = ax.plot(rates, values, marker="o", label=labels.get(schedule, schedule))
        bad = [lr for lr, v in zip(rates, values) if not math.isfinite(v)]
        if bad:
            ax.scatter(bad, [top] * len(bad), marker="x", color=line.get_color())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("initial learning rate")
    ax.set_ylabel(f"loss, mean of last {results.settings.average_last} frames (nats)")
    ax.set_title(f"after {results.settings.n_frames} frames of {results.settings.game}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    for schedule, (lr, value) in results.best_per_schedule().items():
        if math.isfinite(value):
            loss = results.traces[(schedule, lr)].loss
            ax_curves.plot(np.arange(1, len(loss) + 1), moving_average(loss, smooth), lw=1,
                           label=f"{labels.get(schedule, schedule)}, lr {lr:g}")
    ax_curves.set_yscale("log")
    ax_curves.set_xlabel("frames trained on")
    ax_curves.set_ylabel(f"loss, mean of last {smooth} frames (nats)")
    ax_curves.set_title("best initial rate of each schedule")
    ax_curves.grid(alpha=0.3)
    ax_curves.legend(fontsize=8)
    return fig


def plot_early_curves(curves: dict):
    """03: each seed's loss over its first updates, one panel per schedule, one colour per initial rate,
    one thin line per seed (a line that stops: the run diverged there); dashed, a uniform model's loss
    (:data:`~pcnn_explore.experiments.density.density_stats.DIVERGED_LOSS`, 3668 nats per frame).

    ``curves``: :func:`pcnn_explore.experiments.density.lr_schedules.early_curves` (as metrics.json
    holds it): ``updates`` (P,) bin ends, ``curves["<schedule>_<rate>"]`` (seeds, P) mean loss in
    nats per frame per bin, None where no update of the bin had a finite loss."""
    labels = {"constant": "constant", "inverse": "n^-1", "inverse_sqrt": "n^-1/2"}
    schedules: dict[str, list[str]] = {}
    for key in curves["curves"]:
        schedule, _, rate = key.rpartition("_")
        schedules.setdefault(schedule, []).append(rate)
    if not schedules:
        raise ValueError("curves holds no schedule: pass lr_schedules.early_curves(runs)")
    fig, axes = _figure(1, len(schedules), width=4.2)
    x = np.asarray(curves["updates"], dtype=np.float64)
    n_seeds = len(curves["seeds"])
    for ax, (schedule, rates) in zip(axes[0], schedules.items()):
        for i, rate in enumerate(rates):
            c = f"C{i}"
            for k, seed_curve in enumerate(curves["curves"][f"{schedule}_{rate}"]):
                y = np.array([np.nan if v is None else v for v in seed_curve], dtype=np.float64)
                ax.plot(x, y, color=c, lw=0.8, alpha=0.7, label=f"lr {rate}" if k == 0 else None)
        ax.axhline(DIVERGED_LOSS, color="grey", ls="--", lw=0.8, label="uniform model")
        ax.set_yscale("log")
        ax.set_xlabel("updates (frames trained on)")
        ax.set_title(f"{labels.get(schedule, schedule)}: {n_seeds} seeds")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    axes[0, 0].set_ylabel(f"loss, mean of each {curves['early_bin']} updates (nats)")
    return fig


#: Fig. 4 with at most this many samples a model lays its rows out as columns (a short run's figure
#: stays wide enough for its titles, and readable as a thumbnail)
FEW_SAMPLES = 2


def plot_samples(results, levels: int = 8, policy: str | None = None):
    """Fig. 4: one row of samples per model (and a row of real training frames) of ``policy``'s
    stream (default: the main one), grey levels 0..levels-1, each model's held-out loss in its
    row title. With at most :data:`FEW_SAMPLES` samples a model, the rows are columns instead
    (titles on top, over two lines)."""
    policy = policy or results.policies[0]
    rows = [(f"training frames ({policy_label(policy)})", results.real[policy])] + [
        (f"{label(m)} (held-out {results.heldout_loss[policy][m]:.0f} nats)", s)
        for m, s in results.samples[policy].items()]
    n = max(len(s) for _, s in rows)
    across = n <= FEW_SAMPLES
    fig, axes = (_figure(n, len(rows), width=1.9, height=2.1) if across else _figure(len(rows), n, width=1.6, height=1.8))
    for r, (title, images) in enumerate(rows):
        for c in range(n):
            ax = axes[c, r] if across else axes[r, c]
            ax.set_xticks([])
            ax.set_yticks([])
            if c < len(images):
                ax.imshow(images[c], cmap="gray", vmin=0, vmax=levels - 1, interpolation="nearest")
            else:
                ax.axis("off")
        if across:
            head, _, tail = title.rpartition(" (")
            axes[0, r].set_title(f"{head}\n({tail}", fontsize=9)
        else:
            axes[r, 0].set_title(title, loc="left", fontsize=9)
    return fig


def plot_pg_traces(results, policy: str | None = None):
    """Fig. 9: PG of each model over the analysed steps of ``policy``'s stream (default: the main
    one), log scale (PG <= 0 cannot be drawn on a log axis; their share is in the title). Dotted
    verticals mark episode starts."""
    policy = policy or results.policies[0]
    pgs, all_stats = results.pg[policy], results.stats[policy]
    models = list(pgs)
    fig, axes = _figure(len(models), 1, width=9.0, height=2.4)
    positive = [p[p > 0] for p in pgs.values() if (p > 0).any()]
    lo = min(float(p.min()) for p in positive) if positive else 1e-6
    hi = max(float(p.max()) for p in positive) if positive else 1.0
    starts = results.steps[results.episode_starts[policy]]
    for ax, m in zip(axes[:, 0], models):
        pg, stats = pgs[m], all_stats[m]
        ax.plot(results.steps, np.where(pg > 0, pg, np.nan), lw=0.6, color=colour(m))
        for x in starts:
            ax.axvline(x, color="grey", ls=":", lw=0.8)
        ax.set_yscale("log")
        ax.set_ylim(lo * 0.8, hi * 1.25)
        ax.set_ylabel("PG (nats)")
        ax.set_title(f"{label(m)}: mean {stats['mean']:.3g} nats, variability {stats['variability']:.2f}, "
                     f"q0.99/median {stats.get('peak_quantile', float('nan')):.1f} (max/median "
                     f"{stats['peak_to_median']:.1f}), PG <= 0 on {100 * stats['negative_fraction']:.0f}%",
                     fontsize=9, loc="left")
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel(f"training step ({results.settings.game}, {policy_label(policy)})")
    return fig


def plot_location(location: dict, static_fraction: dict):
    """Where the loss goes, per stream and model: the share of the held-out loss spent on static
    background positions (left) and the recency gap, held-out minus late incoming-frame loss in
    nats per frame (right). ``location[stream][model]`` holds
    :func:`~pcnn_explore.experiments.density.location.location_stats`; ``static_fraction[stream]`` the
    share of static positions. Streams are policy names or table rows."""
    streams = list(location)
    models = list(dict.fromkeys(m for s in streams for m in location[s]))
    fig, axes = _figure(1, 2, width=5.2, height=3.4)
    width = 0.8 / max(1, len(models))
    x = np.arange(len(streams))
    hatches = ["", "//", "..", "xx", "\\\\"]
    for j, m in enumerate(models):
        for ax, key in zip(axes[0], ("static_loss_share", "recency_gap_nats")):
            values = [location[s].get(m, {}).get(key, np.nan) for s in streams]
            ax.bar(x + (j - (len(models) - 1) / 2) * width, values, width=width, color=colour(m),
                   hatch=hatches[j % len(hatches)], edgecolor="white", label=label(m))
    names = [f"{policy_label(s)}\n{100 * static_fraction[s]:.0f}% positions static" for s in streams]
    for ax, title in zip(axes[0], ("share of held-out loss on static positions", "recency gap: held-out - incoming loss")):
        ax.set_xticks(x, names, fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3, axis="y")
    axes[0, 0].set_ylim(0, 1.15)
    axes[0, 0].set_ylabel("share of -log rho")
    axes[0, 1].set_ylabel("nats per frame")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncols=len(models), fontsize=8)
    return fig


def plot_model_comparison(results, smooth: int = 200):
    """App. C: per game, smoothed incoming-frame loss of each model (top row) and bars of the
    held-out loss and of the PG variability (bottom row)."""
    games = list(results.table)
    fig, axes = _figure(2, len(games), width=4.6, height=3.2)
    for g, game in enumerate(games):
        ax = axes[0, g]
        for m, trace in results.traces[game].items():
            ax.plot(np.arange(1, len(trace.loss) + 1), moving_average(trace.loss, smooth), lw=1,
                    color=colour(m), label=label(m))
        ax.set_yscale("log")
        ax.set_xlabel("frames trained on")
        ax.set_ylabel(f"loss, mean of last {smooth} (nats)")
        game_name, policy = results.rows[game]
        ax.set_title(f"{game_name}, {policy_label(policy)}", fontsize=9)
        ax.grid(alpha=0.3)
        if g == 0:
            ax.legend(fontsize=8)
        ax = axes[1, g]
        models = list(results.table[game])
        x = np.arange(len(models))
        held = [results.table[game][m]["heldout_loss"] for m in models]
        ax.bar(x - 0.2, held, width=0.4, color=[colour(m) for m in models])
        ax.set_xticks(x, [label(m).replace(" (", "\n(") for m in models], fontsize=7)
        ax.set_ylabel("held-out loss (nats per frame)")
        twin = ax.twinx()
        var = [results.table[game][m]["pg_variability"] for m in models]
        twin.bar(x + 0.2, var, width=0.4, color="none", edgecolor="k", hatch="//")
        twin.set_ylabel("PG variability (hatched)")
        ax.set_title("held-out loss (solid), PG variability (hatched)", fontsize=9)
    return fig
