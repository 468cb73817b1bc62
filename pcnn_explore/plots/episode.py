"""Figures of recorded episodes (:class:`pcnn_explore.record.Episode`).

Static figures for notebooks and headless runs, and the pure image helpers the widget viewer
(:class:`pcnn_explore.widgets.EpisodeViewer`) is built on:

- :func:`surprise_overlay`: an RGB frame with the model's per-pixel surprise (log-loss in nats,
  before the update on that frame) blended over it.
- :func:`frame_figure`: that overlay for one step, with the step's PG and bonus in the title.
- :func:`trace_figure`: prediction gain (nats) and bonus over the episode (x axis: agent steps),
  an optional cursor, and markers for rewards, life losses, episode starts and room changes (the
  milestones of the paper's Fig. 10).
- :func:`compare_figure`: two density models on the same episode, side by side.
- :func:`render_trace`, :func:`draw_cursor`, :func:`png_bytes`: the trace drawn once to pixels,
  then only its cursor redrawn, for a responsive viewer.
"""
from __future__ import annotations

import io
from typing import Sequence

import numpy as np
from matplotlib.figure import Figure

__all__: list[str] = ["common_ylims", "colour_scale_png", "add_surprise_colourbar",
    "surprise_overlay",
    "surprise_scale",
    "frame_figure",
    "trace_figure",
    "compare_figure",
    "render_trace",
    "draw_cursor",
    "png_bytes",
]

QUANTITIES = {
    "prediction_gain": ("prediction gain (nats)", "tab:blue"),
    "bonus": ("bonus r+", "tab:orange"),
    "log_rho": ("log rho (nats)", "tab:green"),
    "pseudo_count": ("pseudo-count", "tab:purple"),
}
EVENT_STYLE = {
    "reward": dict(marker="^", color="tab:green", label="reward"),
    "life_loss": dict(marker="x", color="tab:red", label="life lost"),
}


def surprise_scale(*episodes, percentile: float = 99.0) -> float:
    """A common top of the surprise colour scale (nats per pixel) for one or more episodes."""
    values = np.concatenate([np.asarray(e.surprise, np.float32).ravel() for e in episodes])
    return float(max(np.percentile(values, percentile), 1e-6))


def surprise_overlay(rgb: np.ndarray, surprise: np.ndarray, vmax: float | None = None, alpha: float = 0.7,
                     cmap: str = "inferno") -> np.ndarray:
    """Blend a surprise map over an RGB frame; return (H, W, 3) uint8.

    ``rgb``: (H, W, 3) uint8 frame. ``surprise``: (h, w) per-pixel log-loss in nats (any h, w;
    each frame pixel takes the value of the density pixel covering it). ``vmax``: surprise shown
    at full colour (default: the map's maximum). Where the model is not surprised the frame shows
    through; the colour's opacity grows with the surprise, up to ``alpha``.
    """
    import matplotlib

    rgb = np.asarray(rgb)
    surprise = np.asarray(surprise, np.float32)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise ValueError(f"rgb must be an (H, W, 3) uint8 frame, got shape {rgb.shape} dtype {rgb.dtype}")
    if surprise.ndim != 2:
        raise ValueError(f"surprise must be an (h, w) map, got shape {surprise.shape}")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    height, width = rgb.shape[:2]
    rows = np.arange(height) * surprise.shape[0] // height
    cols = np.arange(width) * surprise.shape[1] // width
    top = float(vmax) if vmax is not None else float(surprise.max())
    level = np.clip(surprise[rows][:, cols] / max(top, 1e-6), 0.0, 1.0)
    colour = matplotlib.colormaps[cmap](level)[..., :3] * 255.0
    weight = (alpha * level)[..., None]
    return np.round((1.0 - weight) * rgb + weight * colour).astype(np.uint8)


def _title(episode, t: int, label: str | None = None) -> str:
    head = f"{label}: " if label else ""
    room = f", room {int(episode.room[t])}" if episode.room[t] >= 0 else ""
    return (f"{head}step {t}{room}\nPG {episode.prediction_gain[t]:.3g} nats, "
            f"bonus {episode.bonus[t]:.3g}")


def _check_step(episode, t: int) -> int:
    if not isinstance(t, (int, np.integer)) or not 0 <= t < len(episode):
        raise ValueError(f"step must be an integer in 0..{len(episode) - 1}, got {t!r}")
    return int(t)


