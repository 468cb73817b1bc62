"""A transition and a batch of them: the records a replay hands its learn step (:class:`Batch`,
:class:`DeviceBatch`), and the checks of what may be stored and learnt from.

What a replay stores is checked as it is stored (:func:`check_transition`, about a microsecond per
transition), so both of DQN's learn steps (torch's and the numpy one,
:mod:`pcnn_explore.agents.mlp_step`) only ever see valid data and a bad transition is refused with
one message whichever step runs: the action an integer in [0, n_actions) (Python or numpy integer;
bool and float refused), the reward a finite number, each observation of the buffer's shape with
uint8 pixel values. A uint8 observation is taken as it is; another integer or a float observation is
taken only where every value is a whole number in [0, 255] (stored exactly), and refused otherwise
rather than cast (a cast would turn 0.5 into 0 and 300 into 44). :func:`check_batch` is the same
check of a sampled (or hand-made) batch, vectorised: the entry point of each learn step calls it.
"""
from __future__ import annotations

import math
import numbers
import operator
from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["Batch", "DeviceBatch", "gather_stacks", "check_action", "check_reward", "check_obs", "check_transition",
           "check_batch"]

_UINT8 = np.dtype(np.uint8)


@dataclass
class Batch:
    """A sampled batch: obs/next_obs (B, C, H, W) uint8; action (B,) int64; reward, done (1.0 when
    the episode terminated, 0.0 otherwise, including time-limit truncation), mc_return (B,) float32;
    index (B,) slots."""

    obs: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    next_obs: np.ndarray
    done: np.ndarray
    mc_return: np.ndarray
    index: np.ndarray


@dataclass
class DeviceBatch:
    """A sampled batch of a replay whose frames live on a device: the frames stay there.

    ``frames`` is the replay's storage, (capacity, C // stack, H, W) uint8 on the device;
    ``obs_slots`` / ``next_slots`` (B, stack) int64 are the slots of each state's frames, oldest
    first. ``obs`` / ``next_obs`` gather the (B, C, H, W) uint8 stacks on the device (the agent's
    CUDA graph gathers them itself). ``action``, ``reward``, ``done``, ``mc_return``, ``index``: as
    in :class:`Batch` (host numpy arrays).
    """

    frames: torch.Tensor
    obs_slots: np.ndarray
    next_slots: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    done: np.ndarray
    mc_return: np.ndarray
    index: np.ndarray

    @property
    def obs(self) -> torch.Tensor:
        return gather_stacks(self.frames, self.obs_slots)

    @property
    def next_obs(self) -> torch.Tensor:
        return gather_stacks(self.frames, self.next_slots)


def gather_stacks(frames: torch.Tensor, slots: np.ndarray | torch.Tensor) -> torch.Tensor:
    """(B, stack * c, H, W) stacks of the frames (capacity, c, H, W) in ``slots`` (B, stack), on their device."""
    idx = torch.as_tensor(slots).reshape(-1).to(frames.device)
    gathered = frames.index_select(0, idx)  # (B * stack, c, H, W)
    return gathered.view(len(slots), -1, *frames.shape[2:])


# ------------------------------------------------------------------------------ what may be stored
def _plain(value):
    """A numpy scalar as the Python number it holds (so that a message reads 7, not np.int64(7))."""
    return value.item() if isinstance(value, np.generic) else value


def _action_error(where: str, action, n_actions: int | None) -> ValueError:
    span = f"in [0, {n_actions})" if n_actions is not None else ">= 0"
    return ValueError(f"{where} action {_plain(action)!r} is not an action index {span}: give the index of the "
                      f"action taken, an int {span}")


def _reward_error(where: str, value) -> ValueError:
    return ValueError(f"{where} {_plain(value)!r} is not a finite number: the learn step needs finite rewards (one "
                      "NaN or inf makes every weight NaN); fix the env's reward, or the bonus added to it, before "
                      "storing")


def _obs_error(where: str, what: str) -> ValueError:
    return ValueError(f"{where} {what}: the replay stores uint8 frames, pixel values 0..255; pass the frame as "
                      "uint8 (or as numbers that are whole and in [0, 255])")


def check_action(action, n_actions: int | None, where: str = "transition") -> int:
    """``action`` as an int, if it is an integer (Python or numpy; not bool) in [0, ``n_actions``)
    (``n_actions`` None: >= 0); else ValueError naming it and the fix."""
    if type(action) is not int:
        if isinstance(action, (bool, np.bool_)):
            raise _action_error(where, action, n_actions)
        try:
            action = operator.index(action)
        except TypeError:
            raise _action_error(where, action, n_actions) from None
    if action < 0 or (n_actions is not None and action >= n_actions):
        raise _action_error(where, action, n_actions)
    return action


