"""DeepSea (Osband et al. 2019, bsuite): deep exploration in its barest form, as a gymnasium env.

An N x N grid. The agent starts in the top-left cell (row 0, column 0). Every step it moves one
row down and one column left or right (clipped at the walls). Which of the two actions (0, 1)
means "right" is drawn per cell, once, from a fixed mapping seed (``mapping_seed``), so the agent
cannot learn "action 1 is right". Taking "right" costs 0.01/N (also against the right wall);
taking "right" in column N-1 pays +1. Column N-1 can only be reached on the last row, by going
right at every step, so the +1 comes on the episode's last step or never. The episode ends after
N steps (the agent leaves the grid through the bottom). Best return: 1 - N * 0.01/N = 0.99;
every other episode returns at most 0. An agent that explores by dithering (epsilon-greedy) needs
about 2^N episodes to see the +1 once; the small cost of "right" even teaches it to go left.

Views (see :mod:`pcnn_explore.envs`, which builds and wraps it):

- observation: (1, N, N) uint8, 255 in the agent's cell, 0 elsewhere; after the last step the
  grid is empty (all 0), as in bsuite.
- density frame (``info["density_frame"]``): (N, N) uint8 with levels 0..7, one pixel per cell:
  7 in the agent's cell, 0 elsewhere (all 0 after the last step). Visited cells are not shown: the
  frame is the state, so a density model's pseudo-count of it counts visits to the agent's cell.
  Level 0 is also what the PixelCNN reads outside the frame (its zero padding), so the paper's
  translation-invariant network sees nothing that tells one cell from another (see
  :class:`pcnn_explore.density.pixelcnn.PixelCNNDensity`, ``position``).
  An N x N frame has N^2 / 42^2 of a 42x42 frame's pixels: a PixelCNN update at N = 20 cost
  0.8 ms against 3.3 ms at 42x42 (about 4x cheaper; one CPU thread, shared machine), and about
  0.6 ms at N <= 13 (the 10x that (N/42)^2 promises stops at the step's fixed cost); CTS: 0.07 ms
  against 0.31 ms.
- ``info["cell"]``: (row, column) of the agent after reset and after each step; after the last
  step the row is N (the row below the grid) and ``info["outside"]`` is True (False before): that
  position is not one of the N (N + 1) / 2 cells the agent can occupy before the episode ends
  (row r, columns 0..r), and :class:`pcnn_explore.exploration.ExplorationTracker` does not count it.
  ``info["success"]``: True on the step that pays +1.

Registered ids: ``DeepSea-{N}-v0`` for N = 3 ... 50, mapping seed :data:`DEFAULT_MAPPING_SEED`
(42, the seed of bsuite's deep-sea sweep, which draws one mapping for every run; ``import
pcnn_explore.envs.deep_sea``: :func:`pcnn_explore.envs.make_env` does it, and takes ``mapping_seed`` to
draw another). The mapping is drawn with ``np.random.default_rng(mapping_seed).integers(0, 2, (N, N))``
(1: action 1 is "right" in that cell); bsuite draws it with another generator, so the maps differ,
not the task.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np

__all__ = ["DeepSeaEnv", "DEEP_SEA_SIZES", "DEFAULT_MAPPING_SEED", "deep_sea_id", "deep_sea_size", "right_action",
           "optimal_return", "occupiable_cells", "MOVE_COST", "AGENT_LEVEL", "DEEP_SEA_DEFAULTS", "DEEP_SEA_MMC_BETA",
           "DEEP_SEA_NOVELTY_EPSILON"]

#: grid sizes N registered as DeepSea-{N}-v0
DEEP_SEA_SIZES = tuple(range(3, 51))
#: the mapping seed of the registered ids: bsuite's deep-sea sweep draws every run's mapping from 42
DEFAULT_MAPPING_SEED = 42
#: the cost of one "right" is MOVE_COST / N, so the best return is 1 - MOVE_COST
MOVE_COST = 0.01
#: the agent's level in the density frame (the others are 0)
AGENT_LEVEL = 7
_PREFIX = "DeepSea-"

#: DeepSea's training settings (TrainConfig fields) on top of the profile's preset. Each is the kit's
#: choice for DeepSea, with the paper's (Atari) value beside it; ``benchmarks/deep_sea_settings.py``
#: runs the ablation (kit's against earlier forms on the same seeds) and holds the measured table:
#: with these, MMC 0.5 and novelty-scaled exploration (:data:`DEEP_SEA_MMC_BETA`,
#: :data:`DEEP_SEA_NOVELTY_EPSILON`), a count-based DQN solved DeepSea-14 by bsuite's rule in 7 of 7
#: (seed, mapping) pairs within 3,000 episodes and DeepSea-20 in 3 of 3 within 5,000; the earlier
#: defaults (x_t scored, c = 1 decayed, MMC 0.1, 4 steps per update, target every 100, epsilon to
#: 0.05) found the +1 on seed 101 but did not solve it.
#: Episodes are N steps, so epsilon decays within the first ~100 episodes (2,000 steps), learning
#: starts after 500 steps.
DEEP_SEA_DEFAULTS = {
    # the frame reached by the action, x_{t+1} (the paper: "the density model receives a single
    # frame", not which; Bellemare et al. 2016 score the state acted in, x_t): x_{t+1} tells
    # DeepSea's two actions apart, so "right" is rewarded where it leads somewhere new (DeepSea-14,
    # seed 101, mapping 42: solved at episode 1,018 against 1,422 with x_t: one seed, not decisive)
    "scored_frame": "next_state",
    # c = 0.1 held constant (the paper: c = 0.1 decayed as n^-1/2 over density updates n; with the
    # decay the bonus of a new cell had fallen to about 0.004 by 18K steps on DeepSea-10)
    "pg_scale": 0.1, "pg_schedule": "constant",
    # one gradient step per 2 agent steps, target copied every 50 agent steps (Nature DQN: 4, and
    # every 10,000 updates = 40,000 agent steps): a +1 found once is replayed often and travels back fast
    "train_every": 2, "target_update_every": 50,
    # epsilon 1 -> 0.01 over 2,000 steps (Nature DQN: -> 0.1 over 1M): the bonus explores
    "epsilon_decay_steps": 2_000, "epsilon_end": 0.01,
    "learning_starts": 500, "lr": 1e-3,  # (Nature DQN: 50,000 and 2.5e-4)
}
#: mixed Monte Carlo beta of a count-based DQN on DeepSea when ``mmc_beta`` is auto (the kit's; the
#: paper's 0.1 is the auto value elsewhere): the return of an episode that found the +1 reaches its
#: first state at once
DEEP_SEA_MMC_BETA = 0.5
#: kappa of the kit's novelty-scaled exploration (``novelty_epsilon``) of a count-based DQN on DeepSea
#: when the next state is scored (the paper: plain epsilon-greedy, 0): a state reached for the
#: k-th time is acted in at random with probability max(epsilon, k^-1/2). Both actions of the last
#: row end the episode on the same (empty) frame, so no count tells the agent to try "right" in the
#: bottom-right cell, and a diagonal cell's untried action has no value until tried; with plain
#: epsilon-greedy the +1 is found only where the network happens to prefer it. Measured in
#: ``benchmarks/deep_sea_settings.py`` (variant ``novelty`` against ``kit`` without it).
DEEP_SEA_NOVELTY_EPSILON = 1.0


def deep_sea_id(size: int) -> str:
    """``DeepSea-{size}-v0``."""
    return f"{_PREFIX}{int(size)}-v0"


def deep_sea_size(env_id: str) -> int | None:
    """N of a ``DeepSea-{N}-v0`` id (any N >= 1 the pattern holds), None for any other string."""
    if not (isinstance(env_id, str) and env_id.startswith(_PREFIX) and env_id.endswith("-v0")):
        return None
    middle = env_id[len(_PREFIX):-len("-v0")]
    return int(middle) if middle.isdigit() and not middle.startswith("0") else None


def optimal_return(size: int) -> float:
    """Return of the best episode: +1 minus N rights at MOVE_COST / N each (0.99)."""
    return 1.0 - size * (MOVE_COST / size)


def occupiable_cells(size: int) -> int:
    """N (N + 1) / 2: the cells the agent can occupy before an episode ends (row r: columns 0..r).
    Coverage on DeepSea is distinct cells visited as a share of these (the row below the grid,
    where an episode ends, is not one of them)."""
    return int(size) * (int(size) + 1) // 2


def right_action(size: int, mapping_seed: int) -> np.ndarray:
    """(N, N) int64: the action (0 or 1) that means "right" in each cell (row, column)."""
    return np.random.default_rng(int(mapping_seed)).integers(0, 2, (int(size), int(size)))


class DeepSeaEnv(gym.Env):
    """The N x N DeepSea grid; see the module docstring. Two actions; reward in (-0.01/N, +1]."""

    metadata = {"render_modes": []}

    def __init__(self, size: int = 10, mapping_seed: int = DEFAULT_MAPPING_SEED):
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
            raise TypeError(f"size must be an int (the grid is size x size), got {type(size).__name__}")
        if size < 2:
            raise ValueError(f"size must be at least 2, got {size}")
        if isinstance(mapping_seed, bool) or not isinstance(mapping_seed, (int, np.integer)) or mapping_seed < 0:
            raise ValueError(f"mapping_seed must be a non-negative integer, got {mapping_seed!r}")
        self.size, self.mapping_seed = int(size), int(mapping_seed)
        self.right = right_action(self.size, self.mapping_seed)
        self.observation_space = gym.spaces.Box(0, 255, (1, self.size, self.size), np.uint8)
        self.action_space = gym.spaces.Discrete(2)
        self.row, self.column = 0, 0

    # ------------------------------------------------------------------------------------ views
    def _grid(self, value: int) -> np.ndarray:
        grid = np.zeros((self.size, self.size), np.uint8)
        if self.row < self.size:
            grid[self.row, self.column] = value
        return grid

    def observation(self) -> np.ndarray:
        """(1, N, N) uint8: 255 in the agent's cell (all 0 once it has left the grid)."""
        return self._grid(255)[None]

    def density_frame(self) -> np.ndarray:
        """(N, N) uint8 levels 0..7: AGENT_LEVEL in the agent's cell, 0 elsewhere."""
        return self._grid(AGENT_LEVEL)

    def _info(self, success: bool) -> dict:
        return {"cell": (self.row, self.column), "success": success, "outside": self.row >= self.size}

    # -------------------------------------------------------------------------------- dynamics
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)  # the task is deterministic: the seed changes nothing
        self.row, self.column = 0, 0
        return self.observation(), self._info(False)

    def step(self, action):
        if self.row >= self.size:
            raise RuntimeError("the episode has ended (N steps): call reset()")
        fast = isinstance(action, (int, np.integer)) and 0 <= action <= 1  # Discrete.contains costs more than the step
        if not (fast or self.action_space.contains(action)):
            raise ValueError(f"action must be 0 or 1, got {action!r}")
        go_right = int(action) == int(self.right[self.row, self.column])
        reward, success = 0.0, False
        if go_right:
            reward -= MOVE_COST / self.size
            if self.column == self.size - 1:
                reward, success = reward + 1.0, True
            self.column = min(self.column + 1, self.size - 1)
        else:
            self.column = max(self.column - 1, 0)
        self.row += 1
        terminated = self.row == self.size
        return self.observation(), reward, terminated, False, self._info(success)


for _n in DEEP_SEA_SIZES:
    if deep_sea_id(_n) not in gym.registry:
        gym.register(id=deep_sea_id(_n), entry_point=DeepSeaEnv,
                     kwargs={"size": _n, "mapping_seed": DEFAULT_MAPPING_SEED})
