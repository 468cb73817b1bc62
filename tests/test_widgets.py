"""The episode figures and the EpisodeViewer widget, headless."""
from __future__ import annotations

import io

import matplotlib
import numpy as np
import pytest
from PIL import Image

from pcnn_explore.plots import episode as plots
from pcnn_explore.record import FORMAT_VERSION, Episode
from pcnn_explore.widgets import EpisodeViewer, show_episode


def make_episode(t: int = 12, model: str = "pixelcnn", seed: int = 0, actions=None) -> Episode:
    """A synthetic 12-step Montezuma-like episode with distinct frames and a room change at step 5."""
    rng = np.random.default_rng(seed)
    pg = rng.random(t) * 3
    room = np.where(np.arange(t) < 5, 1, 2).astype(np.int16)
    rewards = np.zeros(t, np.float32)
    rewards[3] = 100
    life = np.zeros(t, bool)
    life[8] = True
    return Episode(
        rgb=rng.integers(0, 256, (t, 21, 16, 3), dtype=np.uint8), density=rng.integers(0, 8, (t, 42, 42)).astype(np.uint8),
        actions=np.arange(t, dtype=np.int64) % 18 if actions is None else actions, rewards=rewards, life_loss=life,
        episode_start=np.arange(t) == 0, room=room, n=np.arange(1, t + 1), log_rho=-100 - pg,
        log_rho_prime=-100.0 + 0 * pg, prediction_gain=pg, pseudo_count=1 / np.expm1(pg),
        bonus=np.sqrt(np.expm1(0.1 * pg / np.sqrt(np.arange(1, t + 1)))),
        surprise=(rng.random((t, 42, 42)) * 2).astype(np.float16),
        metadata=dict(format_version=FORMAT_VERSION, env_id="ALE/MontezumaRevenge-v5", density_model=model,
                      height=42, width=42, levels=8))


def decode(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)))


def test_surprise_overlay_by_hand():
    rgb = np.full((4, 4, 3), 100, np.uint8)
    surprise = np.array([[0.0, 1.0], [2.0, 0.5]])
    out = plots.surprise_overlay(rgb, surprise, vmax=1.0, alpha=1.0, cmap="gray")
    # Each density pixel covers a 2x2 block; level = clip(surprise / vmax, 0, 1); weight = alpha * level.
    np.testing.assert_array_equal(out[:2, :2], 100)  # no surprise: the frame shows through
    np.testing.assert_array_equal(out[:2, 2:], 255)  # full surprise, alpha 1: the colour (gray(1) = white)
    np.testing.assert_array_equal(out[2:, :2], 255)  # clipped at vmax
    # level 0.5 -> gray(0.5) = 127.5 blended half and half with 100 -> 113.75 -> 114
    grey_half = matplotlib.colormaps["gray"](0.5)[0] * 255
    np.testing.assert_array_equal(out[2:, 2:], np.round(0.5 * 100 + 0.5 * grey_half))
    # alpha 0: the frame unchanged
    np.testing.assert_array_equal(plots.surprise_overlay(rgb, surprise, 1.0, alpha=0.0), rgb)
    with pytest.raises(ValueError, match="uint8"):
        plots.surprise_overlay(rgb.astype(float), surprise)
    with pytest.raises(ValueError, match="alpha"):
        plots.surprise_overlay(rgb, surprise, alpha=2)


def test_draw_cursor_paints_only_the_column_in_the_spans():
    rgba = np.full((10, 8, 4), 200, np.uint8)
    out = plots.draw_cursor(rgba, 4, [(1, 3), (6, 9)], colour=(1, 2, 3), width=2)
    painted = np.zeros((10, 8), bool)
    painted[1:3, 3:5] = painted[6:9, 3:5] = True
    np.testing.assert_array_equal(out[painted][:, :3], np.tile([1, 2, 3], (painted.sum(), 1)))
    np.testing.assert_array_equal(out[~painted], rgba[~painted])
    assert (rgba == 200).all()  # the background is not modified


def test_render_trace_maps_steps_to_increasing_columns():
    ep = make_episode()
    rgba, columns, spans = plots.render_trace(ep, dpi=50)
    assert rgba.dtype == np.uint8 and rgba.shape[2] == 4
    assert columns.shape == (len(ep),) and (np.diff(columns) > 0).all()
    assert 0 < columns[0] < columns[-1] < rgba.shape[1]
    assert len(spans) == 2 and all(0 <= top < bottom <= rgba.shape[0] for top, bottom in spans)


def test_static_figures():
    ep, other = make_episode(), make_episode(model="cts", seed=1)
    fig = plots.trace_figure(ep, t=4)
    assert len(fig.axes) == 2
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts == ["room 1\u21922"]  # the milestone is labelled
    assert "step 3" in plots.frame_figure(ep, 3).axes[0].get_title()
    fig = plots.compare_figure(ep, other, t=5)
    assert len(fig.axes) == 6
    assert fig.axes[2].get_ylim() == fig.axes[5].get_ylim()  # shared y: the models compare directly
    with pytest.raises(ValueError, match="same episode"):
        plots.compare_figure(ep, make_episode(t=10))
    with pytest.raises(ValueError, match="step must be an integer in 0..11"):
        plots.frame_figure(ep, 12)


