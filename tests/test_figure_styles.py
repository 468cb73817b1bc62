"""Overlapping lines stay visible (distinct line styles and markers) and legends count seeds in English."""
from __future__ import annotations

import numpy as np

from pcnn_explore.plots.agents import plot_training_curves
from pcnn_explore.plots.evaluation import plot_eval_curves, seeds_text


def test_identical_curves_get_distinct_styles_and_markers():
    same = {"ends": np.arange(1, 41) * 100, "runs": np.ones((1, 40))}
    fig = plot_eval_curves({"DQN-PixelCNN": same, "DQN-CTS": same, "DQN": {**same, "runs": np.ones((2, 40))}})
    lines = fig.axes[0].get_lines()
    assert len({line.get_linestyle() for line in lines}) == 3 and len({line.get_marker() for line in lines}) == 3
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "DQN-PixelCNN (1 seed)", "DQN-CTS (1 seed)", "DQN (2 seeds)"]
    assert seeds_text(1) == "1 seed" and seeds_text(3) == "3 seeds"


def test_training_curves_are_told_apart_too():
    c = {"steps": np.arange(10), "mean": np.zeros(10), "low": np.zeros(10), "high": np.zeros(10), "runs": np.zeros((1, 10))}
    fig = plot_training_curves({"a": c, "b": c})
    lines = fig.axes[0].get_lines()
    assert lines[0].get_marker() != lines[1].get_marker() and lines[0].get_linestyle() != lines[1].get_linestyle()
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["a (1 seed)", "b (1 seed)"]


def _samples_results(n):
    from types import SimpleNamespace

    img = [np.zeros((42, 42), dtype=np.int64)] * n
    models = ("cts", "convcts", "pixelcnn", "pixelcnn_pos")
    return SimpleNamespace(policies=("explorer",), real={"explorer": img},
                           heldout_loss={"explorer": {m: 400.0 for m in models}}, samples={"explorer": {m: img for m in models}})


def test_fig4_of_a_short_run_is_wide_with_its_titles_whole():
    """One sample a model (the smoke profile): the five rows lie side by side, each title over two
    lines, not a 1.6-inch strip whose titles run off the figure; eight samples keep a row each."""
    from pcnn_explore.plots.density import plot_samples

    fig = plot_samples(_samples_results(1))
    width, height = fig.get_size_inches()
    assert (width, height) == (9.5, 2.1) and len(fig.axes) == 5
    assert fig.axes[4].get_title() == "PixelCNN (position bias)\n(held-out 400 nats)"
    fig.canvas.draw()
    right = max(ax.title.get_window_extent().x1 for ax in fig.axes)
    assert right <= fig.bbox.width  # every title inside the figure
    fig = plot_samples(_samples_results(8))
    assert tuple(fig.get_size_inches()) == (12.8, 9.0) and fig.axes[8].get_title(loc="left").startswith("CTS (held-out")
