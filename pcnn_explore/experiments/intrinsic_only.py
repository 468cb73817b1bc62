"""Fig. 13: DQN-PixelCNN trained from the intrinsic reward alone.

Paper (3 seeds per configuration): on sparse-reward games the bonus alone trains an agent that
scores (measured by the environment's reward, which it never sees). The text does not name
Fig. 13's games; the paper preset uses Montezuma's Revenge and Private Eye.

Runs: ``intrinsic_only`` (variant ``pixelcnn_mmc_intrinsic``: DQN-PixelCNN with MMC learning
from r+ alone; the extrinsic return is logged, not learnt from) and, for comparison, the plain
``dqn`` baseline learning from the extrinsic reward. ``with_full`` adds DQN-PixelCNN learning
from both. The experiment is the ``"fig13"`` entry of
:data:`pcnn_explore.experiments.agent_figures.FIGURES`; this module names its parts for notebook 10.
"""
from __future__ import annotations

from pcnn_explore.experiments import agent_summary
from pcnn_explore.experiments.agent_figures import FIGURES, IntrinsicOnlySettings, run

__all__ = ["summary", "paper", "PAPER_CLAIMS", "IntrinsicOnlySettings", "run", "PAPER_GAMES"]

PAPER_GAMES = FIGURES["fig13"].games
#: Fig. 13, in the paper's words
PAPER_CLAIMS = FIGURES["fig13"].claims


def summary(results) -> dict:
    """metrics.json's ``summary``: maximum score, AUC and AUC vs DQN per line, and the verdict
    (:func:`pcnn_explore.experiments.agent_summary.summary`)."""
    return agent_summary.summary("fig13", results)


def paper(results) -> dict:
    """metrics.json's ``paper``: the paper's claims and numbers under the summary's names."""
    return agent_summary.paper("fig13", results)
