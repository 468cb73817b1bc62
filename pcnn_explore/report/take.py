"""``pcnn-explore reproduce --rerender DIR --take RUN``: a notebook re-run on its own, taken into a report
(:func:`take`; :mod:`pcnn_explore.report.rerender` then decides every verdict again and re-exports these
names). The run's folder and its index.json record (time, commit) replace the report's; a bsuite store the
report fills over sessions (:data:`KEPT_FOLDERS`) becomes the union of both.

Nothing outside the report is touched: every name read from index.json or metrics.json is one plain
folder or file name, a run holds real files only (no link is followed), and both reports are checked
whole before anything moves, every metrics.json holding the claims record that the re-render decides again (:mod:`pcnn_explore.report.records`). A take is all or nothing: it copies
into one staging folder inside the report (``.pcnn-explore-take-<pid>-<hex>``, :data:`STAGING_PREFIX`),
swaps the folders in, and commits by replacing index.json; any error before that commit puts every
folder back. A take killed on the way (SIGKILL, a power cut) leaves its staging folder; the next take
or re-render of the report undoes what it had moved (or, after its commit, keeps it), removes the folder
and says so in one line (:func:`clear_staging`). One take or re-render holds a report at a time
(:func:`report_lock`).

The PixelCNN's two optimizer readings (``--take RUN --take-reading torch=RUN2``): RUN holds notebooks run under
the paper's reading (tf1), RUN2 the same notebooks under the sensitivity reading (torch); each is taken as one
notebook, the paper run's folder with one metrics.json whose claims carry both readings' decisions and whose word is
the paper reading's (:func:`joined_metrics`); RUN2 is checked like RUN (plain names, real files only, the same
notebooks, each finished) before anything moves.

A run made with ``--compact`` links its root's shared stylesheet (:mod:`pcnn_explore.report.styles`): each one
its taken pages link is checked to be a plain file of the run, then copied into the report's root (where it
lacks it) before the folders move in; an undone take removes what it copied."""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import sys
from pathlib import Path
from typing import Callable, Collection, Iterator, Mapping

from pcnn_explore.atomic import fsync_dir, write_text_atomic
from pcnn_explore.report.metrics import _plain
from pcnn_explore.report.records import (RECORDS, folder_of, plain_name, read_metrics, read_records,
                                         real_files_only)
from pcnn_explore.report.styles import copy_stylesheets, stylesheets_of
from pcnn_explore.study import OPTIMIZER_READINGS, decisions_of, join_readings, metrics_record
from pcnn_explore.run.lines import reading_free

__all__ = ["KEPT_FOLDERS", "STAGING_PREFIX", "SENSITIVITY", "take", "joined_metrics", "check_report", "report_lock",
           "clear_staging"]

#: a notebook folder's subfolders whose files ``take`` joins with the run's rather than replaces: 14's
#: bsuite store (``protocol``), which the whole protocol fills over sessions
KEPT_FOLDERS = ("protocol",)
#: the start of a take's staging folder in the report; the whole name is this, the PID, ``-`` and 12 hex digits
STAGING_PREFIX = ".pcnn-explore-take-"
_STAGING = re.compile(re.escape(STAGING_PREFIX) + r"[0-9]+-[0-9a-f]{12}")
_PLAN, _NEW, _OLD = "plan.json", "new", "old"
#: the key of a notebook's metrics.json that keeps its sensitivity run's settings, summary and time beside the
#: paper run's (a take with ``readings``, :func:`joined_metrics`)
SENSITIVITY = "sensitivity_reading"
#: the settings that name the PixelCNN's optimizer reading a run trained under (density notebooks; 12 and 13)
_READING_SETTINGS = ("rmsprop", "density_optimizer")


def _say(text: str) -> None:
    print(f"pcnn-explore reproduce: {text}", file=sys.stderr, flush=True)


def _move(src: Path, dst: Path) -> None:
    """One step of a take's swap (a rename within the report)."""
    os.replace(src, dst)


