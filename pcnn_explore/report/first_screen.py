"""The index's first screen: one row per notebook that answers, the decision rule, the tests' names.

:func:`notebook_row` builds a notebook's row from its ``metrics.json`` (:class:`Row`): the paper's
sentence (:func:`pcnn_explore.report.claims.short_claim`), this kit's number for its first paper
claim with the interval and n (:func:`claim_number`), the notebook's verdict word, and a one-line
reason wherever the word is not ``agrees`` (:func:`reason_line`). 14 holds the kit's question and no
paper claim: its row gives bsuite's deep-sea score over the whole protocol, the kit's line against the
paper's DQN-CTS, in place of a word (:func:`deep_sea_scores`).

:func:`decision_rule` is the one sentence that says how a claim is decided and how many of the claims
tested would agree by chance alone; :func:`legend_of_tests` explains, once each, the names of the tests
that appear on the page.
"""
from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, Iterable, Mapping, Sequence

from pcnn_explore.report.claims import Claim, claims_of, short_claim
from pcnn_explore.study import DEPENDS_ON_OPTIMIZER
from pcnn_explore.verdicts import MIN_SEEDS, NOT_TESTABLE

__all__ = ["Row", "notebook_row", "claim_number", "reason_line", "deep_sea_scores", "decision_rule", "legend_of_tests",
           "TESTS", "LEVEL", "SCORES"]

#: each claim's one-sided level
LEVEL = 0.025
#: the word of a row that gives scores in place of a verdict (14)
SCORES = "scores"

#: the tests' names as the page writes them, each explained once in words (the first pattern that
#: matches the page's text names the entry)
TESTS: tuple[tuple[str, str, str], ...] = (
    ("Fisher's exact test", r"\bfisher\b",
     "compares how many seeds of two lines solved the task; p is the chance of a split at least this "
     "lopsided if both lines solved alike, counted exactly"),
    ("sign-flip test", r"sign[- ]flip",
     "pairs the two lines by seed and flips the sign of each seed's difference in every possible way; "
     "p is the share of flips whose mean difference is at least the one seen"),
    ("permutation test", r"permutation test",
     "shuffles the seeds' labels between two unpaired lines in every possible way; p is the share of "
     "shuffles whose difference is at least the one seen"),
    ("TOST", r"\btost\b|two one-sided",
     "two one-sided tests for equivalence: the difference is shown above -margin and below +margin, "
     "each at 0.025; only then do the lines do as well as each other"),
    ("Clopper-Pearson interval", r"clopper",
     "the exact 95% interval of a share of seeds, from the binomial distribution"),
    ("Monte Carlo", r"monte carlo of|seeded draws",
     "beyond about 20 seeds the flips or shuffles are drawn at random (seeded, at least 100,000 draws) "
     "and p's standard error is given"),
    ("rise share", r"rise share",
     "the largest rise of the held-out loss curve as a share of the curve's area (01's measure of stability)"),
    ("paired t", r"paired t\b",
     "Student's t interval over seeds; it decided the density claims before 0.3 and decides none now"),
)


@dataclasses.dataclass(frozen=True)
class Row:
    """One notebook on the first screen (every field plain text)."""
    name: str  # the notebook's stem
    paper: str  # the paper's sentence, in about 15 words
    number: str  # this kit's number for its first paper claim that has one, with interval and n (14: scores)
    word: str  # the notebook's verdict word, "failed", "no verdict", or SCORES (14)
    reason: str  # one line wherever word is not "agrees"; "" where it is


def _f(x: Any, digits: int = 2) -> str:
    return "?" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{float(x):.{digits}f}"


