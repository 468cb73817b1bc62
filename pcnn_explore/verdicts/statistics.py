"""Pure statistics for verdicts over seeds: distributions, intervals and exact tests (no scipy).

- distributions: :func:`incomplete_beta` (the regularised incomplete beta function, by a continued
  fraction), :func:`t_cdf`, :func:`t_quantile`, :func:`beta_quantile` (inverted by bisection);
- intervals of one line's per-seed values: :func:`t_interval` (Student's t), :func:`binomial_interval`
  (exact Clopper-Pearson for k of n), :func:`shown_interval` (NaN where a table has one value);
- exact tests: :func:`sign_flip_p` (paired, all 2^n sign patterns up to :data:`MAX_SIGN_FLIP_N`
  seeds, beyond that a seeded Monte Carlo of :data:`MC_DRAWS` patterns), :func:`sign_flip_interval`
  (its inversion), :func:`permutation_p` (two samples, every split up to :data:`MAX_SPLITS` splits,
  beyond that :data:`MC_DRAWS` seeded random splits), :func:`fisher_exact_p` (two shares,
  hypergeometric tail), :func:`min_p` and :func:`seeds_needed` (the least p a test can give, and the
  seeds per line a decided claim needs), :func:`monte_carlo_draws` and :func:`monte_carlo_error`
  (whether a test enumerates or draws, and the standard error of a drawn p).

Float noise is relative to the claim's own scale: a per-seed difference (or a sum of them) within
1e-9 of the largest of the values, the shift, the threshold or the margin counts as 0; there is no
absolute floor, so 2^-45 against 0 is an effect like 2^-10.

Every sum a test forms must be a float64: values whose magnitudes sum beyond :data:`MAX_TOTAL` (half
the largest float64) are refused with a ValueError (rescale them, e.g. by a power of two, which leaves
every p unchanged), so no p falls below :func:`min_p` and no interval of finite values has a NaN or
infinite end for lack of range. :func:`min_p` works at any seed count (it underflows to 0 far out).

The t distribution and :func:`t_interval` stay for display only: no verdict is decided by them.

The distributions and intervals live in :mod:`pcnn_explore.verdicts.distributions` (importable from
here as before).

:mod:`pcnn_explore.verdicts` turns these into verdict words.
"""
from __future__ import annotations

import functools
import itertools
import math
import sys
from fractions import Fraction
from typing import Sequence

import numpy as np

from pcnn_explore.verdicts.distributions import (  # the distributions and intervals, importable from here as before
    _level,
    _values,
    beta_quantile,
    binomial_interval,
    incomplete_beta,
    shown_interval,
    t_cdf,
    t_interval,
    t_quantile,
)

__all__ = ["TESTS", "MAX_SIGN_FLIP_N", "MAX_SPLITS", "MC_DRAWS", "MC_SEED", "MIN_SEEDS", "MAX_TOTAL", "incomplete_beta", "t_cdf", "t_quantile", "beta_quantile",
           "t_interval", "shown_interval", "binomial_interval", "sign_flip_p", "sign_flip_interval", "permutation_p",
           "fisher_exact_p", "min_p", "seeds_needed", "monte_carlo_draws", "monte_carlo_error"]

#: the directions of a one-sided claim: a > b ("greater") or a < b ("less")
DIRECTIONS = ("greater", "less")
_DIRECTIONS = DIRECTIONS


# ------------------------------------------------------------------------------- exact tests
#: the most values :func:`sign_flip_p` enumerates (2^20 sign patterns); beyond, :data:`MC_DRAWS` draws
MAX_SIGN_FLIP_N = 20
#: the most splits :func:`permutation_p` enumerates; beyond, :data:`MC_DRAWS` random splits
MAX_SPLITS = 200_000
#: the seeded Monte Carlo's draws (sign patterns or splits) where a test does not enumerate
MC_DRAWS = 200_000
#: the Monte Carlo's seed: the same values always give the same p
MC_SEED = 20170614
#: the fewest seeds per line a decided claim rests on (2^-6 = 0.016 < 0.025 < 2^-5)
MIN_SEEDS = 6
#: the tests :func:`min_p` and :func:`seeds_needed` know
TESTS = ("sign_flip", "fisher", "permutation")
#: the largest sum of per-seed magnitudes a test takes (half the largest float64, 8.99e307): every sum,
#: difference of sums and interval end the tests form from such values is a finite float64
MAX_TOTAL = sys.float_info.max / 2.0
_REL_NOISE = 1e-9
_CHUNK = 25_000


