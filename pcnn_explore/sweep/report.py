"""``pcnn-explore sweep --report DIR``: the paper's evaluation of a sweep (Appendix B).

Writes into ``DIR/report/``:

- ``curves_<env>.png``: per env, each line's training curve (mean undiscounted return per window
  of 1M frames; seeds' mean and min-max band, one line style per line);
- ``max_scores.md`` and ``max_scores.csv``: per env and line the maximum score (each seed's peak,
  averaged over seeds), the best seed's peak, the AUC and its improvement over the baseline, beside
  the paper's numbers where it gives them (``data/paper_hard_games.csv``: the appendix table, and
  the record peaks of Sec. 6 for c > 0.1);
- ``auc_improvements.png``: Fig. 6 / 8, every compared line's improvement in % of AUC over the
  baseline per env, sorted, hard-exploration games (``data/atari_taxonomy.csv``) marked;
- ``report.json``: the numbers;
- on DeepSea trials, bsuite's deep-sea protocol (:mod:`pcnn_explore.sweep.deep_sea_report`):
  ``deep_sea_scaling.csv``, ``deep_sea_score.csv``, ``deep_sea_scaling.png``. A sweep of DeepSea
  trials only writes just these unless ``window`` asks for curves too.

The report replaces an earlier one whole: it is written into a new folder beside it, which then
trades places with the earlier ``report/`` in one atomic exchange (Linux ``renameat2``, macOS
``renamex_np``), so that a kill at any moment leaves ``report/`` holding the earlier report or the
new one, whole; then the earlier one is removed. Where the file system cannot exchange two folders,
the earlier report is renamed aside first, and a report written after a kill between the two renames
puts it back.

The baseline (``--baseline``, default ``dqn``) is a line of the sweep, or a variant: then each line
is compared with that variant's line at the same settings (``pixelcnn_mmc,steps=3000`` with
``dqn,steps=3000``). Trials that have not finished count with the windows they have (the AUC's
common horizon is the shortest curve among a baseline and the lines compared with it). Windows
are agent steps (1M frames: 250K on Atari).
"""
from __future__ import annotations

import csv
import errno
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path

from pcnn_explore import evaluation as ev
from pcnn_explore.atomic import fsync_dir
from pcnn_explore.sweep.grid import SweepError, folder_safe, line_colour, line_label
from pcnn_explore.sweep.records import read_sweep

__all__ = ["load_taxonomy", "load_paper_scores", "paper_column", "line_label", "evaluate_sweep", "write_report",
           "RECORD_PEAK", "PAPER_COLUMNS"]

#: the line of a sweep -> its column of the paper's appendix table (maximum score, mean of 3 seeds)
PAPER_COLUMNS = {"dqn": "DQN", "cts_mmc": "DQN-CTS", "pixelcnn_mmc": "DQN-PixelCNN"}
#: the column of Sec. 6's record peaks (single runs with a larger PG scale), beside the best seed's peak
RECORD_PEAK = "record peak (Sec. 6)"


def load_taxonomy() -> dict[str, dict[str, str]]:
    """The appendix taxonomy of the 57 games: {ale_id: {"game", "exploration" (easy/hard/""), "category"}}."""
    from pcnn_explore.resources import data_path

    with open(data_path("atari_taxonomy.csv"), newline="") as f:
        return {r["ale_id"]: {k: r[k] for k in ("game", "exploration", "category")} for r in csv.DictReader(f)}


def load_paper_scores() -> dict[str, dict[str, float | str]]:
    """``data/paper_hard_games.csv`` by ALE id: {ale_id: {"game", column: score (NaN if not given)}}."""
    from pcnn_explore.resources import data_path

    out: dict[str, dict] = {}
    with open(data_path("paper_hard_games.csv"), newline="") as f:
        for r in csv.DictReader(f):
            out[r["ale_id"]] = {"game": r["game"], **{k: float(v) if v.strip() else math.nan
                                                      for k, v in r.items() if k not in ("game", "ale_id")}}
    return out


