"""CPU-scale hard-exploration tasks assembled with MiniGrid's API.

The paper's sparse-reward Atari games need 100M+ frames. On a CPU we need a task whose single
reward is out of reach of epsilon-greedy exploration within tens of thousands of agent steps,
but within reach of an agent that is pushed towards novel frames. A long winding corridor is
the smallest such task: it is a chain MDP in pixels.

``SerpentineEnv(size)``: a ``size x size`` room (walls included) whose free rows are joined
by one gap at alternating ends, so the only path from the agent (top-left, facing right) to the
green goal (at the end of the last free row) is a snake of ``serpentine_path_length(size)``
cells. The reward is MiniGrid's ``1 - 0.9 * step_count / max_steps`` on reaching the goal, 0
otherwise; nothing else rewards the agent. Only the 3 navigation actions (turn left, turn right,
forward) exist, so a uniformly random policy is the epsilon-greedy agent's exploration.

Registered ids (``import pcnn_explore.envs.minigrid_tasks`` registers them; ``gym.make`` also
accepts ``"pcnn_explore.envs.minigrid_tasks:MiniGrid-Serpentine-9x9-v0"`` which imports first):

- ``MiniGrid-Serpentine-7x7-v0``, ``-9x9-v0``, ``-11x11-v0`` (``max_steps = 4 * size**2``)

``RoomChainEnv(n_rooms, room_size)``: a partially observed pixel task where novelty is local, as
on Atari. A row of ``n_rooms`` square rooms (``room_size`` x ``room_size`` free cells each), each
joined to the next by an open door, the doors alternately on the top and the bottom free row, so
the path zigzags. Every room but the first holds a landmark (a ball, box or key; its colour and
kind change from room to room) in a corner off the path, and every door has its own colour, so
seen through the agent's egocentric 7x7 view (``view="partial"``) a new room brings new pixels
into view. The layout is fixed: the same map every episode, whatever the seed. The agent starts
in the bottom-left cell of the first room, facing right; the green goal is in the last room's
far corner (MiniGrid's reward on reaching it; the episode also ends after ``max_steps``).
Only the 3 navigation actions exist.

- ``MiniGrid-RoomChain-R{n}-v0`` for n in ``ROOM_CHAIN_ROOMS`` (4 x 4 rooms, ``max_steps = 150``)
"""
from __future__ import annotations

from enum import IntEnum

import gymnasium as gym
from gymnasium import spaces
from minigrid.core.grid import Grid
from minigrid.core.mission import MissionSpace
from minigrid.core.world_object import Ball, Box, Door, Goal, Key
from minigrid.minigrid_env import MiniGridEnv

__all__ = ["SerpentineEnv", "serpentine_path_length", "SERPENTINE_SIZES", "TASK_IDS", "RoomChainEnv",
           "ROOM_CHAIN_ROOMS", "ROOM_CHAIN_IDS", "room_chain_cells"]

SERPENTINE_SIZES = (7, 9, 11)
TASK_IDS = tuple(f"MiniGrid-Serpentine-{s}x{s}-v0" for s in SERPENTINE_SIZES)


class NavActions(IntEnum):
    left = 0
    right = 1
    forward = 2


def _check_size(size: int) -> int:
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"size must be an int, got {type(size).__name__}")
    if size < 5 or size % 2 == 0:
        raise ValueError(
            f"size must be odd and at least 5 (walls, free rows and wall rows alternate), got {size}"
        )
    return size


def serpentine_path_length(size: int) -> int:
    """Number of moves from the start cell to the goal along the only path (grid cells).

    Free rows are 1, 3, ..., size-2 (``k = (size - 1) // 2`` of them, each ``size - 2`` cells
    long); between two free rows one gap cell. Moves = cells on the path minus the start cell.
    """
    _check_size(size)
    k = (size - 1) // 2
    cells = k * (size - 2) + (k - 1)
    return cells - 1


class SerpentineEnv(MiniGridEnv):
    """A winding one-cell-wide corridor; the goal is at its far end. See the module docstring."""

    def __init__(self, size: int = 9, max_steps: int | None = None, **kwargs):
        self.size = _check_size(size)
        if max_steps is None:
            max_steps = 4 * size**2
        if max_steps < 1:
            raise ValueError(f"max_steps must be positive, got {max_steps}")
        super().__init__(
            mission_space=MissionSpace(mission_func=lambda: "reach the end of the corridor"),
            grid_size=size,
            see_through_walls=True,
            max_steps=max_steps,
            **kwargs,
        )
        self.actions = NavActions
        self.action_space = spaces.Discrete(len(NavActions))

    def _gen_grid(self, width: int, height: int) -> None:
        self.grid = Grid(width, height)
        self.grid.wall_rect(0, 0, width, height)
        # wall rows 2, 4, ... with one gap, alternating right end / left end
        for i, y in enumerate(range(2, height - 1, 2)):
            self.grid.horz_wall(1, y, width - 2)
            gap_x = width - 2 if i % 2 == 0 else 1
            self.grid.set(gap_x, y, None)
        last_row = height - 2
        n_free_rows = (height - 1) // 2
        goal_x = 1 if n_free_rows % 2 == 0 else width - 2
        self.put_obj(Goal(), goal_x, last_row)
        self.agent_pos = (1, 1)
        self.agent_dir = 0  # facing right, along the first free row
        self.mission = "reach the end of the corridor"


