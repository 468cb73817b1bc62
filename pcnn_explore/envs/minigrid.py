"""MiniGrid as pixels: the observation wrappers and what the density frame and the exploration
measures read from a MiniGrid env (its full-grid render, the agent's position, success).
"""
from __future__ import annotations

from typing import Any, Callable

import gymnasium as gym
import numpy as np

__all__ = ["MiniGridPixels", "ActionSubset"]


class MiniGridPixels(gym.ObservationWrapper):
    """MiniGrid observation -> (3, H, W) uint8 RGB picture at ``tile_size`` pixels per cell.

    ``view="full"``: the whole grid (fully observable; the agent is the red triangle).
    ``view="partial"``: the agent's egocentric 7x7 view.
    ``view_rgb``: the (H, W, 3) picture of the last observation, for the density frame.
    """

    def __init__(self, env: gym.Env, tile_size: int = 4, view: str = "full"):
        super().__init__(env)
        if view not in ("full", "partial"):
            raise ValueError(f"view must be 'full' or 'partial', got {view!r}")
        self.tile_size, self.view = tile_size, view
        u = env.unwrapped
        if view == "full":
            h, w = u.height * tile_size, u.width * tile_size
        else:
            h = w = u.agent_view_size * tile_size
        self.observation_space = gym.spaces.Box(0, 255, (3, h, w), np.uint8)

    def observation(self, observation):
        u = self.env.unwrapped
        if self.view == "full":
            self.view_rgb = _full_render(u, self.tile_size)
        else:
            self.view_rgb = u.get_frame(tile_size=self.tile_size, agent_pov=True)
        return np.ascontiguousarray(self.view_rgb.transpose(2, 0, 1))


class ActionSubset(gym.ActionWrapper):
    """Keep only the first ``n`` actions (MiniGrid: 3 = left, right, forward; 6 drops 'done')."""

    def __init__(self, env: gym.Env, n: int):
        super().__init__(env)
        if not 1 <= n <= env.action_space.n:
            raise ValueError(f"n_actions must be between 1 and {env.action_space.n}, got {n}")
        self.action_space = gym.spaces.Discrete(n)

    def action(self, action):
        return int(action)


def _full_render(u: Any, tile_size: int) -> np.ndarray:
    """The full-grid RGB render of a MiniGrid env without the view-cone highlight, (H, W, 3) uint8.

    The same picture as ``get_frame(highlight=False, tile_size=tile_size)``, built from MiniGrid's
    cached tiles without its per-cell numpy comparisons and visibility mask (several times faster).
    """
    from minigrid.core.grid import Grid

    grid = u.grid
    w, h = grid.width, grid.height
    ax, ay = int(u.agent_pos[0]), int(u.agent_pos[1])
    agent_cell = ay * w + ax
    tiles = [Grid.render_tile(cell, agent_dir=u.agent_dir if k == agent_cell else None, highlight=False,
                              tile_size=tile_size)
             for k, cell in enumerate(grid.grid)]
    # Tiles are float (anti-aliasing means); MiniGrid casts them to uint8 on assignment, as here.
    img = np.stack(tiles).astype(np.uint8).reshape(h, w, tile_size, tile_size, 3)
    return np.ascontiguousarray(img.transpose(0, 2, 1, 3, 4)).reshape(h * tile_size, w * tile_size, 3)


def _cached_minigrid_rgb(env: gym.Env) -> np.ndarray:
    """The picture :class:`MiniGridPixels` made for this step's observation (rendered once): the
    full-grid render with ``view="full"``, the agent's view with ``view="partial"``."""
    return env.get_wrapper_attr("view_rgb")


def _minigrid_cell(env: gym.Env) -> tuple[int, int]:
    x, y = env.unwrapped.agent_pos
    return int(y), int(x)


def _minigrid_success(reward: float, terminated: bool) -> bool:
    return bool(terminated and reward > 0)  # MiniGrid rewards only success, on the terminating step


def _minigrid_rgb(tile_size: int) -> Callable[[gym.Env], np.ndarray]:
    return lambda env: _full_render(env.unwrapped, tile_size)
