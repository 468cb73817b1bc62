"""Replay for N envs: one :class:`~pcnn_explore.agents.replay.ReplayBuffer` shard per env.

A shard holds its env's transitions in time order, so frame stacks and Monte Carlo returns never
mix episodes of different envs. ``capacity`` is split evenly. A batch draws its transitions from
the shards in proportion to the transitions they hold (a multinomial draw from the run's RNG),
which is uniform over all stored transitions. With one env the shard is the whole replay and
sampling is exactly the single buffer's.
"""
from __future__ import annotations

import numpy as np

from pcnn_explore.agents.replay import Batch, ReplayBuffer

__all__ = ["ReplayShards"]


class ReplayShards:
    def __init__(self, n: int, capacity: int, obs_shape, stack: int, gamma: float, running_episode: str):
        per_env = -(-int(capacity) // int(n))
        self.shards = [ReplayBuffer(per_env, obs_shape, stack=stack, gamma=gamma, running_episode=running_episode)
                       for _ in range(int(n))]

    def add(self, i: int, *transition) -> None:
        """Store a transition of env ``i`` (the arguments of :meth:`ReplayBuffer.add`)."""
        self.shards[i].add(*transition)

    def can_sample(self) -> bool:
        return any(s.can_sample() for s in self.shards)

    def sample(self, batch_size: int, rng: np.random.Generator) -> Batch:
        if len(self.shards) == 1:
            return self.shards[0].sample(batch_size, rng)
        ready = [s for s in self.shards if s.can_sample()]
        sizes = np.array([min(s.written, s.capacity) for s in ready], np.float64)
        counts = rng.multinomial(batch_size, sizes / sizes.sum())
        parts = [s.sample(int(c), rng) for s, c in zip(ready, counts) if c]
        return Batch(*(np.concatenate([getattr(p, f) for p in parts]) for f in Batch.__dataclass_fields__))

    def state_dict(self) -> dict:
        return {"shards": [s.state_dict() for s in self.shards]}

    def load_state_dict(self, d: dict) -> None:
        if len(d["shards"]) != len(self.shards):
            raise ValueError(f"the checkpoint's replay has {len(d['shards'])} shards, this run {len(self.shards)}")
        for shard, state in zip(self.shards, d["shards"]):
            shard.load_state_dict(state)
