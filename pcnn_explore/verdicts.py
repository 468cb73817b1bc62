"""Verdicts decided by statistics: the seed is the unit, intervals are honest at 5 seeds.

Every agent claim is decided on per-seed values (one number per independent run: a success rate,
a deep-sea score, an episode count), never on episodes pooled across seeds as if independent.

- :func:`t_interval`: Student's t interval of the mean of per-seed values (a percentile bootstrap
  over 5 values is too narrow);
- :func:`binomial_interval`: the exact (Clopper-Pearson) interval of a share "k of n seeds";
- :func:`difference_verdict`: a claimed difference. ``agrees`` only when the 95% interval of the
  difference excludes zero in the paper's direction, ``differs`` when it excludes zero the other
  way, else ``inconclusive``. Paired over seeds when both sides ran the same seeds, else Welch;
- :func:`progress_verdict`: a claim of progress, decided against a stated threshold (for instance
  the random policy's success rate 2^-N): ``agrees`` when the interval lies above it, ``differs``
  when it lies at or below it, else ``inconclusive``;
- :func:`share_verdict`: the same for "k of n seeds" (e.g. solved a size), on the exact
  Clopper-Pearson interval of the share;
- :func:`equivalence_verdict`: a claim of no effect, decided against a stated margin: ``agrees``
  when the interval of the difference lies inside (-margin, margin), ``differs`` when it lies wholly
  outside, else ``inconclusive``.

Each returns a :class:`Verdict` (the word, the interval, the per-seed values, a one-line sentence).
The quantiles are exact (the regularised incomplete beta function, inverted by bisection): scipy
is not needed. :data:`VERDICTS` is the report's vocabulary and :func:`word_of` its one reading, used by
:mod:`pcnn_explore.report.index`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

__all__ = ["VERDICTS", "VERDICT_COLOURS", "word_of", "Verdict", "incomplete_beta", "t_cdf", "t_quantile", "beta_quantile",
           "t_interval", "binomial_interval", "difference_verdict", "progress_verdict", "share_verdict",
           "equivalence_verdict"]

#: the verdict words of the report, strongest first
VERDICTS = ("agrees", "partly", "differs", "inconclusive", "not testable at this profile")
#: each verdict word's colour in the report
VERDICT_COLOURS = {"agrees": "#1a7f37", "partly": "#b7791f", "differs": "#c62828", "inconclusive": "#6a4fb3",
                   "not testable at this profile": "#757575"}
_DIRECTIONS = ("greater", "less")


def word_of(sentence: str) -> str | None:
    """The verdict word a verdict sentence starts with (case and leading spaces aside), or None: the
    one reading of every notebook's ``summary.verdict`` (``"agrees over 3 seeds: ..."`` -> ``agrees``)."""
    text = str(sentence).strip().lower()
    for word in sorted(VERDICTS, key=len, reverse=True):
        if text.startswith(word) and not text[len(word):len(word) + 1].isalnum():
            return word
    return None


@dataclass(frozen=True)
class Verdict:
    """A decided claim. ``word``: one of :data:`VERDICTS`; ``interval``: (low, high) of the quantity
    decided (a mean, or a difference a - b); ``estimate``: its point value; ``values``: the per-seed
    values it came from (for a difference: ``values`` of a, ``values_b`` of b); ``sentence``: one line."""

    word: str
    estimate: float
    interval: tuple[float, float]
    level: float
    values: tuple[float, ...]
    values_b: tuple[float, ...] = ()
    method: str = ""
    sentence: str = ""


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


def _difference(a: Sequence[float], b: Sequence[float], level: float, seeds_a, seeds_b):
    """(estimate, interval, method, values a, values b) of mean(a) - mean(b)."""
    va, vb = _values("values_a", a), _values("values_b", b)
    paired = seeds_a is not None and seeds_b is not None and list(seeds_a) == list(seeds_b)
    if (seeds_a is None) != (seeds_b is None):
        raise ValueError("pass the seeds of both sides (a paired comparison) or of neither")
    for name, v, s in (("values_a", va, seeds_a), ("values_b", vb, seeds_b)):
        if s is not None and len(list(s)) != len(v):
            raise ValueError(f"{name}: {len(v)} values but {len(list(s))} seeds")
    if paired:
        low, high = t_interval([x - y for x, y in zip(va, vb)], level)
        return (low + high) / 2.0, (low, high), f"paired t over {len(va)} seeds", va, vb
    (ma, sa), (mb, sb) = _mean_sd(va), _mean_sd(vb)
    qa, qb = sa * sa / len(va), sb * sb / len(vb)
    estimate = ma - mb
    if qa + qb == 0.0:
        return estimate, (estimate, estimate), "Welch t (no spread)", va, vb
    df = (qa + qb) ** 2 / (qa * qa / (len(va) - 1) + qb * qb / (len(vb) - 1))
    half = t_quantile(0.5 + _level(level) / 2.0, df) * math.sqrt(qa + qb)
    return estimate, (estimate - half, estimate + half), f"Welch t ({len(va)} and {len(vb)} seeds)", va, vb


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def difference_verdict(values_a: Sequence[float], values_b: Sequence[float], direction: str = "greater",
                       level: float = 0.95, seeds_a: Sequence[int] | None = None,
                       seeds_b: Sequence[int] | None = None, claim: str = "a - b") -> Verdict:
    """Decide the paper's claim that a > b (``direction="greater"``) or a < b (``"less"``) on per-seed
    values. Paired t over the seed-wise differences when ``seeds_a == seeds_b`` are given, else Welch's
    t. ``agrees``: the ``level`` interval of mean(a) - mean(b) excludes 0 in the claimed direction;
    ``differs``: it excludes 0 the other way; else ``inconclusive``."""
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be one of {_DIRECTIONS} (the paper's claim a > b or a < b), "
                         f"got {direction!r}")
    level = _level(level)
    estimate, (low, high), method, va, vb = _difference(values_a, values_b, level, seeds_a, seeds_b)
    sign = 1.0 if direction == "greater" else -1.0
    if (low > 0 and sign > 0) or (high < 0 and sign < 0):
        word = "agrees"
    elif (high < 0 and sign > 0) or (low > 0 and sign < 0):
        word = "differs"
    else:
        word = "inconclusive"
    want = ">" if sign > 0 else "<"
    sentence = (f"{word}: {claim} = {_fmt(estimate)}, {level:.0%} interval [{_fmt(low)}, {_fmt(high)}] ({method}); "
                f"the claim is {claim} {want} 0")
    return Verdict(word, estimate, (low, high), level, va, vb, method, sentence)


