"""Notebook 05's claims (Fig. 9): PixelCNN's prediction gain (PG) on Montezuma's Revenge is lower and
smoother than CTS's, with sharper peaks at rare events.

Three claims of line a (PixelCNN) against line b (CTS) on the main stream, each decided on its own,
paired by seed, by the sign-flip test (:func:`claims`): ``lower PG`` (mean PG, nats, a < b),
``smoother`` (the PG's variability, a < b), ``sharper peaks`` (the :data:`PEAK_QUANTILE` quantile of
the PG over its median, a > b).
"""
from __future__ import annotations

from typing import Sequence

from pcnn_explore.study.claim import Claim, Design

__all__ = ["NOTEBOOK", "PEAK_QUANTILE", "NAMES", "claims"]

NOTEBOOK = "05_pg_montezuma"
#: the peak measure: this quantile of the PG trace over its median (robust to a single maximum)
PEAK_QUANTILE = 0.99
#: the claims' names, in the order made
NAMES = ("lower PG", "smoother", "sharper peaks")
_PAPER = "PixelCNN's PG is lower and smoother than CTS's, with sharper peaks at rare events"


def claims(seeds: Sequence[int], a: str = "pixelcnn", b: str = "cts", budget: str = "") -> tuple[Claim, Claim, Claim]:
    """The three claims of model ``a`` against model ``b`` (:data:`NAMES`)."""
    design = Design(tuple(int(s) for s in seeds), (), budget)
    forms = ((f"mean PG {a} - {b} (nats)", "mean PG (nats)", "less"), (f"variability {a} - {b}", "PG variability", "less"),
             (f"q{PEAK_QUANTILE:g}/median {a} - {b}", f"PG quantile {PEAK_QUANTILE:g} over its median", "greater"))
    return tuple(Claim(NOTEBOOK, name, "paper", name, "sign_flip", quantity=quantity, label=measure, measure=measure,
                       direction=direction, lines=(a, b), labels=(a, b), paper=_PAPER, where="Fig. 9", design=design)
                 for name, (measure, quantity, direction) in zip(NAMES, forms))