def deep_sea_scores(metrics: Mapping | None) -> tuple[str, str] | None:
    """(scores, reason) of a notebook that reports bsuite's deep-sea score per line (14): led by the whole
    protocol as far as its committed logs go (``whole_protocol``:
    :func:`pcnn_explore.experiments.agents.deep_sea_scaling.whole_protocol`), the kit's line and the
    paper's CTS line each with its interval (``"bsuite's whole deep-sea protocol, the kit's line 0.91
    [0.86, 0.95] vs DQN-CTS 0.12 [0.00, 0.19], 6 seeds each"``), the other lines and the partial first
    study (``lines[key].score_mean`` and ``score_interval``) in the reason; without the whole protocol, the
    partial study's DQN-CTS against DQN leads. None without either."""
    metrics = metrics if isinstance(metrics, Mapping) else {}
    lines, whole = metrics.get("lines"), metrics.get("whole_protocol")
    partial = isinstance(lines, Mapping) and all(isinstance(lines.get(k), Mapping) and "score_mean" in lines[k]
                                                 for k in ("paper_cts", "dqn"))
    protocol = whole.get("lines") if isinstance(whole, Mapping) else None
    full = isinstance(protocol, Mapping) and all(isinstance(protocol.get(k), Mapping) for k in ("kit", "paper_cts"))
    if not (partial or full):  # (07-10 keep per-line records under "lines" too, without scores)
        return None

    def score(key: str) -> str:
        line = lines[key]
        iv = line.get("score_interval") or [None, None]
        return f"{line.get('label', key)} {_f(line.get('score_mean'))} [{_f(iv[0])}, {_f(iv[1])}]"

    def whole_score(key: str) -> str:
        return f"{protocol[key].get('label', key)} {_protocol_score(protocol[key].get('protocol_score'))}"

    study = []
    if partial:
        n = len(lines["paper_cts"].get("seeds") or [])
        others = [score(k) for k in lines if k not in ("paper_cts", "dqn") and isinstance(lines[k], Mapping)
                  and "score_mean" in lines[k]]
        part = metrics.get("protocol") or {}
        sizes = part.get("sizes") if isinstance(part, Mapping) else None
        where = f"N = {', '.join(str(s) for s in sizes)}" if isinstance(sizes, list) and sizes else "bsuite's sizes"
        study = [f"deep-sea score, {score('paper_cts')} vs {score('dqn')}" + (f", {n} seeds each" if n else ""),
                 where, others]
    if not full:  # the partial study leads; the whole protocol as far as it is in, after it
        head, where, others = study
        reason = (f"the kit's question, no paper claim: bsuite's deep-sea score (share of sizes solved, {where}), "
                  "95% sign-flip intervals" + (f"; also {'; '.join(others)}" if others else ""))
        scored = [whole_score(k) for k, x in (protocol or {}).items() if isinstance(x, Mapping)]
        if scored:
            reason += (f"; bsuite's whole protocol (N = 10 ... 50, 10K episodes) from the committed logs, "
                       f"{whole.get('done')} of {whole.get('planned')} runs in: " + "; ".join(scored))
        return head, reason
    n = len((protocol["kit"].get("protocol_score") or {}).get("per_seed_lower") or [])
    head = (f"bsuite's whole deep-sea protocol, {whole_score('kit')} vs {whole_score('paper_cts')}"
            + (f", {n} seeds each" if n else ""))
    rest = [whole_score(k) for k, x in protocol.items() if k not in ("kit", "paper_cts") and isinstance(x, Mapping)]
    reason = ("the kit's question, no paper claim: bsuite's deep-sea score (share of the sizes N = 10 ... 50 solved, "
              f"10K episodes) from the committed logs, {whole.get('done')} of {whole.get('planned')} runs in, 95% "
              "sign-flip intervals" + (f"; also {'; '.join(rest)}" if rest else ""))
    if study:
        head_s, where, others = study
        reason += f"; the partial first study ({where}): {head_s}" + (f"; {'; '.join(others)}" if others else "")
    return head, reason


