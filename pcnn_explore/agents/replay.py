"""Replay memory for DQN with per-transition Monte Carlo returns (for the mixed Monte Carlo update).

Storage (uint8, frame-stacks not duplicated). Observations are channel-first (C, H, W) stacks of
``stack`` frames of ``C // stack`` channels each (Atari: 4 frames of 1 channel; MiniGrid: 1 frame of
3 channels). Each slot of the circular buffer holds only the *newest* frame of one observation, so a
stacked Atari state costs one 84x84 frame, not four. Slot layout, episode by episode::

    [s_0][s_1] ... [s_T]      transition t = (s_t, a_t, r_t, done_t, s_{t+1}) lives in slot of s_t

The last slot of an episode (s_T) holds the final observation only; it is never sampled. A state's
stack is rebuilt from the slots before it; frames before the episode's first slot are replaced by
the first frame (the padding ``FrameStackObservation`` uses at reset), so stacks never mix
episodes. When full, the oldest slots are overwritten; transitions whose stack would reach into
overwritten slots are not sampled.

Monte Carlo returns. ``mc_return[t] = sum_k gamma^k r_{t+k}`` over the stored rewards to the end
of the episode, written for every transition of an episode when it ends (terminated, truncated by
a time limit, or cut by the run's step budget; in the last two cases the return is the partial sum).
An episode longer than the capacity overwrites its own oldest slots like any other data; the
transitions still stored when it ends get their exact returns all the same, since a return needs
only the rewards after it, which are newer and so still stored. While an episode runs its returns
are unknown. Two policies (``running_episode``):

- ``"paper"`` (Ostrovski et al. 2017, footnote on MMC): transitions of the running episode are
  sampled with ``mc_return = 0``.
- ``"finished_only"``: only transitions of finished episodes are sampled.

Where the frames live (``device``): a host numpy array (default), or a tensor on a device (on
CUDA: a sampled batch is then gathered on the GPU, where the agent's CUDA graph reads it). Sampling
decisions use host arrays either way, so the same ``rng`` samples the same transitions.

Checkpoints (:meth:`ReplayBuffer.state_dict`) hold the filled slots only, the frames compressed:
their size grows with the data, not with the capacity.

What is stored is checked as it is stored, by :mod:`pcnn_explore.agents.transitions` (about a
microsecond per transition), so both of DQN's learn steps only ever see valid data.
"""
from __future__ import annotations

from collections import deque

import numpy as np
import torch

from pcnn_explore.agents.returns import discounted_returns
from pcnn_explore.names import RUNNING_EPISODE_POLICIES
from pcnn_explore.agents.replay_storage import DeviceFrames, pack, replay_device, unpack
from pcnn_explore.agents.transitions import Batch, DeviceBatch, check_batch, check_transition, gather_stacks

__all__ = ["Batch", "DeviceBatch", "ReplayBuffer", "gather_stacks", "replay_device", "RUNNING_EPISODE_POLICIES",
           "check_transition", "check_batch"]


