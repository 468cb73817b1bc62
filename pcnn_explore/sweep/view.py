"""The live view of a sweep: a compact table of its trials that refreshes on a terminal, plain
lines (one per change of a trial's status, and a count now and then) anywhere else.

A trial's record is the dict of ``sweep.json`` (see :mod:`pcnn_explore.sweep.records`): ``name``,
``status`` (queued, running, done, failed), ``steps`` done and ``steps_total`` (agent steps),
``steps_per_s`` (agent steps per second in the current attempt), ``attempts``, ``error``.
"""
from __future__ import annotations

import sys
import time
from typing import IO, Sequence

__all__ = ["STATUSES", "counts_line", "table_lines", "SweepView"]

STATUSES = ("queued", "running", "done", "failed")


def counts_line(records: Sequence[dict]) -> str:
    """``4 trials: 1 queued, 2 running, 1 done, 0 failed``."""
    n = {s: 0 for s in STATUSES}
    for r in records:
        n[r["status"]] = n.get(r["status"], 0) + 1
    return f"{len(records)} trials: " + ", ".join(f"{n[s]} {s}" for s in STATUSES)


def _steps(r: dict) -> str:
    return f"{r.get('steps') or 0:,}/{r.get('steps_total') or 0:,}"


def _rate(r: dict) -> str:
    v = r.get("steps_per_s")
    return f"{v:,.1f}" if isinstance(v, (int, float)) and v == v else "-"


def table_lines(records: Sequence[dict], max_rows: int = 20) -> list[str]:
    """The counts, then a row per running and failed trial (then queued, then done, up to ``max_rows``)."""
    order = {"running": 0, "failed": 1, "queued": 2, "done": 3}
    rows = sorted(records, key=lambda r: order.get(r["status"], 4))[:max_rows]
    width = max([len("trial")] + [len(r["name"]) for r in rows])
    lines = [counts_line(records), f"{'trial':{width}s}  {'status':7s} {'steps':>21s} {'steps/s':>9s} {'tries':>5s}"]
    for r in rows:
        lines.append(f"{r['name']:{width}s}  {r['status']:7s} {_steps(r):>21s} {_rate(r):>9s} {r.get('attempts', 0):5d}")
    if len(records) > len(rows):
        lines.append(f"... {len(records) - len(rows)} more")
    return lines


class SweepView:
    """Prints a sweep's progress to ``stream`` (default stdout); ``tty`` None: ask the stream."""

    def __init__(self, stream: IO[str] | None = None, tty: bool | None = None, every_s: float = 30.0):
        self.stream = stream or sys.stdout
        self.tty = bool(self.stream.isatty()) if tty is None else tty
        self.every_s, self._drawn, self._last_count, self._status = every_s, 0, 0.0, {}

    def update(self, records: Sequence[dict], force: bool = False) -> None:
        if self.tty:
            lines = table_lines(records)
            up = f"\x1b[{self._drawn}F" if self._drawn else ""
            self.stream.write(up + "".join(f"\x1b[2K{line}\n" for line in lines))
            if len(lines) < self._drawn:  # clear what the last, longer table left below
                self.stream.write("".join("\x1b[2K\n" for _ in range(self._drawn - len(lines))))
                self.stream.write(f"\x1b[{self._drawn - len(lines)}F")
            self._drawn = len(lines)
        else:
            for r in records:
                before = self._status.get(r["name"])
                if before != r["status"] and self._status:  # the first update: the counts only
                    extra = f"  {r['error']}" if r["status"] == "failed" and r.get("error") else ""
                    self.stream.write(f"{time.strftime('%H:%M:%S')} {r['status']:7s} {r['name']}  "
                                      f"{_steps(r)} steps  {_rate(r)} steps/s{extra}\n")
            now = time.monotonic()
            if force or now - self._last_count >= self.every_s:
                self.stream.write(f"{time.strftime('%H:%M:%S')} {counts_line(records)}\n")
                self._last_count = now
        self._status = {r["name"]: r["status"] for r in records}
        self.stream.flush()