def _noise(*groups) -> float:
    """Float noise at the claim's own scale: 1e-9 of the largest |value| among ``groups`` (the values,
    and the shift, threshold or margin of the claim); 0 when all are 0. No absolute floor."""
    scale = max((abs(float(x)) for g in groups for x in np.ravel(g)), default=0.0)
    return _REL_NOISE * scale


def _direction(direction: str) -> str:
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be one of {_DIRECTIONS} (the claim a > b or a < b), got {direction!r}")
    return direction


def _finite(name: str, values, least: int = 1) -> np.ndarray:
    try:
        out = np.asarray([float(v) for v in values], dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: per-seed values must be numbers, got {values!r}") from None
    if out.size < least:
        raise ValueError(f"{name}: needs at least {least} per-seed values, got {out.size}")
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name}: every per-seed value must be a finite number, got {tuple(out)}")
    return out


def _in_range(name: str, values: np.ndarray) -> np.ndarray:
    """``values`` (float64, in the values' units) when the sums a test forms of them stay float64: their
    magnitudes (all finite) sum to at most :data:`MAX_TOTAL`; else ValueError naming them and the fix."""
    fix = "rescale the values (dividing them all by a power of two leaves every p unchanged)"
    over = np.count_nonzero(~np.isfinite(values))
    if over:
        raise ValueError(f"{name}: overflows float64 on {over} of {values.size} seeds; {fix}")
    with np.errstate(over="ignore"):
        total = float(np.sum(np.abs(values)))
    if not total <= MAX_TOTAL:
        raise ValueError(f"{name}: the magnitudes of the {values.size} per-seed values (largest "
                         f"{float(np.max(np.abs(values))):.3g}) sum beyond {MAX_TOTAL:.3g}, out of float64's range "
                         f"for the test's sums; {fix}")
    return values


def monte_carlo_draws(test: str, n_a: int, n_b: int | None = None) -> int:
    """0 where ``test`` enumerates every sign pattern / split of n_a (and n_b) seeds exactly, else the
    number of seeded Monte Carlo draws it uses (:data:`MC_DRAWS`): the sign flip beyond
    :data:`MAX_SIGN_FLIP_N` seeds, the permutation test beyond :data:`MAX_SPLITS` splits. Fisher's test
    is always exact.

    >>> monte_carlo_draws("sign_flip", 20), monte_carlo_draws("sign_flip", 21)
    (0, 200000)
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    if test == "sign_flip":
        return 0 if n_a <= MAX_SIGN_FLIP_N else MC_DRAWS
    if test == "permutation":
        n_b = n_a if n_b is None else n_b
        return 0 if math.comb(n_a + n_b, n_a) <= MAX_SPLITS else MC_DRAWS
    return 0


def monte_carlo_error(p: float, draws: int) -> float:
    """The standard error of a Monte Carlo p from ``draws`` draws, sqrt(p (1 - p) / draws); 0 for an
    exact p (``draws`` 0)."""
    if draws <= 0:
        return 0.0
    p = min(max(float(p), 0.0), 1.0)
    return math.sqrt(p * (1.0 - p) / draws)


@functools.lru_cache(maxsize=4)
def _drawn_flips(n: int) -> np.ndarray:
    """:data:`MC_DRAWS` sign patterns of n seeds drawn with :data:`MC_SEED`, (draws, n) bool, True = flipped
    (each seed flipped with probability 1/2, independently): the same draws for every call with n seeds."""
    rng = np.random.default_rng(MC_SEED)
    bits = rng.integers(0, 256, size=(MC_DRAWS, (n + 7) // 8), dtype=np.uint8)
    out = np.unpackbits(bits, axis=1, count=n).astype(bool)
    out.setflags(write=False)
    return out


def _flip_sets(d: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(k, F, extra): per sign pattern the number of flipped seeds k and the sum F of their differences;
    every one of the 2^n patterns (extra 0) for n <= :data:`MAX_SIGN_FLIP_N`, else :data:`MC_DRAWS`
    seeded random patterns (extra 1: the observed pattern counts once more, so p >= 1 / (draws + 1))."""
    if d.size <= MAX_SIGN_FLIP_N:
        k, f = np.zeros(1, dtype=np.int16), np.zeros(1)
        for v in d:
            k, f = np.concatenate((k, k + 1)), np.concatenate((f, f + v))
        return k, f, 0
    m = _drawn_flips(d.size)
    k = m.sum(axis=1, dtype=np.int16)
    f = np.concatenate([m[i:i + _CHUNK].astype(np.float64) @ d for i in range(0, MC_DRAWS, _CHUNK)])
    return k, f, 1


