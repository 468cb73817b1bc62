"""The training run: DQN, optionally with the pseudo-count bonus and the mixed Monte Carlo update.

``pcnn-explore train --env ENV --bonus none|pixelcnn|cts|convcts --mmc BETA ...`` and, from Python::

    from pcnn_explore.train import TrainConfig, train, read_log
    cfg = TrainConfig.preset("study", env="MiniGrid-DoorKey-5x5-v0", bonus="pixelcnn", mmc_beta=0.1,
                             steps=50_000, seed=0, out_dir="runs/doorkey")
    result = train(cfg)
    log = read_log(cfg.out_dir)          # dict of numpy columns, one row per episode

One agent step: pick a_t epsilon-greedily from the observation x_t; with a bonus, train the density
model once on the density frame of the scored state (``scored_frame="state"``: x_t, the state in
which the action is taken, as in Bellemare et al. 2016 and the paper; ``"next_state"``: x_{t+1})
and get r+_t from :class:`pcnn_explore.bonus.PseudoCountBonus`; step the env; store
(x_t, a_t, clip(r_t + r+_t, -1, 1), x_{t+1}) in replay (``intrinsic_only``: clip(r+_t, -1, 1)); every
``train_every`` steps after ``learning_starts`` take one gradient step on a batch; every
``target_update_every`` agent steps copy the online network to the target network. Steps are
agent steps (Atari: one agent step = 4 emulator frames).

Outputs in ``out_dir``:

- ``log.csv``: one row per episode (columns in :data:`LOG_COLUMNS`; ``step`` is the agent step at
  which the episode ended, ``length`` its agent steps; the last row of a run whose step budget ends
  mid-episode has ``complete = 0``). The lengths add up to the steps run, each step exactly once.
- ``tb/``: TensorBoard scalars charts/episodic_return, charts/episodic_length,
  charts/intrinsic_return, bonus/prediction_gain, bonus/pseudo_count, bonus/intrinsic_reward,
  losses/td, charts/epsilon, perf/steps_per_second (step axis: agent steps).
- ``checkpoint.pt``: written atomically (temp file + rename) at the first episode end after every
  ``checkpoint_every`` agent steps, and at the end of the run. It holds the configuration, the
  online and target networks, the DQN optimiser, the density model with its optimiser and the
  bonus counter, the whole replay buffer, the RNG states (python, numpy, torch, CUDA) and the
  counters. Checkpoints are taken between episodes, so the environment needs no saved state:
  episode k starts with ``env.reset(seed=episode_seed(seed, k))``. Loading uses
  ``torch.load(weights_only=True)``.

``train(cfg, resume=True)`` (CLI ``--resume``) continues from the checkpoint: log rows and
TensorBoard events after the checkpoint's step are dropped, and the run goes on exactly as the
uninterrupted run would have on the same device.
"""
from __future__ import annotations

import argparse
import csv
import io
import math
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch

from pcnn_explore.profiles import PROFILES, ExperimentSettings, check_profile

__all__ = ["TrainConfig", "TrainResult", "train", "read_log", "load_policy", "episode_seed", "LOG_COLUMNS",
           "BONUSES", "add_arguments", "run_cli"]

BONUSES = ("none", "pixelcnn", "cts", "convcts")
SCORED_FRAMES = ("state", "next_state")
LOG_COLUMNS = ("step", "episode", "return", "length", "complete", "intrinsic_return", "intrinsic_mean",
               "prediction_gain_mean", "epsilon", "td_loss", "wall_seconds")
CHECKPOINT = "checkpoint.pt"
LOG = "log.csv"
FORMAT = 1

# Settings that may change between a run and its resumption (the rest must match the checkpoint).
_RESUMABLE_CHANGES = ("steps", "checkpoint_every", "device", "out_dir", "log_every", "tensorboard", "num_threads",
                      "bonus_thread")


