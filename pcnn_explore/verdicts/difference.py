"""Verdicts on a difference between two lines' per-seed values (e.g. losses in nats, success rates),
by the decision rule of :mod:`pcnn_explore.verdicts`; no t or Welch test decides:

- :func:`difference_verdict`: a > b (or a < b): the sign-flip test of the differences, paired by seed
  id when both sides ran the same seeds (in any order), else the two-sample permutation test;
- :func:`equivalence_verdict`: a claim of no effect within +-margin, two one-sided tests (TOST) of
  the same kind at alpha each, which is the ``level`` interval lying inside (-margin, margin);
  testable only when a positive control in the same runs leaves the floor.

Both tests enumerate where that is cheap (20 seeds, 200,000 splits) and beyond use a seeded Monte
Carlo of 200,000 draws, named in the sentence with its standard error. A claim rests on at least 6
seeds per line. Each returns a :class:`~pcnn_explore.verdicts.words.Verdict`.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from pcnn_explore.verdicts.exact import _sign_flip_verdict, _snap_differences, leaves_floor
from pcnn_explore.verdicts.statistics import (
    _SignFlip,
    _direction,
    _level,
    _noise,
    _permutation_tester,
    _values,
    min_p,
    monte_carlo_error,
    seeds_needed,
)
from pcnn_explore.verdicts.words import (
    LINES_DO_NOT_MOVE,
    NOT_TESTABLE,
    TOO_FEW_SEEDS,
    Verdict,
    _decide,
    _exact_sentence,
    _fmt,
    _p_note,
    _too_few,
    not_testable,
)

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


def _permutation_interval(p_of, a: np.ndarray, b: np.ndarray, alpha: float, smallest: float) -> tuple[float, float]:
    if smallest > alpha:
        return -math.inf, math.inf
    return p_of.interval(1.0 - 2.0 * alpha)


def _permutation_verdict(a: np.ndarray, b: np.ndarray, direction: str, level: float, claim: str) -> Verdict:
    alpha = (1.0 - level) / 2.0
    other = "less" if direction == "greater" else "greater"
    p_of = _permutation_tester(a, b)
    p, q = p_of(direction, 0.0), p_of(other, 0.0)
    smallest = min_p("permutation", a.size, b.size)
    needed = seeds_needed("permutation", level)
    word = _decide(p, q, smallest, alpha, min(a.size, b.size), needed)
    low, high = _permutation_interval(p_of, a, b, alpha, smallest)
    estimate = float(a.mean() - b.mean())
    estimate = 0.0 if abs(estimate) <= _noise(a, b) else estimate
    method = f"permutation test ({a.size} and {b.size} seeds)"
    head = _too_few(min(a.size, b.size), needed) if word == NOT_TESTABLE else ""
    sentence = _exact_sentence(word, claim, estimate, level, low, high, method, p, q, smallest, direction,
                               p_of.draws, head)
    return Verdict(word, estimate, (low, high), level, tuple(map(float, a)), tuple(map(float, b)), method, sentence,
                   p_value=p, test="permutation", n=int(a.size + b.size), reason=TOO_FEW_SEEDS if head else "",
                   draws=p_of.draws, mc_error=monte_carlo_error(p, p_of.draws))


def difference_verdict(values_a: Sequence[float], values_b: Sequence[float], direction: str = "greater",
                       level: float = 0.95, seeds_a: Sequence[int] | None = None,
                       seeds_b: Sequence[int] | None = None, claim: str = "a - b") -> Verdict:
    """Decide the claim that a > b (``direction="greater"``) or a < b (``"less"``) on per-seed values
    (e.g. losses in nats).

    Paired when ``seeds_a`` and ``seeds_b`` hold the same set of seed ids (in any order: b is reordered
    to a's seeds): the sign-flip test of the differences (:func:`sign_flip_p`); else unpaired: the
    two-sample permutation test (:func:`permutation_p`). Exact where enumeration is cheap, else a
    seeded Monte Carlo named in the sentence with its standard error; the module's decision rule,
    with spread or without (ten 1s against ten 0s agree, twelve against twelve too). Fewer than 6
    seeds per line: ``not testable: too few seeds at this profile`` ([1, 1, 1] against [0, 0, 1e-6]
    decides nothing). ValueError for fewer than 2 values on a side."""
    direction, level = _direction(direction), _level(level)
    a, b, paired = _seeded(values_a, values_b, seeds_a, seeds_b)
    if paired:
        return _sign_flip_verdict(_snap_differences(a, b), direction, level, claim, a, b, f"{a.size} seeds")
    return _permutation_verdict(a, b, direction, level, claim)


def _control_moves(a: np.ndarray, b: np.ndarray, control, floor, level: float) -> tuple[str, str]:
    """Whether the positive control (``control``, or the lines a and b themselves) leaves the floor:
    ("", "") when it does, else (the reason the claim is not testable, the words that say why):
    :data:`TOO_FEW_SEEDS` when a control line has fewer seeds than :func:`leaves_floor`'s sign-flip
    test needs (it could never be shown to leave), else :data:`LINES_DO_NOT_MOVE`."""
    lines = [a, b] if control is None else [np.asarray(_values("control", control))]
    if floor is None:
        floor = float(min(x.min() for x in [a, b, *lines]))
    floor = float(floor)
    if not math.isfinite(floor):
        raise ValueError(f"floor must be a finite number (the value of a line that does not move), got {floor}")
    if any(leaves_floor(x, floor, level) for x in lines):
        return "", ""
    needed = seeds_needed("sign_flip", level)
    short = min(x.size for x in lines)
    if short < needed:
        what = "a line needs" if control is None else "the positive control needs"
        return TOO_FEW_SEEDS, f"{what} {needed} seeds to show it leaves the floor, has {short}"
    what = "neither line" if control is None else "the positive control"
    return LINES_DO_NOT_MOVE, f"{what} leaves the floor {_fmt(floor)} at one-sided {(1.0 - level) / 2.0:g}"


def equivalence_verdict(values_a: Sequence[float], values_b: Sequence[float], margin: float, level: float = 0.95,
                        seeds_a: Sequence[int] | None = None, seeds_b: Sequence[int] | None = None,
                        claim: str = "a - b", *, control: Sequence[float] | None = None,
                        floor: float | None = None) -> Verdict:
    """Decide a claim of no effect: mean(a) - mean(b) within +-``margin`` (a positive number in the
    values' units), by two one-sided tests (TOST), each at alpha = (1 - level) / 2: ``agrees`` when
    both "mean < margin" and "mean > -margin" are shown, which is the ``level`` interval lying inside
    (-margin, margin); ``differs`` when one test shows the mean beyond a margin; else ``inconclusive``.
    Paired (``seeds_a``, ``seeds_b`` the same set of seed ids, in any order): two sign-flip tests of
    the differences against +margin and -margin; unpaired: two permutation tests.

    Two lines that do not move agree with anything: the claim is testable only when a positive control
    in the same runs leaves the floor (:func:`leaves_floor`: the sign-flip test shows it above
    ``floor`` at one-sided alpha). ``control``: the control's per-seed values (e.g. the bonus with MMC
    for "MMC alone makes no progress"); None: the two lines themselves, of which one must leave the
    floor (e.g. "c = 1 does as well as c = 0.1"). ``floor``: the value of a line that does not move, in
    the values' units (a success rate's 0); None: the smallest value of the lines and the control.
    Else ``not testable: the lines do not move``; with fewer than 6 seeds per line, or a positive
    control (given, or the lines) too short for its own test (6 seeds at 0.95, 8 at 0.99), ``not
    testable: too few seeds at this profile``. ``p_value``: the TOST p, the larger of the two.

    >>> equivalence_verdict([0.0] * 10, [0.0] * 10, 0.1, seeds_a=range(10), seeds_b=range(10)).sentence[:37]
    'not testable: the lines do not move ('
    """
    if not (math.isfinite(float(margin)) and margin > 0):
        raise ValueError(f"margin must be a positive number (the largest difference that counts as none), got {margin}")
    margin, level = float(margin), _level(level)
    alpha = (1.0 - level) / 2.0
    a, b, paired = _seeded(values_a, values_b, seeds_a, seeds_b)
    if paired:
        d = _snap_differences(a, b)
        test = _SignFlip(d, extra_scale=margin)
        p_of, draws = test.p, test.draws
        smallest, needed = min_p("sign_flip", d.size), seeds_needed("sign_flip", level)
        low, high = test.interval(level)
        estimate, kind = float(d.mean()), "sign_flip_tost"
        method = f"two one-sided sign flips over {d.size} seeds"
    else:
        p_of = _permutation_tester(a, b, extra_scale=margin)
        draws = p_of.draws
        smallest, needed = min_p("permutation", a.size, b.size), seeds_needed("permutation", level)
        low, high = _permutation_interval(p_of, a, b, alpha, smallest)
        estimate, kind = float(a.mean() - b.mean()), "permutation_tost"
        method = f"two one-sided permutation tests ({a.size} and {b.size} seeds)"
    estimate = 0.0 if abs(estimate) <= _noise(a, b) else estimate
    p_upper, p_lower = p_of("less", margin), p_of("greater", -margin)
    n_least = min(a.size, b.size)
    word = _decide(max(p_upper, p_lower), 1.0, smallest, alpha, n_least, needed)
    reason, head = "", ""
    if word == NOT_TESTABLE:
        reason, head = TOO_FEW_SEEDS, _too_few(n_least, needed)
    else:
        still, which = _control_moves(a, b, control, floor, level)
        if still:
            word, reason, head = NOT_TESTABLE, still, not_testable(still, which)
        elif p_upper <= alpha and p_lower <= alpha:
            word = "agrees"
        elif p_of("greater", margin) <= alpha or p_of("less", -margin) <= alpha:
            word = "differs"
        else:
            word = "inconclusive"
    p = max(p_upper, p_lower)
    sentence = (f"{head or word}: {claim} = {_fmt(estimate)}, {level:.0%} interval [{_fmt(low)}, {_fmt(high)}] "
                f"({method}) against the margin +-{_fmt(margin)}, TOST p = {_fmt(p)} ({_p_note(p, draws)})")
    return Verdict(word, estimate, (low, high), level, tuple(map(float, a)), tuple(map(float, b)), method, sentence,
                   p_value=p, test=kind, n=int(a.size if paired else a.size + b.size), reason=reason, draws=draws,
                   mc_error=monte_carlo_error(p, draws))
