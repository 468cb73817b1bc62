"""Verdicts that cannot agree at a floor, with any number of seeds: the expected results of issue 34's
"Done when", hand-computed p values, and the one vocabulary."""
from __future__ import annotations

import math

import numpy as np
import pytest

from pcnn_explore.verdicts import (
    LINES_DO_NOT_MOVE,
    MC_DRAWS,
    NOT_ON_THIS_TASK,
    REASONS,
    TOO_FEW_SEEDS,
    combine_verdicts,
    difference_verdict,
    equivalence_verdict,
    leaves_floor,
    monte_carlo_error,
    not_testable,
    notebook_verdict,
    paired_verdict,
    permutation_p,
    progress_verdict,
    reason_of,
    share_verdict,
    sign_flip_p,
    solved_verdict,
)


# ------------------------------------------------------------------------- the findings
def test_two_lines_at_the_floor_are_not_testable():
    v = equivalence_verdict([0.0] * 10, [0.0] * 10, 0.1, seeds_a=range(10), seeds_b=range(10))
    assert v.word == "not testable" and v.reason == LINES_DO_NOT_MOVE
    assert v.sentence.startswith("not testable: the lines do not move (neither line leaves the floor 0")
    # 09's case: both lines 0 on 9 seeds, 0.953 on one (p of leaving 0 = 1/2): still not testable
    c1 = [0.953] + [0.0] * 9
    assert equivalence_verdict(c1, list(c1), 0.2, seeds_a=range(10), seeds_b=range(10), floor=0.0).reason == \
        LINES_DO_NOT_MOVE
    # 08's case: MMC alone and DQN both 0, the bonus with MMC (the positive control) at 0.4 on every seed
    v = equivalence_verdict([0.0] * 10, [0.0] * 10, 0.1, seeds_a=range(10), seeds_b=range(10), floor=0.0,
                            control=[0.4] * 10)
    assert v.word == "agrees" and v.p_value == 2.0 ** -10


def test_three_seeds_decide_nothing():
    v = difference_verdict([1, 1, 1], [0, 0, 1e-6])
    assert v.word == "not testable" and v.reason == TOO_FEW_SEEDS
    assert v.sentence.startswith("not testable: too few seeds at this profile (needs 6 per line, has 3)")
    assert difference_verdict([1, 1, 1], [0, 0, 0]).word == "not testable"
    assert paired_verdict({s: 1.0 for s in range(5)}, {s: 0.0 for s in range(5)}).reason == TOO_FEW_SEEDS
    # five seeds per line give Fisher p = 1 / C(10, 5) = 0.004, yet a decided claim needs 6 per line
    assert solved_verdict({s: True for s in range(5)}, {s: False for s in range(5)}).reason == TOO_FEW_SEEDS
    assert progress_verdict([1.0] * 5, 0.0).reason == TOO_FEW_SEEDS


def _random_flips(d: np.ndarray, direction: str, draws: int = 200_000) -> float:
    """The share of random sign patterns whose sum reaches the observed one: drawn here, independently
    of the module's seed and method."""
    rng = np.random.default_rng(12345)
    hits = 0
    for start in range(0, draws, 20_000):
        signs = rng.choice([-1.0, 1.0], size=(20_000, d.size))
        sums = signs @ d
        hits += int(np.count_nonzero(sums >= d.sum() - 1e-9 if direction == "greater" else sums <= d.sum() + 1e-9))
    return hits / draws


@pytest.mark.parametrize("n", [30, 60])
def test_many_seeds_give_the_p_of_random_sign_flips(n):
    rng = np.random.default_rng(n)
    d = rng.normal(0.25, 1.0, n)
    for direction in ("greater", "less"):
        p = sign_flip_p(d, direction)
        assert abs(p - _random_flips(d, direction)) < 0.01, (n, direction, p)
    v = paired_verdict(dict(enumerate(d)), {s: 0.0 for s in range(n)})
    assert v.draws == MC_DRAWS and v.mc_error == pytest.approx(math.sqrt(v.p_value * (1 - v.p_value) / MC_DRAWS))
    assert f"Monte Carlo of {MC_DRAWS:,} seeded draws, standard error" in v.sentence
    assert v.p_value == sign_flip_p(d, "greater")  # seeded: the same values give the same p
    # equivalence with 30 / 60 seeds no longer crashes
    assert equivalence_verdict(d, [0.0] * n, 1.0, seeds_a=range(n), seeds_b=range(n)).word in (
        "agrees", "differs", "inconclusive")


