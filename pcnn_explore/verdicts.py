"""Verdicts decided by statistics: the seed is the unit, and an exact test decides where it can.

Every agent claim is decided on per-seed values (one number per independent run: a success rate,
a deep-sea score, an episode count), never on episodes pooled across seeds as if independent.

Decision rule (every verdict function). The one-sided p of the test decides, at
``alpha = (1 - level) / 2`` in each direction (0.025 each way at ``level = 0.95``):

- ``agrees`` when the claimed direction's p <= alpha;
- ``differs`` when the opposite direction's p <= alpha;
- ``inconclusive`` otherwise;
- ``not testable at this profile`` when the smallest p the test can give with these sample sizes
  (:func:`min_p`) is above alpha: too few seeds for the test ever to reach the level.

The interval printed is the two-sided ``level`` interval from the same test (the shifts it does not
reject at alpha in either direction), so p and interval never disagree. Per-seed values that differ
by float noise (within ``1e-9`` of the largest |value|, or ``1e-12`` absolute) count as equal.

Exact tests (pure functions):

- :func:`sign_flip_p`, :func:`sign_flip_interval`: the paired sign-flip permutation test of a mean
  difference and its inversion (all 2^n sign patterns, n <= 20);
- :func:`permutation_p`: the exact two-sample permutation test (all splits, at most 200,000);
- :func:`fisher_exact_p`: Fisher's exact test of two shares "k of n seeds";
- :func:`min_p`, :func:`seeds_needed`: the smallest p a test can give, and the fewest seeds per line
  for which it can reach a level.

Verdicts (each returns a :class:`Verdict`: word, estimate, interval, p, test, n, per-seed values, a
one-line sentence):

- :func:`paired_verdict`: a difference a - b paired by seed id, by the sign-flip test;
- :func:`solved_verdict`: solved seeds a against b by Fisher's exact test, each line with its
  Clopper-Pearson interval;
- :func:`difference_verdict`: a difference of continuous quantities (losses in nats): Student's t
  (paired by seed id when both sides ran the same seeds, in any order; else Welch), except where
  the values have no spread: then the exact test decides (sign flip when paired, permutation else);
- :func:`progress_verdict`: progress against a stated threshold (e.g. the random policy's success
  rate 2^-N), by the sign-flip test of values - threshold;
- :func:`share_verdict`: "k of n seeds" against a threshold on the exact Clopper-Pearson interval
  (with its exact binomial p);
- :func:`equivalence_verdict`: a claim of no effect within +-margin, two one-sided tests (TOST) at
  alpha each, which is the ``level`` interval lying inside (-margin, margin).

:func:`combine_verdicts` is the one rule that combines claim verdicts into a notebook's word.
The statistics themselves (distributions, intervals of one line, the exact tests) are pure
functions in :mod:`pcnn_explore.statistics`, importable from here too.
:data:`VERDICTS` is the report's vocabulary and :func:`word_of` its one reading, used by
:mod:`pcnn_explore.report.index`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from pcnn_explore.statistics import (  # (the statistics stay importable from here, as before)
    DIRECTIONS,
    MAX_SIGN_FLIP_N,
    MAX_SPLITS,
    TESTS,
    _direction,
    _finite,
    _invert,
    _level,
    _mean_sd,
    _noise,
    _permutation_tester,
    _values,
    beta_quantile,
    binomial_interval,
    fisher_exact_p,
    incomplete_beta,
    min_p,
    permutation_p,
    seeds_needed,
    shown_interval,
    sign_flip_interval,
    sign_flip_p,
    t_cdf,
    t_interval,
    t_quantile,
)

__all__ = ["VERDICTS", "VERDICT_COLOURS", "TESTS", "MAX_SIGN_FLIP_N", "MAX_SPLITS", "word_of", "Verdict",
           "incomplete_beta", "t_cdf", "t_quantile", "beta_quantile", "t_interval", "shown_interval", "binomial_interval",
           "sign_flip_p", "sign_flip_interval", "permutation_p", "fisher_exact_p", "min_p", "seeds_needed",
           "combine_verdicts", "paired_verdict", "solved_verdict", "difference_verdict", "progress_verdict",
           "share_verdict", "equivalence_verdict"]

#: the verdict words of the report, strongest first
VERDICTS = ("agrees", "partly", "differs", "inconclusive", "not testable at this profile")
#: each verdict word's colour in the report
VERDICT_COLOURS = {"agrees": "#1a7f37", "partly": "#b7791f", "differs": "#c62828", "inconclusive": "#6a4fb3",
                   "not testable at this profile": "#757575"}
_DIRECTIONS = DIRECTIONS
NOT_TESTABLE = VERDICTS[-1]


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
    values it came from (for a difference: ``values`` of a, ``values_b`` of b); ``sentence``: one line;
    ``p_value``: the one-sided p of the claimed direction (NaN where none); ``test``: the test that
    decided (e.g. ``"sign_flip"``, ``"fisher"``, ``"paired_t"``); ``n``: the seeds it used (pairs, or
    n_a + n_b for two lines); ``intervals``: per-line intervals where the test has them."""

    word: str
    estimate: float
    interval: tuple[float, float]
    level: float
    values: tuple[float, ...]
    values_b: tuple[float, ...] = ()
    method: str = ""
    sentence: str = ""
    p_value: float = math.nan
    test: str = ""
    n: int = 0
    intervals: tuple = ()


