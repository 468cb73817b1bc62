"""A transition and a batch of them: the records a replay hands its learn step (:class:`Batch`,
:class:`DeviceBatch`), and the checks of what may be stored and learnt from.

What a replay stores is checked as it is stored (:func:`check_transition`, about a microsecond per
transition), so both of DQN's learn steps (torch's and the numpy one,
:mod:`pcnn_explore.agents.mlp_step`) only ever see valid data and a bad transition is refused with
one message whichever step runs: the action an integer in [0, n_actions) (Python or numpy integer;
bool and float refused), the reward a number that is finite once rounded to float32 (the dtype the
replay stores it in: 1e39 is finite as a Python float, inf as a float32), each observation of the
buffer's shape with uint8 pixel values. A uint8 observation is taken as it is; another integer or a
float observation is taken only where every value is a whole number in [0, 255] (stored exactly),
and refused otherwise rather than cast (a cast would turn 0.5 into 0 and 300 into 44).

:func:`check_batch` is the same check of a sampled (or hand-made) batch, vectorised, and more: the
batch's layout against the network's (B observations of the shape the network was built for, numpy
arrays, one action, reward, done and mc_return per observation) and ``done`` exactly 0 or 1. Each of
DQN's learn steps checks every batch with it, so both refuse a bad batch with the same words (the
numpy step tests a replay's own batches in one compiled pass first, :func:`is_replay_layout` and its
``_batch_fault``, and calls :func:`check_batch` to name a fault).
"""
from __future__ import annotations

import math
import numbers
import operator
from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["Batch", "DeviceBatch", "gather_stacks", "check_action", "check_reward", "check_obs", "check_transition",
           "check_batch", "is_replay_layout"]

_UINT8, _INT64, _FLOAT32 = np.dtype(np.uint8), np.dtype(np.int64), np.dtype(np.float32)
#: the smallest magnitude that rounds to inf in float32: half a unit in the last place above its
#: largest finite value (3.4028235e38), where round-to-nearest-even goes up to 2^128
FLOAT32_OVERFLOW = 2.0 ** 128 - 2.0 ** 103


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
    value = _plain(value)
    # finite as given, but not once stored: say why
    f32 = (" in float32, the dtype the replay stores and the learn step reads (up to 3.4e38)"
           if _finite_number(value) else "")
    return ValueError(f"{where} {value!r} is not a finite number{f32}: the learn step needs finite rewards (one "
                      "NaN or inf makes every weight NaN); fix the env's reward, or the bonus added to it, before "
                      "storing")


def _finite_number(value) -> bool:
    try:
        return isinstance(value, numbers.Real) and math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return True


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


def check_reward(reward, where: str = "transition reward", float32: bool = False) -> float:
    """``reward`` as a float, if it is a finite number (a real number or a 0-d array; a string is
    not); else ValueError naming it and the fix. ``float32``: finite once rounded to float32, the
    dtype the replay stores it in, as :func:`check_transition` asks (a reward that is clipped before
    it is stored, as the run's loop clips the reward plus the bonus, need only be finite).

    A float64 is finite in float32 where its magnitude is below :data:`FLOAT32_OVERFLOW` (the
    comparison is the rounding's own rule, and also false for NaN)."""
    if type(reward) is float:
        value = reward
    else:
        try:
            if not isinstance(reward, (numbers.Real, np.ndarray)):
                raise TypeError
            value = float(reward)
        except (TypeError, ValueError, OverflowError):
            raise _reward_error(where, reward) from None
    if not (-FLOAT32_OVERFLOW < value < FLOAT32_OVERFLOW if float32 else math.isfinite(value)):
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
            and -FLOAT32_OVERFLOW < reward < FLOAT32_OVERFLOW):  # finite in float32 (false for NaN)
        return obs, action, reward, next_obs
    return (check_obs(obs, obs_shape, "transition obs"), check_action(action, n_actions),
            check_reward(reward, float32=True), check_obs(next_obs, obs_shape, "transition next_obs"))


