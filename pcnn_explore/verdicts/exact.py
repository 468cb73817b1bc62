"""Verdicts decided by an exact test on per-seed values (the seed is the unit), by the decision rule
of :mod:`pcnn_explore.verdicts`:

- :func:`paired_verdict`: a difference a - b paired by seed id, by the sign-flip test;
- :func:`solved_verdict`: solved seeds a against b by Fisher's exact test, each line with its
  Clopper-Pearson interval;
- :func:`progress_verdict`: progress against a stated threshold (e.g. the random policy's success
  rate 2^-N), by the sign-flip test of values - threshold;
- :func:`share_verdict`: "k of n seeds" against a threshold on the exact Clopper-Pearson interval
  (with its exact binomial p);
- :func:`leaves_floor`: whether a line leaves the floor (the sign-flip test shows it above the floor
  value at one-sided (1 - level) / 2), the positive control of equivalence and no-progress claims.

A claim rests on at least :data:`~pcnn_explore.verdicts.statistics.MIN_SEEDS` (6) seeds per line;
with fewer it is ``not testable: too few seeds at this profile``. Each returns a :class:`~pcnn_explore.verdicts.words.Verdict`.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from pcnn_explore.verdicts.statistics import (
    _SignFlip,
    _direction,
    _finite,
    _in_range,
    _level,
    _noise,
    _values,
    binomial_interval,
    fisher_exact_p,
    min_p,
    monte_carlo_error,
    seeds_needed,
)
from pcnn_explore.verdicts.words import (
    NOT_TESTABLE,
    not_testable,
    TOO_FEW_SEEDS,
    Verdict,
    _decide,
    _exact_sentence,
    _fmt,
    _fmt_interval,
    _p_note,
    _too_few,
)

__all__ = ["paired_verdict", "solved_verdict", "progress_verdict", "share_verdict", "leaves_floor"]


# ----------------------------------------------------------------------------------- verdicts
def _by_seed(name: str, values: Mapping[int, float]) -> dict[int, float]:
    if not isinstance(values, Mapping):
        raise ValueError(f"{name} must map seed id -> per-seed value (a dict), got {type(values).__name__}")
    return dict(values)


def _paired_by_seed(values_a: Mapping, values_b: Mapping) -> tuple[list, np.ndarray, np.ndarray]:
    """(seeds in a's order, a, b in those seeds' order); ValueError naming the seeds one side misses."""
    a, b = _by_seed("values_a", values_a), _by_seed("values_b", values_b)
    only_a, only_b = [s for s in a if s not in b], [s for s in b if s not in a]
    if only_a or only_b:
        raise ValueError(f"a paired test needs the same seeds on both sides: seeds {only_a} missing in values_b, "
                         f"{only_b} missing in values_a; run the missing seeds or leave them out of both")
    seeds = list(a)
    return seeds, _finite("values_a", [a[s] for s in seeds], 2), _finite("values_b", [b[s] for s in seeds], 2)


def _snap_differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a - b, each difference within the float noise of the values (1e-9 of the largest |value|) set to 0;
    ValueError when the differences overflow float64 or their magnitudes sum beyond
    :data:`~pcnn_explore.verdicts.statistics.MAX_TOTAL`."""
    with np.errstate(over="ignore"):
        d = _in_range("values_a - values_b", a - b)
    return np.where(np.abs(d) <= _noise(a, b), 0.0, d)


def _sign_flip_verdict(d: np.ndarray, direction: str, level: float, claim: str, va, vb, n_text: str) -> Verdict:
    alpha = (1.0 - level) / 2.0
    other = "less" if direction == "greater" else "greater"
    test = _SignFlip(d)
    p, q = test.p(direction), test.p(other)
    needed = seeds_needed("sign_flip", level)
    word = _decide(p, q, min_p("sign_flip", d.size), alpha, d.size, needed)
    low, high = test.interval(level)
    estimate = float(d.mean())
    estimate = 0.0 if abs(estimate) <= _noise(va, vb) else estimate
    method = f"paired sign flip over {n_text}"
    head = _too_few(d.size, needed) if word == NOT_TESTABLE else ""
    sentence = _exact_sentence(word, claim, estimate, level, low, high, method, p, q, 2.0 ** -d.size, direction,
                               test.draws, head)
    return Verdict(word, estimate, (low, high), level, tuple(map(float, va)), tuple(map(float, vb)), method, sentence,
                   p_value=p, test="sign_flip", n=int(d.size), reason=TOO_FEW_SEEDS if head else "",
                   draws=test.draws, mc_error=monte_carlo_error(p, test.draws))


