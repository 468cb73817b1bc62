"""Pure statistics for verdicts over seeds: distributions, intervals and exact tests (no scipy).

- distributions: :func:`incomplete_beta` (the regularised incomplete beta function, by a continued
  fraction), :func:`t_cdf`, :func:`t_quantile`, :func:`beta_quantile` (inverted by bisection);
- intervals of one line's per-seed values: :func:`t_interval` (Student's t), :func:`binomial_interval`
  (exact Clopper-Pearson for k of n), :func:`shown_interval` (NaN where a table has one value);
- exact tests: :func:`sign_flip_p` (paired, all 2^n sign patterns), :func:`sign_flip_interval` (its
  inversion), :func:`permutation_p` (two samples, every split), :func:`fisher_exact_p` (two shares,
  hypergeometric tail), :func:`min_p` and :func:`seeds_needed` (the least p a test can give, and the
  seeds it needs to reach a level).

:mod:`pcnn_explore.verdicts` turns these into verdict words.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Sequence

import numpy as np

__all__ = ["TESTS", "MAX_SIGN_FLIP_N", "MAX_SPLITS", "incomplete_beta", "t_cdf", "t_quantile", "beta_quantile",
           "t_interval", "shown_interval", "binomial_interval", "sign_flip_p", "sign_flip_interval", "permutation_p",
           "fisher_exact_p", "min_p", "seeds_needed"]

#: the directions of a one-sided claim: a > b ("greater") or a < b ("less")
DIRECTIONS = ("greater", "less")
_DIRECTIONS = DIRECTIONS

# ------------------------------------------------------------------------------- distributions
def incomplete_beta(x: float, a: float, b: float) -> float:
    """The regularised incomplete beta function I_x(a, b), for 0 <= x <= 1 and a, b > 0
    (continued fraction by the modified Lentz method, accurate to about 1e-14)."""
    if not (a > 0 and b > 0):
        raise ValueError(f"incomplete_beta needs a, b > 0, got a={a}, b={b}")
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"incomplete_beta needs 0 <= x <= 1, got {x}")
    if x in (0.0, 1.0):
        return x
    if x > (a + 1.0) / (a + b + 2.0):  # the fraction converges fast below the mean only
        return 1.0 - incomplete_beta(1.0 - x, b, a)
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return math.exp(log_front) * h / a


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (df > 0)."""
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    tail = 0.5 * incomplete_beta(df / (df + t * t), df / 2.0, 0.5)
    return 1.0 - tail if t > 0 else tail


def _bisect(f, low: float, high: float, target: float) -> float:
    """x in [low, high] with f(x) = target, f increasing (to double precision)."""
    for _ in range(200):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        low, high = (mid, high) if f(mid) < target else (low, mid)
    return 0.5 * (low + high)


def t_quantile(p: float, df: float) -> float:
    """The p-quantile of Student's t with ``df`` degrees of freedom, e.g. t_quantile(0.975, 4) = 2.7764451."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    high = 1.0
    while t_cdf(high, df) < p:
        high *= 2.0
    return _bisect(lambda t: t_cdf(t, df), 0.0, high, p)


def beta_quantile(p: float, a: float, b: float) -> float:
    """The p-quantile of the Beta(a, b) distribution (0 <= p <= 1)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    if p in (0.0, 1.0):
        return p
    return _bisect(lambda x: incomplete_beta(x, a, b), 0.0, 1.0, p)


# ----------------------------------------------------------------------------------- intervals
def _values(name: str, values: Sequence[float], least: int = 2) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if len(out) < least:
        raise ValueError(f"{name}: an interval over seeds needs at least {least} per-seed values, got {len(out)}")
    if not all(math.isfinite(v) for v in out):
        raise ValueError(f"{name}: every per-seed value must be a finite number, got {out}")
    return out


def _level(level: float) -> float:
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), e.g. 0.95, got {level}")
    return float(level)


def _mean_sd(v: Sequence[float]) -> tuple[float, float]:
    m = math.fsum(v) / len(v)
    return m, math.sqrt(math.fsum((x - m) ** 2 for x in v) / (len(v) - 1))


def t_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """Student's t interval (two-sided, ``level``) of the mean of per-seed values: mean -+
    t_{(1+level)/2, n-1} s / sqrt(n), s the sample standard deviation. Needs n >= 2 values."""
    v, level = _values("t_interval", values), _level(level)
    m, s = _mean_sd(v)
    half = t_quantile(0.5 + level / 2.0, len(v) - 1) * s / math.sqrt(len(v))
    return m - half, m + half



