"""Verdicts by statistics: exact t and beta quantiles, intervals and verdict words on hand-made numbers."""
from __future__ import annotations

import math
from fractions import Fraction

import pytest

from pcnn_explore.verdicts import (VERDICT_COLOURS, VERDICTS, beta_quantile, binomial_interval, difference_verdict,
                                   equivalence_verdict, incomplete_beta, progress_verdict, t_cdf, t_interval,
                                   t_quantile)



def P(numerator: int, denominator: int) -> float:
    """An exact p value as the tests return it: the fraction, rounded to float once."""
    return float(Fraction(numerator, denominator))

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
    # no t test decides: the sign flip of the differences 1, 1, 0.9, 1, 0.9, 1.1, all above 0: p = 2^-6;
    # at 6 seeds (K = 1) the interval is [min d, max d]
    a, b = [1.0, 1.1, 0.9, 1.2, 1.0, 1.3], [0.0, 0.1, 0.0, 0.2, 0.1, 0.2]
    v = difference_verdict(a, b, "greater", seeds_a=range(6), seeds_b=range(6))
    assert v.word == "agrees" and v.method.startswith("paired sign flip") and v.p_value == P(1, 64)
    assert v.estimate == pytest.approx(5.9 / 6) and v.interval == pytest.approx((0.9, 1.1), abs=1e-7)
    assert v.values == tuple(a) and v.values_b == tuple(b) and v.sentence.startswith("agrees: ")
    assert difference_verdict(a, b, "less", seeds_a=range(6), seeds_b=range(6)).word == "differs"
    # 5 seeds decide nothing, however clear: too few seeds at this profile
    five = difference_verdict(a[:5], b[:5], "greater", seeds_a=range(5), seeds_b=range(5))
    assert five.word == "not testable" and five.reason == "too few seeds at this profile"


def test_difference_without_seeds_is_the_permutation_test():
    # unpaired, 6 and 6: the permutation test (no Welch); [1..6] against [3..8], C(12, 6) = 924 splits
    v = difference_verdict([1, 2, 3, 4, 5, 6], [3, 4, 5, 6, 7, 8], "less")
    assert v.word == "inconclusive" and v.test == "permutation" and v.method.startswith("permutation")
    from pcnn_explore.verdicts import permutation_p
    assert v.p_value == permutation_p([1, 2, 3, 4, 5, 6], [3, 4, 5, 6, 7, 8], "less") and v.p_value > 0.025
    # the same numbers paired over the same seeds: every difference is -2, no spread. No t interval of
    # width 0: the exact sign flip decides, and 5 seeds can give no p below 2^-5 = 0.031 > 0.025
    flat = difference_verdict([1, 2, 3, 4, 5], [3, 4, 5, 6, 7], "less", seeds_a=range(5), seeds_b=range(5))
    assert flat.word == "not testable" and flat.interval == (-math.inf, math.inf)
    assert flat.test == "sign_flip" and flat.p_value == 1 / 32
    # six seeds, every difference -2: p = 2^-6 = 1/64 <= 0.025
    six = difference_verdict([1, 2, 3, 4, 5, 6], [3, 4, 5, 6, 7, 8], "less", seeds_a=range(6), seeds_b=range(6))
    assert six.word == "agrees" and six.p_value == 1 / 64 and six.estimate == -2
    assert difference_verdict([1, 2, 3, 4, 5, 6], [3, 4, 5, 6, 7, 8], "greater", seeds_a=range(6),
                              seeds_b=range(6)).word == "differs"
    # 6 seeds, success rates with a wide spread: a mean gap of 0.13 decides nothing
    v = difference_verdict([0.5, 0.9, 0.1, 0.7, 0.2, 0.4], [0.1, 0.5, 0.4, 0.0, 0.6, 0.4], "greater")
    assert v.word == "inconclusive" and v.interval[0] < 0 < v.interval[1]
    # seeds that do not match: unpaired
    assert difference_verdict([1, 2, 3], [1, 2, 4], seeds_a=[0, 1, 2], seeds_b=[3, 4, 5]).test == "permutation"


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
    # decided by the exact sign flip of values - threshold; 3 seeds never reach 0.025 (min p 1/8)
    assert progress_verdict([0.2, 0.3, 0.25], 2.0 ** -8).word == "not testable"
    assert progress_verdict([0.0, 0.0, 0.0], 0.0).sentence.startswith("not testable: too few seeds at this profile")
    v6 = [0.2, 0.3, 0.25, 0.2, 0.3, 0.25]
    v = progress_verdict(v6, 2.0 ** -8)
    # every value above: p = 1/64; at n = 6 (K = floor(0.025 * 64) = 1) the interval is [min, max]
    assert v.word == "agrees" and v.p_value == 1 / 64 and v.test == "sign_flip" and v.n == 6
    assert v.interval == pytest.approx((0.2, 0.3), abs=1e-8)  # widened by the noise tolerance 6 x 1e-9 x 0.3
    assert "t interval" not in v.sentence and "(exact;" in v.sentence  # no t interval: the exact test's only
    assert progress_verdict(v6, 0.4).word == "differs"  # every value below: p below = 1/64
    assert progress_verdict(v6, 0.25).word == "inconclusive"  # 0.25 itself lies in [0.2, 0.3]
    assert "threshold 0.25" in progress_verdict(v6, 0.25).sentence
    with pytest.raises(ValueError, match="threshold"):
        progress_verdict([0.1, 0.2], math.nan)