def paper_column(line: str) -> tuple[str, str] | None:
    """(paper column, which of our numbers it compares with) for a line, or None.

    ``dqn``, ``cts_mmc``, ``pixelcnn_mmc``: the appendix table vs our maximum score;
    ``pixelcnn_mmc,pg_scale=c`` with c > 0.1: Sec. 6's record peaks vs our best seed's peak.
    """
    if line in PAPER_COLUMNS:
        return PAPER_COLUMNS[line], "max_score"
    variant, _, rest = line.partition(",")
    if variant == "pixelcnn_mmc" and rest.startswith("pg_scale=") and "," not in rest:
        try:
            if float(rest.split("=", 1)[1]) > 0.1:
                return RECORD_PEAK, "best_peak"
        except ValueError:
            return None
    return None


def _baselines(lines, baseline: str) -> dict[str, str | None]:
    """Each line's baseline among ``lines`` (one env's): ``baseline`` itself when it names a whole
    line (``dqn`` or ``dqn,steps=3000``); a variant is matched with each line at the same settings
    (``pixelcnn_mmc,steps=3000`` -> ``dqn,steps=3000``), else ``baseline`` where it is a line; None
    where the env has neither."""
    out = {}
    for line in lines:
        rest = line.partition(",")[2]
        same = f"{baseline},{rest}" if rest and "," not in baseline else baseline
        out[line] = same if same in lines else baseline if baseline in lines else None
    return out


def evaluate_sweep(sweep_dir: str | os.PathLike, window: int | None = None, baseline: str | None = None) -> dict:
    """The evaluation of every env and line of the sweep in ``sweep_dir`` (see the module docstring).

    ``window``: agent steps per curve point (None: 1M frames of each env). ``baseline``: the line
    (or the variant, matched with each line at the same settings) AUC improvements are measured
    against; None: ``dqn`` where the sweep has it. Each line is compared over the horizon common
    to its baseline and the lines compared with it. Raises SweepError when the sweep has no logged
    trial, an env's runs are shorter than one window, or ``baseline`` is no line of the sweep.
    """
    from pcnn_explore.run.log import read_log

    root = Path(sweep_dir)
    records = read_sweep(root)
    runs: dict[str, dict[str, list]] = {}
    for r in records:
        log_dir = root / r["folder"]
        if not (log_dir / "log.csv").is_file():
            continue
        log = read_log(log_dir)
        if not len(log["step"]):
            continue
        runs.setdefault(r["env"], {}).setdefault(r["line"], []).append((r["seed"], log))
    if not runs:
        raise SweepError(f"{root}: no trial has logged an episode yet; run the sweep (pcnn-explore sweep ...) first")
    matched = {env: _baselines(lines, baseline or "dqn") for env, lines in runs.items()}
    if baseline is not None and not any(b is not None for m in matched.values() for b in m.values()):
        have = sorted({line for lines in runs.values() for line in lines})
        raise SweepError(f"--baseline {baseline!r} is no line of the sweep in {root}: "
                         f"give one of its lines ({', '.join(have)}) or their variants")
    out = {"sweep_dir": str(root), "baseline": baseline or "dqn", "envs": {}}
    for env, lines in runs.items():
        w = window or ev.paper_window(env)
        curves = {line: [ev.curve_from_log(log, w) for _, log in sorted(seeds, key=lambda s: s[0])]
                  for line, seeds in lines.items()}
        longest = max(int(log["step"][-1]) for seeds in lines.values() for _, log in seeds)
        if all(len(c.means) == 0 for cs in curves.values() for c in cs):
            raise SweepError(f"{env}: the trials ran at most {longest:,} agent steps, fewer than one window of "
                             f"{w:,}: pass --window STEPS (agent steps per curve point)")
        numbers = {}
        for base in dict.fromkeys(matched[env].values()):  # each baseline with the lines compared with it
            group = {line: curves[line] for line, b in matched[env].items() if b == base}
            numbers.update(ev.compare(group, base))
        out["envs"][env] = {"window": w, "frames_per_step": ev.frames_per_step(env), "lines": {
            line: {**numbers[line], "label": line_label(line), "variant": line.split(",")[0],
                   "baseline": matched[env][line],
                   "ends": max((c.ends.tolist() for c in curves[line]), key=len),
                   "runs": [c.means.tolist() for c in curves[line]]} for line in curves}}
    return out


def _fmt(v, digits: int = 2) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:,.{digits}f}"