def shown_interval(values: Sequence[float], interval=t_interval, level: float = 0.95) -> tuple[float, float]:
    """``interval(values, level)`` (:func:`t_interval`, :func:`sign_flip_interval`) for a table or a
    figure: NaN for an end the values do not bound (fewer than two values, or an infinite end: too few
    seeds for an exact test to bound it)."""
    if len(values) < 2:
        return math.nan, math.nan
    low, high = interval(list(values), level)
    return (low if math.isfinite(low) else math.nan), (high if math.isfinite(high) else math.nan)


def binomial_interval(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact Clopper-Pearson interval of a share k of n (e.g. seeds that solved a size):
    (Beta quantile (1-level)/2 of (k, n-k+1), Beta quantile (1+level)/2 of (k+1, n-k)); 0 / 1 at the ends."""
    level = _level(level)
    for name, x in (("k", k), ("n", n)):
        if isinstance(x, bool) or not isinstance(x, int) or x < 0:
            raise ValueError(f"binomial_interval: {name} must be a non-negative integer, got {x!r}")
    if n < 1 or k > n:
        raise ValueError(f"binomial_interval needs 0 <= k <= n and n >= 1, got k={k}, n={n}")
    alpha = 1.0 - level
    low = 0.0 if k == 0 else beta_quantile(alpha / 2.0, k, n - k + 1)
    high = 1.0 if k == n else beta_quantile(1.0 - alpha / 2.0, k + 1, n - k)
    return low, high


# ------------------------------------------------------------------------------- exact tests
#: the most values :func:`sign_flip_p` enumerates (2^20 sign patterns)
MAX_SIGN_FLIP_N = 20
#: the most splits :func:`permutation_p` enumerates
MAX_SPLITS = 200_000
#: the tests :func:`min_p` and :func:`seeds_needed` know
TESTS = ("sign_flip", "fisher", "permutation")
_REL_NOISE, _ABS_NOISE = 1e-9, 1e-12
_TIE = 1e-12  # sign-flip sums within this share of sum |x| tie (float rounding of the sums)


def _noise(*groups) -> float:
    """Float noise at the scale of the values: 1e-9 of the largest |value|, at least 1e-12."""
    scale = max((abs(float(x)) for g in groups for x in np.ravel(g)), default=0.0)
    return max(_REL_NOISE * scale, _ABS_NOISE)


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


def _pattern_sums(x: np.ndarray) -> np.ndarray:
    """Sum of sum_i e_i x_i over all 2^len(x) sign patterns e; index 0 is the all-plus pattern."""
    sums = np.zeros(1)
    for v in x:
        sums = np.concatenate((sums + v, sums - v))
    return sums


def sign_flip_p(differences: Sequence[float], direction: str, shift: float = 0.0) -> float:
    """Exact one-sided p of the paired sign-flip permutation test of mean(d - shift) > 0
    (``direction="greater"``) or < 0 (``"less"``).

    ``differences``: per-seed differences d_i = a_i - b_i (in the units of the values). Every one of the
    2^n sign patterns of x_i = d_i - shift is enumerated (numpy, n <= :data:`MAX_SIGN_FLIP_N`); the
    statistic is the sum, and p is the share of patterns whose statistic is >= the observed one
    (``"less"``: <=), ties counted in. An x_i within 1e-9 of the largest of |d_j| and |shift| (or 1e-12
    absolute) counts as exactly 0 (float noise is no effect); sums within 1e-12 of sum |x_i| tie.

    >>> sign_flip_p([1, 1, 1], "greater")   # only the all-plus pattern reaches 3: 1/8
    0.125
    >>> sign_flip_p([1, 1, 1], "less")      # every pattern is <= 3
    1.0
    >>> sign_flip_p([2.0, -1.0], "greater") # sums 1, 3, -3, -1: 1 and 3 are >= 1
    0.5
    """
    d, direction = _finite("differences", differences), _direction(direction)
    if d.size > MAX_SIGN_FLIP_N:
        raise ValueError(f"sign_flip_p enumerates 2^n sign patterns up to n = {MAX_SIGN_FLIP_N}, got n = {d.size}; "
                         f"pass at most {MAX_SIGN_FLIP_N} per-seed differences")
    if not math.isfinite(float(shift)):
        raise ValueError(f"shift must be a finite number, got {shift}")
    x = d - float(shift)
    x = x[np.abs(x) > _noise(d, float(shift))]  # a zero adds +0 and -0 alike: the share does not change
    sums = _pattern_sums(x)
    tie = _TIE * float(np.abs(x).sum())  # rounding of the sums only: the noise in x was removed above
    hits = np.count_nonzero(sums >= sums[0] - tie) if direction == "greater" else \
        np.count_nonzero(sums <= sums[0] + tie)
    return int(hits) / int(sums.size)


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
    alpha = (1 - level) / 2, found by bisection on s (each p is monotone in s).

    Exactly: with K = floor(alpha 2^n), the low end is the K-th smallest mean of d over the 2^n - 1
    non-empty subsets of seeds and the high end the K-th largest (up to the float-noise tolerance of
    :func:`sign_flip_p`); at 0.95 and n = 6 (K = 1) that is [min d, max d]. When 2^-n > alpha (n <= 5
    at 0.95) no shift is ever rejected: (-inf, inf). For all-equal differences d_i = v and n >= 6 at
    0.95 the interval is the point v, widened only by the float-noise tolerance (1e-9 max(|v|, 1e-3)
    each side): every other shift leaves all n signs alike (p = 2^-n <= alpha), which is the exact
    test's answer, not a zero spread divided into a t quantile.
    """
    d, level = _finite("differences", differences), _level(level)
    alpha = (1.0 - level) / 2.0
    if d.size > MAX_SIGN_FLIP_N:
        sign_flip_p(d, "greater")  # the one error message for too many values
    if 2.0 ** -d.size > alpha:
        return -math.inf, math.inf
    return _invert(lambda direction, s: sign_flip_p(d, direction, s), float(d.min()), float(d.max()), alpha)


def _splits(n: int, n_a: int) -> np.ndarray:
    count = math.comb(n, n_a)
    if count > MAX_SPLITS:
        raise ValueError(f"permutation_p enumerates every split of the values, at most {MAX_SPLITS:,}; "
                         f"{n_a} and {n - n_a} values give {count:,}: use fewer seeds or a paired test")
    return np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n), n_a)), dtype=np.int64,
                       count=count * n_a).reshape(count, n_a)