def test_equivalence_against_a_margin():
    # unpaired, 6 and 6: two permutation tests (no Welch); both lines leave the floor 0
    a, b = [1.0, 1.1, 0.9, 1.0, 1.1, 0.9], [2.0, 2.1, 1.9, 2.0, 2.1, 1.9]
    v = equivalence_verdict(a, list(a), 0.5, floor=0.0)
    assert v.word == "agrees" and v.test == "permutation_tost"
    # the same lines 3 seeds each: too few seeds at this profile, whatever the numbers
    three = equivalence_verdict(a[:3], a[:3], 0.5, floor=0.0)
    assert three.word == "not testable" and three.reason == "too few seeds at this profile"
    assert equivalence_verdict(a, b, 0.5, floor=0.0).word == "differs"  # every split of a below b by 1
    with pytest.raises(ValueError, match="margin"):
        equivalence_verdict(a, b, 0.0)


def test_the_vocabulary_has_inconclusive_with_its_own_colour():
    assert VERDICTS == ("agrees", "partly", "mixed", "differs", "inconclusive", "not testable")
    assert set(VERDICT_COLOURS) == set(VERDICTS) and len(set(VERDICT_COLOURS.values())) == len(VERDICTS)


def test_share_of_seeds_on_the_exact_interval():
    from pcnn_explore.verdicts import share_verdict

    # 5 seeds are too few for a decided claim (and 5 of 5 cannot show a share above 0.5 at 95% anyway:
    # lower bound 0.025 ** (1 / 5) = 0.478)
    v = share_verdict(5, 5, 0.5)
    assert v.word == "not testable" and v.interval[0] == pytest.approx(0.025 ** 0.2, abs=1e-12)
    assert v.reason == "too few seeds at this profile"
    assert share_verdict(5, 5, 2.0 ** -10).word == "not testable"  # 5 seeds, however far above
    assert share_verdict(1, 6, 0.5).word == "inconclusive"  # 6 of 6 could agree (lower bound 0.541)
    assert share_verdict(5, 5, 0.5).p_value == 0.5 ** 5  # exact binomial P(X >= 5) at 0.5
    assert share_verdict(6, 6, 2.0 ** -10).word == "agrees" and share_verdict(6, 6, 2.0 ** -10).estimate == 1.0
    assert share_verdict(0, 6, 0.5).word == "differs"  # upper bound 1 - 0.025 ** (1 / 6) = 0.459
    # 6 of 6: lower bound 0.025 ** (1 / 6) = 0.541; above 0.541 only a smaller k could decide (differ)
    assert share_verdict(6, 6, 0.54).word == "agrees" and share_verdict(6, 6, 0.55).word == "inconclusive"
    assert share_verdict(2, 5, 0.1).values == (1.0, 1.0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="binomial_interval"):
        share_verdict(6, 5, 0.1)