def add_surprise_colourbar(fig, axes, vmax: float, cmap: str = "inferno"):
    """A colour bar for the surprise overlay (0..``vmax`` nats per pixel) beside ``axes``."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    bar = fig.colorbar(ScalarMappable(Normalize(0.0, vmax), cmap), ax=axes, fraction=0.05, pad=0.02, extend="max")
    bar.set_label("surprise, -log rho per pixel (nats)", fontsize=7)
    bar.ax.tick_params(labelsize=7)
    return bar


def colour_scale_png(vmax: float, cmap: str = "inferno", width: float = 3.2, dpi: int = 80) -> bytes:
    """PNG of a horizontal colour scale of the surprise overlay, 0..``vmax`` nats per pixel (the
    widget shows it under the frames)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    fig = Figure(figsize=(width, 0.62), dpi=dpi)
    ax = fig.add_axes((0.05, 0.62, 0.9, 0.3))
    bar = fig.colorbar(ScalarMappable(Normalize(0.0, vmax), cmap), cax=ax, orientation="horizontal", extend="max")
    bar.ax.tick_params(labelsize=7)
    bar.set_label("surprise per pixel (nats)", fontsize=7, labelpad=1)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return png_bytes(np.asarray(canvas.buffer_rgba()).copy())


def common_ylims(episodes, quantities: Sequence[str] = ("prediction_gain", "bonus")) -> list[tuple[float, float]]:
    """Per quantity, one (low, high) y range covering every episode (5% margins): a shared y axis
    so compared models' numbers read directly."""
    out = []
    for name in quantities:
        values = np.concatenate([np.asarray(getattr(e, name), np.float64) for e in episodes])
        values = values[np.isfinite(values)]
        lo, hi = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
        pad = 0.05 * (hi - lo) if hi > lo else max(abs(hi), 1.0) * 0.05
        out.append((lo - pad, hi + pad))
    return out


def frame_figure(episode, t: int, *, vmax: float | None = None, alpha: float = 0.7, label: str | None = None,
                 ax=None) -> Figure:
    """Step ``t``'s RGB frame with the model's surprise map blended over it."""
    t = _check_step(episode, t)
    if ax is None:
        fig = Figure(figsize=(3.2, 4.2))
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    vmax = surprise_scale(episode) if vmax is None else vmax
    ax.imshow(surprise_overlay(episode.rgb[t], episode.surprise[t], vmax, alpha), interpolation="nearest")
    ax.set_title(_title(episode, t, label), fontsize=9)
    ax.set_axis_off()
    return fig


def _room_label(episode, t: int) -> str:
    return f"room {int(episode.room[t - 1])}\u2192{int(episode.room[t])}"


def _draw_trace(axes, episode, quantities: Sequence[str], label_rooms: bool = True) -> None:
    steps = np.arange(len(episode))
    events = episode.events()
    for ax, name in zip(axes, quantities):
        if name not in QUANTITIES:
            raise ValueError(f"unknown quantity {name!r}: choose from {', '.join(QUANTITIES)}")
        ylabel, colour = QUANTITIES[name]
        values = np.asarray(getattr(episode, name), np.float64)
        ax.plot(steps, values, color=colour, lw=0.9)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.set_xlim(-0.5, len(episode) - 0.5)
        ax.tick_params(labelsize=7)
        trans = ax.get_xaxis_transform()  # x in steps, y in axes fraction
        for t in events["episode_start"][1:]:
            ax.axvline(t, color="0.3", ls="--", lw=0.8)
        for t in events["room_change"]:
            ax.axvline(t, color="tab:purple", lw=1.0, alpha=0.8)
        for key, style in EVENT_STYLE.items():
            if len(events[key]):
                ax.plot(events[key], np.full(len(events[key]), 0.95), ls="none", ms=5, transform=trans,
                        marker=style["marker"], color=style["color"])
    if label_rooms:  # label room changes, skipping those too close to the last label to be legible
        trans = axes[0].get_xaxis_transform()
        last = -np.inf
        for t in events["room_change"]:
            if t - last < 0.06 * len(episode):
                continue
            axes[0].text(t, 1.02, _room_label(episode, t), transform=trans, fontsize=7, color="tab:purple",
                         ha="center", va="bottom")
            last = t
    axes[-1].set_xlabel("agent step", fontsize=8)


def _legend(fig, episode) -> None:
    from matplotlib.lines import Line2D

    events = episode.events()
    handles = [Line2D([], [], ls="none", marker=s["marker"], color=s["color"], label=s["label"])
               for k, s in EVENT_STYLE.items() if len(events[k])]
    if len(events["room_change"]):
        handles.append(Line2D([], [], color="tab:purple", label="room change"))
    if len(events["episode_start"]) > 1:
        handles.append(Line2D([], [], color="0.3", ls="--", label="episode start"))
    if handles:
        fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=7, frameon=False)


def trace_figure(episode, t: int | None = None, *, quantities: Sequence[str] = ("prediction_gain", "bonus"),
                 title: str | None = None, figsize=(7.0, 3.6), ylims=None) -> Figure:
    """Prediction gain and bonus (or other ``quantities``) over the episode, one panel each.

    Markers: rewards (green triangles), life losses (red crosses), episode starts (dashed),
    room changes (purple lines, labelled). ``t``: draw a cursor at that step. ``ylims``: one
    (low, high) per quantity (e.g. :func:`common_ylims` of compared models), else automatic.
    """
    fig = Figure(figsize=figsize)
    axes = fig.subplots(len(quantities), 1, sharex=True, squeeze=False)[:, 0]
    _draw_trace(axes, episode, quantities)
    if ylims is not None:
        for ax, lim in zip(axes, ylims):
            ax.set_ylim(*lim)
    if t is not None:
        t = _check_step(episode, t)
        for ax in axes:
            ax.axvline(t, color="k", lw=1.2)
    fig.suptitle(title or f"{episode.env_id}, {episode.density_model}", fontsize=9)
    _legend(fig, episode)
    fig.subplots_adjust(left=0.11, right=0.98, top=0.86, bottom=0.22, hspace=0.12)
    return fig


