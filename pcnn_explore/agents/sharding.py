"""What every multi-env replay does the same way: one shard per env, sampled in proportion to its data.

A shard holds one env's data in time order, so nothing a learner reads (frame stacks, Monte Carlo
returns, sequences) mixes the episodes of two envs. :class:`Shards` is the base of
:class:`pcnn_explore.run.shards.ReplayShards` (DQN's transitions) and
:class:`pcnn_explore.agents.sequence_replay.SequenceReplay` (Reactor's sequences).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["Shards"]


class Shards:
    """Subclasses set ``self.shards``: a list of buffers with ``can_sample()``,
    ``state_dict(defer=False)`` and ``load_state_dict(d)``."""

    shards: list

    def can_sample(self) -> bool:
        return any(s.can_sample() for s in self.shards)

    def split(self, batch_size: int, rng: np.random.Generator, size: Callable) -> list[tuple[int, object, int]]:
        """(shard index, shard, count) of the shards that can sample, the batch shared among them in
        proportion to ``size(shard)`` (one multinomial draw from ``rng``); shards drawing 0 are left out."""
        ready = [(i, s) for i, s in enumerate(self.shards) if s.can_sample()]
        sizes = np.array([size(s) for _, s in ready], np.float64)
        counts = rng.multinomial(batch_size, sizes / sizes.sum())
        return [(i, s, int(c)) for (i, s), c in zip(ready, counts) if c]

    def state_dict(self, defer: bool = False) -> dict:
        """The shards' states; ``defer``: frames compressed when saved, not now."""
        return {"shards": [s.state_dict(defer=defer) for s in self.shards]}

    def load_state_dict(self, d: dict) -> None:
        if len(d["shards"]) != len(self.shards):
            raise ValueError(f"the checkpoint's replay has {len(d['shards'])} shards, this run {len(self.shards)}")
        for shard, state in zip(self.shards, d["shards"]):
            shard.load_state_dict(state)
