"""Distributions and intervals for verdicts over seeds (no scipy).

- distributions: :func:`incomplete_beta` (the regularised incomplete beta function, by a continued
  fraction), :func:`t_cdf`, :func:`t_quantile`, :func:`beta_quantile` (inverted by bisection);
- intervals of one line's per-seed values: :func:`t_interval` (Student's t), :func:`binomial_interval`
  (exact Clopper-Pearson for k of n), :func:`shown_interval` (NaN where a table has one value).

The t distribution and :func:`t_interval` stay for display only: no verdict is decided by them.

The exact tests built beside these are in :mod:`pcnn_explore.verdicts.statistics`, which also
re-exports every name here.
"""
from __future__ import annotations

import math
from typing import Sequence

__all__ = ["incomplete_beta", "t_cdf", "t_quantile", "beta_quantile", "t_interval", "shown_interval",
           "binomial_interval"]

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
