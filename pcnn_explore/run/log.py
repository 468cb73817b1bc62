"""The run's episode log, ``out_dir/log.csv``: one row per episode (:data:`LOG_COLUMNS`; ``step`` is
the agent step at which the episode ended, ``length`` its agent steps; the last row of a run whose
budget ends mid-episode has ``complete = 0``). The files of a run: :mod:`pcnn_explore.run.checkpoints`.
"""
from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import numpy as np

from pcnn_explore.atomic import write_text_atomic

__all__ = ["LOG", "LOG_COLUMNS", "read_log", "truncate_log", "CsvLog"]

LOG_COLUMNS = ("step", "episode", "return", "length", "complete", "intrinsic_return", "intrinsic_mean",
               "prediction_gain_mean", "epsilon", "td_loss", "wall_seconds", "distinct_cells", "first_success_step",
               "density_updates")
LOG = "log.csv"


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


def truncate_log(path: Path, last_step: int, columns: tuple[str, ...] = LOG_COLUMNS) -> None:
    """Keep the header and the rows with step <= last_step (rewritten atomically); a fresh header if
    absent. ``columns``: the CSV's header (log.csv's by default; traces.csv gives its own)."""
    rows = []
    if path.exists():
        with open(path, newline="") as f:
            rows = [r for r in csv.DictReader(f) if int(r["step"]) <= last_step]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    write_text_atomic(path, buf.getvalue())


class CsvLog:
    """Appends one row per episode to ``log.csv`` (created with its header by :func:`truncate_log`)."""

    def __init__(self, path: Path):
        self.f = open(path, "a", newline="")
        self.w = csv.DictWriter(self.f, fieldnames=LOG_COLUMNS, lineterminator="\n")

    def write(self, row: dict) -> None:
        self.w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
        self.f.flush()

    def sync(self) -> None:
        """Put the rows written so far on disk (before a checkpoint commits: the log on disk then
        covers at least the checkpoint's steps)."""
        self.f.flush()
        os.fsync(self.f.fileno())

    def close(self) -> None:
        self.f.close()