def compare_figure(first, second, t: int | None = None, *, labels: Sequence[str] | None = None,
                   quantities: Sequence[str] = ("prediction_gain", "bonus"), vmax: float | None = None,
                   figsize=(10.0, 7.0), colourbar: bool = False) -> Figure:
    """Two density models on the same episode, side by side: frame with surprise at step ``t``
    (default: the step of the largest bonus of ``first``) above each model's traces, with shared
    y axes so the two models' numbers compare directly; ``colourbar``: the surprise scale (nats per
    pixel) beside the frames."""
    if len(first) != len(second) or not np.array_equal(first.actions, second.actions):
        raise ValueError("compare_figure needs two recordings of the same episode (same length and actions); "
                         "record both with the same --env, --policy and --seed")
    labels = list(labels) if labels is not None else [first.density_model, second.density_model]
    t = int(np.argmax(first.bonus)) if t is None else _check_step(first, t)
    vmax = surprise_scale(first, second) if vmax is None else vmax
    fig = Figure(figsize=figsize)
    grid = fig.add_gridspec(1 + len(quantities), 2, height_ratios=[2.2] + [1] * len(quantities))
    trace_axes = []
    for col, (episode, label) in enumerate(zip((first, second), labels)):
        frame_figure(episode, t, vmax=vmax, label=label, ax=fig.add_subplot(grid[0, col]))
        axes = [fig.add_subplot(grid[1 + i, col]) for i in range(len(quantities))]
        _draw_trace(axes, episode, quantities, label_rooms=False)
        for ax in axes:
            ax.axvline(t, color="k", lw=1.2)
        trace_axes.append(axes)
    for i in range(len(quantities)):  # shared y per quantity
        lo = min(a[i].get_ylim()[0] for a in trace_axes)
        hi = max(a[i].get_ylim()[1] for a in trace_axes)
        for a in trace_axes:
            a[i].set_ylim(lo, hi)
    if colourbar:  # the surprise overlay's scale, after every other axis
        add_surprise_colourbar(fig, [fig.axes[0], fig.axes[1 + len(quantities)]], vmax)
    _legend(fig, first)
    fig.subplots_adjust(left=0.08, right=0.98, top=0.95, bottom=0.09, hspace=0.35, wspace=0.25)
    return fig


# -- pixels for the widget: draw the trace once, redraw only the cursor -----------------------
def render_trace(episode, *, quantities: Sequence[str] = ("prediction_gain", "bonus"), title: str | None = None,
                 figsize=(7.0, 3.6), dpi: int = 80, ylims=None):
    """Draw :func:`trace_figure` (no cursor) to pixels.

    Returns ``(rgba, columns, spans)``: the (H, W, 4) uint8 image, the pixel column of every step
    (T,) int, and the (top, bottom) pixel rows of each panel, for :func:`draw_cursor`.
    """
    fig = trace_figure(episode, quantities=quantities, title=title, figsize=figsize, ylims=ylims)
    fig.set_dpi(dpi)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba()).copy()
    height = rgba.shape[0]
    axes = fig.axes
    xy = axes[0].transData.transform(np.column_stack([np.arange(len(episode)), np.zeros(len(episode))]))
    columns = np.clip(np.round(xy[:, 0]).astype(int), 0, rgba.shape[1] - 1)
    spans = []
    for ax in axes:
        (x0, y0), (x1, y1) = ax.get_window_extent().get_points()
        spans.append((int(height - y1), int(height - y0)))  # display y runs upwards, rows downwards
    return rgba, columns, spans


def draw_cursor(rgba: np.ndarray, column: int, spans, colour=(0, 0, 0), width: int = 2) -> np.ndarray:
    """A copy of ``rgba`` with a vertical cursor ``width`` pixels wide at ``column`` in each span."""
    out = rgba.copy()
    lo, hi = max(int(column) - width // 2, 0), min(int(column) - width // 2 + width, out.shape[1])
    for top, bottom in spans:
        out[top:bottom, lo:hi, :3] = colour
        out[top:bottom, lo:hi, 3] = 255
    return out


def png_bytes(image: np.ndarray, scale: int = 1) -> bytes:
    """PNG encoding of an (H, W, 3) or (H, W, 4) uint8 image, optionally enlarged ``scale`` times."""
    from PIL import Image

    image = np.asarray(image)
    if scale > 1:
        image = image.repeat(scale, axis=0).repeat(scale, axis=1)
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="png", compress_level=1)
    return buf.getvalue()
