"""Statistics at the edges: values whose sums overflow float64 are refused (never a p below the test's
smallest, never a verdict in the wrong direction, never a NaN or infinite interval from finite values),
every test works at any seed count (515 and 2000 seeds a line), and a positive control with too few
seeds says so."""
from __future__ import annotations

import math
import sys
from fractions import Fraction

import numpy as np
import pytest

from pcnn_explore.verdicts import (
    LINES_DO_NOT_MOVE,
    TOO_FEW_SEEDS,
    difference_verdict,
    equivalence_verdict,
    fisher_exact_p,
    min_p,
    paired_verdict,
    permutation_p,
    progress_verdict,
    reason_of,
    share_verdict,
    sign_flip_interval,
    sign_flip_p,
    solved_verdict,
)

MAX_TOTAL = sys.float_info.max / 2.0  # the largest sum of per-seed magnitudes a test takes
BIG = [1e308] * 8
SEEDS = list(range(8))
C_16_8 = math.comb(16, 8)  # 12870 splits of 16 pooled values into 8 and 8


# ------------------------------------------------------------------ sums beyond float64's range
@pytest.mark.parametrize("direction", ["greater", "less"])
def test_values_whose_sums_overflow_are_refused(direction):
    # the permutation path: the pooled magnitudes sum to 1.6e309, beyond float64
    with pytest.raises(ValueError, match=r"^values_a and values_b: the magnitudes of the 16 per-seed values "
                                         r"\(largest 1e\+308\) sum beyond 8\.99e\+307, .*divid.* power of two"):
        difference_verdict(BIG, [-1e308] * 8, direction)
    # the paired path: each difference 2e308 overflows
    with pytest.raises(ValueError, match=r"^values_a - values_b: overflows float64 on 8 of 8 seeds; rescale"):
        difference_verdict(BIG, [-1e308] * 8, direction, seeds_a=SEEDS, seeds_b=SEEDS)
    with pytest.raises(ValueError, match=r"^values_a - values_b: overflows float64 on 8 of 8 seeds"):
        paired_verdict(dict(enumerate(BIG)), {s: -1e308 for s in SEEDS}, direction)
    # differences that fit one by one, but not summed: 8 x 1e308
    with pytest.raises(ValueError, match=r"^values_a - values_b: the magnitudes of the 8 per-seed values"):
        paired_verdict({s: 1e308 for s in SEEDS}, {s: 0.0 for s in SEEDS}, direction)
    with pytest.raises(ValueError, match=r"^values_a and values_b: the magnitudes"):
        permutation_p(BIG, [-1e308] * 8, direction)
    with pytest.raises(ValueError, match=r"^differences: the magnitudes of the 8 per-seed values"):
        sign_flip_p(BIG, direction)


def test_every_verdict_refuses_sums_beyond_float64():
    with pytest.raises(ValueError, match=r"^differences: the magnitudes"):
        sign_flip_interval(BIG)
    with pytest.raises(ValueError, match=r"^values: the magnitudes of the 8 per-seed values"):
        progress_verdict(BIG, 0.0)
    with pytest.raises(ValueError, match=r"^values_a and values_b: the magnitudes"):
        equivalence_verdict(BIG, [-1e308] * 8, 1.0)
    with pytest.raises(ValueError, match=r"^values_a - values_b: overflows float64"):
        equivalence_verdict(BIG, [-1e308] * 8, 1.0, seeds_a=SEEDS, seeds_b=SEEDS)


def test_sums_up_to_half_the_largest_float_keep_exact_p_values():
    # 16 values of MAX_TOTAL / 16 (a power-of-two division, exact) sum to MAX_TOTAL exactly: accepted
    edge = MAX_TOTAL / 16.0
    a, b = [edge] * 8, [-edge] * 8
    v = difference_verdict(a, b)
    assert v.word == "agrees" and v.p_value == 1 / C_16_8  # the smallest p the test can give, 1/12870
    assert v.estimate == 2.0 * edge
    low, high = v.interval
    assert math.isfinite(low) and math.isfinite(high) and low <= 2.0 * edge <= high
    w = difference_verdict(a, b, "less")
    assert w.word == "differs" and w.p_value == 1.0 and w.interval == v.interval
    # paired: 8 differences of MAX_TOTAL / 8 sum to MAX_TOTAL: the sign flip's smallest p, 2^-8
    d = difference_verdict([MAX_TOTAL / 16.0] * 8, [-MAX_TOTAL / 16.0] * 8, seeds_a=SEEDS, seeds_b=SEEDS)
    assert d.word == "agrees" and d.p_value == 2.0 ** -8 and all(map(math.isfinite, d.interval))
    assert difference_verdict([edge] * 8, [-edge] * 8, "less", seeds_a=SEEDS, seeds_b=SEEDS).word == "differs"
    # one step past MAX_TOTAL is refused
    with pytest.raises(ValueError, match=r"sum beyond 8\.99e\+307"):
        difference_verdict(a, b[:-1] + [-float(np.nextafter(edge, math.inf))])


