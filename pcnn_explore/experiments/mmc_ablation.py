"""Fig. 11: DQN with and without the PixelCNN bonus, each with and without the mixed Monte Carlo update.

Paper: on the hardest sparse-reward games neither the bonus alone nor MMC alone makes
progress; only their combination (DQN-PixelCNN) does. The transient bonus must be learnt from
quickly, and MMC propagates it (and the rare extrinsic reward) over long horizons.

Variants: ``dqn`` (no bonus, Q-learning), ``dqn_mmc`` (no bonus, MMC beta 0.1), ``pixelcnn``
(bonus, Q-learning), ``pixelcnn_mmc`` (bonus and MMC). The experiment is the ``"fig11"`` entry
of :data:`pcnn_explore.experiments.agent_figures.FIGURES`; this module names its parts for
notebook 08.
"""
from __future__ import annotations

from pcnn_explore.experiments import agent_summary
from pcnn_explore.experiments.agent_figures import FIGURES, MmcAblationSettings, run

__all__ = ["summary", "paper", "PAPER_CLAIMS", "MmcAblationSettings", "run", "FOUR_VARIANTS", "PAPER_GAMES"]

FOUR_VARIANTS = FIGURES["fig11"].keys
#: Bank Heist and Time Pilot (MMC explains the gain), H.E.R.O. (additive gains) and a hard
#: sparse-reward game, which the text does not name; Montezuma's Revenge stands in.
PAPER_GAMES = FIGURES["fig11"].games
#: Fig. 11, bottom right (a hard, sparse-reward game), in the paper's words
PAPER_CLAIMS = FIGURES["fig11"].claims


def summary(results) -> dict:
    """metrics.json's ``summary``: maximum score, AUC and AUC vs DQN per line, and the verdict
    (:func:`pcnn_explore.experiments.agent_summary.summary`)."""
    return agent_summary.summary("fig11", results)


def paper(results) -> dict:
    """metrics.json's ``paper``: the paper's claims and numbers under the summary's names."""
    return agent_summary.paper("fig11", results)
