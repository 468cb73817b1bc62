"""Sequence replay for Reactor: sequences of consecutive transitions of one episode, with burn-in.

Storage, one shard per env (:class:`SequenceShard`), each a circular buffer of ``capacity`` slots
laid out like :class:`~pcnn_explore.agents.replay.ReplayBuffer`: slot of x_t holds the newest
frame of x_t and the transition (a_t, mu(a_t|x_t), r_t, terminated_t) taken from it; an episode's
last slot holds its final observation only. Frame stacks are rebuilt from the slots before, the
episode's first frame repeating before its start (as ``FrameStackObservation`` pads at reset).

A sampled sequence starts at any stored transition x_s (uniformly over the valid starts) and holds
up to ``seq_len`` (33, as in Reactor) transitions s ... s+n-1 plus the observation x_{s+n} to
bootstrap from. It never crosses an episode boundary: it stops early (n < seq_len, the rest
padded with ``mask = 0``) at the episode's end (terminal: ``terminated = 1``; time limit or end of
the run: the sequence just ends, and bootstraps from V(x_{s+n})) or at the newest stored
observation of a running episode (likewise bootstrapped). An episode longer than the capacity
overwrites its own oldest slots; burn-in windows and frame stacks only reach back over slots that
still hold the steps right before (same episode, consecutive steps).

Recurrent state: **burn-in**, not stored states. Before x_s the batch holds up to ``burn_in``
earlier observations of the same episode; the learner starts from a zero LSTM state at the first
of them (``first = 1``) and runs them without gradient (R2D2, Kapturowski et al. 2019). Where the
episode started within ``burn_in`` steps the state is exactly the actor's (the actor also starts
each episode from zero); otherwise it is an approximation. Storing no states keeps ``add``
free of the agent.

Checkpoints: :meth:`SequenceReplay.state_dict` holds the filled slots only (frames zlib-compressed,
:func:`~pcnn_explore.agents.replay_storage.pack`); numpy arrays, numbers and strings only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pcnn_explore.agents.replay_storage import pack, unpack
from pcnn_explore.agents.sharding import Shards

__all__ = ["SequenceBatch", "SequenceShard", "SequenceReplay", "SEQ_LEN", "BURN_IN", "trim_window"]

SEQ_LEN = 33  # transitions per sequence (Reactor's)
BURN_IN = 32  # observations run before a sequence to warm up the LSTM state


@dataclass
class SequenceBatch:
    """B sequences of L = seq_len transitions after ``burn_in`` burn-in steps; window W = burn_in + L + 1.

    obs: (B, W, C, H, W) uint8, window position ``burn_in + t`` is x_t (t = 0 ... L; x_L is the
        bootstrap observation of a full sequence; positions past a short sequence's x_n repeat it).
    first: (B, W) float32, 1 where the recurrent state is zeroed before the step (the burn-in's
        first real observation, and the padding before it).
    action (B, L) int64; mu (B, L) float32 (behaviour probability of the action); reward (B, L)
    float32; terminated (B, L) float32 (1: the episode ended in a terminal state at this step);
    mask (B, L) float32 (1 on stored transitions, 0 on padding; padding has action 0, mu 1, reward 0).
    length (B,) int64: n, the transitions of each sequence. index (B,) int64: start slot in its shard.
    """

    obs: np.ndarray
    first: np.ndarray
    action: np.ndarray
    mu: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    mask: np.ndarray
    length: np.ndarray
    index: np.ndarray
    burn_in: int


def trim_window(batch: SequenceBatch) -> SequenceBatch:
    """The batch without the window columns no learner output depends on (exact, a speed-up only).

    Leading columns: before the last position p <= burn_in at which every row zeroes its recurrent
    state (``first`` = 1; the LSTM starts from zero anyway), nothing reaches x_0. Trailing columns:
    past the longest sequence's x_n (n = max ``length``) only padding follows; the per-step arrays
    keep their first n columns (B, n). On short episodes (DeepSea-10: at most 10 transitions and a
    burn-in of at most 9 observations, in a window of 32 + 33 + 1) this removes most of the window.
    A batch with nothing to trim is returned as it is.
    """
    B, W = batch.first.shape
    K, L = int(batch.burn_in), batch.action.shape[1]
    zeroed = batch.first[:, :K + 1] > 0  # (B, K + 1)
    last = np.where(zeroed.any(1), K - np.argmax(zeroed[:, ::-1], axis=1), 0)  # each row's last reset <= K
    lo = int(last.min()) if B else 0
    n = max(1, int(batch.length.max())) if B else L
    if lo == 0 and n == L:
        return batch
    cols = slice(lo, K + n + 1)
    return SequenceBatch(obs=batch.obs[:, cols], first=batch.first[:, cols], action=batch.action[:, :n],
                         mu=batch.mu[:, :n], reward=batch.reward[:, :n], terminated=batch.terminated[:, :n],
                         mask=batch.mask[:, :n], length=batch.length, index=batch.index, burn_in=K - lo)


class SequenceShard:
    """One env's circular store. capacity: slots (> seq_len + burn_in + stack); obs_shape (C, H, W) with
    C divisible by ``stack``; seq_len: transitions per sequence; burn_in: observations before it."""

    _ARRAYS = ("action", "mu", "reward", "terminated", "has_transition", "episode_id", "episode_step")
    _EMPTY = {"episode_id": -1}
    FORMAT = 1

    def __init__(self, capacity: int, obs_shape, stack: int = 1, seq_len: int = SEQ_LEN, burn_in: int = BURN_IN):
        if len(obs_shape) != 3 or obs_shape[0] % stack:
            raise ValueError(f"obs_shape must be (C, H, W) with C divisible by stack={stack}, got {obs_shape}")
        if seq_len < 1 or burn_in < 0:
            raise ValueError(f"seq_len must be >= 1 and burn_in >= 0, got {seq_len}, {burn_in}")
        if capacity <= seq_len + burn_in + stack:
            raise ValueError(f"capacity must exceed seq_len + burn_in + stack = {seq_len + burn_in + stack}")
        self.capacity, self.stack, self.seq_len, self.burn_in = int(capacity), int(stack), int(seq_len), int(burn_in)
        self.obs_shape = tuple(int(x) for x in obs_shape)
        self.frame_channels = self.obs_shape[0] // self.stack
        n = self.capacity
        self.frames = np.zeros((n, self.frame_channels, *self.obs_shape[1:]), np.uint8)
        self.action = np.zeros(n, np.int64)
        self.mu = np.ones(n, np.float32)
        self.reward = np.zeros(n, np.float32)
        self.terminated = np.zeros(n, np.float32)
        self.has_transition = np.zeros(n, bool)  # the slot's x_t has its x_{t+1} stored in the next slot
        self.episode_id = np.full(n, -1, np.int64)
        self.episode_step = np.zeros(n, np.int64)  # t of the slot's observation in its episode
        self.cursor, self.written, self.n_episodes = 0, 0, 0
        self._open, self._last = False, -1  # running episode; slot of its newest observation

    # ----------------------------------------------------------------------------------------- write
    def _write(self, obs: np.ndarray, step: int) -> int:
        i = self.cursor
        self.frames[i] = obs[-self.frame_channels:]
        self.action[i], self.mu[i], self.reward[i], self.terminated[i] = 0, 1.0, 0.0, 0.0
        self.has_transition[i] = False
        self.episode_id[i], self.episode_step[i] = self.n_episodes - 1, step
        self.cursor, self.written = (i + 1) % self.capacity, self.written + 1
        return i

    def add(self, obs, action: int, mu: float, reward: float, terminated: bool, next_obs, episode_end: bool) -> None:
        """Store (x_t, a_t, mu(a_t|x_t), r_t, terminated_t, x_{t+1}); ``episode_end`` (terminated,
        truncated or end of the run) closes the episode."""
        obs, next_obs = np.asarray(obs), np.asarray(next_obs)
        if obs.shape != self.obs_shape or next_obs.shape != self.obs_shape:
            raise ValueError(f"observations must have shape {self.obs_shape}, got {obs.shape} and {next_obs.shape}")
        if not 0.0 < float(mu) <= 1.0:
            raise ValueError(f"mu must be the behaviour probability of the action, in (0, 1], got {mu}")
        if not self._open:
            self.n_episodes += 1
            self._last, self._open = self._write(obs, 0), True
        i = self._last  # an episode longer than the ring overwrites its own oldest slots
        self.action[i], self.mu[i], self.reward[i] = int(action), float(mu), float(reward)
        self.terminated[i] = float(bool(terminated))
        self._last = self._write(next_obs, int(self.episode_step[i]) + 1)
        self.has_transition[i] = True
        if episode_end:
            self._open, self._last = False, -1

    # ---------------------------------------------------------------------------------------- sample
    def filled(self) -> int:
        return min(self.written, self.capacity)

    def _back(self, idx: np.ndarray, limit: int) -> np.ndarray:
        """Stored observations of the same episode right before each of ``idx`` (steps t-1, t-2, ...),
        counted up to ``limit``. The step check stops at the oldest slot of an episode longer than the
        ring: the slot before it holds the same episode's newest observation."""
        same = np.ones(len(idx), bool)
        back = np.zeros(len(idx), np.int64)
        for m in range(1, limit + 1):
            prev = (idx - m) % self.capacity
            same &= self.episode_id[prev] == self.episode_id[idx]
            same &= self.episode_step[prev] == self.episode_step[idx] - m
            back += same
        return back

    def _valid(self, idx: np.ndarray) -> np.ndarray:
        """Whether a sequence may start at each slot: a stored transition whose frame stack is stored."""
        ok = self.has_transition[idx].copy()
        if self.stack > 1:
            ok &= self._back(idx, self.stack - 1) >= np.minimum(self.stack - 1, self.episode_step[idx])
        return ok

    def can_sample(self) -> bool:
        return bool(self.has_transition.any())

    def starts(self, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        """``batch_size`` start slots, uniform over the valid ones (with replacement): rejection
        sampling over the filled slots, with an exact fallback."""
        filled, idx = self.filled(), np.empty(0, np.int64)
        for _ in range(16):
            draw = rng.integers(0, filled, size=2 * batch_size)
            idx = np.concatenate([idx, draw[self._valid(draw)]])
            if len(idx) >= batch_size:
                return idx[:batch_size]
        candidates = np.flatnonzero(self._valid(np.arange(filled)))
        if len(candidates) == 0:
            raise ValueError("the sequence replay holds no transition yet")
        return candidates[rng.integers(0, len(candidates), size=batch_size)]

    def gather(self, start: np.ndarray) -> SequenceBatch:
        """The sequences starting at slots ``start`` (see :class:`SequenceBatch`)."""
        cap, L, K, B = self.capacity, self.seq_len, self.burn_in, len(start)
        ep, step = self.episode_id[start], self.episode_step[start]
        n, going = np.zeros(B, np.int64), np.ones(B, bool)
        for m in range(L):  # transitions in the episode from the start on
            j = (start + m) % cap
            going &= self.has_transition[j] & (self.episode_id[j] == ep) & (self.episode_step[j] == step + m)
            n += going
        back, s1 = self._back(start, K + self.stack - 1), self.stack - 1
        # burn-in length k: back to the episode start if it is stored, else as far as stacks stay stored
        k = np.where(step <= back, np.minimum(K, step), np.clip(np.minimum(K, back - s1), 0, None))
        offset = np.arange(-K, L + 1)  # window position p holds slot start + offset[p], clipped to [-k, n]
        rel = np.clip(offset[None, :], -k[:, None], n[:, None])
        slots = (start[:, None] + rel) % cap  # (B, W)
        win_step = step[:, None] + rel
        stacks = [(slots - np.minimum(m, win_step)) % cap for m in range(s1, -1, -1)]  # oldest first
        obs = self.frames[np.stack(stacks, axis=-1)]  # (B, W, stack, c, H, W)
        obs = obs.reshape(B, K + L + 1, *self.obs_shape)
        first = (offset[None, :] <= -k[:, None]).astype(np.float32)
        t_slots = (start[:, None] + np.arange(L)[None, :]) % cap
        mask = np.arange(L)[None, :] < n[:, None]
        return SequenceBatch(obs=obs, first=first, action=np.where(mask, self.action[t_slots], 0),
                             mu=np.where(mask, self.mu[t_slots], 1.0).astype(np.float32),
                             reward=np.where(mask, self.reward[t_slots], 0.0).astype(np.float32),
                             terminated=np.where(mask, self.terminated[t_slots], 0.0).astype(np.float32),
                             mask=mask.astype(np.float32), length=n, index=start.astype(np.int64), burn_in=K)

    # ------------------------------------------------------------------------------------ checkpoint
    def state_dict(self, defer: bool = False) -> dict:
        """The filled slots (frames packed; ``defer``: packed when the checkpoint is written) and the
        ring position: numpy arrays, numbers and strings only."""
        n = self.filled()
        if defer:
            from pcnn_explore.checkpoint import Deferred

            frames_z = Deferred(pack, self.frames[:n].copy(), delta=True)
        else:
            frames_z = pack(self.frames[:n], delta=True)
        d = {name: getattr(self, name)[:n].copy() for name in self._ARRAYS}
        d.update(format=self.FORMAT, filled=n, frames_z=frames_z, cursor=self.cursor, written=self.written,
                 n_episodes=self.n_episodes, open=self._open, last=self._last, capacity=self.capacity,
                 obs_shape=list(self.obs_shape), stack=self.stack, seq_len=self.seq_len, burn_in=self.burn_in)
        return d

    def load_state_dict(self, d: dict) -> None:
        """Restore a :meth:`state_dict` bit for bit; slots beyond the saved ones become empty."""
        mine = (self.capacity, self.obs_shape, self.stack, self.seq_len, self.burn_in)
        theirs = (int(d["capacity"]), tuple(d["obs_shape"]), int(d["stack"]), int(d["seq_len"]), int(d["burn_in"]))
        if mine != theirs:
            raise ValueError(f"sequence replay state {theirs} does not match this shard {mine} "
                             "(capacity, obs_shape, stack, seq_len, burn_in)")
        n = int(d["filled"])
        if n != min(int(d["written"]), self.capacity):
            raise ValueError(f"sequence replay state holds {n} slots but {int(d['written'])} frames were written")
        self.frames[n:] = 0
        unpack(d["frames_z"], out=self.frames[:n])
        for name in self._ARRAYS:
            target = getattr(self, name)
            target[:n] = np.asarray(d[name])[:n]
            target[n:] = self._EMPTY.get(name, 1.0 if name == "mu" else 0)
        self.cursor, self.written, self.n_episodes = int(d["cursor"]), int(d["written"]), int(d["n_episodes"])
        self._open, self._last = bool(d["open"]), int(d["last"])


class SequenceReplay(Shards):
    """Sequence replay for N envs, one :class:`SequenceShard` each (``capacity`` slots split evenly).

    The loop drives it like the DQN replay: ``add(env_index, obs, action, mu, reward, terminated,
    next_obs, episode_end)``, ``can_sample()``, ``sample(batch_size, rng)`` -> :class:`SequenceBatch`,
    ``state_dict(defer=False)`` / ``load_state_dict``. A batch draws its sequences from the shards in
    proportion to their filled slots (a multinomial draw from ``rng``; one env: no draw).

    Defaults: seq_len 33 transitions (Reactor's sequence length; each sequence also carries the
    observation after its last transition), burn_in 32 observations, stack 1 (Atari: 4).
    """

    def __init__(self, num_envs: int, capacity: int, obs_shape, stack: int = 1, seq_len: int = SEQ_LEN,
                 burn_in: int = BURN_IN):
        per_env = -(-int(capacity) // int(num_envs))
        self.shards = [SequenceShard(per_env, obs_shape, stack, seq_len, burn_in) for _ in range(int(num_envs))]
        self.seq_len, self.burn_in = int(seq_len), int(burn_in)

    def add(self, env_index: int, obs, action: int, mu: float, reward: float, terminated: bool, next_obs,
            episode_end: bool) -> None:
        """Store a transition of env ``env_index`` (see :meth:`SequenceShard.add`)."""
        self.shards[env_index].add(obs, action, mu, reward, terminated, next_obs, episode_end)

    def sample(self, batch_size: int, rng: np.random.Generator) -> SequenceBatch:
        ready = [s for s in self.shards if s.can_sample()]
        if not ready:
            raise ValueError("the sequence replay holds no transition yet")
        if len(self.shards) == 1:
            return ready[0].gather(ready[0].starts(batch_size, rng))
        parts = [s.gather(s.starts(c, rng)) for _, s, c in self.split(batch_size, rng, lambda s: s.filled())]
        fields = [f for f in SequenceBatch.__dataclass_fields__ if f != "burn_in"]
        return SequenceBatch(**{f: np.concatenate([getattr(p, f) for p in parts]) for f in fields},
                             burn_in=self.burn_in)
