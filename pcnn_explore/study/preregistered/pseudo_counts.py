"""Notebook 00's claims (Sec. 2.1, 5 and 7): pseudo-counts grow with real counts, and PixelCNN's
prediction gain (PG) never completely vanishes.

Both are decided on a frame shown again every few steps, per seed, by the sign-flip test of one line
against a threshold (``progress``):

- ``pseudo-counts grow with real counts`` (Sec. 2.1, after Bellemare et al. 2016): the least-squares
  slope of CTS's pseudo-count of the repeated frame against its real count is above 0;
- ``PixelCNN PG does not vanish`` (Sec. 5: "the per-step PG never completely vanishes, as the model
  tracks the most recent data"; Sec. 7): the exponent b of PixelCNN's PG ~ k^b over the frame's visits
  k lies above :data:`PG_EXPONENT_FLOOR`. A count's PG decays as k^-1, one that levels off has b = 0.

PixelCNN's own pseudo-count is not held to the first claim: with its constant step size its PG does
not vanish, so its pseudo-count stays small (the second claim).
"""
from __future__ import annotations

from typing import Sequence

from pcnn_explore.study.claim import Claim, Design

__all__ = ["NOTEBOOK", "PG_EXPONENT_FLOOR", "COUNTS", "PG", "counts_claim", "pg_claim"]

NOTEBOOK = "00_pseudo_counts"
#: the claim "the PG never completely vanishes" is b > this, for PG ~ k^b over a repeated frame's visits:
#: halfway between a count's decay (b = -1) and a PG that levels off (b = 0); -1/2 or below, the PG
#: falls by a factor sqrt(10) or more per tenfold visits, which is vanishing. Over the study's visits
#: k = 1..59 a count's PG ln(1 + 1/k) gives -0.95, and a count 20 times slower, ln(1 + 20/k) (a
#: pseudo-count slope of 0.05, as CTS's), still -0.64: below the floor
PG_EXPONENT_FLOOR = -0.5
#: the claims' names
COUNTS = "pseudo-counts grow with real counts"
PG = "PixelCNN PG does not vanish"


def _design(seeds: Sequence[int], budget: str) -> Design:
    return Design(tuple(int(s) for s in seeds), (), budget)


def counts_claim(seeds: Sequence[int], budget: str = "") -> Claim:
    """CTS's pseudo-count of the repeated frame grows with its real count: the per-seed slope above 0."""
    measure = "CTS's pseudo-count slope against the real count"
    return Claim(NOTEBOOK, COUNTS, "paper", COUNTS, "progress", quantity="CTS pseudo-count slope against the real count",
                 label=measure, measure=measure, threshold=0.0, lines=("cts",), labels=("CTS",),
                 paper="pseudo-counts generalise counts (after Bellemare et al. 2016)", where="Sec. 2.1",
                 design=_design(seeds, budget))


def pg_claim(seeds: Sequence[int], budget: str = "", floor: float = PG_EXPONENT_FLOOR) -> Claim:
    """PixelCNN's PG of the repeated frame does not vanish: the per-seed exponent b above ``floor``."""
    measure = "PixelCNN's PG exponent b"
    return Claim(NOTEBOOK, PG, "paper", PG, "progress", quantity="PixelCNN PG exponent over the visits", label=measure,
                 measure=measure, threshold=float(floor), lines=("pixelcnn",), labels=("PixelCNN",),
                 paper="the per-step PG never completely vanishes, as the model tracks the most recent data",
                 where="Sec. 5, 7", design=_design(seeds, budget))