def _protocol_score(p: Mapping | None) -> str:
    """``0.71 [0.60, 0.80]`` for a line whose 21 sizes are all in, else ``between 0.24 and 1.00
    [0.24, 1.00] (5 of 21 sizes in)``: bsuite's score over the whole protocol
    (:func:`pcnn_explore.experiments.agents.deep_sea_summary.protocol_score`)."""
    from pcnn_explore.experiments.agents.deep_sea_summary import protocol_score_text

    try:
        text = protocol_score_text(p)
    except (TypeError, KeyError, ValueError):  # not a protocol score the kit wrote
        return "?"
    return text if p.get("complete") else f"{text} ({len(p.get('sizes_in') or [])} of 21 sizes in)"


def claim_number(claim: Claim) -> str:
    """A claim's number with its interval and n: ``"PG exponent b + 0.5 = 0.657, 95% [0.414, 0.9], n = 3
    seeds"``; Fisher's counts (``1/10 vs 0/10``) carry their n already."""
    number = claim.number
    if not number:
        return ""
    if claim.n and not re.search(r"\b\d+/\d+\b|\bn = \d", number):  # (two readings' numbers carry their n)
        number += f", n = {claim.n} {claim.n_unit}{'s' if claim.n != 1 else ''}"
    return number


def _short(reason: str, words: int = 14) -> str:
    """A reason in one short line: its detail in brackets dropped, cut to ``words`` words."""
    text = re.sub(r"\s*\(.*$", "", str(reason)).strip()
    cut = text.split()
    return " ".join(cut[:words]) + (" ..." if len(cut) > words else "")


def reason_line(word: str, claims: Sequence[Claim], sentence: str = "") -> str:
    """One line saying why a notebook's word is not ``agrees``, or what its ``agrees`` leaves out: the
    reasons of its paper claims that are not testable, the p of those undecided (above :data:`LEVEL`),
    the claims that differ; "" where every paper claim agrees."""
    if word == "failed":
        return sentence.splitlines()[0] if sentence else "the notebook failed"
    paper = [c for c in claims if c.kind == "paper"] or list(claims)
    if word == "agrees" and all(c.word == "agrees" for c in paper):
        return ""
    if not paper:
        return "the notebook records no claim"
    parts = []
    counts = {}
    for c in paper:
        counts[c.word] = counts.get(c.word, 0) + 1
    if len(paper) > 1:
        parts.append(", ".join(f"{k} {w}" for w, k in counts.items()) + f" of {len(paper)} paper claims")
    reasons = list(dict.fromkeys(_short(c.reason) for c in paper if c.word == NOT_TESTABLE and c.reason))
    if reasons:
        parts.append("; ".join(r if r.startswith(NOT_TESTABLE) else f"{NOT_TESTABLE}: {r}" for r in reasons))
    undecided = [c for c in paper if c.word == "inconclusive"]
    if undecided:
        ps = [c.p for c in undecided if c.p is not None]
        parts.append("undecided" + (f": one-sided p = {', '.join(f'{p:.3g}' for p in ps)} > {LEVEL}" if ps else ""))
    differ = [c for c in paper if c.word == "differs"]
    if differ:
        parts.append("differs: " + "; ".join(c.claim for c in differ[:2]) + (" ..." if len(differ) > 2 else ""))
    depends = [c for c in paper if c.word == DEPENDS_ON_OPTIMIZER]
    if depends:  # (each with both readings' numbers)
        parts.append(f"{DEPENDS_ON_OPTIMIZER}: " + "; ".join(f"{c.claim}: {c.number}" for c in depends))
    return "; ".join(parts)


