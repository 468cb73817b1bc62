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

Declared for the re-run under the optimizer readings (issue 44), before any run on its seeds 801, 803, ...
(:mod:`pcnn_explore.study.preregistered.density`): the paper makes two statements of the lowest loss, and
each is a claim of its own, decided by the paired sign-flip test at one-sided 0.025 on the per-seed final
losses (capped at a uniform model's, as above):

- ``constant 1e-3 smallest (caption)`` (:func:`caption_smallest`), Fig. 3's caption, "The smallest loss is
  achieved by a constant learning rate of 10^-3": per seed, constant 1e-3's final loss minus the smallest of
  every other run of the grid (0.1 n^-1/2 included) < 0;
- ``constant 1e-3 or 0.1 n^-1/2 lowest (text)`` (:func:`text_lowest`), Sec. 3.2's text, "The lowest final
  training loss is achieved by a constant learning rate of 0.001 or a decaying learning rate of 0.1 n^-1/2":
  per seed, the smaller of those two runs' final losses minus the smallest of the grid's other runs < 0.

Each named rate on its own (:func:`lowest`: constant 1e-3, and 0.1 n^-1/2, each against the best unnamed run)
is then detail of the text claim, recorded beside it and deciding nothing; ``n^-1 worst`` and the robustness
claims stay as they are. :data:`RERUN_CLAIMS` names the claims the re-run decides, in order.
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

from pcnn_explore.study.claim import Claim, Design

__all__ = ["NOTEBOOK", "PAPER_BEST", "WORST", "CAPTION", "TEXT", "CAPTION_SENTENCE", "TEXT_SENTENCE", "RERUN_CLAIMS",
           "rate_name", "statement_values", "lowest", "worst", "more_robust", "caption_smallest", "text_lowest"]

NOTEBOOK = "03_lr_schedules"
#: (schedule, initial rate) pairs the paper names as best
PAPER_BEST = (("constant", 1e-3), ("inverse_sqrt", 0.1))
#: the name of the claim on n^-1
WORST = "n^-1 worst"
_PAPER = ("the loss is lowest for a constant learning rate of 1e-3 or a decaying 0.1 n^-1/2; n^-1 is worst; the "
          "constant rate is more robust to the choice of initial rate")
#: the names of the two statements' claims (declared for the re-run under the optimizer readings)
CAPTION, TEXT = "constant 1e-3 smallest (caption)", "constant 1e-3 or 0.1 n^-1/2 lowest (text)"
#: the paper's words of each
CAPTION_SENTENCE = "The smallest loss is achieved by a constant learning rate of 10^-3 (Fig. 3's caption)"
TEXT_SENTENCE = ("The lowest final training loss is achieved by a constant learning rate of 0.001 or a decaying "
                 "learning rate of 0.1 n^-1/2 (Sec. 3.2)")
#: the claims the re-run decides, in order (the per-rate ``lowest`` comparisons are the text claim's detail); the
#: robustness claims one per decaying schedule of the grid
RERUN_CLAIMS = (CAPTION, TEXT, WORST, "constant more robust than inverse", "constant more robust than inverse_sqrt")


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


def caption_smallest(seeds: Sequence[int], budget: str = "") -> Claim:
    """Fig. 3's caption: constant 1e-3's final loss below the smallest of every other run of the grid (nats),
    paired by seed, the sign-flip test (direction ``less``)."""
    measure = "constant 1e-3 - best other run (nats)"
    return dataclasses.replace(
        _claim(CAPTION, measure, "less", ("constant 1e-3", "best other run"), seeds, budget, where="Fig. 3 (caption)"),
        sentence=CAPTION_SENTENCE, paper=CAPTION_SENTENCE, unit="nats")


def text_lowest(seeds: Sequence[int], budget: str = "") -> Claim:
    """Sec. 3.2's text: the smaller of constant 1e-3's and 0.1 n^-1/2's final losses below the smallest of the
    grid's other runs (nats), paired by seed, the sign-flip test (direction ``less``)."""
    measure = "min(constant 1e-3, 0.1 n^-1/2) - best unnamed rate (nats)"
    return dataclasses.replace(
        _claim(TEXT, measure, "less", ("constant 1e-3 or 0.1 n^-1/2", "best unnamed rate"), seeds, budget,
               where="Sec. 3.2"),
        sentence=TEXT_SENTENCE, paper=TEXT_SENTENCE, unit="nats")


def statement_values(name: str, runs) -> tuple[list[float], list[float]]:
    """The per-seed values (a, b) the claim ``name`` (:data:`CAPTION` or :data:`TEXT`) decides a - b < 0 on, from
    ``runs``: {(schedule, initial rate): per-seed final losses (nats, already capped)}, every run with the same
    seeds. CAPTION: a = constant 1e-3, b = the smallest of every other run; TEXT: a = the smaller of constant
    1e-3 and 0.1 n^-1/2, b = the smallest of the other runs. ValueError when a named run or every other run is
    missing from the grid."""
    named = {CAPTION: (PAPER_BEST[0],), TEXT: PAPER_BEST}.get(name)
    if named is None:
        raise ValueError(f"no statement claim {name!r}: choose {CAPTION!r} or {TEXT!r}")
    missing = [rate_name(*k) for k in named if k not in runs]
    others = [k for k in runs if k not in named]
    if missing or not others:
        raise ValueError(f"{name} needs {', '.join(missing) or 'another run'} in the grid")
    n = len(runs[named[0]])
    a = [min(float(runs[k][i]) for k in named) for i in range(n)]
    b = [min(float(runs[k][i]) for k in others) for i in range(n)]
    return a, b


def more_robust(schedule: str, seeds: Sequence[int], budget: str = "") -> Claim:
    """The constant schedule's spread over its initial rates, ln(worst / best), below ``schedule``'s."""
    return _claim(f"constant more robust than {schedule}", f"ln(worst / best) constant - {schedule}", "less",
                  ("constant", schedule), seeds, budget, where="Sec. 3.2")
