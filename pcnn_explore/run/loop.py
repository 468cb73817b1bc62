"""The training loop: DQN, optionally with the pseudo-count bonus and the mixed Monte Carlo update.

One agent step (Atari: 4 emulator frames): pick a_t epsilon-greedily from the observation x_t;
with a bonus, train the density model once on the density frame of the scored state
(``scored_frame="state"``: x_t, the state in which the action is taken, as in Bellemare et al.
2016 and the paper; ``"next_state"``: x_{t+1}) and get r+_t from
:class:`pcnn_explore.bonus.PseudoCountBonus`; step the env; store (x_t, a_t, clip(r_t + r+_t, -1, 1),
x_{t+1}) in replay (``intrinsic_only``: clip(r+_t, -1, 1)); every ``train_every`` agent steps after
``learning_starts`` take one gradient step on a batch; every ``target_update_every`` agent steps
copy the online network to the target network. Files written: see :mod:`pcnn_explore.run.state`.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from pcnn_explore.run.config import TrainConfig
from pcnn_explore.run.metrics import EpisodeStats, WindowStats, crossed, tensorboard_writer
from pcnn_explore.run.scorer import BonusScorer
from pcnn_explore.run.state import (CHECKPOINT, CsvLog, Resume, episode_seed, open_run, read_log, restore_rng_states,
                                    rng_states, save_checkpoint, truncate_log, write_settings)

__all__ = ["TrainResult", "train", "run_loop", "epsilon_at", "describe"]


@dataclass
class TrainResult:
    """Summary of a run. Returns are extrinsic (the environment's own reward, unclipped)."""

    out_dir: str
    steps: int  # agent steps run in total (including steps before a resume)
    episodes: int  # complete episodes
    episode_returns: np.ndarray  # (episodes,) extrinsic return of each complete episode
    episode_end_steps: np.ndarray  # (episodes,) agent step at which each ended
    mean_return_last: float  # mean extrinsic return of the last 10% of complete episodes (NaN: none finished)
    wall_seconds: float  # wall-clock seconds of this call
    steps_per_second: float  # agent steps per wall-clock second in this call
    learning_steps_per_second: float  # the same, from this call's first gradient step on (NaN if none)
    checkpoint: str


def epsilon_at(cfg: TrainConfig, step: int) -> float:
    """Linear decay from epsilon_start to epsilon_end over the first epsilon_decay_steps agent steps."""
    if cfg.epsilon_decay_steps == 0:
        return cfg.epsilon_end
    frac = min(1.0, step / cfg.epsilon_decay_steps)
    return cfg.epsilon_start + frac * (cfg.epsilon_end - cfg.epsilon_start)


def describe(cfg: TrainConfig) -> str:
    """The resolved settings, one ``name=value`` per field, wrapped for a terminal."""
    import textwrap

    text = " ".join(f"{k}={v}" for k, v in cfg.to_dict().items())
    return "settings: " + textwrap.fill(text, width=110, subsequent_indent="  ", break_on_hyphens=False).lstrip()


def build(cfg: TrainConfig):
    """(env, agent, replay, bonus or None), all seeded from ``cfg.seed``."""
    from pcnn_explore.agents.dqn import DQNAgent
    from pcnn_explore.agents.replay import ReplayBuffer
    from pcnn_explore.bonus import PseudoCountBonus
    from pcnn_explore.density import make_density
    from pcnn_explore.envs import is_atari, make_env

    random.seed(cfg.seed)
    np.random.seed(cfg.seed % 2**32)
    torch.manual_seed(cfg.seed)
    env = make_env(cfg.env, cfg.seed, sticky_actions=cfg.sticky_actions, terminal_on_life_loss=cfg.terminal_on_life_loss,
                   frame_stack=cfg.frame_stack, tile_size=cfg.tile_size, view=cfg.view, n_actions=cfg.n_actions,
                   density_frame=cfg.bonus != "none")
    obs_shape, n_actions = env.observation_space.shape, int(env.action_space.n)
    agent = DQNAgent(obs_shape, n_actions, network=cfg.network, hidden=cfg.hidden, gamma=cfg.gamma,
                     mmc_beta=cfg.mmc_beta, double_q=cfg.double_q, optimizer=cfg.optimizer, lr=cfg.lr,
                     device=cfg.device)
    stack = cfg.frame_stack if cfg.frame_stack is not None else (4 if is_atari(cfg.env) else 1)
    replay = ReplayBuffer(cfg.replay_capacity, obs_shape, stack=stack, gamma=cfg.gamma,
                          running_episode=cfg.running_episode)
    bonus = None
    if cfg.bonus != "none":
        model = make_density(cfg.bonus, lr=cfg.density_lr, device=cfg.device, seed=cfg.seed)
        bonus = PseudoCountBonus(model, scale=cfg.pg_scale, schedule=cfg.pg_schedule)
    return env, agent, replay, bonus


def train(cfg: TrainConfig, resume: bool = False, progress: bool = True) -> TrainResult:
    """Run (or, with ``resume``, continue) the training run described by ``cfg``.

    Raises ValueError before any work (and touching nothing) when ``out_dir`` already holds a run
    and ``resume`` is False, when there is nothing readable to resume, or when resuming with other
    settings. A resumed run that already did ``cfg.steps`` returns its result and changes nothing.
    ``progress`` prints the settings and shows a progress bar.
    """
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"cfg must be a TrainConfig (TrainConfig.preset(profile, ...)), got {type(cfg).__name__}")
    cfg.validate()
    start = open_run(cfg, resume)
    if cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {cfg.device!r} requested but CUDA is not available: use device='cpu'")
    return run_loop(cfg, start, progress)


