"""Fig. 12: DQN-PixelCNN with the prediction-gain scale c in {0.1, 1, 10} (bonus from c n^-1/2 PG_n).

Paper (5 seeds each): the agent is robust across two orders of magnitude of c; a larger c
explores harder and reaches peak scores sooner, but can be less stable later, because after
reward clipping an inflated bonus becomes nearly constant. The experiment is the ``"fig12"``
entry of :data:`pcnn_explore.experiments.agent_figures.FIGURES`; this module names its parts
for notebook 09.
"""
from __future__ import annotations

from pcnn_explore.experiments import agent_summary
from pcnn_explore.experiments.agent_figures import FIGURES, PgScaleSettings, run, scale_key

__all__ = ["summary", "paper", "PAPER_CLAIMS", "PgScaleSettings", "run", "scale_key", "PAPER_GAMES"]

#: the games whose record peaks the text reports for large c (Fig. 12 shows three of them)
PAPER_GAMES = FIGURES["fig12"].games
#: Fig. 12 and Sec. 6, in the paper's words and numbers
PAPER_CLAIMS = FIGURES["fig12"].claims


def summary(results) -> dict:
    """metrics.json's ``summary``: maximum score, AUC and AUC vs DQN per line, and the verdict
    (:func:`pcnn_explore.experiments.agent_summary.summary`)."""
    return agent_summary.summary("fig12", results)


def paper(results) -> dict:
    """metrics.json's ``paper``: the paper's claims and numbers under the summary's names."""
    return agent_summary.paper("fig12", results)