def test_word_of_reads_the_first_word_of_every_notebook_sentence():
    from pcnn_explore.experiments.density import episode_spikes
    from pcnn_explore.study import notebook_words
    from pcnn_explore.verdicts import word_of

    assert word_of("agrees over 3 seeds: slope - 1 < 0") == "agrees" and word_of("  Partly: one of two") == "partly"
    assert word_of("inconclusive (2 of 3 seeds)") == "inconclusive"
    assert word_of("not testable at this profile") == "not testable"  # the older word reads as the new one
    assert word_of("not testable: the lines do not move") == "not testable" and word_of("mixed: 1 of 2") == "mixed"
    assert word_of("agreesome") is None and word_of("similar losses") is None and word_of("") is None
    # 02's word comes from its claims record's one producer, its word from VERDICTS
    def spikes(n):
        return episode_spikes.decisions({"seeds": list(range(0, 2 * n, 2)),
                                         "spikes_near_start_fraction_per_seed": [0.5, 0.6, 0.7, 0.5, 0.6, 0.7][:n],
                                         "chance_fraction_per_seed": [0.1, 0.1, 0.12, 0.1, 0.1, 0.12][:n]})
    assert word_of(notebook_words(spikes(6))[0]) == "agrees"
    assert word_of(notebook_words(spikes(2))[0]) == "not testable"


# ------------------------------------------------------------------------ exact tests, by hand
def test_sign_flip_p_enumerates_every_sign_pattern():
    from pcnn_explore.verdicts import sign_flip_p

    # [1, 1, 1]: only the all-plus pattern reaches 3 of the 8 sums; every sum is <= 3
    assert sign_flip_p([1, 1, 1], "greater") == P(1, 8) and sign_flip_p([1, 1, 1], "less") == 1
    # [2, -1]: sums 1, 3, -3, -1 against the observed 1: >= 1 twice, <= 1 three times
    assert sign_flip_p([2.0, -1.0], "greater") == P(1, 2) and sign_flip_p([2.0, -1.0], "less") == P(3, 4)
    # [1, 2, 3]: sums 6, 0, 2, -4, 4, -2, 0, -6; shift 1 -> [0, 1, 2]: sums 3, -1, 1, -3 (the 0 adds nothing)
    assert sign_flip_p([1, 2, 3], "greater") == P(1, 8)
    assert sign_flip_p([1, 2, 3], "greater", shift=1) == P(1, 4)
    # shift 2 -> [-1, 0, 1]: observed 0; sums 0, -2, 2, 0: ties counted in, 3 of 4 are >= 0
    assert sign_flip_p([1, 2, 3], "greater", shift=2) == P(3, 4)
    assert sign_flip_p([1.0] * 20, "greater") == P(1, 2 ** 20)
    # 21 seeds: the seeded Monte Carlo of 200,000 patterns, p = (1 + hits) / (1 + draws), never a crash
    assert sign_flip_p([1.0] * 21, "greater") == sign_flip_p([1.0] * 21, "greater") <= 2 / 200_001
    with pytest.raises(ValueError, match="direction"):
        sign_flip_p([1.0, 2.0], "bigger")
    with pytest.raises(ValueError, match="finite"):
        sign_flip_p([1.0, math.inf], "greater")


