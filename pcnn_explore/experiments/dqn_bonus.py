"""Fig. 5 and the appendix table: DQN vs DQN-CTS vs DQN-PixelCNN on hard exploration.

Paper: on the hardest sparse-reward games DQN-PixelCNN (with MMC, c = 0.1, PG decay n^-1/2)
beats DQN-CTS, which beats DQN (the appendix table: maximum scores over 150M frames, mean of
3 seeds; kept in ``data/paper_hard_games.csv``, see :func:`load_paper_table`).

Variants (names of :data:`pcnn_explore.experiments.agent_runs.VARIANTS`): ``dqn`` (plain
Q-learning, no bonus), ``cts_mmc`` (DQN-CTS) and ``pixelcnn_mmc`` (DQN-PixelCNN).
"""
from __future__ import annotations

import csv
import dataclasses
import os
from pathlib import Path
from typing import ClassVar

from pcnn_explore.experiments.agent_runs import (
    PAPER_AGENT_STEPS,
    SMOKE_TASK,
    STUDY_TASK,
    STUDY_TRAIN_OVERRIDES,
    AgentExperimentResults,
    AgentSettings,
    make_specs,
    run_experiment,
)

__all__ = ["DqnBonusSettings", "run", "load_paper_table", "paper_claims", "PAPER_TABLE", "PAPER_AGENTS", "HARD_GAMES"]

PAPER_TABLE = Path(__file__).resolve().parents[2] / "data" / "paper_hard_games.csv"
PAPER_AGENTS = ("DQN", "A3C-CTS", "Prior. Duel", "DQN-CTS", "DQN-PixelCNN")
#: the 7 hard-exploration, sparse-reward games of the paper's appendix table
HARD_GAMES = ("ALE/Freeway-v5", "ALE/Gravitar-v5", "ALE/MontezumaRevenge-v5", "ALE/Pitfall-v5",
              "ALE/PrivateEye-v5", "ALE/Solaris-v5", "ALE/Venture-v5")


def load_paper_table(path: str | os.PathLike = PAPER_TABLE) -> dict[str, dict[str, float]]:
    """The paper's appendix table: {game: {agent: score}} (scores in game points).

    Agents: DQN, A3C-CTS, Prior. Duel, DQN-CTS, DQN-PixelCNN (the last two: maximum score over
    150M training frames, averaged over 3 seeds). Also {game: {"ale_id": id}} under key "ale_id".
    """
    table: dict[str, dict[str, float]] = {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = set(PAPER_AGENTS + ("game", "ale_id")) - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: missing column(s) {sorted(missing)}")
        for row in reader:
            table[row["game"]] = {a: float(row[a]) for a in PAPER_AGENTS}
            table[row["game"]]["ale_id"] = row["ale_id"]
    return table


@dataclasses.dataclass
class DqnBonusSettings(AgentSettings):
    """Settings of the Fig. 5 experiment; see :class:`AgentSettings` for the shared fields.

    variants: which agents to train (default DQN, DQN-CTS, DQN-PixelCNN).
    """

    variants: tuple[str, ...] = ("dqn", "cts_mmc", "pixelcnn_mmc")

    # study: sized to about 15 min on 2 cores (per-process speeds in data/task_search.json)
    PRESETS: ClassVar[dict] = {
        "smoke": dict(envs=(SMOKE_TASK,), seeds=(0,), steps=300, workers=1, n_bins=4, window=5,
                      train_overrides=(("tensorboard", False),)),
        "study": dict(envs=(STUDY_TASK,), seeds=(0, 1, 2), steps=12_000, workers=2, n_bins=16, window=10,
                      train_overrides=STUDY_TRAIN_OVERRIDES),
        "paper": dict(envs=HARD_GAMES, seeds=(0, 1, 2), steps=PAPER_AGENT_STEPS, workers=1, n_bins=150, window=100),
    }


def run(settings: DqnBonusSettings, out_dir: str | os.PathLike = "output/07_dqn_pixelcnn") -> AgentExperimentResults:
    """Train every variant x seed x env; runs are written under ``out_dir/runs``."""
    variants = [(v, v, {}, "") for v in settings.variants]
    return run_experiment(settings, make_specs(settings, Path(out_dir) / "runs", variants))


def paper_claims(table: dict | None = None) -> dict[str, str]:
    """The paper's numbers per variant key: appendix-table scores on three sparse-reward games."""
    t = table or load_paper_table()
    games = {"Montezuma's Revenge": "Montezuma", "Private Eye": "Private Eye", "Venture": "Venture"}
    col = {"dqn": "DQN", "cts_mmc": "DQN-CTS", "pixelcnn_mmc": "DQN-PixelCNN"}
    return {k: ", ".join(f"{short} {t[g][a]:,.2f}" for g, short in games.items()) for k, a in col.items()}
