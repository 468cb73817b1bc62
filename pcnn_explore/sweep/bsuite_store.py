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
episode cap and, per line, the training profile and the resolved settings that change a run's
results (:func:`result_settings`: every TrainConfig setting but :data:`OUTSIDE_RESULTS`, such as the
device, the threads or the output folder) its logs were made with; a run that differs in any of them
is refused (ValueError naming each difference, ``setting: stored -> given``) rather than mixed in. A
store from before settings were recorded has its lines taken as today's named lines
(:func:`named_settings`), said once in one line, and recorded so. Only bsuite's tasks have a log:
the sizes N = 10, 12, ..., 50 on bsuite's map (mapping seed 42, bsuite's draw).

One process writes a store at a time (:class:`StoreLock`: ``fcntl.flock`` on ``STORE/run.lock`` through
:class:`pcnn_explore.run.lock.RunLock`, held by a sweep from its plan to its end): another is refused at
once naming the holder's process id (a single record waits a few seconds for one); a lock file left
by a process that is gone is taken over, said in one line. ``store.json`` is written atomically under
the lock. A torn, partial or unreadable log (a write cut short: a last line without its line end, a
row with too few fields, a value that is no number) is named in one line and left out: it is run
again (:func:`stored`).

:func:`scaling_rows` reads the store back as the rows of
:data:`pcnn_explore.sweep.deep_sea_report.SCALING_COLUMNS`. A bsuite log holds bsuite's logged
episodes only, so ``solve_episode`` there is the logged episode at which bsuite finds the rule
(``bsuite_solve_episode``), not the exact episode the rule first held.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from pcnn_explore.envs.bsuite_log import (BSUITE_PREFIX, bsuite_file_name, bsuite_log_solve_episode, read_bsuite_log,
                                          size_of_bsuite_file, write_bsuite_log)
from pcnn_explore.envs.deep_sea_protocol import PROTOCOL_SIZES, solved_in_time
from pcnn_explore.sweep.store_lock import StoreLock, probe

__all__ = ["STORE_FILE", "OUTSIDE_RESULTS", "LOCK_WAIT_S", "log_path", "finished", "result_settings", "named_settings",
           "settings_differences", "differences_text", "check_map", "read_manifest", "check_manifest", "adopt",
           "named_line_differences", "label_with_differences", "stored", "pending", "keep",
           "scaling_rows"]

#: the store's record of what made its logs: ``{"episodes": cap, "mapping": ..., "lines": {line: {"profile": ...,
#: "settings": {...}}}}``
STORE_FILE = "store.json"
#: TrainConfig settings a line's record leaves out, as they do not change a run's results: where and how
#: fast it runs (``device``, ``num_threads``, ``bonus_thread``; ``learn_step``: the numpy and torch steps
#: are one step, equal to float32 rounding, as on another device), what it writes beside its log
#: (``out_dir``, ``tensorboard``, ``log_every``, ``checkpoint_every``), and what the store keys or
#: records on its own (``env`` and ``seed``: the log's place; ``steps``: N x the episode cap;
#: ``profile``; ``stop_when_solved``: bsuite's rule finds the same solve episode in a log cut at it)
OUTSIDE_RESULTS = ("env", "seed", "steps", "profile", "out_dir", "device", "num_threads", "bonus_thread", "learn_step",
                   "checkpoint_every", "log_every", "tensorboard", "stop_when_solved")
#: seconds a single record (:func:`keep`) waits for a store another process holds before it is refused
LOCK_WAIT_S = 10.0
_LINE = re.compile(r"^[A-Za-z0-9._=,-]+$")
_SEED = re.compile(r"^seed(\d+)$")
_PER_SIZE = "per size N: {}"
_NOT_RECORDED = object()


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


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


# ------------------------------------------------------------------------------------ settings
def result_settings(config: Mapping[str, Any], line: str) -> dict[str, Any]:
    """The settings of a run that change its results, from its resolved TrainConfig (``settings.json``,
    ``TrainConfig.to_dict()``): every one but :data:`OUTSIDE_RESULTS`, as ``store.json`` holds them. A
    setting the named line of ``line`` sets per DeepSea size (``paper_cts_horizon``'s bonus scale) reads
    ``"per size N: <rule>"`` where the run has the rule's value at its N, so one record holds for every size."""
    from pcnn_explore.envs.deep_sea import deep_sea_size
    from pcnn_explore.run.lines import LINES, SIZE_RULES

    out = {k: v for k, v in config.items() if k not in OUTSIDE_RESULTS}
    named, n = LINES.get(str(line).partition(",")[0]), deep_sea_size(config.get("env"))
    for field, rule in (named.per_size if named is not None and n is not None else ()):
        if field in out and out[field] == SIZE_RULES[rule](n):
            out[field] = _PER_SIZE.format(rule)
    return json.loads(json.dumps(out, sort_keys=True))


