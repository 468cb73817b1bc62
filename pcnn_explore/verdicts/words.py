"""The verdict words, defined once, and the rules that produce and combine them.

Claim verdicts (:data:`CLAIM_WORDS`): ``agrees``, ``differs``, ``inconclusive``, ``not testable``.
"Not testable" always gives one reason of :data:`REASONS` (:func:`not_testable` writes it):

- :data:`TOO_FEW_SEEDS` ("too few seeds at this profile"): fewer than :data:`MIN_SEEDS` (6) seeds per
  line, or too few for the test ever to reach the level;
- :data:`NOT_ON_THIS_TASK` ("not testable on this task"), with the why: e.g. "PixelCNN beats CTS" on
  DeepSea's one-pixel frames;
- :data:`LINES_DO_NOT_MOVE` ("the lines do not move"): an equivalence or no-progress claim whose
  positive control in the same runs does not leave the floor (an exact one-sided test at 0.025).

A notebook's word (:data:`VERDICTS`, :func:`combine_verdicts`): ``agrees`` when at least one paper
claim is testable and every testable one agrees; ``partly`` when some agree, none differ and some
are undecided; ``mixed`` when some agree and some differ; ``differs`` when every decided claim
differs; ``inconclusive`` when claims are testable and none is decided; ``not testable`` (with its
reason, :func:`notebook_verdict`) when no claim is testable. Each claim is tested at one-sided 0.025.

:data:`VERDICT_COLOURS` gives each word's colour and :func:`word_of` is the one reading of a verdict
sentence (it reads the older ``not testable at this profile`` as ``not testable``); :class:`Verdict`
is a decided claim. The decision rule every verdict function applies to its one-sided p values
(``_decide``) and the number format of their sentences live here too. The verdicts themselves:
:mod:`pcnn_explore.verdicts.exact` and :mod:`pcnn_explore.verdicts.difference` (all importable from
:mod:`pcnn_explore.verdicts`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from pcnn_explore.verdicts.statistics import DIRECTIONS, MIN_SEEDS, monte_carlo_error

__all__ = ["VERDICTS", "CLAIM_WORDS", "VERDICT_COLOURS", "NOT_TESTABLE", "MIN_SEEDS", "TOO_FEW_SEEDS",
           "NOT_ON_THIS_TASK", "LINES_DO_NOT_MOVE", "REASONS", "word_of", "reason_of", "not_testable", "Verdict",
           "combine_verdicts", "notebook_verdict"]

#: the word of a claim, or of a notebook, that no test here can decide; always with a reason of REASONS
NOT_TESTABLE = "not testable"
#: the words of one claim's verdict
CLAIM_WORDS = ("agrees", "differs", "inconclusive", NOT_TESTABLE)
#: the words of the report (a notebook's word, or a claim's), strongest first
VERDICTS = ("agrees", "partly", "mixed", "differs", "inconclusive", NOT_TESTABLE)
#: each verdict word's colour in the report
VERDICT_COLOURS = {"agrees": "#1a7f37", "partly": "#b7791f", "mixed": "#d9480f", "differs": "#c62828",
                   "inconclusive": "#6a4fb3", NOT_TESTABLE: "#757575"}
#: the reasons a claim is not testable, the only ones
TOO_FEW_SEEDS = "too few seeds at this profile"
NOT_ON_THIS_TASK = "not testable on this task"
LINES_DO_NOT_MOVE = "the lines do not move"
REASONS = (TOO_FEW_SEEDS, NOT_ON_THIS_TASK, LINES_DO_NOT_MOVE)
_OLD_NOT_TESTABLE = "not testable at this profile"  # the word before 0.3, read as too few seeds
_DIRECTIONS = DIRECTIONS


def word_of(sentence: str) -> str | None:
    """The verdict word a verdict sentence starts with (case and leading spaces aside), or None: the
    one reading of every notebook's ``summary.verdict`` (``"agrees over 6 seeds: ..."`` -> ``agrees``;
    ``"not testable: the lines do not move"`` and the older ``"not testable at this profile"`` ->
    ``not testable``)."""
    text = str(sentence).strip().lower()
    for word in sorted(VERDICTS, key=len, reverse=True):
        if text.startswith(word) and not text[len(word):len(word) + 1].isalnum():
            return word
    return None


def not_testable(reason: str, detail: str = "") -> str:
    """The sentence of a claim that is not testable, for ``reason`` one of :data:`REASONS`:
    ``"not testable: too few seeds at this profile (detail)"``, ``"not testable on this task: detail"``
    (the detail says why), ``"not testable: the lines do not move (detail)"``. ValueError for any
    other reason, or for the task's reason without a detail."""
    if reason not in REASONS:
        raise ValueError(f"a claim is not testable for one of the reasons {REASONS}, got {reason!r}")
    if reason == NOT_ON_THIS_TASK:
        if not detail:
            raise ValueError("'not testable on this task' needs its why, e.g. DeepSea's one-pixel frames")
        return f"{NOT_ON_THIS_TASK}: {detail}"
    return f"{NOT_TESTABLE}: {reason}" + (f" ({detail})" if detail else "")


