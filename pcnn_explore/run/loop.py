"""The training loop of both agents, DQN (with the mixed Monte Carlo target where mmc_beta > 0) and
Reactor (:mod:`pcnn_explore.run.learners`), optionally with the pseudo-count bonus.

One vector step advances each of the ``num_envs`` envs by one agent step (Atari: 4 emulator
frames): the learner picks the actions from the observations x_t (DQN: epsilon-greedy on its
Q-network, with ``novelty_epsilon`` > 0 each env's rate raised by its state's pseudo-count;
Reactor: sampled from its recurrent policy, their probabilities mu kept); with a bonus, on a
share ``bonus_fraction`` of the agent steps (drawn at random, seeded; all of them by default for
DQN, a quarter for Reactor) the density model trains once on the density frame of the
scored state (``scored_frame="state"``: x_t, the state in which the action is taken, as in
Bellemare et al. 2016, the default on every env; ``"next_state"``: x_{t+1}, the state the action
leads to, the kit's DeepSea variant; the paper says only that "the density model receives a single
frame", not which) and gives r+_t = beta PC^-1/2 (reward units; c, its decay and beta are the
paper's form of the density model unless given: :data:`pcnn_explore.bonus.PAPER_BONUS_FORM`;
:class:`pcnn_explore.bonus.PseudoCountBonus`; 0 on the other steps); the envs step; each env's
transition (x_t, a_t, clip(r_t + r+_t, -1, 1), x_{t+1}) goes to the learner's replay
(``intrinsic_only``: clip(r+_t, -1, 1); Reactor's also keeps mu). Every ``train_every`` agent steps
after ``learning_starts`` the learner takes one gradient step on a batch (DQN: transitions with
the Q-learning or MMC target; Reactor: sequences with Retrace targets); every
``target_update_every`` agent steps it copies its online network to its target network.
Checkpoints fall between vector steps. Files written: see :mod:`pcnn_explore.run.checkpoints`.

:func:`run_loop` is that algorithm (act, score, step, learn, store, log); each of the rest is one
module to open: the run's state and its checkpoints (:mod:`~pcnn_explore.run.state`), the folder
taken and its lock (:meth:`pcnn_explore.run.resume.Resume.claim`, :mod:`~pcnn_explore.run.lock`),
bsuite's solve rule (:mod:`~pcnn_explore.run.solve`), the logs (:mod:`~pcnn_explore.run.logger`),
Ctrl-C and SIGTERM (:mod:`~pcnn_explore.run.interrupt`), the end of a run (:mod:`~pcnn_explore.run.closing`)
and what it returns (:mod:`~pcnn_explore.run.result`).
"""
from __future__ import annotations

import contextlib
import math
import random
from pathlib import Path

import numpy as np
import torch

from pcnn_explore.agents.transitions import check_reward
from pcnn_explore.envs import auto_network
from pcnn_explore.run.closing import RunClosing
from pcnn_explore.run.config import TrainConfig
from pcnn_explore.run.envs import make_pool
from pcnn_explore.run.interrupt import Abort, CtrlC, RunInterrupted
from pcnn_explore.run.learners import make_learner
from pcnn_explore.run.lock import RunLock, check_platform
from pcnn_explore.run.logger import RunLogger
from pcnn_explore.run.metrics import crossed
from pcnn_explore.run.result import RunClock, TrainResult, result_of
from pcnn_explore.run.resume import Resume, open_run
from pcnn_explore.run.scorer import BonusScorer, draw_scored
from pcnn_explore.run.solve import SolveWatch
from pcnn_explore.run.state import Checkpointer, RunState

__all__ = ["train", "run_loop", "vector_step", "epsilon_at", "novelty_epsilon", "describe", "build"]


def epsilon_at(cfg: TrainConfig, step: int) -> float:
    """Linear decay from epsilon_start to epsilon_end over the first epsilon_decay_steps agent steps."""
    if cfg.epsilon_decay_steps == 0:
        return cfg.epsilon_end
    frac = min(1.0, step / cfg.epsilon_decay_steps)
    return cfg.epsilon_start + frac * (cfg.epsilon_end - cfg.epsilon_start)