class ReplayBuffer:
    """Circular uint8 replay memory of ``capacity`` slots (about one slot per transition).

    Args:
        capacity: number of frame slots (>= 2 * stack + 2).
        obs_shape: (C, H, W) of one stacked observation.
        stack: frames per observation; C must be divisible by it.
        gamma: discount of the Monte Carlo returns.
        running_episode: "paper" or "finished_only" (module docstring).
        device: None (default): frames in a host numpy array and :meth:`sample` returns a
            :class:`Batch`; a torch device: frames in a tensor there (:class:`DeviceFrames`) and
            :meth:`sample` returns a :class:`DeviceBatch` whose stacks are gathered on the device.
            :func:`replay_device` picks a CUDA device when the frames fit in its memory.
        frames: with ``device``, an existing (capacity, C // stack, H, W) uint8 tensor there to keep
            the frames in (a slice of one tensor shared by the shards of a multi-env replay).
        n_actions: the agent's number of actions: :meth:`add` refuses an action outside [0, n_actions)
            (None: only a negative one).
    """

    def __init__(self, capacity: int, obs_shape: tuple[int, int, int], stack: int = 1, gamma: float = 0.99,
                 running_episode: str = "paper", device: str | torch.device | None = None,
                 frames: torch.Tensor | None = None, n_actions: int | None = None):
        if running_episode not in RUNNING_EPISODE_POLICIES:
            raise ValueError(f"running_episode must be one of {RUNNING_EPISODE_POLICIES}, got {running_episode!r}")
        if len(obs_shape) != 3 or obs_shape[0] % stack:
            raise ValueError(f"obs_shape must be (C, H, W) with C divisible by stack={stack}, got {obs_shape}")
        if capacity < 2 * stack + 2:
            raise ValueError(f"capacity must be at least {2 * stack + 2} slots, got {capacity}")
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {gamma}")
        if n_actions is not None and (isinstance(n_actions, bool) or not isinstance(n_actions, (int, np.integer))
                                      or n_actions < 1):
            raise ValueError(f"n_actions must be a positive int (or None), got {n_actions!r}")
        self.n_actions = None if n_actions is None else int(n_actions)
        self.capacity, self.stack, self.gamma = int(capacity), int(stack), float(gamma)
        self.obs_shape = tuple(int(x) for x in obs_shape)
        self.frame_channels = self.obs_shape[0] // stack
        self.running_episode = running_episode
        n = self.capacity
        frame_shape = (self.frame_channels, *self.obs_shape[1:])
        self.device = None if device is None else torch.device(device)
        self._store = None if self.device is None else DeviceFrames(n, frame_shape, self.device, tensor=frames)
        self._frames = np.zeros((n, *frame_shape), np.uint8) if self._store is None else None
        self.action = np.zeros(n, np.int64)
        self.reward = np.zeros(n, np.float32)
        self.done = np.zeros(n, np.float32)
        self.mc_return = np.zeros(n, np.float32)
        self.has_transition = np.zeros(n, bool)  # slot holds s_t of a transition whose s_{t+1} is stored
        self.mc_ready = np.zeros(n, bool)  # the slot's episode has ended; mc_return is final
        self.episode_start = np.zeros(n, bool)
        self.episode_id = np.full(n, -1, np.int64)
        self.cursor = 0  # slot that the next written frame goes to
        self.written = 0  # frames written in total
        self.n_episodes = 0  # episodes started
        self._open = False  # an episode is running; its current state's frame is in slot cursor-1
        # slots of the running episode still stored, oldest first (the ring drops overwritten ones)
        self._episode_slots: deque[int] = deque(maxlen=self.capacity)

    @property
    def frames(self) -> np.ndarray | torch.Tensor:
        """The newest frame of each slot, (capacity, C // stack, H, W) uint8: the host array, or
        with ``device`` the device tensor (staged writes sent first)."""
        if self._store is None:
            return self._frames
        self._store.flush()
        return self._store.tensor

    # ----------------------------------------------------------------------------------------- write
    def _write_frame(self, obs: np.ndarray, episode_start: bool) -> int:
        i = self.cursor
        if self._store is None:
            self._frames[i] = obs[-self.frame_channels:]
        else:
            self._store.write(i, obs[-self.frame_channels:])
        self.episode_start[i] = episode_start
        self.has_transition[i] = False
        self.mc_ready[i] = False
        self.mc_return[i] = 0.0
        self.episode_id[i] = self.n_episodes - 1
        self.cursor = (i + 1) % self.capacity
        self.written += 1
        return i

    def add(self, obs: np.ndarray, action: int, reward: float, terminated: bool, next_obs: np.ndarray,
            episode_end: bool) -> None:
        """Store transition (obs, action, reward, terminated, next_obs).

        ``reward`` is the reward the agent learns from (clipped, bonus included). ``terminated``
        masks the bootstrap; ``episode_end`` (terminated or truncated or end of the run) closes the
        episode and fills its Monte Carlo returns. A bad field (:func:`check_transition`) raises
        ValueError before anything is written.
        """
        obs, action, reward, next_obs = check_transition(obs, action, reward, next_obs, self.obs_shape,
                                                         self.n_actions)
        if not self._open:
            self.n_episodes += 1
            self._episode_slots = deque([self._write_frame(obs, True)], maxlen=self.capacity)
            self._open = True
        i = self._episode_slots[-1]
        self.action[i], self.reward[i], self.done[i] = action, reward, float(bool(terminated))
        j = self._write_frame(next_obs, False)
        self.has_transition[i] = True
        # an episode as long as the ring overwrites its own oldest slot: maxlen drops it from the deque
        self._episode_slots.append(j)
        if episode_end:
            self.end_episode()

    def end_episode(self) -> None:
        """Close the running episode (if any): write its Monte Carlo returns."""
        if not self._open:
            return
        slots = np.asarray(self._episode_slots, np.int64)[:-1]  # the last slot holds the final state only
        if len(slots):
            self.mc_return[slots] = discounted_returns(self.reward[slots], self.gamma)
            self.mc_ready[slots] = True
        self._open = False
        self._episode_slots = deque(maxlen=self.capacity)

    # ---------------------------------------------------------------------------------------- sample
    def __len__(self) -> int:
        """Number of transitions that can be sampled now."""
        return int(self._sampleable().sum())

    def _sampleable(self) -> np.ndarray:
        ok = self.has_transition.copy()
        if self.running_episode == "finished_only":
            ok &= self.mc_ready
        if self.written >= self.capacity and self.stack > 1:
            # Slots are chronological from the cursor (oldest) on. The m-th oldest slot's stack looks
            # up to stack - 1 slots back, past the cursor into the newest frames, unless an episode
            # starts on the way.
            bad = np.flatnonzero(~self._sampleable_oldest())
            ok[(self.cursor + bad) % self.capacity] = False
        return ok

    def stack_slots(self, index: np.ndarray) -> np.ndarray:
        """(B, stack) int64: the slots whose frames make up the states of slots ``index``, oldest first."""
        index = np.asarray(index, np.int64)
        if self.stack == 1:  # (one frame per state: its own slot)
            return index[:, None]
        cols = [index]
        cur = index
        for _ in range(self.stack - 1):
            prev = (cur - 1) % self.capacity
            cur = np.where(self.episode_start[cur], cur, prev)  # stop at the episode's first frame
            cols.append(cur)
        return np.stack(cols[::-1], axis=1)  # oldest first, like FrameStackObservation

    def stacked(self, index: np.ndarray) -> np.ndarray | torch.Tensor:
        """(B, C, H, W) uint8 stacked observations of the slots ``index`` (a device tensor with ``device``)."""
        order = self.stack_slots(index)
        if self._store is not None:
            return gather_stacks(self.frames, order)
        return self._frames[order].reshape(len(order), *self.obs_shape)  # (B, stack, c, H, W) -> (B, C, H, W)

    def _valid(self, idx: np.ndarray) -> np.ndarray:
        """Whether each slot in ``idx`` can be sampled now (same rule as :meth:`_sampleable`)."""
        ok = self.has_transition[idx]
        if self.running_episode == "finished_only":
            ok = ok & self.mc_ready[idx]
        if self.written >= self.capacity and self.stack > 1:
            bad = np.flatnonzero(~self._sampleable_oldest())
            if len(bad):
                ok = ok & ~np.isin(idx, (self.cursor + bad) % self.capacity)
        return ok

    def _sampleable_oldest(self) -> np.ndarray:
        """(stack - 1,) bool: whether the m-th oldest slot's stack stays inside stored data."""
        starts = self.episode_start[(self.cursor + np.arange(self.stack - 1)) % self.capacity]
        return np.logical_or.accumulate(starts) if len(starts) else starts

    def can_sample(self) -> bool:
        """True once a transition could be sampled (``finished_only``: once an episode has ended)."""
        if self.running_episode == "finished_only":
            return bool(self.mc_ready.any()) if self.n_episodes else False
        return self.written >= 2

    def sample(self, batch_size: int, rng: np.random.Generator) -> Batch | DeviceBatch:
        """Uniformly sample ``batch_size`` sampleable transitions (with replacement): a :class:`Batch`,
        or with ``device`` a :class:`DeviceBatch` (same transitions for the same ``rng``).

        Rejection sampling over the filled slots (cheap for large buffers), with an exact fallback.
        """
        filled = min(self.written, self.capacity)
        idx = np.empty(0, np.int64)
        for _ in range(16):
            draw = rng.integers(0, filled, size=2 * batch_size)
            idx = np.concatenate([idx, draw[self._valid(draw)]])
            if len(idx) >= batch_size:
                idx = idx[:batch_size]
                break
        else:
            candidates = np.flatnonzero(self._sampleable())
            if len(candidates) == 0:
                raise ValueError("the replay buffer has no sampleable transition yet: raise learning_starts "
                                 "(with running_episode='finished_only' at least one episode must have ended)")
            idx = candidates[rng.integers(0, len(candidates), size=batch_size)]
        nxt = (idx + 1) % self.capacity
        mc = np.where(self.mc_ready[idx], self.mc_return[idx], 0.0).astype(np.float32)
        if self._store is not None:
            return DeviceBatch(self.frames, self.stack_slots(idx), self.stack_slots(nxt), self.action[idx],
                               self.reward[idx], self.done[idx], mc, idx)
        return Batch(self.stacked(idx), self.action[idx], self.reward[idx], self.stacked(nxt), self.done[idx], mc, idx)

    # ------------------------------------------------------------------------------------ checkpoint
    _ARRAYS = ("action", "reward", "done", "mc_return", "has_transition", "mc_ready", "episode_start", "episode_id")
    _EMPTY = {"episode_id": -1}  # value of a never-written slot (others: 0 / False)
    FORMAT = 2

    def state_dict(self, defer: bool = False) -> dict:
        """Everything needed to continue exactly, for the filled slots only.

        ``defer``: copy the frames now but compress them when the checkpoint is written
        (:class:`pcnn_explore.checkpoint.Deferred`), e.g. in a background writer thread.

        Slots [0, filled) with filled = min(written, capacity) hold data (later slots are empty),
        so a 1M-slot replay holding 12K transitions saves 12K slots. The per-slot arrays (``action``,
        ``reward``, ``has_transition``, ...) are stored as they are, cut to the filled slots; the
        frames, almost all of the bytes, under ``frames_z``, zlib-compressed after XOR with the
        previous frame (:func:`~pcnn_explore.agents.replay_storage.pack`). Numpy arrays, numbers
        and strings only: :mod:`pcnn_explore.checkpoint` saves it for ``torch.load(weights_only=True)``.
        """
        n = min(self.written, self.capacity)
        frames = self._frames[:n] if self._store is None else self._store.read(0, n)
        if defer:
            from pcnn_explore.checkpoint import Deferred

            frames_z = Deferred(pack, frames.copy() if self._store is None else frames, delta=True)
        else:
            frames_z = pack(frames, delta=True)
        d = {name: getattr(self, name)[:n].copy() for name in self._ARRAYS}
        d.update(format=self.FORMAT, filled=n, frames_z=frames_z, cursor=self.cursor,
                 written=self.written, n_episodes=self.n_episodes, open=self._open,
                 episode_slots=np.asarray(self._episode_slots, np.int64), capacity=self.capacity,
                 obs_shape=list(self.obs_shape), stack=self.stack, gamma=self.gamma,
                 running_episode=self.running_episode)
        return d

    def load_state_dict(self, d: dict) -> None:
        """Restore a :meth:`state_dict` (also the uncompressed whole-capacity format of earlier
        versions) bit for bit, ring position included; slots beyond the saved ones become empty."""
        if (int(d["capacity"]), tuple(d["obs_shape"]), int(d["stack"])) != (self.capacity, self.obs_shape, self.stack):
            raise ValueError("replay state does not match this buffer's capacity/obs_shape/stack")
        old = min(self.written, self.capacity)  # slots that may hold data now
        written = int(d["written"])
        n = int(d.get("filled", self.capacity))  # earlier versions saved every slot
        if "filled" in d and n != min(written, self.capacity):
            raise ValueError(f"replay state holds {n} slots but {written} frames were written")
        for name in ("frames",) + self._ARRAYS:
            saved = d["frames_z"] if name == "frames" and "frames_z" in d else np.asarray(d[name])
            if not isinstance(saved, dict) and len(saved) < n:
                raise ValueError(f"replay state array {name!r} holds {len(saved)} slots, expected {n}")
            self._load_array(name, saved, n, old)
        self.cursor, self.written, self.n_episodes = int(d["cursor"]), written, int(d["n_episodes"])
        self._open = bool(d["open"])
        slots = [int(x) for x in d["episode_slots"]]
        if len(slots) > self.capacity:
            raise ValueError(f"replay state holds {len(slots)} slots of the running episode, more than the "
                             f"capacity {self.capacity}")
        self._episode_slots = deque(slots, maxlen=self.capacity)

    def _load_array(self, name: str, saved, n: int, old: int) -> None:
        """Slots [0, n) from ``saved`` (packed, or a plain array of n slots); [n, old) emptied."""
        if name == "frames" and self._store is not None:
            self._store.assign(0, unpack(saved) if isinstance(saved, dict) else saved[:n])
            self._store.clear(n, max(n, old))
            return
        target = self._frames if name == "frames" else getattr(self, name)
        if isinstance(saved, dict):
            unpack(saved, out=target[:n])
        else:
            target[:n] = saved[:n]
        target[n:max(n, old)] = self._EMPTY.get(name, 0)
