"""The one path from a claim and its per-seed values to a decision (:func:`decide`), the same at a
notebook's first render and at ``--rerender`` (:func:`decide_again`), and the notebook's words from its
decisions (:func:`notebook_words`, :func:`metrics_record`).

Every test goes through :mod:`pcnn_explore.verdicts` (its decision rule: one-sided 0.025, at least 6
seeds per line). Before any test: a value that is not finite leaves the claim undecided
(``inconclusive``, the seeds giving a finite value named); fewer than 2 values on a line is ``not
testable: too few seeds at this profile``. The values keep the order given: a seeded Monte Carlo p
(beyond about 20 seeds) depends on it.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Iterable, Mapping, Sequence

from pcnn_explore.study.claim import PAIRED, TWO_LINES, Claim
from pcnn_explore.study.decision import DEPENDS_ON_OPTIMIZER, DEPENDS_ON_SCALE, OPTIMIZER_READINGS, SCHEMA, Decision
from pcnn_explore.verdicts import (
    LINES_DO_NOT_MOVE,
    NOT_TESTABLE,
    TOO_FEW_SEEDS,
    Verdict,
    combine_verdicts,
    difference_verdict,
    equivalence_verdict,
    not_testable,
    notebook_verdict,
    progress_verdict,
    seeds_needed,
    share_verdict,
    solved_verdict,
    word_of,
)

__all__ = ["decide", "decide_again", "combine_readings", "join_readings", "headline", "notebook_words",
           "metrics_record", "decisions_of", "READINGS", "NO_VERDICT"]

#: the bonus scale's two readings (07-10), the 0.05 first
READINGS = ("bonus scale 0.05", "horizon bonus scale")
#: the word of a reading no test decides
NO_VERDICT = "no verdict"
#: the test whose smallest p sets the seeds a claim needs, per claim test
_NEEDS = {"sign_flip": "sign_flip", "progress": "sign_flip", "share": "sign_flip", "sign_flip_tost": "sign_flip",
          "permutation": "permutation", "permutation_tost": "permutation", "fisher": "fisher"}


def _floats(name: str, claim: Claim, values: Iterable[Any] | None) -> tuple[float, ...]:
    out = []
    for v in values if values is not None else ():
        if v is None:
            out.append(math.nan)
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"claim {claim.notebook}/{claim.name}: {name} must be numbers (one per seed), got {v!r}")
        else:
            out.append(float(v))
    return tuple(out)


def _why_too_few(claim: Claim, lines: Sequence[Sequence[float]], level: float) -> str:
    needed = seeds_needed(_NEEDS[claim.test], level)
    has = min(len(x) for x in lines)
    if claim.test == "share":
        return f"needs {needed} seeds and a size whose every share could decide, has {has}"
    return f"needs {needed} per line, has {has}"


def _why_still(claim: Claim, lines: Sequence[Sequence[float]], control: Sequence[float] | None, level: float) -> str:
    floor = claim.floor if claim.floor is not None else min(min(x) for x in [*lines, *([control] if control else [])])
    what = "neither line" if control is None else "the positive control"
    return f"{what} leaves the floor {floor:.3g} at one-sided {(1.0 - level) / 2.0:g}"


def _verdict(claim: Claim, a: tuple[float, ...], b: tuple[float, ...], seeds: Sequence[int] | None,
             control: Sequence[float] | None, level: float) -> Verdict:
    """The claim's test on its values (:mod:`pcnn_explore.verdicts`)."""
    test, measure = claim.test, claim.measure or claim.quantity or claim.name
    if test in ("sign_flip", "permutation"):
        paired = list(seeds) if test == "sign_flip" else None
        return difference_verdict(a, b, claim.direction, level, seeds_a=paired, seeds_b=paired, claim=measure)
    if test == "progress":
        return progress_verdict(a, claim.threshold, level, claim=measure)
    if test == "fisher":
        bad = [x for x in (*a, *b) if x not in (0.0, 1.0)]
        if bad:
            raise ValueError(f"claim {claim.notebook}/{claim.name}: Fisher's test takes per-seed solved flags "
                             f"(1 solved, 0 not), got {bad[:3]}")
        return solved_verdict({i: x == 1.0 for i, x in enumerate(a)}, {i: x == 1.0 for i, x in enumerate(b)},
                              claim.direction, level, claim=measure)
    if test == "share":
        return share_verdict(sum(1 for x in a if x >= 0.5), len(a), claim.threshold, level, claim=measure)
    paired = list(seeds) if test == "sign_flip_tost" else None
    return equivalence_verdict(a, b, float(claim.margin), level, seeds_a=paired, seeds_b=paired, claim=measure,
                               control=None if control is None else list(control), floor=claim.floor)