# ------------------------------------------------------------------------------ what may be learnt
def is_replay_layout(batch, obs_shape: tuple[int, ...]) -> bool:
    """True where ``batch`` is laid out exactly as a host replay samples it for a network of
    ``obs_shape`` observations: a :class:`Batch` of numpy arrays, obs and next_obs (B, *obs_shape)
    uint8 with B >= 1, action (B,) int64, reward, done and mc_return (B,) float32. Attribute
    comparisons only (under a microsecond); no value is read. False is no verdict: the batch may
    still be valid (int32 actions, float64 rewards), which :func:`check_batch` decides."""
    if isinstance(batch, DeviceBatch):  # (its obs would gather the stacks)
        return False
    try:
        obs, next_obs, a, r, d, m = batch.obs, batch.next_obs, batch.action, batch.reward, batch.done, batch.mc_return
        n = obs.shape[:1]
        return ((type(obs), type(next_obs), type(a), type(r), type(d), type(m)) == _REPLAY_TYPES
                and (obs.dtype, next_obs.dtype, a.dtype, r.dtype, d.dtype, m.dtype) == _REPLAY_DTYPES
                and obs.shape[1:] == obs_shape and next_obs.shape == obs.shape
                and (a.shape, r.shape, d.shape, m.shape) == (n, n, n, n) and n != (0,))
    except AttributeError:
        return False


_REPLAY_TYPES = (np.ndarray,) * 6
_REPLAY_DTYPES = (_UINT8, _UINT8, _INT64, _FLOAT32, _FLOAT32, _FLOAT32)  # obs, next_obs, action, reward, done, mc


def _layout_error(what: str, obs_shape: tuple[int, ...]) -> ValueError:
    return ValueError(f"batch {what}: a learn step reads B >= 1 observations of the shape the network was built "
                      f"for, {obs_shape}, and one action, reward, done and mc_return per observation, as numpy arrays")


def _shape(x) -> tuple[int, ...]:
    return tuple(int(d) for d in x.shape)


def _check_host_frames(batch, obs_shape: tuple[int, ...]) -> int:
    """B of a host :class:`Batch` whose obs and next_obs are (B, *obs_shape) uint8 numpy arrays."""
    want = f"(B, {', '.join(map(str, obs_shape))})"
    for name in ("obs", "next_obs"):
        x = getattr(batch, name)
        if not isinstance(x, np.ndarray):
            raise _layout_error(f"{name} is a {type(x).__name__}, not a numpy array", obs_shape)
        if x.dtype != _UINT8:
            raise _obs_error(f"batch {name}", f"has dtype {x.dtype}, and the learn step reads uint8 frames only")
        if x.shape[1:] != obs_shape:
            raise _layout_error(f"{name} has shape {_shape(x)}, not {want}", obs_shape)
    n = len(batch.obs)
    if batch.next_obs.shape[0] != n:
        raise _layout_error(f"next_obs has shape {_shape(batch.next_obs)}, not {(n, *obs_shape)}", obs_shape)
    return n


def _check_device_frames(batch, obs_shape: tuple[int, ...]) -> int:
    """B of a :class:`DeviceBatch` whose frames (N, c, H, W) uint8 and slots (B, stack), with
    stack * c = C, build (B, *obs_shape) stacks, every slot in [0, N)."""
    frames, (c, h, w) = batch.frames, obs_shape
    if (not isinstance(frames, torch.Tensor) or frames.dtype != torch.uint8 or frames.dim() != 4
            or tuple(frames.shape[2:]) != (h, w) or frames.shape[1] == 0 or c % frames.shape[1]):
        what = (f"a {frames.dtype} tensor of shape {_shape(frames)}" if isinstance(frames, torch.Tensor)
                else f"a {type(frames).__name__}")
        raise _layout_error(f"frames is {what}, not an (N, c, {h}, {w}) uint8 tensor with c dividing {c}", obs_shape)
    stack = c // frames.shape[1]
    for name in ("obs_slots", "next_slots"):
        x = getattr(batch, name)
        if not isinstance(x, np.ndarray) or x.dtype.kind not in "iu":
            raise _layout_error(f"{name} is not a numpy integer array", obs_shape)
        want = (batch.obs_slots.shape[0] if name == "next_slots" else "B", stack)
        if x.ndim != 2 or x.shape[1] != stack or (name == "next_slots" and x.shape != batch.obs_slots.shape):
            raise _layout_error(f"{name} has shape {_shape(x)}, not ({want[0]}, {stack}) (stacks of {stack} frames "
                                f"of {frames.shape[1]} channels)", obs_shape)
        if x.size:
            low, high = x.min(), x.max()
            if low < 0 or high >= len(frames):
                raise _layout_error(f"{name} holds slot {int(low if low < 0 else high)}, outside the frames' "
                                    f"[0, {len(frames)})", obs_shape)
    return len(batch.obs_slots)


