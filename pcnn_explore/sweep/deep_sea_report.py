"""The deep-sea part of ``pcnn-explore sweep --report DIR``: bsuite's protocol on the sweep's DeepSea trials.

Writes into ``DIR/report/`` (see :mod:`pcnn_explore.envs.deep_sea_protocol` for the rules):

- ``deep_sea_scaling.csv``: one row per DeepSea trial: ``size`` (N), ``variant`` (the sweep's
  line, e.g. ``cts_mmc`` or ``pixelcnn_mmc,pg_scale=1``), ``seed``, ``episodes_run`` (complete
  episodes logged), ``solved`` (1 when bsuite's rule, fewer than 9 in 10 episodes so far bad, held at
  some episode within the protocol's 10K, checked at every episode), ``solve_episode`` (1-based, the
  first such episode; empty if none), ``bsuite_solve_episode`` (the first of bsuite's logged episodes
  1, ..., 10, 12, 14, 17, 20, 25, ... at which the rule held, as bsuite finds it; empty if none) and
  ``counts_for_score`` (1 when ``bsuite_solve_episode`` is below 2^N + 100: the size counts for
  bsuite's score). A run can be solved (at 246 on DeepSea-6, say) and not count (bsuite sees it at 250,
  past 2^6 + 100 = 164);
- ``deep_sea_score.csv``: one row per variant: ``sizes_run`` (distinct sizes among its trials),
  ``seeds``, ``sizes_solved`` (mean over seeds of the sizes that count for the score), ``score`` (mean
  over seeds of each seed's score as bsuite counts it: its share of the sizes run with
  ``counts_for_score``; a size a seed has no log for counts as not solved),
  ``score_low`` / ``score_high`` (the 95% Student t interval over the per-seed scores, clipped to
  [0, 1]; empty with one seed) and ``per_seed_scores`` (``seed:score`` joined by ``;``);
- ``deep_sea_scaling.png``: ``solve_episode`` against N (:func:`pcnn_explore.plots.deep_sea.plot_deep_sea_scaling`),
  titled with the trials' episode cap (step budget / N, at most the protocol's episodes).
- ``bsuite/<variant>/seed<seed>/bsuite_id_-_deep_sea-<k>.csv``: each DeepSea trial's log in bsuite's own
  csv format (:mod:`pcnn_explore.envs.bsuite_log`: the rows bsuite's Logging wrapper writes, at its
  logged episodes), so that bsuite's tools and results published by others read them: each
  ``bsuite/<variant>/seed<seed>/`` is one bsuite results folder (one agent run over the sizes;
  ``bsuite.logging.csv_load.load_bsuite`` loads it). Only bsuite's tasks get a file: sizes N = 10, 12,
  ..., 50 on bsuite's mapping (seed 42, bsuite's draw), trials with at least one complete episode
  (characters of a variant other than letters, digits and ``._=,-`` are written as ``_``);
  no folder when no trial is one. bsuite scores a folder over the sizes it holds; ``deep_sea_score.csv``
  counts a size the variant ran and the seed has no log for as not solved.

Trials that have not finished count with the episodes they have logged. The seed is the unit:
episodes are never pooled across seeds.
"""
from __future__ import annotations

import csv
import math
import os
from pathlib import Path

import numpy as np

from pcnn_explore.envs.deep_sea import deep_sea_size
from pcnn_explore.envs.deep_sea_protocol import (PROTOCOL_EPISODES, bsuite_solve_episode, solve_episode, solved_in_time,
                                                 successes_from_log)
from pcnn_explore.sweep.grid import SweepError, line_colour, line_label
from pcnn_explore.sweep.records import read_sweep

__all__ = ["SCALING_COLUMNS", "SCORE_COLUMNS", "BSUITE_FOLDER", "deep_sea_records", "evaluate_deep_sea",
           "write_deep_sea_report", "write_bsuite_logs"]

SCALING_COLUMNS = ("size", "variant", "seed", "episodes_run", "solved", "solve_episode", "bsuite_solve_episode",
                   "counts_for_score")
