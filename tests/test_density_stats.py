"""Hand-computed cases for the density-experiment statistics and training helpers."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from pcnn_explore.experiments import density_stats as ds
from pcnn_explore.experiments.density_training import heldout_loss, train_stream, training_order

torch.set_num_threads(1)


def test_pg_variability_by_hand():
    # diffs |1-2|,|3-1|,|2-3|,|4-2| = 1,2,1,2 -> median 1.5; median of (2,1,3,2,4) = 2
    assert ds.pg_variability([2, 1, 3, 2, 4]) == pytest.approx(0.75)
    assert ds.pg_variability([5, 5, 5]) == 0.0
    assert math.isnan(ds.pg_variability([-1, -2, -1]))


def test_peak_to_median_by_hand():
    assert ds.peak_to_median([1, 2, 3, 4, 40]) == pytest.approx(40 / 3)
    assert math.isnan(ds.peak_to_median([0, 0, 1]))


def test_pg_summary_by_hand():
    s = ds.pg_summary([2, -1, 3, 2, 4])
    assert s["mean"] == pytest.approx(2.0)
    assert s["median"] == 2.0
    # diffs 3,4,1,2 -> median 2.5; / 2
    assert s["variability"] == pytest.approx(1.25)
    assert s["peak_to_median"] == pytest.approx(2.0)
    assert s["negative_fraction"] == pytest.approx(0.2)


@pytest.mark.parametrize("bad, error", [([1.0, float("nan")], ValueError), ([[1.0, 2.0]], ValueError),
                                        ([1.0], ValueError), ([1.0, float("inf")], ValueError)])
def test_bad_traces_are_rejected(bad, error):
    with pytest.raises(error):
        ds.pg_variability(bad)


def test_trailing_median_by_hand():
    out = ds.trailing_median([1, 5, 3, 10, 0], window=2)
    assert np.isnan(out[:2]).all()
    assert out[2:].tolist() == [3.0, 4.0, 6.5]  # median(1,5), median(5,3), median(3,10)
    with pytest.raises(ValueError, match="window"):
        ds.trailing_median([1, 2], 0)


def test_top_spikes_respects_separation_and_order():
    h = np.array([0, 9, 8, 0, 0, 7, np.nan, 6, 0, 0])
    assert ds.top_spikes(h, 3, min_separation=2).tolist() == [1, 5, 7]  # 8 at index 2 is too close to 1
    assert ds.top_spikes(h, 3, min_separation=0).tolist() == [1, 2, 5]
    assert ds.top_spikes(h, 10, min_separation=4).tolist() == [1, 5, 9]
    assert ds.top_spikes(h, 0, 1).tolist() == []


def test_near_episode_start_by_hand():
    starts = np.zeros(20, bool)
    starts[[0, 10]] = True
    assert ds.near_episode_start([0, 2, 3, 9, 10, 13, 14], starts, window=3).tolist() == \
        [True, True, True, False, True, True, False]
    assert ds.near_episode_start([5], np.zeros(20, bool), 3).tolist() == [False]


def test_spike_alignment_finds_spikes_at_episode_starts():
    loss = np.full(40, 10.0)
    starts = np.zeros(40, bool)
    starts[[0, 12, 30]] = True
    loss[[12, 31]] = 50.0    # spikes at a start and one frame after a start
    loss[20] = 30.0          # a smaller spike away from any start
    r = ds.spike_alignment(loss, starts, window=2, baseline=4, min_separation=3)
    # k defaults to the 2 starts after the baseline window; the two highest spikes are 12 and 31
    assert r.spikes.tolist() == [12, 31]
    assert r.fraction == 1.0
    # eligible frames 4..39 = 36; near a start: 12,13,14 and 30,31,32 -> 6/36
    assert r.chance == pytest.approx(6 / 36)
    r3 = ds.spike_alignment(loss, starts, k=3, window=2, baseline=4, min_separation=3)
    assert r3.spikes.tolist() == [12, 31, 20] and r3.fraction == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="one flag per loss"):
        ds.spike_alignment(loss, starts[:-1])


def test_moving_average_and_tail_mean_by_hand():
    np.testing.assert_allclose(ds.moving_average([1, 3, 5, 7], 2), [1, 2, 4, 6])
    assert ds.tail_mean([1, 2, 3, 4], 2) == 3.5
    assert ds.tail_mean([1, 2], 10) == 1.5
    with pytest.raises(ValueError):
        ds.tail_mean([], 1)


def test_training_orders():
    rng = np.random.default_rng(0)
    assert training_order(5, "online", rng).tolist() == [0, 1, 2, 3, 4]
    perm = training_order(50, "permutation", rng)
    assert sorted(perm.tolist()) == list(range(50)) and perm.tolist() != list(range(50))
    repl = training_order(50, "replacement", rng)
    assert repl.min() >= 0 and repl.max() < 50 and len(set(repl.tolist())) < 50
    with pytest.raises(ValueError, match="online, permutation, replacement"):
        training_order(5, "shuffled", rng)


class _CountingModel:
    """Records the frames it is trained on; log rho = -(updates so far), log rho' = log rho + 1."""

    def __init__(self):
        self.seen = []

    def update(self, frame):
        self.seen.append(int(frame[0, 0]))
        return -float(len(self.seen) - 1), -float(len(self.seen) - 1) + 1.0

    def log_prob(self, frames):
        return np.full(len(frames), -float(len(self.seen)))


def test_train_stream_follows_order_and_evaluates_on_schedule():
    frames = np.arange(5, dtype=np.uint8)[:, None, None] * np.ones((1, 2, 2), np.uint8)
    model = _CountingModel()
    trace = train_stream(model, frames, order=np.array([4, 0, 2, 2, 1]), eval_frames=frames[:3], eval_every=2)
    assert model.seen == [4, 0, 2, 2, 1]
    assert trace.loss.tolist() == [0, 1, 2, 3, 4]
    assert trace.pg.tolist() == [1, 1, 1, 1, 1]
    assert trace.eval_steps.tolist() == [0, 2, 4, 5]
    assert trace.eval_loss.tolist() == [0, 2, 4, 5]
    assert heldout_loss(model, frames, batch=2) == 5.0
    with pytest.raises(ValueError, match="eval_every"):
        train_stream(_CountingModel(), frames, eval_frames=frames)
