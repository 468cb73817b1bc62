"""Recorded episodes: play one episode while a density model trains online, save it, load it back.

- :mod:`pcnn_explore.record.episode`: :class:`Episode` (every array's meaning, shape and dtype),
  the ``.npz`` file format, :func:`save_episode`, :func:`load_episode` and their validation,
  :func:`shipped_episode`, :func:`summarize_episode`.
- :mod:`pcnn_explore.record.recorder`: the policies (random, :class:`ScriptedPolicy`, a trained
  agent's checkpoint) and :func:`record_episode`.
- :mod:`pcnn_explore.record.cli`: ``pcnn-explore record`` (``add_arguments``, ``run_cli``).

Every public name is importable from here: ``from pcnn_explore.record import record_episode,
load_episode, save_episode, Episode, ...``.
"""
from pcnn_explore.record.cli import add_arguments, run_cli
from pcnn_explore.record.episode import (BONUS_FIELDS, FIELDS, FORMAT_VERSION, SHIPPED_DIR, Episode, episode_checksum,
                                         load_episode, save_episode, shipped_episode, summarize_episode)
from pcnn_explore.record.recorder import MONTEZUMA_SCRIPT, SCRIPTS, ScriptedPolicy, record_episode

__all__ = [
    "FORMAT_VERSION",
    "FIELDS",
    "BONUS_FIELDS",
    "DENSITY_MODELS",
    "MONTEZUMA_SCRIPT",
    "SCRIPTS",
    "Episode",
    "ScriptedPolicy",
    "record_episode",
    "save_episode",
    "load_episode",
    "episode_checksum",
    "SHIPPED_DIR",
    "shipped_episode",
    "summarize_episode",
    "add_arguments",
    "run_cli",
]


def __getattr__(name: str):
    # DENSITY_MODELS, kept for old imports: the registry's BONUS_MODELS (pcnn_explore.density), looked
    # up when asked, so that importing this package does not import the models (and torch)
    if name == "DENSITY_MODELS":
        from pcnn_explore.density import BONUS_MODELS

        return BONUS_MODELS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