def novelty_epsilon(epsilon: float, kappa: float, pseudo_count: float | None) -> float:
    """The kit's novelty-scaled exploration rate of one env: max(epsilon, min(1, kappa (N + 1)^-1/2)).

    N is the pseudo-count of the state about to be acted in, as the density model gave it when the
    state was reached (before its own update: N + 1 counts this visit), so a state reached for the
    first time is acted in at random with probability min(1, kappa), one seen 99 times before with
    kappa / 10. Where DeepSea's last action has no count-based incentive (both actions end the
    episode on the same frame), this is what tries the rewarded one. ``kappa`` 0, or N unknown
    (None: the state was not scored on arrival) or infinite: ``epsilon``, the paper's rule.
    """
    if not kappa or pseudo_count is None or not pseudo_count < math.inf:
        return epsilon
    return max(epsilon, min(1.0, kappa / math.sqrt(max(pseudo_count, 0.0) + 1.0)))


def describe(cfg: TrainConfig) -> str:
    """The resolved settings, one ``name=value`` per field (``auto`` where the flag says so), wrapped
    for a terminal."""
    import textwrap

    text = " ".join(f"{k}={'auto' if v is None else v}" for k, v in cfg.to_dict().items())
    return "settings: " + textwrap.fill(text, width=110, subsequent_indent="  ", break_on_hyphens=False).lstrip()


def build(cfg: TrainConfig):
    """(envs, learner, bonus or None), all seeded from ``cfg.seed``; the learner pairs the agent
    (``cfg.agent``) with its replay (:mod:`pcnn_explore.run.learners`)."""
    from pcnn_explore.bonus import PseudoCountBonus
    from pcnn_explore.density import make_density
    from pcnn_explore.envs import density_shape, is_atari

    random.seed(cfg.seed)
    np.random.seed(cfg.seed % 2**32)
    torch.manual_seed(cfg.seed)
    with contextlib.ExitStack() as opened:  # the envs closed again if what follows fails
        envs = make_pool(cfg)
        opened.callback(envs.close)
        obs_shape, n_actions = envs.observation_space.shape, int(envs.action_space.n)
        stack = cfg.frame_stack if cfg.frame_stack is not None else (4 if is_atari(cfg.env) else 1)
        learner = make_learner(cfg, obs_shape, n_actions, stack)
        bonus = None
        if cfg.bonus != "none":
            model = make_density(cfg.bonus, *density_shape(cfg.env), lr=cfg.density_lr, device=cfg.device,
                                 seed=cfg.seed, rmsprop=cfg.density_optimizer)
            bonus = PseudoCountBonus(model, scale=cfg.pg_scale, schedule=cfg.pg_schedule, beta=cfg.bonus_scale)
        opened.pop_all()
    return envs, learner, bonus


def train(cfg: TrainConfig, resume: bool = False, progress: bool = True) -> TrainResult:
    """Run (or, with ``resume``, continue) the training run described by ``cfg``.

    Raises ValueError before any work (and touching nothing) when ``out_dir`` already holds a run
    and ``resume`` is False, when there is nothing readable to resume (a checkpoint whose checksum
    does not match included), when resuming with other settings, or when another process runs in
    ``out_dir`` (:mod:`pcnn_explore.run.lock`: the folder is locked for the whole run), and on
    Windows (RunError naming WSL 2: the lock is POSIX's). A resumed
    run that already did ``cfg.steps`` returns its result and changes nothing.
    ``progress`` prints the settings and shows a progress bar. Ctrl-C (SIGINT, where Python's own
    handler is in place) or SIGTERM (where its default action is in place) takes a checkpoint at
    the step reached and raises :class:`RunInterrupted` (a KeyboardInterrupt: ``train(cfg,
    resume=True)`` continues exactly); a second Ctrl-C stops at once.
    """
    check_platform()  # (Windows: one line naming WSL 2, before anything)
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"cfg must be a TrainConfig (TrainConfig.preset(profile, ...)), got {type(cfg).__name__}")
    cfg.validate()
    start = open_run(cfg, resume)
    if progress and start.backfill_note():
        print(start.backfill_note(), flush=True)
    if cfg.device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {cfg.device!r} requested but CUDA is not available: use device='cpu'")
    with RunLock(cfg.out_dir) as lock:
        return run_loop(cfg, start, progress, lock)


