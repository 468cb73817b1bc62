"""Exploration measures of a run: distinct cells visited so far and the step of the first success.

Environments made by :func:`pcnn_explore.envs.make_env` that expose them put two keys in the
``info`` of every ``reset`` and ``step``: ``info["cell"]``, a hashable position (DeepSea and
MiniGrid: the agent's (row, column); Montezuma's Revenge: its room number), and
``info["success"]``, True on the step of a success (DeepSea: the +1; MiniGrid: the goal reached;
Montezuma: points scored). :class:`ExplorationTracker` counts them over a whole run (all
episodes, all envs of a vector run together)::

    tracker = ExplorationTracker()
    obs, info = env.reset()
    tracker.update(info, step=0)
    for step in range(1, n + 1):
        obs, reward, terminated, truncated, info = env.step(policy(obs))
        tracker.update(info, step)
        ...
    tracker.distinct_cells, tracker.first_success_step

An info without ``"cell"`` (Atari games other than Montezuma) changes nothing: the tracker then
reports 0 cells and no success. An info with ``info["outside"]`` True (DeepSea after its last step,
the agent below the grid) adds no cell: on DeepSea the distinct cells are those of the
N (N + 1) / 2 the agent can occupy before an episode ends (:func:`pcnn_explore.envs.deep_sea.occupiable_cells`).
Pure Python, no dependence on the training loop.
"""
from __future__ import annotations

from typing import Any, Hashable, Mapping

__all__ = ["ExplorationTracker"]


def _freeze(cell: Any) -> Hashable:
    """A cell as stored in a checkpoint (lists) -> the hashable cell (tuples)."""
    return tuple(_freeze(c) for c in cell) if isinstance(cell, (list, tuple)) else cell


def _plain(cell: Hashable) -> Any:
    """A cell -> checkpoint-safe containers (tuples -> lists; numpy integers -> int)."""
    if isinstance(cell, tuple):
        return [_plain(c) for c in cell]
    return int(cell) if hasattr(cell, "__index__") and not isinstance(cell, bool) else cell


class ExplorationTracker:
    """Distinct cells visited and the first success of a run, from the envs' ``info`` dicts.

    ``update(info, step=None)``: record one ``info`` (from ``reset`` or ``step``). ``step`` is the
    agent step at which it was observed (the loop's step counter after the env step; for a reset,
    the current count); None: the number of ``update`` calls so far, counting this one.

    ``distinct_cells``: how many different ``info["cell"]`` values have been seen (int), leaving
    out those of infos with ``info["outside"]`` True.
    ``first_success_step``: the ``step`` of the first info with ``info["success"]`` True, None
    before any. ``successes``: how many such infos. ``state_dict`` / ``load_state_dict`` for
    checkpoints (plain lists and numbers only).
    """

    def __init__(self) -> None:
        self._cells: set[Hashable] = set()
        self.first_success_step: int | None = None
        self.successes = 0
        self.updates = 0

    @property
    def distinct_cells(self) -> int:
        return len(self._cells)

    @property
    def cells(self) -> frozenset:
        """The distinct cells seen so far."""
        return frozenset(self._cells)

    def update(self, info: Mapping[str, Any], step: int | None = None) -> None:
        if not isinstance(info, Mapping):
            raise TypeError(f"info must be the dict an env returns, got {type(info).__name__}")
        if step is not None and (isinstance(step, bool) or not hasattr(step, "__index__") or step < 0):
            raise ValueError(f"step must be a non-negative integer (agent steps) or None, got {step!r}")
        self.updates += 1
        at = self.updates if step is None else int(step)
        cell = info.get("cell")
        if cell is not None and not info.get("outside", False):
            try:
                self._cells.add(_freeze(cell))
            except TypeError:
                raise TypeError(f'info["cell"] must be hashable (a position such as (row, column)), got {cell!r}') from None
        if info.get("success", False):
            self.successes += 1
            if self.first_success_step is None:
                self.first_success_step = at

    def state_dict(self) -> dict:
        return {"kind": "ExplorationTracker", "cells": sorted((_plain(c) for c in self._cells), key=repr),
                "first_success_step": self.first_success_step, "successes": self.successes, "updates": self.updates}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if state.get("kind") != "ExplorationTracker":
            raise ValueError(f"state is for {state.get('kind')!r}, not ExplorationTracker")
        self._cells = {_freeze(c) for c in state["cells"]}
        first = state["first_success_step"]
        self.first_success_step = None if first is None else int(first)
        self.successes, self.updates = int(state["successes"]), int(state["updates"])

    def __repr__(self) -> str:
        return (f"ExplorationTracker(distinct_cells={self.distinct_cells}, "
                f"first_success_step={self.first_success_step}, successes={self.successes})")