@dataclass
class TrainConfig(ExperimentSettings):
    """Every setting of a training run. Build with ``TrainConfig.preset(profile, **overrides)``.

    Steps, periods and capacities are in agent steps (Atari: 4 emulator frames per agent step).
    """

    env: str = "MiniGrid-Empty-5x5-v0"
    bonus: str = "none"  # "none" | "pixelcnn" | "cts" | "convcts"
    mmc_beta: float | None = None  # beta of the MMC target; None: 0.1 with a bonus, 0 without (the paper's)
    pg_scale: float = 0.1  # c in r+ = (exp(c n^-1/2 PG+) - 1)^-1/2
    pg_schedule: str = "inverse_sqrt"  # decay of c over density updates n: inverse_sqrt | inverse | constant
    scored_frame: str = "state"  # the frame the density model scores: the state acted in, or the next one
    intrinsic_only: bool = False  # learn from r+ only (the extrinsic return is still logged)
    double_q: bool = False  # the paper uses regular Q-learning
    running_episode: str = "paper"  # MC return of the running episode: "paper" (0) | "finished_only"
    steps: int = 50_000
    seed: int = 0
    out_dir: str = "runs/train"
    profile: str = "study"
    checkpoint_every: int = 0  # agent steps between checkpoints (0: only at the end of the run)
    device: str = "cpu"
    # agent
    network: str = "auto"  # "auto" | "nature" | "small"
    hidden: int | None = None
    optimizer: str = "adam"  # "rmsprop" (Nature DQN) | "adam"
    lr: float = 2.5e-4
    gamma: float = 0.99
    batch_size: int = 32
    replay_capacity: int = 100_000
    learning_starts: int = 1_000
    train_every: int = 4
    target_update_every: int = 1_000
    epsilon_start: float = 1.0
    epsilon_end: float = 0.05
    epsilon_decay_steps: int = 20_000
    # environment (see pcnn_explore.envs.make_env)
    sticky_actions: float = 0.25
    terminal_on_life_loss: bool = False
    tile_size: int = 4
    view: str = "full"
    frame_stack: int | None = None
    n_actions: int | None = None
    # density model
    density_lr: float = 1e-3
    # bookkeeping
    log_every: int = 1_000  # agent steps between TensorBoard bonus/loss/speed scalars
    tensorboard: bool = True
    num_threads: int = 1  # torch CPU threads (0: leave torch's default)
    bonus_thread: bool | None = None  # density update in a worker thread (same results); None: on for CUDA

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(steps=300, replay_capacity=2_000, learning_starts=100, target_update_every=100,
                      epsilon_decay_steps=200, epsilon_end=0.1, hidden=64, lr=1e-3, log_every=50),
        "study": dict(steps=50_000, replay_capacity=100_000, learning_starts=1_000, target_update_every=1_000,
                      epsilon_decay_steps=20_000, epsilon_end=0.05, lr=2.5e-4, log_every=1_000),
        # Nature DQN (Mnih et al. 2015); 150M frames = 37.5M agent steps as in the paper's Table.
        "paper": dict(steps=37_500_000, replay_capacity=1_000_000, learning_starts=50_000,
                      target_update_every=40_000, epsilon_decay_steps=1_000_000, epsilon_end=0.1,
                      optimizer="rmsprop", lr=2.5e-4, log_every=10_000, checkpoint_every=1_000_000),
    }

    def __post_init__(self) -> None:
        if self.mmc_beta is None:
            # The paper: intrinsically motivated agents use MMC (beta 0.1), the baseline DQN does not.
            self.mmc_beta = 0.0 if self.bonus == "none" else 0.1
        self.validate()

    def validate(self) -> None:
        """Raise ValueError/TypeError naming the bad setting and how to fix it (cheap: no env is built)."""
        from pcnn_explore.agents.dqn import OPTIMIZERS
        from pcnn_explore.agents.replay import RUNNING_EPISODE_POLICIES
        from pcnn_explore.bonus import SCHEDULES
        from pcnn_explore.envs import check_env_id

        check_profile(self.profile)
        check_env_id(self.env)

        def choice(name, options):
            if getattr(self, name) not in options:
                raise ValueError(f"unknown {name} {getattr(self, name)!r}: choose one of {', '.join(map(str, options))}")

        def integer(name, low, allow_none=False):
            v = getattr(self, name)
            if v is None and allow_none:
                return
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")

        def number(name, low, high=math.inf):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (low <= v <= high):
                raise ValueError(f"{name} must be a number in [{low}, {high}], got {v!r}")

        choice("bonus", BONUSES)
        choice("pg_schedule", SCHEDULES)
        choice("scored_frame", SCORED_FRAMES)
        choice("running_episode", RUNNING_EPISODE_POLICIES)
        choice("optimizer", OPTIMIZERS)
        choice("network", ("auto", "nature", "small"))
        choice("view", ("full", "partial"))
        for name in ("steps", "batch_size", "train_every", "target_update_every", "log_every", "tile_size"):
            integer(name, 1)
        for name in ("seed", "checkpoint_every", "learning_starts", "epsilon_decay_steps", "num_threads"):
            integer(name, 0)
        integer("replay_capacity", 16)
        integer("hidden", 1, allow_none=True)
        integer("frame_stack", 1, allow_none=True)
        integer("n_actions", 1, allow_none=True)
        for name in ("mmc_beta", "gamma", "epsilon_start", "epsilon_end", "sticky_actions"):
            number(name, 0.0, 1.0)
        number("pg_scale", 0.0)
        number("lr", 1e-12)
        number("density_lr", 1e-12)
        for name in ("intrinsic_only", "double_q", "terminal_on_life_loss", "tensorboard"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.bonus_thread is not None and not isinstance(self.bonus_thread, (bool, np.bool_)):
            raise ValueError(f"bonus_thread must be True, False or None (automatic), got {self.bonus_thread!r}")
        if self.intrinsic_only and self.bonus == "none":
            raise ValueError("intrinsic_only=True needs a bonus: set bonus to pixelcnn, cts or convcts")
        if not isinstance(self.device, str) or not (self.device == "cpu" or self.device.startswith("cuda")
                                                     or self.device == "mps"):
            raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'mps', got {self.device!r}")
        if not isinstance(self.out_dir, (str, os.PathLike)) or not str(self.out_dir):
            raise ValueError("out_dir must be a non-empty path")


@dataclass
class TrainResult:
    """Summary of a finished run. Returns are extrinsic (the environment's own reward, unclipped)."""

    out_dir: str
    steps: int  # agent steps run in total (including steps before a resume)
    episodes: int  # complete episodes
    episode_returns: np.ndarray  # (episodes,) extrinsic return of each complete episode
    episode_end_steps: np.ndarray  # (episodes,) agent step at which each ended
    mean_return_last: float  # mean extrinsic return of the last 10% of complete episodes (at least 1)
    wall_seconds: float  # wall-clock seconds of this call
    steps_per_second: float  # agent steps per wall-clock second in this call
    learning_steps_per_second: float  # the same, from this call's first gradient step on (NaN if none)
    checkpoint: str


def episode_seed(seed: int, episode: int) -> int:
    """The env seed of episode ``episode`` (0-based) of a run with seed ``seed``."""
    return int(np.random.SeedSequence([int(seed), int(episode), 0x5EED]).generate_state(1)[0])


def epsilon_at(cfg: TrainConfig, step: int) -> float:
    """Linear decay from epsilon_start to epsilon_end over the first epsilon_decay_steps agent steps."""
    if cfg.epsilon_decay_steps == 0:
        return cfg.epsilon_end
    frac = min(1.0, step / cfg.epsilon_decay_steps)
    return cfg.epsilon_start + frac * (cfg.epsilon_end - cfg.epsilon_start)


# ---------------------------------------------------------------------------------------------- log
def read_log(out_dir: str | os.PathLike) -> dict[str, np.ndarray]:
    """``out_dir/log.csv`` as a dict of numpy columns (int64 for step/episode/length/complete, else float64)."""
    path = Path(out_dir) / LOG
    if not path.exists():
        raise FileNotFoundError(f"no training log at {path}: run train() with out_dir={str(out_dir)!r} first")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    ints = {"step", "episode", "length", "complete"}
    out = {}
    for name in LOG_COLUMNS:
        values = [r[name] for r in rows]
        if name in ints:
            out[name] = np.array([int(v) for v in values], dtype=np.int64)
        else:
            out[name] = np.array([float(v) if v not in ("", "nan") else np.nan for v in values], dtype=np.float64)
    return out


def _truncate_log(path: Path, last_step: int) -> None:
    """Keep the header and rows with step <= last_step (rewritten atomically)."""
    if not path.exists():
        return
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if int(r["step"]) <= last_step]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=LOG_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    tmp = path.with_suffix(".csv.tmp")
    tmp.write_text(buf.getvalue())
    os.replace(tmp, path)


