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
