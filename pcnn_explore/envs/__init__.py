"""The environments: Atari through ale-py, MiniGrid pixel worlds (with the kit's own tasks), DeepSea.

- :mod:`~pcnn_explore.envs.ids`: which env ids exist (checked before anything is built), their
  family, the shape of their density frame and the training settings each needs;
- :mod:`~pcnn_explore.envs.factory`: :func:`make_env` (the agent's observation and
  ``info["density_frame"]``) and :func:`make_raw_env` (RGB pictures);
- :mod:`~pcnn_explore.envs.info`: what every env adds to ``info`` (density frame, cell, success);
- :mod:`~pcnn_explore.envs.frames`: the density model's view of a frame (42x42, 8 levels);
- :mod:`~pcnn_explore.envs.minigrid`: MiniGrid as pixels; :mod:`~pcnn_explore.envs.minigrid_tasks`:
  the kit's MiniGrid tasks (``MiniGrid-Serpentine-*``, ``MiniGrid-RoomChain-*``);
- :mod:`~pcnn_explore.envs.deep_sea`: DeepSea (bsuite) and its training settings;
  :mod:`~pcnn_explore.envs.deep_sea_protocol`: bsuite's deep-sea protocol;
- :mod:`~pcnn_explore.envs.montezuma`: Montezuma's Revenge's room address, action names and script.

The names below are imported on first use, so that importing one module of the package (say
:mod:`~pcnn_explore.envs.frames`) loads neither gymnasium nor an emulator.
"""
import importlib

_HOMES = {"make_env": "factory", "make_raw_env": "factory", "ChannelStack": "factory",
          "check_env_id": "ids", "minigrid_action_count": "ids", "auto_network": "ids", "is_atari": "ids",
          "is_minigrid": "ids", "is_deep_sea": "ids", "density_shape": "ids", "env_defaults": "ids",
          "EXAMPLE_IDS": "ids", "DENSITY_SHAPE": "ids", "DEEP_SEA_DEFAULTS": "deep_sea", "DEEP_SEA_MMC_BETA": "deep_sea",
          "DensityFrameInfo": "info", "ExplorationInfo": "info", "MiniGridPixels": "minigrid",
          "ActionSubset": "minigrid", "MONTEZUMA_ROOM_RAM": "montezuma"}

__all__ = ["make_env", "make_raw_env", "check_env_id", "minigrid_action_count", "auto_network", "is_atari", "is_minigrid",
           "is_deep_sea", "density_shape", "env_defaults", "DEEP_SEA_DEFAULTS", "DEEP_SEA_MMC_BETA", "DensityFrameInfo",
           "ExplorationInfo"]


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
