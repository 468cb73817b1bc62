"""Notebook viewers (ipywidgets) over the figures of :mod:`pcnn_explore.plots.episode`.

:class:`EpisodeViewer` scrubs through a recorded episode: a Play button and a slider linked in
the browser (``jslink``), the frame with the model's surprise map blended over it, and the
prediction-gain / bonus trace with a moving cursor. ``compare=`` shows a second recording of the
same episode by another density model side by side (e.g. CTS beside PixelCNN).

The traces are drawn once; moving the slider only blends one frame and paints the cursor into a
copy of the trace's pixels (a few milliseconds). A colour scale under the frames gives the
surprise overlay's units (nats per pixel); ``share_y=True`` draws compared models' traces on the
same y axes. Where widgets cannot render (an executed notebook's HTML, a terminal), the viewer's
output carries a static image of the step shown (:meth:`EpisodeViewer.static_figure`).
"""
from __future__ import annotations

import html

import ipywidgets as widgets
import numpy as np

from pcnn_explore.plots import episode as episode_plots
from pcnn_explore.record import Episode

__all__ = ["EpisodeViewer", "show_episode"]


def _check_pair(episode, compare) -> None:
    if not isinstance(episode, Episode):
        raise TypeError(f"EpisodeViewer expects an Episode (pcnn_explore.record.load_episode), "
                        f"got {type(episode).__name__}")
    if compare is None:
        return
    if not isinstance(compare, Episode):
        raise TypeError(f"compare must be an Episode or None, got {type(compare).__name__}")
    if compare.env_id != episode.env_id or len(compare) != len(episode) or \
            not np.array_equal(compare.actions, episode.actions):
        raise ValueError(
            f"compare must be the same episode recorded with another density model: got {compare!r} beside "
            f"{episode!r}; record both with the same --env, --policy, --seed and --max-steps")