def test_float_noise_is_no_effect_in_the_sign_flip():
    from pcnn_explore.verdicts import sign_flip_p

    # 0.1 + 0.2 - 0.3 = 5.55e-17: noise at the scale of 0.3, counted as 0 on both sides (the verdicts
    # snap differences at the values' scale; bare, 5.55e-17 is an effect at its own scale)
    noise = 0.1 + 0.2 - 0.3
    assert noise != 0 and sign_flip_p([noise] * 10, "greater", shift=0.0) == P(1, 1024)
    assert difference_verdict([0.1 + 0.2] * 10, [0.3] * 10, seeds_a=range(10), seeds_b=range(10)).p_value == 1
    # the same noise left by a shift: 0.30000000000000004 - 0.3 is within 1e-9 of 0.3
    assert sign_flip_p([0.1 + 0.2] * 10, "greater", shift=0.3) == 1
    # a real difference of 1e-6 at the scale 1 is not noise
    assert sign_flip_p([1e-6] * 10, "greater") == P(1, 1024)


def test_sign_flip_interval_inverts_the_test():
    from pcnn_explore.verdicts import sign_flip_interval, sign_flip_p

    # 5 seeds: the smallest p is 2^-5 = 0.031 > 0.025, no shift is ever rejected
    assert sign_flip_interval([1, 2, 3, 4, 5]) == (-math.inf, math.inf)
    assert sign_flip_interval([1.0] * 5) == (-math.inf, math.inf)
    # 6 seeds, K = floor(0.025 * 64) = 1: the smallest and largest subset means, min d and max d
    assert sign_flip_interval([3, 1, 6, 2, 5, 4]) == pytest.approx((1, 6), abs=4e-8)  # within 6 x 1e-9 x 6
    # 7 seeds, K = floor(0.025 * 128) = 3: subset means of 1..7 from below 1, 1.5, 2 ({2}, {1, 3}, {1, 2, 3})
    low, high = sign_flip_interval([1, 2, 3, 4, 5, 6, 7])
    assert (low, high) == pytest.approx((2, 6), abs=1e-7)  # widened by the noise tolerance 7 x 1e-9 x 7
    # p and interval agree: 2 is not rejected (1 + 5 subset means <= 2: 6/128), just below it is (3/128)
    assert sign_flip_p([1, 2, 3, 4, 5, 6, 7], "greater", shift=2) == P(6, 128)
    assert sign_flip_p([1, 2, 3, 4, 5, 6, 7], "greater", shift=2 - 1e-6) == P(3, 128)
    # all-equal differences v = 1 at 6 seeds: every other shift leaves all 6 signs alike (p = 1/64), so
    # the interval is the point 1, widened only by the float-noise tolerance n x 1e-9 each side
    low, high = sign_flip_interval([1.0] * 6)
    assert low == pytest.approx(1 - 6e-9, abs=1e-15) and high == pytest.approx(1 + 6e-9, abs=1e-15)
    assert sign_flip_interval([0.0] * 10) == (0.0, 0.0)  # no absolute noise floor: at 0 the point 0
    with pytest.raises(ValueError, match="level"):
        sign_flip_interval([1.0] * 6, level=95)


def test_permutation_p_enumerates_every_split():
    from pcnn_explore.verdicts import permutation_p

    # [3, 4] against [1, 2]: 6 splits, sums of the first group 7, 6, 5, 5, 4, 3: only {3, 4} reaches 7
    assert permutation_p([3, 4], [1, 2], "greater") == P(1, 6) and permutation_p([3, 4], [1, 2], "less") == 1
    assert permutation_p([1, 2], [3, 4], "less") == P(1, 6)
    # ten 1s against ten 0s: 1 of C(20, 10) splits
    assert permutation_p([1.0] * 10, [0.0] * 10, "greater") == P(1, math.comb(20, 10))
    # float noise ties: every split of 0.30000000000000004 and 0.3 has the same sum
    assert permutation_p([0.1 + 0.2] * 3, [0.3] * 3, "greater") == 1 == permutation_p([0.1 + 0.2] * 3, [0.3] * 3, "less")
    # shift 2: [1, 2] against [1, 2], every split's sum is >= 3 or ties: 1 - 1/6 (only {1, 1}... by hand below)
    # pooled [1, 2, 1, 2]: pairs sum 3, 2, 3, 3, 4, 3 against the observed 3: >= 3 five of six
    assert permutation_p([3, 4], [1, 2], "greater", shift=2) == P(5, 6)
    # C(22, 11) = 705,432 splits: the seeded Monte Carlo, (1 + hits) / (1 + 200,000), no crash
    assert permutation_p([1.0] * 11, [0.0] * 11, "greater") <= 2 / 200_001


