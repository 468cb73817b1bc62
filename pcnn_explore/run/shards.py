"""Replay for N envs: one :class:`~pcnn_explore.agents.replay.ReplayBuffer` shard per env.

A shard holds its env's transitions in time order, so frame stacks and Monte Carlo returns never
mix episodes of different envs. ``capacity`` is split evenly. A batch draws its transitions from
the shards in proportion to the transitions they hold (a multinomial draw from the run's RNG),
which is uniform over all stored transitions. With one env the shard is the whole replay and
sampling is exactly the single buffer's.
"""
from __future__ import annotations

import numpy as np
import torch

from pcnn_explore.agents.replay import Batch, DeviceBatch, ReplayBuffer
from pcnn_explore.agents.sharding import Shards

__all__ = ["ReplayShards"]


class ReplayShards(Shards):
    """N replay shards; with a ``device`` their frames are slices of one tensor there, so a batch
    drawn from several shards is still one :class:`DeviceBatch` gathered on the device."""

    def __init__(self, n: int, capacity: int, obs_shape, stack: int, gamma: float, running_episode: str,
                 device: str | None = None, n_actions: int | None = None):
        per_env = -(-int(capacity) // int(n))
        self.per_env, self.frames = per_env, None
        if device is not None:
            c, h, w = obs_shape
            self.frames = torch.zeros((per_env * int(n), c // stack, h, w), dtype=torch.uint8, device=device)
        self.shards = [ReplayBuffer(per_env, obs_shape, stack=stack, gamma=gamma, running_episode=running_episode,
                                    device=device, n_actions=n_actions,
                                    frames=None if self.frames is None else self.frames[i * per_env:(i + 1) * per_env])
                       for i in range(int(n))]

    def add(self, i: int, *transition) -> None:
        """Store a transition of env ``i`` (the arguments of :meth:`ReplayBuffer.add`)."""
        self.shards[i].add(*transition)

    def sample(self, batch_size: int, rng: np.random.Generator) -> Batch:
        if len(self.shards) == 1:
            return self.shards[0].sample(batch_size, rng)
        parts = [(i, s.sample(c, rng)) for i, s, c in self.split(batch_size, rng, lambda s: min(s.written, s.capacity))]
        if self.frames is None:
            return Batch(*(np.concatenate([getattr(p, f) for _, p in parts]) for f in Batch.__dataclass_fields__))
        # each part's sample() sent its shard's staged frames; slots become rows of the shared tensor
        slots = {f: np.concatenate([getattr(p, f) + i * self.per_env for i, p in parts])
                 for f in ("obs_slots", "next_slots")}
        rest = {f: np.concatenate([getattr(p, f) for _, p in parts]) for f in ("action", "reward", "done", "mc_return",
                                                                               "index")}
        return DeviceBatch(frames=self.frames, **slots, **rest)