def check_batch(batch, n_actions: int, obs_shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """``(action, reward, done, mc_return)`` of ``batch`` (:class:`Batch` or :class:`DeviceBatch`) as
    (B,) int64, float32, float32, float32 arrays (the batch's own where they have those dtypes), if
    a learn step of a network of ``obs_shape`` observations and ``n_actions`` actions may read it;
    else ValueError naming the first fault and the fix, with the words :func:`check_transition`
    uses for the same value. A fault is:

    - a layout the network does not read: a field that is not a numpy array (the frames of a device
      batch: a uint8 tensor), observations not (B, *obs_shape) with B >= 1, or (device batch) slots
      that do not build such stacks or lie outside the frames; an action, reward, done or mc_return
      array that is not (B,), one per observation;
    - frames not uint8; an action that is not an integer in [0, ``n_actions``); a reward or Monte
      Carlo return that is not finite once converted to float32, the dtype a learn step reads; a
      ``done`` that is not exactly 0 or 1 once converted to float32 (NaN and 2.0 are neither).

    Vectorised (a min and a max of the actions, a dot product per float field, two counts of
    ``done``): a few microseconds at batch size 32. Torch's learn step calls it on every batch; the
    numpy step, where its one-pass compiled check finds a fault or the layout is not the replay's own."""
    obs_shape = tuple(obs_shape)
    if is_replay_layout(batch, obs_shape):  # the replay's own batches: the values only
        action, reward, done, mc_return = batch.action, batch.reward, batch.done, batch.mc_return
    else:
        action, reward, done, mc_return = _check_layout(batch, obs_shape)
    if action.dtype.kind not in "iu":
        raise _action_error("batch", action.flat[0], n_actions)
    low, high = action.min(), action.max()
    if low < 0 or high >= n_actions:
        raise _action_error("batch", int(low if low < 0 else high), n_actions)
    out = [action if action.dtype is _INT64 else action.astype(_INT64)]
    for name, given in (("reward", reward), ("done", done), ("mc_return", mc_return)):
        if given.dtype.kind not in "biuf":
            raise _done_error(given.flat[0]) if name == "done" else _reward_error(f"batch {name}", given.flat[0])
        values = given
        if given.dtype is not _FLOAT32 and given.dtype != _FLOAT32:
            with np.errstate(over="ignore"):  # to inf, refused below with the value given
                values = given.astype(_FLOAT32)
        if name == "done":
            if np.count_nonzero(values) != np.count_nonzero(values == 1):  # a value not 0 that is not 1
                raise _done_error(given.flat[np.flatnonzero((values != 0) & (values != 1))[0]])
        elif not math.isfinite(values.dot(values)) and not np.isfinite(values).all():
            # a sum of squares is finite where every value is (short of overflow, which the full check clears)
            raise _reward_error(f"batch {name}", given.flat[np.flatnonzero(~np.isfinite(values))[0]])
        out.append(values)
    return tuple(out)


def _check_layout(batch, obs_shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """(action, reward, done, mc_return) of a batch whose frames build (B, *obs_shape) observations,
    B >= 1, and whose other fields are (B,) numpy arrays; else ValueError naming the field."""
    frames = _check_device_frames if isinstance(batch, DeviceBatch) else _check_host_frames
    n = frames(batch, obs_shape)
    if n == 0:
        raise _layout_error("holds no observations", obs_shape)
    fields = []
    for name in ("action", "reward", "done", "mc_return"):
        x = getattr(batch, name)
        if not isinstance(x, np.ndarray):
            raise _layout_error(f"{name} is a {type(x).__name__}, not a numpy array", obs_shape)
        if x.shape != (n,):
            raise _layout_error(f"{name} has shape {_shape(x)}, not ({n},)", obs_shape)
        fields.append(x)
    return tuple(fields)


def _done_error(value) -> ValueError:
    return ValueError(f"batch done {_plain(value)!r} is not 0 or 1: done is 1.0 where the episode terminated and "
                      "0.0 otherwise (a time-limit truncation included)")
