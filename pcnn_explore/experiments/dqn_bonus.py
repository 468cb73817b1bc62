"""Fig. 5 and the appendix table: DQN vs DQN-CTS vs DQN-PixelCNN on hard exploration.

Paper: on the hardest sparse-reward games DQN-PixelCNN (with MMC, c = 0.1, PG decay n^-1/2)
beats DQN-CTS, which beats DQN (the appendix table: maximum scores over 150M frames, mean of
3 seeds; kept in ``data/paper_hard_games.csv``, see :func:`load_paper_table`).

Variants (the rule of :mod:`pcnn_explore.run.variants`): ``dqn`` (plain
Q-learning, no bonus), ``cts_mmc`` (DQN-CTS) and ``pixelcnn_mmc`` (DQN-PixelCNN).
The experiment is the ``"fig5"`` entry of :data:`pcnn_explore.experiments.agent_figures.FIGURES`;
this module names its parts for notebook 07.
"""
from __future__ import annotations

from pcnn_explore.experiments import agent_summary
from pcnn_explore.experiments.agent_figures import (
    FIGURES,
    HARD_GAMES,
    PAPER_AGENTS,
    PAPER_TABLE,
    DqnBonusSettings,
    load_paper_table,
    paper_claims,
    run,
)

__all__ = ["summary", "paper", "DqnBonusSettings", "run", "load_paper_table", "paper_claims", "PAPER_TABLE", "PAPER_AGENTS",
           "HARD_GAMES", "PAPER_CLAIMS"]

#: Fig. 5's lines in the paper's words (the appendix table's numbers: :func:`paper_claims`)
PAPER_CLAIMS = FIGURES["fig5"].claims


def summary(results) -> dict:
    """metrics.json's ``summary``: maximum score, AUC and AUC vs DQN per line, and the verdict
    (:func:`pcnn_explore.experiments.agent_summary.summary`)."""
    return agent_summary.summary("fig5", results)


def paper(results) -> dict:
    """metrics.json's ``paper``: the paper's claims and numbers under the summary's names."""
    return agent_summary.paper("fig5", results)
