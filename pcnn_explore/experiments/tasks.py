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

Registered ids (``import pcnn_explore.experiments.tasks`` registers them; ``gym.make`` also
accepts ``"pcnn_explore.experiments.tasks:MiniGrid-Serpentine-9x9-v0"`` which imports first):

- ``MiniGrid-Serpentine-7x7-v0``, ``-9x9-v0``, ``-11x11-v0`` (``max_steps = 4 * size**2``)
"""
from __future__ import annotations

from enum import IntEnum

import gymnasium as gym
from gymnasium import spaces
from minigrid.core.grid import Grid
from minigrid.core.mission import MissionSpace
from minigrid.core.world_object import Goal
from minigrid.minigrid_env import MiniGridEnv

__all__ = ["SerpentineEnv", "serpentine_path_length", "SERPENTINE_SIZES", "TASK_IDS"]

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