def _copy_file(src: str, dst: str) -> str:
    """shutil.copy2 of a plain file, never through a link (a run holds real files only)."""
    if not stat.S_ISREG(os.lstat(src).st_mode):
        raise ValueError(f"{src} is not a plain file: a run to take must hold real files only; remove it")
    return shutil.copy2(src, dst, follow_symlinks=False)


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
    from pcnn_explore.sweep.bsuite_store import STORE_FILE, read_manifest

    if not old.is_dir():
        return
    for f in sorted(old.rglob("*")):
        target = new / f.relative_to(old)
        if f.is_file() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            _copy_file(str(f), str(target))
    if (old / STORE_FILE).is_file() and (new / STORE_FILE).is_file():
        merged = read_manifest(new)
        merged["lines"] = dict(sorted({**read_manifest(old).get("lines", {}), **merged.get("lines", {})}.items()))
        write_text_atomic(new / STORE_FILE, json.dumps(merged, indent=1, sort_keys=True) + "\n")


@contextlib.contextmanager
def report_lock(out: str | os.PathLike) -> Iterator[None]:
    """Hold the report folder ``out`` for one take or re-render: ``flock`` on the folder itself (no file
    is written into the report; the kernel lets go when the process ends, even by SIGKILL). ValueError
    at once when another process holds it."""
    try:
        import fcntl
    except ImportError:  # (Windows has no flock)
        yield
        return
    fd = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"{out} is being changed by another pcnn-explore reproduce --rerender (a take or a "
                             "re-render): wait for it to end") from None
        yield
    finally:
        os.close(fd)  # (closing lets go of the lock)


def _put_back(staging: Path, out: Path, name: str, had_old: bool) -> None:
    """Undo the swap of one notebook folder (:func:`_swap`), whatever step it had reached."""
    new, old, here = staging / _NEW / name, staging / _OLD / name, out / name
    if had_old and not os.path.lexists(old):
        return  # the report's folder was never moved: nothing of this notebook to undo
    if not os.path.lexists(new) and os.path.lexists(here):  # the run's folder is in: out of the report again
        (staging / _NEW).mkdir(exist_ok=True)
        _move(here, new)
    if had_old:
        _move(old, here)


def _undo(staging: Path, out: Path) -> str:
    """Put back what the take staged in ``staging`` had moved before its commit; what it did, in words."""
    plan_path = staging / _PLAN
    if not plan_path.is_file():
        return "it had moved nothing"
    if not (staging / RECORDS).is_file():
        return "its take had finished"
    try:
        plan = json.loads(plan_path.read_text())
        names = [plain_name(n, plan_path, "names") for n in plan["names"]]
        had_old = {plain_name(n, plan_path, "had_old") for n in plan["had_old"]}
    except (ValueError, TypeError, KeyError) as e:
        raise ValueError(f"{plan_path} is not a take's plan ({e}): check the report's notebook folders against "
                         f"{staging}, then remove {staging} by hand") from None
    for name in reversed(names):
        _put_back(staging, out, name, name in had_old)
    fsync_dir(out)
    plan_path.unlink()
    return "its take was undone, the report is as it was before it"


def clear_staging(out: str | os.PathLike, say: Callable[[str], None] | None = None) -> str | None:
    """Remove the staging folders (:data:`STAGING_PREFIX`) that killed takes left in the report ``out``,
    each take undone unless it had committed, and say so in one line (``say(line)``; default: stderr);
    the line, or None where there was none. Call it holding :func:`report_lock`: a live take's staging
    folder is then never seen. Nothing but a real folder of a staging folder's name is removed."""
    out = Path(out)
    found = sorted(p for p in out.iterdir() if _STAGING.fullmatch(p.name) and p.is_dir() and not p.is_symlink())
    if not found:
        return None
    said = []
    for staging in found:
        said.append(f"{staging.name} ({_undo(staging, out)})")
        shutil.rmtree(staging)
    line = (f"removed {len(found)} staging folder{'s' if len(found) > 1 else ''} that a killed take left in {out}: "
            + "; ".join(said))
    (say or _say)(line)
    return line


