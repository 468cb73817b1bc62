"""The deep-sea notebooks' claims (07-10) decided on a study: each claim of a plan of
:mod:`pcnn_explore.study.preregistered.deep_sea` given its per-seed values and decided by
:func:`pcnn_explore.study.decide` (a claim with a second reading of the bonus scale under both,
:func:`pcnn_explore.study.combine_readings`).

- :func:`check_claim`: a paper claim compares the paper's lines and baselines only, under one
  exploration rule (the same DQN exploration on both sides), else ValueError: the rule that keeps a
  kit addition out of a paper verdict;
- :func:`claim_values`: one value per seed (dict seed -> value, the seed is the unit) of a line's
  quantity, mean over the study's sizes;
- :func:`decisions`: every claim of a plan decided on per-seed values, in the plan's order.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Mapping

from pcnn_explore.experiments.agents.deep_sea_study import DeepSeaStudy, StudyVariant
from pcnn_explore.run.lines import exploration_rule
from pcnn_explore.study import Claim, Decision, combine_readings, decide
from pcnn_explore.study.preregistered.deep_sea import (LEVEL, POSITIVE_CONTROLS, SECOND_READING_CONTROLS,
                                                      SECOND_READINGS, Plan)

__all__ = ["check_claim", "check_plan", "claim_values", "decisions"]

#: a line's per-seed values of a quantity: (line, quantity) -> {seed: value}, in the study's seed order
ValuesOf = Callable[[str, str], Mapping[int, float]]


def check_claim(claim: Claim, lines: Mapping[str, StudyVariant]) -> None:
    """ValueError unless every line of ``claim`` (and of its second reading) is in ``lines``, and, for a
    paper claim, every line is the paper's or a baseline and all follow one exploration rule; a claim
    declared not testable is decided by no line and passes."""
    second = SECOND_READINGS.get(claim.name, ())
    missing = [k for k in (*claim.lines, *second) if k not in lines]
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
    rules = {k: exploration_rule(lines[k]) for k in (*claim.lines, *second)}
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
    :data:`~pcnn_explore.study.preregistered.deep_sea.QUANTITIES`)."""
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


def _decide(claim: Claim, compared: tuple[str, ...], values_of: ValuesOf, labels: Mapping[str, str], chance: float,
            level: float, second: bool) -> Decision:
    """``claim`` on the lines ``compared`` (its own, or its second reading's)."""
    shown = tuple(labels[k] for k in compared if k in labels)
    claim = dataclasses.replace(claim, lines=compared, labels=shown)
    if claim.test == "not_testable":  # the lines' per-seed values kept for the reader; they decide nothing
        if not claim.quantity or not all(k in labels for k in compared[:2]):
            return decide(claim)
        per_line = [values_of(k, claim.quantity) for k in compared[:2]]
        return decide(claim, list(per_line[0].values()), list(per_line[1].values()) if len(per_line) > 1 else (),
                      seeds=list(per_line[0]), level=level)
    if claim.test == "share":
        found = values_of(compared[0], claim.quantity)
        claim = dataclasses.replace(claim, threshold=chance, measure=f"seeds of {shown[0]} that found the +1")
        return decide(claim, list(found.values()), level=level)
    a, b = values_of(compared[0], claim.quantity), values_of(compared[1], claim.quantity)
    seeds = list(a)
    claim = dataclasses.replace(claim, measure=f"{claim.quantity.replace('_', ' ')} {' - '.join(shown)}")
    control = None
    if claim.test.endswith("tost"):  # testable only when the positive control leaves the floor
        line = POSITIVE_CONTROLS.get(claim.name)
        if line is not None and second:
            line = SECOND_READING_CONTROLS.get(line, line)
        if line is not None:
            if line not in labels:
                raise ValueError(f"claim {claim.name}: its positive control {line!r} is not among the study's lines "
                                 f"({', '.join(labels)}); run it in the same study")
            of_control = values_of(line, claim.quantity)
            control = [of_control[s] for s in seeds]
    return decide(claim, list(a.values()), [b[s] for s in seeds], seeds=seeds, control=control, level=level)


def decisions(plan: Plan, values_of: ValuesOf, labels: Mapping[str, str], chance: float,
              level: float = LEVEL) -> list[Decision]:
    """Every claim of ``plan`` decided on the per-seed values of ``values_of`` (line, quantity) -> {seed:
    value}, in the plan's order; ``labels``: each line run -> its label; ``chance``: the random policy's
    chance of finding the +1 within the episodes run (mean over the sizes; a ``share`` claim's threshold).
    A claim of :data:`~pcnn_explore.study.preregistered.deep_sea.SECOND_READINGS` is decided under both
    readings of the bonus scale and combined (:func:`pcnn_explore.study.combine_readings`)."""
    out = []
    for c in plan.claims:
        first = _decide(c, c.lines, values_of, labels, chance, level, False)
        second = SECOND_READINGS.get(c.name)
        if second and c.test != "not_testable":
            first = combine_readings(first, _decide(c, second, values_of, labels, chance, level, True))
        out.append(first)
    return out