@pytest.mark.parametrize("n", [30, 60])
def test_many_seeds_give_the_p_of_random_splits(n):
    rng = np.random.default_rng(100 + n)
    a, b = rng.normal(0.3, 1.0, n), rng.normal(0.0, 1.0, n)
    pool = np.concatenate((a, b))
    draws, hits = 200_000, 0
    for _ in range(draws // 20_000):
        keys = rng.random((20_000, 2 * n))
        first = np.argsort(keys, axis=1)[:, :n]
        hits += int(np.count_nonzero(pool[first].sum(axis=1) >= a.sum() - 1e-9))
    p = permutation_p(a, b, "greater")
    assert abs(p - hits / draws) < 0.01, (n, p, hits / draws)
    v = difference_verdict(a, b)
    assert v.test == "permutation" and v.draws == MC_DRAWS and "standard error" in v.sentence


def test_twelve_seeds_without_spread_are_decided():
    v = difference_verdict([1.0] * 12, [0.0] * 12)  # unpaired, C(24, 12) splits: Monte Carlo, no crash
    assert v.word == "agrees" and v.p_value <= 2 / (MC_DRAWS + 1) and v.estimate == 1.0
    paired = difference_verdict([1.0] * 12, [0.0] * 12, seeds_a=range(12), seeds_b=range(12))
    assert paired.word == "agrees" and paired.p_value == 2.0 ** -12


def test_float_noise_is_relative_to_the_threshold():
    far, near = progress_verdict([0] * 10, 2.0 ** -10), progress_verdict([0] * 10, 2.0 ** -45)
    assert far.word == near.word == "differs"
    assert near.p_value == far.p_value == 1.0  # nothing above the threshold; below it, all 10: 2^-10
    # the threshold itself, or a float-noise step from it, is no effect
    assert progress_verdict([0.1 + 0.2] * 10, 0.3).word == "inconclusive"


def test_a_notebook_with_one_agrees_and_one_differs_is_mixed():
    assert combine_verdicts(["agrees", "differs"]) == "mixed"
    assert combine_verdicts(["agrees: x", "differs: y", "inconclusive: z"]) == "mixed"
    assert combine_verdicts(["differs", "inconclusive"]) == "differs"  # a differs never disappears
    assert combine_verdicts(["agrees", "inconclusive"]) == "partly"
    assert combine_verdicts(["agrees", not_testable(TOO_FEW_SEEDS)]) == "agrees"
    assert combine_verdicts(["inconclusive", "inconclusive"]) == "inconclusive"
    with pytest.raises(ValueError, match="not among them"):
        combine_verdicts(["agrees", "mostly"])


def test_share_verdict_refuses_a_threshold_outside_0_1():
    for bad in (1.5, -0.1, math.nan):
        with pytest.raises(ValueError, match=r"threshold must be a share in \[0, 1\]"):
            share_verdict(3, 10, bad)
    assert share_verdict(10, 10, 0.0).word == "agrees" and share_verdict(0, 10, 1.0).word == "differs"


# ------------------------------------------------------------------------ hand-computed p values
def test_exact_p_values_by_hand():
    # six seeds all positive: only the all-plus pattern of 64 reaches the observed sum
    assert sign_flip_p([0.3, 0.1, 0.2, 0.5, 0.4, 0.6], "greater") == 1 / 64
    v = paired_verdict({s: 1.0 + s for s in range(6)}, {s: 0.0 for s in range(6)})
    assert v.word == "agrees" and v.p_value == 1 / 64 and v.draws == 0 and "(exact;" in v.sentence
    # seven seeds, one negative (-1) of magnitude below the rest (2..7): sums >= observed for {}, {-1}: 2/128
    assert sign_flip_p([2, 3, 4, 5, 6, 7, -1], "greater") == 2 / 128
    # unpaired, 6 ones against 6 zeros: one split of C(12, 6) = 924
    assert difference_verdict([1.0] * 6, [0.0] * 6).p_value == 1 / 924
    # Fisher stays exact: 6 of 6 against 0 of 6, 1 / C(12, 6)
    assert solved_verdict({s: True for s in range(6)}, {s: False for s in range(6)}).p_value == 1 / 924
    assert monte_carlo_error(0.5, 200_000) == pytest.approx(0.5 / math.sqrt(200_000)) and monte_carlo_error(0.5, 0) == 0


def test_leaving_the_floor():
    assert leaves_floor([0.1] * 6, 0.0) and not leaves_floor([0.1] * 5, 0.0)  # 2^-5 > 0.025
    assert not leaves_floor([0.0] * 9 + [0.953], 0.0)  # one seed above: p = 1/2
    assert not leaves_floor([0.0] * 10, 0.0)


def test_not_testable_always_gives_its_reason():
    assert REASONS == ("too few seeds at this profile", "not testable on this task", "the lines do not move")
    assert not_testable(TOO_FEW_SEEDS, "needs 6 per line, has 3") == \
        "not testable: too few seeds at this profile (needs 6 per line, has 3)"
    task = not_testable(NOT_ON_THIS_TASK, "DeepSea's one-pixel frames")
    assert task == "not testable on this task: DeepSea's one-pixel frames" and reason_of(task) == NOT_ON_THIS_TASK
    assert reason_of(not_testable(LINES_DO_NOT_MOVE)) == LINES_DO_NOT_MOVE
    assert reason_of("not testable at this profile: smoke runs") == TOO_FEW_SEEDS and reason_of("agrees: x") is None
    with pytest.raises(ValueError, match="one of the reasons"):
        not_testable("no budget")
    with pytest.raises(ValueError, match="needs its why"):
        not_testable(NOT_ON_THIS_TASK)
    assert notebook_verdict([not_testable(TOO_FEW_SEEDS), not_testable(LINES_DO_NOT_MOVE)]) == \
        "not testable: too few seeds at this profile; the lines do not move"
    assert notebook_verdict([task]) == "not testable on this task" and notebook_verdict(["agrees", task]) == "agrees"
