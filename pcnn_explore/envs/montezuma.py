"""Montezuma's Revenge facts read from and played on the ALE: the RAM address of the current room,
the game's action names and the kit's scripted route through the first room.

The recorder's ``--policy scripted`` plays :data:`MONTEZUMA_SCRIPT`; the explorer stream
(:mod:`pcnn_explore.streams.policies`) extends it; :func:`montezuma_room` is ``info["cell"]`` of
``ALE/MontezumaRevenge-v5`` (:func:`pcnn_explore.envs.make_env`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["MONTEZUMA_ROOM_RAM", "MONTEZUMA_ACTIONS", "MONTEZUMA_SCRIPT", "montezuma_room", "script_actions"]

#: RAM address of the current room in Montezuma's Revenge
MONTEZUMA_ROOM_RAM = 3
#: ALE action name -> action index (the game's minimal action set)
MONTEZUMA_ACTIONS = {"NOOP": 0, "FIRE": 1, "UP": 2, "RIGHT": 3, "LEFT": 4, "DOWN": 5, "RIGHTFIRE": 11, "LEFTFIRE": 12}

#: Montezuma's Revenge, first room: down the ladder, rope, right ladder, jump the skull, key (+100),
#: back up, right door (+300), room 2, then back to room 1 and into room 2 again (three room
#: changes in all). Open-loop (action, repeat) pairs in agent steps of 4 emulator frames; they
#: need deterministic dynamics (no sticky actions, no random no-ops at reset). Found by trial,
#: reading the player's position from RAM (x: address 42, y: address 43).
MONTEZUMA_SCRIPT: tuple[tuple[str, int], ...] = (
    ("NOOP", 1), ("DOWN", 9), ("RIGHT", 13), ("RIGHTFIRE", 1), ("NOOP", 3), ("DOWN", 3),  # onto the rope
    ("RIGHTFIRE", 1), ("NOOP", 12), ("RIGHT", 1), ("DOWN", 9),  # right platform, down the ladder
    ("LEFT", 10), ("LEFTFIRE", 1), ("NOOP", 6), ("LEFT", 14),  # jump over the skull
    ("UP", 9), ("LEFT", 1), ("FIRE", 1), ("NOOP", 15),  # left ladder, jump for the key
    ("RIGHT", 1), ("DOWN", 9), ("RIGHT", 8), ("RIGHTFIRE", 1), ("NOOP", 6), ("RIGHT", 16),  # back
    ("UP", 9), ("LEFT", 1), ("LEFTFIRE", 1), ("NOOP", 12), ("LEFTFIRE", 1), ("NOOP", 7),  # rope
    ("LEFT", 1), ("UP", 12),  # middle ladder, back where the episode started
    ("RIGHT", 2), ("RIGHTFIRE", 1), ("NOOP", 8), ("RIGHT", 20),  # right door (+300), room 2
    ("LEFT", 10), ("RIGHT", 14),  # back into room 1 and out again
)


def montezuma_room(env: Any) -> int:
    """The room the player is in (RAM address :data:`MONTEZUMA_ROOM_RAM`) of an ALE env (any wrapper)."""
    return int(env.unwrapped.ale.getRAM()[MONTEZUMA_ROOM_RAM])


def script_actions(script) -> np.ndarray:
    """(L,) int64 ALE action indices of a script of (action name, repeat) pairs, one per agent step."""
    return np.array([MONTEZUMA_ACTIONS[name] for name, repeat in script for _ in range(repeat)], np.int64)