def named_settings(line: str, profile: str = "study") -> dict[str, Any]:
    """Today's :func:`result_settings` of the store line ``line`` on DeepSea with ``profile``'s preset: a
    named line of :data:`pcnn_explore.run.lines.LINES` or a variant, with the settings a sweep's line name
    adds after commas (``dqn,lr=0.5``). ValueError for a name that is neither."""
    from pcnn_explore.run.config import TrainConfig
    from pcnn_explore.run.lines import LINES
    from pcnn_explore.run.variants import check_variant, variant_overrides
    from pcnn_explore.sweep.grid import parse_value

    base, *rest = str(line).split(",")
    env = "DeepSea-10-v0"
    if base in LINES:
        variant, fields = LINES[base].variant, LINES[base].fields_for(env)
    else:
        variant, fields = check_variant(base), {}
    for item in rest:
        name, _, value = item.partition("=")
        fields[name] = parse_value(name, value, f"the store's line {line}")
    cfg = TrainConfig.preset(profile, env=env, **{**variant_overrides(variant), **fields})
    return result_settings(cfg.to_dict(), line)


def _show(value: Any) -> str:
    if value is _NOT_RECORDED:
        return "not recorded"
    return "auto" if value is None else value if isinstance(value, str) else json.dumps(value)


def settings_differences(held: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """``{setting: (held, given)}`` for each setting on which two records of :func:`result_settings`
    differ, sorted. A setting one of them lacks reads as the value of a run from before it existed
    (:data:`pcnn_explore.run.config.SETTINGS_SINCE`) where there is one, else as not recorded."""
    from pcnn_explore.run.config import SETTINGS_SINCE, backfill

    def full(record: Mapping) -> dict:
        filled, _ = backfill({"env": "DeepSea-10-v0", **record})
        return {k: v for k, v in filled.items() if (k in record or k in SETTINGS_SINCE) and k not in OUTSIDE_RESULTS}

    a, b = full(held), full(given)
    out = {}
    for k in sorted(set(a) | set(b)):
        x, y = a.get(k, _NOT_RECORDED), b.get(k, _NOT_RECORDED)
        if x is _NOT_RECORDED or y is _NOT_RECORDED or json.dumps(x) != json.dumps(y) and x != y:
            out[k] = (x, y)
    return out


def differences_text(differences: Mapping[str, tuple[Any, Any]]) -> str:
    """``lr: 0.001 -> 0.5; mapping_rule: bsuite -> kit_v1`` (:func:`settings_differences`)."""
    return "; ".join(f"{k}: {_show(a)} -> {_show(b)}" for k, (a, b) in differences.items())


def check_map(settings: Mapping[str, Any], what: str) -> None:
    """ValueError (naming ``what``) for settings not on bsuite's map (mapping seed 42, bsuite's draw)."""
    from pcnn_explore.envs.deep_sea import DEFAULT_MAPPING_RULE, DEFAULT_MAPPING_SEED

    seed, rule = settings.get("mapping_seed"), settings.get("mapping_rule")
    if seed != DEFAULT_MAPPING_SEED or rule != DEFAULT_MAPPING_RULE:
        raise ValueError(f"a bsuite store keeps runs on bsuite's map (mapping seed {DEFAULT_MAPPING_SEED}, rule "
                         f"{DEFAULT_MAPPING_RULE}); {what} has mapping seed {seed}, rule {rule}: leave "
                         "mapping_seed and mapping_rule unset")


# ------------------------------------------------------------------------------------ store.json
def read_manifest(store: str | os.PathLike) -> dict[str, Any]:
    """``STORE/store.json`` ({} where the store has none yet); ValueError for one that is not a record."""
    path = Path(store) / STORE_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except ValueError as e:
        raise ValueError(f"{path} is not readable JSON ({e}): restore it from git (git checkout -- {path})") from None
    lines = data.get("lines", {}) if isinstance(data, dict) else None
    if not isinstance(lines, dict) or not all(isinstance(r, dict) and isinstance(r.get("settings", {}), dict)
                                              for r in lines.values()):
        raise ValueError(f"{path} is not a store record ({{'episodes': cap, 'lines': {{line: {{'profile': ..., "
                         "'settings': {...}}}}): restore it from git")
    return data


def _complete(data: dict[str, Any]) -> list[str]:
    """Give each line of a store record that has no settings (a store from before they were recorded)
    today's named line's (:func:`named_settings`, at its profile); the lines so taken. A line whose name
    is no named line nor variant is left as it is."""
    taken = []
    for line, record in sorted(data.get("lines", {}).items()):
        if "settings" not in record:
            try:
                record["settings"] = named_settings(line, record.get("profile") or "study")
            except ValueError:
                continue
            taken.append(line)
    return taken


def _said_taken(store, taken: list[str], written: bool) -> None:
    if taken:
        _say(f"{store} records no settings for its lines (a store from before they were recorded): "
             f"{', '.join(taken)} taken as today's named lines" + ("; their settings recorded in " + STORE_FILE
                                                                  if written else " (a run records them)"))


def check_manifest(store: str | os.PathLike, lines: Mapping[str, str], cap: int,
                   settings: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """Refuse (ValueError, naming the fix) runs with another episode cap than the store's, a line whose
    runs used another training profile (``lines``: line -> profile), or other settings (``settings``:
    line -> :func:`result_settings`; each difference named ``setting: stored -> given``). A line of a
    store from before settings were recorded holds today's named line's (:func:`named_settings`)."""
    data = read_manifest(store)
    _complete(data)
    if data.get("episodes") not in (None, int(cap)):
        raise ValueError(f"the store {store} holds runs of {data['episodes']} episodes and these run {cap}: give "
                         "another store folder, or the store's episode cap")
    for line, profile in lines.items():
        had = (data.get("lines", {}).get(line) or {}).get("profile")
        if had not in (None, profile):
            raise ValueError(f"the store {store} holds line {line!r} trained with the {had!r} profile and these runs "
                             f"use {profile!r}: give another store folder, or the {had!r} profile")
    for line, given in (settings or {}).items():
        had = (data.get("lines", {}).get(line) or {}).get("settings")
        differ = settings_differences(had, given) if had is not None else {}
        if differ:
            raise ValueError(f"the store {store} holds line {line!r} made with other settings than these runs' "
                             f"({differences_text(differ)}): give another store folder, or the store's settings")


def _record(store: Path, lines: Mapping[str, str], cap: int | None,
            settings: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """Record the cap and, per line, the profile (``lines``) and settings (``settings``; a line given
    none: today's named line's) in ``store.json``, atomically, holding the store (:class:`StoreLock`);
    the lines of a store from before settings were recorded get theirs too, said in one line."""
    from pcnn_explore.atomic import write_text_atomic

    store = Path(store)
    with StoreLock(store, wait_s=LOCK_WAIT_S):
        data = read_manifest(store)
        taken = _complete(data)
        if cap is not None:
            data["episodes"] = int(cap)
        data.setdefault("mapping", "bsuite's map: mapping seed 42, bsuite's draw")
        given = {k: {"profile": p, "settings": dict((settings or {}).get(k) or named_settings(k, p))}
                 for k, p in lines.items()}
        data["lines"] = dict(sorted({**data.get("lines", {}), **given}.items()))
        store.mkdir(parents=True, exist_ok=True)
        write_text_atomic(store / STORE_FILE, json.dumps(data, indent=1, sort_keys=True) + "\n")
        _said_taken(store, taken, True)


def adopt(store: str | os.PathLike, write: bool = True) -> list[str]:
    """A store from before settings were recorded: its lines taken as today's named lines
    (:func:`named_settings`), said in one line on stderr and, with ``write``, recorded in ``store.json``
    (under the store's lock); the lines so taken ([] for a store that records its settings, or none)."""
    data = read_manifest(store)
    taken = _complete(data)
    if taken and write:
        _record(Path(store), {}, None)
    elif taken:
        _said_taken(store, taken, False)
    return taken


def named_line_differences(store: str | os.PathLike) -> dict[str, dict[str, tuple[Any, Any]]]:
    """Per line of the store whose recorded settings differ from today's named line's (a line run with
    ``--set``): ``{line: {setting: (the named line's, the store's)}}`` (:func:`settings_differences`)."""
    data = read_manifest(store)
    _complete(data)
    out = {}
    for line, record in data.get("lines", {}).items():
        try:
            named = named_settings(line, record.get("profile") or "study")
        except ValueError:
            continue
        differ = settings_differences(named, record.get("settings", named))
        if differ:
            out[line] = differ
    return out


def label_with_differences(label: str, differences: Mapping[str, tuple[Any, Any]] | None) -> str:
    """A line's label naming the settings its runs took other than the named line's
    (:func:`named_line_differences`' ``{setting: (named, run)}``): ``DQN (run with lr 0.5, the named line's
    0.001)``; the label alone where there are none."""
    if not differences:
        return label
    return f"{label} (run with " + "; ".join(f"{k} {_show(b)}, the named line's {_show(a)}"
                                             for k, (a, b) in differences.items()) + ")"


# ------------------------------------------------------------------------------------ logs
_NAMED: set = set()  # torn logs already named by this process: (path, size, mtime)


def _name_torn(path: Path, error: Exception) -> None:
    try:
        st = path.stat()
        key = (str(path), st.st_size, st.st_mtime_ns)
    except OSError:
        key = (str(path), None, None)
    if key not in _NAMED:
        _NAMED.add(key)
        _say(f"pcnn-explore: warning: {error}: left out of the store's results, a run missing (a sweep into the "
             "store runs it again)")


def stored(store: str | os.PathLike, cap: int) -> dict[tuple[str, int, int], Path]:
    """The finished logs in the store: ``{(line, seed, N): path}``. Unfinished logs are left out, and so
    are torn, partial or unreadable ones, each named in one line on stderr: all are run again."""
    root, out = Path(store), {}
    if not root.is_dir():
        return out
    for path in sorted(root.glob(f"*/seed*/{BSUITE_PREFIX}deep_sea-*.csv")):
        seed = _SEED.match(path.parent.name)
        if seed is None:
            continue
        try:
            size = size_of_bsuite_file(path)
            done = finished(read_bsuite_log(path), cap)
        except (ValueError, OSError) as e:
            _name_torn(path, e)
            continue
        if done:
            out[(path.parent.parent.name, int(seed.group(1)), size)] = path
    return out


def pending(keys, store: str | os.PathLike, cap: int) -> list[int]:
    """The places in ``keys`` (``(line, seed, N)`` each) whose finished log is not in the store."""
    done = stored(store, cap)
    return [i for i, (line, seed, size) in enumerate(keys) if (line, int(seed), int(size)) not in done]


def _run_settings(run_dir: Path, line: str, profile: str) -> dict[str, Any]:
    """:func:`result_settings` of the run in ``run_dir`` (its ``settings.json``); today's named line's
    (:func:`named_settings`) for a folder without one."""
    from pcnn_explore.run.settings import SETTINGS

    path = run_dir / SETTINGS
    if not path.is_file():
        return named_settings(line, profile)
    try:
        config = json.loads(path.read_text())
    except ValueError as e:
        raise ValueError(f"{path} is not readable JSON ({e}): run the trial again") from None
    if not isinstance(config, dict):
        raise ValueError(f"{path} is not a run's settings: run the trial again")
    return result_settings(config, line)


def keep(store: str | os.PathLike, line: str, seed: int, size: int, run_dir: str | os.PathLike, cap: int,
         profile: str) -> Path | None:
    """Write the bsuite log of the run in ``run_dir`` (its ``log.csv``; DeepSea-``size``, bsuite's map)
    into the store, where it is finished (:func:`finished`), and record the cap, the line's profile and
    its settings (the run's ``settings.json``: :func:`result_settings`) in ``store.json``, holding the
    store (:class:`StoreLock`, waiting :data:`LOCK_WAIT_S` for another process's hold); its path, or None
    for a run not finished (or with no log yet), which stays out of the store. ValueError for a cap,
    profile or settings other than the store's line's, or a run off bsuite's map; RunError for a store
    another process holds."""
    from pcnn_explore.envs.bsuite_log import bsuite_rows
    from pcnn_explore.run.log import read_log

    target = log_path(store, line, seed, size)
    if not (Path(run_dir) / "log.csv").is_file():
        return None
    settings = _run_settings(Path(run_dir), line, profile)
    check_map(settings, f"the run in {run_dir}")
    check_manifest(store, {line: profile}, cap, {line: settings})
    log = read_log(run_dir)
    done = np.flatnonzero(np.asarray(log["complete"]) == 1)
    if done.size > cap:  # the protocol's first episodes only
        log = {k: np.asarray(v)[: done[cap - 1] + 1] for k, v in log.items()}
    rows = bsuite_rows(log)
    columns = {"episode": np.array([r["episode"] for r in rows], dtype=np.int64),
               "total_bad_episodes": np.array([r["total_bad_episodes"] for r in rows], dtype=np.int64)}
    if not rows or not finished(columns, cap):
        return None
    with StoreLock(store, wait_s=LOCK_WAIT_S):
        check_manifest(store, {line: profile}, cap, {line: settings})  # (again: another process may have written)
        _record(Path(store), {line: profile}, cap, {line: settings})
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
