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
While an episode runs its returns are unknown. Two policies (``running_episode``):

- ``"paper"`` (Ostrovski et al. 2017, footnote on MMC): transitions of the running episode are
  sampled with ``mc_return = 0``.
- ``"finished_only"``: only transitions of finished episodes are sampled.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pcnn_explore.agents.dqn import discounted_returns

RUNNING_EPISODE_POLICIES = ("paper", "finished_only")


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


class ReplayBuffer:
    """Circular uint8 replay memory of ``capacity`` slots (about one slot per transition).

    Args:
        capacity: number of frame slots (>= 2 * stack + 2).
        obs_shape: (C, H, W) of one stacked observation.
        stack: frames per observation; C must be divisible by it.
        gamma: discount of the Monte Carlo returns.
        running_episode: "paper" or "finished_only" (module docstring).
    """

    def __init__(self, capacity: int, obs_shape: tuple[int, int, int], stack: int = 1, gamma: float = 0.99,
                 running_episode: str = "paper"):
        if running_episode not in RUNNING_EPISODE_POLICIES:
            raise ValueError(f"running_episode must be one of {RUNNING_EPISODE_POLICIES}, got {running_episode!r}")
        if len(obs_shape) != 3 or obs_shape[0] % stack:
            raise ValueError(f"obs_shape must be (C, H, W) with C divisible by stack={stack}, got {obs_shape}")
        if capacity < 2 * stack + 2:
            raise ValueError(f"capacity must be at least {2 * stack + 2} slots, got {capacity}")
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {gamma}")
        self.capacity, self.stack, self.gamma = int(capacity), int(stack), float(gamma)
        self.obs_shape = tuple(int(x) for x in obs_shape)
        self.frame_channels = self.obs_shape[0] // stack
        self.running_episode = running_episode
        n = self.capacity
        self.frames = np.zeros((n, self.frame_channels, *self.obs_shape[1:]), np.uint8)
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
        self._episode_slots: list[int] = []

    # ----------------------------------------------------------------------------------------- write
    def _write_frame(self, obs: np.ndarray, episode_start: bool) -> int:
        i = self.cursor
        self.frames[i] = obs[-self.frame_channels:]
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
        episode and fills its Monte Carlo returns.
        """
        if obs.shape != self.obs_shape or next_obs.shape != self.obs_shape:
            raise ValueError(f"observations must have shape {self.obs_shape}, got {obs.shape} and {next_obs.shape}")
        if self._open and len(self._episode_slots) >= self.capacity:
            raise ValueError(f"an episode longer than the replay capacity ({self.capacity} slots) cannot be "
                             "stored: raise replay_capacity")
        if not self._open:
            self.n_episodes += 1
            self._episode_slots = [self._write_frame(obs, True)]
            self._open = True
        i = self._episode_slots[-1]
        self.action[i], self.reward[i], self.done[i] = int(action), float(reward), float(bool(terminated))
        j = self._write_frame(next_obs, False)
        self.has_transition[i] = True
        self._episode_slots.append(j)
        if episode_end:
            self.end_episode()

    def end_episode(self) -> None:
        """Close the running episode (if any): write its Monte Carlo returns."""
        if not self._open:
            return
        slots = np.asarray(self._episode_slots[:-1], np.int64)
        if len(slots):
            self.mc_return[slots] = discounted_returns(self.reward[slots], self.gamma)
            self.mc_ready[slots] = True
        self._open = False
        self._episode_slots = []

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

    def stacked(self, index: np.ndarray) -> np.ndarray:
        """(B, C, H, W) uint8 stacked observations of the slots ``index``."""
        index = np.asarray(index, np.int64)
        cols = [index]
        cur = index
        for _ in range(self.stack - 1):
            prev = (cur - 1) % self.capacity
            cur = np.where(self.episode_start[cur], cur, prev)  # stop at the episode's first frame
            cols.append(cur)
        order = np.stack(cols[::-1], axis=1)  # (B, stack): oldest first, like FrameStackObservation
        out = self.frames[order]  # (B, stack, c, H, W)
        return out.reshape(len(index), *self.obs_shape)

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

    def sample(self, batch_size: int, rng: np.random.Generator) -> Batch:
        """Uniformly sample ``batch_size`` sampleable transitions (with replacement).

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
        return Batch(self.stacked(idx), self.action[idx], self.reward[idx], self.stacked(nxt), self.done[idx], mc, idx)

    # ------------------------------------------------------------------------------------ checkpoint
    _ARRAYS = ("frames", "action", "reward", "done", "mc_return", "has_transition", "mc_ready", "episode_start",
               "episode_id")

    def state_dict(self) -> dict:
        d = {name: getattr(self, name) for name in self._ARRAYS}
        d.update(cursor=self.cursor, written=self.written, n_episodes=self.n_episodes, open=self._open,
                 episode_slots=list(self._episode_slots), capacity=self.capacity, obs_shape=list(self.obs_shape),
                 stack=self.stack, gamma=self.gamma, running_episode=self.running_episode)
        return d

    def load_state_dict(self, d: dict) -> None:
        if (int(d["capacity"]), tuple(d["obs_shape"]), int(d["stack"])) != (self.capacity, self.obs_shape, self.stack):
            raise ValueError("replay state does not match this buffer's capacity/obs_shape/stack")
        for name in self._ARRAYS:
            getattr(self, name)[...] = np.asarray(d[name])
        self.cursor, self.written, self.n_episodes = int(d["cursor"]), int(d["written"]), int(d["n_episodes"])
        self._open = bool(d["open"])
        self._episode_slots = [int(x) for x in d["episode_slots"]]
