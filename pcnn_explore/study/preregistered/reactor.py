"""Notebook 13's claims (Reactor and the bonus; the paper's Sec. 4.2, Fig. 7, 8), fixed before its runs:
:data:`CLAIMS`, each a :class:`pcnn_explore.study.Claim` of kind "paper" or "kit", and the study
profile's design (:data:`STUDY_SIZES`, :data:`STUDY_EPISODES`, the verdict seeds 701-720).

The paired claims compare line a with line b (keys of
:data:`pcnn_explore.experiments.agents.reactor_lines.LINES`) in a per-seed quantity by the exact
sign flip paired by seed; ``traces_cut`` (the kit's measure of the paper's hypothesis) is the sign
flip of the MMC mix of the DQN-CTS runs minus each seed's Retrace trace product from x_0 to a large
reward on Reactor-CTS, against 0 (a ``progress`` test). The per-seed values and each claim's labels
and measure come from :func:`pcnn_explore.experiments.agents.reactor_summary.decisions`.
"""
from __future__ import annotations

from pcnn_explore.study.claim import Claim, Design
from pcnn_explore.study.preregistered.deep_sea import RUN_WITH_CTS, VERDICT_SEEDS

__all__ = ["NOTEBOOK", "CLAIMS", "STUDY_SIZES", "STUDY_EPISODES", "measure_text"]

NOTEBOOK = "13_reactor"
#: the study profile's DeepSea sizes and episodes per run (N agent steps each)
STUDY_SIZES = (10,)
STUDY_EPISODES = 400
_DESIGN = Design(VERDICT_SEEDS, STUDY_SIZES, f"{STUDY_EPISODES} episodes")
_AUC = dict(quantity="auc", unit="share of episodes", label="AUC difference", test="sign_flip", design=_DESIGN)
_PAPER_FORM = "the paper's PixelCNN, not this one"

CLAIMS: tuple[Claim, ...] = (
    Claim(NOTEBOOK, "bonus_helps_reactor", "paper", "the bonus helps Reactor: Reactor-CTS above Reactor in AUC "
          "(Fig. 7, 8)", lines=("reactor_cts", "reactor"), paper="improves on many of 57 games (Fig. 8)",
          where="Fig. 7, 8", note=RUN_WITH_CTS, **_AUC),
    Claim(NOTEBOOK, "dqn_mmc_above_reactor_bonus", "paper", "Reactor cannot make full use of the bonus: DQN-CTS + MMC "
          "above Reactor-CTS in AUC (Sec. 4.2)", lines=("cts_mmc", "reactor_cts"),
          paper="Reactor cannot make full use of the bonus on sparse games (Sec. 4.2)", where="Sec. 4.2",
          note=RUN_WITH_CTS, **_AUC),
    Claim(NOTEBOOK, "traces_cut", "kit", "Retrace's trace product from x_0 to a large reward on Reactor-CTS lies below "
          "the MMC mix of DQN-CTS (the kit's measure of Sec. 4.2's hypothesis)", "progress",
          quantity="from_start_product", label="from start product difference", lines=("reactor_cts", "cts_mmc"),
          paper="hypothesis: truncated traces cut long-horizon reward (no numbers)", where="Sec. 4.2",
          design=_DESIGN),
    Claim(NOTEBOOK, "position_bias_helps_reactor", "kit", "does the kit's position-biased PixelCNN bonus lift "
          "Reactor's AUC?", lines=("reactor_pixelcnn_pos", "reactor"), paper=_PAPER_FORM, **_AUC),
    Claim(NOTEBOOK, "kit_dqn_above_reactor_bonus", "kit", "with the kit's position-biased PixelCNN, does DQN + MMC "
          "reach a higher AUC than Reactor with the same bonus?", lines=("pixelcnn_pos_mmc", "reactor_pixelcnn_pos"),
          paper=_PAPER_FORM, **_AUC),
)


def measure_text(quantity: str, labels, beta: float = 0.0) -> str:
    """The words of what a claim measures, as its sentence writes them: ``AUC Reactor-CTS - Reactor``;
    for the trace product (``beta``: the MMC mix), ``MMC mix 0.1 - prod c from x_0 (Reactor-CTS)``."""
    if quantity == "from_start_product":
        return f"MMC mix {beta:g} - prod c from x_0 ({labels[0]})"
    return f"{quantity.upper()} {labels[0]} - {labels[1]}"
