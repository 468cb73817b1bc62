"""Verdicts on a difference of continuous quantities (e.g. losses in nats) between two lines' per-seed
values, by the decision rule of :mod:`pcnn_explore.verdicts`:

- :func:`difference_verdict`: a > b (or a < b): Student's t (paired by seed id when both sides ran
  the same seeds, in any order; else Welch), except where the values have no spread: then the exact
  test decides (sign flip when paired, permutation else);
- :func:`equivalence_verdict`: a claim of no effect within +-margin, two one-sided tests (TOST) at
  alpha each, which is the ``level`` interval lying inside (-margin, margin).

Each returns a :class:`~pcnn_explore.verdicts.words.Verdict`.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from pcnn_explore.verdicts.statistics import (
    _direction,
    _invert,
    _level,
    _mean_sd,
    _noise,
    _permutation_tester,
    _values,
    min_p,
    sign_flip_interval,
    sign_flip_p,
    t_cdf,
    t_quantile,
)
from pcnn_explore.verdicts.words import NOT_TESTABLE, Verdict, _decide, _exact_sentence, _fmt
from pcnn_explore.verdicts.exact import _sign_flip_verdict, _snap_differences

__all__ = ["difference_verdict", "equivalence_verdict"]


def _seeded(values_a, values_b, seeds_a, seeds_b) -> tuple[np.ndarray, np.ndarray, bool]:
    """(a, b, paired): paired when both sides ran the same set of seeds (b reordered to a's seeds)."""
    va, vb = _values("values_a", values_a), _values("values_b", values_b)
    if (seeds_a is None) != (seeds_b is None):
        raise ValueError("pass the seeds of both sides (a paired comparison) or of neither")
    if seeds_a is None:
        return np.asarray(va), np.asarray(vb), False
    sa, sb = list(seeds_a), list(seeds_b)
    for name, v, s in (("values_a", va, sa), ("values_b", vb, sb)):
        if len(s) != len(v):
            raise ValueError(f"{name}: {len(v)} values but {len(s)} seeds")
        if len(set(s)) != len(s):
            raise ValueError(f"{name}: seed ids {sorted({x for x in s if s.count(x) > 1})} appear twice; "
                             "give one value per seed")
    if set(sa) != set(sb):
        return np.asarray(va), np.asarray(vb), False
    of_b = dict(zip(sb, vb))
    return np.asarray(va), np.asarray([of_b[s] for s in sa]), True


def _t_parts(a: np.ndarray, b: np.ndarray, paired: bool) -> tuple[float, float, float, str]:
    """(estimate, standard error, degrees of freedom, method) of mean(a) - mean(b), paired or Welch."""
    if paired:
        m, s = _mean_sd(list(a - b))
        return m, s / math.sqrt(a.size), a.size - 1.0, f"paired t over {a.size} seeds"
    (ma, sa), (mb, sb) = _mean_sd(list(a)), _mean_sd(list(b))
    qa, qb = sa * sa / a.size, sb * sb / b.size
    df = (qa + qb) ** 2 / ((qa * qa / (a.size - 1) if qa else 0.0) + (qb * qb / (b.size - 1) if qb else 0.0))
    return ma - mb, math.sqrt(qa + qb), df, f"Welch t ({a.size} and {b.size} seeds)"


def _no_spread(a: np.ndarray, b: np.ndarray) -> bool:
    tol = _noise(a, b)
    return float(a.max() - a.min()) <= tol and float(b.max() - b.min()) <= tol


def _permutation_verdict(a: np.ndarray, b: np.ndarray, direction: str, level: float, claim: str) -> Verdict:
    alpha = (1.0 - level) / 2.0
    other = "less" if direction == "greater" else "greater"
    p_of = _permutation_tester(a, b)
    p, q = p_of(direction, 0.0), p_of(other, 0.0)
    smallest = min_p("permutation", a.size, b.size)
    word = _decide(p, q, smallest, alpha)
    low, high = (-math.inf, math.inf) if smallest > alpha else _invert(
        p_of, float(a.min() - b.max()), float(a.max() - b.min()), alpha)
    estimate = float(a.mean() - b.mean())
    estimate = 0.0 if abs(estimate) <= _noise(a, b) else estimate
    method = f"exact permutation ({a.size} and {b.size} seeds, no spread)"
    sentence = _exact_sentence(word, claim, estimate, level, low, high, method, p, q, smallest, direction)
    return Verdict(word, estimate, (low, high), level, tuple(map(float, a)), tuple(map(float, b)), method, sentence,
                   p_value=p, test="permutation", n=int(a.size + b.size))


def difference_verdict(values_a: Sequence[float], values_b: Sequence[float], direction: str = "greater",
                       level: float = 0.95, seeds_a: Sequence[int] | None = None,
                       seeds_b: Sequence[int] | None = None, claim: str = "a - b") -> Verdict:
    """Decide the claim that a > b (``direction="greater"``) or a < b (``"less"``) on per-seed values
    of a continuous quantity (e.g. losses in nats).

    Paired when ``seeds_a`` and ``seeds_b`` hold the same set of seed ids (in any order: b is reordered
    to a's seeds), else unpaired. With spread: Student's t, paired over the seed-wise differences or
    Welch's; ``agrees`` when the ``level`` t interval of mean(a) - mean(b) excludes 0 in the claimed
    direction, ``differs`` the other way, else ``inconclusive`` (``p_value``: the t test's one-sided p
    of the claim, which decides the same). Without spread (every difference, or every value of each
    side, equal up to float noise) no t interval is formed: the exact test decides by the module's
    rule, the sign flip when paired (:func:`sign_flip_p`) and the two-sample permutation test else
    (:func:`permutation_p`); e.g. [1, 1] against [0, 0] on seeds [0, 1] is not testable (min p 1/4).
    ValueError for fewer than 2 values on a side."""
    direction, level = _direction(direction), _level(level)
    a, b, paired = _seeded(values_a, values_b, seeds_a, seeds_b)
    if paired:
        d, flat = _snap_differences(a, b)
        if flat:
            return _sign_flip_verdict(d, direction, level, claim, a, b, f"{d.size} seeds, no spread")
    elif _no_spread(a, b):
        return _permutation_verdict(a, b, direction, level, claim)
    estimate, se, df, method = _t_parts(a, b, paired)
    half = t_quantile(0.5 + level / 2.0, df) * se
    low, high = estimate - half, estimate + half
    sign = 1.0 if direction == "greater" else -1.0
    p = 1.0 - t_cdf(sign * estimate / se, df)
    if (low > 0 and sign > 0) or (high < 0 and sign < 0):
        word = "agrees"
    elif (high < 0 and sign > 0) or (low > 0 and sign < 0):
        word = "differs"
    else:
        word = "inconclusive"
    want = ">" if sign > 0 else "<"
    sentence = (f"{word}: {claim} = {_fmt(estimate)}, {level:.0%} interval [{_fmt(low)}, {_fmt(high)}] ({method}), "
                f"one-sided p = {_fmt(p)}; the claim is {claim} {want} 0")
    return Verdict(word, estimate, (low, high), level, tuple(map(float, a)), tuple(map(float, b)), method, sentence,
                   p_value=p, test="paired_t" if paired else "welch_t",
                   n=int(a.size if paired else a.size + b.size))


def equivalence_verdict(values_a: Sequence[float], values_b: Sequence[float], margin: float, level: float = 0.95,
                        seeds_a: Sequence[int] | None = None, seeds_b: Sequence[int] | None = None,
                        claim: str = "a - b", *, exact: bool = True) -> Verdict:
    """Decide a claim of no effect: mean(a) - mean(b) within +-``margin`` (a positive number in the
    values' units), by two one-sided tests (TOST), each at alpha = (1 - level) / 2: ``agrees`` when
    both "mean < margin" and "mean > -margin" are shown, which is the ``level`` interval lying inside
    (-margin, margin); ``differs`` when the interval lies wholly outside [-margin, margin]; ``not
    testable at this profile`` when the test can never reach alpha; else ``inconclusive``.

    Paired (``seeds_a``, ``seeds_b`` the same set of seed ids, in any order) with ``exact=True``: two
    sign-flip tests against +margin and -margin (:func:`sign_flip_p`, 6 seeds needed at 0.95). Else
    (unpaired, or ``exact=False`` for continuous quantities such as losses in nats): the t interval,
    paired or Welch as in :func:`difference_verdict`, except without spread, where the exact test (sign
    flip, or two permutation tests when unpaired) decides. ``p_value``: the TOST p, the larger of the two."""
    if not (math.isfinite(float(margin)) and margin > 0):
        raise ValueError(f"margin must be a positive number (the largest difference that counts as none), got {margin}")
    margin, level = float(margin), _level(level)
    alpha = (1.0 - level) / 2.0
    a, b, paired = _seeded(values_a, values_b, seeds_a, seeds_b)
    if paired:
        d, flat = _snap_differences(a, b)
    if paired and (exact or flat):
        p_of, smallest = (lambda direction, s: sign_flip_p(d, direction, s)), min_p("sign_flip", d.size)
        low, high = sign_flip_interval(d, level)
        estimate, test = float(d.mean()), "sign_flip_tost"
        method = f"two one-sided sign flips over {d.size} seeds" + (", no spread" if flat else "")
    elif not paired and _no_spread(a, b):
        p_of, smallest = _permutation_tester(a, b), min_p("permutation", a.size, b.size)
        low, high = (-math.inf, math.inf) if smallest > alpha else _invert(
            p_of, float(a.min() - b.max()), float(a.max() - b.min()), alpha)
        estimate, test = float(a.mean() - b.mean()), "permutation_tost"
        method = f"two one-sided permutation tests ({a.size} and {b.size} seeds, no spread)"
    else:
        p_of = None
        estimate, se, df, method = _t_parts(a, b, paired)
        half = t_quantile(0.5 + level / 2.0, df) * se
        low, high = estimate - half, estimate + half
        p_upper, p_lower = t_cdf((estimate - margin) / se, df), 1.0 - t_cdf((estimate + margin) / se, df)
        if -margin < low and high < margin:
            word = "agrees"
        elif low > margin or high < -margin:
            word = "differs"
        else:
            word = "inconclusive"
        test = "paired_t_tost" if paired else "welch_t_tost"
    if p_of is not None:
        p_upper, p_lower = p_of("less", margin), p_of("greater", -margin)
        if smallest > alpha:
            word = NOT_TESTABLE
        elif p_upper <= alpha and p_lower <= alpha:
            word = "agrees"
        elif p_of("greater", margin) <= alpha or p_of("less", -margin) <= alpha:
            word = "differs"
        else:
            word = "inconclusive"
    p = max(p_upper, p_lower)
    sentence = (f"{word}: {claim} = {_fmt(estimate)}, {level:.0%} interval [{_fmt(low)}, {_fmt(high)}] ({method}) "
                f"against the margin +-{_fmt(margin)}, TOST p = {_fmt(p)}")
    return Verdict(word, estimate, (low, high), level, tuple(map(float, a)), tuple(map(float, b)), method, sentence,
                   p_value=p, test=test, n=int(a.size if paired else a.size + b.size))
