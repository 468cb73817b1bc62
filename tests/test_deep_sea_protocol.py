"""bsuite's deep-sea protocol: the solve rule, the time limit and the score on hand-made episodes."""
from __future__ import annotations


import numpy as np
import pytest

from pcnn_explore.envs.deep_sea_protocol import (PROTOCOL_EPISODES, PROTOCOL_SIZES, bsuite_logged_episodes,
                                                 bsuite_solve_episode, deep_sea_score, solve_episode, solved_in_time,
                                                 successes_from_log)


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


def test_in_time_is_below_two_to_the_n_plus_100_within_10k_at_logged_episodes():
    # bsuite's solve episodes are logged episodes: around 2^10 + 100 = 1124 they are 1000 and 1200
    assert solved_in_time(10, 1000) and not solved_in_time(10, 1200)
    assert solved_in_time(12, 4000) and not solved_in_time(12, 5000)  # 2^12 + 100 = 4196
    assert solved_in_time(14, 10_000) and not solved_in_time(14, 12_000)  # 2^14 + 100 > 10K: the 10K bind
    assert not solved_in_time(10, None)
    assert solved_in_time(20, 12_000, episodes=20_000)
    assert solved_in_time(6, 120) and not solved_in_time(6, 170)  # 2^6 + 100 = 164
    with pytest.raises(ValueError, match="size"):
        solved_in_time(0, 5)
    for not_logged in (11, 1123, 1124, 246, 0):  # the every-episode solve episode is not bsuite's
        with pytest.raises(ValueError, match=f"episode {not_logged} is not one of bsuite's logged episodes"):
            solved_in_time(10, not_logged)


def test_the_score_is_the_share_of_sizes_solved_in_time():
    assert deep_sea_score({10: 500, 12: None, 14: 20_000}) == pytest.approx(1 / 3)
    assert deep_sea_score({n: 50 for n in PROTOCOL_SIZES}) == 1.0
    assert deep_sea_score({10: 1200, 20: 9_000}) == 0.5
    with pytest.raises(ValueError, match="at least one size"):
        deep_sea_score({})
    with pytest.raises(ValueError, match="episode 1056 is not one of bsuite's logged episodes"):
        deep_sea_score({10: 1056})


#: bsuite's logged episodes up to 1,000, written out by hand from its ratios 1, 1.2, 1.4, 1.7, 2, 2.5, 3, 4, ..., 10
LOGGED_TO_1000 = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 17, 20, 25, 30, 40, 50, 60, 70, 80, 90, 100, 120, 140,
                  170, 200, 250, 300, 400, 500, 600, 700, 800, 900, 1000]


def test_logged_episodes_by_hand():
    assert bsuite_logged_episodes(1000).tolist() == LOGGED_TO_1000
    assert bsuite_logged_episodes(999).tolist() == LOGGED_TO_1000[:-1]
    assert bsuite_logged_episodes(0).tolist() == [] and bsuite_logged_episodes(1).tolist() == [1]
    assert bsuite_logged_episodes(30).tolist() == LOGGED_TO_1000[:16]
    ten_k = bsuite_logged_episodes(PROTOCOL_EPISODES).tolist()
    assert ten_k[36:] == [1200, 1400, 1700, 2000, 2500, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10_000]
    assert len(ten_k) == 49 and bsuite_logged_episodes(10**9)[-1] == 10**9
    for bad in (-1, 2.5, True, None):
        with pytest.raises(ValueError, match="last must be a non-negative integer"):
            bsuite_logged_episodes(bad)


def _bsuite_formula(episode: int, ratios=None) -> bool:
    """A copy of bsuite 0.3.6's ``_logarithmic_logging`` (bsuite/utils/wrappers.py), the episodes its
    logging wrapper writes a row at."""
    if ratios is None:
        ratios = [1., 1.2, 1.4, 1.7, 2., 2.5, 3., 4., 5., 6., 7., 8., 9., 10.]
    exponent = np.floor(np.log10(np.maximum(1, episode)))
    special_vals = [10**exponent * ratio for ratio in ratios]
    return any(episode == val for val in special_vals)


