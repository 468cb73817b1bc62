"""What a run reports as it goes (:class:`RunLogger`): one ``log.csv`` row per episode
(:mod:`pcnn_explore.run.log`), Reactor's ``traces.csv`` row per learn call
(:mod:`pcnn_explore.run.trace_log`), TensorBoard scalars (each episode's, and the means of every
``log_every`` agent steps: :mod:`pcnn_explore.run.metrics`) and the progress bar."""
from __future__ import annotations

import contextlib
from pathlib import Path

from pcnn_explore.run.log import CsvLog
from pcnn_explore.run.metrics import WindowStats, exploration_columns, tensorboard_writer
from pcnn_explore.run.trace_log import TraceLog

__all__ = ["RunLogger"]


class RunLogger:
    """The run's logs from agent step ``step`` on (``resumed``: a checkpoint's step, whose later
    TensorBoard events are dropped); ``traces``: keep Reactor's traces; ``progress``: show a bar."""

    def __init__(self, cfg, step: int, resumed: bool, traces: bool, progress: bool, with_bonus: bool, device):
        out = Path(cfg.out_dir)
        self.with_bonus = with_bonus
        self.traces = self.log = self.tb = self.bar = None
        with contextlib.ExitStack() as opened:  # a later one that fails to open closes those opened before
            opened.callback(self.close)
            self.traces = TraceLog(out, step) if traces else None
            self.log = CsvLog(out / "log.csv")
            self.tb = tensorboard_writer(out, cfg.tensorboard, step if resumed else None)
            if progress:
                from tqdm.auto import tqdm

                self.bar = tqdm(total=cfg.steps, initial=step, unit="step", desc=f"{cfg.env} {cfg.bonus}",
                                dynamic_ncols=True)
            self.window_stats = WindowStats(device, step)
            opened.pop_all()

    def learned(self, step: int, loss, episode_stats, traces: dict | None) -> None:
        """A gradient step at agent step ``step``: its TD loss goes with ``episode_stats`` (env 0's
        episode) and the window; ``traces``: the learn call's Reactor traces, if kept."""
        if self.traces is not None:
            self.traces.write(step, traces)
        for stats in (episode_stats, self.window_stats):
            stats.add_loss(loss)

    def scored(self, record) -> None:
        """One env's agent step, with the bonus's record of its frame (None: not scored)."""
        self.window_stats.add_step(record)

    def episode(self, step: int, slot, complete: bool, epsilon: float, wall: float, tracker, density_updates: int) -> None:
        """The episode of ``slot`` ended at ``step`` (``complete``: by the env, not the budget)."""
        self.log.write({**slot.stats.row(step, slot.episode, complete, epsilon, wall, self.with_bonus),
                        **exploration_columns(tracker), "density_updates": density_updates})
        for name, value in (("episodic_return", slot.stats.ret), ("episodic_length", slot.stats.length),
                            ("intrinsic_return", slot.stats.intr)):
            self.tb.add_scalar(f"charts/{name}", value, step)

    def window(self, step: int, epsilon: float, tracker) -> None:
        """Every ``log_every`` agent steps: the window's means to TensorBoard."""
        self.window_stats.write(self.tb, step, epsilon, self.with_bonus, tracker)

    def advance(self, steps: int) -> None:
        if self.bar is not None:
            self.bar.update(steps)

    def sync(self) -> None:
        """Everything logged so far on disk (before a checkpoint commits)."""
        self.log.sync()
        if self.traces is not None:
            self.traces.sync()

    def close(self) -> None:
        """Close every log opened (each even if another fails)."""
        with contextlib.ExitStack() as stack:
            for closable in (self.log, self.traces, self.tb, self.bar):
                if closable is not None:
                    stack.callback(closable.close)
