"""Notebook 02's claim (Fig. 2, middle): the density model's loss spikes at episode starts.

Per seed, the share of the largest loss spikes that lie within a window after an episode start,
against the share chance gives (the frames that lie that close to a start), paired by seed, by the
sign-flip test: near-start share - chance > 0 (:func:`claim`). A run too short to hold an episode
start after its first frames ranks no spike: when no seed has one, the claim is not testable
(:func:`too_short`).
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

from pcnn_explore.study.claim import Claim, Design
from pcnn_explore.verdicts import TOO_FEW_SEEDS

__all__ = ["NOTEBOOK", "CLAIM", "TOO_SHORT", "claim", "too_short"]

NOTEBOOK = "02_episode_start_spikes"
#: the claim's name
CLAIM = "spikes at episode starts"
#: why a run with no spike to rank on any seed cannot test the claim
TOO_SHORT = "no episode start after the first frames of any seed: this run is too short to test the claim"
_PAPER = ("the density model's 'surprise' upon observing the distinctive green frame that sometimes occurs at the "
          "episode start")


def claim(seeds: Sequence[int], budget: str = "") -> Claim:
    """The near-start share of the largest spikes above chance's, paired by seed."""
    measure = "near-start share - chance"
    return Claim(NOTEBOOK, CLAIM, "paper", CLAIM, "sign_flip", quantity="share of the largest spikes near a start",
                 label=measure, measure=measure, lines=("near start", "chance"), labels=("near-start share", "chance"),
                 paper=_PAPER, where="Fig. 2, middle", design=Design(tuple(int(s) for s in seeds), (), budget))


def too_short(seeds: Sequence[int], budget: str = "") -> Claim:
    """The claim, not testable: no seed's run holds an episode start after its first frames."""
    return dataclasses.replace(claim(seeds, budget), test="not_testable", reason=TOO_FEW_SEEDS, note=TOO_SHORT)