def check_reward(reward, where: str = "transition reward") -> float:
    """``reward`` as a float, if it is a finite number (a real number or a 0-d array; a string is
    not); else ValueError naming it and the fix."""
    if type(reward) is float:
        value = reward
    else:
        try:
            if not isinstance(reward, (numbers.Real, np.ndarray)):
                raise TypeError
            value = float(reward)
        except (TypeError, ValueError):
            raise _reward_error(where, reward) from None
    if not math.isfinite(value):
        raise _reward_error(where, value)
    return value


def check_obs(obs, shape: tuple[int, ...], where: str = "transition obs") -> np.ndarray:
    """``obs`` as an array of ``shape`` whose values are uint8 pixels (see the module docstring);
    else ValueError naming the problem and the fix. A uint8 array costs a shape and a dtype check."""
    obs = np.asarray(obs)
    if obs.shape != shape:
        raise ValueError(f"observations must have shape {shape}, got {obs.shape} ({where}): pass (C, H, W) "
                         "frame stacks of the shape the buffer was made for")
    if obs.dtype is _UINT8 or obs.dtype == _UINT8:
        return obs
    if obs.dtype.kind not in "biuf":
        raise _obs_error(where, f"has dtype {obs.dtype}, not a number type")
    if obs.size:
        if obs.dtype.kind == "f":
            whole = np.isfinite(obs) & (obs == np.floor(obs))
            if not whole.all():
                raise _obs_error(where, f"holds {obs[~whole].flat[0].item()!r} ({obs.dtype}), not a whole number")
        low, high = obs.min(), obs.max()
        if low < 0 or high > 255:
            raise _obs_error(where, f"holds {(low if low < 0 else high).item()!r} ({obs.dtype}), outside [0, 255]")
    return obs


def check_transition(obs, action, reward, next_obs, obs_shape: tuple[int, ...], n_actions: int | None):
    """``(obs, action, reward, next_obs)`` checked for a replay of ``obs_shape`` observations and
    ``n_actions`` actions (None: not bounded above): ``action`` as an int, ``reward`` as a float, the
    observations as arrays. ValueError, naming the field, its value and the fix, for the first bad one.

    The run's transitions (uint8 arrays, a Python int and float) take one combined test, about
    half a microsecond; anything else takes the field-by-field checks."""
    if (type(action) is int and type(reward) is float and type(obs) is np.ndarray and type(next_obs) is np.ndarray
            and obs.dtype is _UINT8 and next_obs.dtype is _UINT8 and obs.shape == obs_shape
            and next_obs.shape == obs_shape and action >= 0 and (n_actions is None or action < n_actions)
            and math.isfinite(reward)):
        return obs, action, reward, next_obs
    return (check_obs(obs, obs_shape, "transition obs"), check_action(action, n_actions),
            check_reward(reward), check_obs(next_obs, obs_shape, "transition next_obs"))


def check_batch(batch, n_actions: int) -> None:
    """Refuse a batch (:class:`Batch` or :class:`DeviceBatch`) that no learn step may read, with the
    message :func:`check_transition` gives for the same value: an action outside [0, ``n_actions``)
    or not an integer, a reward or Monte Carlo return that is not finite, a host batch's
    observations not uint8. Vectorised (a min and a max of the actions, a dot product per float
    field; a few microseconds at batch size 32): each learn step's entry point calls it (the numpy
    step first runs a one-pass numba check, and this only to name a fault), so a batch made by hand
    is checked too."""
    a = np.asarray(batch.action)
    if a.dtype.kind not in "iu":
        raise _action_error("batch", a.flat[0] if a.size else a, n_actions)
    if a.size:
        low, high = a.min(), a.max()
        if low < 0 or high >= n_actions:
            raise _action_error("batch", int(low if low < 0 else high), n_actions)
    for name in ("reward", "mc_return"):
        values = np.asarray(getattr(batch, name)).reshape(-1)
        # a sum of squares is finite where every value is (short of overflow, which the full check clears)
        if not math.isfinite(values.dot(values)) and not np.isfinite(values).all():
            raise _reward_error(f"batch {name}", float(values[~np.isfinite(values)].flat[0]))
    if not isinstance(batch, DeviceBatch):  # a device batch's frames are the replay's own uint8 tensor
        for name in ("obs", "next_obs"):
            dtype = np.asarray(getattr(batch, name)).dtype
            if dtype != _UINT8:
                raise _obs_error(f"batch {name}", f"has dtype {dtype}, and the learn step reads uint8 frames only")