def run_loop(cfg: TrainConfig, start: Resume, progress: bool = True, lock: RunLock | None = None) -> TrainResult:
    """The loop itself, from the start point :func:`open_run` found: :func:`vector_step` until the
    budget (``cfg.steps``), bsuite's solve rule (``stop_when_solved``), Ctrl-C or SIGTERM ends it,
    with a checkpoint every ``checkpoint_interval`` agent steps and at the end. The folder is locked
    (``lock``, else one of its own) from the first write to the end; a checkpoint is written only
    while this run still owns the folder. Whatever fails after the envs are built (the folder
    taken, a log, TensorBoard), everything opened is closed and the folder given up
    (:class:`~pcnn_explore.run.closing.RunClosing`)."""
    if start.finished:
        return result_of(cfg, start.step)
    watch = SolveWatch.for_run(cfg, start.saved)  # bsuite's rule, followed on every DeepSea run
    if cfg.stop_when_solved and watch.bsuite_solved_at is not None:  # solved before: nothing more to run
        return result_of(cfg, start.step, watch=watch)
    lock = lock if lock is not None else RunLock(cfg.out_dir)
    if cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    ctrl_c = CtrlC()
    closing = RunClosing(ctrl_c)  # from here on, whatever fails closes all that was opened and frees the folder
    stopped = at_once = False
    try:
        envs, learner, bonus = build(cfg)  # before the folder: a setting the env refuses leaves nothing written
        closing.add(envs)
        state = RunState.restore(cfg, start.saved, envs, learner, bonus, watch)
        closing.hold(lock)
        start.claim(lock, cfg, state.step, envs)  # the folder locked, its log cut back to the checkpoint
        state.start_episodes(cfg, envs, learner.device)
        if progress:
            print(describe(cfg), flush=True)
        logger = closing.add(RunLogger(cfg, state.step, start.saved is not None, learner.logs_traces, progress,
                                       bonus is not None, learner.device))
        checkpointer = Checkpointer(cfg, lock, learner, bonus, logger, _shapes(cfg, envs), state.step)
        closing.writer(checkpointer.writer)
        scorer = closing.add(BonusScorer.for_run(cfg, bonus))
        clock = RunClock(state.step)
        ctrl_c.install()
        while state.step < cfg.steps:
            vector_step(cfg, state, envs, learner, scorer, logger, clock)
            solved = cfg.stop_when_solved and watch.bsuite_solved_at is not None
            if state.step >= cfg.steps or solved or checkpointer.due(state.step):
                checkpointer.save(state)
            if solved:
                break
            if ctrl_c.asked and state.step < cfg.steps:  # (Ctrl-C or SIGTERM: the vector step is whole; checkpoint here)
                if checkpointer.last != state.step:
                    checkpointer.save(state)
                stopped = True
                break
    except Abort:  # Ctrl-C twice: stop at once
        at_once = True
    finally:
        at_once = closing.close() or at_once
    if at_once or stopped:
        raise RunInterrupted.of_run(Path(cfg.out_dir), state.step, cfg.steps, at_once, checkpointer.writer,
                                    ctrl_c.signum)
    return result_of(cfg, state.step, clock, watch)


