"""The training run, in four modules:

- :mod:`~pcnn_explore.run.config`: :class:`TrainConfig`, its presets and validation;
- :mod:`~pcnn_explore.run.loop`: :func:`train`, the algorithm in one place;
- :mod:`~pcnn_explore.run.state`: log, settings, checkpoints, policies, RNG states and resuming;
- :mod:`~pcnn_explore.run.cli`: ``pcnn-explore train``, a flag for every setting.

``pcnn_explore.train`` re-exports the public names.
"""
from pcnn_explore.run.config import BONUSES, SCORED_FRAMES, TrainConfig
from pcnn_explore.run.loop import TrainResult, epsilon_at, train
from pcnn_explore.run.state import LOG_COLUMNS, Policy, RunError, episode_seed, load_policy, read_log

__all__ = ["TrainConfig", "TrainResult", "train", "read_log", "load_policy", "Policy", "episode_seed", "epsilon_at",
           "LOG_COLUMNS", "BONUSES", "SCORED_FRAMES", "RunError"]
