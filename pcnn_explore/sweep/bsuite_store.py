"""A store of finished bsuite deep-sea logs that outlives the runs: bsuite's protocol done over sessions.

bsuite's deep-sea protocol (21 sizes, 10,000 episodes each, a few seeds per line) takes core-hours
per line and seed, more than one session or one machine gives. The store is a folder of small csv
files, one per line, seed and size, each in bsuite's own format
(:mod:`pcnn_explore.envs.bsuite_log`), that a run adds to as each size finishes and that is
committed with the report:

    STORE/store.json                                     what made the logs (see below)
    STORE/<line>/seed<k>/bsuite_id_-_deep_sea-<i>.csv    one finished run of DeepSea-N (i = (N - 10) / 2)

Each ``STORE/<line>/seed<k>/`` is one bsuite results folder (one agent run over the sizes), so
bsuite's own loader and analysis read it as they read bsuite's published results.

A log is *finished* (:func:`finished`) when bsuite's rule holds at one of its rows within the
episode cap (the run stopped at that logged episode: ``stop_when_solved``), or its last row reaches
the cap. Only finished logs enter the store (:func:`keep`); a line, seed and size whose finished log
is in the store is not run again (:func:`pending`), so the same command, on this machine or another
one holding the committed store, goes on where the last one stopped. ``store.json`` records the
episode cap and, per line, the training profile its runs used; a run that differs in either is
refused (ValueError) rather than mixed in. Only bsuite's tasks have a log: the sizes N = 10, 12, ...,
50 on bsuite's map (mapping seed 42, bsuite's draw).

:func:`scaling_rows` reads the store back as the rows of
:data:`pcnn_explore.sweep.deep_sea_report.SCALING_COLUMNS`. A bsuite log holds bsuite's logged
episodes only, so ``solve_episode`` there is the logged episode at which bsuite finds the rule
(``bsuite_solve_episode``), not the exact episode the rule first held.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from pcnn_explore.envs.bsuite_log import (BSUITE_PREFIX, bsuite_file_name, bsuite_log_solve_episode, read_bsuite_log,
                                          size_of_bsuite_file, write_bsuite_log)
from pcnn_explore.envs.deep_sea_protocol import PROTOCOL_SIZES, solved_in_time

__all__ = ["STORE_FILE", "log_path", "finished", "read_manifest", "check_manifest", "stored", "pending", "keep",
           "scaling_rows"]

#: the store's record of what made its logs: ``{"episodes": cap, "lines": {line: {"profile": ...}}}``
STORE_FILE = "store.json"
_LINE = re.compile(r"^[A-Za-z0-9._=,-]+$")
_SEED = re.compile(r"^seed(\d+)$")


def _check_key(line: str, seed: int, size: int) -> None:
    if not isinstance(line, str) or not _LINE.match(line):
        raise ValueError(f"a store's line is a folder name of letters, digits and ._=,- , got {line!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if size not in PROTOCOL_SIZES:
        raise ValueError(f"only bsuite's deep-sea sizes N = 10, 12, ..., 50 have a bsuite log, got N = {size!r}")


def log_path(store: str | os.PathLike, line: str, seed: int, size: int) -> Path:
    """``STORE/<line>/seed<seed>/bsuite_id_-_deep_sea-<i>.csv`` (ValueError for a size bsuite does not run)."""
    _check_key(line, seed, size)
    return Path(store) / line / f"seed{int(seed)}" / bsuite_file_name(int(size))


def finished(columns: Mapping[str, np.ndarray], cap: int) -> bool:
    """Whether a bsuite log (:func:`~pcnn_explore.envs.bsuite_log.read_bsuite_log`'s columns) is a finished
    run with an episode cap of ``cap``: bsuite's rule holds at a row within the cap, or the last row
    reaches it."""
    episodes = np.asarray(columns["episode"], dtype=np.int64)
    if episodes.size == 0:
        return False
    return bsuite_log_solve_episode(columns, cap) is not None or int(episodes[-1]) >= int(cap)


def read_manifest(store: str | os.PathLike) -> dict[str, Any]:
    """``STORE/store.json`` ({} where the store has none yet); ValueError for one that is not a record."""
    path = Path(store) / STORE_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except ValueError as e:
        raise ValueError(f"{path} is not readable JSON ({e}): restore it from git (git checkout -- {path})") from None
    if not isinstance(data, dict) or not isinstance(data.get("lines", {}), dict):
        raise ValueError(f"{path} is not a store record ({{'episodes': cap, 'lines': {{...}}}}): restore it from git")
    return data


def check_manifest(store: str | os.PathLike, lines: Mapping[str, str], cap: int) -> None:
    """Refuse (ValueError, naming the fix) runs with another episode cap than the store's, or a line
    whose runs used another training profile (``lines``: line -> profile)."""
    data = read_manifest(store)
    if data.get("episodes") not in (None, int(cap)):
        raise ValueError(f"the store {store} holds runs of {data['episodes']} episodes and these run {cap}: give "
                         "another store folder, or the store's episode cap")
    for line, profile in lines.items():
        had = (data.get("lines", {}).get(line) or {}).get("profile")
        if had not in (None, profile):
            raise ValueError(f"the store {store} holds line {line!r} trained with the {had!r} profile and these runs "
                             f"use {profile!r}: give another store folder, or the {had!r} profile")


def _record(store: Path, lines: Mapping[str, str], cap: int) -> None:
    from pcnn_explore.atomic import write_text_atomic

    data = read_manifest(store)
    data["episodes"] = int(cap)
    data.setdefault("mapping", "bsuite's map: mapping seed 42, bsuite's draw")
    data["lines"] = {**data.get("lines", {}), **{k: {"profile": p} for k, p in lines.items()}}
    data["lines"] = dict(sorted(data["lines"].items()))
    store.mkdir(parents=True, exist_ok=True)
    write_text_atomic(store / STORE_FILE, json.dumps(data, indent=1, sort_keys=True) + "\n")


def stored(store: str | os.PathLike, cap: int) -> dict[tuple[str, int, int], Path]:
    """The finished logs in the store: ``{(line, seed, N): path}`` (unfinished or unreadable files
    are left out: they are run again)."""
    root, out = Path(store), {}
    if not root.is_dir():
        return out
    for path in sorted(root.glob(f"*/seed*/{BSUITE_PREFIX}deep_sea-*.csv")):
        seed = _SEED.match(path.parent.name)
        try:
            size = size_of_bsuite_file(path)
            done = seed is not None and finished(read_bsuite_log(path), cap)
        except (ValueError, OSError):
            continue
        if done:
            out[(path.parent.parent.name, int(seed.group(1)), size)] = path
    return out


def pending(keys, store: str | os.PathLike, cap: int) -> list[int]:
    """The places in ``keys`` (``(line, seed, N)`` each) whose finished log is not in the store."""
    done = stored(store, cap)
    return [i for i, (line, seed, size) in enumerate(keys) if (line, int(seed), int(size)) not in done]


def keep(store: str | os.PathLike, line: str, seed: int, size: int, run_dir: str | os.PathLike, cap: int,
         profile: str) -> Path | None:
    """Write the bsuite log of the run in ``run_dir`` (its ``log.csv``; DeepSea-``size``, bsuite's map)
    into the store, where it is finished (:func:`finished`), and record the cap and the line's
    profile in ``store.json``; its path, or None for a run not finished (or with no log yet), which
    stays out of the store. ValueError for a cap or profile other than the store's."""
    from pcnn_explore.envs.bsuite_log import bsuite_rows
    from pcnn_explore.run.log import read_log

    target = log_path(store, line, seed, size)
    if not (Path(run_dir) / "log.csv").is_file():
        return None
    check_manifest(store, {line: profile}, cap)
    log = read_log(run_dir)
    done = np.flatnonzero(np.asarray(log["complete"]) == 1)
    if done.size > cap:  # the protocol's first episodes only
        log = {k: np.asarray(v)[: done[cap - 1] + 1] for k, v in log.items()}
    rows = bsuite_rows(log)
    columns = {"episode": np.array([r["episode"] for r in rows], dtype=np.int64),
               "total_bad_episodes": np.array([r["total_bad_episodes"] for r in rows], dtype=np.int64)}
    if not rows or not finished(columns, cap):
        return None
    _record(Path(store), {line: profile}, cap)
    return write_bsuite_log(log, target.parent, int(size))


def scaling_rows(store: str | os.PathLike, cap: int, keys=None) -> list[dict]:
    """The store's finished logs as scaling rows (``size``, ``variant`` (the line), ``seed``,
    ``episodes_run`` (the last logged episode), ``solved``, ``solve_episode`` and
    ``bsuite_solve_episode`` (both bsuite's logged solve episode), ``counts_for_score``), in
    ``keys``' order where given (``(line, seed, N)`` each; those not in the store are left out),
    else by line, N and seed."""
    done = stored(store, cap)
    order = list(keys) if keys is not None else sorted(done, key=lambda k: (k[0], k[2], k[1]))
    rows = []
    for line, seed, size in order:
        path = done.get((line, int(seed), int(size)))
        if path is None:
            continue
        columns = read_bsuite_log(path)
        e = bsuite_log_solve_episode(columns, cap)
        rows.append({"size": int(size), "variant": line, "seed": int(seed), "episodes_run": int(columns["episode"][-1]),
                     "solved": int(e is not None), "solve_episode": e, "bsuite_solve_episode": e,
                     "counts_for_score": int(solved_in_time(int(size), e, cap))})
    return rows