def vector_step(cfg: TrainConfig, state: RunState, envs, learner, scorer: BonusScorer | None, logger: RunLogger,
                clock: RunClock) -> None:
    """One agent step of each env, treated in the order 0 ... N-1 (the density model trains on
    their frames in that order): act, score, step, learn, store, log."""
    # act: epsilon-greedy, each env's rate raised by its state's pseudo-count (DQN); sampled (Reactor)
    epsilon = epsilon_at(cfg, state.step) if learner.uses_epsilon else float("nan")
    rates = ([novelty_epsilon(epsilon, cfg.novelty_epsilon, s.pseudo_count) for s in state.slots]
             if cfg.novelty_epsilon else epsilon)
    actions, extras = learner.act([s.obs for s in state.slots], rates, state.rng)
    # score and step: the density model trains on x_t (or x_{t+1}) of a share bonus_fraction of the steps
    scored = draw_scored(scorer, cfg.bonus_fraction, state.scored_rng, cfg.num_envs)
    pending = [scorer.submit(s.frame) if take and cfg.scored_frame == "state" else None
               for s, take in zip(state.slots, scored)]
    results = envs.step(actions)
    if cfg.scored_frame == "next_state":
        pending = [scorer.submit(r[4].get("density_frame")) if take else None for r, take in zip(results, scored)]
    before, state.step = state.step, state.step + cfg.num_envs
    # learn: on transitions stored before this vector step (this one's wait for their bonus, so the
    # density updates, in a worker thread when bonus_thread, overlap the env and gradient steps)
    for _ in range(state.step // cfg.train_every - before // cfg.train_every):
        if state.step > cfg.learning_starts and learner.can_learn():
            clock.learning(before)
            loss = learner.learn(cfg.batch_size, state.rng)
            logger.learned(state.step, loss, state.slots[0].stats,  # (the loss goes with env 0's episode)
                           learner.agent.last_traces if logger.traces is not None else None)
    if crossed(before, state.step, cfg.target_update_every):
        learner.sync_target()
    # store: each env's transition, its reward r_t + r+_t clipped to [-1, 1]; an ended episode is logged
    for i, (slot, handle, (next_obs, reward, terminated, truncated, info)) in enumerate(
            zip(state.slots, pending, results)):
        record = handle.result() if handle is not None else None
        r_plus = float(record.bonus) if record is not None else 0.0
        extrinsic = 0.0 if cfg.intrinsic_only else float(reward)
        end = bool(terminated or truncated or state.step >= cfg.steps)
        # (checked before the clip, which would turn a NaN into -1: the store's own check must see it; an
        # infinite bonus, a pseudo-count of 0 as c n^-1/2 PG with a large c gives, is the paper's form and
        # clips to +1 as every reward does)
        total = extrinsic + r_plus
        if not (r_plus == math.inf and math.isfinite(extrinsic)):
            total = check_reward(total, "transition reward (the env's reward plus the bonus)")
        learner.store(i, slot.obs, actions[i], extras[i], min(1.0, max(-1.0, total)), bool(terminated), next_obs, end)
        state.advance(i, actions[i], rates[i] if isinstance(rates, list) else rates, reward, record, next_obs, info,
                      cfg.scored_frame == "next_state")
        logger.scored(record)
        if end:
            learner.episode_end(i)
            if state.watch is not None and (terminated or truncated):
                state.watch.add(slot.stats.ret, state.step)
            logger.episode(state.step, slot, bool(terminated or truncated), epsilon, clock.wall(), state.tracker,
                           state.density_updates)
            state.next_episode(i, cfg, envs, learner.device)
    # log: the window's means every log_every agent steps
    if crossed(before, state.step, cfg.log_every):
        logger.window(state.step, epsilon, state.tracker)
    logger.advance(cfg.num_envs)


def _shapes(cfg: TrainConfig, envs) -> dict:
    """What a checkpoint says of the networks' inputs and outputs (:func:`pcnn_explore.run.policy.load_policy` reads it)."""
    return {"obs_shape": list(envs.observation_space.shape), "n_actions": int(envs.action_space.n),
            "network": auto_network(cfg.env, cfg.network)}
