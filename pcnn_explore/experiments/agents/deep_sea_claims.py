"""The deep-sea notebooks' claims decided on a study: each claim of
:mod:`pcnn_explore.experiments.agents.preregistered` turned into per-seed values and its test.

- :func:`check_claim`: a paper claim compares the paper's lines and baselines only, under one
  exploration rule (the same DQN exploration on both sides), else ValueError: the rule that keeps a
  kit addition out of a paper verdict;
- :func:`claim_values`: one value per seed (dict seed -> value, the seed is the unit) of a line's
  quantity, mean over the study's sizes;
- :func:`decide_claim`: the claim's verdict with its test (:mod:`pcnn_explore.verdicts`), p, interval
  and n, as plain values for metrics.json;
- :func:`decide_plan`: every claim of a notebook, the paper verdict (its paper claims combined by
  :func:`pcnn_explore.verdicts.combine_verdicts`) and the kit verdict (its kit claims) apart.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from pcnn_explore.experiments.agents.deep_sea_study import DeepSeaStudy, StudyVariant, random_finds_within
from pcnn_explore.run.lines import exploration_rule
from pcnn_explore.experiments.agents.preregistered import LEVEL, Claim, Plan
from pcnn_explore.verdicts import (
    NOT_ON_THIS_TASK,
    NOT_TESTABLE,
    TOO_FEW_SEEDS,
    Verdict,
    combine_verdicts,
    equivalence_verdict,
    not_testable,
    notebook_verdict,
    paired_verdict,
    share_verdict,
    solved_verdict,
)

__all__ = ["check_claim", "check_plan", "claim_values", "decide_claim", "decide_plan", "verdict_dict", "NOT_TESTABLE",
           "POSITIVE_CONTROLS", "FLOORS", "DEPENDS_ON_SCALE", "SECOND_READING_CONTROLS", "combine_readings"]

#: the words of a claim whose verdict differs between the CTS bonus scale's two readings
DEPENDS_ON_SCALE = "depends on the bonus scale"
#: a positive control under the second reading of the CTS bonus scale
SECOND_READING_CONTROLS = {"paper_cts": "paper_cts_horizon"}

#: an equivalence ("no progress", "does as well") claim is testable only when a positive control of the
#: same runs leaves the floor: the claim's control line (claims not named here: the two lines themselves)
POSITIVE_CONTROLS = {"mmc_alone_no_progress": "paper_cts", "bonus_alone_no_progress": "paper_cts"}
#: the floor of a quantity, the value of a line that does not move: no +1 found, no size solved
FLOORS = {"success_rate": 0.0, "solved": 0.0, "found": 0.0, "score": 0.0}


def verdict_dict(v: Verdict) -> dict[str, Any]:
    """A verdict as plain values for metrics.json: word, estimate, interval, p, test, n, per-seed values, sentence."""
    def plain(x):
        return None if isinstance(x, float) and not math.isfinite(x) else x

    return {"verdict": v.word, "reason": getattr(v, "reason", ""), "estimate": plain(v.estimate), "interval": [plain(x) for x in v.interval],
            "level": v.level, "p_value": plain(getattr(v, "p_value", math.nan)), "test": getattr(v, "test", ""),
            "n": getattr(v, "n", 0), "intervals": [[plain(x) for x in i] for i in getattr(v, "intervals", ())],
            "values": list(v.values), "values_b": list(v.values_b), "method": v.method, "sentence": v.sentence}


def check_claim(claim: Claim, lines: Mapping[str, StudyVariant]) -> None:
    """ValueError unless every line of ``claim`` (and of its second reading) is in ``lines``, and, for a
    paper claim, every line is the paper's or a baseline and all follow one exploration rule; a claim
    declared not testable is decided by no line and passes."""
    missing = [k for k in (*claim.lines, *claim.second_reading) if k not in lines]
    if claim.test == "not_testable":  # decided by nothing: its lines, where the study runs them, are only shown
        return
    if missing:
        raise ValueError(f"claim {claim.name} compares lines {missing} that the study does not run "
                         f"(it runs {', '.join(lines)})")
    if claim.kind != "paper":
        return
    kit = [k for k in claim.lines if lines[k].kind == "kit"]
    if kit:
        raise ValueError(f"paper claim {claim.name} compares the kit's line(s) {kit}: a kit addition gets a kit "
                         "verdict, never a place in a paper verdict")
    rules = {k: exploration_rule(lines[k]) for k in (*claim.lines, *claim.second_reading)}
    if len(set(rules.values())) > 1:
        raise ValueError(f"paper claim {claim.name} compares lines with different exploration rules ({rules}): "
                         "a paper verdict compares the paper's line with its baseline under the same rule")


def check_plan(plan: Plan, lines: Mapping[str, StudyVariant]) -> None:
    """:func:`check_claim` for every claim of ``plan``."""
    for c in plan.claims:
        check_claim(c, lines)


def _coverage(study: DeepSeaStudy, key: str) -> list[float]:
    per_size = [study.mean_coverage(key, n) for n in study.settings.sizes]
    return [sum(v) / len(v) for v in zip(*per_size)]


def claim_values(study: DeepSeaStudy, key: str, quantity: str) -> dict[int, float]:
    """Per seed (seed -> value) the mean over the study's sizes of line ``key``'s ``quantity`` (a key of
    :data:`~pcnn_explore.experiments.agents.preregistered.QUANTITIES`)."""
    if quantity == "coverage":
        values = _coverage(study, key)
    elif quantity == "score":
        values = study.per_seed_score(key)
    elif quantity == "found":
        values = [sum(study.run(key, n, s).first_success_episode is not None for n in study.settings.sizes)
                  / len(study.settings.sizes) for s in study.seeds]
    else:
        values = study.per_seed(key, quantity)
    return dict(zip(study.seeds, (float(v) for v in values)))


def decide_claim(claim: Claim, study: DeepSeaStudy, level: float = LEVEL) -> dict[str, Any]:
    """``{"verdict", "sentence", "kind", "lines", "quantity", "test", ...}`` of ``claim`` on ``study``.
    ``fisher`` on one size: solved seeds by Fisher's exact test; on several sizes the per-seed share
    of sizes solved, paired by seed (sign flip). A claim with a ``second_reading`` (the CTS bonus
    scale's horizon reading) is decided on both; where the two words differ its verdict is
    ``depends on the bonus scale``, its sentence gives both, and ``readings`` holds each decided claim."""
    if not claim.second_reading or claim.test == "not_testable":
        return _decide_one(claim, study, level)
    return combine_readings(_decide_one(claim, study, level), _decide_one(claim, study, level, second=True))


def combine_readings(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """One claim record from its records under the bonus scale's two readings (0.05 first, the horizon
    reading second): the first's, with ``readings`` holding both; where their words differ the verdict
    is ``depends on the bonus scale`` and the sentence gives both."""
    readings = {"bonus scale 0.05": first, "horizon bonus scale": second}
    if first["verdict"] == second["verdict"]:
        return {**first, "readings": readings,
                "sentence": f"{first['sentence']} (the horizon reading of the bonus scale too: {second['sentence']})"}
    return {**first, "verdict": DEPENDS_ON_SCALE, "readings": readings,
            "sentence": f"{DEPENDS_ON_SCALE}: at 0.05, {first['sentence']}; at the horizon reading "
                        f"(0.05 x 100 / sum of 0.99^t over N steps), {second['sentence']}"}


def _decide_one(claim: Claim, study: DeepSeaStudy, level: float, second: bool = False) -> dict[str, Any]:
    lines = {v.key: v for v in study.variants}
    check_claim(claim, lines)
    compared = claim.second_reading if second else claim.lines
    head = {"kind": claim.kind, "claim": claim.sentence, "lines": list(compared),
            "labels": [lines[k].display for k in compared if k in lines], "quantity": claim.quantity,
            "test": claim.test, "margin": claim.margin, "note": claim.note}
    if claim.test == "not_testable":  # the lines' per-seed values kept for the reader; they decide nothing
        shown = {}
        if claim.quantity and claim.lines and all(k in lines for k in claim.lines[:2]):
            per_line = [claim_values(study, k, claim.quantity) for k in claim.lines[:2]]
            shown = {"values": list(per_line[0].values()),
                     "values_b": list(per_line[1].values()) if len(per_line) > 1 else [], "seeds": list(per_line[0])}
        reason = TOO_FEW_SEEDS if claim.reason == "too few seeds" else NOT_ON_THIS_TASK
        return {**head, "verdict": NOT_TESTABLE, "reason": reason,
                "sentence": not_testable(reason, claim.note), **shown}
    name = " - ".join(lines[k].display for k in compared)
    if claim.test == "share":
        found = claim_values(study, compared[0], claim.quantity)
        sizes = study.settings.sizes
        chance = sum(random_finds_within(n, study.settings.episode_cap(n)) for n in sizes) / len(sizes)
        k = sum(v >= 0.5 for v in found.values())
        v = share_verdict(k, len(found), chance, level, claim=f"seeds of {lines[compared[0]].display} that found the +1")
        return {**head, **verdict_dict(v), "chance": chance}
    a = claim_values(study, compared[0], claim.quantity)
    b = claim_values(study, compared[1], claim.quantity)
    if claim.test == "fisher" and len(study.settings.sizes) == 1:
        v = solved_verdict({s: x >= 0.5 for s, x in a.items()}, {s: x >= 0.5 for s, x in b.items()}, claim.direction,
                           level, claim=f"solved {name}")
    elif claim.test in ("fisher", "sign_flip"):
        v = paired_verdict(a, b, claim.direction, level, claim=f"{claim.quantity.replace('_', ' ')} {name}")
    else:  # equivalence: testable only when the positive control leaves the floor
        seeds = sorted(a)
        control_line = POSITIVE_CONTROLS.get(claim.name)
        if control_line is not None and second:
            control_line = SECOND_READING_CONTROLS.get(control_line, control_line)
        control = None
        if control_line is not None:
            if control_line not in lines:
                raise ValueError(f"claim {claim.name}: its positive control {control_line!r} is not among the "
                                 f"study's lines ({', '.join(lines)}); run it in the same study")
            of_control = claim_values(study, control_line, claim.quantity)
            control = [of_control[s] for s in seeds]
        v = equivalence_verdict([a[s] for s in seeds], [b[s] for s in seeds], claim.margin, level, seeds_a=seeds,
                                seeds_b=seeds, claim=f"{claim.quantity.replace('_', ' ')} {name}", control=control,
                                floor=FLOORS.get(claim.quantity))
        return {**head, **verdict_dict(v), "positive_control": control_line or "the two lines"}
    return {**head, **verdict_dict(v)}


def decide_plan(plan: Plan, study: DeepSeaStudy, level: float = LEVEL) -> dict[str, Any]:
    """``{"verdict": the paper verdict, "kit_verdict": the kit verdict (None without kit claims),
    "claims": {name: decided claim}}``; each verdict combines its claims by
    :func:`~pcnn_explore.verdicts.combine_verdicts` (the paper verdict by
    :func:`~pcnn_explore.verdicts.notebook_verdict`: ``not testable`` with its reason; a claim that
    depends on the bonus scale with each reading's word)."""
    claims = {c.name: decide_claim(c, study, level) for c in plan.claims}
    paper = []  # a claim that depends on the bonus scale counts with both readings' words
    for c in claims.values():
        if c["kind"] == "paper":
            paper += ([r["sentence"] for r in c["readings"].values()] if c["verdict"] == DEPENDS_ON_SCALE
                      else [c["sentence"]])
    kit = [c["verdict"] for c in claims.values() if c["kind"] == "kit"]
    return {"verdict": notebook_verdict(paper), "kit_verdict": combine_verdicts(kit) if kit else None,
            "claims": claims}
