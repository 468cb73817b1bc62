"""Per-episode and per-window statistics of a training run, for ``log.csv`` and TensorBoard.

Intrinsic rewards are logged as learned from: r+ clipped to [0, 1] (the first steps' raw bonus can
be astronomically large, since the PG at n = 1 is the whole frame's information).
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import torch

__all__ = ["EpisodeStats", "WindowStats", "tensorboard_writer", "crossed", "exploration_columns"]


def crossed(before: int, after: int, every: int) -> bool:
    """True when a multiple of ``every`` lies in (before, after]: a periodic event is due.

    Periodic schedules (learning, target sync, logging, checkpoints) fire on threshold crossings,
    which stays right when the step count advances by more than one at a time.
    """
    return every > 0 and after // every > before // every


def exploration_columns(tracker) -> dict:
    """The run's exploration measures so far, for ``log.csv`` (NaN where the env exposes none):
    distinct cells (rooms) visited, and the agent step of the first success."""
    return {"distinct_cells": float(tracker.distinct_cells) if tracker.distinct_cells else math.nan,
            "first_success_step": math.nan if tracker.first_success_step is None else float(tracker.first_success_step)}


class EpisodeStats:
    """Sums over the running episode: extrinsic return, length, clipped r+, PG over the density
    updates (``n_pg`` of them: the scored steps, a ``bonus_fraction`` share of the steps) and TD loss."""

    def __init__(self, device):
        self.ret, self.length, self.intr, self.pg, self.n_pg, self.n_loss = 0.0, 0, 0.0, 0.0, 0, 0
        self.eps, self.n_eps = 0.0, 0  # the exploration rates the acting env used, summed over its steps
        self.device = device
        # summed on the device (no sync per gradient step); None until the episode's first loss (an
        # episode without a gradient step builds no tensor: 0 + loss is loss, bit for bit)
        self.loss = None

    def add_step(self, reward: float, record) -> None:
        self.ret += float(reward)
        self.length += 1
        if record is not None:
            self.intr += min(float(record.bonus), 1.0)
            self.pg += float(record.prediction_gain)
            self.n_pg += 1

    def add_loss(self, loss) -> None:
        """Add one gradient step's loss: a 0-d tensor (torch's step: summed on its device) or a float32
        scalar (the numpy step: summed in float32, so a sum restored into a tensor goes on the same)."""
        if self.loss is None:
            self.loss = loss.clone() if isinstance(loss, torch.Tensor) else loss
        else:
            self.loss = self.loss.add_(loss) if isinstance(self.loss, torch.Tensor) else self.loss + loss
        self.n_loss += 1

    def state(self) -> dict:
        """Plain numbers, for a checkpoint taken mid-episode."""
        return {"ret": self.ret, "length": self.length, "intr": self.intr, "pg": self.pg, "n_pg": self.n_pg,
                "loss": float(self.loss) if self.loss is not None else 0.0, "n_loss": self.n_loss,
                "eps": self.eps, "n_eps": self.n_eps}

    @classmethod
    def from_state(cls, d: dict, device) -> "EpisodeStats":
        stats = cls(device)
        stats.ret, stats.length, stats.intr, stats.pg = float(d["ret"]), int(d["length"]), float(d["intr"]), float(d["pg"])
        stats.loss = torch.zeros((), device=device) + float(d["loss"])
        stats.n_loss = int(d["n_loss"])
        # checkpoints of earlier versions did not count the density updates: every step (bonus_fraction 1)
        stats.n_pg = int(d.get("n_pg", d["length"]))
        # nor the rates used: the episode's mean rate is unknown (NaN)
        stats.eps, stats.n_eps = float(d.get("eps", math.nan)), int(d.get("n_eps", d["length"]))
        return stats

    def add_rate(self, rate: float) -> None:
        """The exploration rate the env acted with at this step (DQN: epsilon, or its novelty-scaled
        rate; NaN for Reactor, which samples from its policy)."""
        self.eps += float(rate)
        self.n_eps += 1

    def row(self, step: int, episode: int, complete: bool, epsilon: float, wall: float, with_bonus: bool) -> dict:
        """The episode's ``log.csv`` row. ``prediction_gain_mean``: the mean PG (nats) over the episode's
        density updates (NaN without a bonus or without an update); ``intrinsic_mean``: r+ per agent step;
        ``epsilon``: the schedule's rate at the episode's last step; ``epsilon_used``: the mean over the
        episode's steps of the rate the env acted with (with novelty-scaled exploration above the schedule's)."""
        return {"step": step, "episode": episode, "return": self.ret, "length": self.length,
                "complete": int(complete), "intrinsic_return": self.intr, "intrinsic_mean": self.intr / self.length,
                "prediction_gain_mean": self.pg / self.n_pg if with_bonus and self.n_pg else math.nan,
                "epsilon": epsilon,
                "td_loss": float(self.loss) / self.n_loss if self.n_loss else math.nan, "wall_seconds": wall,
                "epsilon_used": self.eps / self.n_eps if self.n_eps else math.nan}


class WindowStats:
    """Means over the agent steps since the last TensorBoard write (every ``log_every`` steps)."""

    def __init__(self, device, step: int):
        self.device = device
        self._reset(step)

    def _reset(self, step: int) -> None:
        self.n, self.pg, self.intr, self.pseudo_counts, self.n_loss = 0, 0.0, 0.0, [], 0
        self.loss = 0.0  # + the first loss: that loss itself, a tensor on its device or a float32 scalar
        self.t, self.step = time.perf_counter(), step

    def add_step(self, record) -> None:
        self.n += 1
        if record is not None:
            self.pg += float(record.prediction_gain)
            self.intr += min(float(record.bonus), 1.0)
            self.pseudo_counts.append(float(record.pseudo_count))

    def add_loss(self, loss) -> None:
        self.loss += loss
        self.n_loss += 1

    def write(self, tb, step: int, epsilon: float, with_bonus: bool, tracker=None) -> None:
        """Write the window's scalars at ``step`` and start a new window."""
        n = max(1, self.n)
        if tracker is not None:
            for name, value in exploration_columns(tracker).items():
                if math.isfinite(value):
                    tb.add_scalar(f"exploration/{name}", value, step)
        if with_bonus:
            if self.pseudo_counts:  # one per density update: the PG is their mean, as in log.csv
                tb.add_scalar("bonus/prediction_gain", self.pg / len(self.pseudo_counts), step)
            tb.add_scalar("bonus/intrinsic_reward", self.intr / n, step)
            pcs = np.asarray(self.pseudo_counts, dtype=np.float64)
            finite = pcs[np.isfinite(pcs)]
            if len(finite):
                tb.add_scalar("bonus/pseudo_count", float(np.median(finite)), step)
        if self.n_loss:
            tb.add_scalar("losses/td", float(self.loss) / self.n_loss, step)
        tb.add_scalar("charts/epsilon", epsilon, step)
        tb.add_scalar("perf/steps_per_second", (step - self.step) / max(time.perf_counter() - self.t, 1e-9), step)
        self._reset(step)


class _NullWriter:
    def add_scalar(self, *a, **k):
        pass

    def close(self):
        pass


def tensorboard_writer(out_dir: Path, enabled: bool, resumed_at: int | None):
    """A SummaryWriter on ``out_dir/tb`` (events after ``resumed_at`` dropped), or a writer that does nothing."""
    if not enabled:
        return _NullWriter()
    from torch.utils.tensorboard import SummaryWriter

    return SummaryWriter(str(out_dir / "tb"), purge_step=resumed_at + 1 if resumed_at is not None else None)
