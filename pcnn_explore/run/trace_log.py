"""``traces.csv``: the Retrace traces a Reactor run used, one row per learn call (gradient step).

Sec. 4.2 of the paper asks whether Retrace's truncated traces c_s = lambda min(1, pi(a_s|x_s) /
mu(a_s|x_s)) cut a sparse reward on its way back. The traces that matter are the ones each update
used: pi the policy being learnt at that update, mu the stored behaviour probability. The run's
final policy says nothing about them (a policy that learnt nothing gives small products by
construction), so the loop writes them as they are used.

Columns: ``step`` (agent step of the vector step whose gradient steps the row follows) and
:data:`~pcnn_explore.agents.reactor.TRACE_FIELDS` (see
:func:`~pcnn_explore.agents.reactor.trace_summary`: counts of sequences, means of c and of the
trace products prod_{s=1}^{k} c_s up to each sequence's rewarded step k, spans k in steps; empty
where there was nothing to average). Like ``log.csv``, a resumed run drops the rows after its
checkpoint's step, so the file always matches the run's steps.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

from pcnn_explore.agents.reactor import TRACE_FIELDS
from pcnn_explore.run.log import truncate_log

__all__ = ["TRACES", "TRACE_COLUMNS", "TraceLog", "read_traces"]

TRACES = "traces.csv"
TRACE_COLUMNS = ("step",) + TRACE_FIELDS


def _cell(v) -> str:
    if isinstance(v, float):
        return "" if v != v else f"{v:.6g}"
    return str(v)


class TraceLog:
    """Appends one row per learn call to ``out_dir/traces.csv``; on opening keeps only the rows with
    step <= ``last_step`` (0 for a fresh run: the header alone), rewritten atomically."""

    def __init__(self, out_dir: str | os.PathLike, last_step: int):
        path = Path(out_dir) / TRACES
        truncate_log(path, last_step, TRACE_COLUMNS)
        self.f = open(path, "a", newline="")
        self.w = csv.writer(self.f, lineterminator="\n")

    def write(self, step: int, summary: dict[str, float]) -> None:
        self.w.writerow([int(step)] + [_cell(summary[k]) for k in TRACE_FIELDS])

    def sync(self) -> None:
        self.f.flush()
        os.fsync(self.f.fileno())

    def close(self) -> None:
        self.f.close()


def read_traces(out_dir: str | os.PathLike) -> dict[str, np.ndarray]:
    """``out_dir/traces.csv`` as numpy columns: ``step`` int64 (R,), the others float64 (R,), NaN where empty."""
    path = Path(out_dir) / TRACES
    if not path.exists():
        raise FileNotFoundError(f"no {TRACES} in {out_dir}: only Reactor runs (agent reactor) write one")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    out = {"step": np.array([int(r["step"]) for r in rows], np.int64)}
    for k in TRACE_FIELDS:
        out[k] = np.array([float(r[k]) if r[k] else np.nan for r in rows], np.float64)
    return out