class _CsvLog:
    def __init__(self, path: Path):
        new = not path.exists()
        self.f = open(path, "a", newline="")
        self.w = csv.DictWriter(self.f, fieldnames=LOG_COLUMNS, lineterminator="\n")
        if new:
            self.w.writeheader()
            self.f.flush()

    def write(self, row: dict) -> None:
        self.w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
        self.f.flush()

    def close(self) -> None:
        self.f.close()


class _NullWriter:
    def add_scalar(self, *a, **k):
        pass

    def close(self):
        pass


# ------------------------------------------------------------------------------------------- pieces
def _build_env(cfg: TrainConfig):
    from pcnn_explore.envs import make_env

    return make_env(cfg.env, cfg.seed, sticky_actions=cfg.sticky_actions,
                    terminal_on_life_loss=cfg.terminal_on_life_loss, frame_stack=cfg.frame_stack,
                    tile_size=cfg.tile_size, view=cfg.view, n_actions=cfg.n_actions,
                    density_frame=cfg.bonus != "none")


def _build_bonus(cfg: TrainConfig):
    if cfg.bonus == "none":
        return None
    from pcnn_explore.bonus import PseudoCountBonus
    from pcnn_explore.density import make_density

    kwargs = dict(lr=cfg.density_lr, device=cfg.device, seed=cfg.seed) if cfg.bonus == "pixelcnn" else {}
    model = make_density(cfg.bonus, **kwargs)
    return PseudoCountBonus(model, scale=cfg.pg_scale, schedule=cfg.pg_schedule)


