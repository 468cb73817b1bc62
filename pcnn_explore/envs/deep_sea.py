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
  ``info["success"]``: True on the step that pays +1. ``info["bad_episode"]`` (last step only): True
  when the episode took "left" in a diagonal cell (row == column), bsuite's "bad episode" (it left
  the only path to the +1); :attr:`DeepSeaEnv.total_bad_episodes` counts the finished bad episodes,
  as bsuite's ``bsuite_info()["total_bad_episodes"]``.

Registered ids: ``DeepSea-{N}-v0`` for N = 3 ... 50, mapping seed :data:`DEFAULT_MAPPING_SEED`
(42, the seed of bsuite's deep-sea sweep, which draws one mapping for every run; ``import
pcnn_explore.envs.deep_sea``: :func:`pcnn_explore.envs.make_env` does it, and takes ``mapping_seed`` to
draw another). The mapping is drawn as bsuite draws it (``mapping_rule="bsuite"``, the default since
0.2.0): ``np.random.RandomState(mapping_seed).binomial(1, 0.5, (N, N))`` (1: action 1 is "right" in
that cell), so ``DeepSea-N-v0`` with mapping seed m is bsuite's ``deep_sea.DeepSea(N, mapping_seed=m)``
step for step: same cells, rewards, episode ends and bad-episode count (checked against the bsuite
package in ``tests/test_deep_sea_bsuite.py``). ``mapping_rule="kit_v1"`` is the kit's draw before
0.2.0, ``np.random.default_rng(mapping_seed).integers(0, 2, (N, N))`` (the same task on another
map), kept only so that runs saved then resume on their own task. The observation stays the kit's
(1, N, N) uint8 (bsuite: (N, N) float32 with 1.0 in the agent's cell).
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np

__all__ = ["DeepSeaEnv", "DEEP_SEA_SIZES", "DEFAULT_MAPPING_SEED", "MAPPING_RULES", "DEFAULT_MAPPING_RULE",
           "deep_sea_id", "deep_sea_size", "right_action",
           "optimal_return", "occupiable_cells", "MOVE_COST", "AGENT_LEVEL", "DEEP_SEA_DEFAULTS", "DEEP_SEA_MMC_BETA",
           "DEEP_SEA_NOVELTY_EPSILON"]

#: grid sizes N registered as DeepSea-{N}-v0
DEEP_SEA_SIZES = tuple(range(3, 51))
#: the mapping seed of the registered ids: bsuite's deep-sea sweep draws every run's mapping from 42
DEFAULT_MAPPING_SEED = 42
#: how the action mapping is drawn from the mapping seed -> what it is (see :func:`right_action`)
MAPPING_RULES = {
    "bsuite": "bsuite's deep_sea: np.random.RandomState(seed).binomial(1, 0.5, (N, N))",
    "kit_v1": "the kit's draw before 0.2.0: np.random.default_rng(seed).integers(0, 2, (N, N))",
}
#: the rule of the registered ids and of an auto ``mapping_rule``: bsuite's own draw
DEFAULT_MAPPING_RULE = "bsuite"
#: the cost of one "right" is MOVE_COST / N, so the best return is 1 - MOVE_COST
MOVE_COST = 0.01
#: the agent's level in the density frame (the others are 0)
AGENT_LEVEL = 7
_PREFIX = "DeepSea-"

#: DeepSea's training settings (TrainConfig fields) on top of the profile's preset: DeepSea's scale
#: adaptations of the Nature DQN schedule only, nothing of the method. Episodes are N steps (10 to 50
#: on the sizes studied) against thousands of Atari frames, so the Atari budgets (1M steps of epsilon
#: decay, 50,000 before learning, a target every 40,000 steps) would spend a whole DeepSea study before
#: the agent acts on its own values. The method stays the paper's: the state acted in scored (x_t),
#: the paper's bonus form of the density model (:data:`pcnn_explore.bonus.PAPER_BONUS_FORM`), MMC with
#: beta 0.1 for a count-based DQN (paper Sec. 4.1) and plain epsilon-greedy. The kit's additions
#: (next state scored, MMC 0.5, novelty-scaled exploration: :data:`DEEP_SEA_MMC_BETA`,
#: :data:`DEEP_SEA_NOVELTY_EPSILON`) stay selectable by name; ``benchmarks/deep_sea_settings.py``
#: measured them (variant ``kit``, with them, against earlier forms on the same seeds).
DEEP_SEA_DEFAULTS = {
    # one gradient step per 2 agent steps, target copied every 50 agent steps (Nature DQN: 4, and
    # every 10,000 updates = 40,000 agent steps): a +1 found once is replayed often and travels back fast
    "train_every": 2, "target_update_every": 50,
    # epsilon 1 -> 0.01 over 2,000 agent steps (Nature DQN: -> 0.1 over 1M): about 100 episodes of N = 20
    "epsilon_decay_steps": 2_000, "epsilon_end": 0.01,
    # learning after 500 agent steps, Adam with lr 1e-3 (Nature DQN: 50,000, RMSprop with 2.5e-4; bsuite's
    # DQN baseline: Adam, 1e-3); the optimiser is named so that the paper profile's RMSprop does not
    # run with Adam's learning rate
    "learning_starts": 500, "optimizer": "adam", "lr": 1e-3,
}
#: mixed Monte Carlo beta of the kit's DeepSea variant (a named addition; no default applies it since
#: 0.2.0: an auto ``mmc_beta`` is the paper's 0.1 with a bonus on every env): the return of an episode
#: that found the +1 reaches its first state at once
DEEP_SEA_MMC_BETA = 0.5
#: kappa of the kit's novelty-scaled exploration (``novelty_epsilon``, a named addition; no default
#: applies it since 0.2.0: the paper's plain epsilon-greedy, 0, is the default on every env): a state
#: reached for the k-th time is acted in at random with probability max(epsilon, k^-1/2). Both actions
#: of the last row end the episode on the same (empty) frame, so no count of the next state tells the
#: agent to try "right" in the bottom-right cell, and a diagonal cell's untried action has no value
#: until tried; with plain epsilon-greedy the +1 is found only where the network happens to prefer it.
#: Measured in ``benchmarks/deep_sea_settings.py`` (variant ``novelty`` against ``kit`` without it).
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


def right_action(size: int, mapping_seed: int, rule: str = DEFAULT_MAPPING_RULE) -> np.ndarray:
    """(N, N) int64: the action (0 or 1) that means "right" in each cell (row, column).

    ``rule`` (see :data:`MAPPING_RULES`): "bsuite", bsuite's draw,
    ``np.random.RandomState(mapping_seed).binomial(1, 0.5, (N, N))`` (Osband et al. 2019's DeepSea;
    the default); "kit_v1", the kit's draw before 0.2.0, ``np.random.default_rng(mapping_seed)
    .integers(0, 2, (N, N))``, kept so that runs saved then resume on their own task.
    """
    if rule == "bsuite":
        return np.random.RandomState(int(mapping_seed)).binomial(1, 0.5, (int(size), int(size))).astype(np.int64)
    if rule == "kit_v1":
        return np.random.default_rng(int(mapping_seed)).integers(0, 2, (int(size), int(size)))
    raise ValueError(f"unknown mapping rule {rule!r}: choose bsuite (bsuite's deep_sea, the default) or kit_v1 "
                     "(the kit's draw before 0.2.0, only to resume older runs)")


class DeepSeaEnv(gym.Env):
    """The N x N DeepSea grid; see the module docstring. Two actions; reward in (-0.01/N, +1]."""

    metadata = {"render_modes": []}

    def __init__(self, size: int = 10, mapping_seed: int = DEFAULT_MAPPING_SEED,
                 mapping_rule: str = DEFAULT_MAPPING_RULE):
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
            raise TypeError(f"size must be an int (the grid is size x size), got {type(size).__name__}")
        if size < 2:
            raise ValueError(f"size must be at least 2, got {size}")
        if isinstance(mapping_seed, bool) or not isinstance(mapping_seed, (int, np.integer)) or mapping_seed < 0:
            raise ValueError(f"mapping_seed must be a non-negative integer, got {mapping_seed!r}")
        self.size, self.mapping_seed, self.mapping_rule = int(size), int(mapping_seed), mapping_rule
        self.right = right_action(self.size, self.mapping_seed, mapping_rule)
        self.observation_space = gym.spaces.Box(0, 255, (1, self.size, self.size), np.uint8)
        self.action_space = gym.spaces.Discrete(2)
        self.row, self.column = 0, 0
        #: finished episodes that took "left" in a diagonal cell (row == column): bsuite's
        #: ``total_bad_episodes`` (an episode cut by a reset before its end is not counted, as in bsuite)
        self.total_bad_episodes = 0
        self._bad = False

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
        self.row, self.column, self._bad = 0, 0, False
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
            self._bad = self._bad or self.row == self.column  # off the only path to the +1 (bsuite's rule)
            self.column = max(self.column - 1, 0)
        self.row += 1
        terminated = self.row == self.size
        info = self._info(success)
        if terminated:
            self.total_bad_episodes += self._bad
            info["bad_episode"] = self._bad
        return self.observation(), reward, terminated, False, info


for _n in DEEP_SEA_SIZES:
    if deep_sea_id(_n) not in gym.registry:
        gym.register(id=deep_sea_id(_n), entry_point=DeepSeaEnv,
                     kwargs={"size": _n, "mapping_seed": DEFAULT_MAPPING_SEED, "mapping_rule": DEFAULT_MAPPING_RULE})
