"""log.csv's per-episode numbers and the TensorBoard window means, from hand-made bonus records."""
from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from pcnn_explore.run.metrics import EpisodeStats, WindowStats


def record(pg: float, bonus: float = 0.5, pseudo_count: float = 3.0) -> SimpleNamespace:
    """What the bonus scorer returns for one density update."""
    return SimpleNamespace(prediction_gain=pg, bonus=bonus, pseudo_count=pseudo_count)


def test_prediction_gain_mean_is_over_the_density_updates_not_the_steps():
    stats = EpisodeStats("cpu")
    # 8 agent steps, a quarter of them scored (bonus_fraction 0.25): PG 2 and 6 nats; r+ 0.5 and 3 (clipped to 1)
    for r in (None, None, record(2.0), None, None, None, record(6.0, bonus=3.0), None):
        stats.add_step(1.0, r)
    row = stats.row(step=8, episode=0, complete=True, epsilon=0.1, wall=1.0, with_bonus=True)
    assert row["prediction_gain_mean"] == 4.0  # (2 + 6) / 2 updates; the steps' mean would be 1.0
    assert row["intrinsic_return"] == 1.5 and row["intrinsic_mean"] == 1.5 / 8  # r+ is per step
    assert (row["return"], row["length"]) == (8.0, 8)
    # a checkpoint taken mid-episode carries the count on
    resumed = EpisodeStats.from_state(stats.state(), "cpu")
    resumed.add_step(0.0, record(1.0))
    assert resumed.row(9, 0, True, 0.1, 1.0, True)["prediction_gain_mean"] == 3.0  # (2 + 6 + 1) / 3


def test_prediction_gain_mean_is_nan_without_updates_or_without_a_bonus():
    stats = EpisodeStats("cpu")
    for _ in range(5):
        stats.add_step(0.0, None)
    assert math.isnan(stats.row(5, 0, True, 0.1, 1.0, with_bonus=True)["prediction_gain_mean"])
    assert math.isnan(stats.row(5, 0, True, 0.1, 1.0, with_bonus=False)["prediction_gain_mean"])


def test_an_earlier_checkpoints_episode_counts_every_step_as_an_update():
    old = {"ret": 0.0, "length": 4, "intr": 2.0, "pg": 10.0, "loss": 0.0, "n_loss": 0}  # no "n_pg"
    stats = EpisodeStats.from_state(old, "cpu")
    assert stats.n_pg == 4
    assert stats.row(4, 0, True, 0.1, 1.0, True)["prediction_gain_mean"] == 2.5


def test_window_prediction_gain_is_the_mean_over_its_density_updates():
    scalars = {}
    tb = SimpleNamespace(add_scalar=lambda name, value, step: scalars.__setitem__(name, value))
    win = WindowStats("cpu", 0)
    for r in (record(3.0), None, None, record(5.0), None, None):
        win.add_step(r)
    win.write(tb, 6, 0.5, with_bonus=True)
    assert scalars["bonus/prediction_gain"] == 4.0
    assert scalars["bonus/intrinsic_reward"] == pytest.approx(1.0 / 6)  # r+ per step
    assert scalars["bonus/pseudo_count"] == 3.0
    scalars.clear()
    win.add_step(None)
    win.write(tb, 7, 0.5, with_bonus=True)  # no update in the window: no PG point
    assert "bonus/prediction_gain" not in scalars