def check_report(out: str | os.PathLike, skip: Collection[str] = ()) -> tuple[dict, dict[str, dict]]:
    """(index.json, {name: metrics.json}) of the report in ``out``, read and checked before anything is
    written (:func:`~pcnn_explore.report.records.read_records`, :func:`~pcnn_explore.report.records.read_metrics`):
    the metrics of each finished notebook not in ``skip`` whose metrics.json exists; its folder and
    metrics.json are no links, the stores a re-render reads (:data:`KEPT_FOLDERS`) hold real files only,
    and each metrics.json holds the claims record (:func:`pcnn_explore.study.decisions_of`): one written
    before it (no ``schema``) cannot be decided again and is refused in one line naming its folder."""
    out = Path(out)
    stored = read_records(out)
    metrics: dict[str, dict] = {}
    for r in stored["notebooks"]:
        if r["name"] in skip:
            continue
        folder = out / folder_of(r)
        if folder.is_symlink():
            raise ValueError(f"{folder} is a symbolic link: a report's notebook folders are real folders; put the "
                             "folder itself there")
        for kept in KEPT_FOLDERS:
            if os.path.lexists(folder / kept):
                real_files_only(folder / kept, f"the report's store {folder / kept}")
        path = folder / "metrics.json"
        if r["status"] == "ok" and os.path.lexists(path):
            metrics[r["name"]] = read_metrics(path)
            if "schema" not in metrics[r["name"]]:
                raise ValueError(f"{folder}: its metrics.json was written before the claims record (no schema), so "
                                 f"--rerender cannot decide it again; re-run the notebook (pcnn-explore reproduce "
                                 f"--profile study --only {r['name'][:2]} --out RUN) and take it in (--take RUN)")
            decisions_of(metrics[r["name"]], str(path))  # (a record of another schema or shape: refused here)
    return stored, metrics


def _finished(run: Path, r: Mapping) -> Path:
    """The folder in ``run`` of the notebook its index.json record ``r`` names; ValueError for a notebook that
    failed or wrote no metrics.json."""
    if r["status"] != "ok":
        raise ValueError(f"{r['name']} failed in {run} ({r.get('error') or 'no error recorded'}): run it again "
                         "before taking it into the report")
    source = run / folder_of(r)
    if not os.path.lexists(source / "metrics.json"):
        raise ValueError(f"{source} holds no metrics.json: take a finished run")
    return source


def _inside(a: Path, b: Path) -> bool:
    a, b = a.resolve(), b.resolve()
    return a == b or b in a.parents


def _swap(staging: Path, out: Path, names: list[str], had_old: set[str]) -> None:
    """Each staged folder into the report (the report's own, if any, into ``staging/old``), then the
    commit: the staged index.json replaces the report's."""
    (staging / _OLD).mkdir()
    for name in names:
        if name in had_old:
            _move(out / name, staging / _OLD / name)
        _move(staging / _NEW / name, out / name)
    _move(staging / RECORDS, out / RECORDS)
    fsync_dir(out)


def _reading_of(metrics: dict) -> str | None:
    """The PixelCNN optimizer reading a run's settings name (None where they name none, e.g. 07's lines)."""
    settings = metrics.get("settings") if isinstance(metrics.get("settings"), dict) else {}
    for key in _READING_SETTINGS:
        if isinstance(settings.get(key), str):
            return settings[key]
    return None


