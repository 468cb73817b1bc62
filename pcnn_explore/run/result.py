"""What a run returns: :class:`TrainResult`, read from its log, with the speeds :class:`RunClock`
measured."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pcnn_explore.run.checkpoints import CHECKPOINT
from pcnn_explore.run.log import read_log

__all__ = ["TrainResult", "RunClock", "result_of"]


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
    solved_episode: int | None = None  # stop_when_solved: the first episode (1-based) at which bsuite's rule held
    solved_step: int | None = None  # stop_when_solved: the agent step at which that episode ended
    ran_past: bool = False  # stop_when_solved: the run had trained on past the stop point's vector step before this call (the flag off then)
    bsuite_solved_episode: int | None = None  # stop_when_solved: the first of bsuite's logged episodes where it held (the stop)

    def solved_note(self, steps: int | None = None) -> str | None:
        """One line saying where bsuite's rule held and whether the run stopped there (None: not
        solved, or stop_when_solved off). ``steps``: the budget asked for."""
        if self.solved_episode is None:
            return None
        at = f"episode {self.solved_episode}" + (f" (step {self.solved_step})" if self.solved_step is not None else "")
        if self.bsuite_solved_episode not in (None, self.solved_episode):
            at += f", and at bsuite's logged episode {self.bsuite_solved_episode}"
        if self.ran_past:
            return (f"solved by bsuite's deep-sea rule at {at}, but this run had trained on past it to step "
                    f"{self.steps} with --stop-when-solved off: nothing more was run (turn --stop-when-solved off "
                    "to train on)")
        of = f" of {steps}" if steps is not None else ""
        return f"solved by bsuite's deep-sea rule at {at}: stopped at step {self.steps}{of} (--stop-when-solved)"


class RunClock:
    """The wall clock of one call, from the loop's first vector step (agent step ``step``), and of
    its first gradient step (:meth:`learning`)."""

    def __init__(self, step: int):
        self.start_step, self.t0, self.learn_clock = step, time.perf_counter(), None  # learn_clock: (step, time)

    def wall(self) -> float:
        return time.perf_counter() - self.t0

    def learning(self, step: int) -> None:
        """A gradient step in the vector step from agent step ``step``: the first one starts the learning clock."""
        self.learn_clock = self.learn_clock or (step, time.perf_counter())

    def learning_sps(self, step: int) -> float:
        """Agent steps per second from the first gradient step to ``step`` (NaN: none yet)."""
        if self.learn_clock is None or step <= self.learn_clock[0]:
            return float("nan")
        return (step - self.learn_clock[0]) / max(time.perf_counter() - self.learn_clock[1], 1e-9)


def result_of(cfg, step: int, clock: RunClock | None = None, watch=None) -> TrainResult:
    """The run's :class:`TrainResult` at agent step ``step``, read from its log; ``clock``: this
    call's (None: nothing ran); ``watch``: its :class:`~pcnn_explore.run.solve.SolveWatch`, if any."""
    wall = clock.wall() if clock is not None else 0.0
    ran = step - clock.start_step if clock is not None else 0
    solved = watch is not None and cfg.stop_when_solved and watch.bsuite_solved_at is not None
    log = read_log(cfg.out_dir)
    done = log["complete"] == 1
    returns, ends = log["return"][done], log["step"][done]
    k = max(1, len(returns) // 10)
    return TrainResult(out_dir=str(cfg.out_dir), steps=step, episodes=int(done.sum()), episode_returns=returns,
                       episode_end_steps=ends, mean_return_last=float(returns[-k:].mean()) if len(returns) else float("nan"),
                       wall_seconds=wall, steps_per_second=ran / wall if wall > 0 else float("nan"),
                       learning_steps_per_second=clock.learning_sps(step) if clock is not None else float("nan"),
                       checkpoint=str(Path(cfg.out_dir) / CHECKPOINT),
                       solved_episode=watch.solved_at if solved else None,
                       solved_step=watch.solved_step if solved else None,
                       ran_past=bool(solved and watch.trained_past(step)),
                       bsuite_solved_episode=watch.bsuite_solved_at if solved else None)