for _size in SERPENTINE_SIZES:
    _id = f"MiniGrid-Serpentine-{_size}x{_size}-v0"
    if _id not in gym.registry:
        gym.register(id=_id, entry_point=SerpentineEnv, kwargs={"size": _size})


ROOM_CHAIN_ROOMS = (3, 4, 6, 8)
ROOM_CHAIN_IDS = tuple(f"MiniGrid-RoomChain-R{n}-v0" for n in ROOM_CHAIN_ROOMS)
_DOOR_COLOURS = ("red", "green", "yellow", "purple", "grey")  # not blue: level 0 in the density frame, like the floor
_LANDMARKS = (Ball, Box, Key)


def room_chain_cells(n_rooms: int, room_size: int) -> int:
    """Cells the agent can stand on: the rooms' free cells (goal included) and the n_rooms - 1
    doors, less the n_rooms - 1 landmarks: n_rooms * room_size**2."""
    return n_rooms * room_size**2


class RoomChainEnv(MiniGridEnv):
    """A fixed zigzag chain of rooms with a landmark in each; see the module docstring."""

    def __init__(self, n_rooms: int = 4, room_size: int = 4, max_steps: int = 150, **kwargs):
        for name, value, low in (("n_rooms", n_rooms, 2), ("room_size", room_size, 3), ("max_steps", max_steps, 1)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, got {type(value).__name__}")
            if value < low:
                raise ValueError(f"{name} must be at least {low}, got {value}")
        self.n_rooms, self.room_size = n_rooms, room_size
        super().__init__(
            mission_space=MissionSpace(mission_func=lambda: "explore the rooms and reach the goal"),
            width=n_rooms * (room_size + 1) + 1,
            height=room_size + 2,
            see_through_walls=True,
            max_steps=max_steps,
            **kwargs,
        )
        self.actions = NavActions
        self.action_space = spaces.Discrete(len(NavActions))

    def door_row(self, i: int) -> int:
        """Row (y) of the door out of room i (0-based): the top free row for even i, else the bottom."""
        return 1 if i % 2 == 0 else self.room_size

    def _gen_grid(self, width: int, height: int) -> None:
        k = self.room_size
        self.grid = Grid(width, height)
        self.grid.wall_rect(0, 0, width, height)
        for i in range(self.n_rooms):
            left, right = 1 + i * (k + 1), i * (k + 1) + k  # the room's free columns
            out_row = self.door_row(i)
            if i < self.n_rooms - 1:
                self.grid.vert_wall(right + 1, 0, height)
                self.put_obj(Door(_DOOR_COLOURS[i % len(_DOOR_COLOURS)], is_open=True), right + 1, out_row)
            if i > 0:  # the corner on the entry side, in the exit row: off the path
                landmark = _LANDMARKS[(i - 1) % len(_LANDMARKS)](_DOOR_COLOURS[(i + 2) % len(_DOOR_COLOURS)])
                self.put_obj(landmark, left, out_row)
        last = self.n_rooms - 1
        self.put_obj(Goal(), last * (k + 1) + k, self.door_row(last))
        self.agent_pos = (1, k)
        self.agent_dir = 0  # facing right
        self.mission = "explore the rooms and reach the goal"


for _n in ROOM_CHAIN_ROOMS:
    _id = f"MiniGrid-RoomChain-R{_n}-v0"
    if _id not in gym.registry:
        gym.register(id=_id, entry_point=RoomChainEnv, kwargs={"n_rooms": _n})


def optimal_steps(env: MiniGridEnv) -> int:
    """Fewest agent steps from the reset state to the goal, by breadth-first search over
    (cell, direction) with the turn-left / turn-right / forward moves. ``-1`` if unreachable.

    ``env`` must have been reset; doors, keys and boxes are treated as walls (navigation only).
    """
    from collections import deque

    base = env.unwrapped
    grid = base.grid
    goal = None
    for x in range(grid.width):
        for y in range(grid.height):
            cell = grid.get(x, y)
            if cell is not None and cell.type == "goal":
                goal = (x, y)
    if goal is None:
        return -1
    start = (tuple(int(v) for v in base.agent_pos), int(base.agent_dir))
    moves = ((1, 0), (0, 1), (-1, 0), (0, -1))  # MiniGrid's DIR_TO_VEC
    seen = {start: 0}
    queue = deque([start])
    while queue:
        (pos, d) = state = queue.popleft()
        n = seen[state]
        if pos == goal:
            return n
        nxt = [(pos, (d - 1) % 4), (pos, (d + 1) % 4)]
        fx, fy = pos[0] + moves[d][0], pos[1] + moves[d][1]
        cell = grid.get(fx, fy)
        if cell is None or cell.type == "goal" or cell.can_overlap():
            nxt.append(((fx, fy), d))
        for s in nxt:
            if s not in seen:
                seen[s] = n + 1
                queue.append(s)
    return -1