def joined_metrics(paper: dict, sensitivity: dict, reading: str, record: dict, where: str = "") -> dict:
    """One notebook's metrics.json from its run under the paper's optimizer reading (``paper``, tf1) and under
    the sensitivity ``reading`` (``sensitivity``; ``record`` its index.json record): the paper run's metrics,
    whose claims each carry the sensitivity run's decision beside them
    (:func:`pcnn_explore.study.join_readings`: the notebook word the paper reading's, a claim whose two words
    differ :data:`pcnn_explore.study.DEPENDS_ON_OPTIMIZER`), and :data:`SENSITIVITY`: the sensitivity run's
    reading, settings, summary, paper figures, seconds and commit. ValueError (naming ``where``) for a run
    whose settings name another reading, runs of different claims or profiles."""
    names = (OPTIMIZER_READINGS[0], reading)
    for m, want in ((paper, names[0]), (sensitivity, reading)):
        got = _reading_of(m)
        if got is None:
            raise ValueError(f"{where}: the run taken as the {want} reading records no optimizer reading in its "
                             "settings: re-run the notebook (reproduce --reading READING) with a version whose "
                             "metrics.json records its settings")
        if got != want:
            raise ValueError(f"{where}: the run taken as the {want} reading trained under {got}: give the paper "
                             f"({names[0]}) run as --take and the {reading} run as --take-reading {reading}=RUN")
    if paper.get("profile") != sensitivity.get("profile"):
        raise ValueError(f"{where}: the {names[0]} run is a {paper.get('profile')!r} run and the {reading} run a "
                         f"{sensitivity.get('profile')!r} one: run both at the same profile")
    try:
        joined = join_readings(decisions_of(paper), decisions_of(sensitivity), names, reading_free=reading_free)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    side = {"reading": reading, "seconds": record.get("seconds"), "commit": record.get("commit")}
    side.update({k: sensitivity[k] for k in ("settings", "summary", "paper") if k in sensitivity})
    return {**paper, **metrics_record(joined), SENSITIVITY: side}


def _sensitivity_runs(readings, names: list[str], profile: str) -> dict[str, tuple[str, Path, dict]]:
    """{notebook: (reading, its folder in the sensitivity run, its index.json record)}, checked: one reading
    of :data:`pcnn_explore.study.OPTIMIZER_READINGS` besides the paper's, a run of the report's profile holding
    every notebook taken and no other, each finished, with real files only."""
    if not readings:
        return {}
    readings = dict(readings)
    allowed = OPTIMIZER_READINGS[1:]
    if len(readings) != 1 or next(iter(readings)) not in allowed:
        raise ValueError(f"--take-reading takes one sensitivity run, READING=RUN with READING {', '.join(allowed)}; "
                         f"got {', '.join(map(str, readings)) or 'none'}")
    (reading, run), = readings.items()
    run = Path(run)
    found = read_records(run)
    if found["profile"] != profile:
        raise ValueError(f"{run} is a {found['profile']!r} run and the report a {profile!r} one: take runs of the "
                         "report's own profile")
    by_name = {r["name"]: r for r in found["notebooks"]}
    if sorted(by_name) != sorted(names):
        raise ValueError(f"{run} (the {reading} reading) holds {', '.join(sorted(by_name)) or 'no notebook'} and the "
                         f"paper run {', '.join(sorted(names))}: each reading's run holds the same notebooks")
    out = {}
    for name in names:
        r = by_name[name]
        source = _finished(run, r)
        real_files_only(source, f"a run to take ({source})")
        out[name] = (reading, source, r)
    return out