def _frame_stack_of(cfg: TrainConfig) -> int:
    from pcnn_explore.envs import is_atari

    return cfg.frame_stack if cfg.frame_stack is not None else (4 if is_atari(cfg.env) else 1)


def _rng_states(rng: np.random.Generator) -> dict:
    st = {"agent": _encode_bitgen(rng.bit_generator.state), "python": _encode_py(random.getstate()),
          "numpy": _encode_np_global(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        st["cuda"] = torch.cuda.get_rng_state_all()
    return st


def _encode_bitgen(state: dict) -> dict:
    # 128-bit integers as strings: safe for weights_only loading.
    return {"bit_generator": state["bit_generator"], "state": str(state["state"]["state"]),
            "inc": str(state["state"]["inc"]), "has_uint32": int(state["has_uint32"]),
            "uinteger": int(state["uinteger"])}


def _decode_bitgen(d: dict) -> dict:
    return {"bit_generator": d["bit_generator"], "state": {"state": int(d["state"]), "inc": int(d["inc"])},
            "has_uint32": int(d["has_uint32"]), "uinteger": int(d["uinteger"])}


def _encode_py(state: tuple) -> dict:
    version, internal, gauss = state
    return {"version": version, "internal": torch.tensor(internal, dtype=torch.int64), "gauss": gauss}


def _decode_py(d: dict) -> tuple:
    return (d["version"], tuple(int(x) for x in d["internal"].tolist()), d["gauss"])


def _encode_np_global() -> dict:
    name, keys, pos, has_gauss, cached = np.random.get_state()
    return {"name": name, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
            "has_gauss": int(has_gauss), "cached": float(cached)}


def _decode_np_global(d: dict) -> tuple:
    keys = np.asarray(d["keys"].numpy() if isinstance(d["keys"], torch.Tensor) else d["keys"]).astype(np.uint32)
    return (d["name"], keys, int(d["pos"]), int(d["has_gauss"]), float(d["cached"]))


def _save_checkpoint(path: Path, payload: dict) -> None:
    from pcnn_explore.checkpoint import save_atomic

    save_atomic(payload, path)


def _load_checkpoint(path: Path) -> dict:
    from pcnn_explore.checkpoint import load

    return load(path)


def _check_resumable(saved: dict, cfg: TrainConfig) -> None:
    now = cfg.to_dict()
    diff = sorted(k for k in now if k not in _RESUMABLE_CHANGES and saved.get(k) != now[k])
    if diff:
        detail = ", ".join(f"{k}: checkpoint {saved.get(k)!r} vs now {now[k]!r}" for k in diff)
        raise ValueError(f"cannot resume: settings differ from the checkpoint's ({detail}); "
                         "use the checkpoint's settings or a new out_dir")


# -------------------------------------------------------------------------------------------- train
def train(cfg: TrainConfig, resume: bool = False, progress: bool = True) -> TrainResult:
    """Run (or, with ``resume``, continue) the training run described by ``cfg``; see the module docstring.

    ``progress`` shows a tqdm bar. Raises ValueError before any work when ``out_dir`` already holds
    a run and ``resume`` is False, or when resuming with different settings.
    """
    from pcnn_explore.agents.dqn import DQNAgent
    from pcnn_explore.agents.replay import ReplayBuffer

    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"cfg must be a TrainConfig (TrainConfig.preset(profile, ...)), got {type(cfg).__name__}")
    cfg.validate()
    out = Path(cfg.out_dir)
    ckpt_path, log_path = out / CHECKPOINT, out / LOG
    saved = None
    if resume and ckpt_path.exists():
        saved = _load_checkpoint(ckpt_path)
        if saved.get("format") != FORMAT:
            raise ValueError(f"{ckpt_path} has checkpoint format {saved.get('format')!r}, expected {FORMAT}")
        _check_resumable(saved["config"], cfg)
    elif not resume and (ckpt_path.exists() or log_path.exists()):
        raise ValueError(f"{out} already holds a training run: pass resume=True (--resume) to continue it, "
                         "or choose another out_dir")
    if cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {cfg.device!r} requested but CUDA is not available: use device='cpu'")
    out.mkdir(parents=True, exist_ok=True)
    if cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)

    # --- build everything from the seed, then overwrite with the checkpoint if resuming
    random.seed(cfg.seed)
    np.random.seed(cfg.seed % 2**32)
    torch.manual_seed(cfg.seed)
    env = _build_env(cfg)
    obs_shape = env.observation_space.shape
    n_actions = int(env.action_space.n)
    agent = DQNAgent(obs_shape, n_actions, network=cfg.network, hidden=cfg.hidden, gamma=cfg.gamma,
                     mmc_beta=cfg.mmc_beta, double_q=cfg.double_q, optimizer=cfg.optimizer, lr=cfg.lr,
                     device=cfg.device)
    replay = ReplayBuffer(cfg.replay_capacity, obs_shape, stack=_frame_stack_of(cfg), gamma=cfg.gamma,
                          running_episode=cfg.running_episode)
    bonus = _build_bonus(cfg)
    rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, 0xA6E7]))
    step, episode = 0, 0
    if saved is not None:
        agent.load_state_dict(saved["agent"])
        replay.load_state_dict(saved["replay"])
        if bonus is not None:
            bonus.load_state_dict(saved["bonus"])
        st = saved["rng"]
        rng.bit_generator.state = _decode_bitgen(st["agent"])
        random.setstate(_decode_py(st["python"]))
        np.random.set_state(_decode_np_global(st["numpy"]))
        torch.set_rng_state(st["torch"])
        if "cuda" in st and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(st["cuda"])
        step, episode = int(saved["step"]), int(saved["episode"])
    _truncate_log(log_path, step) if saved is not None else (log_path.unlink() if log_path.exists() else None)

    def checkpoint() -> None:
        _save_checkpoint(ckpt_path, {
            "format": FORMAT, "config": cfg.to_dict(), "step": step, "episode": episode,
            "obs_shape": list(obs_shape), "n_actions": n_actions,
            "agent": agent.state_dict(), "replay": replay.state_dict(),
            "bonus": bonus.state_dict() if bonus is not None else None, "rng": _rng_states(rng),
        })

    log = _CsvLog(log_path)
    if cfg.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        tb = SummaryWriter(str(out / "tb"), purge_step=step + 1 if saved is not None else None)
    else:
        tb = _NullWriter()
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=cfg.steps, initial=step, unit="step", desc=f"{cfg.env} {cfg.bonus}", dynamic_ncols=True)

    threaded = cfg.bonus_thread if cfg.bonus_thread is not None else cfg.device.startswith("cuda")
    scorer = _BonusScorer(bonus, threaded=threaded, device=cfg.device) if bonus is not None else None
    start_step, t0 = step, time.perf_counter()
    learn_clock = None  # (step, time) of this call's first gradient step
    next_checkpoint = (step // cfg.checkpoint_every + 1) * cfg.checkpoint_every if cfg.checkpoint_every else None
    win = dict(n=0, pg=0.0, intr=0.0, log_pc=[], loss=torch.zeros((), device=agent.device), n_loss=0,
               t=time.perf_counter(), step=step)
    try:
        while step < cfg.steps:
            obs, info = env.reset(seed=episode_seed(cfg.seed, episode))
            frame = info.get("density_frame")
            ep = dict(ret=0.0, length=0, intr=0.0, pg=0.0, loss=torch.zeros((), device=agent.device), n_loss=0)
            while True:
                epsilon = epsilon_at(cfg, step)
                action = agent.act(obs, epsilon, rng)
                pending = scorer.submit(frame) if scorer is not None and cfg.scored_frame == "state" else None
                next_obs, reward, terminated, truncated, info = env.step(action)
                next_frame = info.get("density_frame")
                if scorer is not None and cfg.scored_frame == "next_state":
                    pending = scorer.submit(next_frame)
                step += 1
                # The gradient step samples transitions up to t - 1: transition t enters the replay
                # below, once its bonus is known, so the density update (in a worker thread when
                # bonus_thread) runs alongside the env step and this gradient step.
                if step > cfg.learning_starts and step % cfg.train_every == 0 and replay.can_sample():
                    if learn_clock is None:
                        learn_clock = (step - 1, time.perf_counter())
                    loss = agent.learn(replay.sample(cfg.batch_size, rng))
                    ep["loss"] += loss
                    ep["n_loss"] += 1
                    win["loss"] += loss
                    win["n_loss"] += 1
                if step % cfg.target_update_every == 0:
                    agent.sync_target()
                record = pending.result() if pending is not None else None
                r_plus = float(record.bonus) if record is not None else 0.0
                extrinsic = 0.0 if cfg.intrinsic_only else float(reward)
                learn_reward = min(1.0, max(-1.0, extrinsic + r_plus))
                budget_end = step >= cfg.steps
                episode_end = bool(terminated or truncated or budget_end)
                replay.add(obs, action, learn_reward, bool(terminated), next_obs, episode_end)
                ep["ret"] += float(reward)
                ep["length"] += 1
                if record is not None:
                    # logged as learned from: r+ clipped to [0, 1] (the first steps' raw bonus can be
                    # astronomically large, since PG at n = 1 is the whole frame's information)
                    ep["intr"] += min(r_plus, 1.0)
                    ep["pg"] += float(record.prediction_gain)
                    win["pg"] += float(record.prediction_gain)
                    win["intr"] += min(r_plus, 1.0)
                    win["log_pc"].append(float(record.pseudo_count))
                win["n"] += 1
                if step % cfg.log_every == 0:
                    _window_scalars(tb, win, step, epsilon, bonus is not None)
                obs, frame = next_obs, next_frame
                if episode_end:
                    break
            row = dict(step=step, episode=episode, length=ep["length"], complete=int(bool(terminated or truncated)),
                       epsilon=epsilon, wall_seconds=time.perf_counter() - t0)
            row["return"] = ep["ret"]
            row["intrinsic_return"] = ep["intr"]
            row["intrinsic_mean"] = ep["intr"] / ep["length"]
            row["prediction_gain_mean"] = ep["pg"] / ep["length"] if bonus is not None else float("nan")
            row["td_loss"] = float(ep["loss"]) / ep["n_loss"] if ep["n_loss"] else float("nan")
            log.write(row)
            tb.add_scalar("charts/episodic_return", ep["ret"], step)
            tb.add_scalar("charts/episodic_length", ep["length"], step)
            tb.add_scalar("charts/intrinsic_return", ep["intr"], step)
            episode += 1
            if bar is not None:
                bar.update(ep["length"])
                bar.set_postfix(ep=episode, ret=f"{ep['ret']:.2f}", refresh=False)
            if step >= cfg.steps or (next_checkpoint is not None and step >= next_checkpoint):
                checkpoint()
                if next_checkpoint is not None:
                    next_checkpoint = (step // cfg.checkpoint_every + 1) * cfg.checkpoint_every
        if saved is not None and step == start_step and not ckpt_path.exists():
            checkpoint()
    finally:
        if scorer is not None:
            scorer.close()
        log.close()
        tb.close()
        if bar is not None:
            bar.close()
        env.close()

    wall = time.perf_counter() - t0
    learning_sps = float("nan")
    if learn_clock is not None and step > learn_clock[0]:
        learning_sps = (step - learn_clock[0]) / max(time.perf_counter() - learn_clock[1], 1e-9)
    df = read_log(out)
    done = df["complete"] == 1
    returns, ends = df["return"][done], df["step"][done]
    k = max(1, len(returns) // 10)
    return TrainResult(out_dir=str(out), steps=step, episodes=int(done.sum()), episode_returns=returns,
                       episode_end_steps=ends, mean_return_last=float(returns[-k:].mean()) if len(returns) else float("nan"),
                       wall_seconds=wall, steps_per_second=(step - start_step) / wall if wall > 0 else float("nan"),
                       learning_steps_per_second=learning_sps, checkpoint=str(ckpt_path))


class _Done:
    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


class _BonusScorer:
    """Runs ``bonus.step(frame)`` now, or (``threaded``) in one worker thread, in submission order.

    PyTorch releases the GIL inside its operators, so the density update overlaps the env step and
    the DQN gradient step. Results are identical either way: the density model sees the same frames
    in the same order, and nothing else touches it. On CUDA the worker uses its own stream.
    """

    def __init__(self, bonus, threaded: bool, device: str):
        self.bonus = bonus
        self.pool = None
        self.stream = None
        if threaded:
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="density")
            if str(device).startswith("cuda"):
                self.stream = torch.cuda.Stream(device=device)
                # the model's weights (built or loaded on the default stream) must be ready first
                self.stream.wait_stream(torch.cuda.current_stream(device))

    def _step(self, frame):
        if self.stream is not None:
            with torch.cuda.stream(self.stream):
                record = self.bonus.step(frame)
            # Nothing of this update is left in flight: checkpoints read the weights from the
            # main thread's stream.
            self.stream.synchronize()
            return record
        return self.bonus.step(frame)

    def submit(self, frame):
        if self.pool is None:
            return _Done(self.bonus.step(frame))
        return self.pool.submit(self._step, frame)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)


def _window_scalars(tb, win: dict, step: int, epsilon: float, with_bonus: bool) -> None:
    now = time.perf_counter()
    n = max(1, win["n"])
    if with_bonus:
        tb.add_scalar("bonus/prediction_gain", win["pg"] / n, step)
        tb.add_scalar("bonus/intrinsic_reward", win["intr"] / n, step)
        pcs = np.asarray(win["log_pc"], dtype=np.float64)
        finite = pcs[np.isfinite(pcs)]
        if len(finite):
            tb.add_scalar("bonus/pseudo_count", float(np.median(finite)), step)
    if win["n_loss"]:
        tb.add_scalar("losses/td", float(win["loss"]) / win["n_loss"], step)
    tb.add_scalar("charts/epsilon", epsilon, step)
    tb.add_scalar("perf/steps_per_second", (step - win["step"]) / max(now - win["t"], 1e-9), step)
    win.update(n=0, pg=0.0, intr=0.0, log_pc=[], loss=torch.zeros_like(win["loss"]), n_loss=0, t=now, step=step)


# ------------------------------------------------------------------------------------------- policy
class Policy:
    """Greedy (or epsilon-greedy) policy of a trained agent: ``policy(obs) -> action``.

    ``obs`` is an observation of the env built by :meth:`make_env` ((C, H, W) uint8).
    """

    def __init__(self, agent, config: dict, epsilon: float, seed: int):
        self.agent, self.config, self.epsilon = agent, config, float(epsilon)
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs: np.ndarray) -> int:
        return self.agent.act(obs, self.epsilon, self.rng) if self.epsilon > 0 else self.agent.greedy_action(obs)

    @property
    def env_kwargs(self) -> dict:
        c = self.config
        return dict(sticky_actions=c["sticky_actions"], terminal_on_life_loss=c["terminal_on_life_loss"],
                    frame_stack=c["frame_stack"], tile_size=c["tile_size"], view=c["view"], n_actions=c["n_actions"])

    def make_env(self, seed: int = 0, keep_rgb: bool = True):
        """The agent's environment, as trained (``info["rgb"]`` holds the RGB frame when ``keep_rgb``)."""
        from pcnn_explore.envs import make_env

        return make_env(self.config["env"], seed, keep_rgb=keep_rgb, **self.env_kwargs)