SCORE_COLUMNS = ("variant", "sizes_run", "seeds", "sizes_solved", "score", "score_low", "score_high",
                 "per_seed_scores")


def deep_sea_records(sweep_dir: str | os.PathLike) -> tuple[list[dict], bool]:
    """(the sweep's DeepSea trial records, whether every trial of the sweep is one)."""
    records = read_sweep(sweep_dir)
    mine = [r for r in records if deep_sea_size(r.get("env")) is not None]
    return mine, bool(mine) and len(mine) == len(records)


def evaluate_deep_sea(sweep_dir: str | os.PathLike, episodes: int = PROTOCOL_EPISODES) -> dict:
    """``{"rows": [scaling row per trial], "scores": [score row per variant], "caps": [the distinct
    episode caps of the trials: step budget / N, at most ``episodes``]}`` of the sweep's DeepSea
    trials (see the module docstring); only the first ``episodes`` of each run are read. Raises
    SweepError when none of them has logged an episode."""
    from pcnn_explore.run.log import read_log
    from pcnn_explore.verdicts import shown_interval

    root = Path(sweep_dir)
    records, _ = deep_sea_records(root)
    rows, logged, caps = [], 0, set()
    for r in records:
        log_dir = root / r["folder"]
        successes = successes_from_log(read_log(log_dir)) if (log_dir / "log.csv").is_file() else []
        logged += len(successes) > 0
        n, within = int(deep_sea_size(r["env"])), list(successes[:episodes])
        first, seen = solve_episode(within), bsuite_solve_episode(within)
        rows.append({"size": n, "variant": r.get("line") or r["variant"], "seed": int(r["seed"]),
                     "episodes_run": len(successes), "solved": int(first is not None), "solve_episode": first,
                     "bsuite_solve_episode": seen, "counts_for_score": int(solved_in_time(n, seen, episodes))})
        caps.add(_episode_cap(r, n, episodes))
    if not logged:
        raise SweepError(f"{root}: no DeepSea trial has logged an episode yet; run the sweep (pcnn-explore sweep ...) "
                         "first")
    rows.sort(key=lambda x: (x["variant"], x["size"], x["seed"]))
    scores = []
    for variant in dict.fromkeys(x["variant"] for x in rows):
        mine = [x for x in rows if x["variant"] == variant]
        sizes, seeds = sorted({x["size"] for x in mine}), sorted({x["seed"] for x in mine})
        solved = {s: sum(x["counts_for_score"] for x in mine if x["seed"] == s) for s in seeds}
        per_seed = {s: solved[s] / len(sizes) for s in seeds}
        values = [per_seed[s] for s in seeds]
        low, high = shown_interval(values)
        scores.append({"variant": variant, "sizes_run": len(sizes), "seeds": len(seeds),
                       "sizes_solved": sum(solved.values()) / len(seeds), "score": sum(values) / len(values),
                       "score_low": max(low, 0.0), "score_high": min(high, 1.0),  # (NaN kept: one seed)
                       "per_seed_scores": ";".join(f"{s}:{per_seed[s]:.4g}" for s in seeds)})
    return {"rows": rows, "scores": scores, "caps": sorted(caps)}


