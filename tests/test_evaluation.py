"""The paper's evaluation (Appendix B) against curves, maximum scores and AUCs computed by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest

from pcnn_explore import evaluation as ev
from pcnn_explore.run.log import LOG_COLUMNS


def _nan_list(a):
    return [None if math.isnan(x) else x for x in np.asarray(a, float).tolist()]


def test_window_is_1m_frames():
    assert ev.paper_window("ALE/MontezumaRevenge-v5") == 250_000  # 4 frames per agent step
    assert ev.paper_window("MiniGrid-Serpentine-7x7-v0") == 1_000_000
    assert ev.frames_per_step("ALE/Pong-v5") == 4 and ev.frames_per_step("MiniGrid-Empty-5x5-v0") == 1


def test_curve_by_hand():
    # windows of 10 steps over 45 steps: [0,10) [10,20) [20,30) [30,40); 40..45 is partial, dropped
    ends = [3, 10, 11, 25, 28, 42]
    rets = [1.0, 3.0, 5.0, -1.0, 2.0, 100.0]
    c = ev.training_curve(ends, rets, steps_done=45, window=10)
    assert c.ends.tolist() == [10, 20, 30, 40]
    # window 0: episodes ending at 3 and 10 -> (1 + 3) / 2; window 1: 5; window 2: (-1 + 2) / 2;
    # window 3: nothing ended there -> missing, not the previous value; the episode at 42 is dropped
    assert _nan_list(c.means) == [2.0, 5.0, 0.5, None]
    assert c.counts.tolist() == [2, 1, 2, 0]
    assert c.window == 10


def test_empty_run_and_runs_shorter_than_a_window():
    c = ev.training_curve([], [], steps_done=0, window=10)
    assert c.means.size == 0 and c.ends.size == 0
    c = ev.training_curve([5], [1.0], steps_done=9, window=10)
    assert c.means.size == 0
    c = ev.training_curve([], [], steps_done=30, window=10)
    assert _nan_list(c.means) == [None, None, None]


@pytest.mark.parametrize("kwargs, match", [
    (dict(end_steps=[1], returns=[1.0], steps_done=10, window=0), "window"),
    (dict(end_steps=[1], returns=[1.0], steps_done=-1, window=5), "steps_done"),
    (dict(end_steps=[1, 2], returns=[1.0], steps_done=10, window=5), "differ in length"),
    (dict(end_steps=[0], returns=[1.0], steps_done=10, window=5), "end steps"),
    (dict(end_steps=[11], returns=[1.0], steps_done=10, window=5), "end steps"),
])
def test_bad_curve_input_is_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ev.training_curve(**kwargs)


def test_curve_from_a_log_uses_complete_episodes_and_the_steps_done():
    rows = [(4, 0, 1.0, 4, 1), (9, 1, 2.0, 5, 1), (12, 2, 7.0, 3, 1), (20, 3, 50.0, 8, 0)]
    log = {c: np.zeros(len(rows)) for c in LOG_COLUMNS}
    log["step"] = np.array([r[0] for r in rows])
    log["return"] = np.array([r[2] for r in rows])
    log["complete"] = np.array([r[4] for r in rows])
    c = ev.curve_from_log(log, window=5)
    # 20 steps done -> 4 windows; the cut episode (complete 0) does not count
    assert _nan_list(c.means) == [1.0, 2.0, 7.0, None]


def test_max_score_is_each_seeds_peak_averaged():
    seeds = [np.array([1.0, 4.0, 2.0]), np.array([3.0, np.nan, 0.0]), np.array([np.nan, np.nan, np.nan])]
    # peaks 4 and 3; the seed without a point is left out
    assert ev.max_score(seeds) == 3.5
    assert math.isnan(ev.max_score([np.array([np.nan])]))
    with pytest.raises(ValueError, match="one curve per seed"):
        ev.max_score([])


def test_mean_curve_and_auc_leave_empty_windows_out():
    a = np.array([0.0, np.nan, 4.0, 8.0])
    b = np.array([2.0, np.nan, np.nan])
    assert _nan_list(ev.mean_curve([a, b])) == [1.0, None, 4.0]  # over the 3 windows both seeds have
    assert ev.auc([a, b]) == 2.5  # (1 + 4) / 2, the empty window left out
    assert ev.auc([a]) == 4.0  # (0 + 4 + 8) / 3
    assert ev.auc([a], horizon=2) == 0.0
    assert math.isnan(ev.auc([np.array([np.nan, np.nan])]))


def test_common_horizon_over_compared_runs():
    dqn = [np.ones(5), np.ones(4)]
    pcnn = [np.ones(6), np.ones(6)]
    assert ev.common_horizon(dqn, pcnn) == 4
    # the AUC of each run over the common horizon
    pc = [np.array([0.0, 1.0, 2.0, 3.0, 100.0])]
    assert ev.auc(pc, ev.common_horizon(pc, dqn)) == 1.5


@pytest.mark.parametrize("a, b, percent, symmetric", [
    (150.0, 100.0, 50.0, False),
    (50.0, 100.0, -50.0, False),
    (-50.0, -100.0, 50.0, False),  # divided by |B|: less negative is better
    (-150.0, -100.0, -50.0, False),
    (10.0, 0.0, 200.0, True),
    (-10.0, 0.0, -200.0, True),
    (3.0, 0.001, 200.0 * 2.999 / 3.001, True),  # |B| < 1e-3 * 3
    (3.0, 0.0031, 100.0 * 2.9969 / 0.0031, False),  # |B| >= 1e-3 * 3: the plain formula
    (0.0, 0.0, 0.0, False),
    (7.0, 7.0, 0.0, False),
    (0.0, 5.0, -100.0, False),
])
def test_improvement_by_hand(a, b, percent, symmetric):
    imp = ev.improvement(a, b)
    assert imp.percent == pytest.approx(percent) and imp.symmetric is symmetric


def test_improvement_nan_and_format():
    assert math.isnan(ev.improvement(float("nan"), 1.0).percent)
    assert ev.format_improvement(ev.improvement(150.0, 100.0)) == "+50%"
    assert ev.format_improvement(ev.improvement(10.0, 0.0)) == "+200%*"
    assert ev.format_improvement(ev.improvement(float("nan"), 0.0)) == "n/a"
    assert ev.SYMMETRIC_NOTE.startswith("* symmetric")


def test_auc_improvement_end_to_end_by_hand():
    """Two variants, two seeds each, from episode arrays to the improvement in %."""
    w = 10
    dqn = [ev.training_curve([5, 15, 25], [0.0, 1.0, 2.0], 30, w), ev.training_curve([5, 25], [2.0, 2.0], 30, w)]
    pcnn = [ev.training_curve([5, 15, 25, 35], [1.0, 2.0, 3.0, 9.0], 40, w),
            ev.training_curve([9, 19, 29], [1.0, 4.0, 5.0], 30, w)]
    h = ev.common_horizon(dqn, pcnn)
    assert h == 3
    # dqn mean curve: [1, 1 (seed 1 empty there), 2] -> AUC 4/3; pcnn: [1, 3, 4] -> AUC 8/3
    assert ev.auc(dqn, h) == pytest.approx(4 / 3)
    assert ev.auc(pcnn, h) == pytest.approx(8 / 3)
    assert ev.improvement(ev.auc(pcnn, h), ev.auc(dqn, h)).percent == pytest.approx(100.0)
    # the maximum score takes each seed's whole curve: seed 0 peaks at 9 in its 4th window, seed 1 at 5
    assert ev.max_score(pcnn) == 7.0
