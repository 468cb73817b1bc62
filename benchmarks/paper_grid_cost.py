"""What the paper's Atari grids would cost at the kit's measured speeds: runs, GPU-hours, CPU core-hours.

    python benchmarks/paper_grid_cost.py

For each shipped grid of the paper's figures (``pcnn-explore sweep figN``, the ``paper`` profile: 150M
frames, 37.5M agent steps a run) it counts the runs per kind and prints the hours, from these rates:

- DQN and DQN-PixelCNN: 1,521 and 1,086 agent steps/s, measured on one NVIDIA H100 (Pong, 8 envs,
  the learning phase, best of 2; ``benchmarks/results/``): one GPU per run, the hours are GPU-hours;
- CTS and ConvCTS: their density update runs on a CPU core, 5.6 ms and 2.2 ms per 42x42 frame
  (``benchmarks/bench_cts.py``, docs/benchmarks.md), at every agent step: a run needs that many CPU
  core-hours beside DQN's GPU-hours (the GPU waits on the core unless the update is moved to a
  worker thread, ``bonus_thread``, which overlaps the two but does not shorten the core's work);
- Reactor: not measured at the paper's scale; counted, not priced.

Nothing runs: the grids are only expanded (``pcnn_explore.sweep.grid``).
"""
from __future__ import annotations

import argparse

#: agent steps per second of one run (GPU)
GPU_RATES = {"dqn": 1_521, "pixelcnn": 1_086}
#: seconds of one CPU core per density update (one per agent step) of the CTS models on 42x42 frames
CPU_UPDATE_SECONDS = {"cts": 5.6e-3, "convcts": 2.2e-3}
GRIDS = ("fig5", "fig6", "fig8", "fig11", "fig12", "fig13", "fig14")


def grid_cost(name: str) -> dict:
    """Runs per kind and the hours of grid ``name`` at :data:`GPU_RATES` and :data:`CPU_UPDATE_SECONDS`."""
    from pcnn_explore.sweep.grid import grid_path, load_grid

    grid = load_grid(grid_path(name))
    out = {"figure": grid.figure, "runs": 0, "steps": 0, "gpu_hours": 0.0, "cpu_core_hours": 0.0, "unpriced": 0,
           "kinds": {}}
    for trial in grid.trials():
        cfg = trial.config()
        kind = "reactor" if cfg.agent == "reactor" else cfg.bonus if cfg.bonus != "none" else "dqn"
        out["runs"] += 1
        out["steps"] += cfg.steps
        out["kinds"][kind] = out["kinds"].get(kind, 0) + 1
        if kind == "reactor":
            out["unpriced"] += 1
        elif kind in CPU_UPDATE_SECONDS:
            out["gpu_hours"] += cfg.steps / GPU_RATES["dqn"] / 3600
            out["cpu_core_hours"] += cfg.steps * CPU_UPDATE_SECONDS[kind] / 3600
        else:
            out["gpu_hours"] += cfg.steps / GPU_RATES["pixelcnn" if kind == "pixelcnn" else "dqn"] / 3600
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("grids", nargs="*", default=list(GRIDS), help="shipped grid names (default: all the figures')")
    args = parser.parse_args(argv)
    print("| grid | figure | runs (by kind) | agent steps | GPU-hours | CPU core-hours (CTS density) | not priced |")
    print("|---|---|---|---|---|---|---|")
    total_gpu = total_cpu = 0.0
    for name in args.grids:
        c = grid_cost(name)
        kinds = ", ".join(f"{k} {n}" for k, n in c["kinds"].items())
        print(f"| {name} | {c['figure']} | {c['runs']} ({kinds}) | {c['steps'] / 1e9:.2f}B | {c['gpu_hours']:,.0f} | "
              f"{c['cpu_core_hours']:,.0f} | {c['unpriced'] or ''} |")
        total_gpu, total_cpu = total_gpu + c["gpu_hours"], total_cpu + c["cpu_core_hours"]
    print(f"\nin all: {total_gpu:,.0f} GPU-hours and {total_cpu:,.0f} CPU core-hours (Reactor runs not priced)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
