"""bsuite's own CSV log of a DeepSea run, from the kit's ``log.csv``, and back (pure functions).

bsuite 0.3.6 logs a run through ``bsuite/utils/wrappers.py::Logging`` into
``bsuite/logging/csv_logging.py::Logger``: one file per bsuite_id in a results folder, named
``bsuite_id_-_<id with "/" as "-">.csv`` (:func:`bsuite_file_name`: DeepSea-24 is ``deep_sea/7``, so
``bsuite_id_-_deep_sea-7.csv``), with one row at each of bsuite's logged episodes (1, ..., 10, 12, 14,
17, 20, 25, 30, 40, ...: :func:`pcnn_explore.envs.deep_sea_protocol.bsuite_logged_episodes`) and the
columns :data:`BSUITE_COLUMNS`, in that order:

- ``steps``: transitions so far (the sum of the episodes' lengths: N per DeepSea-N episode);
- ``episode``: episodes so far (1-based: the row is written at that episode's end);
- ``total_return``: the sum of every reward so far (the episodes' returns summed);
- ``episode_len`` / ``episode_return``: the length and return of that episode;
- ``total_bad_episodes``: episodes so far that left the diagonal (on the deterministic DeepSea,
  exactly the episodes without the +1, :data:`~pcnn_explore.envs.deep_sea_protocol.SUCCESS_RETURN`);
- ``denoised_return``: the +1s so far (bsuite's ``bsuite_info()``; the move costs left out).

bsuite's loader (``bsuite/logging/csv_load.py::load_one_result_set``) adds ``bsuite_id`` (from the
file name) and ``results_dir``, then the sweep's ``size``; the file itself has no such column. A
results folder holds one agent's run of each size (one seed of one variant); bsuite's analysis
(``experiments/deep_sea/analysis.py``) finds a size solved at the first logged row whose
``total_bad_episodes / episode < 0.9`` within 10K episodes, and scores the share of sizes solved before
2^N + 100: :func:`bsuite_log_solve_episode` and :func:`score_bsuite_logs` do the same here, with the
kit's rule (:mod:`pcnn_explore.envs.deep_sea_protocol`).

Only bsuite's sizes (N = 10, 12, ..., 50 with mapping seed 42) have a bsuite_id; :func:`bsuite_id`
raises for any other. Floats are written as Python's shortest round-trip text (pandas writes
``denoised_return`` as an int until the first +1; the values are the same). The kit's ``return``
column holds 6 significant digits, so ``total_return`` matches bsuite's to about 1e-8 an episode.
"""
from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path
from typing import Mapping

import numpy as np

from pcnn_explore.envs.deep_sea_protocol import (PROTOCOL_EPISODES, PROTOCOL_SIZES, SUCCESS_RETURN, below_bad_ratio,
                                                 bsuite_logged_episodes, deep_sea_score)

__all__ = ["BSUITE_COLUMNS", "BSUITE_PREFIX", "bsuite_id", "bsuite_file_name", "size_of_bsuite_file", "bsuite_rows",
           "bsuite_csv_text", "write_bsuite_log", "read_bsuite_log", "bsuite_log_solve_episode", "score_bsuite_logs"]

#: the columns of bsuite's csv log of a DeepSea run, in the order its Logging wrapper writes them
BSUITE_COLUMNS = ("steps", "episode", "total_return", "episode_len", "episode_return", "total_bad_episodes",
                  "denoised_return")
_INTS = ("steps", "episode", "episode_len", "total_bad_episodes")
#: bsuite's file-name prefix (``csv_logging.BSUITE_PREFIX``: ``'bsuite_id' + '_-_'``)
BSUITE_PREFIX = "bsuite_id_-_"
_FILE = re.compile(r"^bsuite_id_-_deep_sea-(\d+)\.csv$")