def _table_rows(result: dict) -> list[dict]:
    taxonomy, paper = load_taxonomy(), load_paper_scores()
    rows = []
    for env, e in result["envs"].items():
        for line, d in e["lines"].items():
            col = paper_column(line)
            given = paper.get(env, {}).get(col[0], math.nan) if col else math.nan
            imp = (ev.format_improvement(ev.Improvement(d["improvement"], d["symmetric"]))
                   if d["improvement"] is not None and d["baseline"] not in (None, line) else "")
            rows.append({"env": env, "game": taxonomy.get(env, {}).get("game", env), "line": line, "label": d["label"],
                         "baseline": d["baseline"] or "", "seeds": d["seeds"], "max_score": d["max_score"], "best_peak": d["best_peak"], "auc": d["auc"],
                         "horizon_windows": d["horizon"], "auc_improvement": imp,
                         "paper": given, "paper_column": col[0] if col and not math.isnan(given) else "",
                         "paper_compares": col[1] if col and not math.isnan(given) else ""})
    return rows


def write_report(sweep_dir: str | os.PathLike, window: int | None = None, baseline: str | None = None) -> list[Path]:
    """Write ``DIR/report/`` (see the module docstring) and return the paths written.

    The report is written into a new folder beside it, which then takes the place of the earlier
    report whole: no file of an earlier report stays, and an error leaves the earlier one as it was.
    """
    from pcnn_explore.sweep.deep_sea_report import deep_sea_records, write_deep_sea_report

    deep_sea_only = deep_sea_records(sweep_dir)[1] and window is None  # bsuite's protocol, no curves
    result = None if deep_sea_only else evaluate_sweep(sweep_dir, window, baseline)
    root = Path(sweep_dir)
    final = root / "report"
    if final.is_symlink() or (final.exists() and not final.is_dir()):
        raise SweepError(f"{final} is not a report folder: move it away to write the report")
    _clear_leftovers(root, final)
    fresh = root / f".report-new-{os.getpid()}-{time.time_ns()}"
    fresh.mkdir()
    stale = root / f".report-old-{os.getpid()}-{time.time_ns()}"
    try:
        names = [] if result is None else _write_files(result, fresh)
        names += [p.name for p in write_deep_sea_report(sweep_dir, required=deep_sea_only, out=fresh)]
        fsync_dir(fresh)
        if not final.exists():
            os.rename(fresh, final)  # (atomic: no report, or the whole new one)
        elif _swap(fresh, final):  # report/ is the new one, fresh the earlier one: at no moment is there none
            stale = fresh
        else:  # a file system without the exchange: two renames, undone on an error
            os.rename(final, stale)
            os.rename(fresh, final)
    except BaseException:
        if stale.exists() and not final.exists():
            os.rename(stale, final)
        if fresh != stale:
            shutil.rmtree(fresh, ignore_errors=True)
        raise
    fsync_dir(root)  # the swap is on disk before the old report goes
    shutil.rmtree(stale, ignore_errors=True)
    return [final / n for n in names]


def _swap(a: Path, b: Path) -> bool:
    """Exchange the folders ``a`` and ``b`` in one atomic step; False where this system or file
    system cannot (nothing changed then)."""
    import ctypes

    if not (sys.platform.startswith("linux") or sys.platform == "darwin"):  # (ctypes.CDLL(None) fails on Windows)
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if sys.platform.startswith("linux"):
            fn, args = libc.renameat2, (-100, os.fsencode(a), -100, os.fsencode(b), 2)  # AT_FDCWD, RENAME_EXCHANGE
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        elif sys.platform == "darwin":
            fn, args = libc.renamex_np, (os.fsencode(a), os.fsencode(b), 2)  # RENAME_SWAP
            fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
        else:
            return False
    except (OSError, AttributeError):  # no such call in this C library
        return False
    fn.restype = ctypes.c_int
    if fn(*args) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(err, f"cannot put the new report in place of {b}: {os.strerror(err)}")