def test_fisher_exact_by_hand():
    from pcnn_explore.verdicts import fisher_exact_p

    assert fisher_exact_p(10, 10, 0, 10, "greater") == P(1, math.comb(20, 10))  # 5.41e-6
    assert fisher_exact_p(0, 10, 10, 10, "less") == P(1, math.comb(20, 10))
    # 1 of 2 against 1 of 2: 2 successes among 4, P(X >= 1) = 1 - C(2, 0) C(2, 2) / C(4, 2) = 5/6
    assert fisher_exact_p(1, 2, 1, 2, "greater") == P(5, 6)
    # the preregistered numbers: 6 of 10 against 0 of 10: C(10, 6) / C(20, 6) = 210 / 38760
    assert fisher_exact_p(6, 10, 0, 10, "greater") == P(210, 38760)
    # 7 of 10 against 1 of 10: (C(8, 7) C(12, 3) + C(8, 8) C(12, 2)) / C(20, 10) = 1826 / 184756
    assert fisher_exact_p(7, 10, 1, 10, "greater") == P(1826, 184756)
    # 6 of 10 against 1 of 10: (C(7, 6) C(13, 4) + C(13, 3)) / C(20, 10) = 5291 / 184756 = 0.029
    assert fisher_exact_p(6, 10, 1, 10, "greater") == P(5291, 184756)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        fisher_exact_p(3, 2, 0, 2, "greater")
    with pytest.raises(ValueError, match="non-negative integer"):
        fisher_exact_p(1.0, 2, 0, 2, "greater")


def test_min_p_and_seeds_needed_by_hand():
    from pcnn_explore.verdicts import fisher_exact_p, min_p, seeds_needed

    assert min_p("sign_flip", 6) == P(1, 64) and min_p("sign_flip", 5) == P(1, 32)
    assert min_p("fisher", 10, 10) == P(1, 184756) and min_p("fisher", 2) == P(1, 6)
    assert min_p("fisher", 3, 5) == P(1, 56) and min_p("permutation", 4, 4) == P(1, 70)
    # the most extreme table is the smallest p over every table of 3 and 5 seeds
    every = [fisher_exact_p(ka, 3, kb, 5, d) for ka in range(4) for kb in range(6) for d in ("greater", "less")]
    assert min(every) == P(1, 56)
    # 0.95: sign flip 2^-5 = 0.031 > 0.025 >= 2^-6; Fisher's arithmetic alone would allow 4 (1 / C(8, 4) =
    # 0.014) but a decided claim rests on at least 6 seeds per line
    assert seeds_needed("sign_flip", 0.95) == 6 and seeds_needed("fisher", 0.95) == 6
    # 0.99 (0.005 each way): 2^-7 = 0.0078 > 0.005 >= 2^-8; Fisher 1 / C(12, 6) = 0.001: 6
    assert seeds_needed("sign_flip", 0.99) == 8 and seeds_needed("fisher", 0.99) == 6
    with pytest.raises(ValueError, match="test must be one of"):
        min_p("t", 5)
    with pytest.raises(ValueError, match="pairs seeds"):
        min_p("sign_flip", 5, 6)


