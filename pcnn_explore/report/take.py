"""``pcnn-explore reproduce --rerender DIR --take RUN``: a notebook re-run on its own, taken into a report
(:func:`take`; :mod:`pcnn_explore.report.rerender` then decides every verdict again and re-exports these
names). The run's folder and its index.json record (time, commit) replace the report's; a bsuite store the
report fills over sessions (:data:`KEPT_FOLDERS`) becomes the union of both."""
from __future__ import annotations

import json
from pathlib import Path

from pcnn_explore.atomic import write_text_atomic

__all__ = ["KEPT_FOLDERS", "take"]

#: a notebook folder's subfolders whose files ``take`` joins with the run's rather than replaces: 14's
#: bsuite store (``protocol``), which the whole protocol fills over sessions
KEPT_FOLDERS = ("protocol",)


def _check_union(old: Path, new: Path) -> None:
    """Refuse (ValueError) two bsuite stores of different episode caps, which cannot be one."""
    from pcnn_explore.sweep.bsuite_store import read_manifest

    if old.is_dir() and new.is_dir():
        a, b = read_manifest(old).get("episodes"), read_manifest(new).get("episodes")
        if None not in (a, b) and a != b:
            raise ValueError(f"{new} holds runs of {b} episodes and the report's {old} of {a}: take a run of the "
                             "report's episode cap")


def _union(old: Path, new: Path) -> None:
    """Copy into ``new`` every file of ``old`` it lacks; store.json's lines merged (``new``'s first)."""
    import shutil

    from pcnn_explore.sweep.bsuite_store import STORE_FILE, read_manifest

    if not old.is_dir():
        return
    for f in sorted(old.rglob("*")):
        target = new / f.relative_to(old)
        if f.is_file() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, target)
    if (old / STORE_FILE).is_file() and (new / STORE_FILE).is_file():
        merged = read_manifest(new)
        merged["lines"] = dict(sorted({**read_manifest(old).get("lines", {}), **merged.get("lines", {})}.items()))
        write_text_atomic(new / STORE_FILE, json.dumps(merged, indent=1, sort_keys=True) + "\n")


def take(run: str | Path, out: str | Path) -> list[str]:
    """Take the notebooks of the report in ``run`` (a ``pcnn-explore reproduce --out RUN`` of one or
    more notebooks) into the report in ``out``: each finished notebook's folder replaces the one in
    ``out`` and its index.json record (time, commit, profile) replaces the one there; the report's
    bsuite store (:data:`KEPT_FOLDERS`) and the run's become one (the files of both, the run's where
    both have one); return the names taken. Everything is checked before anything is written: ValueError for a run of another profile,
    a failed notebook or a folder missing; FileNotFoundError for a folder with no index.json. A
    folder is copied beside its place and swapped in, so a report is never left half-written."""
    import shutil

    from pcnn_explore.report import index

    run, out = Path(run), Path(out)
    for folder in (run, out):
        if not (folder / index.RECORDS).is_file():
            raise FileNotFoundError(f"{folder / index.RECORDS} does not exist: --take and --rerender each need a report "
                                    "made by pcnn-explore reproduce")
    new = json.loads((run / index.RECORDS).read_text())
    stored = json.loads((out / index.RECORDS).read_text())
    records = [r for r in new.get("notebooks", []) if isinstance(r, dict) and "name" in r]
    if not records:
        raise ValueError(f"{run / index.RECORDS} records no notebook: nothing to take")
    if new.get("profile") != stored.get("profile"):
        raise ValueError(f"{run} is a {new.get('profile')!r} run and {out} a {stored.get('profile')!r} report: take "
                         "runs of the report's own profile")
    for r in records:
        if r.get("status") != "ok":
            raise ValueError(f"{r['name']} failed in {run} ({r.get('error') or 'no error recorded'}): run it again "
                             "before taking it into the report")
        if not (run / (r.get("output_dir") or r["name"]) / "metrics.json").is_file():
            raise ValueError(f"{run / (r.get('output_dir') or r['name'])} holds no metrics.json: take a finished run")
    for r in records:
        for kept in KEPT_FOLDERS:
            _check_union(out / r["name"] / kept, run / (r.get("output_dir") or r["name"]) / kept)
    for r in records:
        source, target = run / (r.get("output_dir") or r["name"]), out / r["name"]
        staged, old = out / f".{r['name']}.taking", out / f".{r['name']}.old"
        for leftover in (staged, old):
            shutil.rmtree(leftover, ignore_errors=True)
        shutil.copytree(source, staged)
        for kept in KEPT_FOLDERS:  # a store the report adds to over sessions: the union, the run's files first
            _union(target / kept, staged / kept)
        if target.exists():
            target.rename(old)
        staged.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    taken = {r["name"]: {**r, "output_dir": r["name"],
                         "html": f"{r['name']}/{Path(r['html']).name}" if r.get("html") else None} for r in records}
    kept = [r for r in stored.get("notebooks", []) if r.get("name") not in taken]
    stored["notebooks"] = sorted(kept + list(taken.values()), key=lambda r: r["name"])
    write_text_atomic(out / index.RECORDS, json.dumps(stored, indent=1) + "\n")
    return sorted(taken)
