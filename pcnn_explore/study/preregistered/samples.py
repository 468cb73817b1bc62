"""Notebook 04's claim (Fig. 4): PixelCNN's samples look better than CTS's after 25K steps.

The paper judges by eye; the claim here is a stated measure: per seed, the mean over a model's
samples of the distance to the nearest *held-out* frame (share of pixels that differ, 0..1; frames
of an independent stream the model never trained on, so a copied training frame scores what a new
realistic one scores, no better), PixelCNN's below CTS's, paired by seed, by the sign-flip test.
"""
from __future__ import annotations

from typing import Sequence

from pcnn_explore.study.claim import Claim, Design

__all__ = ["NOTEBOOK", "CLAIM", "claim"]

NOTEBOOK = "04_samples"
#: the claim's name
CLAIM = "PixelCNN samples nearer held-out frames"


def claim(seeds: Sequence[int], budget: str = "") -> Claim:
    """PixelCNN's samples nearer held-out frames than CTS's."""
    measure = "held-out distance PixelCNN - CTS"
    return Claim(NOTEBOOK, CLAIM, "paper", CLAIM, "sign_flip", quantity="distance to the nearest held-out frame",
                 unit="", label=measure, measure=measure, direction="less", lines=("pixelcnn", "cts"),
                 labels=("PixelCNN", "CTS"), paper="PixelCNN samples look better than CTS samples after 25K steps",
                 where="Fig. 4", design=Design(tuple(int(s) for s in seeds), (), budget))