class _SignFlip:
    """The sign-flip test of one set of per-seed differences d, for any shift s: the statistic
    sum(e_i (d_i - s)) of a pattern e is >= the observed one exactly when the flipped seeds' d - s sum
    to <= 0 (within the float noise), so p is a count over the patterns' (k, F). ValueError (naming
    ``name``) when the magnitudes of d sum beyond :data:`MAX_TOTAL`."""

    def __init__(self, d: np.ndarray, extra_scale: float = 0.0, name: str = "differences"):
        self.d = _in_range(name, d)
        self.k, self.f, self.extra = _flip_sets(d)
        self.total = self.k.size + self.extra
        self.draws = 0 if self.extra == 0 else self.k.size
        self.extra_scale = abs(float(extra_scale))

    def tol(self, shift: float) -> float:
        return self.d.size * _noise(self.d, shift, self.extra_scale)

    def p(self, direction: str, shift: float = 0.0) -> float:
        s = float(shift)
        g = self.f - self.k * s
        tol = self.tol(s)
        hits = np.count_nonzero(g <= tol) if direction == "greater" else np.count_nonzero(g >= -tol)
        return (int(hits) + self.extra) / self.total

    def interval(self, level: float) -> tuple[float, float]:
        alpha = (1.0 - level) / 2.0
        if 2.0 ** -self.d.size > alpha or 1.0 / self.total > alpha:
            return -math.inf, math.inf
        needed = math.floor(alpha * self.total) + 1 - self.extra - int(np.count_nonzero(self.k == 0))
        if needed <= 0:
            return -math.inf, math.inf
        flipped = self.k > 0
        k, f = self.k[flipped].astype(np.float64), self.f[flipped]
        tol = self.tol(float(np.abs(self.d).max(initial=0.0)))
        if needed > k.size:
            return -math.inf, math.inf
        low = float(np.partition((f - tol) / k, needed - 1)[needed - 1])
        high = -float(np.partition(-(f + tol) / k, needed - 1)[needed - 1])
        return low, high


def sign_flip_p(differences: Sequence[float], direction: str, shift: float = 0.0) -> float:
    """One-sided p of the paired sign-flip permutation test of mean(d - shift) > 0
    (``direction="greater"``) or < 0 (``"less"``).

    ``differences``: per-seed differences d_i = a_i - b_i (in the units of the values). For n <=
    :data:`MAX_SIGN_FLIP_N` every one of the 2^n sign patterns of x_i = d_i - shift is enumerated and
    p is exact: the share of patterns whose sum is >= the observed one (``"less"``: <=), ties counted
    in. Beyond, :data:`MC_DRAWS` patterns drawn with the seed :data:`MC_SEED` give
    p = (1 + hits) / (1 + draws), standard error :func:`monte_carlo_error`. A sum within n x 1e-9 of the
    largest of |d_j| and |shift| counts as a tie (float noise is no effect).

    >>> sign_flip_p([1, 1, 1], "greater")   # only the all-plus pattern reaches 3: 1/8
    0.125
    >>> sign_flip_p([1, 1, 1], "less")      # every pattern is <= 3
    1.0
    >>> sign_flip_p([2.0, -1.0], "greater") # sums 1, 3, -3, -1: 1 and 3 are >= 1
    0.5
    """
    d, direction = _finite("differences", differences), _direction(direction)
    if not math.isfinite(float(shift)):
        raise ValueError(f"shift must be a finite number, got {shift}")
    return _SignFlip(d).p(direction, float(shift))