def test_rescaling_by_a_power_of_two_gives_the_refused_test_its_p():
    # the fix the refusal names: 1e308 and -1e308 divided by 2^5 sum to 5e307 in magnitude
    a, b = [1e308 / 32] * 8, [-1e308 / 32] * 8
    v = difference_verdict(a, b)
    assert v.word == "agrees" and v.p_value == 1 / C_16_8 and all(map(math.isfinite, v.interval))
    assert difference_verdict(a, b, "less").word == "differs"
    assert difference_verdict(a, b, seeds_a=SEEDS, seeds_b=SEEDS).p_value == 1 / 256
    # and the scale leaves p and the verdict as they are on ordinary values
    x, y = [0.3, 1.2, -0.4, 2.0, 0.9, 1.1, 0.5, 0.8], [0.1, -0.2, 0.0, 0.4, -0.6, 0.3, 0.2, -0.1]
    for kw in ({}, {"seeds_a": SEEDS, "seeds_b": SEEDS}):
        plain, scaled = difference_verdict(x, y, **kw), difference_verdict([t * 2.0 ** 1000 for t in x],
                                                                           [t * 2.0 ** 1000 for t in y], **kw)
        assert (scaled.word, scaled.p_value) == (plain.word, plain.p_value)
        assert scaled.interval == tuple(t * 2.0 ** 1000 for t in plain.interval)


# --------------------------------------------------------------------------- any seed count
@pytest.mark.parametrize("n", [515, 2000])
def test_min_p_at_any_seed_count(n):
    exact = Fraction(1, math.comb(2 * n, n))
    assert min_p("fisher", n) == min_p("permutation", n) == float(exact)
    assert min_p("sign_flip", n) == 2.0 ** -n
    if n == 515:  # 1 / C(1030, 515) = 3.50e-309, below the smallest normal float but not 0
        assert min_p("fisher", n) == pytest.approx(math.exp(-(math.lgamma(1031) - 2 * math.lgamma(516))), rel=1e-9)
        assert 3.49e-309 < min_p("fisher", n) < 3.50e-309
    else:  # 1 / C(4000, 2000) and 2^-2000 are below 2^-1075: they underflow to 0
        assert min_p("fisher", n) == 0.0 and min_p("sign_flip", n) == 0.0
    assert min_p("fisher", 514) == 1.0 / math.comb(1028, 514)  # below the edge: as before, bit for bit


@pytest.mark.parametrize("n", [515, 2000])
def test_solved_verdict_at_any_seed_count(n):
    v = solved_verdict({s: True for s in range(n)}, {s: False for s in range(n)})
    smallest = float(Fraction(1, math.comb(2 * n, n)))
    assert v.word == "agrees" and v.p_value == smallest and v.n == 2 * n
    assert f"min p {smallest:.3g}" in v.sentence and f"{n}/{n} " in v.sentence
    (low_a, high_a), (low_b, high_b) = v.intervals  # Clopper-Pearson of n/n and 0/n: 0.025^(1/n) and its mirror
    assert high_a == 1.0 and low_b == 0.0
    assert low_a == pytest.approx(0.025 ** (1 / n), rel=1e-9) and high_b == pytest.approx(1 - 0.025 ** (1 / n), rel=1e-9)
    assert solved_verdict({s: True for s in range(n)}, {s: False for s in range(n)}, "less").word == "differs"


