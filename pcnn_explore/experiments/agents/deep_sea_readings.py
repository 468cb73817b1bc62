"""Notebook 07 (Fig. 5) under the PixelCNN's two optimizer readings: each reading's plan (:func:`reading_plan`),
built from the two records fixed before its runs, 07's claims (:mod:`pcnn_explore.study.preregistered.deep_sea`)
and the re-run's readings, lines and seeds (:data:`pcnn_explore.study.preregistered.pixelcnn_readings.PLANS`).

- ``tf1``, the paper's reading (the default): the re-run's tf1 lines (07's design's lines, ``paper_pixelcnn`` and
  ``kit_pixelcnn_pos``) and every 07 claim; the PixelCNN claims the re-run declares decided
  (``pixelcnn_bonus_explores``, ``position_bias_helps``) as 07 declared them, before the first power analysis
  sized them out of its budget (:data:`~pcnn_explore.study.preregistered.deep_sea.DECLARED`); the others as 07's
  plan has them.
- ``torch``, the sensitivity reading: the re-run's torch lines (``dqn``, ``paper_pixelcnn_torch``,
  ``kit_pixelcnn_pos_torch``) and the claims that compare a PixelCNN line, each the same claim with the same
  test, its PixelCNN lines named by their torch lines (:data:`TORCH_LINES`), in 07's order. The claims that
  compare no PixelCNN line are the tf1 run's alone (:func:`pcnn_explore.study.join_readings` keeps them).

Both on the re-run's seeds (801-840, :func:`~pcnn_explore.study.preregistered.pixelcnn_readings.check_new_seeds`),
07's sizes and episode caps, each claim's design on those seeds.
"""
from __future__ import annotations

import dataclasses

from pcnn_explore.study.preregistered import deep_sea as pre
from pcnn_explore.study.preregistered import pixelcnn_readings as rerun

__all__ = ["NOTEBOOK", "TORCH_LINES", "check_reading", "reading_plan"]

#: the deep-sea notebook that runs under the PixelCNN's readings
NOTEBOOK = "07"
#: each PixelCNN line of 07 -> its line under the sensitivity reading
TORCH_LINES = {"paper_pixelcnn": "paper_pixelcnn_torch", "kit_pixelcnn_pos": rerun.KIT_POS_TORCH}
_DECIDED = "decided"


def check_reading(reading: str | None) -> str:
    """``reading`` (None: the paper's, tf1) if it is one of the readings, else a ValueError naming them."""
    from pcnn_explore.experiments.density.density_training import check_reading as check_one

    return rerun.PAPER_READING if reading is None else check_one(reading, "density_optimizer")


def _uses_pixelcnn(claim) -> bool:
    return bool(set(claim.lines) & set(TORCH_LINES))


def reading_plan(reading: str | None = None) -> pre.Plan:
    """07's plan under ``reading`` (None: tf1; see the module docstring)."""
    reading = check_reading(reading)
    base, again = pre.PLANS[NOTEBOOK], rerun.PLANS[NOTEBOOK]
    how = dict(again.claims)
    paper = reading == rerun.PAPER_READING

    def fixed(c):
        if how.get(c.name) == _DECIDED:
            c = pre.DECLARED[NOTEBOOK][c.name]
        elif c.name in how and c.test != "not_testable":
            raise ValueError(f"claim {c.name}: the re-run declares it {how[c.name]!r} and 07's plan decides it")
        c = dataclasses.replace(c, design=dataclasses.replace(c.design, seeds=again.seeds))
        return c if paper else dataclasses.replace(c, lines=tuple(TORCH_LINES.get(k, k) for k in c.lines))

    claims = tuple(fixed(c) for c in base.claims if paper or _uses_pixelcnn(c))
    words = "the paper's" if paper else "the sensitivity reading"
    return pre.Plan(base.notebook, base.figure, base.paper, dict(again.lines)[reading], again.sizes, again.episodes,
                    again.seeds, claims, f"{base.scope}; the PixelCNN's optimizer reading {reading} ({words})",
                    again.budget_minutes, base.stop_when_solved)