def bsuite_id(size: int) -> str:
    """bsuite's id of DeepSea-``size``: ``deep_sea/<k>`` with k its place among N = 10, 12, ..., 50
    (``experiments/deep_sea/sweep.py``: 10 -> ``deep_sea/0``, 24 -> ``deep_sea/7``, 50 -> ``deep_sea/20``).
    ValueError for a size bsuite does not run."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or int(size) not in PROTOCOL_SIZES:
        raise ValueError(f"bsuite's deep_sea runs N = 10, 12, ..., 50 only; DeepSea-{size} has no bsuite_id")
    return f"deep_sea/{PROTOCOL_SIZES.index(int(size))}"


def bsuite_file_name(size: int) -> str:
    """The file bsuite's csv logger writes for DeepSea-``size``: ``bsuite_id_-_deep_sea-<k>.csv``."""
    return BSUITE_PREFIX + bsuite_id(size).replace("/", "-") + ".csv"


def size_of_bsuite_file(path: str | os.PathLike) -> int:
    """N of a ``bsuite_id_-_deep_sea-<k>.csv`` file name (ValueError for any other name)."""
    m = _FILE.match(Path(path).name)
    if not m or int(m.group(1)) >= len(PROTOCOL_SIZES):
        raise ValueError(f"{Path(path).name} is not bsuite's log of a deep_sea size (bsuite_id_-_deep_sea-<0..20>.csv)")
    return PROTOCOL_SIZES[int(m.group(1))]


def bsuite_rows(log: Mapping[str, np.ndarray]) -> list[dict]:
    """The rows bsuite's Logging wrapper would write for the run of a kit log (``read_log``'s columns
    ``return``, ``length`` and ``complete``; the last row of a run cut mid-episode is left out), one
    at each of bsuite's logged episodes among the complete ones (see the module docstring)."""
    returns = np.asarray(log["return"], dtype=np.float64).reshape(-1)
    lengths = np.asarray(log["length"], dtype=np.int64).reshape(-1)
    complete = np.asarray(log["complete"], dtype=np.float64).reshape(-1)
    if not returns.shape == lengths.shape == complete.shape:
        raise ValueError(f"the log's return, length and complete columns differ in length: {returns.shape}, "
                         f"{lengths.shape}, {complete.shape}")
    keep = complete == 1
    returns, lengths = returns[keep], lengths[keep]
    wins = returns > SUCCESS_RETURN
    steps, total, bad, found = np.cumsum(lengths), np.cumsum(returns), np.cumsum(~wins), np.cumsum(wins)
    return [{"steps": int(steps[e - 1]), "episode": int(e), "total_return": float(total[e - 1]),
             "episode_len": int(lengths[e - 1]), "episode_return": float(returns[e - 1]),
             "total_bad_episodes": int(bad[e - 1]), "denoised_return": float(found[e - 1])}
            for e in bsuite_logged_episodes(int(returns.size))]


