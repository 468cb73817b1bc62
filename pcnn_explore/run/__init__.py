"""The training run, by job:

- :mod:`~pcnn_explore.run.config`: :class:`TrainConfig`, its presets and validation;
- :mod:`~pcnn_explore.run.loop`: :func:`train`, the algorithm in one place (act, score, step, learn,
  store, log); what it leans on, one module each: :mod:`~pcnn_explore.run.state` (the run's state,
  its checkpoints), :mod:`~pcnn_explore.run.solve` (bsuite's solve rule),
  :mod:`~pcnn_explore.run.logger` (the logs), :mod:`~pcnn_explore.run.interrupt` (Ctrl-C),
  :mod:`~pcnn_explore.run.closing` (the end of a run), :mod:`~pcnn_explore.run.result` (what it returns);
- :mod:`~pcnn_explore.run.log`: the episode log (``log.csv``); :mod:`~pcnn_explore.run.settings`: the
  settings file (``settings.json``);
- :mod:`~pcnn_explore.run.checkpoints`: the run's files, its checkpoints and RNG states;
- :mod:`~pcnn_explore.run.resume`: a fresh start or a resumption, checked before anything is written;
- :mod:`~pcnn_explore.run.policy`: a trained agent's policy read back (:func:`load_policy`);
- :mod:`~pcnn_explore.run.cli`: ``pcnn-explore train``, a flag for every setting;
- :mod:`~pcnn_explore.run.variants`: the agent variants (``dqn``, ``cts_mmc``, ...) and the settings they expand to.

This package names the public ones (``from pcnn_explore.run import TrainConfig, train, read_log``),
imported on first use, so that ``pcnn-explore train --help`` loads neither torch nor gymnasium.
"""
import importlib

_HOMES = {"TrainConfig": "config", "BONUSES": "config", "SCORED_FRAMES": "config", "TrainResult": "result",
          "RunInterrupted": "interrupt", "epsilon_at": "loop", "train": "loop", "LOG_COLUMNS": "log", "Policy": "policy",
          "RunError": "resume", "episode_seed": "resume", "load_policy": "policy", "read_log": "log"}

__all__ = ["TrainConfig", "TrainResult", "RunInterrupted", "train", "read_log", "load_policy", "Policy", "episode_seed",
           "epsilon_at", "LOG_COLUMNS", "BONUSES", "SCORED_FRAMES", "RunError"]


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
