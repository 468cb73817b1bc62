"""The density notebooks' pilot under each optimizer reading of the PixelCNN: per-seed CPU time at the study budget.

For every density notebook (00-06) and every reading (``tf1``, the paper's; ``torch``, the sensitivity
reading) one run of tuning seed 0 (held-out stream 1) at the notebook's study preset, scaled to a share of
its frames where the full run is dear, each in a fresh interpreter with one torch (OpenMP/MKL) thread and a
fresh, empty stream cache (stream generation included), two runs at once (one per core). The figure is the
CPU time (user + system, :func:`resource.getrusage` of the run's process and its children, imports and the
interpreter's start excluded), not the wall time: the machine runs other work at the same time. The per-seed
CPU time at the study budget is the measured time divided by the share run (linear in the frames: it
overstates the fixed costs, the held-out streams and the samples). 03 is priced at 10K, 30K and 100K frames
for the whole grid of 9 (schedule, initial rate) pairs from its run at 5K frames, linearly: every run of the
grid is counted as training all its frames (an upper bound where a run diverges and stops early; the
updates each run did are recorded).

Run (about 15 minutes of wall time on 2 loaded cores)::

    PYTHONPATH=. python benchmarks/density_readings_pilot.py --out data/pilot/density_readings_pilot.json

Prints one line per run and writes the JSON record (``--out``). Only tuning seeds are run: the pilot refuses
any seed :mod:`pcnn_explore.study.preregistered.density` declares seen or a verdict's.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: the tuning seed every pilot run takes (held-out stream: seed + 1)
PILOT_SEED = 0
#: notebook -> (module, share of the study preset's frames run, the fields scaled to that share)
SHARES = {
    "00": ("pseudo_counts", 1.0, {}),
    "01": ("online_training", 0.25, {"n_frames": 4_000, "switch_every": 1_000}),
    "02": ("episode_spikes", 1.0, {}),
    "03": ("lr_schedules", 0.5, {"n_frames": 5_000, "average_last": 1_250}),
    "04": ("samples", 0.2, {"n_train": 5_000}),
    "05": ("pg_montezuma", 0.5, {"n_steps": 2_500, "warmup": 1_000}),
    "06": ("conv_cts", 0.25, {"n_frames": 2_500}),
}
#: frames at which 03's whole grid is priced
PRICE_03_FRAMES = (10_000, 30_000, 100_000)
#: CPU seconds each pilot run was expected to take (the earlier plan's costs times the share): the order of the runs
_GUESS_CPU_S = {"03": 120, "04": 63, "06": 56, "01": 46, "05": 45, "02": 16, "00": 13}
_SETTINGS = {"pseudo_counts": "PseudoCountSettings", "online_training": "OnlineTrainingSettings",
             "episode_spikes": "EpisodeSpikesSettings", "lr_schedules": "LrScheduleSettings", "samples": "SamplesSettings",
             "pg_montezuma": "PgSettings", "conv_cts": "ConvCTSSettings"}


def _cpu_s() -> float:
    """CPU seconds (user + system) of this process and its waited-for children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def settings_of(notebook: str, reading: str):
    """The scaled study settings of ``notebook``'s pilot run under ``reading`` (one seed, this process)."""
    import importlib

    module, _, fields = SHARES[notebook]
    cls = getattr(importlib.import_module(f"pcnn_explore.experiments.density.{module}"), _SETTINGS[module])
    extra = {} if module == "pseudo_counts" else {"workers": 1, "device": "cpu", "progress": False}
    return cls.preset("study", seed=PILOT_SEED, n_seeds=1, rmsprop=reading, **extra, **fields)


def job(notebook: str, reading: str) -> dict:
    """One pilot run in this process: its CPU and wall seconds, and (03) the updates each run of the grid did."""
    import importlib

    import numpy as np
    import torch

    torch.set_num_threads(1)
    module = importlib.import_module(f"pcnn_explore.experiments.density.{SHARES[notebook][0]}")
    settings = settings_of(notebook, reading)
    cpu0, wall0 = _cpu_s(), time.perf_counter()
    result = module.run(settings)
    out = {"cpu_s": _cpu_s() - cpu0, "wall_s": time.perf_counter() - wall0}
    if notebook == "03":
        out["updates"] = {f"{s}_{lr:g}": int(np.isfinite(t.log_rho).sum()) for (s, lr), t in result.traces.items()}
        out["final_loss_nats"] = {f"{s}_{lr:g}": v for (s, lr), v in result.final_loss.items()}
    return out


