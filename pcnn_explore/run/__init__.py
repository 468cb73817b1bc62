"""The training run, by job:

- :mod:`~pcnn_explore.run.config`: :class:`TrainConfig`, its presets and validation;
- :mod:`~pcnn_explore.run.loop`: :func:`train`, the algorithm in one place;
- :mod:`~pcnn_explore.run.state`: log, settings, checkpoints, policies, RNG states and resuming;
- :mod:`~pcnn_explore.run.cli`: ``pcnn-explore train``, a flag for every setting;
- :mod:`~pcnn_explore.run.variants`: the agent variants (``dqn``, ``cts_mmc``, ...) and the settings they expand to.

``pcnn_explore.train`` re-exports the public names. They are imported on first use, so that
``pcnn-explore train --help`` loads neither torch nor gymnasium.
"""
import importlib

_HOMES = {"TrainConfig": "config", "BONUSES": "config", "SCORED_FRAMES": "config", "TrainResult": "loop",
          "epsilon_at": "loop", "train": "loop", "LOG_COLUMNS": "state", "Policy": "state", "RunError": "state",
          "episode_seed": "state", "load_policy": "state", "read_log": "state"}

__all__ = ["TrainConfig", "TrainResult", "train", "read_log", "load_policy", "Policy", "episode_seed", "epsilon_at",
           "LOG_COLUMNS", "BONUSES", "SCORED_FRAMES", "RunError"]


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
