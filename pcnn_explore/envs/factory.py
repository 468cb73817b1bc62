"""Environment factories: Atari through ale-py (the Nature DQN pipeline), MiniGrid pixel worlds, DeepSea.

Every environment made here yields two views of each state:

- the **agent's observation**: a uint8 array of shape (C, H, W), channels first.
  Atari: (4, 84, 84), the Nature DQN pipeline (grey, 84x84, frame skip 4, max over the last two
  raw frames, up to 30 no-op actions at reset, a stack of the last 4 processed frames).
  MiniGrid: (3 * frame_stack, H, W), the RGB render of the whole grid (or of the agent's view) at
  ``tile_size`` pixels per cell.
  DeepSea (``DeepSea-{N}-v0``, :mod:`pcnn_explore.envs.deep_sea`): (1, N, N), 255 in the agent's cell.
- the **density frame**: ``info["density_frame"]``, a uint8 array with values 0..7 of shape
  :func:`density_shape` (42, 42), made by :func:`pcnn_explore.envs.frames.to_density_frame` from the
  RGB picture of the state (Atari: the raw 210x160 RGB screen after the last emulator frame of the
  step; MiniGrid: the picture the agent sees, i.e. with ``view="full"`` the full-grid render
  without the view-cone highlight, with ``view="partial"`` the agent's egocentric 7x7 view).
  DeepSea: (N, N), one pixel per cell (7 for the agent, 0 elsewhere). It is present after
  ``reset`` and after every ``step``.

Exploration measures (:mod:`pcnn_explore.exploration` counts them), after ``reset`` and every ``step``:
``info["cell"]``, a hashable position (DeepSea and MiniGrid: the agent's (row, column);
Montezuma's Revenge: its room, RAM address 3) and ``info["success"]``, True on the step of a
success (DeepSea: the +1; MiniGrid: the goal reached, i.e. a positive reward on termination;
Montezuma: a step that scores points). Other Atari games have neither.

Atari defaults (state them when you report results):

- ``sticky_actions=0.25``: the ALE ``-v5`` default (Machado et al. 2018): with probability 0.25
  the emulator repeats the previous action on each raw frame. The paper (2017) used the older
  deterministic ALE; pass ``sticky_actions=0.0`` for that protocol.
- ``terminal_on_life_loss=False``: losing a life does not end the episode (an episode is a game).
  With ``True`` a life loss ends the episode and the next ``reset`` starts a new game (gymnasium's
  ``AtariPreprocessing`` behaviour).
- ``noop_max=30``, ``frame_skip=4``, ``screen_size=84``, ``frame_stack=4``.

Env ids are checked before anything is built: ``ALE/<Game>-v5``, any registered ``MiniGrid-*``
id (including ones registered by your own code) and ``DeepSea-{N}-v0`` for N = 3 ... 50.
:func:`env_defaults` gives the training settings a task needs beyond the profile's preset.
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from pcnn_explore.envs.ids import check_env_id, is_atari, is_deep_sea
from pcnn_explore.envs.info import DensityFrameInfo, ExplorationInfo, _ale_rgb, _deep_sea_picture
from pcnn_explore.envs.minigrid import (ActionSubset, MiniGridPixels, _cached_minigrid_rgb, _minigrid_cell,
                                        _minigrid_rgb, _minigrid_success)
from pcnn_explore.envs.montezuma import montezuma_room

__all__ = ["make_env", "make_raw_env", "ChannelStack"]


class ChannelStack(gym.ObservationWrapper):
    """(k, C, H, W) frame stack -> (k*C, H, W)."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        k, c, h, w = env.observation_space.shape
        self.observation_space = gym.spaces.Box(0, 255, (k * c, h, w), np.uint8)

    def observation(self, observation):
        return np.asarray(observation).reshape(self.observation_space.shape)


def _check_common(seed: object, sticky_actions: float, frame_stack: int) -> None:
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not 0.0 <= float(sticky_actions) <= 1.0:
        raise ValueError(f"sticky_actions is a probability in [0, 1], got {sticky_actions}")
    if not isinstance(frame_stack, (int, np.integer)) or frame_stack < 1:
        raise ValueError(f"frame_stack must be a positive integer, got {frame_stack!r}")


