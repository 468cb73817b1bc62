"""Settings of a training run: :class:`TrainConfig`, its presets and its validation.

Every field is a command-line flag of ``pcnn-explore train`` (see :mod:`pcnn_explore.run.cli`,
which builds the parser from this dataclass: the comment after each field is its help text).
Steps, periods and capacities are agent steps (Atari: one agent step = 4 emulator frames).
"""
from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from pcnn_explore.checks import SettingError, check_bool, check_choice, check_int, check_number
from pcnn_explore.density import BONUS_MODELS
from pcnn_explore.profiles import PROFILES, ExperimentSettings

__all__ = ["TrainConfig", "BONUSES", "SCORED_FRAMES", "INT_LOWS", "NUMBER_RANGES", "choices", "RESUMABLE_CHANGES",
           "SETTINGS_SINCE", "backfill", "READINGS", "uses_reading"]

BONUSES = ("none", *BONUS_MODELS)
SCORED_FRAMES = ("state", "next_state")
#: the keys of :data:`pcnn_explore.envs.deep_sea.MAPPING_RULES`, named here so that ``--help`` imports no
#: gymnasium (a test keeps the two equal)
MAPPING_RULE_NAMES = ("bsuite", "kit_v1")

#: integer settings -> lowest allowed value (None allowed where the field's default is None)
INT_LOWS = {"steps": 1, "batch_size": 1, "train_every": 1, "target_update_every": 1, "log_every": 1,
            "tile_size": 1, "seed": 0, "checkpoint_every": 0, "learning_starts": 0, "epsilon_decay_steps": 0,
            "num_threads": 0, "num_envs": 1, "replay_capacity": 16, "hidden": 1, "frame_stack": 1, "n_actions": 1,
            "mapping_seed": 0}
#: real-valued settings -> (low, high)
NUMBER_RANGES = {"mmc_beta": (0.0, 1.0), "gamma": (0.0, 1.0), "epsilon_start": (0.0, 1.0),
                 "epsilon_end": (0.0, 1.0), "sticky_actions": (0.0, 1.0), "pg_scale": (0.0, math.inf),
                 "bonus_scale": (0.0, math.inf),
                 "bonus_fraction": (0.0, 1.0), "novelty_epsilon": (0.0, math.inf),
                 "lr": (1e-12, math.inf), "density_lr": (1e-12, math.inf)}
#: settings that may change between a run and its resumption (the rest must match the checkpoint)
RESUMABLE_CHANGES = ("steps", "checkpoint_every", "device", "out_dir", "log_every", "tensorboard", "num_threads",
                     "bonus_thread", "stop_when_solved", "learn_step")


def _on_deep_sea(saved: dict) -> bool:
    env = saved.get("env")
    return isinstance(env, str) and env.startswith("DeepSea-")


#: settings added after a checkpoint format -> the value that reproduces what a run saved before the
#: setting existed did (a callable: of the saved settings). A checkpoint or settings file without one
#: of them is resumed with this value (:func:`backfill`), so an older run continues on its own task
#: and with its own bonus; settings whose old behaviour depends on the env say so.
SETTINGS_SINCE: dict[str, Any] = {
    # the paper's bonus form of each density model came with 0.2.0; before, every model ran with
    # c = 0.1 decayed as n^-1/2 and r+ = PC^-1/2
    "pg_scale": 0.1,
    "pg_schedule": "inverse_sqrt",
    "bonus_scale": 1.0,
    # before novelty-scaled exploration existed: the paper's epsilon-greedy
    "novelty_epsilon": 0.0,
    # DeepSea before the mapping seed was a setting ran on mapping seed 0; before 0.2.0 its mapping
    # was the kit's default_rng draw (kit_v1), not bsuite's; other envs have neither (auto)
    "mapping_seed": lambda saved: 0 if _on_deep_sea(saved) else None,
    "mapping_rule": lambda saved: "kit_v1" if _on_deep_sea(saved) else None,
    # before the MLP's step was written out in numpy (0.2.0), every run learned with torch's autograd
    "learn_step": "torch",
    # before the optimizer readings were named (0.4.0), the PixelCNN trained with torch's RMSprop form on
    # the summed cross-entropy and DQN's RMSProp was torch's centred RMSprop on the mean loss
    "density_optimizer": "torch",
    "rmsprop": "torch",
}


