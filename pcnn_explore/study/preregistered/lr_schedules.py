"""Notebook 03's claims (Fig. 3, Sec. 3.2): the learning-rate schedules of PixelCNN.

Each claim is decided on its own, on per-seed final losses (nats per frame) paired by seed, by the
sign-flip test:

- ``<rate> lowest``, for each rate the paper names (:data:`PAPER_BEST`: constant 1e-3; 0.1 n^-1/2):
  its final loss minus the best of the runs the paper does not name < 0 (:func:`lowest`);
- ``n^-1 worst``: n^-1's best minus the larger of the other schedules' bests > 0 (:func:`worst`);
- ``constant more robust than S``: the spread of the constant schedule's final losses over its
  initial rates, ln(worst / best), minus S's < 0, for each decaying schedule S with more than one rate
  (:func:`more_robust`; why the paper kept the constant rate).

How the per-seed gaps are taken from the runs (every loss capped at a uniform model's) is the
experiment's (:func:`pcnn_explore.experiments.density.lr_schedules.decisions`).
"""
from __future__ import annotations

from typing import Sequence

from pcnn_explore.study.claim import Claim, Design

__all__ = ["NOTEBOOK", "PAPER_BEST", "WORST", "rate_name", "lowest", "worst", "more_robust"]

NOTEBOOK = "03_lr_schedules"
#: (schedule, initial rate) pairs the paper names as best
PAPER_BEST = (("constant", 1e-3), ("inverse_sqrt", 0.1))
#: the name of the claim on n^-1
WORST = "n^-1 worst"
_PAPER = ("the loss is lowest for a constant learning rate of 1e-3 or a decaying 0.1 n^-1/2; n^-1 is worst; the "
          "constant rate is more robust to the choice of initial rate")


def rate_name(schedule: str, lr: float) -> str:
    """A (schedule, initial rate) as the paper writes it: ``constant 1e-3``, ``0.1 n^-1/2``, ``1 n^-1``."""
    rate = f"{lr:g}" if lr >= 0.01 else f"{lr:.0e}".replace("e-0", "e-")
    return {"constant": f"constant {rate}", "inverse_sqrt": f"{rate} n^-1/2", "inverse": f"{rate} n^-1"}.get(
        schedule, f"{schedule} {rate}")


def _claim(name: str, measure: str, direction: str, lines: tuple[str, str], seeds: Sequence[int], budget: str,
           where: str = "Fig. 3") -> Claim:
    return Claim(NOTEBOOK, name, "paper", name, "sign_flip", quantity=measure, label=measure, measure=measure,
                 direction=direction, lines=lines, labels=lines, paper=_PAPER, where=where,
                 design=Design(tuple(int(s) for s in seeds), (), budget))


def lowest(schedule: str, lr: float, seeds: Sequence[int], budget: str = "") -> Claim:
    """A named rate's final loss below the best unnamed run's (nats)."""
    name = rate_name(schedule, lr)
    return _claim(f"{name} lowest", f"{name} - best unnamed rate (nats)", "less", (name, "best unnamed rate"), seeds,
                  budget)


def worst(seeds: Sequence[int], budget: str = "") -> Claim:
    """n^-1's best final loss above the larger of the other schedules' bests (nats)."""
    return _claim(WORST, "best n^-1 - best other (nats)", "greater", ("best n^-1", "best other"), seeds, budget)


def more_robust(schedule: str, seeds: Sequence[int], budget: str = "") -> Claim:
    """The constant schedule's spread over its initial rates, ln(worst / best), below ``schedule``'s."""
    return _claim(f"constant more robust than {schedule}", f"ln(worst / best) constant - {schedule}", "less",
                  ("constant", schedule), seeds, budget, where="Sec. 3.2")