def _clear_leftovers(root: Path, final: Path) -> None:
    """The folders a report killed midway left in ``root``: with no ``report/``, an earlier report
    renamed aside (where the two folders could not be exchanged) is put back; the rest removed.
    Those of a report still being written by a live process are left alone (on Windows, where
    no process can be probed without ending it, those of other processes are all left alone)."""
    def dead(path: Path) -> bool:
        try:
            pid = int(path.name.split("-")[2])
        except (IndexError, ValueError):
            return False  # not a name this module gives
        if pid == os.getpid():
            return True  # this process writes one report at a time
        if sys.platform == "win32":  # (os.kill(pid, 0) there ends the process)
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:  # (another user's live process)
            return False
        return False

    for old in sorted(root.glob(".report-old-*"), reverse=True):  # the newest first
        if old.is_dir() and dead(old):
            if not final.exists() and not final.is_symlink():
                os.rename(old, final)
            else:
                shutil.rmtree(old, ignore_errors=True)
    for new in root.glob(".report-new-*"):
        if new.is_dir() and dead(new):
            shutil.rmtree(new, ignore_errors=True)


def _write_files(result: dict, out: Path) -> list[str]:
    """The report's files in the empty folder ``out``; returns their names."""
    from pcnn_explore.atomic import atomic_write, write_text_atomic
    from pcnn_explore.plots.evaluation import plot_auc_improvements, plot_eval_curves
    from pcnn_explore.report import _plain

    baseline = result["baseline"]
    paths = []
    taxonomy = load_taxonomy()
    for env, e in result["envs"].items():
        lines = {d["label"]: {"ends": d["ends"], "runs": [r + [math.nan] * (len(d["ends"]) - len(r)) for r in d["runs"]]}
                 for d in e["lines"].values()}  # seeds that ran fewer windows: NaN-padded
        colours = {d["label"]: line_colour(line) or "0.25" for line, d in e["lines"].items()}  # DQN: grey
        title = f"{taxonomy.get(env, {}).get('game', env)}: mean return per {e['window'] * e['frames_per_step']:,} frames"
        fig = plot_eval_curves(lines, title, e["frames_per_step"], colours)
        paths.append(out / f"curves_{folder_safe(env)}.png")
        with atomic_write(paths[-1]) as f:
            fig.savefig(f, format="png", dpi=110)
    rows = _table_rows(result)
    fields = list(rows[0])
    with atomic_write(out / "max_scores.csv", "w") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    paths.append(out / "max_scores.csv")
    md = ["| game | line | seeds | max score | best seed's peak | AUC | AUC vs " + baseline + " | paper |",
          "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        paper = (f"{r['paper']:,.2f} ({r['paper_column']}, vs our {r['paper_compares'].replace('_', ' ')})"
                 if r["paper_column"] else "")
        md.append(f"| {r['game']} | {r['label']} | {r['seeds']} | {_fmt(r['max_score'])} | {_fmt(r['best_peak'])} | "
                  f"{_fmt(r['auc'])} | {r['auc_improvement']} | {paper} |")
    windows = ", ".join(sorted({f"{e['window']:,}" for e in result["envs"].values()}))
    md += ["", f"Maximum score: each seed's highest point of its curve (windows of {windows} agent steps), averaged "
           "over seeds; AUC: mean of the curve over the windows that its baseline and every line compared with "
           "that baseline have."]
    if any(r["baseline"] not in ("", r["line"], baseline) for r in rows):
        md.append(f"AUC vs {baseline}: each line against the {baseline} line at the same settings.")
    if any(r["auc_improvement"].endswith("*") for r in rows):
        md.append(ev.SYMMETRIC_NOTE)
    paths.append(write_text_atomic(out / "max_scores.md", "\n".join(md) + "\n"))
    improvements: dict[str, dict[str, ev.Improvement]] = {}
    for env, e in result["envs"].items():
        for line, d in e["lines"].items():
            if d["improvement"] is not None and d["baseline"] not in (None, line):
                improvements.setdefault(d["label"], {})[env] = ev.Improvement(d["improvement"], d["symmetric"])
    if improvements:
        hard = {env for env, t in taxonomy.items() if t["exploration"] == "hard"}
        names = {env: t["game"] for env, t in taxonomy.items()}
        fig = plot_auc_improvements(improvements, hard, line_label(baseline), names)
        paths.append(out / "auc_improvements.png")
        with atomic_write(paths[-1]) as f:
            fig.savefig(f, format="png", dpi=110)
    paths.append(write_text_atomic(out / "report.json", json.dumps(_plain(result), indent=1) + "\n"))
    return [p.name for p in paths]

