"""``DIR/sweep.json``: every trial of a sweep with its status (queued, running, done, failed), agent
steps and speed (``{"trials": [record, ...]}``, rewritten atomically as trials change; the records
of a sweep's other trials, run before, are kept)."""
from __future__ import annotations

import json
import os
from pathlib import Path

from pcnn_explore.atomic import write_text_atomic
from pcnn_explore.sweep.folders import ATTEMPT_FILE, RESULT_FILE, read_json
from pcnn_explore.sweep.grid import SweepError, Trial

__all__ = ["SWEEP_FILE", "record", "read_sweep", "write_sweep"]

SWEEP_FILE = "sweep.json"


def record(t: Trial, settings: dict, status: str, sweep_dir: Path | None) -> dict:
    """The record of trial ``t`` (``settings``: resolved) with ``status``, its folder relative to ``sweep_dir``."""
    folder = Path(t.out_dir)
    rel = os.path.relpath(folder, sweep_dir) if sweep_dir is not None else t.name
    result = (read_json(folder / RESULT_FILE) or {}) if status == "done" else {}
    return {"name": t.name, "env": t.env, "variant": t.variant, "seed": t.seed, "line": t.line or t.variant,
            "overrides": dict(t.overrides), "status": status, "out_dir": str(folder), "folder": rel,
            "steps": int(settings["steps"]) if status == "done" else 0, "steps_total": int(settings["steps"]),
            "steps_per_s": result.get("steps_per_second"), "attempts": (read_json(folder / ATTEMPT_FILE) or {}).get("attempt", 0),
            "error": None}


def read_sweep(sweep_dir: str | os.PathLike) -> list[dict]:
    """The trials of ``DIR/sweep.json`` (SweepError if there is none)."""
    path = Path(sweep_dir) / SWEEP_FILE
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("trials"), list):
        raise SweepError(f"no sweep at {sweep_dir}: {path} is missing or unreadable; run pcnn-explore sweep first")
    return data["trials"]


def write_sweep(sweep_dir: Path | None, records: list[dict], extra: dict) -> None:
    """Rewrite ``sweep_dir/sweep.json`` with ``records`` (and ``extra``'s keys); nothing when ``sweep_dir`` is None."""
    if sweep_dir is None:
        return
    old = read_json(sweep_dir / SWEEP_FILE)
    mine = {r["folder"] for r in records}
    kept = [r for r in (old or {}).get("trials", []) if isinstance(r, dict) and r.get("folder") not in mine]
    sweep_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(sweep_dir / SWEEP_FILE, json.dumps({**extra, "trials": kept + records}, indent=1) + "\n")
