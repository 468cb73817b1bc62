"""Notebook 13's runs and what they show: one RunSpec per size x line x seed (:func:`specs`, :func:`run`),
each run's values from its ``log.csv`` (:func:`run_values`), a Reactor run's trace products from its
``traces.csv`` (:func:`run_traces`) and the per-seed values of every line (:func:`collect`). Steps
are agent steps."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from pcnn_explore.envs.deep_sea import deep_sea_id
from pcnn_explore.envs.deep_sea_protocol import bsuite_solve_episode, solve_episode, solved_in_time, successes_from_log
from pcnn_explore.experiments.agents.agent_runs import RunSpec, run_specs
from pcnn_explore.run.variants import MMC_BETA, variant_agent
from pcnn_explore.experiments.agents.reactor_lines import LINES
from pcnn_explore.experiments.agents.reactor_settings import ReactorStudySettings

__all__ = ["specs", "run", "run_values", "run_traces", "collect"]


# ------------------------------------------------------------------------------------- runs
def specs(settings: ReactorStudySettings, out_root: str | os.PathLike) -> list[RunSpec]:
    """One RunSpec per size x line x seed, under ``out_root/<env>/<line>_s<seed>``: the settings'
    ``overrides`` with the line's own settings on top (a PixelCNN line's optimizer reading the settings'
    ``density_optimizer``), and the seed's ``mapping_seed`` where set (:meth:`ReactorStudySettings.mapping_of`)."""
    out = []
    for n in settings.sizes:
        for v in settings.variants:
            over = {**dict(settings.overrides), **dict(LINES[v].overrides)}
            if "density_optimizer" in over:
                over["density_optimizer"] = settings.density_optimizer
            for s in settings.seeds:
                mapping = settings.mapping_of(s)
                fields = over if mapping is None else {**over, "mapping_seed": mapping}
                out.append(RunSpec(v, deep_sea_id(n), int(s), settings.steps(n), settings.profile,
                                   str(Path(out_root) / deep_sea_id(n) / f"{v}_s{s}"), tuple(sorted(fields.items())),
                                   v, LINES[v].display))
    return out


def run(settings: ReactorStudySettings, output_dir: str | os.PathLike, progress: bool = False) -> list[RunSpec]:
    """Train (or read back finished, resume unfinished) every run under ``output_dir/runs``; their specs."""
    settings.check()
    todo = specs(settings, Path(output_dir) / "runs")
    run_specs(todo, settings.workers, progress=progress)
    return todo


def run_values(out_dir: str | os.PathLike, size: int, late_fraction: float = 0.25) -> dict[str, Any]:
    """One run's values from its ``log.csv``: ``success`` (E,) 0/1 per complete episode; ``auc`` (their
    mean; NaN with none), ``late`` (mean over the last ``late_fraction`` of them), ``solve_episode``
    (1-based, bsuite's rule at every episode; None: never), ``bsuite_solve_episode`` (the first of
    bsuite's logged episodes at which the rule holds; None: none), ``solved`` (that logged episode in
    time for the score, within the episodes run), ``first_success`` (1-based; None), ``episodes``."""
    from pcnn_explore.run.log import read_log

    won = successes_from_log(read_log(out_dir))
    e = len(won)
    late = won[int(round(e * (1.0 - late_fraction))):]
    seen = bsuite_solve_episode(won)
    return {"success": won.astype(int).tolist(), "episodes": e, "auc": float(won.mean()) if e else math.nan,
            "late": float(late.mean()) if len(late) else math.nan, "solve_episode": solve_episode(won),
            "bsuite_solve_episode": seen, "solved": bool(solved_in_time(size, seen, max(e, 1))),
            "first_success": int(np.flatnonzero(won)[0]) + 1 if won.any() else None}