# ------------------------------------------------------------------------------ verdicts, exact
def test_paired_verdict_pairs_by_seed_id():
    from pcnn_explore.verdicts import paired_verdict

    a = {401: 0.3, 402: 0.5, 403: 0.1, 404: 0.9, 405: 0.6, 406: 0.8}
    b = {406: 0.1, 405: 0.0, 404: 0.0, 403: 0.0, 402: 0.0, 401: 0.0}  # the same seeds in another order
    v = paired_verdict(a, b, "greater")
    # differences .3 .5 .1 .9 .6 .7, all above 0: p = 1/64; interval [min, max] at 6 seeds
    assert v.word == "agrees" and v.p_value == P(1, 64) and v.test == "sign_flip" and v.n == 6
    assert v.interval == pytest.approx((0.1, 0.9), abs=1e-8) and v.estimate == pytest.approx(3.1 / 6)
    assert v.values == (0.3, 0.5, 0.1, 0.9, 0.6, 0.8) and v.values_b == (0.0, 0.0, 0.0, 0.0, 0.0, 0.1)
    assert paired_verdict(a, dict(sorted(b.items())), "greater") == v
    assert paired_verdict(a, b, "less").word == "differs"
    # differences 1, 2, 3, 4, 5, -1: sums >= 14 for the flips of {}, {-1}, {1, -1} (a tie): p = 3/64 > 0.025
    w = paired_verdict(dict(enumerate([1, 2, 3, 4, 5, -1])), dict(enumerate([0] * 6)))
    assert w.word == "inconclusive" and w.p_value == P(3, 64)
    assert paired_verdict({0: 1.0, 1: 1.0}, {0: 0.0, 1: 0.0}).word == "not testable"
    with pytest.raises(ValueError, match=r"seeds \[1\] missing in values_b, \[3\] missing in values_a"):
        paired_verdict({1: 1.0, 2: 1.0}, {2: 0.0, 3: 0.0})
    with pytest.raises(ValueError, match="at least 2"):
        paired_verdict({0: 1.0}, {0: 0.0})  # n = 1 refused
    with pytest.raises(ValueError, match="seed id -> per-seed value"):
        paired_verdict([1.0, 2.0], [0.0, 0.0])


def test_solved_verdict_by_fisher_with_each_lines_interval():
    from pcnn_explore.verdicts import solved_verdict

    v = solved_verdict({s: True for s in range(10)}, {s: False for s in range(10)}, claim="solved CTS - DQN")
    assert v.word == "agrees" and v.p_value == P(1, 184756) and v.test == "fisher" and v.n == 20
    assert v.estimate == 1.0 and all(math.isnan(x) for x in v.interval)
    top = 0.025 ** (1 / 10)  # Clopper-Pearson of 10 of 10: [0.025^(1/10), 1]; of 0 of 10: [0, 1 - that]
    assert v.intervals == (pytest.approx((top, 1.0), abs=1e-12), pytest.approx((0.0, 1 - top), abs=1e-12))
    assert v.sentence == ("agrees: solved CTS - DQN: 10/10 [0.692, 1] vs 0/10 [0, 0.308] (95% Clopper-Pearson), "
                          "Fisher exact one-sided p = 5.41e-06 (the opposite's 1, min p 5.41e-06); the claim is "
                          "share a > share b")
    assert solved_verdict({s: False for s in range(10)}, {s: True for s in range(10)}).word == "differs"
    # 2 of 2 against 0 of 2: the smallest p is 1 / C(4, 2) = 1/6 > 0.025
    two = solved_verdict({0: True, 1: True}, {0: False, 1: False})
    assert two.word == "not testable" and two.p_value == P(1, 6)
    # 5 of 5 against 0 of 5: p = 1 / C(10, 5) = 0.004 would pass, but 5 seeds are too few
    five = solved_verdict({s: True for s in range(5)}, {s: False for s in range(5)})
    assert five.word == "not testable" and five.p_value == P(1, 252) and five.reason == "too few seeds at this profile"
    six_one = solved_verdict({s: s < 6 for s in range(10)}, {s: s < 1 for s in range(10)})
    assert six_one.word == "inconclusive" and six_one.p_value == P(5291, 184756)
    with pytest.raises(ValueError, match="True / False"):
        solved_verdict({0: 0.7}, {0: True})