def decide(claim: Claim, values: Sequence[float] = (), values_b: Sequence[float] = (), *,
           seeds: Sequence[int] | None = None, control: Sequence[float] | None = None, detail: str = "",
           level: float = 0.95) -> Decision:
    """Decide ``claim`` on its per-seed values: ``values`` of line a (or of the one line), ``values_b``
    of line b for a test of two lines (:data:`pcnn_explore.study.claim.TWO_LINES`), ``seeds`` their
    seed ids (a paired test pairs by them; default 0, 1, ...), ``control`` a positive control's per-seed
    values for an equivalence claim (None: the two lines themselves), ``detail`` the notebook's words for a
    claim no test decides (``not_testable``: after its reason; ``reading``: the reading). ValueError
    for values that do not fit the test (two lines for a one-line test, flags that are not 0 or 1, seeds
    that do not match the values)."""
    where = f"claim {claim.notebook}/{claim.name}"
    a, b = _floats("values", claim, values), _floats("values_b", claim, values_b)
    c = None if control is None else _floats("control", claim, control)
    ids = tuple(range(len(a))) if seeds is None else tuple(int(s) for s in seeds)
    kept = dict(values=a, values_b=b, seeds=() if seeds is None else ids, control=c, detail=str(detail), level=level)
    if claim.test == "not_testable":  # declared so: the values, where given, are shown and decide nothing
        one = bool(a) and not b
        sentence = not_testable(claim.reason, claim.note) + (f": {detail}" if detail else "")
        return Decision(claim, NOT_TESTABLE, sentence, "not_testable", claim.reason, claim.note,
                        estimate=sum(a) / len(a) if one else None, n=len(a) if one else None, method=claim.method,
                        **kept)
    if claim.test == "reading":
        return Decision(claim, NO_VERDICT, f"a reading with no test: {detail}", "reading", method=claim.method, **kept)
    two = claim.test in TWO_LINES
    if two and not b and a:
        raise ValueError(f"{where}: the {claim.test} test compares two lines; give values_b")
    if not two and b:
        raise ValueError(f"{where}: the {claim.test} test reads one line; values_b must be empty")
    if len(ids) != len(a) or (claim.test in PAIRED and len(b) != len(a)):
        raise ValueError(f"{where}: {len(a)} values, {len(b)} values_b and {len(ids)} seeds; a paired test needs "
                         "one value per seed on each line")
    lines = [a, b] if two else [a]
    finite = [[v for v in x if math.isfinite(v)] for x in lines + ([list(c)] if c is not None else [])]
    if any(len(f) < len(x) for f, x in zip(finite, lines + ([list(c)] if c is not None else []))):
        k, m = min((len(f), len(x)) for f, x in zip(finite, lines + ([list(c)] if c is not None else [])))
        sentence = f"inconclusive: not decided: {k} of {m} seeds give a finite value, a test needs all and at least 2"
        return Decision(claim, "inconclusive", sentence, claim.test, **kept)
    if min(len(x) for x in lines) < 2:
        why = _why_too_few(claim, lines, level)
        return Decision(claim, NOT_TESTABLE, f"{not_testable(TOO_FEW_SEEDS, why)}: {claim.measure or claim.name}",
                        claim.test, TOO_FEW_SEEDS, why, n=sum(len(x) for x in lines) if two else len(a), **kept)
    v = _verdict(claim, a, b, ids, c, level)
    why = (_why_too_few(claim, lines, level) if v.reason == TOO_FEW_SEEDS
           else _why_still(claim, lines, c, level) if v.reason == LINES_DO_NOT_MOVE else "")
    return Decision(claim, v.word, v.sentence, v.test, v.reason, why, v.estimate, tuple(v.interval), v.p_value, v.n,
                    v.method, intervals=tuple(tuple(i) for i in v.intervals), draws=v.draws, mc_error=v.mc_error,
                    **kept)


def combine_readings(first: Decision, second: Decision, names: tuple[str, str] = READINGS) -> Decision:
    """One decision of a claim decided under two readings: ``first``'s, with both in ``readings``.

    The bonus scale's (07-10; ``names`` :data:`READINGS`, ``first`` at 0.05, ``second`` at the horizon
    reading): where their words differ the word is :data:`DEPENDS_ON_SCALE` and the sentence gives both. The
    PixelCNN's optimizer readings (``names`` :data:`~pcnn_explore.study.decision.OPTIMIZER_READINGS`, ``first``
    the paper's, tf1): where their words differ the word is
    :data:`~pcnn_explore.study.decision.DEPENDS_ON_OPTIMIZER` and the sentence gives both; the notebook's word
    stays the paper reading's (:func:`headline`)."""
    names = (str(names[0]), str(names[1]))
    readings = ((names[0], first), (names[1], second))
    if names == OPTIMIZER_READINGS:
        depends, too = DEPENDS_ON_OPTIMIZER, f"the {names[1]} reading of the PixelCNN's optimizer too"
        under = (f"under {names[0]} (the paper's)", f"under {names[1]}")
    else:
        depends, too = DEPENDS_ON_SCALE, "the horizon reading of the bonus scale too"
        under = ("at 0.05", "at the horizon reading (0.05 x 100 / sum of 0.99^t over N steps)")
    if first.word == second.word:
        return dataclasses.replace(first, readings=readings, sentence=f"{first.sentence} ({too}: {second.sentence})")
    return dataclasses.replace(first, word=depends, readings=readings, sentence=(
        f"{depends}: {under[0]}, {first.sentence}; {under[1]}, {second.sentence}"))