def _child(notebook: str, reading: str) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory(prefix="pilot-cache-") as cache:
        env["PCNN_EXPLORE_CACHE"] = cache
        proc = subprocess.run([sys.executable, __file__, "--job", notebook, reading], env=env, capture_output=True,
                              text=True, check=False)
    if proc.returncode:
        raise RuntimeError(f"pilot run {notebook} {reading} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=None, help="write the JSON record here")
    ap.add_argument("--notebooks", default=",".join(SHARES), help="comma-separated, default every density notebook")
    ap.add_argument("--readings", default="tf1,torch")
    ap.add_argument("--workers", type=int, default=2, help="runs at once (one per core)")
    ap.add_argument("--job", nargs=2, metavar=("NOTEBOOK", "READING"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.job:
        print(json.dumps(job(*args.job)))
        return 0
    from pcnn_explore.study.preregistered import density as prereg

    prereg.check_not_verdict_or_seen((PILOT_SEED, PILOT_SEED + 1), tuning_ok=True)
    notebooks = [n for n in args.notebooks.split(",") if n]
    readings = [r for r in args.readings.split(",") if r]
    for n in notebooks:
        if n not in SHARES:
            print(f"error: unknown notebook {n!r}: choose from {', '.join(SHARES)}", file=sys.stderr)
            return 2
    for r in readings:
        if r not in prereg.READINGS:
            print(f"error: unknown reading {r!r}: choose from {', '.join(prereg.READINGS)}", file=sys.stderr)
            return 2
    import torch

    # the dearest first, so that the two workers finish together
    jobs = sorted(((n, r) for n in notebooks for r in readings), key=lambda j: -_GUESS_CPU_S[j[0]])
    load_before = os.getloadavg()
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        measured = dict(zip(jobs, pool.map(lambda j: _child(*j), jobs)))
    runs = []
    for (n, r), m in sorted(measured.items()):
        module, share, fields = SHARES[n]
        entry = {"notebook": n, "reading": r, "seed": PILOT_SEED, "share_of_study_frames": share, "scaled_fields": fields,
                 "cpu_s": round(m["cpu_s"], 2), "wall_s": round(m["wall_s"], 2),
                 "per_seed_cpu_s": round(m["cpu_s"] / share, 1)}
        if n == "03":
            frames = fields["n_frames"]
            entry["updates"] = m["updates"]
            entry["final_loss_nats"] = m["final_loss_nats"]
            entry["per_seed_cpu_s_at_frames"] = {str(f): round(m["cpu_s"] * f / frames, 1) for f in PRICE_03_FRAMES}
            entry["cpu_s_per_update"] = m["cpu_s"] / sum(m["updates"].values())
        runs.append(entry)
        print(f"{n} {r:5s} share {share:.2f}: {m['cpu_s']:7.1f} s CPU ({m['wall_s']:7.1f} s wall) -> "
              f"{entry['per_seed_cpu_s']:7.1f} s CPU per seed at the study budget"
              + ("" if n != "03" else "; whole grid at " + ", ".join(
                  f"{int(f) // 1000}K frames {v:.0f} s" for f, v in entry["per_seed_cpu_s_at_frames"].items())))
    record = {"what": "per-seed CPU time (user + system, one torch thread, cold stream cache) of each density notebook's "
                      "study budget under each optimizer reading, tuning seed 0; CPU time, not wall: the machine ran "
                      "other work at the same time",
              "command": "PYTHONPATH=. python benchmarks/density_readings_pilot.py --out data/pilot/density_readings_pilot.json",
              "machine": {"platform": platform.platform(), "processor": platform.machine(), "cpus": os.cpu_count(),
                          "torch": torch.__version__, "python": platform.python_version(),
                          "load_average_before": [round(x, 2) for x in load_before],
                          "load_average_after": [round(x, 2) for x in os.getloadavg()]},
              "workers": args.workers, "wall_s_total": round(time.perf_counter() - start, 1), "runs": runs}
    if args.out:
        from pcnn_explore.atomic import write_text_atomic

        write_text_atomic(Path(args.out), json.dumps(record, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
