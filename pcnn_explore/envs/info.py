"""What every env made by :mod:`pcnn_explore.envs` adds to ``info``: the density frame and the RGB
picture of the state (:class:`DensityFrameInfo`), and the exploration measures ``info["cell"]`` and
``info["success"]`` (:class:`ExplorationInfo`), with the readers of Atari's screen and DeepSea's grid
(MiniGrid's render and position: :mod:`pcnn_explore.envs.minigrid`; Montezuma's room:
:mod:`pcnn_explore.envs.montezuma`).
"""
from __future__ import annotations

from typing import Any, Callable

import gymnasium as gym
import numpy as np

from pcnn_explore.envs.frames import to_density_frame

__all__ = ["DensityFrameInfo", "ExplorationInfo"]


class DensityFrameInfo(gym.Wrapper):
    """Adds ``info["density_frame"]`` ((42, 42) uint8, 0..7) to every ``reset`` and ``step``
    (unless ``density_frame=False``).

    ``rgb_fn(env)`` returns the (H, W, 3) uint8 RGB picture of the current state. With
    ``keep_rgb=True`` that picture is also returned as ``info["rgb"]`` (for recording code).
    ``frame_fn(env)``, if given, makes the density frame instead of ``to_density_frame(picture)``
    (DeepSea: one pixel per cell).
    """

    def __init__(self, env: gym.Env, rgb_fn: Callable[[gym.Env], np.ndarray], keep_rgb: bool = False,
                 density_frame: bool = True, frame_fn: Callable[[gym.Env], np.ndarray] | None = None):
        super().__init__(env)
        self._rgb_fn = rgb_fn
        self._keep_rgb = keep_rgb
        self._density_frame = density_frame
        self._frame_fn = frame_fn

    def _add(self, info: dict) -> dict:
        if not (self._density_frame or self._keep_rgb):
            return info
        info = dict(info)
        if self._frame_fn is not None and not self._keep_rgb:
            info["density_frame"] = self._frame_fn(self.env)
            return info
        rgb = self._rgb_fn(self.env)
        if self._density_frame:
            info["density_frame"] = self._frame_fn(self.env) if self._frame_fn else to_density_frame(rgb)
        if self._keep_rgb:
            info["rgb"] = rgb
        return info

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return obs, self._add(info)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, self._add(info)


def _ale_rgb(env: gym.Env) -> np.ndarray:
    return env.unwrapped.ale.getScreenRGB()


class ExplorationInfo(gym.Wrapper):
    """Adds ``info["cell"]`` (``cell_fn(env)``, hashable) and ``info["success"]`` (``success_fn(reward,
    terminated)``; False after ``reset``) to every ``reset`` and ``step``."""

    def __init__(self, env: gym.Env, cell_fn: Callable[[gym.Env], Any], success_fn: Callable[[float, bool], bool]):
        super().__init__(env)
        self._cell_fn, self._success_fn = cell_fn, success_fn

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return obs, {**info, "cell": self._cell_fn(self.env), "success": False}

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        info = {**info, "cell": self._cell_fn(self.env), "success": bool(self._success_fn(reward, terminated))}
        return obs, reward, terminated, truncated, info


def _deep_sea_picture(env: gym.Env) -> np.ndarray:
    return np.repeat(env.unwrapped.observation()[0][..., None], 3, axis=2)  # (N, N, 3), agent white