def _check_schedule(is_logged) -> None:
    every = [e for e in range(0, 30_001) if is_logged(e)]  # every episode up to three times the protocol's
    assert bsuite_logged_episodes(30_000).tolist() == every
    big = bsuite_logged_episodes(10**9)  # beyond: each logged episode and its neighbours
    assert all(is_logged(int(e)) for e in big)
    assert not any(is_logged(int(e) + d) for e in big[big > 10] for d in (-1, 1))


def test_logged_episodes_are_bsuites_formula():
    _check_schedule(_bsuite_formula)


def test_logged_episodes_are_bsuites_own():
    wrappers = pytest.importorskip("bsuite.utils.wrappers")
    _check_schedule(wrappers._logarithmic_logging)


def test_bsuite_solves_at_its_first_logged_episode_where_the_rule_holds():
    S, F = True, False
    assert bsuite_solve_episode([F] * 9 + [S, S]) is None  # 9 / 11 < 0.9, but 11 is not logged and 10 is a tie
    assert solve_episode([F] * 9 + [S, S]) == 11
    assert bsuite_solve_episode([F] * 9 + [S, S, F]) == 12  # 10 / 12 < 0.9 at the next logged episode
    assert bsuite_solve_episode([F] * 9 + [S, S] + [S] * 4) == 12  # 9 / 12
    assert bsuite_solve_episode([S]) == 1 and bsuite_solve_episode([F, F, S]) == 3  # every episode to 10 is logged
    # met at 34 (30 / 34) between the logged 30 and 40; at 40, 36 bad of 40 is a tie, at 50 46 / 50 > 0.9: never
    run = [F] * 30 + [S] * 4 + [F] * 16
    assert solve_episode(run) == 34 and bsuite_solve_episode(run) is None
    # DeepSea-6: met at every episode first at 246 (221 bad: 2210 < 9 x 246 = 2214), at the logged 250 for bsuite
    assert solve_episode([F] * 221 + [S] * 29) == 246 and bsuite_solve_episode([F] * 221 + [S] * 29) == 250
    assert bsuite_solve_episode([F] * 221 + [S] * 28) is None  # 249 episodes: 250 never logged
    assert bsuite_solve_episode([]) is None and bsuite_solve_episode([F] * 100) is None
    with pytest.raises(ValueError, match="bools"):
        bsuite_solve_episode([0.9, 0.1])


def test_the_score_at_logged_episodes():
    S, F = True, False
    # DeepSea-10: 950 bad then successes: the rule holds from 1056 (9500 < 9 x 1056 = 9504), below
    # 2^10 + 100 = 1124, but bsuite first sees it at its logged 1200 (at 1000: 950 / 1000 > 0.9): not in time
    run = [F] * 950 + [S] * 250
    assert solve_episode(run) == 1056 and bsuite_solve_episode(run) == 1200
    assert deep_sea_score({10: bsuite_solve_episode(run)}) == 0.0
    # 900 bad: met at 1001 (9000 < 9009), seen by bsuite at 1200 too; 899 bad: 8990 < 9000 at the logged 1000
    assert bsuite_solve_episode([F] * 900 + [S] * 300) == 1200
    assert bsuite_solve_episode([F] * 899 + [S] * 301) == 1000
    assert deep_sea_score({10: bsuite_solve_episode([F] * 899 + [S] * 301), 12: bsuite_solve_episode(run)}) == 1.0


def test_successes_from_a_log_leave_out_the_cut_episode():
    log = {"return": np.array([0.99, -0.001, 0.0, 0.99, 0.99]), "complete": np.array([1, 1, 1, 1, 0])}
    np.testing.assert_array_equal(successes_from_log(log), [True, False, False, True])
    assert successes_from_log({"return": np.array([]), "complete": np.array([])}).shape == (0,)
    assert solve_episode(successes_from_log(log)) == 1