# ---------------------------------------------------------------------------------- combining
def combine_verdicts(words: Sequence[str]) -> str:
    """One word for several claim verdicts: every one ``agrees`` -> ``agrees``; some agree (or partly
    agree) but not all -> ``partly``; otherwise, leaving out ``not testable at this profile``: nothing
    left -> ``not testable at this profile``, every one left ``differs`` -> ``differs``, else
    ``inconclusive``. ValueError for no words or a word not in :data:`VERDICTS`."""
    words = list(words)
    bad = [w for w in words if w not in VERDICTS]
    if not words or bad:
        raise ValueError(f"combine_verdicts needs one or more verdict words of {VERDICTS}, got {words!r}"
                         + (f" ({bad} not among them)" if bad else ""))
    if all(w == "agrees" for w in words):
        return "agrees"
    if any(w in ("agrees", "partly") for w in words):
        return "partly"
    left = [w for w in words if w != NOT_TESTABLE]
    if not left:
        return NOT_TESTABLE
    return "differs" if all(w == "differs" for w in left) else "inconclusive"


# ----------------------------------------------------------------------------------- verdicts
def _decide(p_claim: float, p_other: float, smallest: float, alpha: float) -> str:
    if smallest > alpha:
        return NOT_TESTABLE
    return "agrees" if p_claim <= alpha else "differs" if p_other <= alpha else "inconclusive"


def _fmt(x: float) -> str:
    return f"{x:.3g}"


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


def _snap_differences(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, bool]:
    """(a - b with float noise rounded away, whether the differences have no spread). Without spread
    every difference becomes their mean (0 when that is noise)."""
    tol = _noise(a, b)
    d = a - b
    if float(d.max() - d.min()) <= tol:
        m = float(d.mean())
        return np.full(d.size, 0.0 if abs(m) <= tol else m), True
    return np.where(np.abs(d) <= tol, 0.0, d), False


def _fmt_interval(low: float, high: float) -> str:
    return f"[{_fmt(low)}, {_fmt(high)}]"