def take(run: str | Path, out: str | Path, say: Callable[[str], None] | None = None,
         readings: dict[str, str | Path] | None = None) -> list[str]:
    """Take the notebooks of the report in ``run`` (a ``pcnn-explore reproduce --out RUN`` of one or
    more notebooks) into the report in ``out``: each finished notebook's folder replaces the one in
    ``out`` and its index.json record (time, commit, profile) replaces the one there; the report's
    bsuite store (:data:`KEPT_FOLDERS`) and the run's become one (the files of both, the run's where
    both have one); return the names taken. Staging folders a killed take left are cleared first
    (:func:`clear_staging`, which says so through ``say``).

    Everything is checked before anything is written: FileNotFoundError for a folder with no index.json;
    ValueError for a malformed index.json or metrics.json (naming the file and the field), a metrics.json of
    the run or the report without the claims record (:func:`check_report`), a name that is
    not one plain folder name, a link or a pipe in the run, a run of another profile, a failed notebook
    or a folder missing. Then all or nothing: on any error the report is as it was (see the module
    docstring).

    ``readings`` (``{"torch": RUN2}``): ``run`` is the notebooks' run under the PixelCNN's paper reading (tf1)
    and RUN2 the same notebooks' run under the sensitivity reading; each notebook taken is the paper run's
    folder with one metrics.json of both (:func:`joined_metrics`), checked with the rest before anything
    moves."""
    run, out = Path(run), Path(out)
    new = read_records(run)
    profile = read_records(out)["profile"]  # (FileNotFoundError before the report is locked)
    records = new["notebooks"]
    if not records:
        raise ValueError(f"{run / RECORDS} records no notebook: nothing to take")
    if new["profile"] != profile:
        raise ValueError(f"{run} is a {new['profile']!r} run and {out} a {profile!r} report: take runs of the "
                         "report's own profile")
    sheets = {}  # the run's shared stylesheets its pages link (a --compact run, pcnn_explore.report.styles)
    for r in records:
        source = _finished(run, r)
        if _inside(out, source):
            raise ValueError(f"{source} holds the report {out}: take a run made in a folder of its own")
        real_files_only(source, f"a run to take ({source})")
        decisions_of(read_metrics(source / "metrics.json"), str(source / "metrics.json"))  # the claims record
        sheets.update(stylesheets_of(source, run))
    names = [r["name"] for r in records]
    sensitivity = _sensitivity_runs(readings, names, profile)
    joined = {name: joined_metrics(read_metrics(run / folder_of(r) / "metrics.json"),
                                   read_metrics(sensitivity[name][1] / "metrics.json"), sensitivity[name][0],
                                   sensitivity[name][2], f"{name}")
              for r in records for name in [r["name"]] if name in sensitivity}
    with report_lock(out):
        clear_staging(out, say)
        stored, _ = check_report(out, skip=names)
        for r in records:
            target, source = out / r["name"], run / folder_of(r)
            if target.is_symlink() or (os.path.lexists(target) and not target.is_dir()):
                raise ValueError(f"{target} is not a notebook folder (a link or a file) and a take would replace it: "
                                 "move it out of the report first")
            for kept in KEPT_FOLDERS:
                if os.path.lexists(target / kept):
                    real_files_only(target / kept, f"the report's store {target / kept}")
                _check_union(target / kept, source / kept)
        taken = {r["name"]: {**r, "output_dir": r["name"],
                             "html": f"{r['name']}/{r['html'].split('/')[-1]}" if r.get("html") else None}
                 for r in records}
        stored["notebooks"] = sorted([r for r in stored["notebooks"] if r["name"] not in taken] + list(taken.values()),
                                     key=lambda r: r["name"])
        had_old = {n for n in names if (out / n).is_dir()}
        staging = out / f"{STAGING_PREFIX}{os.getpid()}-{os.urandom(6).hex()}"
        staging.mkdir()
        added: list[Path] = []
        try:
            for r in records:
                staged = staging / _NEW / r["name"]
                shutil.copytree(run / folder_of(r), staged, symlinks=True, copy_function=_copy_file)
                for kept in KEPT_FOLDERS:  # a store the report adds to over sessions: the union, the run's files first
                    _union(out / r["name"] / kept, staged / kept)
                real_files_only(staged, f"a run to take ({run / folder_of(r)})")  # (a link made while it was copied)
                if r["name"] in joined:  # the two readings' claims, one metrics.json
                    write_text_atomic(staged / "metrics.json",
                                      json.dumps(_plain(joined[r["name"]]), indent=2, allow_nan=False) + "\n")
            copy_stylesheets(sheets, out, added)  # (in the report before a page that links one)
            write_text_atomic(staging / RECORDS, json.dumps(stored, indent=1) + "\n")
            write_text_atomic(staging / _PLAN, json.dumps({"names": names, "had_old": sorted(had_old)}) + "\n")
            _swap(staging, out, names, had_old)
        except BaseException:
            if not (staging / _PLAN).is_file() or (staging / RECORDS).is_file():  # not committed: they go too
                for sheet in added:
                    sheet.unlink(missing_ok=True)
            _undo(staging, out)
            shutil.rmtree(staging, ignore_errors=True)
            raise
        shutil.rmtree(staging)
    return sorted(taken)
