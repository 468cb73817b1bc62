"""Verdicts by statistics: exact t and beta quantiles, intervals and verdict words on hand-made numbers."""
from __future__ import annotations

import math

import pytest

from pcnn_explore.verdicts import (VERDICT_COLOURS, VERDICTS, beta_quantile, binomial_interval, difference_verdict,
                                   equivalence_verdict, incomplete_beta, progress_verdict, t_cdf, t_interval,
                                   t_quantile)


@pytest.mark.parametrize("p, df, expected", [
    (0.975, 4, 2.7764451), (0.975, 2, 4.3026527), (0.975, 1, 12.7062047), (0.975, 8, 2.3060041),
    (0.975, 30, 2.0422725), (0.995, 10, 3.1692727), (0.95, 3, 2.3533634),
])
def test_t_quantiles_match_the_tables(p, df, expected):
    assert t_quantile(p, df) == pytest.approx(expected, abs=5e-8)
    assert t_quantile(1 - p, df) == pytest.approx(-expected, abs=5e-8)
    assert t_cdf(expected, df) == pytest.approx(p, abs=1e-8)


def test_incomplete_beta_by_hand():
    # I_x(1, 1) = x; I_x(2, 1) = x^2; I_x(1, 2) = 1 - (1 - x)^2; I_0.5(a, a) = 1/2
    assert incomplete_beta(0.3, 1, 1) == pytest.approx(0.3, abs=1e-14)
    assert incomplete_beta(0.3, 2, 1) == pytest.approx(0.09, abs=1e-14)
    assert incomplete_beta(0.3, 1, 2) == pytest.approx(1 - 0.49, abs=1e-14)
    assert incomplete_beta(0.5, 3.5, 3.5) == pytest.approx(0.5, abs=1e-14)
    assert beta_quantile(0.09, 2, 1) == pytest.approx(0.3, abs=1e-12)
    with pytest.raises(ValueError, match="a, b > 0"):
        incomplete_beta(0.5, 0, 1)


def test_clopper_pearson_bounds():
    assert binomial_interval(0, 5) == (0.0, pytest.approx(0.5218238, abs=5e-8))
    assert binomial_interval(3, 3) == (pytest.approx(0.2924018, abs=5e-8), 1.0)
    low, high = binomial_interval(2, 5)
    assert low == pytest.approx(0.0527450, abs=5e-8) and high == pytest.approx(0.8533672, abs=5e-8)
    # k = 0: the upper bound solves (1 - p)^n = alpha / 2
    assert binomial_interval(0, 5)[1] == pytest.approx(1 - 0.025 ** (1 / 5), abs=1e-12)
    for bad in [(6, 5), (-1, 5), (0, 0), (1.0, 5), (True, 5)]:
        with pytest.raises(ValueError, match="binomial_interval"):
            binomial_interval(*bad)


def test_t_interval_by_hand():
    # mean 3, s = sqrt(2.5), se = s / sqrt(5) = sqrt(0.5); half width t_{0.975,4} sqrt(0.5)
    low, high = t_interval([1, 2, 3, 4, 5])
    half = 2.7764451051977908 * math.sqrt(0.5)
    assert low == pytest.approx(3 - half, abs=1e-9) and high == pytest.approx(3 + half, abs=1e-9)
    assert t_interval([2.0, 2.0, 2.0]) == (2.0, 2.0)
    with pytest.raises(ValueError, match="at least 2 per-seed values"):
        t_interval([1.0])
    with pytest.raises(ValueError, match="finite"):
        t_interval([1.0, math.nan])
    with pytest.raises(ValueError, match="level"):
        t_interval([1.0, 2.0], level=95)


def test_difference_paired_over_matching_seeds():
    a, b = [1.0, 1.1, 0.9, 1.2, 1.0], [0.0, 0.1, 0.0, 0.2, 0.1]
    # differences 1, 1, 0.9, 1, 0.9: mean 0.96, s^2 = 0.012 / 4, se = sqrt(0.003 / 5)
    v = difference_verdict(a, b, "greater", seeds_a=[0, 1, 2, 3, 4], seeds_b=[0, 1, 2, 3, 4])
    half = 2.7764451051977908 * math.sqrt(0.003 / 5)
    assert v.word == "agrees" and v.method.startswith("paired")
    assert v.estimate == pytest.approx(0.96) and v.interval == pytest.approx((0.96 - half, 0.96 + half), abs=1e-9)
    assert v.values == tuple(a) and v.values_b == tuple(b) and v.sentence.startswith("agrees: ")
    assert difference_verdict(a, b, "less", seeds_a=range(5), seeds_b=range(5)).word == "differs"