def _episode_cap(record: dict, size: int, episodes: int) -> int:
    """The episodes a trial may run: its step budget (``steps_total``) / N, at most ``episodes``."""
    steps = record.get("steps_total")
    return min(episodes, int(steps) // size) if isinstance(steps, int) and not isinstance(steps, bool) and steps > 0 \
        else episodes


def _title(caps: list[int]) -> str:
    within = f"{caps[0]:,}" if len(caps) == 1 else f"{caps[0]:,} to {caps[-1]:,}"
    return f"Deep sea: episodes to solve (bsuite's rule at every episode; at most {within} episodes a run)"


def _cell(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def _csv_text(columns, rows) -> str:
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    w.writerows([[_cell(r[c]) for c in columns] for r in rows])
    return buf.getvalue()


def write_deep_sea_report(sweep_dir: str | os.PathLike, episodes: int = PROTOCOL_EPISODES,
                          required: bool = True, out: str | os.PathLike | None = None) -> list[Path]:
    """Write the deep-sea files into ``out`` (default ``DIR/report/``; :func:`pcnn_explore.sweep.report.write_report`
    passes the fresh folder it swaps in) and return their paths; ``[]`` when the sweep has
    no DeepSea trial, or (``required=False``) none that has logged an episode. Everything is
    computed before the first file is written."""
    from pcnn_explore.atomic import atomic_write, write_text_atomic
    from pcnn_explore.plots.deep_sea import plot_deep_sea_scaling

    if not deep_sea_records(sweep_dir)[0]:
        return []
    try:
        result = evaluate_deep_sea(sweep_dir, episodes)
    except SweepError:
        if required:
            raise
        return []
    variants = list(dict.fromkeys(r["variant"] for r in result["rows"]))
    fig = plot_deep_sea_scaling(result["rows"], {v: line_label(v) for v in variants},
                                {v: line_colour(v) for v in variants}, _title(result["caps"]))
    out = Path(sweep_dir) / "report" if out is None else Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [write_text_atomic(out / "deep_sea_scaling.csv", _csv_text(SCALING_COLUMNS, result["rows"])),
             write_text_atomic(out / "deep_sea_score.csv", _csv_text(SCORE_COLUMNS, result["scores"]))]
    paths.append(out / "deep_sea_scaling.png")
    with atomic_write(paths[-1]) as f:
        fig.savefig(f, format="png", dpi=110)
    if write_bsuite_logs(sweep_dir, out / BSUITE_FOLDER, episodes):
        paths.append(out / BSUITE_FOLDER)
    return paths


#: the report's folder of bsuite csv logs (see the module docstring)
BSUITE_FOLDER = "bsuite"


def _is_bsuite_task(record: dict, size: int) -> bool:
    """Whether a trial runs one of bsuite's deep_sea tasks: a protocol size on bsuite's mapping (seed 42, bsuite's draw)."""
    from pcnn_explore.envs.deep_sea import DEFAULT_MAPPING_RULE, DEFAULT_MAPPING_SEED
    from pcnn_explore.envs.deep_sea_protocol import PROTOCOL_SIZES

    over = record.get("overrides") or {}
    return (size in PROTOCOL_SIZES and over.get("mapping_seed", DEFAULT_MAPPING_SEED) == DEFAULT_MAPPING_SEED
            and over.get("mapping_rule", DEFAULT_MAPPING_RULE) in (None, DEFAULT_MAPPING_RULE))


def write_bsuite_logs(sweep_dir: str | os.PathLike, out: str | os.PathLike,
                      episodes: int = PROTOCOL_EPISODES) -> list[Path]:
    """Write each DeepSea trial of bsuite's tasks (its first ``episodes`` complete episodes) as bsuite's
    csv log, ``out/<variant>/seed<seed>/bsuite_id_-_deep_sea-<k>.csv`` (see the module docstring),
    and return the files written ([] when none)."""
    import re

    from pcnn_explore.envs.bsuite_log import write_bsuite_log
    from pcnn_explore.run.log import read_log

    root, written = Path(sweep_dir), []
    for r in deep_sea_records(root)[0]:
        n, log_dir = int(deep_sea_size(r["env"])), root / r["folder"]
        if not _is_bsuite_task(r, n) or not (log_dir / "log.csv").is_file():
            continue
        log = read_log(log_dir)
        done = np.flatnonzero(np.asarray(log["complete"]) == 1)
        if done.size > episodes:  # the protocol's first episodes only
            log = {k: np.asarray(v)[: done[episodes - 1] + 1] for k, v in log.items()}
        variant = re.sub(r"[^A-Za-z0-9._=,-]", "_", str(r.get("line") or r["variant"]))
        path = write_bsuite_log(log, Path(out) / variant / f"seed{int(r['seed'])}", n)
        if path is not None:
            written.append(path)
    return written