def bsuite_csv_text(rows) -> str:
    """bsuite's csv of ``rows`` (:data:`BSUITE_COLUMNS`, a header line, ``\\n`` line ends)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(BSUITE_COLUMNS)
    w.writerows([[repr(float(r[c])) if c not in _INTS else str(int(r[c])) for c in BSUITE_COLUMNS] for r in rows])
    return buf.getvalue()


def write_bsuite_log(run: str | os.PathLike | Mapping[str, np.ndarray], out_dir: str | os.PathLike,
                     size: int) -> Path | None:
    """Write bsuite's csv log of a DeepSea-``size`` run into ``out_dir`` (bsuite's results folder of
    one agent run: :func:`bsuite_file_name`) and return its path; ``run``: a run's folder (its
    ``log.csv``) or ``read_log``'s columns. None (nothing written) for a run without a complete
    episode, as bsuite's logger writes no file before its first row. ValueError for a size without a
    bsuite_id."""
    from pcnn_explore.atomic import write_text_atomic

    name = bsuite_file_name(size)
    if isinstance(run, Mapping):
        log = run
    else:
        from pcnn_explore.run.log import read_log

        log = read_log(run)
    rows = bsuite_rows(log)
    if not rows:
        return None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(out / name, bsuite_csv_text(rows))


def read_bsuite_log(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """A bsuite csv log (this module's or bsuite's own) as numpy columns: :data:`BSUITE_COLUMNS`
    (int64 for steps, episode, episode_len and total_bad_episodes; float64 else). ValueError naming
    the file (and the line) for one that is not a whole log: not UTF-8 text or not csv, without the
    columns, a row with fewer or more fields than the header or a value that is not a finite number
    (an integer where bsuite writes one), or a last line without its line end (a write cut short:
    its last number may be cut too)."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a bsuite deep_sea log (not UTF-8 text: {e.reason} at byte {e.start})") from None
    if text and not text.endswith("\n"):
        raise ValueError(f"{path}: torn (its last line has no line end: a write cut short)")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    columns: dict[str, list] = {c: [] for c in BSUITE_COLUMNS}
    try:
        missing = [c for c in BSUITE_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{path}: not a bsuite deep_sea log (missing columns {', '.join(missing)})")
        for row in reader:
            if None in row or None in row.values():  # (DictReader: None for a field missing, key None for extra ones)
                fields = sum(v is not None for k, v in row.items() if k is not None) + len(row.get(None) or ())
                raise ValueError(f"{path}: torn (line {reader.line_num} has {fields} fields, the header "
                                 f"{len(reader.fieldnames)})")
            for c in BSUITE_COLUMNS:
                columns[c].append(_number(row[c], c in _INTS, path, reader.line_num, c))
    except csv.Error as e:
        raise ValueError(f"{path}: not a bsuite deep_sea log (line {reader.line_num}: {e})") from None
    return {c: np.array(v, dtype=np.int64 if c in _INTS else np.float64) for c, v in columns.items()}


def _number(text: str, integer: bool, path, line: int, column: str) -> int | float:
    """One cell of a bsuite log: a finite number (an integer in bsuite's integer columns); ValueError naming it."""
    try:
        x = float(text)
    except ValueError:
        x = float("nan")
    if not np.isfinite(x) or (integer and not x.is_integer()):
        raise ValueError(f"{path}: torn or damaged (line {line}: {column} {text!r} is not "
                         f"{'an integer' if integer else 'a finite number'})")
    return int(x) if integer else x


def bsuite_log_solve_episode(columns: Mapping[str, np.ndarray], episodes: int = PROTOCOL_EPISODES) -> int | None:
    """The episode at which bsuite finds the size solved in its log (``find_solution``): the first
    row within ``episodes`` whose ``total_bad_episodes / episode < 0.9``; None if none. On the
    kit's log of the same run this is :func:`~pcnn_explore.envs.deep_sea_protocol.bsuite_solve_episode`."""
    e = np.asarray(columns["episode"], dtype=np.int64)
    bad = np.asarray(columns["total_bad_episodes"], dtype=np.int64)
    hit = np.flatnonzero(below_bad_ratio(bad, e) & (e >= 1) & (e <= episodes))
    return int(e[hit[0]]) if hit.size else None


def score_bsuite_logs(results_dir: str | os.PathLike, episodes: int = PROTOCOL_EPISODES) -> tuple[float, dict]:
    """(the deep-sea score, ``{N: solve episode or None}``) of one agent run's bsuite results folder
    (every ``bsuite_id_-_deep_sea-<k>.csv`` in it), as bsuite's ``analysis.score`` counts it.
    ValueError for a folder without one."""
    found = {size_of_bsuite_file(p): p for p in sorted(Path(results_dir).glob(BSUITE_PREFIX + "deep_sea-*.csv"))}
    if not found:
        raise ValueError(f"{results_dir}: no bsuite deep_sea log (bsuite_id_-_deep_sea-<k>.csv) in it")
    solves = {n: bsuite_log_solve_episode(read_bsuite_log(p), episodes) for n, p in sorted(found.items())}
    return deep_sea_score(solves, episodes), solves
