"""What a sweep costs beyond its trials' training loops, per executor (Ray tasks vs local workers).

    python benchmarks/bench_sweep_overhead.py                       # 20 DeepSea-10 trials, 5K steps, 2 workers
    python benchmarks/bench_sweep_overhead.py --executors local --trials 6 --steps 1000
    python benchmarks/bench_sweep_overhead.py --address 127.0.0.1:6379   # Ray's trials on a running Ray

Runs the same sweep once per executor (``pcnn-explore sweep --executor E --max-concurrent W``, in a
fresh process, each in a folder of its own; ``--address`` gives the Ray executor a running Ray,
whose start then is not in its wall time): ``--trials`` trials on ``DeepSea-<size>-v0`` at the
study profile, half ``dqn`` and half ``cts_mmc`` (seeds 0, 1, ...), ``--steps`` agent steps each.
For each it prints:

- ``wall``: seconds from the command's start to its end (Python start, imports, Ray's start where
  it is used, every trial, the workers' end);
- ``loops``: the sum of the trials' training-loop seconds (``result.json``'s ``wall_seconds``:
  the loop from its first step to its last checkpoint);
- ``ideal``: ``loops / workers``, the wall time of a sweep that cost nothing but its loops;
- ``per trial``: ``(wall - ideal) x workers / trials``, the overhead of one trial (its process,
  imports, env and network building, everything but its loop), start-up of the command included;
- ``per trial, running``: the same from the first trial's start to the last one's end (the
  command's start-up and Ray's left out: what each trial costs once the executor is up);
- ``first``, ``warm``: the median overhead of a worker process's first trial, and of each later
  trial on the same process (``attempt.json``'s process id): the seconds of the trial outside its
  loop (``finished - started - wall_seconds``) plus the gap since that process's previous trial
  ended. Each trial's ``started`` is written once its process has imported the training code.
"""
from __future__ import annotations

import argparse
import collections
import json
import statistics
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_sweep(executor: str, out: Path, trials: int, steps: int, size: int, workers: int,
              address: str | None = None) -> dict:
    """Run the sweep with ``executor`` in a fresh process; return its figures (seconds)."""
    seeds = ",".join(str(s) for s in range((trials + 1) // 2))
    cmd = [sys.executable, "-m", "pcnn_explore", "sweep", "--envs", f"DeepSea-{size}-v0", "--variants", "dqn,cts_mmc",
           "--seeds", seeds, "--set", f"steps={steps}", "--profile", "study", "--executor", executor,
           "--max-concurrent", str(workers), "--no-progress", "--out", str(out)]
    if address and executor == "ray":
        cmd += ["--address", address]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{executor}: the sweep failed (rc {r.returncode}) after {wall:.0f} s: "
                           f"{r.stderr.strip()[-2000:]}")
    records = json.loads((out / "sweep.json").read_text())["trials"]
    loops, starts, ends, by_process = [], [], [], collections.defaultdict(list)
    for rec in records:
        folder = Path(rec["out_dir"])
        result = json.loads((folder / "result.json").read_text())
        attempt = json.loads((folder / "attempt.json").read_text())
        loops.append(float(result["wall_seconds"]))
        starts.append(float(attempt["started"]))
        ends.append(float(result["finished"]))
        by_process[attempt["pid"]].append((starts[-1], ends[-1], loops[-1]))
    first, warm = [], []
    for runs in by_process.values():
        runs.sort()
        first.append(runs[0][1] - runs[0][0] - runs[0][2])
        warm += [(f - s - w) + (s - before[1]) for before, (s, f, w) in zip(runs, runs[1:])]
    n = len(records)
    ideal = sum(loops) / workers
    running = max(ends) - min(starts)
    return {"executor": executor, "trials": n, "wall": wall, "loops": sum(loops), "ideal": ideal,
            "per_trial": (wall - ideal) * workers / n, "running": running,
            "per_trial_running": (running - ideal) * workers / n, "processes": len(by_process),
            "first": statistics.median(first), "warm": statistics.median(warm) if warm else float("nan"),
            "command": " ".join(cmd[1:])}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--executors", default="ray,local", help="comma-separated: ray, local (default ray,local)")
    p.add_argument("--trials", type=int, default=20,
                   help="trials (half dqn, half cts_mmc; an odd number rounds up; default 20)")
    p.add_argument("--steps", type=int, default=5000, help="agent steps per trial (default 5000)")
    p.add_argument("--size", type=int, default=10, help="DeepSea size N (default 10)")
    p.add_argument("--workers", type=int, default=2, help="trials at once (default 2)")
    p.add_argument("--out", help="folder for the sweeps (default: a temporary folder, removed)")
    p.add_argument("--address", help="a running Ray's address for the ray executor (default: it starts a local Ray)")
    args = p.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_sweep_") as tmp:
        base = Path(args.out) if args.out else Path(tmp)
        for executor in args.executors.split(","):
            try:
                rows.append(run_sweep(executor, base / executor, args.trials, args.steps, args.size, args.workers,
                                      args.address))
            except RuntimeError as e:  # (a local Ray that did not start: said, and the others measured)
                print(e, flush=True)
                continue
            print(f"{executor}: {rows[-1]['command']}", flush=True)
    print(f"\n{args.trials} trials of DeepSea-{args.size}-v0 (dqn, cts_mmc), {args.steps} agent steps each, "
          f"{args.workers} workers; seconds\n")
    print(f"{'executor':<9} {'wall':>8} {'loops':>8} {'ideal':>8} {'per trial':>10} {'running':>8} "
          f"{'per trial, running':>19} {'processes':>10} {'first':>7} {'warm':>7}")
    for r in rows:
        print(f"{r['executor']:<9} {r['wall']:8.1f} {r['loops']:8.1f} {r['ideal']:8.1f} {r['per_trial']:10.2f} "
              f"{r['running']:8.1f} {r['per_trial_running']:19.2f} {r['processes']:10d} {r['first']:7.2f} "
              f"{r['warm']:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