def load_policy(checkpoint_path: str | os.PathLike, epsilon: float = 0.0, device: str = "cpu", seed: int = 0):
    """``(env_id, policy)`` from a training checkpoint; ``policy(obs) -> action`` (epsilon-greedy).

    ``policy.make_env(seed)`` builds the env the agent was trained on (same wrappers and settings).
    """
    from pcnn_explore.agents.dqn import DQNAgent

    path = Path(checkpoint_path)
    if path.is_dir():
        path = path / CHECKPOINT
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}: pass a run's out_dir or its checkpoint.pt")
    if not 0.0 <= float(epsilon) <= 1.0:
        raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
    saved = _load_checkpoint(path)
    c = saved["config"]
    agent = DQNAgent(tuple(saved["obs_shape"]), int(saved["n_actions"]), network=c["network"], hidden=c["hidden"],
                     device=device)
    agent.q.load_state_dict(saved["agent"]["q"])
    agent.q.eval()
    return c["env"], Policy(agent, c, epsilon, seed)


# ---------------------------------------------------------------------------------------------- CLI
def _number(convert, low, high, words):
    """An argparse type: ``convert`` the text and require low <= value <= high (None: unbounded)."""

    def parse(text: str):
        try:
            v = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {words}, got {text!r}") from None
        if not math.isfinite(v) or (low is not None and v < low) or (high is not None and v > high):
            raise argparse.ArgumentTypeError(f"expected {words}, got {v}")
        return v

    return parse


