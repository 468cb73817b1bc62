"""A claim, fixed before the runs: what the paper (or the kit) says, the quantity it is decided on, the
test and its direction or margin, the lines compared and the design (:class:`Claim`, :class:`Design`).

A claim holds no result: :func:`pcnn_explore.study.decide` decides it on per-seed values and returns a
:class:`~pcnn_explore.study.decision.Decision`. The tests a claim may name (:data:`TESTS`):

- ``sign_flip``: line a against line b paired by seed, the sign-flip test of a - b
  (:func:`pcnn_explore.verdicts.paired_verdict`);
- ``permutation``: a against b unpaired, the permutation test (:func:`~pcnn_explore.verdicts.difference_verdict`);
- ``progress``: one line's mean against :attr:`Claim.threshold`, the sign-flip test of values - threshold
  (:func:`~pcnn_explore.verdicts.progress_verdict`);
- ``fisher``: solved seeds of a against b (per-seed flags, 1 solved, 0 not), Fisher's exact test
  (:func:`~pcnn_explore.verdicts.solved_verdict`);
- ``share``: the seeds of one line at 0.5 or above (k of n) against :attr:`Claim.threshold`, the exact
  Clopper-Pearson interval (:func:`~pcnn_explore.verdicts.share_verdict`);
- ``sign_flip_tost`` / ``permutation_tost``: no effect within +-:attr:`Claim.margin`, paired or unpaired,
  testable only when a positive control leaves :attr:`Claim.floor`
  (:func:`~pcnn_explore.verdicts.equivalence_verdict`);
- ``not_testable``: declared so, with its :attr:`Claim.reason` (one of :data:`pcnn_explore.verdicts.REASONS`)
  and why (:attr:`Claim.note`): a claim on agent scores in a density notebook, one recorded episode,
  too few seeds by a power analysis;
- ``reading``: the kit's reading with no test (word ``no verdict``).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

from pcnn_explore.verdicts import DIRECTIONS, REASONS

__all__ = ["Claim", "Design", "TESTS", "KINDS", "PAIRED", "TWO_LINES"]

TESTS = ("sign_flip", "permutation", "progress", "fisher", "share", "sign_flip_tost", "permutation_tost",
         "not_testable", "reading")
#: a paper claim (the paper's lines and baselines only) or the kit's own question
KINDS = ("paper", "kit")
#: the tests that pair the two lines by seed
PAIRED = ("sign_flip", "sign_flip_tost")
#: the tests that compare two lines
TWO_LINES = ("sign_flip", "permutation", "fisher", "sign_flip_tost", "permutation_tost")


@dataclasses.dataclass(frozen=True)
class Design:
    """How a claim is run: the seeds (ids), the sizes (DeepSea's N; empty for the density notebooks), the
    budget in words (``"1,000 episodes"``, ``"25K frames"``), and the smallest effect of interest in the
    quantity's unit where a power analysis declares one (None: none declared)."""

    seeds: tuple[int, ...] = ()
    sizes: tuple[int, ...] = ()
    budget: str = ""
    smallest_effect: float | None = None

    def to_record(self) -> dict[str, Any]:
        return {"seeds": list(self.seeds), "sizes": list(self.sizes), "budget": self.budget,
                "smallest_effect": self.smallest_effect}

    @classmethod
    def from_record(cls, r: Mapping[str, Any]) -> "Design":
        return cls(tuple(int(s) for s in r.get("seeds") or ()), tuple(int(n) for n in r.get("sizes") or ()),
                   str(r.get("budget") or ""), None if r.get("smallest_effect") is None else float(r["smallest_effect"]))


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim of a notebook, fixed before its runs.

    ``notebook``: the notebook's stem (``"01_online_vs_shuffled"``); ``name``: the claim's name in it;
    ``kind``: ``"paper"`` or ``"kit"``; ``sentence``: the claim in plain words (the report's row);
    ``paper`` and ``where``: the paper's sentence and where it is (``"Fig. 5"``); ``quantity``: the
    per-seed quantity's name, ``unit`` its unit (``"nats"``, ``"episodes"``; "" for a share or a count);
    ``label``: the words the report puts before the number (``"score difference"``); ``measure``: the
    words of the quantity as the decision's sentence writes them (``"AUC Reactor-CTS - Reactor"``);
    ``n_unit``: what n counts (``"seed"``, or ``"episode"``); ``test``: one of :data:`TESTS`;
    ``direction``: ``"greater"`` (a > b, or the mean above the threshold) or ``"less"``; ``margin``:
    an equivalence claim's margin in the quantity's unit; ``threshold``: a ``progress`` or ``share``
    claim's threshold (e.g. the random policy's chance); ``floor``: an equivalence claim's value of a
    line that does not move (None: the smallest value seen); ``lines`` and ``labels``: the lines
    compared (a first) and their names; ``reason`` and ``note``: a ``not_testable`` claim's reason (one
    of :data:`pcnn_explore.verdicts.REASONS`) and why; ``method``: how a claim no test decides is
    read (``"one recorded episode"``); ``design``: :class:`Design`.
    """

    notebook: str
    name: str
    kind: str
    sentence: str
    test: str
    quantity: str = ""
    unit: str = ""
    label: str = ""
    measure: str = ""
    n_unit: str = "seed"
    direction: str = "greater"
    margin: float | None = None
    threshold: float = 0.0
    floor: float | None = None
    lines: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    paper: str = ""
    where: str = ""
    reason: str = ""
    note: str = ""
    method: str = ""
    design: Design = Design()

    def __post_init__(self):
        where = f"claim {self.notebook}/{self.name}"
        if self.kind not in KINDS:
            raise ValueError(f"{where}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.test not in TESTS:
            raise ValueError(f"{where}: test must be one of {TESTS}, got {self.test!r}")
        if self.direction not in DIRECTIONS:
            raise ValueError(f"{where}: direction must be one of {DIRECTIONS}, got {self.direction!r}")
        if self.test.endswith("tost") and not (self.margin is not None and math.isfinite(self.margin) and self.margin > 0):
            raise ValueError(f"{where}: an equivalence test needs a positive margin in the quantity's unit, "
                             f"got {self.margin!r}")
        if self.test == "not_testable" and self.reason not in REASONS:
            raise ValueError(f"{where}: a claim declared not testable needs its reason, one of {REASONS}; "
                             f"got {self.reason!r}")
        if not math.isfinite(float(self.threshold)):
            raise ValueError(f"{where}: threshold must be a finite number, got {self.threshold!r}")

    def to_record(self) -> dict[str, Any]:
        """The claim as plain JSON values (tuples as lists, the design nested)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out.update(lines=list(self.lines), labels=list(self.labels), design=self.design.to_record())
        return out

    @classmethod
    def from_record(cls, r: Mapping[str, Any]) -> "Claim":
        """The claim of :meth:`to_record`'s record; ValueError naming a missing or unknown field."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(r) - names)
        missing = [k for k in ("notebook", "name", "kind", "sentence", "test") if k not in r]
        if unknown or missing:
            raise ValueError(f"a claim record {'has unknown fields ' + str(unknown) if unknown else ''}"
                             f"{' and ' if unknown and missing else ''}{'lacks ' + str(missing) if missing else ''}")
        kw = dict(r)
        kw.update(lines=tuple(r.get("lines") or ()), labels=tuple(r.get("labels") or ()),
                  design=Design.from_record(r.get("design") or {}))
        return cls(**kw)