def _bisect_boundary(rejected, inside: float, outside: float) -> float:
    """The point nearest ``outside`` that is not rejected, between ``inside`` (not rejected) and
    ``outside`` (rejected), ``rejected`` monotone between them (to double precision)."""
    for _ in range(4000):
        mid = 0.5 * (inside + outside)
        if mid in (inside, outside):
            break
        if rejected(mid):
            outside = mid
        else:
            inside = mid
    return inside


def _invert(p_of, values_low: float, values_high: float, alpha: float) -> tuple[float, float]:
    """The shifts not rejected at alpha by either one-sided test ``p_of(direction, shift)``, the
    values lying in [values_low, values_high] (test inversion by bisection on the shift)."""
    reach = (values_high - values_low) + max(1.0, abs(values_low), abs(values_high))
    far_low, far_high = values_low - reach, values_high + reach
    for _ in range(60):  # the far shifts must be rejected (every value on one side of them)
        if p_of("greater", far_low) <= alpha and p_of("less", far_high) <= alpha:
            break
        reach *= 2.0
        far_low, far_high = values_low - reach, values_high + reach
    low = _bisect_boundary(lambda s: p_of("greater", s) <= alpha, values_high, far_low)
    high = _bisect_boundary(lambda s: p_of("less", s) <= alpha, values_low, far_high)
    return low, high


