"""A trial's folder: the files a sweep keeps there besides the run's own (``log.csv``,
``settings.json``, ``checkpoint.pt``, ``policy.pt``, ``tb/``), the settings it holds, and its
preparation before the trial runs.

- ``trial.json``: the trial (env, variant, seed, line, overrides) and its resolved settings,
  written (under the folder's run lock, :mod:`pcnn_explore.run.lock`) before the run starts
  (:func:`prepare`); a folder whose stored settings differ from the requested ones is never reused
  (:class:`~pcnn_explore.sweep.grid.SweepError`, naming both), except for more ``steps``: the
  trial then resumes from its checkpoint and runs on (:func:`extends`);
- ``attempt.json``: the current attempt (its number, process id, host, start time);
- ``result.json``: written when the run has done its steps (a finished trial is skipped).
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from pcnn_explore.atomic import write_text_atomic
from pcnn_explore.checks import RunError
from pcnn_explore.sweep.grid import SweepError, Trial

__all__ = ["TRIAL_FILE", "ATTEMPT_FILE", "RESULT_FILE", "PLACEMENT", "RUN_FILES", "read_json", "stored_settings",
           "differences", "extends", "sweep_error", "clear", "prepare", "tail_step"]

TRIAL_FILE, ATTEMPT_FILE, RESULT_FILE = "trial.json", "attempt.json", "result.json"
#: settings that say where a trial runs, not what it computes: they may differ from the stored ones
PLACEMENT = ("out_dir", "device", "num_threads", "bonus_thread")
#: a run's files that a fresh start (or a replaced trial) removes
RUN_FILES = ("log.csv", "settings.json", "policy.pt", "tb", RESULT_FILE)


def read_json(path: Path) -> Any:
    """The JSON in ``path``; None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def stored_settings(out: Path) -> tuple[dict | None, str]:
    """The settings a trial folder holds and where they come from (trial.json, else a run's
    settings.json); ({}, folder) when it holds a run without readable settings, (None, "") when none."""
    trial = read_json(out / TRIAL_FILE)
    if isinstance(trial, dict) and isinstance(trial.get("settings"), dict):
        return trial["settings"], str(out / TRIAL_FILE)
    run = read_json(out / "settings.json")
    if isinstance(run, dict):
        return run, str(out / "settings.json")
    if any((out / n).exists() for n in ("log.csv", "checkpoint.pt", TRIAL_FILE)):
        return {}, str(out)
    return None, ""


def _readings_compared(stored: dict, wanted: dict) -> tuple[dict, dict]:
    """Both settings as compared: a stored run from before the optimizer readings were named trained
    under its version's (torch: :data:`~pcnn_explore.run.config.SETTINGS_SINCE`), and a reading the
    wanted run does not train under (:func:`~pcnn_explore.run.config.uses_reading`) is left out."""
    from pcnn_explore.run.config import READINGS, SETTINGS_SINCE, uses_reading

    stored = {**{k: SETTINGS_SINCE[k] for k in READINGS}, **stored}
    unused = {k for k in READINGS if not uses_reading(k, wanted)}
    return ({k: v for k, v in stored.items() if k not in unused}, {k: v for k, v in wanted.items() if k not in unused})


def differences(stored: dict, wanted: dict) -> list[str]:
    """One ``name: stored ..., requested ...`` per setting that differs (placement settings aside)."""
    stored, wanted = _readings_compared(stored, wanted)
    keys = sorted((set(stored) | set(wanted)) - set(PLACEMENT))
    return [f"{k}: stored {stored.get(k, '(none)')!r}, requested {wanted.get(k, '(none)')!r}"
            for k in keys if stored.get(k) != wanted.get(k)]


def extends(stored: dict, wanted: dict) -> bool:
    """True when ``wanted`` is the stored trial with more ``steps`` and nothing else changed: the
    trial resumes from its checkpoint and runs on (as ``pcnn-explore train --resume --steps N``)."""
    stored, wanted = _readings_compared(stored, wanted)
    diff = {k for k in (set(stored) | set(wanted)) - set(PLACEMENT) if stored.get(k) != wanted.get(k)}
    old, new = stored.get("steps"), wanted.get("steps")
    return diff == {"steps"} and all(isinstance(v, int) and not isinstance(v, bool) for v in (old, new)) and new > old


def sweep_error(e: RunError) -> SweepError:
    """A run lock's error (``{out_dir}``: the trial's folder) in a sweep's words."""
    return SweepError(e.template.replace("{out_dir}", "trial folder", 1).replace("{out_dir}", "--out"))


def clear(folder: Path, names) -> None:
    """Remove the files and folders ``names`` of ``folder`` (those missing are skipped)."""
    for name in names:
        p = folder / name
        shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)


def prepare(t: Trial, settings: dict) -> None:
    """Write the trial's folder and ``trial.json`` (and its extra files); clear a replaced run.
    Holds the folder's run lock meanwhile: a folder another process runs in raises SweepError."""
    from pcnn_explore.run.checkpoints import CHECKPOINT
    from pcnn_explore.run.lock import RunLock

    folder = Path(t.out_dir)
    with RunLock(folder) as lock:
        try:
            lock.acquire()
        except RunError as e:
            raise sweep_error(e) from None
        stored, _ = stored_settings(folder)
        if stored is not None and (not stored or differences(stored, settings)) and not extends(stored, settings):
            clear(folder, (*RUN_FILES, CHECKPOINT, ATTEMPT_FILE))  # on_mismatch="replace"
        record = {"env": t.env, "variant": t.variant, "seed": t.seed, "line": t.line or t.variant,
                  "profile": t.profile, "overrides": dict(t.overrides), "settings": settings}
        write_text_atomic(folder / TRIAL_FILE, json.dumps(record, indent=1, sort_keys=True) + "\n")
        for name, text in t.files:
            write_text_atomic(folder / name, text)


def tail_step(log: Path) -> int:
    """The agent step of the last row of a training log (0 if none), reading only its header and end."""
    try:
        with open(log, "rb") as f:
            column = f.readline().decode().strip().split(",").index("step")
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4096))
            tail = f.read().decode(errors="replace")
            # a last line without its end is a row the run did not finish writing (killed mid-write)
            last = tail[:tail.rfind("\n") + 1].strip().splitlines()[-1]
        return int(last.split(",")[column])
    except (OSError, ValueError, IndexError):  # no log yet, or only its header
        return 0
