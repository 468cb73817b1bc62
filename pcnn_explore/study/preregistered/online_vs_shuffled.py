"""Notebook 01's claims (Fig. 2, left): PixelCNN trained online learns as it does on a random permutation
of the stream or with replacement.

Per order m other than online, two claims of no effect, each within +-:data:`ORDER_MARGIN` by TOST built
from sign flips paired by seed (:func:`claims`):

- ``m progress``: the relative area of the held-out curve, area_m / area_online - 1, against 0;
- ``m stability``: the largest rise's share of the area ("rise share"), m's against online's.

Their positive control is online training's held-out area against the floor 0, positive by
construction: these quantities have no floor at which a line sits still (the rule of a positive control
is for a success rate of 0 on DeepSea), so the control never makes them ``not testable: the lines do
not move``.
"""
from __future__ import annotations

from typing import Sequence

from pcnn_explore.study.claim import Claim, Design

__all__ = ["NOTEBOOK", "ORDER_MARGIN", "PAPER", "WHERE", "claims"]

NOTEBOOK = "01_online_vs_shuffled"
#: the equivalence margin: relative area difference, and difference of the rise's share of the area
ORDER_MARGIN = 0.10
PAPER = "all training methods show qualitatively similar learning progress and stability"
WHERE = "Fig. 2, left"


def claims(order: str, seeds: Sequence[int], budget: str = "") -> tuple[Claim, Claim]:
    """The two claims of training order ``order`` (``"permutation"``, ``"replacement"``) against online
    training, on ``seeds``."""
    design = Design(tuple(int(s) for s in seeds), (), budget)
    common = dict(test="sign_flip_tost", margin=ORDER_MARGIN, floor=0.0, lines=(order, "online"), paper=PAPER,
                  where=WHERE, design=design)
    progress = f"area {order} / area online - 1"
    stability = f"rise share {order} - online"
    return (Claim(NOTEBOOK, f"{order} progress", "paper", f"{order} progress", quantity="relative_heldout_area",
                  label=progress, measure=progress, **common),
            Claim(NOTEBOOK, f"{order} stability", "paper", f"{order} stability", quantity="rise_share",
                  label=stability, measure=stability, **common))