#: the optimizer readings among the settings -> what each is a reading of (a checkpoint records both)
READINGS = {"density_optimizer": "the PixelCNN's RMSProp", "rmsprop": "DQN's RMSProp"}


def uses_reading(name: str, settings: dict) -> bool:
    """Whether a run with ``settings`` (TrainConfig fields, as saved) trains under the reading ``name`` of
    :data:`READINGS`: ``density_optimizer`` with a PixelCNN bonus, ``rmsprop`` with DQN on RMSProp."""
    if name == "density_optimizer":
        from pcnn_explore.density import REGISTRY

        spec = REGISTRY.get(settings.get("bonus")) if isinstance(settings.get("bonus"), str) else None
        return spec is not None and "rmsprop" in spec.options
    return settings.get("agent", "dqn") == "dqn" and settings.get("optimizer") == "rmsprop"


def backfill(saved: dict) -> tuple[dict, dict]:
    """``(settings, filled)``: the saved settings with every :data:`SETTINGS_SINCE` setting they lack
    set to the value that reproduces their version's behaviour, and ``filled`` (name -> value) the
    settings that were missing. ``saved`` is not changed."""
    filled = {name: (value(saved) if callable(value) else value)
              for name, value in SETTINGS_SINCE.items() if name not in saved}
    return {**saved, **filled}, filled


def numpy_step_missing() -> str | None:
    """None where the packages of DQN's numpy learn step (:mod:`pcnn_explore.agents.mlp_step`) are
    installed, else their names ("numba", "scipy": numba compiles ``np.dot`` with scipy's BLAS), space
    separated, for ``pip install``. Found with ``importlib.util.find_spec``: nothing is imported."""
    from importlib.util import find_spec

    return " ".join(name for name in ("numba", "scipy") if find_spec(name) is None) or None


_FALLBACK_SAID = []  # the auto learn step's fallback to torch is said once per process


def choices() -> dict[str, tuple[str, ...]]:
    """Settings with a fixed set of values -> the values."""
    from pcnn_explore.names import (AGENTS, DENSITY_OPTIMIZERS, DQN_RMSPROPS, LEARN_STEPS, NETWORKS, OPTIMIZERS,
                                    RUNNING_EPISODE_POLICIES, SCHEDULES)

    return {"agent": AGENTS, "bonus": BONUSES, "pg_schedule": tuple(SCHEDULES), "scored_frame": SCORED_FRAMES,
            "mapping_rule": MAPPING_RULE_NAMES,
            "running_episode": tuple(RUNNING_EPISODE_POLICIES), "optimizer": tuple(OPTIMIZERS),
            "rmsprop": DQN_RMSPROPS, "density_optimizer": DENSITY_OPTIMIZERS,
            "learn_step": LEARN_STEPS,
            "network": NETWORKS, "view": ("full", "partial"), "profile": PROFILES}


