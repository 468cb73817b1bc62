"""bsuite's deep-sea protocol: the solve rule, the time limit and the score on hand-made episodes."""
from __future__ import annotations


import numpy as np
import pytest

from pcnn_explore.envs.deep_sea_protocol import (PROTOCOL_EPISODES, PROTOCOL_SIZES, deep_sea_score, solve_episode,
                                            solved_in_time, successes_from_log)


def test_the_protocol_is_bsuites():
    assert PROTOCOL_SIZES == tuple(range(10, 51, 2)) and len(PROTOCOL_SIZES) == 21 and PROTOCOL_EPISODES == 10_000


def test_solved_at_the_first_episode_with_fewer_than_nine_tenths_bad():
    S, F = True, False
    assert solve_episode([S]) == 1  # 0 / 1 < 0.9
    assert solve_episode([F, S]) == 2  # 1 / 2
    assert solve_episode([F] * 9 + [S]) is None  # 9 / 10 = 0.9 exactly: a tie does not count
    assert solve_episode([F] * 9 + [S, S]) == 11  # 9 / 11 < 0.9
    assert solve_episode([F] * 18 + [S, S]) is None  # 18 / 20 = 0.9 again
    assert solve_episode([F] * 18 + [S, S, S]) == 21  # 18 / 21
    # 30 bad then successes: bad / e < 0.9 first at e = 34 (30 / 34 = 0.882; 30 / 33 = 0.909)
    assert solve_episode([F] * 30 + [S] * 10) == 34
    # checked at every episode: the ratio may rise again later, the first crossing stands
    assert solve_episode([S] + [F] * 50) == 1
    assert solve_episode([F] * 100) is None and solve_episode([]) is None
    assert solve_episode(np.array([F, F, S])) == 3  # 2 / 3 < 0.9


def test_solve_episode_rejects_non_bools():
    with pytest.raises(ValueError, match="bools"):
        solve_episode([0.9, 0.1])
    with pytest.raises(ValueError, match="1-D"):
        solve_episode(np.zeros((2, 2), bool))


def test_in_time_is_below_two_to_the_n_plus_100_within_10k():
    assert solved_in_time(10, 1123) and not solved_in_time(10, 1124)  # 2^10 + 100 = 1124
    assert solved_in_time(12, 4195) and not solved_in_time(12, 4196)
    assert solved_in_time(14, 10_000) and not solved_in_time(14, 10_001)  # 2^14 + 100 > 10K: the 10K bind
    assert not solved_in_time(10, None)
    assert solved_in_time(20, 12_000, episodes=20_000)
    with pytest.raises(ValueError, match="size"):
        solved_in_time(0, 5)


def test_the_score_is_the_share_of_sizes_solved_in_time():
    assert deep_sea_score({10: 500, 12: None, 14: 20_000}) == pytest.approx(1 / 3)
    assert deep_sea_score({n: 50 for n in PROTOCOL_SIZES}) == 1.0
    assert deep_sea_score({10: 1124, 20: 9_999}) == 0.5
    with pytest.raises(ValueError, match="at least one size"):
        deep_sea_score({})


def test_successes_from_a_log_leave_out_the_cut_episode():
    log = {"return": np.array([0.99, -0.001, 0.0, 0.99, 0.99]), "complete": np.array([1, 1, 1, 1, 0])}
    np.testing.assert_array_equal(successes_from_log(log), [True, False, False, True])
    assert successes_from_log({"return": np.array([]), "complete": np.array([])}).shape == (0,)
    assert solve_episode(successes_from_log(log)) == 1