def run_traces(out_dir: str | os.PathLike, bins: int = 10) -> dict[str, Any]:
    """A Reactor run's ``traces.csv`` summed over its learn calls: ``from_start`` (replayed sequences
    that start at an episode's first step and hold a clipped reward above 0.5, the +1 or a large
    bonus), ``from_start_product`` (their mean trace product, NaN with none) and ``from_start_span``
    (their mean last large-reward step k, in steps), ``rewarded`` / ``rewarded_product`` (every replayed sequence
    holding such a reward, any start), ``c_mean`` (mean over learn calls of the mean c), ``learn_calls``,
    and ``curve``: (``bins`` agent steps (end of each bin), from-start product per bin, NaN where none)."""
    from pcnn_explore.run.trace_log import read_traces

    t = read_traces(out_dir)

    def weighted(count, value):
        w = np.nan_to_num(t[count])
        return float(np.nansum(w * np.nan_to_num(t[value])) / w.sum()) if w.sum() else math.nan

    edges = np.linspace(0, t["step"].max() if len(t["step"]) else 1, bins + 1)
    which = np.clip(np.searchsorted(edges, t["step"], side="left") - 1, 0, bins - 1)
    w = np.nan_to_num(t["from_start"]) * 1.0
    p = w * np.nan_to_num(t["from_start_product_mean"])
    num, den = np.bincount(which, p, bins), np.bincount(which, w, bins)
    return {"learn_calls": int(len(t["step"])), "from_start": int(np.nansum(t["from_start"])),
            "from_start_product": weighted("from_start", "from_start_product_mean"),
            "from_start_span": weighted("from_start", "from_start_span_mean"),
            "rewarded": int(np.nansum(t["rewarded"])), "rewarded_product": weighted("rewarded", "product_mean"),
            "c_mean": float(np.nanmean(t["c_mean"])) if len(t["c_mean"]) else math.nan,
            "curve": (edges[1:].tolist(), np.where(den > 0, num / np.maximum(den, 1e-300), np.nan).tolist())}


def _mean_of_known(values) -> float:
    known = [x for x in values if x == x]
    return float(np.mean(known)) if known else math.nan


def collect(settings: ReactorStudySettings, todo: list[RunSpec]) -> dict[str, Any]:
    """Every run's values and traces, and per line the per-seed values (seeds order; the mean over
    the sizes): ``{"runs": [...], "per_seed": {line: {"auc", "late", "solved", "solve_episode",
    "bsuite_solve_episode" (both censored at episodes + 1)}}, "traces": {Reactor line:
    {"from_start_product", "from_start", "from_start_span", "c_mean", per seed}}, "dqn_mmc_beta": the
    MMC beta of the DQN-CTS runs (else of the first DQN line run; the paper's 0.1 without any)}``."""
    from pcnn_explore.envs.deep_sea import deep_sea_size

    runs = []
    for s in todo:
        n = deep_sea_size(s.env)
        row = {"variant": s.variant, "size": n, "seed": s.seed, **run_values(s.out_dir, n, settings.late_fraction)}
        if variant_agent(s.variant) == "reactor":
            row["traces"] = run_traces(s.out_dir)
        runs.append(row)

    def per_seed(v, f):
        out = []
        for seed in settings.seeds:
            vals = [r[f] for r in runs if r["variant"] == v and r["seed"] == seed]
            if f in ("solve_episode", "bsuite_solve_episode"):
                vals = [settings.episodes + 1 if x is None else x for x in vals]
            out.append(float(np.mean(vals)))
        return out

    fields = ("auc", "late", "solved", "solve_episode", "bsuite_solve_episode")
    per = {v: {f: per_seed(v, f) for f in fields} for v in settings.variants}
    traces = {}
    for v in settings.variants:
        if variant_agent(v) != "reactor":
            continue
        traces[v] = {f: [_mean_of_known([r["traces"][f] for r in runs if r["variant"] == v and r["seed"] == s])
                         for s in settings.seeds] for f in ("from_start_product", "from_start_span", "from_start", "c_mean")}
    dqn = sorted((s for s in todo if variant_agent(s.variant) == "dqn"), key=lambda s: s.variant != "cts_mmc")
    beta = json.loads((Path(dqn[0].out_dir) / "settings.json").read_text())["mmc_beta"] if dqn else MMC_BETA
    return {"runs": runs, "per_seed": per, "traces": traces, "dqn_mmc_beta": float(beta)}