_nonneg_int = _number(int, 0, None, "a non-negative integer")
_pos_int = _number(int, 1, None, "a positive integer")
_unit_float = _number(float, 0.0, 1.0, "a number in [0, 1]")
_nonneg_float = _number(float, 0.0, None, "a non-negative number")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``pcnn-explore train``. Unset flags take the profile's preset."""
    from pcnn_explore.bonus import SCHEDULES

    parser.add_argument("--env", required=True, help="ALE/<Game>-v5 or a MiniGrid-* id, e.g. ALE/MontezumaRevenge-v5")
    parser.add_argument("--bonus", choices=BONUSES, default="none", help="density model of the pseudo-count bonus")
    parser.add_argument("--mmc", type=_unit_float, default=None, metavar="BETA",
                        help="beta of the mixed Monte Carlo update; default 0.1 with a bonus, 0 without (as in the paper)")
    parser.add_argument("--pg-scale", type=_nonneg_float, default=None, metavar="C", help="prediction-gain scale c (0.1)")
    parser.add_argument("--pg-schedule", choices=SCHEDULES, default=None, help="decay of c over model updates")
    parser.add_argument("--scored-frame", choices=SCORED_FRAMES, default=None,
                        help="frame the density model scores: the state acted in (default) or the next state")
    parser.add_argument("--intrinsic-only", action="store_true", help="learn from the bonus alone")
    parser.add_argument("--double-q", action="store_true", help="double Q-learning (the paper: regular)")
    parser.add_argument("--running-episode", choices=("paper", "finished_only"), default=None,
                        help="MC return of the running episode: 0 (paper) or sample finished episodes only")
    parser.add_argument("--profile", choices=PROFILES, default="study")
    parser.add_argument("--seed", type=_nonneg_int, default=0)
    parser.add_argument("--steps", type=_pos_int, default=None, help="agent steps (Atari: 4 frames each)")
    parser.add_argument("--checkpoint-every", type=_nonneg_int, default=None, metavar="K",
                        help="agent steps between checkpoints, taken at the next episode end (0: end only)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory (log.csv, tb/, checkpoint.pt)")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out from its checkpoint")
    parser.add_argument("--device", default=None, help="cpu | cuda | cuda:N")
    parser.add_argument("--sticky-actions", type=_unit_float, default=None, help="Atari: repeat probability (0.25)")
    parser.add_argument("--terminal-on-life-loss", action="store_true", help="Atari: end the episode on a life loss")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def run_cli(args: argparse.Namespace) -> int:
    overrides = dict(env=args.env, bonus=args.bonus, mmc_beta=args.mmc, pg_scale=args.pg_scale,
                     pg_schedule=args.pg_schedule, scored_frame=args.scored_frame,
                     intrinsic_only=args.intrinsic_only or None, double_q=args.double_q or None,
                     running_episode=args.running_episode, seed=args.seed, steps=args.steps,
                     checkpoint_every=args.checkpoint_every, out_dir=args.out, device=args.device,
                     sticky_actions=args.sticky_actions, terminal_on_life_loss=args.terminal_on_life_loss or None)
    try:
        cfg = TrainConfig.preset(args.profile, **overrides)
        out = Path(cfg.out_dir)
        if not args.resume and ((out / CHECKPOINT).exists() or (out / LOG).exists()):
            raise ValueError(f"{out} already holds a training run: add --resume to continue it, or choose another --out")
        if cfg.device.startswith("cuda") and not torch.cuda.is_available():
            raise ValueError(f"--device {cfg.device} requested but CUDA is not available: use --device cpu")
    except (ValueError, TypeError) as e:
        print(f"pcnn-explore train: error: {e}", file=sys.stderr)
        return 2
    result = train(cfg, resume=args.resume, progress=not args.no_progress)
    print(f"{result.steps} agent steps, {result.episodes} episodes, mean return (last 10%) "
          f"{result.mean_return_last:.3f}, {result.steps_per_second:.0f} steps/s; logs in {result.out_dir}")
    return 0