def reason_of(sentence: str) -> str | None:
    """The reason (one of :data:`REASONS`) a ``not testable`` sentence gives, None for any other
    sentence; the older ``not testable at this profile`` reads as :data:`TOO_FEW_SEEDS`."""
    text = str(sentence).strip().lower()
    if word_of(text) != NOT_TESTABLE:
        return None
    if text.startswith(NOT_ON_THIS_TASK):
        return NOT_ON_THIS_TASK
    head = text[len(NOT_TESTABLE):].lstrip(": ")
    for reason in REASONS:
        if head.startswith(reason):
            return reason
    return TOO_FEW_SEEDS if text.startswith(_OLD_NOT_TESTABLE) else None


@dataclass(frozen=True)
class Verdict:
    """A decided claim. ``word``: one of :data:`CLAIM_WORDS`; ``reason``: for ``not testable`` one of
    :data:`REASONS`, else ""; ``interval``: (low, high) of the quantity decided (a mean, or a
    difference a - b); ``estimate``: its point value; ``values``: the per-seed values it came from (for
    a difference: ``values`` of a, ``values_b`` of b); ``sentence``: one line; ``p_value``: the
    one-sided p of the claimed direction (NaN where none); ``test``: the test that decided (e.g.
    ``"sign_flip"``, ``"permutation"``, ``"fisher"``, ``"sign_flip_tost"``); ``n``: the seeds it used
    (pairs, or n_a + n_b for two lines); ``intervals``: per-line intervals where the test has them;
    ``draws``: the Monte Carlo's draws behind p (0: exact); ``mc_error``: p's Monte Carlo standard
    error (0 when exact)."""

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
    reason: str = ""
    draws: int = 0
    mc_error: float = 0.0


# ---------------------------------------------------------------------------------- combining
def _tally(words: Sequence[str]) -> list[str]:
    words = list(words)
    read = [word_of(w) for w in words]
    bad = [w for w, r in zip(words, read) if r is None]
    if not words or bad:
        raise ValueError(f"combine_verdicts needs one or more verdict words of {VERDICTS}, got {words!r}"
                         + (f" ({bad} not among them)" if bad else ""))
    return read