def test_difference_welch_without_seeds_is_inconclusive_on_a_wide_spread():
    # equal variances (2.5) and n = 5 each: Welch's df = 8; difference -2, se = 1
    v = difference_verdict([1, 2, 3, 4, 5], [3, 4, 5, 6, 7], "less")
    assert v.word == "inconclusive" and v.method.startswith("Welch")
    assert v.interval == pytest.approx((-2 - 2.3060041, -2 + 2.3060041), abs=1e-6)
    # the same numbers paired over the same seeds: every difference is -2, no spread
    assert difference_verdict([1, 2, 3, 4, 5], [3, 4, 5, 6, 7], "less", seeds_a=range(5),
                              seeds_b=range(5)).word == "agrees"
    assert difference_verdict([1, 2, 3, 4, 5], [3, 4, 5, 6, 7], "greater", seeds_a=range(5),
                              seeds_b=range(5)).word == "differs"
    # 5 seeds, success rates with a wide spread: a mean gap of 0.16 decides nothing
    v = difference_verdict([0.5, 0.9, 0.1, 0.7, 0.2], [0.1, 0.5, 0.4, 0.0, 0.6], "greater")
    assert v.word == "inconclusive" and v.interval[0] < 0 < v.interval[1]
    # seeds that do not match: unpaired
    assert difference_verdict([1, 2, 3], [1, 2, 4], seeds_a=[0, 1, 2], seeds_b=[3, 4, 5]).method.startswith("Welch")


def test_difference_rejects_bad_input():
    with pytest.raises(ValueError, match="direction"):
        difference_verdict([1, 2], [3, 4], "bigger")
    with pytest.raises(ValueError, match="seeds of both sides"):
        difference_verdict([1, 2], [3, 4], seeds_a=[0, 1])
    with pytest.raises(ValueError, match="2 values but 3 seeds"):
        difference_verdict([1, 2], [3, 4], seeds_a=[0, 1, 2], seeds_b=[0, 1, 2])
    with pytest.raises(ValueError, match="at least 2"):
        difference_verdict([1], [3, 4])


def test_progress_against_a_threshold():
    # mean 0.25, s = 0.05, se = 0.05 / sqrt(3); t_{0.975,2} = 4.3026527
    half = 4.302652729749464 * 0.05 / math.sqrt(3)
    v = progress_verdict([0.2, 0.3, 0.25], 2.0 ** -8)
    assert v.word == "agrees" and v.interval == pytest.approx((0.25 - half, 0.25 + half), abs=1e-9)
    assert progress_verdict([0.2, 0.3, 0.25], 0.4).word == "differs"
    assert progress_verdict([0.2, 0.3, 0.25], 0.2).word == "inconclusive"
    assert progress_verdict([0.0, 0.0, 0.0], 0.0).word == "differs"  # never above the random policy's rate
    assert "threshold 0.2" in progress_verdict([0.2, 0.3, 0.25], 0.2).sentence
    with pytest.raises(ValueError, match="threshold"):
        progress_verdict([0.1, 0.2], math.nan)


def test_equivalence_against_a_margin():
    # Welch, equal variances, n = 3 each: df = 4; difference 0, se = sqrt(2 * 0.01 / 3)
    a, b = [1.0, 1.1, 0.9], [2.0, 2.1, 1.9]
    half = 2.7764451051977908 * math.sqrt(2 * 0.01 / 3)
    v = equivalence_verdict(a, [1.0, 1.1, 0.9], 0.5)
    assert v.word == "agrees" and v.interval == pytest.approx((-half, half), abs=1e-9)
    assert equivalence_verdict(a, [1.0, 1.1, 0.9], 0.2).word == "inconclusive"  # half width 0.227 > 0.2
    assert equivalence_verdict(a, b, 0.5).word == "differs"  # the difference is -1 +- 0.227
    with pytest.raises(ValueError, match="margin"):
        equivalence_verdict(a, b, 0.0)


def test_the_vocabulary_has_inconclusive_with_its_own_colour():
    assert VERDICTS == ("agrees", "partly", "differs", "inconclusive", "not testable at this profile")
    assert set(VERDICT_COLOURS) == set(VERDICTS) and len(set(VERDICT_COLOURS.values())) == len(VERDICTS)


def test_share_of_seeds_on_the_exact_interval():
    from pcnn_explore.verdicts import share_verdict

    v = share_verdict(5, 5, 0.5)  # lower bound 0.025 ** (1 / 5) = 0.478 < 0.5: five of five decide nothing here
    assert v.word == "inconclusive" and v.interval[0] == pytest.approx(0.025 ** 0.2, abs=1e-12)
    assert share_verdict(5, 5, 2.0 ** -10).word == "agrees" and share_verdict(5, 5, 2.0 ** -10).estimate == 1.0
    assert share_verdict(0, 5, 0.6).word == "differs"  # upper bound 0.522
    assert share_verdict(3, 3, 0.29).word == "agrees" and share_verdict(3, 3, 0.3).word == "inconclusive"
    assert share_verdict(2, 5, 0.1).values == (1.0, 1.0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="binomial_interval"):
        share_verdict(6, 5, 0.1)


def test_word_of_reads_the_first_word_of_every_notebook_sentence():
    from pcnn_explore.experiments.density import density_verdicts as dv
    from pcnn_explore.verdicts import word_of

    assert word_of("agrees over 3 seeds: slope - 1 < 0") == "agrees" and word_of("  Partly: one of two") == "partly"
    assert word_of("inconclusive (2 of 3 seeds)") == "inconclusive"
    assert word_of("not testable at this profile") == "not testable at this profile"
    assert word_of("agreesome") is None and word_of("similar losses") is None and word_of("") is None
    # 02's sentence comes from the density verdicts' one producer, its word from VERDICTS
    claims = dv.episode_spikes([0.5, 0.6, 0.7], [0.1, 0.1, 0.12], [0, 2, 4])
    assert word_of(dv.verdict_line("study", claims, 3)) == "agrees"
    assert word_of(dv.verdict_line("study", claims, 2)) == "not testable at this profile"
