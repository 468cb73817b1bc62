"""Fig. 13: DQN-PixelCNN trained from the intrinsic reward alone.

Paper (3 seeds per configuration): on sparse-reward games the bonus alone trains an agent that
scores (measured by the environment's reward, which it never sees). The text does not name
Fig. 13's games; the paper preset uses Montezuma's Revenge and Private Eye.

Runs: ``intrinsic_only`` (DQN-PixelCNN with MMC learning from r+ alone; the extrinsic return is
logged, not learnt from) and, for comparison, the plain ``dqn`` baseline learning from the
extrinsic reward. ``with_full`` adds DQN-PixelCNN learning from both.
"""
from __future__ import annotations

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

__all__ = ["PAPER_CLAIMS", "IntrinsicOnlySettings", "run", "PAPER_GAMES"]

PAPER_GAMES = ("ALE/MontezumaRevenge-v5", "ALE/PrivateEye-v5")


@dataclasses.dataclass
class IntrinsicOnlySettings(AgentSettings):
    """Settings of the Fig. 13 experiment. with_dqn / with_full: also train those baselines."""

    with_dqn: bool = True
    with_full: bool = False

    # study: sized to about 15 min on 2 cores (per-process speeds in data/task_search.json)
    PRESETS: ClassVar[dict] = {
        "smoke": dict(envs=(SMOKE_TASK,), seeds=(0,), steps=300, workers=1, n_bins=4, window=5,
                      train_overrides=(("tensorboard", False),)),
        "study": dict(envs=(STUDY_TASK,), seeds=(0, 1, 2), steps=12_000, workers=2, n_bins=16, window=10,
                      train_overrides=STUDY_TRAIN_OVERRIDES),
        "paper": dict(envs=PAPER_GAMES, seeds=(0, 1, 2), steps=PAPER_AGENT_STEPS, workers=1, n_bins=150,
                      window=100, with_dqn=False, with_full=True),
    }


def run(settings: IntrinsicOnlySettings, out_dir: str | os.PathLike = "output/10_intrinsic_only") -> AgentExperimentResults:
    """Train the intrinsic-only agent (and the chosen baselines) x seeds x envs under ``out_dir/runs``."""
    variants = [("pixelcnn_mmc", "intrinsic_only", {"intrinsic_only": True}, "DQN-PixelCNN, intrinsic reward only")]
    if settings.with_full:
        variants.append(("pixelcnn_mmc", "pixelcnn_mmc", {}, ""))
    if settings.with_dqn:
        variants.append(("dqn", "dqn", {}, ""))
    return run_experiment(settings, make_specs(settings, Path(out_dir) / "runs", variants))


#: Fig. 13, in the paper's words
PAPER_CLAIMS = {
    "intrinsic_only": "the bonus alone trains an agent that scores (extrinsic reward never seen)",
    "pixelcnn_mmc": "DQN-PixelCNN with both rewards (for comparison)",
    "dqn": "DQN: no progress on the hardest games",
}