def _sign_flip_verdict(d: np.ndarray, direction: str, level: float, claim: str, va, vb, n_text: str) -> Verdict:
    alpha = (1.0 - level) / 2.0
    other = "less" if direction == "greater" else "greater"
    p, q = sign_flip_p(d, direction), sign_flip_p(d, other)
    word = _decide(p, q, min_p("sign_flip", d.size), alpha)
    low, high = sign_flip_interval(d, level)
    estimate = float(d.mean())
    method = f"paired sign flip over {n_text}"
    want = ">" if direction == "greater" else "<"
    sentence = (f"{word}: {claim} = {_fmt(estimate)}, {level:.0%} interval {_fmt_interval(low, high)} ({method}), "
                f"exact one-sided p = {_fmt(p)} (the opposite's {_fmt(q)}, min p {_fmt(2.0 ** -d.size)}); "
                f"the claim is {claim} {want} 0")
    return Verdict(word, estimate, (low, high), level, tuple(map(float, va)), tuple(map(float, vb)), method, sentence,
                   p_value=p, test="sign_flip", n=int(d.size))


def paired_verdict(values_a: Mapping[int, float], values_b: Mapping[int, float], direction: str = "greater",
                   level: float = 0.95, claim: str = "a - b") -> Verdict:
    """Decide the claim mean(a - b) > 0 (``direction="greater"``) or < 0 (``"less"``) on per-seed
    values paired by seed id (the mapping keys, in any order), by the exact sign-flip test of the
    differences (:func:`sign_flip_p`, :func:`sign_flip_interval`); the module's decision rule. At 0.95
    it needs 6 seeds to be testable. ValueError for different seed sets (naming the seeds missing on
    each side) or fewer than 2 seeds.

    >>> paired_verdict({s: 1.0 for s in range(10)}, {s: 0.0 for s in range(10)}).p_value == 2 ** -10
    True
    """
    direction, level = _direction(direction), _level(level)
    seeds, a, b = _paired_by_seed(values_a, values_b)
    d, _ = _snap_differences(a, b)
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
    10 of 10 against 0 of 10 agrees (p = 1 / C(20, 10)); 2 of 2 against 0 of 2 is not testable
    (min p = 1 / C(4, 2) = 1/6)."""
    direction, level = _direction(direction), _level(level)
    sa, sb = _solved("solved_a", solved_a), _solved("solved_b", solved_b)
    (k_a, n_a), (k_b, n_b) = (sum(sa), len(sa)), (sum(sb), len(sb))
    other = "less" if direction == "greater" else "greater"
    p, q = fisher_exact_p(k_a, n_a, k_b, n_b, direction), fisher_exact_p(k_a, n_a, k_b, n_b, other)
    smallest = min_p("fisher", n_a, n_b)
    word = _decide(p, q, smallest, (1.0 - level) / 2.0)
    ia, ib = binomial_interval(k_a, n_a, level), binomial_interval(k_b, n_b, level)
    want = ">" if direction == "greater" else "<"
    sentence = (f"{word}: {claim}: {k_a}/{n_a} {_fmt_interval(*ia)} vs {k_b}/{n_b} {_fmt_interval(*ib)} "
                f"({level:.0%} Clopper-Pearson), Fisher exact one-sided p = {_fmt(p)} (the opposite's {_fmt(q)}, "
                f"min p {_fmt(smallest)}); the claim is share a {want} share b")
    return Verdict(word, k_a / n_a - k_b / n_b, (math.nan, math.nan), level, tuple(map(float, sa)),
                   tuple(map(float, sb)), "Fisher exact", sentence, p_value=p, test="fisher", n=n_a + n_b,
                   intervals=(ia, ib))


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
    want = ">" if direction == "greater" else "<"
    sentence = (f"{word}: {claim} = {_fmt(estimate)}, {level:.0%} interval {_fmt_interval(low, high)} ({method}), "
                f"exact one-sided p = {_fmt(p)} (the opposite's {_fmt(q)}, min p {_fmt(smallest)}); "
                f"the claim is {claim} {want} 0")
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


def progress_verdict(values: Sequence[float], threshold: float, level: float = 0.95,
                     claim: str = "mean") -> Verdict:
    """Decide a claim of progress, mean(values) > ``threshold`` (e.g. the random policy's success rate
    2^-N), by the exact sign-flip test of values - threshold and the module's rule: ``agrees`` when it
    shows the mean above, ``differs`` when it shows it below, ``not testable at this profile`` with
    too few seeds (5 or fewer at 0.95: [0, 0] against 2^-10 is not testable, ten zeros differ).
    ``interval``: the sign-flip ``level`` interval of the mean; the sentence adds the t interval where
    the values have spread."""
    level = _level(level)
    if not math.isfinite(float(threshold)):
        raise ValueError(f"threshold must be a finite number, got {threshold}")
    threshold = float(threshold)
    v = np.asarray(_values("values", values))
    alpha = (1.0 - level) / 2.0
    tol = _noise(v, threshold)
    flat = float(v.max() - v.min()) <= tol
    x = np.full(v.size, float(v.mean())) if flat else v
    p, q = sign_flip_p(x, "greater", threshold), sign_flip_p(x, "less", threshold)
    word = _decide(p, q, min_p("sign_flip", v.size), alpha)
    low, high = sign_flip_interval(x, level)
    estimate = float(v.mean())
    t_text = "" if flat else "; t interval {} ".format(_fmt_interval(*t_interval(v, level)))
    sentence = (f"{word}: {claim} = {_fmt(estimate)} over {v.size} seeds, {level:.0%} interval "
                f"{_fmt_interval(low, high)} (sign flip{t_text.rstrip()}) against the threshold {_fmt(threshold)}, "
                f"exact one-sided p = {_fmt(p)} (below it: {_fmt(q)}, min p {_fmt(2.0 ** -v.size)})")
    return Verdict(word, estimate, (low, high), level, tuple(map(float, v)), (), f"sign flip over {v.size} seeds",
                   sentence, p_value=p, test="sign_flip", n=int(v.size))


def _binomial_tail(k: int, n: int, theta: float, direction: str) -> float:
    """P(X >= k) (``"greater"``) or P(X <= k) for X ~ Binomial(n, theta)."""
    ks = range(k, n + 1) if direction == "greater" else range(0, k + 1)
    return float(min(1.0, math.fsum(math.comb(n, j) * theta ** j * (1.0 - theta) ** (n - j) for j in ks)))


def share_verdict(k: int, n: int, threshold: float, level: float = 0.95, claim: str = "share of seeds") -> Verdict:
    """Decide a claim of progress on "k of n seeds" (e.g. seeds that solved a size) with the exact
    Clopper-Pearson interval of the share: ``agrees`` above ``threshold``, ``differs`` when its top is
    at or below it, ``not testable at this profile`` when n is too small for any k to do either
    (5 of 5 cannot show a share above 0.5 at 95%: lower bound 0.478; 0 of 5 not one below it: upper
    bound 0.522), else ``inconclusive``. ``p_value``: the exact binomial P(X >= k) at the threshold
    (<= (1 - level) / 2 exactly when the interval lies above it). ``values``: the n per-seed outcomes
    (k ones, then zeros)."""
    level = _level(level)
    low, high = binomial_interval(k, n, level)
    if not math.isfinite(float(threshold)):
        raise ValueError(f"threshold must be a finite number, got {threshold}")
    threshold = float(threshold)
    if binomial_interval(n, n, level)[0] <= threshold and binomial_interval(0, n, level)[1] > threshold:
        word = NOT_TESTABLE
    else:
        word = "agrees" if low > threshold else "differs" if high <= threshold else "inconclusive"
    theta = min(max(threshold, 0.0), 1.0)
    p = _binomial_tail(k, n, theta, "greater")
    sentence = (f"{word}: {claim} = {k}/{n}, {level:.0%} exact interval [{_fmt(low)}, {_fmt(high)}] against the "
                f"threshold {_fmt(threshold)}, exact binomial p = {_fmt(p)}")
    return Verdict(word, k / n, (low, high), level, tuple([1.0] * k + [0.0] * (n - k)), (), "Clopper-Pearson", sentence,
                   p_value=p, test="binomial", n=n)


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