def combine_verdicts(words: Sequence[str]) -> str:
    """One notebook word (:data:`VERDICTS`) for several claim verdicts (words or whole verdict
    sentences; a ``partly`` counts as one agrees and one undecided, a ``mixed`` as one agrees and one
    differs). Leaving out ``not testable``: nothing left -> ``not testable``; every one agrees ->
    ``agrees``; some agree and some differ -> ``mixed``; some agree, none differ -> ``partly``; none
    agrees and some differ -> ``differs`` (every decided claim differs, however many are undecided);
    else ``inconclusive``. ValueError for no words or a word not in :data:`VERDICTS`."""
    testable = [w for w in _tally(words) if w != NOT_TESTABLE]
    if not testable:
        return NOT_TESTABLE
    agree = any(w in ("agrees", "partly", "mixed") for w in testable)
    differ = any(w in ("differs", "mixed") for w in testable)
    undecided = any(w in ("inconclusive", "partly") for w in testable)
    if agree and differ:
        return "mixed"
    if agree:
        return "partly" if undecided else "agrees"
    return "differs" if differ else "inconclusive"


def notebook_verdict(sentences: Sequence[str]) -> str:
    """:func:`combine_verdicts` of the claims' sentences, with the reason where the word is ``not
    testable``: ``"not testable: too few seeds at this profile"``, the distinct reasons of the claims
    joined by "; " in :data:`REASONS`' order (a claim sentence with no reason counts as too few seeds),
    ``"not testable on this task"`` when that is every claim's reason."""
    word = combine_verdicts(sentences)
    if word != NOT_TESTABLE:
        return word
    reasons = {reason_of(s) or TOO_FEW_SEEDS for s in sentences}
    if reasons == {NOT_ON_THIS_TASK}:
        return NOT_ON_THIS_TASK
    return f"{NOT_TESTABLE}: " + "; ".join("not on this task" if r == NOT_ON_THIS_TASK else r
                                           for r in REASONS if r in reasons)


# ------------------------------------------------------------- the decision rule, the numbers
def _decide(p_claim: float, p_other: float, smallest: float, alpha: float, n_least: int = MIN_SEEDS,
            needed: int = MIN_SEEDS) -> str:
    """The claim word: ``not testable`` with fewer than ``needed`` seeds on a line (``n_least``: the
    smaller line's) or a test that can never reach alpha (``smallest`` > alpha), else agrees / differs /
    inconclusive by the one-sided p of the claim's direction and of the opposite's at ``alpha``."""
    if n_least < needed or smallest > alpha:
        return NOT_TESTABLE
    return "agrees" if p_claim <= alpha else "differs" if p_other <= alpha else "inconclusive"


def _too_few(n_least: int, needed: int) -> str:
    """The sentence head of a claim with too few seeds: ``not testable: too few seeds at this profile
    (needs 6 per line, has 3)``."""
    return not_testable(TOO_FEW_SEEDS, f"needs {needed} per line, has {n_least}")


def _p_note(p: float, draws: int) -> str:
    """How p was computed: ``exact`` or ``Monte Carlo of 200,000 seeded draws, standard error 0.0003``."""
    if not draws:
        return "exact"
    return f"Monte Carlo of {draws:,} seeded draws, standard error {monte_carlo_error(p, draws):.2g}"


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def _fmt_interval(low: float, high: float) -> str:
    return f"[{_fmt(low)}, {_fmt(high)}]"


def _exact_sentence(word: str, claim: str, estimate: float, level: float, low: float, high: float, method: str,
                    p: float, q: float, smallest: float, direction: str, draws: int = 0, head: str = "") -> str:
    """The sentence of a verdict by a one-sided permutation-type test: the estimate of ``claim`` with its
    interval and method, the p of the claim's direction (exact, or Monte Carlo with its standard error),
    the opposite's ``q`` and the smallest p the test can give. ``head`` replaces the word at the start
    (a not-testable sentence with its reason)."""
    want = ">" if direction == "greater" else "<"
    return (f"{head or word}: {claim} = {_fmt(estimate)}, {level:.0%} interval {_fmt_interval(low, high)} ({method}), "
            f"one-sided p = {_fmt(p)} ({_p_note(p, draws)}; the opposite's {_fmt(q)}, min p {_fmt(smallest)}); "
            f"the claim is {claim} {want} 0")