def test_difference_verdict_without_spread_is_decided_exactly():
    # [1, 1] against [0, 0] on seeds [0, 1]: no t interval of width 0; min p 1/4 > 0.025
    v = difference_verdict([1, 1], [0, 0], seeds_a=[0, 1], seeds_b=[0, 1])
    assert v.word == "not testable" and v.p_value == P(1, 4) and v.test == "sign_flip"
    assert v.interval == (-math.inf, math.inf)
    # ten 1s against ten 0s: paired p = 2^-10; unpaired the permutation test's 1 / C(20, 10)
    paired = difference_verdict([1] * 10, [0] * 10, seeds_a=range(10), seeds_b=range(10))
    assert paired.word == "agrees" and paired.p_value == P(1, 1024)
    unpaired = difference_verdict([1] * 10, [0] * 10)
    assert unpaired.word == "agrees" and unpaired.p_value == P(1, 184756) and unpaired.test == "permutation"
    assert unpaired.interval == pytest.approx((1, 1), abs=1e-8)
    # [1, 1] against [0, 0] unpaired: min p 1 / C(4, 2) = 1/6
    assert difference_verdict([1, 1], [0, 0]).word == "not testable"


def test_float_noise_equal_values_never_agree():
    a, b = [0.1 + 0.2] * 10, [0.3] * 10  # 0.30000000000000004 against 0.3
    v = difference_verdict(a, b, seeds_a=range(10), seeds_b=range(10))
    assert v.word == "inconclusive" and v.p_value == 1 and v.estimate == 0.0
    u = difference_verdict(a, b)
    assert u.word == "inconclusive" and u.p_value == 1 and u.estimate == 0.0
    assert progress_verdict(a, 0.3).word == "inconclusive" and progress_verdict(a, 0.3).p_value == 1
    # two lines that do not move agree with nothing: not testable (the lines do not move)
    flat = equivalence_verdict(a, b, 0.1, seeds_a=range(10), seeds_b=range(10))
    assert flat.word == "not testable" and flat.reason == "the lines do not move"
    # values spread by float noise only: no t interval of width 1e-17
    noisy = [0.1, 0.1 + 1e-17, 0.1 - 1e-17, 0.1]
    assert difference_verdict(noisy, [0.0] * 4, seeds_a=range(4), seeds_b=range(4)).word == "not testable"


def test_pairing_follows_the_seed_ids_not_the_order():
    a, b = [1.0, 1.1, 0.9, 1.2, 1.0, 1.3], [0.0, 0.1, 0.0, 0.2, 0.1, 0.2]
    in_order = difference_verdict(a, b, seeds_a=range(6), seeds_b=range(6))
    shuffled = difference_verdict(a, b[::-1], seeds_a=range(6), seeds_b=range(5, -1, -1))
    assert shuffled.method.startswith("paired") and shuffled == in_order
    six_a, six_b = [1, 2, 3, 4, 5, 6], [0, 0, 0, 0, 0, 0]
    e1 = equivalence_verdict(six_a, six_b, 0.5, seeds_a=range(6), seeds_b=range(6))
    e2 = equivalence_verdict(six_a[::-1], six_b, 0.5, seeds_a=range(5, -1, -1), seeds_b=range(6))
    assert e1.word == e2.word == "differs" and e1.interval == e2.interval and e1.p_value == e2.p_value
    with pytest.raises(ValueError, match="appear twice"):
        difference_verdict([1, 2], [3, 4], seeds_a=[0, 0], seeds_b=[0, 1])
    with pytest.raises(ValueError, match="at least 2"):
        difference_verdict([1], [0], seeds_a=[0], seeds_b=[0])  # n = 1 refused
    with pytest.raises(ValueError, match="at least 2"):
        progress_verdict([1.0], 0.0)