def run_loop(cfg: TrainConfig, start: Resume, progress: bool = True) -> TrainResult:
    """The loop itself, from the start point :func:`open_run` found."""
    out = Path(cfg.out_dir)
    if start.finished:
        return _result(cfg, start.step, 0.0, float("nan"))
    out.mkdir(parents=True, exist_ok=True)
    if cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    env, agent, replay, bonus = build(cfg)
    rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, 0xA6E7]))
    step, episode, saved = 0, 0, start.saved
    if saved is not None:
        agent.load_state_dict(saved["agent"])
        replay.load_state_dict(saved["replay"])
        if bonus is not None:
            bonus.load_state_dict(saved["bonus"])
        restore_rng_states(rng, saved["rng"])
        step, episode = int(saved["step"]), int(saved["episode"])
    truncate_log(out / "log.csv", step)  # rows after the checkpoint are dropped; a fresh run starts empty
    write_settings(cfg)
    obs_shape, n_actions = env.observation_space.shape, int(env.action_space.n)

    def checkpoint() -> None:
        config = cfg.to_dict()
        save_checkpoint(out, {"config": config, "step": step, "episode": episode, "obs_shape": list(obs_shape),
                              "n_actions": n_actions, "agent": agent.state_dict(), "replay": replay.state_dict(),
                              "bonus": bonus.state_dict() if bonus is not None else None, "rng": rng_states(rng)},
                        {"config": config, "step": step, "obs_shape": list(obs_shape), "n_actions": n_actions,
                         "q": agent.q.state_dict()})

    log = CsvLog(out / "log.csv")
    tb = tensorboard_writer(out, cfg.tensorboard, step if saved is not None else None)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        print(describe(cfg), flush=True)
        bar = tqdm(total=cfg.steps, initial=step, unit="step", desc=f"{cfg.env} {cfg.bonus}", dynamic_ncols=True)
    threaded = cfg.bonus_thread if cfg.bonus_thread is not None else cfg.device.startswith("cuda")
    scorer = BonusScorer(bonus, threaded=threaded, device=cfg.device) if bonus is not None else None
    start_step, t0, learn_clock = step, time.perf_counter(), None  # learn_clock: (step, time) of the first gradient step
    last_checkpoint = step
    win = WindowStats(agent.device, step)
    try:
        while step < cfg.steps:
            obs, info = env.reset(seed=episode_seed(cfg.seed, episode))
            frame = info.get("density_frame")
            ep = EpisodeStats(agent.device)
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
                if step > cfg.learning_starts and crossed(step - 1, step, cfg.train_every) and replay.can_sample():
                    learn_clock = learn_clock or (step - 1, time.perf_counter())
                    loss = agent.learn(replay.sample(cfg.batch_size, rng))
                    ep.add_loss(loss)
                    win.add_loss(loss)
                if crossed(step - 1, step, cfg.target_update_every):
                    agent.sync_target()
                record = pending.result() if pending is not None else None
                r_plus = float(record.bonus) if record is not None else 0.0
                extrinsic = 0.0 if cfg.intrinsic_only else float(reward)
                episode_end = bool(terminated or truncated or step >= cfg.steps)
                replay.add(obs, action, min(1.0, max(-1.0, extrinsic + r_plus)), bool(terminated), next_obs,
                           episode_end)
                ep.add_step(reward, record)
                win.add_step(record)
                if crossed(step - 1, step, cfg.log_every):
                    win.write(tb, step, epsilon, bonus is not None)
                obs, frame = next_obs, next_frame
                if episode_end:
                    break
            log.write(ep.row(step, episode, bool(terminated or truncated), epsilon, time.perf_counter() - t0,
                             bonus is not None))
            for name, value in (("episodic_return", ep.ret), ("episodic_length", ep.length),
                                ("intrinsic_return", ep.intr)):
                tb.add_scalar(f"charts/{name}", value, step)
            episode += 1
            if bar is not None:
                bar.update(ep.length)
                bar.set_postfix(ep=episode, ret=f"{ep.ret:.2f}", refresh=False)
            if step >= cfg.steps or crossed(last_checkpoint, step, cfg.checkpoint_interval):
                checkpoint()
                last_checkpoint = step
    finally:
        for closable in (scorer, log, tb, bar, env):
            if closable is not None:
                closable.close()
    learning_sps = float("nan")
    if learn_clock is not None and step > learn_clock[0]:
        learning_sps = (step - learn_clock[0]) / max(time.perf_counter() - learn_clock[1], 1e-9)
    return _result(cfg, step, time.perf_counter() - t0, learning_sps, start_step)


def _result(cfg: TrainConfig, step: int, wall: float, learning_sps: float, start_step: int | None = None) -> TrainResult:
    log = read_log(cfg.out_dir)
    done = log["complete"] == 1
    returns, ends = log["return"][done], log["step"][done]
    k = max(1, len(returns) // 10)
    ran = step - (step if start_step is None else start_step)
    return TrainResult(out_dir=str(cfg.out_dir), steps=step, episodes=int(done.sum()), episode_returns=returns,
                       episode_end_steps=ends, mean_return_last=float(returns[-k:].mean()) if len(returns) else float("nan"),
                       wall_seconds=wall, steps_per_second=ran / wall if wall > 0 else float("nan"),
                       learning_steps_per_second=learning_sps, checkpoint=str(Path(cfg.out_dir) / CHECKPOINT))