@dataclass
class TrainConfig(ExperimentSettings):
    """Every setting of a training run. Build with ``TrainConfig.preset(profile, **overrides)``.

    Steps, periods and capacities are in agent steps (Atari: 4 emulator frames per agent step).
    """

    env: str = "MiniGrid-Empty-5x5-v0"  # ALE/<Game>-v5, a MiniGrid-* id or DeepSea-N-v0, e.g. ALE/MontezumaRevenge-v5
    agent: str = "dqn"  # dqn (the paper's DQN, with MMC where mmc_beta > 0) or reactor (Retrace actor-critic, Sec. 4.2)
    bonus: str = "none"  # density model of the pseudo-count bonus, or none
    mmc_beta: float | None = None  # beta of the mixed Monte Carlo target; auto: 0.1 for a DQN with a bonus (the paper's, Sec. 4.1, on every env), else 0; the kit's DeepSea variant: 0.5, given explicitly
    pg_scale: float | None = None  # c, the scale of the prediction gain in the pseudo-count PC = 1 / (exp(c_n PG+) - 1), c_n = c decay(n); auto: the paper's form of the density model (pixelcnn 0.1; cts, convcts 1)
    pg_schedule: str | None = None  # decay of c over density-model updates n; auto: the paper's form of the density model (pixelcnn inverse_sqrt, c n^-1/2; cts, convcts constant: CTS decays its PG on its own)
    bonus_scale: float | None = None  # beta in r+ = beta PC^-1/2, the bonus added to the reward (reward units; 0: none, the density model still gives pseudo-counts); auto: the paper's form of the density model (pixelcnn 1; cts, convcts 0.05, Bellemare et al. 2016's)
    bonus_fraction: float | None = None  # share of agent steps, drawn at random (seeded), on which the density model is updated and r+ added (auto: 1 for dqn, 0.25 for reactor, as in the paper)
    scored_frame: str = "state"  # the frame the density model scores each step: the state acted in (Bellemare et al. 2016's, the default on every env; the paper says only that the density model receives a single frame), or the next state (the kit's DeepSea variant)
    intrinsic_only: bool = False  # learn from r+ alone (the extrinsic return is still logged)
    double_q: bool = False  # double Q-learning (the paper: regular Q-learning)
    running_episode: str = "paper"  # MC return of the running episode's transitions: 0 (paper) or sample finished episodes only
    steps: int = 50_000  # agent steps to run in total (Atari: 4 frames each)
    seed: int = 0  # seed of the env episodes, networks, density model and exploration
    out_dir: str = "runs/train"  # output folder: log.csv, settings.json, tb/, checkpoint.pt, policy.pt
    profile: str = "study"  # preset the unset settings come from (default study)
    checkpoint_every: int | None = None  # agent steps between checkpoints, each taken at the first vector step past a multiple of it, mid-episode too (0: at the end only; auto: a tenth of the run, within [10K, 1M])
    device: str = "cpu"  # cpu | cuda | cuda:N | mps
    num_envs: int = 1  # envs stepped together (N > 1: Atari in one worker process each, DeepSea and MiniGrid in this process); steps must be a multiple of N
    # agent
    network: str = "auto"  # torso of the Q-network (DQN) or of the actor-critic (Reactor): nature (the Nature DQN CNN for 84x84 Atari frames), small (a small CNN for small images), mlp (two dense layers of 50, as bsuite's DQN), auto (DeepSea: mlp; 84x84: nature; else small)
    hidden: int | None = None  # units of the dense layers (auto: the network's default: nature 512, small 128, mlp 50)
    optimizer: str = "adam"  # DQN optimiser: rmsprop (Nature DQN) or adam
    rmsprop: str = "dqn3"  # reading of DQN's RMSProp (optimizer rmsprop): dqn3 (the paper's: DQN 3.0's update, on the gradient of the batch's summed Huber loss, epsilon 0.01 inside the square root) or torch (torch's centred RMSprop on the mean loss, epsilon outside the root; the kit's before 0.4.0)
    learn_step: str | None = None  # how DQN's gradient step is computed: torch (autograd; every network) or numpy (the MLP's step with Adam on the CPU written out by hand, several times faster, equal to torch's to float32 rounding); auto: numpy where it applies (agent dqn, network mlp, as on DeepSea, optimizer adam, device cpu), else torch
    lr: float = 2.5e-4  # DQN learning rate
    gamma: float = 0.99  # discount factor
    batch_size: int = 32  # transitions per gradient step
    replay_capacity: int = 100_000  # transitions held in replay
    learning_starts: int = 1_000  # agent steps before the first gradient step
    train_every: int = 4  # agent steps per gradient step
    target_update_every: int = 1_000  # agent steps between target-network copies
    epsilon_start: float = 1.0  # exploration rate at step 0
    epsilon_end: float = 0.05  # exploration rate after the decay
    epsilon_decay_steps: int = 20_000  # agent steps of the linear epsilon decay
    novelty_epsilon: float = 0.0  # kappa of the kit's novelty-scaled exploration: act at random with probability max(epsilon, min(1, kappa (N + 1)^-1/2)), N the pseudo-count of the state acted in when it was reached (needs a bonus model, agent dqn and scored_frame next_state; bonus_scale 0 allowed); 0: the paper's epsilon-greedy, the default on every env (the kit's DeepSea variant: 1)
    # environment (see pcnn_explore.envs.make_env)
    sticky_actions: float = 0.25  # Atari: probability of repeating the previous action (paper preset: 0)
    terminal_on_life_loss: bool = False  # Atari: end the episode when a life is lost
    tile_size: int = 4  # MiniGrid: pixels per grid cell
    stop_when_solved: bool = False  # DeepSea: end the run at the first of bsuite's logged episodes (1, 2, ..., 10, 12, 14, 17, 20, 25, ...) where bsuite's rule holds (bad episodes so far / episodes < 0.9), so that bsuite's log of the run scores as a run to the cap would; a resume or a larger steps then runs nothing more (turn it off to train on); other envs: leave off
    mapping_seed: int | None = None  # DeepSea: seed of the action mapping (auto: 42, bsuite's); other envs: leave at auto
    mapping_rule: str | None = None  # DeepSea: the action-mapping draw, bsuite (bsuite's deep_sea) or kit_v1 (the kit's draw before 0.2.0, only to resume older runs); auto: bsuite; other envs: leave at auto
    view: str = "full"  # MiniGrid: the whole grid, or the agent's partial view
    frame_stack: int | None = None  # frames per observation (auto: 4 on Atari, 1 on MiniGrid)
    n_actions: int | None = None  # MiniGrid: keep only the first n actions (auto: all)
    # density model
    density_lr: float = 1e-3  # learning rate of the PixelCNN density model
    density_optimizer: str = "tf1"  # reading of the PixelCNN's RMSProp: tf1 (the paper's: TensorFlow 1's RMSPropOptimizer, mean square from 1, epsilon inside the root, the rate inside the momentum, on the per-pixel mean cross-entropy) or torch (torch's RMSprop form on the frame's summed cross-entropy; the kit's before 0.4.0, a sensitivity reading)
    # bookkeeping
    log_every: int = 1_000  # agent steps between TensorBoard bonus, loss and speed scalars
    tensorboard: bool = True  # write TensorBoard events to out_dir/tb
    num_threads: int = 1  # torch CPU threads (1 is fastest for batch-1 steps on small CPUs; 0: torch's default)
    bonus_thread: bool | None = None  # density update in a worker thread (same results); auto: on for CUDA

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(steps=300, replay_capacity=2_000, learning_starts=100, target_update_every=100,
                      epsilon_decay_steps=200, epsilon_end=0.1, hidden=64, lr=1e-3, log_every=50),
        "study": dict(steps=50_000, replay_capacity=100_000, learning_starts=1_000, target_update_every=1_000,
                      epsilon_decay_steps=20_000, epsilon_end=0.05, lr=2.5e-4, log_every=1_000),
        # Nature DQN (Mnih et al. 2015): deterministic ALE (no sticky actions) with up to 30 no-op
        # starts; 150M frames = 37.5M agent steps as in the paper's table.
        "paper": dict(steps=37_500_000, replay_capacity=1_000_000, learning_starts=50_000,
                      target_update_every=40_000, epsilon_decay_steps=1_000_000, epsilon_end=0.1,
                      optimizer="rmsprop", lr=2.5e-4, log_every=10_000, checkpoint_every=1_000_000,
                      sticky_actions=0.0),
    }

    @classmethod
    def preset(cls, profile: str, **overrides: Any) -> "TrainConfig":
        """The profile's preset, then the env's own defaults (``pcnn_explore.envs.env_defaults``:
        DeepSea's scale adaptations of the DQN schedule), then ``overrides`` (None: not given).

        Every auto setting then resolves as on any env (``__post_init__``): the paper's method, with
        the paper's bonus form of the density model (:data:`pcnn_explore.bonus.PAPER_BONUS_FORM`)."""
        from pcnn_explore.envs import env_defaults

        env = overrides.get("env") or cls.env
        try:
            defaults = env_defaults(env, profile)
        except ValueError:
            defaults = {}  # an unknown env id: validation names it below
        given = {k: v for k, v in overrides.items() if v is not None}
        return super().preset(profile, **{**defaults, **given})

    def __post_init__(self) -> None:
        if self.mmc_beta is None:
            # The paper: intrinsically motivated agents use MMC (beta 0.1), the baseline DQN does not;
            # Reactor evaluates its policy with Retrace instead.
            self.mmc_beta = 0.0 if self.bonus == "none" or self.agent == "reactor" else 0.1
        if self.bonus_fraction is None:
            self.bonus_fraction = 0.25 if self.agent == "reactor" else 1.0
        if None in (self.pg_scale, self.pg_schedule, self.bonus_scale):
            # the paper's form of the density model: PixelCNN c = 0.1 n^-1/2, beta 1 (Sec. 3.3, 4);
            # CTS c = 1 constant, beta 0.05 (see PAPER_BONUS_FORM for the sources and assumptions)
            from pcnn_explore.bonus import PAPER_BONUS_FORM

            form = PAPER_BONUS_FORM.get(self.bonus) if isinstance(self.bonus, str) else None
            if form is not None:
                self.pg_scale = form["scale"] if self.pg_scale is None else self.pg_scale
                self.pg_schedule = form["schedule"] if self.pg_schedule is None else self.pg_schedule
                self.bonus_scale = form["beta"] if self.bonus_scale is None else self.bonus_scale
        if isinstance(self.env, str) and self.env.startswith("DeepSea-"):
            from pcnn_explore.envs.deep_sea import DEFAULT_MAPPING_RULE, DEFAULT_MAPPING_SEED, deep_sea_size

            if deep_sea_size(self.env) is not None:
                self.mapping_seed = DEFAULT_MAPPING_SEED if self.mapping_seed is None else self.mapping_seed
                self.mapping_rule = DEFAULT_MAPPING_RULE if self.mapping_rule is None else self.mapping_rule
        if self.learn_step is None:
            self.learn_step = self._auto_learn_step()
        self.validate()

    def _auto_learn_step(self) -> str:
        """learn_step auto: numpy where DQN's numpy step applies and its packages are installed (else torch,
        said once per process where only the packages are missing)."""
        if self._numpy_step_misfit() is not None:
            return "torch"
        missing = numpy_step_missing()
        if missing is None:
            return "numpy"
        if not _FALLBACK_SAID:
            _FALLBACK_SAID.append(missing)
            print(f"pcnn-explore: warning: {missing.replace(' ', ' and ')} "
                  f"{'are' if ' ' in missing else 'is'} not installed, so DQN learns with the torch step "
                  f"(learn_step auto); pip install {missing} gives the numpy step, several times faster on "
                  "DeepSea's MLP", file=sys.stderr, flush=True)
        return "torch"

    def _validate_learn_step(self) -> None:
        """SettingError where learn_step numpy cannot run: the agent does not fit it, or its packages are missing."""
        if self.learn_step != "numpy":
            return
        misfit = self._numpy_step_misfit()
        if misfit is not None:
            raise SettingError(f"{{learn_step}} numpy is the MLP's step with Adam on the CPU for DQN: {misfit}; "
                               "set {learn_step} torch (or auto)")
        missing = numpy_step_missing()
        if missing is not None:
            raise SettingError(f"{{learn_step}} numpy needs {missing.replace(' ', ' and ')}, not installed here: "
                               f"pip install {missing}, or set {{learn_step}} torch (or auto)")

    def _numpy_step_misfit(self) -> str | None:
        """None where DQN's numpy learn step applies (:mod:`pcnn_explore.agents.mlp_step`), else why not."""
        from pcnn_explore.envs.ids import auto_network

        network = auto_network(self.env, self.network) if isinstance(self.env, str) else self.network
        for name, value, need in (("agent", self.agent, "dqn"), ("network", network, "mlp"),
                                  ("optimizer", self.optimizer, "adam"), ("device", self.device, "cpu")):
            if value != need:
                return f"{{{name}}} is {value}, and the numpy step needs {need}"
        return None

    @property
    def checkpoint_interval(self) -> int:
        """Agent steps between checkpoints (0: at the end only); resolves ``checkpoint_every=None``."""
        if self.checkpoint_every is not None:
            return self.checkpoint_every
        return min(1_000_000, max(10_000, self.steps // 10))

    def validate(self) -> None:
        """Raise :class:`SettingError` naming the bad setting and how to fix it (cheap: no env is built,
        except a bare MiniGrid instance to count its actions where ``n_actions`` is set)."""
        from pcnn_explore.envs import check_env_id

        for name, options in choices().items():
            if not (name == "mapping_rule" and self.mapping_rule is None):  # auto off DeepSea
                check_choice(name, getattr(self, name), options)
        try:
            check_env_id(self.env)
        except ValueError as e:
            raise SettingError(str(e)) from None
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in INT_LOWS:
                check_int(f.name, value, INT_LOWS[f.name], allow_none=f.default is None)
            elif f.name in NUMBER_RANGES:
                check_number(f.name, value, *NUMBER_RANGES[f.name])
            elif f.type in ("bool", "bool | None"):
                check_bool(f.name, value, allow_none=f.default is None)
        if self.mapping_seed is not None and not self.env.startswith("DeepSea-"):
            raise SettingError(f"{{mapping_seed}} ({self.mapping_seed}) draws DeepSea's action mapping and "
                               f"{self.env} has none: leave {{mapping_seed}} unset (auto) on this env")
        if self.mapping_rule is not None and not self.env.startswith("DeepSea-"):
            raise SettingError(f"{{mapping_rule}} ({self.mapping_rule}) draws DeepSea's action mapping and "
                               f"{self.env} has none: leave {{mapping_rule}} unset (auto) on this env")
        if self.stop_when_solved and not self.env.startswith("DeepSea-"):
            raise SettingError(f"{{stop_when_solved}} stops at bsuite's deep-sea rule, which {self.env} has not: "
                               "turn {stop_when_solved} off on this env")
        if self.steps % self.num_envs:
            raise SettingError(f"{{steps}} ({self.steps}) must be a multiple of {{num_envs}} ({self.num_envs}): "
                               "each vector step advances every env once")
        if self.agent == "reactor" and self.mmc_beta:
            raise SettingError("{mmc_beta} is DQN's mixed Monte Carlo target; Reactor evaluates its policy with "
                               "Retrace: leave {mmc_beta} at auto (0) with {agent} reactor")
        if self.intrinsic_only and self.bonus == "none":
            raise SettingError("{intrinsic_only} needs {bonus}",
                               python={"intrinsic_only": "intrinsic_only=True", "bonus": "a bonus: set bonus to "
                                       + " or ".join(BONUS_MODELS)},
                               cli={"bonus": "--bonus " + "|".join(BONUS_MODELS)})
        if self.intrinsic_only and not self.bonus_scale:
            raise SettingError("{intrinsic_only} learns from r+ = beta PC^-1/2 alone, and {bonus_scale} 0 makes it 0: "
                               "set {bonus_scale} above 0 (auto: the paper's form of the density model)")
        if self.novelty_epsilon and (self.bonus == "none" or self.agent != "dqn" or self.scored_frame != "next_state"):
            raise SettingError(f"{{novelty_epsilon}} {self.novelty_epsilon} scales DQN's exploration by the pseudo-count "
                               "of the state reached, which needs a bonus model ({bonus_scale} 0 allowed), {agent} dqn and "
                               "{scored_frame} next_state "
                               f"(here: bonus {self.bonus}, agent {self.agent}, scored frame {self.scored_frame}): "
                               "set {novelty_epsilon} 0 or change those")
        self._validate_learn_step()
        self._validate_env_fit()
        if not isinstance(self.device, str) or not (self.device == "cpu" or self.device.startswith("cuda")
                                                     or self.device == "mps"):
            raise SettingError(f"{{device}} must be 'cpu', 'cuda', 'cuda:N' or 'mps', got {self.device!r}")
        if not isinstance(self.out_dir, (str, os.PathLike)) or not str(self.out_dir):
            raise SettingError("{out_dir} must be a non-empty path")

    def _validate_env_fit(self) -> None:
        """Settings that the env refuses at build time: refused here, before anything is built or written."""
        from pcnn_explore.envs import is_atari, is_minigrid, minigrid_action_count

        if self.n_actions is not None:
            if not is_minigrid(self.env):
                raise SettingError(f"{{n_actions}} keeps the first actions of a MiniGrid env; {self.env} has its "
                                   "own action set: leave {n_actions} at auto")
            count = minigrid_action_count(self.env)
            if self.n_actions > count:
                raise SettingError(f"{{n_actions}} {self.n_actions} is more than the {count} actions of {self.env}: "
                                   f"choose 1 ... {count}, or auto for all")
        if not is_minigrid(self.env) and self.view != "full":
            raise SettingError(f"{{view}} {self.view} is MiniGrid's: {self.env} has one view; leave {{view}} at full")
        # each env's replay shard holds ceil(replay_capacity / num_envs) slots (agents.sharding)
        stack = self.frame_stack if self.frame_stack is not None else (4 if is_atari(self.env) else 1)
        per_env = -(-self.replay_capacity // self.num_envs)
        if self.agent == "reactor":
            from pcnn_explore.agents.sequence_replay import BURN_IN, SEQ_LEN

            need, what = SEQ_LEN + BURN_IN + stack, f"more than seq_len + burn_in + stack = {SEQ_LEN + BURN_IN + stack}"
        else:
            need, what = 2 * stack + 1, f"at least 2 * stack + 2 = {2 * stack + 2}"
        if per_env <= need:
            raise SettingError(f"{{replay_capacity}} {self.replay_capacity} over {{num_envs}} {self.num_envs} gives "
                               f"each env's replay {per_env} slots; {self.agent} with stack {stack} needs {what}: "
                               f"raise {{replay_capacity}} to at least {need * self.num_envs + 1}")