def paired_verdict(values_a: Mapping[int, float], values_b: Mapping[int, float], direction: str = "greater",
                   level: float = 0.95, claim: str = "a - b") -> Verdict:
    """Decide the claim mean(a - b) > 0 (``direction="greater"``) or < 0 (``"less"``) on per-seed
    values paired by seed id (the mapping keys, in any order), by the exact sign-flip test of the
    differences (:func:`sign_flip_p`, :func:`sign_flip_interval`: exact up to 20 seeds, a seeded Monte
    Carlo beyond, named in the sentence with its standard error); the module's decision rule. It
    needs 6 seeds to be testable (``not testable: too few seeds at this profile``). ValueError for different seed sets (naming the seeds missing on
    each side) or fewer than 2 seeds.

    >>> paired_verdict({s: 1.0 for s in range(10)}, {s: 0.0 for s in range(10)}).p_value == 2 ** -10
    True
    """
    direction, level = _direction(direction), _level(level)
    seeds, a, b = _paired_by_seed(values_a, values_b)
    d = _snap_differences(a, b)
    return _sign_flip_verdict(d, direction, level, claim, a, b, f"{d.size} seeds")


def _solved(name: str, solved: Mapping[int, bool]) -> list[bool]:
    out = []
    for seed, x in _by_seed(name, solved).items():
        if isinstance(x, (bool, np.bool_)) or (isinstance(x, (int, np.integer)) and x in (0, 1)):
            out.append(bool(x))
        else:
            raise ValueError(f"{name}: seed {seed} must map to True / False (solved or not), got {x!r}")
    if not out:
        raise ValueError(f"{name}: needs at least one seed")
    return out


def solved_verdict(solved_a: Mapping[int, bool], solved_b: Mapping[int, bool], direction: str = "greater",
                   level: float = 0.95, claim: str = "solved a - b") -> Verdict:
    """Decide "line a solves on a larger share of seeds than b" (``"greater"``; ``"less"``: smaller)
    from per-seed solved flags (seed id -> bool; the lines' seeds need not match), by Fisher's exact
    test (:func:`fisher_exact_p`) and the module's decision rule. ``estimate``: share a - share b;
    ``interval``: (nan, nan), Fisher's test gives no interval of that difference; ``intervals``: each
    line's Clopper-Pearson ``level`` interval of its share; ``n``: n_a + n_b.
    10 of 10 against 0 of 10 agrees (p = 1 / C(20, 10)); fewer than 6 seeds on a line is not testable
    (too few seeds at this profile), whatever Fisher's arithmetic allows."""
    direction, level = _direction(direction), _level(level)
    sa, sb = _solved("solved_a", solved_a), _solved("solved_b", solved_b)
    (k_a, n_a), (k_b, n_b) = (sum(sa), len(sa)), (sum(sb), len(sb))
    other = "less" if direction == "greater" else "greater"
    p, q = fisher_exact_p(k_a, n_a, k_b, n_b, direction), fisher_exact_p(k_a, n_a, k_b, n_b, other)
    smallest = min_p("fisher", n_a, n_b)
    needed = seeds_needed("fisher", level)
    word = _decide(p, q, smallest, (1.0 - level) / 2.0, min(n_a, n_b), needed)
    ia, ib = binomial_interval(k_a, n_a, level), binomial_interval(k_b, n_b, level)
    want = ">" if direction == "greater" else "<"
    head = _too_few(min(n_a, n_b), needed) if word == NOT_TESTABLE else word
    sentence = (f"{head}: {claim}: {k_a}/{n_a} {_fmt_interval(*ia)} vs {k_b}/{n_b} {_fmt_interval(*ib)} "
                f"({level:.0%} Clopper-Pearson), Fisher exact one-sided p = {_fmt(p)} (the opposite's {_fmt(q)}, "
                f"min p {_fmt(smallest)}); the claim is share a {want} share b")
    return Verdict(word, k_a / n_a - k_b / n_b, (math.nan, math.nan), level, tuple(map(float, sa)),
                   tuple(map(float, sb)), "Fisher exact", sentence, p_value=p, test="fisher", n=n_a + n_b,
                   intervals=(ia, ib), reason=TOO_FEW_SEEDS if word == NOT_TESTABLE else "")


