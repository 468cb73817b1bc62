"""The deep-sea pilot's runs (07-10): every pilot line on the tuning seeds, sizes and caps of
:mod:`pcnn_explore.study.power`, which reads them back and analyses them (:func:`pcnn_explore.study.power.analyse`).

Re-run the pilot (about 20-25 minutes on 2 cores)::

    python -c "from pcnn_explore.experiments.agents.pilot import run_pilot; run_pilot('/tmp/pilot')"
"""
from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from pcnn_explore.study.power import (PILOT_CAPS, PILOT_FILE, PILOT_LINES, PILOT_SEEDS, PILOT_SIZES,
                                      RATE_PROBE_LINES)
from pcnn_explore.study.preregistered import deep_sea as pre

__all__ = ["run_pilot"]


# --- the pilot's runs ---------------------------------------------------------------------------------------

def _run_record(r, mapping: int | None, coverage_mean: float | None) -> dict[str, Any]:
    return {"line": r.key, "size": r.size, "seed": r.seed, "mapping_seed": mapping, "cap": r.cap,
            "episodes_run": r.episodes_run, "bsuite_solve_episode": r.bsuite_solve_episode,
            "solve_episode": r.solve_episode, "first_success_episode": r.first_success_episode,
            "success_rate": None if math.isnan(r.success_rate) else r.success_rate,
            "coverage": None if math.isnan(r.coverage) else r.coverage,
            "mean_coverage": None if coverage_mean is None or math.isnan(coverage_mean) else coverage_mean,
            "wall_s": r.wall_s}


def run_pilot(out_dir, seeds: Sequence[int] = PILOT_SEEDS, lines: Sequence[str] = PILOT_LINES,
              sizes: Sequence[int] = PILOT_SIZES, caps: Sequence[int] = PILOT_CAPS, workers: int = 2,
              budget_s: float = 1_380.0, path=PILOT_FILE, probe_episodes: int = 100) -> dict[str, Any]:
    """Run the pilot under ``out_dir`` one seed at a time (each seed every line on every size, ``workers``
    runs at once) until the next seed would pass ``budget_s`` seconds (measured on the seeds run), then
    the speed probe of :data:`RATE_PROBE_LINES` (``probe_episodes`` episodes of DeepSea-14, first seed);
    write everything to ``path`` after each seed and return it. Refuses a verdict or seen seed."""
    from pcnn_explore.experiments.agents.deep_sea_study import DeepSeaStudySettings, run_study
    from pcnn_explore.run.lines import line

    bad = sorted(set(seeds) - set(pre.TUNING_SEEDS))
    if bad:
        raise ValueError(f"the pilot runs tuning seeds only (study.preregistered.deep_sea.TUNING_SEEDS); {bad} are not")
    variants = [line(k) for k in lines]
    every = (("stop_when_solved", True), ("tensorboard", False))
    out = {"about": "deep-sea pilot on tuning seeds (pcnn_explore.experiments.agents.pilot.run_pilot)",
           "sizes": list(sizes), "caps": list(caps), "lines": list(lines), "workers": workers,
           "mapping_rule": pre.MAPPING_RULE, "stop_when_solved": True, "seeds": [], "runs": [], "seed_wall_s": [],
           "probe": []}
    start = time.monotonic()
    for s in seeds:
        took = out["seed_wall_s"]
        if took and time.monotonic() - start + max(took) > budget_s:
            break
        settings = DeepSeaStudySettings(profile="study", sizes=tuple(sizes), episodes=tuple(caps), seeds=(int(s),),
                                        workers=workers, mapping_seed=pre.PER_SEED, train_overrides=every)
        t0 = time.monotonic()
        study = run_study(settings, variants, Path(out_dir) / f"seed{s}")
        took.append(time.monotonic() - t0)
        out["seeds"].append(int(s))
        out["runs"] += [_run_record(r, settings.mapping_of(r.seed), study.mean_coverage(r.key, r.size)[0])
                        for r in study.runs]
        out["wall_s"] = time.monotonic() - start
        _write(out, path)
    settings = DeepSeaStudySettings(profile="study", sizes=(14,), episodes=(probe_episodes,), seeds=(int(seeds[0]),),
                                    workers=workers, mapping_seed=pre.PER_SEED, train_overrides=every)
    t0 = time.monotonic()
    study = run_study(settings, [line(k) for k in RATE_PROBE_LINES], Path(out_dir) / "probe")
    out["probe"] = [_run_record(r, settings.mapping_of(r.seed), None) for r in study.runs]
    out["probe_wall_s"] = time.monotonic() - t0
    out["wall_s"] = time.monotonic() - start
    _write(out, path)
    return out


def _write(out: Mapping[str, Any], path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, indent=1, allow_nan=False, default=lambda x: None) + "\n")
    tmp.replace(path)
