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
"""
from __future__ import annotations

import contextlib
import math
import random
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from pcnn_explore.envs import auto_network
from pcnn_explore.envs.deep_sea_protocol import SUCCESS_RETURN, below_bad_ratio, solve_episode, successes_from_log
from pcnn_explore.run.config import TrainConfig
from pcnn_explore.exploration import ExplorationTracker
from pcnn_explore.run.metrics import EpisodeStats, WindowStats, crossed, exploration_columns, tensorboard_writer
from pcnn_explore.run.envs import Slot, make_pool
from pcnn_explore.run.learners import make_learner
from pcnn_explore.run.trace_log import TraceLog
from pcnn_explore.run.scorer import BonusScorer
from pcnn_explore.run.lock import RunLock
from pcnn_explore.run.checkpoints import CHECKPOINT, CheckpointWriter, restore_rng_states, rng_states
from pcnn_explore.run.log import CsvLog, read_log, truncate_log
from pcnn_explore.run.resume import Resume, RunError, episode_seed, open_run
from pcnn_explore.run.settings import write_settings

__all__ = ["TrainResult", "RunInterrupted", "train", "run_loop", "epsilon_at", "novelty_epsilon", "describe", "build"]


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
    solved_episode: int | None = None  # stop_when_solved: the episode (1-based) at which bsuite's rule held
    solved_step: int | None = None  # stop_when_solved: the agent step at which that episode ended
    ran_past: bool = False  # stop_when_solved: the run had trained on past the solve point before (the flag off then)

    def solved_note(self, steps: int | None = None) -> str | None:
        """One line saying where bsuite's rule held and whether the run stopped there (None: not
        solved, or stop_when_solved off). ``steps``: the budget asked for."""
        if self.solved_episode is None:
            return None
        at = f"episode {self.solved_episode}" + (f" (step {self.solved_step})" if self.solved_step is not None else "")
        if self.ran_past:
            return (f"solved by bsuite's deep-sea rule at {at}, but this run had trained on past it to step "
                    f"{self.steps} with --stop-when-solved off: nothing more was run (turn --stop-when-solved off "
                    "to train on)")
        of = f" of {steps}" if steps is not None else ""
        return f"solved by bsuite's deep-sea rule at {at}: stopped at step {self.steps}{of} (--stop-when-solved)"



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
    envs = make_pool(cfg)
    obs_shape, n_actions = envs.observation_space.shape, int(envs.action_space.n)
    stack = cfg.frame_stack if cfg.frame_stack is not None else (4 if is_atari(cfg.env) else 1)
    learner = make_learner(cfg, obs_shape, n_actions, stack)
    bonus = None
    if cfg.bonus != "none":
        model = make_density(cfg.bonus, *density_shape(cfg.env), lr=cfg.density_lr, device=cfg.device, seed=cfg.seed)
        bonus = PseudoCountBonus(model, scale=cfg.pg_scale, schedule=cfg.pg_schedule, beta=cfg.bonus_scale)
    return envs, learner, bonus


def train(cfg: TrainConfig, resume: bool = False, progress: bool = True) -> TrainResult:
    """Run (or, with ``resume``, continue) the training run described by ``cfg``.

    Raises ValueError before any work (and touching nothing) when ``out_dir`` already holds a run
    and ``resume`` is False, when there is nothing readable to resume (a checkpoint whose checksum
    does not match included), when resuming with other settings, or when another process runs in
    ``out_dir`` (:mod:`pcnn_explore.run.lock`: the folder is locked for the whole run). A resumed
    run that already did ``cfg.steps`` returns its result and changes nothing.
    ``progress`` prints the settings and shows a progress bar. Ctrl-C (SIGINT, where Python's own
    handler is in place) takes a checkpoint at the step reached and raises :class:`RunInterrupted`
    (a KeyboardInterrupt: ``train(cfg, resume=True)`` continues exactly); a second stops at once.
    """
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
    """The loop itself, from the start point :func:`open_run` found. Envs are treated in the order
    0 ... N-1 within each vector step (the density model trains on their frames in that order).
    The folder is locked (``lock``, else one of its own) from the first write to the end; a
    checkpoint is written only while this run still owns the folder."""
    out = Path(cfg.out_dir)
    if start.finished:
        return _result(cfg, start.step, 0.0, float("nan"))
    # bsuite's rule is followed on every DeepSea run (its counts go into each checkpoint), so that
    # stop_when_solved may be turned on at a resume; it stops the run only where that flag is on
    watch = None
    if isinstance(cfg.env, str) and cfg.env.startswith("DeepSea-"):
        watch = _SolveWatch.from_saved(start.saved, out) if start.saved is not None else _SolveWatch()
    if cfg.stop_when_solved and watch.solved_at is not None:  # solved before: nothing more to run
        return _result(cfg, start.step, 0.0, float("nan"), start.step, watch)
    lock = lock if lock is not None else RunLock(out)
    if cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    envs, learner, bonus = build(cfg)  # before the folder: a setting the env refuses leaves nothing written
    rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, 0xA6E7]))
    scored_rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, 0xB0B5]))  # which steps get a bonus
    step, episodes, saved, running = 0, 0, start.saved, [None] * cfg.num_envs
    tracker = ExplorationTracker()
    if saved is not None:
        try:
            tracker.load_state_dict(saved["exploration"])
            learner.load_state_dict(saved)
            if bonus is not None:
                bonus.load_state_dict(saved["bonus"])
            restore_rng_states(rng, saved["rng"], scored=scored_rng)
            step, episodes, running = int(saved["step"]), int(saved["episodes"]), saved["running"]
        except (ValueError, KeyError, TypeError, RuntimeError) as e:  # (its checksum matched: a damaged write)
            envs.close()
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise RunError(f"cannot resume: {out / CHECKPOINT} is not a readable pcnn-explore checkpoint ({first}); "
                           "start a fresh run with another {out_dir}") from None
    density_updates = bonus.n if bonus is not None else 0  # counted here: a worker thread may be ahead
    try:
        lock.acquire(lambda: start.check_unchanged(out))  # creates the folder; nothing is written before
    except BaseException:
        envs.close()
        raise
    truncate_log(out / "log.csv", step)  # rows after the checkpoint are dropped; a fresh run starts empty
    traces = TraceLog(out, step) if learner.logs_traces else None  # Reactor: the traces of each learn call
    write_settings(cfg)
    slots = []
    for i, r in enumerate(running):  # each env's running episode: resumed, or the next one
        fresh = r is None
        if fresh:
            r, episodes = {"episode": episodes, "actions": [], "stats": None}, episodes + 1
        obs, info = envs.start(i, episode_seed(cfg.seed, r["episode"]), r["actions"])
        if fresh:  # a resumed episode's states were counted before the checkpoint
            tracker.update(info, step)
        stats = EpisodeStats.from_state(r["stats"], learner.device) if r["stats"] else EpisodeStats(learner.device)
        slots.append(Slot(int(r["episode"]), obs, info.get("density_frame"), stats, [int(a) for a in r["actions"]],
                          r.get("pseudo_count")))
    shapes = {"obs_shape": list(envs.observation_space.shape), "n_actions": int(envs.action_space.n),
              "network": auto_network(cfg.env, cfg.network)}

    writer = CheckpointWriter(out, owner=lock.check_owner)

    def checkpoint() -> None:
        lock.check_owner()
        log.sync()  # the log on disk covers the checkpoint's steps before the checkpoint commits
        if traces is not None:
            traces.sync()
        config = cfg.to_dict()
        writer.submit({"config": config, "step": step, "episodes": episodes, **shapes,
                       "running": [s.state() if s is not None else None for s in slots],
                       **learner.state_dict(defer=True), "rng": rng_states(rng, scored=scored_rng),
                       "exploration": tracker.state_dict(),
                       "solve": watch.state() if watch is not None else None,
                       "bonus": bonus.state_dict() if bonus is not None else None},
                      {"config": config, "step": step, **shapes, **learner.policy_state()})

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
    last_checkpoint, win = step, WindowStats(learner.device, step)
    ctrl_c, stopped, at_once = _CtrlC().install(), False, False  # Ctrl-C: a checkpoint at the step reached
    try:
        while step < cfg.steps:
            epsilon = epsilon_at(cfg, step) if learner.uses_epsilon else float("nan")
            rates = ([novelty_epsilon(epsilon, cfg.novelty_epsilon, s.pseudo_count) for s in slots]
                     if cfg.novelty_epsilon else epsilon)
            actions, extras = learner.act([s.obs for s in slots], rates, rng)
            # bonus_fraction < 1 (Reactor's sub-sampling): the model trains, and r+ is added, on a random share of steps
            scored = [scorer is not None and (cfg.bonus_fraction >= 1.0 or scored_rng.random() < cfg.bonus_fraction)
                      for _ in slots]
            pending = [scorer.submit(s.frame) if take and cfg.scored_frame == "state" else None
                       for s, take in zip(slots, scored)]
            results = envs.step(actions)
            if cfg.scored_frame == "next_state":
                pending = [scorer.submit(r[4].get("density_frame")) if take else None for r, take in zip(results, scored)]
            before, step = step, step + cfg.num_envs
            # Gradient steps sample transitions stored before this vector step: its transitions enter
            # the replay below, once their bonus is known, so the density updates (in a worker thread
            # when bonus_thread) run alongside the env steps and these gradient steps.
            for _ in range(step // cfg.train_every - before // cfg.train_every):
                if step > cfg.learning_starts and learner.can_learn():
                    learn_clock = learn_clock or (before, time.perf_counter())
                    loss = learner.learn(cfg.batch_size, rng)
                    if traces is not None:
                        traces.write(step, learner.agent.last_traces)
                    for stats in (slots[0].stats, win):  # the TD loss is logged with env 0's episode
                        stats.add_loss(loss)
            if crossed(before, step, cfg.target_update_every):
                learner.sync_target()
            for i, (slot, handle, (next_obs, reward, terminated, truncated, info)) in enumerate(
                    zip(slots, pending, results)):
                record = handle.result() if handle is not None else None
                density_updates += record is not None
                slot.stats.add_rate(rates[i] if isinstance(rates, list) else rates)  # the rate env i acted with
                r_plus = float(record.bonus) if record is not None else 0.0
                extrinsic = 0.0 if cfg.intrinsic_only else float(reward)
                end = bool(terminated or truncated or step >= cfg.steps)
                learner.store(i, slot.obs, actions[i], extras[i], min(1.0, max(-1.0, extrinsic + r_plus)),
                              bool(terminated), next_obs, end)
                slot.stats.add_step(reward, record)
                win.add_step(record)
                tracker.update(info, step)
                slot.obs, slot.frame = next_obs, info.get("density_frame")
                slot.pseudo_count = record.pseudo_count if record is not None and cfg.scored_frame == "next_state" else None
                slot.actions.append(int(actions[i]))
                if end:
                    learner.episode_end(i)
                    if watch is not None and (terminated or truncated):
                        watch.add(slot.stats.ret, step)
                    log.write({**slot.stats.row(step, slot.episode, bool(terminated or truncated), epsilon,
                                                time.perf_counter() - t0, bonus is not None),
                               **exploration_columns(tracker), "density_updates": density_updates})
                    for name, value in (("episodic_return", slot.stats.ret), ("episodic_length", slot.stats.length),
                                        ("intrinsic_return", slot.stats.intr)):
                        tb.add_scalar(f"charts/{name}", value, step)
                    if step < cfg.steps:
                        obs, info = envs.start(i, episode_seed(cfg.seed, episodes))
                        tracker.update(info, step)
                        slots[i], episodes = Slot(episodes, obs, info.get("density_frame"),
                                                  EpisodeStats(learner.device)), episodes + 1
                    else:  # the budget cut this episode: a longer resumed run starts the next one
                        slots[i] = None
            if crossed(before, step, cfg.log_every):
                win.write(tb, step, epsilon, bonus is not None, tracker)
            if bar is not None:
                bar.update(cfg.num_envs)
            solved = cfg.stop_when_solved and watch.solved_at is not None
            if step >= cfg.steps or solved or crossed(last_checkpoint, step, cfg.checkpoint_interval):
                checkpoint()
                last_checkpoint = step
            if solved:
                break
            if ctrl_c.asked and step < cfg.steps:  # (Ctrl-C: the vector step is whole; checkpoint here)
                if last_checkpoint != step:
                    checkpoint()
                    last_checkpoint = step
                stopped = True
                break
    except _Abort:  # Ctrl-C twice: stop at once
        at_once = True
    finally:
        try:
            _close(lock, writer, ctrl_c, (scorer, log, traces, tb, bar, envs))
        except _Abort:
            at_once = True
        finally:
            ctrl_c.restore()
    if at_once or stopped:
        from pcnn_explore.checkpoint import read_meta

        last = (read_meta(out / CHECKPOINT) or {}).get("step")
        raise RunInterrupted(str(out), step, cfg.steps, None if last is None else int(last), at_once,
                             at_once and writer.in_flight() is not None)
    learning_sps = float("nan")
    if learn_clock is not None and step > learn_clock[0]:
        learning_sps = (step - learn_clock[0]) / max(time.perf_counter() - learn_clock[1], 1e-9)
    return _result(cfg, step, time.perf_counter() - t0, learning_sps, start_step, watch)


def _close(lock: RunLock, writer: CheckpointWriter, ctrl_c: "_CtrlC", closables) -> None:
    """Close everything a run opened, each even if another failed (a full disk), then give the
    folder up: the checkpoint writer is finished (or, after Ctrl-C twice, cancelled) while the lock
    is still held, and a write it cannot stop at once keeps the folder locked until it ends."""
    def release() -> None:
        running = writer.in_flight()  # (only after a cancel: close() waits for it)
        if running is not None:
            lock.hold_until(running)
        lock.release()

    with contextlib.ExitStack() as stack:  # (callbacks run last first, each even if one raised)
        stack.callback(release)
        stack.callback(lambda: writer.cancel() if ctrl_c.aborted else writer.close())
        for closable in reversed(closables):
            if closable is not None:
                stack.callback(closable.close)


class _Abort(KeyboardInterrupt):
    """Ctrl-C a second time: stop at once."""


class _CtrlC:
    """SIGINT during a run (only where Python's own handler is in place, in the main thread): the
    first asks for a checkpoint at the end of the vector step; a second stops at once (:class:`_Abort`,
    and Python's handler is back for a third)."""

    def __init__(self):
        self.asked = self.aborted = False
        self.previous = None

    def install(self) -> "_CtrlC":
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if not self.asked:
            self.asked = True
            return
        self.aborted = True
        self.restore()
        raise _Abort()

    def restore(self) -> None:
        if self.previous is not None:
            previous, self.previous = self.previous, None
            signal.signal(signal.SIGINT, previous)


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped a run. Once: a checkpoint was taken at ``step``, the agent step it
    reached (``checkpoint == step``). Twice (``at_once``): it stopped without finishing that
    checkpoint; ``checkpoint`` is the step of the last one in ``out_dir`` (None: none yet), and
    ``writing`` says a checkpoint write that could not be cut short still runs in the background
    (the folder stays locked until it ends)."""

    def __init__(self, out_dir: str, step: int, steps: int, checkpoint: int | None, at_once: bool = False,
                 writing: bool = False):
        super().__init__(out_dir, step, steps, checkpoint, at_once, writing)
        self.out_dir, self.step, self.steps, self.checkpoint = out_dir, step, steps, checkpoint
        self.at_once, self.writing = at_once, writing

    def text(self, resume: str, fresh: str) -> str:
        """The one line: ``resume`` is how to continue, ``fresh`` how to start afresh elsewhere."""
        if not self.at_once:
            return (f"interrupted at step {self.step} of {self.steps}: checkpoint saved in {self.out_dir}; "
                    f"resume with: {resume}")
        if self.writing:
            return (f"interrupted twice at step {self.step}: stopped at once while a checkpoint was being written; "
                    f"it ends in the background ({self.out_dir} stays locked until then), then resume with: {resume}")
        if self.checkpoint is None:
            return (f"interrupted twice at step {self.step}: stopped at once, before the run's first checkpoint, so "
                    f"{self.out_dir} cannot resume: {fresh}")
        return (f"interrupted twice at step {self.step}: stopped at once; the last checkpoint in {self.out_dir} is "
                f"at step {self.checkpoint}: resume with: {resume}")

    def __str__(self) -> str:
        return self.text("train(cfg, resume=True)", "start afresh with another out_dir")


class _SolveWatch:
    """bsuite's deep-sea rule, followed episode by episode (``stop_when_solved``): solved at the first
    episode e where (bad episodes so far) / e < 0.9, as :func:`pcnn_explore.envs.deep_sea_protocol.solve_episode`
    decides it on the log."""

    def __init__(self, episodes: int = 0, bad: int = 0):
        self.episodes, self.bad, self.solved_at, self.solved_step = episodes, bad, None, None

    def state(self) -> dict:
        """The counts, for a checkpoint (a resumed run takes them from there, not from its log)."""
        return {"episodes": self.episodes, "bad": self.bad,
                "solved_at": -1 if self.solved_at is None else self.solved_at,
                "solved_step": -1 if self.solved_step is None else self.solved_step}

    @classmethod
    def from_saved(cls, saved: dict, out: Path) -> "_SolveWatch":
        """The counts of a checkpoint ``saved``; one written before they were kept: from the log's
        episodes up to its step (which :func:`pcnn_explore.run.resume.check_log` has matched with it)."""
        st = saved.get("solve")
        if not isinstance(st, dict):
            return cls.from_log(out, int(saved["step"]))
        watch = cls(int(st["episodes"]), int(st["bad"]))
        watch.solved_at = int(st["solved_at"]) if int(st["solved_at"]) >= 0 else None
        watch.solved_step = int(st["solved_step"]) if int(st["solved_step"]) >= 0 else None
        return watch

    @classmethod
    def from_log(cls, out: Path, step: int) -> "_SolveWatch":
        """The counts of the episodes a resumed run's log holds up to ``step`` (its checkpoint)."""
        wins, ends = np.zeros(0, bool), np.zeros(0, np.int64)
        if (out / "log.csv").exists():
            log = read_log(out)
            kept = np.asarray(log["step"]) <= step  # rows past the checkpoint are dropped when the run resumes
            wins = successes_from_log({k: np.asarray(log[k])[kept] for k in ("return", "complete")})
            ends = np.asarray(log["step"])[kept][np.asarray(log["complete"])[kept] == 1]
        watch = cls(int(wins.size), int((~wins).sum()))
        watch.solved_at = solve_episode(wins)
        if watch.solved_at is not None:
            watch.solved_step = int(ends[watch.solved_at - 1])
        return watch

    def add(self, episode_return: float, step: int | None = None) -> None:
        self.episodes += 1
        self.bad += not episode_return > SUCCESS_RETURN
        if self.solved_at is None and below_bad_ratio(self.bad, self.episodes):
            self.solved_at, self.solved_step = self.episodes, step


def _result(cfg: TrainConfig, step: int, wall: float, learning_sps: float, start_step: int | None = None,
            watch: "_SolveWatch | None" = None) -> TrainResult:
    solved = watch is not None and cfg.stop_when_solved and watch.solved_at is not None
    log = read_log(cfg.out_dir)
    done = log["complete"] == 1
    returns, ends = log["return"][done], log["step"][done]
    k = max(1, len(returns) // 10)
    ran = step - (step if start_step is None else start_step)
    return TrainResult(out_dir=str(cfg.out_dir), steps=step, episodes=int(done.sum()), episode_returns=returns,
                       episode_end_steps=ends, mean_return_last=float(returns[-k:].mean()) if len(returns) else float("nan"),
                       wall_seconds=wall, steps_per_second=ran / wall if wall > 0 else float("nan"),
                       learning_steps_per_second=learning_sps, checkpoint=str(Path(cfg.out_dir) / CHECKPOINT),
                       solved_episode=watch.solved_at if solved else None,
                       solved_step=watch.solved_step if solved else None,
                       ran_past=bool(solved and watch.episodes > watch.solved_at))