def progress_verdict(values: Sequence[float], threshold: float, level: float = 0.95,
                     claim: str = "mean") -> Verdict:
    """Decide a claim of progress, mean(values) > ``threshold`` (e.g. the random policy's success rate
    2^-N), by the sign-flip test of values - threshold (exact up to 20 seeds, a seeded Monte Carlo
    beyond) and the module's rule: ``agrees`` when it shows the mean above, ``differs`` when it shows
    it below, ``not testable: too few seeds at this profile`` with fewer than 6 seeds ([0, 0] against
    2^-10 is not testable, ten zeros differ). Float noise is relative to the values and the threshold:
    ten zeros against 2^-45 differ as they do against 2^-10. ``interval``: the sign-flip ``level``
    interval of the mean."""
    level = _level(level)
    if not math.isfinite(float(threshold)):
        raise ValueError(f"threshold must be a finite number, got {threshold}")
    threshold = float(threshold)
    v = np.asarray(_values("values", values))
    alpha = (1.0 - level) / 2.0
    test = _SignFlip(v, extra_scale=threshold, name="values")
    p, q = test.p("greater", threshold), test.p("less", threshold)
    needed = seeds_needed("sign_flip", level)
    word = _decide(p, q, min_p("sign_flip", v.size), alpha, v.size, needed)
    low, high = test.interval(level)
    estimate = float(v.mean())
    head = _too_few(v.size, needed) if word == NOT_TESTABLE else word
    sentence = (f"{head}: {claim} = {_fmt(estimate)} over {v.size} seeds, {level:.0%} interval "
                f"{_fmt_interval(low, high)} (sign flip) against the threshold {_fmt(threshold)}, "
                f"one-sided p = {_fmt(p)} ({_p_note(p, test.draws)}; below it: {_fmt(q)}, min p {_fmt(2.0 ** -v.size)})")
    return Verdict(word, estimate, (low, high), level, tuple(map(float, v)), (), f"sign flip over {v.size} seeds",
                   sentence, p_value=p, test="sign_flip", n=int(v.size),
                   reason=TOO_FEW_SEEDS if word == NOT_TESTABLE else "", draws=test.draws, mc_error=monte_carlo_error(p, test.draws))


def leaves_floor(values: Sequence[float], floor: float, level: float = 0.95) -> bool:
    """Whether a line leaves the floor: the sign-flip test of values - ``floor`` (per-seed values, in
    their units; e.g. success rate 0 on DeepSea) shows the mean above the floor at one-sided
    (1 - level) / 2 on at least 6 seeds (:func:`progress_verdict` agrees).

    >>> leaves_floor([0.0] * 9 + [0.95], 0.0), leaves_floor([0.5] * 6, 0.0)
    (False, True)
    """
    return progress_verdict(values, floor, level).word == "agrees"


def _binomial_term(j: int, n: int, theta: float) -> float:
    """P(X = j) for X ~ Binomial(n, theta) in log space (lgamma), for n whose C(n, j) is beyond float64."""
    if theta in (0.0, 1.0):
        return float(j == (0 if theta == 0.0 else n))
    return math.exp(math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * math.log(theta)
                    + (n - j) * math.log1p(-theta))


def _binomial_tail(k: int, n: int, theta: float, direction: str) -> float:
    """P(X >= k) (``"greater"``) or P(X <= k) for X ~ Binomial(n, theta); any n (C(n, j) as a float while
    it is one, about n <= 1029; beyond, each term in log space)."""
    ks = range(k, n + 1) if direction == "greater" else range(0, k + 1)
    try:
        total = math.fsum(math.comb(n, j) * theta ** j * (1.0 - theta) ** (n - j) for j in ks)
    except OverflowError:
        total = math.fsum(_binomial_term(j, n, theta) for j in ks)
    return float(min(1.0, total))


def share_verdict(k: int, n: int, threshold: float, level: float = 0.95, claim: str = "share of seeds") -> Verdict:
    """Decide a claim of progress on "k of n seeds" (e.g. seeds that solved a size) with the exact
    Clopper-Pearson interval of the share: ``agrees`` above ``threshold`` (a share in [0, 1], else
    ValueError), ``differs`` when its top is at or below it, ``not testable: too few seeds at this
    profile`` with fewer than 6 seeds or when n is too small for any k to do either (6 of 6 cannot
    show a share above 0.6 at 95%: lower bound 0.541), else ``inconclusive``. ``p_value``: the exact binomial P(X >= k) at the threshold
    (<= (1 - level) / 2 exactly when the interval lies above it). ``values``: the n per-seed outcomes
    (k ones, then zeros)."""
    level = _level(level)
    if not (math.isfinite(float(threshold)) and 0.0 <= float(threshold) <= 1.0):
        raise ValueError(f"threshold must be a share in [0, 1] (e.g. the random policy's chance), got {threshold}")
    threshold = float(threshold)
    low, high = binomial_interval(k, n, level)
    needed = seeds_needed("sign_flip", level)
    if n < needed or (binomial_interval(n, n, level)[0] <= threshold and binomial_interval(0, n, level)[1] > threshold):
        word = NOT_TESTABLE
    else:
        word = "agrees" if low > threshold else "differs" if high <= threshold else "inconclusive"
    p = _binomial_tail(k, n, threshold, "greater")
    head = not_testable(TOO_FEW_SEEDS, f"needs {needed} seeds and a size whose every share could decide, has {n}") \
        if word == NOT_TESTABLE else word
    sentence = (f"{head}: {claim} = {k}/{n}, {level:.0%} exact interval [{_fmt(low)}, {_fmt(high)}] against the "
                f"threshold {_fmt(threshold)}, exact binomial p = {_fmt(p)}")
    return Verdict(word, k / n, (low, high), level, tuple([1.0] * k + [0.0] * (n - k)), (), "Clopper-Pearson", sentence,
                   p_value=p, test="binomial", n=n, reason=TOO_FEW_SEEDS if word == NOT_TESTABLE else "")