class EpisodeViewer(widgets.VBox):
    """Scrub a recorded episode: frame + surprise overlay, PG and bonus trace with a cursor.

    ``episode``: a :class:`~pcnn_explore.record.Episode`. ``compare``: the same episode recorded
    with another density model, shown beside it. ``labels``: column titles (default: the model
    names). ``alpha``: opacity of the surprise colour. ``scale``: enlargement of the frame
    (pixels; 2 suits Atari's 210x160 pictures, 20 to 40 DeepSea's N x N, one pixel per cell). ``interval_ms``: time between frames when playing. ``step``: the first step shown.
    ``share_y``: the same y range for every model's trace (per quantity), so their numbers compare.
    """

    def __init__(self, episode: Episode, compare: Episode | None = None, *, labels=None, alpha: float = 0.7,
                 scale: int = 2, interval_ms: int = 100, step: int = 0, trace_size=(6.0, 3.2), dpi: int = 80,
                 share_y: bool = False):
        _check_pair(episode, compare)
        if not isinstance(scale, int) or scale < 1:
            raise ValueError(f"scale must be a positive integer, got {scale!r}")
        self.episodes = [episode] if compare is None else [episode, compare]
        self.labels = list(labels) if labels is not None else [e.density_model for e in self.episodes]
        if len(self.labels) != len(self.episodes):
            raise ValueError(f"labels needs {len(self.episodes)} names, got {self.labels}")
        self.alpha, self.scale = float(alpha), scale
        self._frame_cache: dict[tuple[int, int], bytes] = {}  # (column, step) -> PNG of the frame
        self.vmax = episode_plots.surprise_scale(*self.episodes)
        n = len(episode)
        first = episode_plots._check_step(episode, step)

        # Drawn once: the traces (pixels, and where each step's cursor goes).
        self.share_y = bool(share_y)
        ylims = episode_plots.common_ylims(self.episodes) if self.share_y else None
        self._traces = [episode_plots.render_trace(e, title=f"{lab}: {e.env_id}", figsize=trace_size, dpi=dpi,
                                                   ylims=ylims)
                        for e, lab in zip(self.episodes, self.labels)]

        self.play = widgets.Play(value=first, min=0, max=n - 1, step=1, interval=interval_ms,
                                 description="play", layout=widgets.Layout(width="auto"))
        self.slider = widgets.IntSlider(value=first, min=0, max=n - 1, step=1, description="step",
                                        continuous_update=True, layout=widgets.Layout(width="60%"))
        self.play.add_class("pcnn-play")
        self.slider.add_class("pcnn-slider")
        self._link = widgets.jslink((self.play, "value"), (self.slider, "value"))
        height, width = episode.rgb.shape[1:3]
        self.frame_images = [widgets.Image(format="png", width=width * scale, height=height * scale)
                             for _ in self.episodes]
        self.trace_images = [widgets.Image(format="png") for _ in self.episodes]
        for img in self.frame_images:
            img.add_class("pcnn-frame")
        for img in self.trace_images:
            img.add_class("pcnn-trace")
        self.readout = widgets.HTML()
        self.readout.add_class("pcnn-readout")
        self.colour_scale = widgets.Image(value=episode_plots.colour_scale_png(self.vmax, width=width * scale / dpi,
                                                                               dpi=dpi), format="png")
        self.colour_scale.add_class("pcnn-colour-scale")
        columns = [widgets.VBox([widgets.HTML(f"<b>{html.escape(lab)}</b>"), fi]
                                + ([self.colour_scale] if i == 0 else [widgets.HTML("")]) + [ti])
                   for i, (lab, fi, ti) in enumerate(zip(self.labels, self.frame_images, self.trace_images))]
        super().__init__([widgets.HBox([self.play, self.slider]), widgets.HBox(columns), self.readout])
        self.add_class("pcnn-episode-viewer")
        self.slider.observe(self._on_step, names="value")
        self.show(first)

    @property
    def step(self) -> int:
        """The step shown."""
        return int(self.slider.value)

    def show(self, t: int) -> None:
        """Show step ``t`` (moves the slider, which redraws)."""
        t = episode_plots._check_step(self.episodes[0], t)
        if self.slider.value != t:
            self.slider.value = t  # the observer redraws
        else:
            self._draw(t)

    def static_figure(self):
        """A matplotlib Figure of the step shown: :func:`~pcnn_explore.plots.episode.compare_figure`
        for two models, else the frame with its colour bar beside the trace with a cursor."""
        from matplotlib.figure import Figure

        t = self.step
        if len(self.episodes) == 2:
            return episode_plots.compare_figure(*self.episodes, t=t, labels=self.labels, vmax=self.vmax,
                                                colourbar=True)
        fig = Figure(figsize=(10.0, 4.2))
        grid = fig.add_gridspec(2, 2, width_ratios=[1, 2.4])
        frame_ax = fig.add_subplot(grid[:, 0])
        episode_plots.frame_figure(self.episodes[0], t, vmax=self.vmax, alpha=self.alpha, label=self.labels[0],
                                   ax=frame_ax)
        episode_plots.add_surprise_colourbar(fig, frame_ax, self.vmax)
        axes = [fig.add_subplot(grid[i, 1]) for i in range(2)]
        episode_plots._draw_trace(axes, self.episodes[0], ("prediction_gain", "bonus"))
        for ax in axes:
            ax.axvline(t, color="k", lw=1.2)
        return fig

    def _repr_mimebundle_(self, **kwargs):
        """The widget for front ends that render it, plus a static PNG of the step shown for those
        that cannot (nbconvert's HTML of an executed notebook shows the image)."""
        import base64
        import io

        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            buf = io.BytesIO()
            self.static_figure().savefig(buf, format="png", dpi=80)
            data["image/png"] = base64.b64encode(buf.getvalue()).decode("ascii")
        return bundle

    def _on_step(self, change) -> None:
        self._draw(int(change["new"]))

    def _frame_png(self, i: int, t: int) -> bytes:
        key = (i, t)
        if key not in self._frame_cache:
            e = self.episodes[i]
            self._frame_cache[key] = episode_plots.png_bytes(
                episode_plots.surprise_overlay(e.rgb[t], e.surprise[t], self.vmax, self.alpha), scale=self.scale)
        return self._frame_cache[key]

    def _trace_png(self, i: int, t: int) -> bytes:
        rgba, columns, spans = self._traces[i]
        return episode_plots.png_bytes(episode_plots.draw_cursor(rgba, columns[t], spans))

    def _draw(self, t: int) -> None:
        for i in range(len(self.episodes)):
            self.frame_images[i].value = self._frame_png(i, t)
            self.trace_images[i].value = self._trace_png(i, t)
        e = self.episodes[0]
        room = f" &middot; room {int(e.room[t])}" if e.room[t] >= 0 else ""
        cells = " &nbsp;|&nbsp; ".join(
            f"{html.escape(lab)}: PG {ep.prediction_gain[t]:.4g} nats, bonus {ep.bonus[t]:.4g}, "
            f"pseudo-count {ep.pseudo_count[t]:.4g}" for lab, ep in zip(self.labels, self.episodes))
        self.readout.value = (f"<span class='pcnn-step'>step {t}</span> &middot; action {int(e.actions[t])} "
                              f"&middot; reward {float(e.rewards[t]):g}{room}<br>{cells}")


def show_episode(episode: Episode, compare: Episode | None = None, *, interactive: bool = True, **kwargs):
    """The viewer when ``interactive``, else ``None`` (headless runs show static figures instead)."""
    if not interactive:
        _check_pair(episode, compare)
        return None
    return EpisodeViewer(episode, compare, **kwargs)