def test_equivalence_by_two_sign_flips():
    zeros, halves = [0.0] * 10, [0.5] * 10
    # every difference 0, margin 0.1: both one-sided tests at 2^-10; both lines at 0.5 leave the floor 0
    v = equivalence_verdict(halves, halves, 0.1, seeds_a=range(10), seeds_b=range(10), floor=0.0)
    assert v.word == "agrees" and v.p_value == P(1, 1024) and v.test == "sign_flip_tost"
    # the same at the floor: two lines that do not move are not evidence of no effect
    nm = equivalence_verdict(zeros, zeros, 0.1, seeds_a=range(10), seeds_b=range(10), floor=0.0)
    assert nm.word == "not testable" and nm.reason == "the lines do not move" and nm.p_value == P(1, 1024)
    # ... unless a positive control of the same runs leaves the floor (then the zeros agree)
    assert equivalence_verdict(zeros, zeros, 0.1, seeds_a=range(10), seeds_b=range(10), floor=0.0,
                               control=halves).word == "agrees"
    assert equivalence_verdict(zeros, zeros, 0.1, seeds_a=range(10), seeds_b=range(10), floor=0.0,
                               control=[0.0] * 9 + [1.0]).word == "not testable"  # one seed moved: p = 1/2
    assert equivalence_verdict([1.0] * 10, zeros, 0.1, seeds_a=range(10), seeds_b=range(10)).word == "differs"
    assert equivalence_verdict(halves[:5], halves[:5], 0.1, seeds_a=range(5), seeds_b=range(5)).word == "not testable"
    d = [0.01, -0.02, 0.03, 0.0, 0.02, -0.01]
    # margin 0.1: d - 0.1 all below 0 and d + 0.1 all above: TOST p = 1/64
    w = equivalence_verdict(d, [0.0] * 6, 0.1, seeds_a=range(6), seeds_b=range(6))
    assert w.word == "agrees" and w.p_value == P(1, 64) and w.interval == pytest.approx((-0.02, 0.03), abs=1e-8)
    # margin 0.025: d - 0.025 = -.015 -.045 .005 -.025 -.005 -.035; a sum is <= the observed one when the
    # flipped values sum to >= 0: {}, {.005}, {.005, -.005} (a tie, counted in): 3/64 = 0.047 > 0.025
    x = equivalence_verdict(d, [0.0] * 6, 0.025, seeds_a=range(6), seeds_b=range(6))
    assert x.word == "inconclusive" and x.p_value == P(3, 64)
    # no t test: exact=False is gone
    with pytest.raises(TypeError):
        equivalence_verdict(d, [0.0] * 6, 0.1, seeds_a=range(6), seeds_b=range(6), exact=False)


def test_combine_verdicts_reaches_every_word():
    from pcnn_explore.verdicts import combine_verdicts

    nt = "not testable"
    assert combine_verdicts(["agrees", "agrees"]) == "agrees"
    assert combine_verdicts(["agrees", "differs"]) == "mixed" and combine_verdicts(["partly"]) == "partly"
    assert combine_verdicts(["agrees", nt]) == "agrees"  # every testable claim agrees
    assert combine_verdicts(["agrees", "inconclusive", nt]) == "partly"
    assert combine_verdicts(["differs", nt]) == "differs" and combine_verdicts(["differs"]) == "differs"
    assert combine_verdicts(["differs", "inconclusive"]) == "differs"  # every decided claim differs
    assert combine_verdicts(["inconclusive", nt]) == "inconclusive"
    assert combine_verdicts([nt, "not testable at this profile"]) == nt  # the older word reads as the new
    with pytest.raises(ValueError, match="one or more"):
        combine_verdicts([])
    with pytest.raises(ValueError, match=r"\['mostly'\] not among them"):
        combine_verdicts(["agrees", "mostly"])