def _permutation_tester(a: np.ndarray, b: np.ndarray):
    """``p_of(direction, shift)``: the exact two-sample permutation p of mean(a - shift) - mean(b)."""
    pool = np.concatenate((a, b))
    idx = _splits(pool.size, a.size)
    sums, from_a = pool[idx].sum(axis=1), (idx < a.size).sum(axis=1)

    def p_of(direction: str, shift: float) -> float:
        stat = sums - float(shift) * from_a  # split 0 holds a's values: the observed statistic
        tie = a.size * _noise(pool, float(shift))
        hits = np.count_nonzero(stat >= stat[0] - tie) if direction == "greater" else \
            np.count_nonzero(stat <= stat[0] + tie)
        return int(hits) / int(stat.size)

    return p_of


def permutation_p(values_a: Sequence[float], values_b: Sequence[float], direction: str, shift: float = 0.0) -> float:
    """Exact one-sided p of the two-sample permutation test of mean(a) - mean(b) - shift > 0
    (``"greater"``) or < 0 (``"less"``), for unpaired per-seed values.

    Every split of the pooled values (a - shift, b) into n_a and n_b is enumerated (at most
    :data:`MAX_SPLITS`); the statistic is the sum of the first group, and p is the share of splits
    whose statistic is >= the observed one (``"less"``: <=), ties (within n_a times the float noise of
    the values) counted in.

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
    attainable table has a hypergeometric probability >= that one).

    >>> min_p("sign_flip", 6), min_p("fisher", 4) == 1 / 70
    (0.015625, True)
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
    return 1.0 / math.comb(n_a + n_b, n_a)


def seeds_needed(test: str, level: float = 0.95) -> int:
    """The fewest seeds per line (equal on both lines) for which ``min_p(test, n) <= (1 - level) / 2``:
    at 0.95, ``"sign_flip"`` 6 (2^-5 = 0.031 > 0.025 >= 2^-6 = 0.016), ``"fisher"`` and
    ``"permutation"`` 4 (1 / C(6, 3) = 0.05 > 0.025 >= 1 / C(8, 4) = 0.014)."""
    alpha = (1.0 - _level(level)) / 2.0
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    n = 1
    while min_p(test, n) > alpha:
        n += 1
    return n