def progress_verdict(values: Sequence[float], threshold: float, level: float = 0.95,
                     claim: str = "mean") -> Verdict:
    """Decide a claim of progress: ``agrees`` when the t interval of the per-seed mean lies above
    ``threshold`` (e.g. the random policy's success rate 2^-N), ``differs`` when its top is at or
    below it, else ``inconclusive``."""
    level = _level(level)
    if not math.isfinite(float(threshold)):
        raise ValueError(f"threshold must be a finite number, got {threshold}")
    v = _values("values", values)
    low, high = t_interval(v, level)
    word = "agrees" if low > threshold else "differs" if high <= threshold else "inconclusive"
    estimate = math.fsum(v) / len(v)
    sentence = (f"{word}: {claim} = {_fmt(estimate)} over {len(v)} seeds, {level:.0%} interval "
                f"[{_fmt(low)}, {_fmt(high)}] against the threshold {_fmt(float(threshold))}")
    return Verdict(word, estimate, (low, high), level, v, (), f"t over {len(v)} seeds", sentence)


def share_verdict(k: int, n: int, threshold: float, level: float = 0.95, claim: str = "share of seeds") -> Verdict:
    """Decide a claim of progress on "k of n seeds" (e.g. seeds that solved a size) with the exact
    Clopper-Pearson interval of the share: ``agrees`` above ``threshold``, ``differs`` when its top is
    at or below it, else ``inconclusive``. 5 of 5 seeds cannot show a share above 0.5 at 95%
    (lower bound 0.478). ``values``: the n per-seed outcomes (k ones, then zeros)."""
    level = _level(level)
    low, high = binomial_interval(k, n, level)
    if not math.isfinite(float(threshold)):
        raise ValueError(f"threshold must be a finite number, got {threshold}")
    word = "agrees" if low > threshold else "differs" if high <= threshold else "inconclusive"
    sentence = (f"{word}: {claim} = {k}/{n}, {level:.0%} exact interval [{_fmt(low)}, {_fmt(high)}] against the "
                f"threshold {_fmt(float(threshold))}")
    return Verdict(word, k / n, (low, high), level, tuple([1.0] * k + [0.0] * (n - k)), (), "Clopper-Pearson", sentence)


def equivalence_verdict(values_a: Sequence[float], values_b: Sequence[float], margin: float, level: float = 0.95,
                        seeds_a: Sequence[int] | None = None, seeds_b: Sequence[int] | None = None,
                        claim: str = "a - b") -> Verdict:
    """Decide a claim of no effect: ``agrees`` when the ``level`` interval of mean(a) - mean(b) lies
    inside (-margin, margin), ``differs`` when it lies wholly outside [-margin, margin], else
    ``inconclusive`` (paired or Welch as in :func:`difference_verdict`)."""
    if not (math.isfinite(float(margin)) and margin > 0):
        raise ValueError(f"margin must be a positive number (the largest difference that counts as none), got {margin}")
    level = _level(level)
    estimate, (low, high), method, va, vb = _difference(values_a, values_b, level, seeds_a, seeds_b)
    if -margin < low and high < margin:
        word = "agrees"
    elif low > margin or high < -margin:
        word = "differs"
    else:
        word = "inconclusive"
    sentence = (f"{word}: {claim} = {_fmt(estimate)}, {level:.0%} interval [{_fmt(low)}, {_fmt(high)}] ({method}) "
                f"against the margin +-{_fmt(float(margin))}")
    return Verdict(word, estimate, (low, high), level, va, vb, method, sentence)