@pytest.mark.parametrize("n", [515, 2000])
def test_fisher_and_the_binomial_tail_match_scipy_at_any_seed_count(n):
    stats = pytest.importorskip("scipy.stats")
    k_a, k_b = n // 2, n // 3
    v = solved_verdict({s: s < k_a for s in range(n)}, {s: s < k_b for s in range(n)})
    want = stats.fisher_exact([[k_a, n - k_a], [k_b, n - k_b]], alternative="greater")[1]
    assert v.p_value == fisher_exact_p(k_a, n, k_b, n, "greater") == pytest.approx(want, rel=1e-9)
    s = share_verdict(k_a, n, 0.4)
    assert s.word == "agrees" and s.p_value == pytest.approx(stats.binom.sf(k_a - 1, n, 0.4), rel=1e-9)


def test_the_binomial_tail_beyond_float_combinations_by_hand():
    # C(2000, 1000) is beyond float64, so each term is taken in log space: logs of size up to ~1.4e4
    # (lgamma(2001)) rounded to 2.2e-16 relative give each term ~1e-11 relative error; rel=1e-9 bounds it.
    # P(X >= 2000) = 0.999^2000, P(X >= 1999) adds 2000 x 0.001 x 0.999^1999, P(X >= 0) = 1
    assert share_verdict(2000, 2000, 0.999).p_value == pytest.approx(0.999 ** 2000, rel=1e-9)
    assert share_verdict(1999, 2000, 0.999).p_value == pytest.approx(0.999 ** 2000 + 2.0 * 0.999 ** 1999, rel=1e-9)
    assert share_verdict(0, 2000, 0.4).p_value == pytest.approx(1.0, rel=1e-9)
    assert share_verdict(2000, 2000, 0.0).p_value == 0.0
    assert share_verdict(2000, 2000, 1.0).p_value == 1.0


@pytest.mark.slow
def test_the_permutation_verdict_at_515_seeds_a_line():
    # 515 ones against 515 zeros: no drawn split reaches the observed one, p = 1 / (draws + 1)
    v = difference_verdict([1.0] * 515, [0.0] * 515)
    assert v.word == "agrees" and v.p_value == 1 / 200_001 and v.draws == 200_000
    assert "min p 3.5e-309" in v.sentence
    tie = 1030 * 1e-9  # the float-noise tolerance: (n_a + n_b) x 1e-9 x the largest |value|
    low, high = v.interval
    assert 1.0 - tie <= low <= 1.0 <= high <= 1.0 + tie


# ------------------------------------------------------------------ a control with too few seeds
def test_a_positive_control_with_too_few_seeds_says_so():
    for kw in ({"seeds_a": range(10), "seeds_b": range(10)}, {}):
        v = equivalence_verdict([0.0] * 10, [0.0] * 10, 0.1, control=[1.0] * 3, floor=0.0, **kw)
        assert v.word == "not testable" and v.reason == TOO_FEW_SEEDS
        assert v.sentence.startswith("not testable: too few seeds at this profile (the positive control needs 6 "
                                     "seeds to show it leaves the floor, has 3): a - b = 0")
        assert reason_of(v.sentence) == TOO_FEW_SEEDS
    # 6 seeds of the same control decide: p = 2^-10 paired (TOST of ten 0 differences)
    v = equivalence_verdict([0.0] * 10, [0.0] * 10, 0.1, control=[1.0] * 6, floor=0.0, seeds_a=range(10),
                            seeds_b=range(10))
    assert v.word == "agrees" and v.p_value == 2.0 ** -10
    # a control with seeds enough that stays at the floor: the lines do not move
    v = equivalence_verdict([0.0] * 10, [0.0] * 10, 0.1, control=[0.0] * 6, floor=0.0)
    assert v.reason == LINES_DO_NOT_MOVE


def test_lines_too_short_for_their_own_floor_test_say_too_few_seeds():
    # at 0.99 six seeds a line decide the permutation TOST (1 / C(12, 6) = 0.0011 <= 0.005) but the sign
    # flip that shows a line leaving the floor needs 8 (2^-7 = 0.0078 > 0.005)
    v = equivalence_verdict([0.0] * 6, [0.0] * 6, 0.1, level=0.99)
    assert v.word == "not testable" and v.reason == TOO_FEW_SEEDS
    assert v.sentence.startswith("not testable: too few seeds at this profile (a line needs 8 seeds to show it "
                                 "leaves the floor, has 6)")
    assert equivalence_verdict([0.0] * 8, [0.0] * 8, 0.1, level=0.99).reason == LINES_DO_NOT_MOVE