def test_viewer_builds_and_updates_on_slider_change():
    ep = make_episode()
    viewer = EpisodeViewer(ep, scale=2)
    assert viewer.play.max == viewer.slider.max == len(ep) - 1
    link = viewer._link
    assert (link.source[0], link.source[1], link.target[0], link.target[1]) == (viewer.play, "value", viewer.slider, "value")
    frame0, trace0 = viewer.frame_images[0].value, viewer.trace_images[0].value
    assert "step 0" in viewer.readout.value
    viewer.slider.value = 7
    assert viewer.step == 7
    frame7, trace7 = decode(viewer.frame_images[0].value), decode(viewer.trace_images[0].value)
    expected = plots.surprise_overlay(ep.rgb[7], ep.surprise[7], viewer.vmax, viewer.alpha).repeat(2, 0).repeat(2, 1)
    np.testing.assert_array_equal(frame7, expected)
    assert viewer.frame_images[0].value != frame0
    # The trace changed only where the cursor moved: at step 0's column and step 7's column.
    rgba, columns, spans = viewer._traces[0]
    diff = np.flatnonzero((decode(trace0) != trace7).any(axis=(0, 2)))
    assert set(diff) <= set(range(columns[0] - 2, columns[0] + 2)) | set(range(columns[7] - 2, columns[7] + 2))
    assert trace7[spans[0][0] + 2, columns[7], :3].tolist() == [0, 0, 0]
    assert "step 7" in viewer.readout.value and "room 2" in viewer.readout.value
    viewer.show(2)
    assert viewer.slider.value == 2 and "step 2" in viewer.readout.value
    with pytest.raises(ValueError, match="0..11"):
        viewer.show(20)


def test_viewer_compare_side_by_side():
    ep, other = make_episode(), make_episode(model="cts", seed=1)
    viewer = EpisodeViewer(ep, compare=other)
    assert len(viewer.frame_images) == len(viewer.trace_images) == 2
    viewer.slider.value = 5
    left, right = decode(viewer.frame_images[0].value), decode(viewer.frame_images[1].value)
    np.testing.assert_array_equal(
        left, plots.surprise_overlay(ep.rgb[5], ep.surprise[5], viewer.vmax, viewer.alpha).repeat(2, 0).repeat(2, 1))
    np.testing.assert_array_equal(
        right, plots.surprise_overlay(other.rgb[5], other.surprise[5], viewer.vmax, viewer.alpha).repeat(2, 0).repeat(2, 1))
    assert "pixelcnn: PG" in viewer.readout.value and "cts: PG" in viewer.readout.value
    with pytest.raises(ValueError, match="same episode recorded with another density model"):
        EpisodeViewer(ep, compare=make_episode(actions=np.zeros(12, np.int64)))
    with pytest.raises(TypeError, match="expects an Episode"):
        EpisodeViewer("episode.npz")
    assert show_episode(ep, other, interactive=False) is None
    assert isinstance(show_episode(ep, interactive=True), EpisodeViewer)


def test_viewer_has_a_colour_scale_shared_y_and_a_static_image():
    """The surprise overlay's colour scale (nats per pixel) is shown; share_y draws both models'
    traces on one y range; the output bundle carries a PNG for front ends without widgets."""
    from pcnn_explore.plots.episode import common_ylims

    ep, other = make_episode(), make_episode(model="cts", seed=1)
    other.prediction_gain[:] = ep.prediction_gain * 10
    viewer = EpisodeViewer(ep, other, share_y=True)
    assert viewer.colour_scale.value[:4] == b"\x89PNG"
    lims = common_ylims([ep, other])
    assert lims[0][1] >= float(other.prediction_gain.max()) and lims[0][0] <= float(ep.prediction_gain.min())
    unshared = EpisodeViewer(ep, other)
    assert not np.array_equal(viewer._traces[0][0], unshared._traces[0][0])  # first trace redrawn on the common range
    data = viewer._repr_mimebundle_()
    data = data[0] if isinstance(data, tuple) else data
    assert "application/vnd.jupyter.widget-view+json" in data and "image/png" in data
    assert len(viewer.static_figure().axes) == 7  # two frames, four traces, the colour bar
    single = EpisodeViewer(ep)
    assert len(single.static_figure().axes) == 4  # frame, its colour bar, two traces


def test_viewer_builds_on_a_deep_sea_recording():
    """DeepSea-6: 6x6 density frames and a 6x6 RGB picture; the viewer, its static figure and the
    comparison of two models work on frames of any size."""
    from pcnn_explore.record import record_episode

    ep = record_episode("DeepSea-6-v0", "random", "cts", seed=1, max_steps=12, n_episodes=2)
    other = record_episode("DeepSea-6-v0", "random", "pixelcnn", seed=1, max_steps=12, n_episodes=2)
    assert ep.rgb.shape == (12, 6, 6, 3) and ep.surprise.shape == other.surprise.shape == (12, 6, 6)
    viewer = EpisodeViewer(ep, compare=other, scale=20)
    viewer.slider.value = 8
    for image, e in zip(viewer.frame_images, (ep, other)):
        expected = plots.surprise_overlay(e.rgb[8], e.surprise[8], viewer.vmax, viewer.alpha)
        np.testing.assert_array_equal(decode(image.value), expected.repeat(20, 0).repeat(20, 1))
    assert (viewer.frame_images[0].width, viewer.frame_images[0].height) == ("120", "120")
    assert "step 8" in viewer.readout.value and "room" not in viewer.readout.value
    assert len(viewer.static_figure().axes) == 7
    assert len(EpisodeViewer(ep).static_figure().axes) == 4
    assert len(plots.trace_figure(ep, t=3).axes) == 2