def make_env(
    env_id: str,
    seed: int = 0,
    *,
    sticky_actions: float = 0.25,
    terminal_on_life_loss: bool = False,
    noop_max: int = 30,
    frame_skip: int = 4,
    screen_size: int = 84,
    frame_stack: int | None = None,
    tile_size: int = 4,
    view: str = "full",
    n_actions: int | None = None,
    keep_rgb: bool = False,
    density_frame: bool = True,
    mapping_seed: int | None = None,
    mapping_rule: str | None = None,
) -> gym.Env:
    """Build the agent's environment for ``env_id``; see the module docstring for both views.

    Atari (``ALE/<Game>-v5``): Nature DQN pipeline, observation (frame_stack=4, 84, 84) uint8.
    Arguments ``sticky_actions`` (default 0.25, the v5 default), ``terminal_on_life_loss``
    (default False), ``noop_max``, ``frame_skip``, ``screen_size``.
    MiniGrid (``MiniGrid-*``): observation (3 * frame_stack, H, W) uint8 with frame_stack default 1,
    ``tile_size`` pixels per grid cell (default 4: an 8x8 grid is 32x32 pixels), ``view`` "full"
    (whole grid, default) or "partial" (agent's view), ``n_actions`` to keep the first n actions.
    DeepSea (``DeepSea-{N}-v0``): observation (frame_stack=1, N, N); the Atari and MiniGrid
    arguments do not apply (``n_actions`` and ``view`` other than "full" are rejected).
    ``mapping_seed`` draws its action mapping (None: the registered one, seed 42 as bsuite's) by
    ``mapping_rule`` ("bsuite", bsuite's draw, or "kit_v1", the kit's before 0.2.0; None: bsuite's);
    on every other env both must stay None.

    The env is seeded with ``seed`` on its first ``reset()``; pass ``reset(seed=...)`` to reseed.
    ``info["density_frame"]`` is present unless ``density_frame=False`` (an agent without a bonus
    need not pay for it); ``info["rgb"]`` too when ``keep_rgb``.
    """
    check_env_id(env_id)
    stack = frame_stack if frame_stack is not None else (4 if is_atari(env_id) else 1)
    _check_common(seed, sticky_actions, stack)
    if mapping_seed is not None and not is_deep_sea(env_id):
        raise ValueError(f"{env_id}: mapping_seed draws DeepSea's action mapping; leave it unset (None) on "
                         f"other envs, got {mapping_seed!r}")
    if mapping_rule is not None and not is_deep_sea(env_id):
        raise ValueError(f"{env_id}: mapping_rule draws DeepSea's action mapping; leave it unset (None) on "
                         f"other envs, got {mapping_rule!r}")
    if is_atari(env_id):
        from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

        env = gym.make(env_id, frameskip=1, repeat_action_probability=float(sticky_actions),
                       full_action_space=False)
        env = AtariPreprocessing(env, noop_max=noop_max, frame_skip=frame_skip, screen_size=screen_size,
                                 terminal_on_life_loss=terminal_on_life_loss, grayscale_obs=True,
                                 scale_obs=False)
        env = FrameStackObservation(env, stack)  # (stack, 84, 84): already channels first
        env = DensityFrameInfo(env, _ale_rgb, keep_rgb, density_frame)
        if env_id == "ALE/MontezumaRevenge-v5":
            env = ExplorationInfo(env, montezuma_room, lambda reward, terminated: reward > 0)
    elif is_deep_sea(env_id):
        if n_actions is not None or view != "full":
            raise ValueError(f"{env_id}: DeepSea has 2 actions and one view (the whole grid); "
                             f"leave n_actions and view unset, got n_actions={n_actions!r}, view={view!r}")
        given = {} if mapping_seed is None else {"mapping_seed": mapping_seed}
        given.update({} if mapping_rule is None else {"mapping_rule": mapping_rule})
        env = gym.make(env_id, **given).unwrapped  # no time limit or checker: N steps end every episode
        if stack > 1:
            from gymnasium.wrappers import FrameStackObservation

            env = ChannelStack(FrameStackObservation(env, stack))
        env = DensityFrameInfo(env, _deep_sea_picture, keep_rgb, density_frame,
                               frame_fn=lambda e: e.unwrapped.density_frame())
    else:
        if not isinstance(tile_size, (int, np.integer)) or tile_size < 1:
            raise ValueError(f"tile_size must be a positive integer (pixels per grid cell), got {tile_size!r}")
        env = gym.make(env_id)
        if n_actions is not None:
            env = ActionSubset(env, n_actions)
        env = MiniGridPixels(env, tile_size=tile_size, view=view)
        if stack > 1:
            from gymnasium.wrappers import FrameStackObservation

            env = ChannelStack(FrameStackObservation(env, stack))
        env = DensityFrameInfo(env, _cached_minigrid_rgb, keep_rgb, density_frame)
        env = ExplorationInfo(env, _minigrid_cell, _minigrid_success)
    return _SeedOnFirstReset(env, int(seed))


def make_raw_env(
    env_id: str,
    seed: int = 0,
    *,
    sticky_actions: float = 0.25,
    frame_skip: int = 4,
    tile_size: int = 8,
    n_actions: int | None = None,
) -> gym.Env:
    """An environment whose observations are the RGB pictures of the state, (H, W, 3) uint8.

    Atari: the raw 210x160x3 screen with ``frame_skip`` emulator frames per step (no max-pooling,
    no no-ops), sticky actions as in :func:`make_env`. MiniGrid: the full-grid render at
    ``tile_size`` pixels per cell. ``info["density_frame"]`` is present as in :func:`make_env`.
    """
    check_env_id(env_id)
    _check_common(seed, sticky_actions, 1)
    if is_deep_sea(env_id):
        raise ValueError(f"{env_id} has no RGB screen: use make_env (its observation is the grid itself)")
    if is_atari(env_id):
        env = gym.make(env_id, frameskip=frame_skip, repeat_action_probability=float(sticky_actions),
                       full_action_space=False, obs_type="rgb")
        env = DensityFrameInfo(env, _ale_rgb)
    else:
        env = gym.make(env_id)
        if n_actions is not None:
            env = ActionSubset(env, n_actions)
        env = gym.wrappers.TransformObservation(
            env, lambda _obs, e=env: _minigrid_rgb(tile_size)(e),
            observation_space=None)
        probe = env.unwrapped
        env.observation_space = gym.spaces.Box(0, 255, (probe.height * tile_size, probe.width * tile_size, 3),
                                               np.uint8)
        env = DensityFrameInfo(env, _minigrid_rgb(tile_size))
    return _SeedOnFirstReset(env, int(seed))


class _SeedOnFirstReset(gym.Wrapper):
    def __init__(self, env: gym.Env, seed: int):
        super().__init__(env)
        self._pending_seed: int | None = seed
        env.action_space.seed(seed)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is None and self._pending_seed is not None:
            seed = self._pending_seed
        self._pending_seed = None
        return self.env.reset(seed=seed, options=options)

