"""The verdict words and the rules that produce and combine them.

:data:`VERDICTS` is the report's vocabulary (strongest first), :data:`VERDICT_COLOURS` each word's
colour and :func:`word_of` the one reading of a verdict sentence; :class:`Verdict` is a decided claim;
:func:`combine_verdicts` is the one rule that combines claim verdicts into a notebook's word. The
decision rule every verdict function applies to its one-sided p values (``_decide``) and the number
format of their sentences live here too. The verdicts themselves: :mod:`pcnn_explore.verdicts.exact`
and :mod:`pcnn_explore.verdicts.difference` (all importable from :mod:`pcnn_explore.verdicts`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from pcnn_explore.verdicts.statistics import DIRECTIONS

__all__ = ["VERDICTS", "VERDICT_COLOURS", "NOT_TESTABLE", "word_of", "Verdict", "combine_verdicts"]

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


# ------------------------------------------------------------- the decision rule, the numbers
def _decide(p_claim: float, p_other: float, smallest: float, alpha: float) -> str:
    if smallest > alpha:
        return NOT_TESTABLE
    return "agrees" if p_claim <= alpha else "differs" if p_other <= alpha else "inconclusive"


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _fmt_interval(low: float, high: float) -> str:
    return f"[{_fmt(low)}, {_fmt(high)}]"


def _exact_sentence(word: str, claim: str, estimate: float, level: float, low: float, high: float, method: str,
                    p: float, q: float, smallest: float, direction: str) -> str:
    """The sentence of a verdict by an exact one-sided test: the estimate of ``claim`` with its interval
    and method, the p of the claim's direction, the opposite's ``q`` and the smallest p the test can give."""
    want = ">" if direction == "greater" else "<"
    return (f"{word}: {claim} = {_fmt(estimate)}, {level:.0%} interval {_fmt_interval(low, high)} ({method}), "
            f"exact one-sided p = {_fmt(p)} (the opposite's {_fmt(q)}, min p {_fmt(smallest)}); "
            f"the claim is {claim} {want} 0")