def join_readings(first: Sequence[Decision], second: Sequence[Decision],
                  names: tuple[str, str] = OPTIMIZER_READINGS,
                  reading_free: Callable[[Claim], bool] | None = None) -> list[Decision]:
    """The claims of one notebook run under two readings (``first``: the paper's run, ``second``: the
    sensitivity run), claim by claim in ``first``'s order (:func:`combine_readings`). A claim of ``first`` that
    ``second`` does not decide is kept as it is where ``reading_free(its claim)`` (none of its lines trains under
    the readings: :func:`pcnn_explore.run.lines.reading_free`, which the report passes; 07's sensitivity run takes
    only its PixelCNN lines); None: every claim must be decided by both. ValueError where ``second`` lacks any
    other claim of ``first``, decides one ``first`` does not, decides them in another order, or where a claim
    already carries these readings."""
    a, b = [d.name for d in first], [d.name for d in second]
    kept = {d.name for d in first if d.name not in b and reading_free is not None and reading_free(d.claim)}
    only = [n for n in a if n not in b and n not in kept] + [n for n in b if n not in a]
    if only or [n for n in a if n in b] != b:
        only = ", ".join(only) or "the same claims in another order"
        raise ValueError(f"the {names[0]} and {names[1]} runs decide different claims ({only}): run the same notebook, "
                         "at the same profile, under each reading")
    for d in (*first, *second):
        if d.readings and tuple(k for k, _ in d.readings) == tuple(names):
            raise ValueError(f"claim {d.claim.notebook}/{d.name} is decided under the readings {names[0]} and "
                             f"{names[1]} already: take each reading's own run")
    by_name = {d.name: d for d in second}
    return [x if x.name in kept else combine_readings(x, by_name[x.name], names) for x in first]


def headline(d: Decision) -> Decision:
    """The decision a notebook's word reads of ``d``: under the PixelCNN's optimizer readings, the paper
    reading's (recursively); else ``d``."""
    while d.readings and tuple(k for k, _ in d.readings) == OPTIMIZER_READINGS:
        d = d.readings[0][1]
    return d


def decide_again(d: Decision) -> Decision:
    """``d`` decided again by :func:`decide` from its stored claim and values (each reading on its own,
    then :func:`combine_readings`): what ``--rerender`` does with every record."""
    if d.readings:
        (n1, r1), (n2, r2) = d.readings
        return combine_readings(decide_again(r1), decide_again(r2), (n1, n2))
    return decide(d.claim, d.values, d.values_b, seeds=d.seeds or None, control=d.control, detail=d.detail,
                  level=d.level)


def notebook_words(decisions: Sequence[Decision]) -> tuple[str, str | None]:
    """(the notebook's word, its kit word), of the paper reading's decisions where a claim was decided under the
    PixelCNN's optimizer readings (:func:`headline`): the paper claims' sentences combined by
    :func:`pcnn_explore.verdicts.notebook_verdict` (``not testable`` with its reason; a claim that
    depends on the bonus scale with both readings'; ``no verdict`` without one: a notebook of the kit's
    questions alone, 14, gives no verdict on the paper), and the kit claims' words by :func:`~pcnn_explore.verdicts.combine_verdicts` (those
    that are verdict words; None without one)."""
    paper: list[str] = []
    decisions = [headline(d) for d in decisions]  # (the optimizer readings: the paper reading's word)
    for d in decisions:
        if d.kind == "paper":
            paper += [r.sentence for _, r in d.readings] if d.word == DEPENDS_ON_SCALE else [d.sentence]
    word = notebook_verdict(paper) if paper else NO_VERDICT  # (14: the kit's question alone, no verdict on the paper)
    kit = [d.word for d in decisions if d.kind == "kit" and word_of(d.word)]
    return word, (combine_verdicts(kit) if kit else None)


def metrics_record(decisions: Sequence[Decision]) -> dict[str, Any]:
    """What a notebook writes into metrics.json: ``{"schema", "claims": [records in the claims' order],
    "word", "kit_word"}`` (:func:`notebook_words`)."""
    word, kit = notebook_words(decisions)
    return {"schema": SCHEMA, "claims": [d.to_record() for d in decisions], "word": word, "kit_word": kit}


def decisions_of(metrics: Mapping[str, Any], where: str = "metrics.json") -> list[Decision]:
    """The decisions of a notebook's metrics.json (:func:`metrics_record`); ValueError naming ``where``
    for metrics written before the claims record (no ``schema``) or of another schema."""
    schema = metrics.get("schema") if isinstance(metrics, Mapping) else None
    if schema != SCHEMA:
        raise ValueError(f"{where} holds no claims record of schema {SCHEMA} (it has "
                         f"{'none' if schema is None else schema!r}): re-run the notebook to write it")
    return [Decision.from_record(r) for r in metrics.get("claims") or []]
