"""The run's episode log, ``out_dir/log.csv``: one row per episode (:data:`LOG_COLUMNS`; ``step`` is
the agent step at which the episode ended, ``length`` its agent steps; the last row of a run whose
budget ends mid-episode has ``complete = 0``). The files of a run: :mod:`pcnn_explore.run.checkpoints`.
"""
from __future__ import annotations

import csv
import math
import os
import sys
from pathlib import Path

import numpy as np

from pcnn_explore.atomic import write_text_atomic
from pcnn_explore.checks import RunError

__all__ = ["LOG", "LOG_COLUMNS", "LATER_COLUMNS", "LogError", "read_log", "read_rows", "truncate_log", "CsvLog"]

LOG_COLUMNS = ("step", "episode", "return", "length", "complete", "intrinsic_return", "intrinsic_mean",
               "prediction_gain_mean", "epsilon", "td_loss", "wall_seconds", "distinct_cells", "first_success_step",
               "density_updates", "epsilon_used")
#: columns added after logs were written without them (they read as NaN in those rows)
LATER_COLUMNS = ("epsilon_used",)
LOG = "log.csv"


def read_log(out_dir: str | os.PathLike, warn=None) -> dict[str, np.ndarray]:
    """``out_dir/log.csv`` as a dict of numpy columns (int64 for step/episode/length/complete, else float64).

    A damaged log (:func:`read_rows`): a torn last row (a write the run did not finish: the line
    has no end) is left out, with one warning (``warn(text)``; default: one line on stderr); any
    other row that cannot be read raises :class:`LogError` naming the file and the line. Columns
    added after a log was written (:data:`LATER_COLUMNS`) read as NaN there."""
    path = Path(out_dir) / LOG
    if not path.exists():
        raise FileNotFoundError(f"no training log at {path}: run train() with out_dir={str(out_dir)!r} first")
    rows = read_rows(path, warn=warn)
    ints = {"step", "episode", "length", "complete"}
    out = {}
    for name in LOG_COLUMNS:
        values = [r.get(name) for r in rows]
        if name in ints:
            out[name] = np.array(values, dtype=np.int64)
        else:
            out[name] = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    return out


class LogError(RunError):
    """A ``log.csv`` (or ``traces.csv``) line that cannot be read: the text names the file and the line."""


_warned: set = set()


def _warn_once(text: str, key) -> None:
    if key not in _warned:  # a report or a resume may read one log more than once
        _warned.add(key)
        print(f"pcnn-explore: warning: {text}", file=sys.stderr, flush=True)


def read_rows(path: str | os.PathLike, columns: tuple[str, ...] = LOG_COLUMNS, warn=None) -> list[dict]:
    """The rows of a log CSV as dicts of numbers (the ``columns`` its header has; ints in the int
    columns, floats elsewhere, ``""`` and ``nan`` as NaN).

    The writer ends every row with a newline, so a last line without one is a row the run did not
    finish writing (killed mid-write): it is left out, and ``warn(text)`` (default: one line on
    stderr, once per file state) says so. Any other line that does not parse (wrong number of
    fields, a value that is no number, a header that is not the log's) raises :class:`LogError`
    naming the file and the line number."""
    return [row for row, _ in _parse(Path(path), columns, warn)[1]]


def _parse(path: Path, columns: tuple[str, ...], warn) -> tuple[list[str], list[tuple[dict, str]]]:
    """(header, [(row, its line's text)]) of a log CSV; see :func:`read_rows`."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    torn = lines.pop()  # b"" when the file ends in a newline
    header, rows = _parse_lines(path, lines, columns)
    if torn:  # (said once the rest has been read: an unreadable line is the one message)
        text = (f"{path}: its last line ({len(lines) + 1}) is a torn row (written only in part: the run stopped "
                f"mid-write); it is left out")
        if warn is not None:
            warn(text)
        else:
            st = path.stat()
            _warn_once(text, (str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns))
    return header, rows


def _parse_lines(path: Path, lines: list[bytes], columns: tuple[str, ...]) -> tuple[list[str], list[tuple[dict, str]]]:
    if not lines:  # an empty file, or a torn header alone: no rows
        return list(columns), []
    try:
        header = lines[0].decode("utf-8").rstrip("\r").split(",")
    except UnicodeDecodeError:
        header = []
    required = len([c for c in columns if c not in LATER_COLUMNS])
    if not required <= len(header) <= len(columns) or header != list(columns[:len(header)]):
        raise LogError(f"{path}, line 1: the header is not a log's ({','.join(columns)}): the file is damaged; "
                       "restore it from a copy, or start a fresh run with another --out")
    ints = {"step", "episode", "length", "complete"}
    rows = []
    for number, raw in enumerate(lines[1:], start=2):
        try:
            line = raw.decode("utf-8").rstrip("\r")
            if not line.strip():
                continue  # (csv's reader skips blank lines too)
            values = next(csv.reader([line]))
            if not required <= len(values) <= len(header):  # (a row without the later columns: NaN there)
                raise ValueError(f"{len(values)} fields where the header has {len(header)}")
            row = {name: (int(v) if name in ints else float(v) if v not in ("", "nan") else math.nan)
                   for name, v in zip(header, values)}
        except (ValueError, UnicodeDecodeError) as e:
            reason = " ".join(str(e).split()) or type(e).__name__
            raise LogError(f"{path}, line {number}: cannot read this row ({reason}): the file is damaged; "
                           "restore the file from a copy, or correct that line by hand") from None
        rows.append((row, line))
    return header, rows


def truncate_log(path: Path, last_step: int, columns: tuple[str, ...] = LOG_COLUMNS) -> None:
    """Keep the header and the rows with step <= last_step (rewritten atomically); a fresh header if
    absent. ``columns``: the CSV's header (log.csv's by default; traces.csv gives its own). A torn
    last row is dropped (:func:`read_rows`, with its warning), an unreadable row raises
    :class:`LogError`; the rows kept are written back as they were, with an empty field (NaN) for
    each column added since they were written."""
    lines = [",".join(columns)]
    if path.exists():
        lines += [line + "," * (len(columns) - len(row)) for row, line in _parse(path, columns, None)[1]
                  if row["step"] <= last_step]
    write_text_atomic(path, "\n".join(lines) + "\n")


def _text(v) -> str | int:
    """A value as :class:`CsvLog` writes it (ints as they are, floats to 6 significant digits)."""
    return f"{v:.6g}" if isinstance(v, float) else v


class CsvLog:
    """Appends one row per episode to ``log.csv`` (created with its header by :func:`truncate_log`)."""

    def __init__(self, path: Path):
        self.f = open(path, "a", newline="")
        self.w = csv.DictWriter(self.f, fieldnames=LOG_COLUMNS, lineterminator="\n")

    def write(self, row: dict) -> None:
        self.w.writerow({k: _text(v) for k, v in row.items()})
        self.f.flush()

    def sync(self) -> None:
        """Put the rows written so far on disk (before a checkpoint commits: the log on disk then
        covers at least the checkpoint's steps)."""
        self.f.flush()
        os.fsync(self.f.fileno())

    def close(self) -> None:
        self.f.close()