def _both_readings(name: str, metrics: Mapping, claim: str) -> str:
    """For a deep-sea paper claim whose verdict depends on the CTS bonus scale's reading (its decision's
    ``readings``): ``"depends on the bonus scale: 0.05, <number> (<word>); horizon, <number> (<word>)"``; for a
    claim whose verdict depends on the PixelCNN's optimizer reading: ``"depends on the optimizer reading: tf1,
    <number>, p, n (<word>); torch, ..."``; "" for any other claim."""
    from pcnn_explore.report.claims import decisions, row
    from pcnn_explore.report.tables import plain_words
    from pcnn_explore.study import DEPENDS_ON_SCALE

    for d in decisions(metrics):
        if d.word == DEPENDS_ON_OPTIMIZER and plain_words(d.claim.sentence) == claim and d.readings:
            return f"{DEPENDS_ON_OPTIMIZER}: {row(d).number}"  # (the row gives both readings' numbers)
        if d.word == DEPENDS_ON_SCALE and plain_words(d.claim.sentence) == claim and d.readings:
            parts = []
            for reading, r in d.readings:
                c = row(r)
                parts.append(f"{reading}, {claim_number(c)} ({c.word})")
            return f"{DEPENDS_ON_SCALE}: " + "; ".join(parts)
    return ""


def notebook_row(name: str, metrics: Mapping | None, word: str, sentence: str = "") -> Row:
    """The first-screen row of notebook ``name`` with its verdict ``word`` (and the sentence behind
    it, e.g. a failure's error): 14's scores in place of a word (:func:`deep_sea_scores`), else the
    number of the first paper claim that has one (:func:`claim_number`; a claim not testable for want
    of seeds may have none) and :func:`reason_line`. The first paper claim is the first the notebook
    made: :func:`claims_of` keeps the order of metrics.json's ``claims`` list."""
    metrics = metrics if isinstance(metrics, Mapping) else {}
    paper = metrics.get("paper") if isinstance(metrics.get("paper"), Mapping) else {}
    short = short_claim(name, str(paper.get("verdict") or ""))
    if word != "failed" and metrics.get("profile") != "smoke":
        scores = deep_sea_scores(metrics)
        if scores is not None:
            return Row(name, short, scores[0], SCORES, scores[1])
    claims = claims_of(name, metrics) if word != "failed" else []
    made = [c for c in claims if c.kind == "paper"]
    # the first paper claim that gives a number (09's first two are not testable, with none)
    first = next((c for c in made if claim_number(c)), made[0] if made else None)
    number = claim_number(first) if first is not None else ""
    both = _both_readings(name, metrics, first.claim) if first is not None else ""
    if both:
        return Row(name, short, f"{first.claim}: {both}", word, reason_line(word, claims, sentence))
    if first is not None and len(made) > 1 and number:
        number = f"{first.claim}: {number}"
    if not number:  # no paper claim gives one (06): the kit's first number, marked as the kit's
        kit = next((c for c in claims if c.kind == "kit" and claim_number(c)), None)
        if kit is not None:
            number = f"the kit's reading, {kit.claim}: {claim_number(kit)}"
    return Row(name, short, number, word, reason_line(word, claims, sentence))


def decision_rule(claims: Iterable[Claim]) -> str:
    """The one sentence of how claims are decided, with the count of paper claims tested (not
    ``not testable``) and how many of them would agree by chance alone, were none of them true."""
    paper = [c for c in claims if c.kind == "paper"]
    tested = [c for c in paper if c.word in ("agrees", "differs", "inconclusive")]
    agree = sum(c.word == "agrees" for c in tested)
    k = len(tested)
    chance = k * LEVEL
    return (f"Each claim is tested at one-sided {LEVEL} with an exact test on at least {MIN_SEEDS} seeds per line "
            f"(fewer seeds: not testable). Of the {len(paper)} paper claims here, {k} could be tested; if none of "
            f"them held, about {k} x {LEVEL} = {chance:.2g} would agree by chance alone; {agree} "
            f"agree{'s' if agree == 1 else ''}.")


def legend_of_tests(text: str) -> list[tuple[str, str]]:
    """(name, explanation) of each test of :data:`TESTS` whose name appears in ``text`` (the page),
    in :data:`TESTS`' order, each once."""
    low = str(text).lower()
    return [(name, words) for name, pattern, words in TESTS if re.search(pattern, low)]

