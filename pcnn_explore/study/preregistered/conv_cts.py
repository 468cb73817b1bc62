"""Notebook 06's claims (App. C): the convolution explains part, but not all, of PixelCNN's advantage
over CTS.

App. C's claim rests on agent scores (Fig. 14), which a density notebook does not measure: its one
paper claim is declared ``not testable on this task`` (:func:`agents_claim`, why in
:data:`APPENDIX_C_AGENTS`), so the notebook's word is ``not testable``. What held-out loss can say,
the accuracy ordering App. C's explanation implies, is the kit's reading (:func:`kit_claims`), per
game's main stream, each ordering directional, paired by seed, by the sign-flip test: PixelCNN below
CTS, ConvCTS below CTS, ConvCTS above PixelCNN (held-out loss, nats per frame). It never makes the
notebook's word.
"""
from __future__ import annotations

from typing import Sequence

from pcnn_explore.study.claim import Claim, Design
from pcnn_explore.verdicts import NOT_ON_THIS_TASK

__all__ = ["NOTEBOOK", "AGENTS", "APPENDIX_C_AGENTS", "agents_claim", "kit_claims"]

NOTEBOOK = "06_conv_cts"
#: the paper claim's name
AGENTS = "App. C agent scores"
#: what held-out loss cannot decide of App. C, the claim's sentence in the paper and its evidence
APPENDIX_C_AGENTS = ("App. C's claim, the convolution \"explains part, but not all of PixelCNN's advantage\" (Sec. 5), "
                     "rests on agent scores (Fig. 14: DQN-ConvCTS like DQN-PixelCNN on dense-reward games, as poor "
                     "as DQN-CTS on sparse-reward ones); a density notebook runs no agent, and held-out loss is "
                     "another level (a lower loss need not give a better bonus)")
_PAPER = "the convolutional aspect plays a role in the 'softer' nature of the PixelCNN model, but alone is insufficient"
#: (name's end, line a, line b, direction) of the kit's orderings, per game
_ORDERINGS = (("PixelCNN < CTS", "pixelcnn", "cts", "less"), ("ConvCTS < CTS", "convcts", "cts", "less"),
              ("ConvCTS > PixelCNN", "convcts", "pixelcnn", "greater"))
_LABELS = {"cts": "CTS", "convcts": "ConvCTS", "pixelcnn": "PixelCNN"}


def _design(seeds: Sequence[int], budget: str) -> Design:
    return Design(tuple(int(s) for s in seeds), (), budget)


def agents_claim(seeds: Sequence[int], budget: str = "") -> Claim:
    """App. C's claim on agent scores: not testable on this task."""
    return Claim(NOTEBOOK, AGENTS, "paper", AGENTS, "not_testable", reason=NOT_ON_THIS_TASK, note=APPENDIX_C_AGENTS,
                 method="none: a density notebook runs no agent", paper=_PAPER, where="App. C, Fig. 14",
                 design=_design(seeds, budget))


def kit_claims(game: str, seeds: Sequence[int], budget: str = "") -> tuple[tuple[Claim, str, str], ...]:
    """The kit's three orderings of held-out loss on ``game``'s main stream: (claim, line a, line b) each."""
    out = []
    for end, a, b, direction in _ORDERINGS:
        name = f"{game} {end}"
        measure = f"held-out loss {_LABELS[a]} - {_LABELS[b]} (nats)"
        out.append((Claim(NOTEBOOK, name, "kit", name, "sign_flip", quantity="held-out loss (nats per frame)",
                          label=measure, measure=measure, direction=direction, lines=(a, b),
                          labels=(_LABELS[a], _LABELS[b]), paper=_PAPER, where="App. C",
                          design=_design(seeds, budget)), a, b))
    return tuple(out)