def sign_flip_interval(differences: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """The ``level`` interval of the mean difference by inverting the sign-flip test: the shifts s
    that neither ``sign_flip_p(d, "greater", s)`` nor ``sign_flip_p(d, "less", s)`` rejects at
    alpha = (1 - level) / 2.

    Exactly: with K = floor(alpha 2^n), the low end is the K-th smallest mean of d over the 2^n - 1
    non-empty subsets of seeds and the high end the K-th largest (widened by the float-noise tolerance
    of :func:`sign_flip_p`, n x 1e-9 max |d| over the subset's size); at 0.95 and n = 6 (K = 1) that is
    [min d, max d]. Beyond :data:`MAX_SIGN_FLIP_N` seeds the same over the Monte Carlo's drawn patterns.
    When 2^-n > alpha (n <= 5 at 0.95) no shift is ever rejected: (-inf, inf). For all-equal
    differences d_i = v and n >= 6 at 0.95 the interval is the point v, widened only by that tolerance.
    """
    d, level = _finite("differences", differences), _level(level)
    return _SignFlip(d).interval(level)


@functools.lru_cache(maxsize=4)
def _drawn_splits(n: int, n_a: int) -> np.ndarray:
    """:data:`MC_DRAWS` random splits of n pooled seeds drawn with :data:`MC_SEED`, (draws, n) bool,
    True = in the first group of n_a: the same draws for every call with these sizes."""
    rng = np.random.default_rng(MC_SEED)
    out = np.zeros((MC_DRAWS, n), dtype=bool)
    for start in range(0, MC_DRAWS, _CHUNK):
        keys = rng.random((min(_CHUNK, MC_DRAWS - start), n))
        idx = np.argpartition(keys, n_a - 1, axis=1)[:, :n_a]
        np.put_along_axis(out[start:start + idx.shape[0]], idx, True, axis=1)
    out.setflags(write=False)
    return out


def _split_sums(pool: np.ndarray, n_a: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(sums, from_a, extra): per split of the pooled values the first group's sum and how many of a's
    values it holds; every split (extra 0, split 0 the observed one) when there are at most
    :data:`MAX_SPLITS`, else :data:`MC_DRAWS` seeded random splits (extra 1: the observed split counts
    once more)."""
    n = pool.size
    count = math.comb(n, n_a)
    if count <= MAX_SPLITS:
        idx = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n), n_a)), dtype=np.int64,
                          count=count * n_a).reshape(count, n_a)
        return pool[idx].sum(axis=1), (idx < n_a).sum(axis=1), 0
    m = _drawn_splits(n, n_a)
    sums = np.concatenate([m[i:i + _CHUNK].astype(np.float64) @ pool for i in range(0, MC_DRAWS, _CHUNK)])
    return sums, m[:, :n_a].sum(axis=1), 1


def _permutation_tester(a: np.ndarray, b: np.ndarray, extra_scale: float = 0.0):
    """``p_of(direction, shift)``: the permutation p of mean(a - shift) - mean(b) (every split, or the
    seeded Monte Carlo beyond :data:`MAX_SPLITS`); ``p_of.draws``: 0 when exact, else the draws;
    ``p_of.interval(level)``: the shifts neither one-sided test rejects (a split holding j of b's
    values moves by s j with the shift s, so each end is a quantile of (observed - sum) / j)."""
    pool = _in_range("values_a and values_b", np.concatenate((a, b)))
    sums, from_a, extra = _split_sums(pool, a.size)
    observed_sum, total = float(a.sum()), sums.size + extra
    gap, j = observed_sum - sums, (a.size - from_a).astype(np.float64)  # stat - obs = s j - gap

    def tie(shift: float) -> float:
        return pool.size * _noise(pool, float(shift), extra_scale)

    def p_of(direction: str, shift: float) -> float:
        g = float(shift) * j - gap
        hits = np.count_nonzero(g >= -tie(shift)) if direction == "greater" else np.count_nonzero(g <= tie(shift))
        return (int(hits) + extra) / total

    def interval(level: float) -> tuple[float, float]:
        alpha = (1.0 - level) / 2.0
        moved = j > 0
        needed = math.floor(alpha * total) + 1 - extra - int(np.count_nonzero(~moved & (gap <= tie(0.0))))
        if min_p("permutation", a.size, b.size) > alpha or 1.0 / total > alpha or needed <= 0 or needed > moved.sum():
            return -math.inf, math.inf
        t = tie(float(np.abs(pool).max(initial=0.0)))
        low = float(np.partition((gap[moved] - t) / j[moved], needed - 1)[needed - 1])
        high = -float(np.partition(-(gap[moved] + t) / j[moved], needed - 1)[needed - 1])
        return low, high

    p_of.draws = 0 if extra == 0 else sums.size
    p_of.interval = interval
    return p_of


def permutation_p(values_a: Sequence[float], values_b: Sequence[float], direction: str, shift: float = 0.0) -> float:
    """One-sided p of the two-sample permutation test of mean(a) - mean(b) - shift > 0
    (``"greater"``) or < 0 (``"less"``), for unpaired per-seed values.

    Every split of the pooled values (a - shift, b) into n_a and n_b is enumerated where there are at
    most :data:`MAX_SPLITS` (exact); beyond, :data:`MC_DRAWS` splits drawn with the seed
    :data:`MC_SEED` give p = (1 + hits) / (1 + draws). The statistic is the sum of the first group, and
    p is the share of splits whose statistic is >= the observed one (``"less"``: <=), ties (within
    (n_a + n_b) x 1e-9 of the largest |value| or |shift|) counted in.

    >>> permutation_p([3, 4], [1, 2], "greater")   # 6 splits, only {3, 4} sums to 7: 1/6
    0.16666666666666666
    >>> permutation_p([1, 1], [1, 1], "greater")   # every split ties
    1.0
    """
    a, b, direction = _finite("values_a", values_a), _finite("values_b", values_b), _direction(direction)
    if not math.isfinite(float(shift)):
        raise ValueError(f"shift must be a finite number, got {shift}")
    return _permutation_tester(a, b)(direction, shift)


def _count(name: str, x) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {x!r}")
    return int(x)


def _fisher_fraction(k_a: int, n_a: int, k_b: int, n_b: int, direction: str) -> Fraction:
    k, n = k_a + k_b, n_a + n_b
    xs = range(k_a, min(k, n_a) + 1) if direction == "greater" else range(max(0, k - n_b), k_a + 1)
    return Fraction(sum(math.comb(k, x) * math.comb(n - k, n_a - x) for x in xs), math.comb(n, n_a))


def fisher_exact_p(k_a: int, n_a: int, k_b: int, n_b: int, direction: str) -> float:
    """Fisher's exact one-sided p for "share a > share b" (``direction="greater"``; ``"less"``: a < b),
    k_a of n_a seeds against k_b of n_b: the hypergeometric tail P(X >= k_a) (resp. <=), X the successes
    line a draws when k_a + k_b successes are shared at random among the n_a + n_b seeds (math.comb,
    exact; rounded to float once).

    >>> fisher_exact_p(10, 10, 0, 10, "greater") == 1 / math.comb(20, 10)   # 5.41e-6
    True
    >>> fisher_exact_p(1, 2, 1, 2, "greater")   # k = 2 of 4: P(X >= 1) = 1 - C(2,0) C(2,2) / C(4,2) = 5/6
    0.8333333333333334
    """
    k_a, n_a, k_b, n_b = (_count(name, x) for name, x in (("k_a", k_a), ("n_a", n_a), ("k_b", k_b), ("n_b", n_b)))
    if n_a < 1 or n_b < 1 or k_a > n_a or k_b > n_b:
        raise ValueError(f"fisher_exact_p needs 0 <= k <= n and n >= 1 on each side, got {k_a} of {n_a} and "
                         f"{k_b} of {n_b}")
    return float(_fisher_fraction(k_a, n_a, k_b, n_b, _direction(direction)))


def min_p(test: str, n_a: int, n_b: int | None = None) -> float:
    """The smallest one-sided p ``test`` can give with these sample sizes: ``"sign_flip"`` over n_a
    paired seeds 2^-n_a (n_b None or n_a); ``"fisher"`` and ``"permutation"`` with n_a and n_b seeds
    (n_b None: n_a) the p of the most extreme table / split, 1 / C(n_a + n_b, n_a) (every other
    attainable table has a hypergeometric probability >= that one). Any seed count: far out p
    underflows to 0.0 (2^-1075 and below, e.g. 2000 paired seeds), nothing raises.

    >>> min_p("sign_flip", 6), min_p("fisher", 4) == 1 / 70, min_p("fisher", 2000)
    (0.015625, True, 0.0)
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    n_a = _count("n_a", n_a)
    n_b = n_a if n_b is None else _count("n_b", n_b)
    if n_a < 1 or n_b < 1:
        raise ValueError(f"min_p needs at least one seed per line, got n_a={n_a}, n_b={n_b}")
    if test == "sign_flip":
        if n_b != n_a:
            raise ValueError(f"the sign-flip test pairs seeds: n_b must be None or n_a ({n_a}), got {n_b}")
        return 2.0 ** -n_a
    splits = math.comb(n_a + n_b, n_a)
    try:
        return 1.0 / splits
    except OverflowError:  # C(n_a + n_b, n_a) beyond float64 (515 seeds a line on): int / int, correctly rounded
        return 1 / splits


def seeds_needed(test: str, level: float = 0.95) -> int:
    """The fewest seeds per line a decided claim by ``test`` rests on: at least :data:`MIN_SEEDS`
    (6), and more where ``min_p(test, n) <= (1 - level) / 2`` needs more (equal seeds on both lines).
    At 0.95 every test needs 6 (the sign flip's 2^-5 = 0.031 > 0.025; Fisher's and the permutation
    test's arithmetic alone would allow 4, 1 / C(8, 4) = 0.014, but 4 seeds decide by accident);
    at 0.99 the sign flip needs 8 (2^-7 = 0.0078 > 0.005 >= 2^-8)."""
    alpha = (1.0 - _level(level)) / 2.0
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    n = MIN_SEEDS
    while min_p(test, n) > alpha:
        n += 1
    return n
