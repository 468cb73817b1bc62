"""How long bsuite's whole deep-sea protocol takes on this machine for the CTS lines, from measured rates.

    python benchmarks/deep_sea_protocol_time.py                # about 2 minutes on 2 cores
    python benchmarks/deep_sea_protocol_time.py --steps 20000 --sizes 10 30 50

bsuite's protocol (``pcnn_explore.envs.deep_sea_protocol``): 21 sizes N = 10, 12, ..., 50, 10,000
episodes of N agent steps each, so one line and one seed is 10,000 x (10 + 12 + ... + 50) = 6.3M agent
steps when nothing stops early. This script measures the agent steps per second of the paper's CTS
line (``paper_cts``) and the kit's line (``kit``) at a few sizes (``--steps`` agent steps each, the
loop from its first gradient step on, two runs at once as a 2-core sweep runs them, one torch thread
each), interpolates the rate linearly in N between the sizes measured, and prints the arithmetic:
core-hours per seed, and wall hours for 10 seeds on ``--cores`` cores (runs spread evenly, nothing
stopping early: the worst case; a line that solves a size stops there with ``stop_when_solved``).
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import tempfile  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402

import numpy as np  # noqa: E402

LINES = ("paper_cts", "kit")
PROTOCOL_EPISODES = 10_000


def rate(line: str, size: int, steps: int, out: str) -> float:
    """Agent steps per second of ``line`` on DeepSea-``size`` over ``steps`` steps, from the first gradient step."""
    import torch

    from pcnn_explore.experiments.agents.lines import line as named_line
    from pcnn_explore.run import TrainConfig, train
    from pcnn_explore.run.variants import variant_overrides

    torch.set_num_threads(1)
    v = named_line(line)
    cfg = TrainConfig.preset("study", env=f"DeepSea-{size}-v0", steps=steps, seed=0, tensorboard=False,
                             out_dir=out, **{**variant_overrides(v.variant), **dict(v.overrides)})
    return float(train(cfg, progress=False).learning_steps_per_second)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 30, 40, 50])
    parser.add_argument("--steps", type=int, default=10_000, help="agent steps per measured run")
    parser.add_argument("--cores", type=int, default=2, help="cores the protocol's runs share")
    parser.add_argument("--seeds", type=int, default=10, help="seeds per line")
    args = parser.parse_args(argv)
    from pcnn_explore.envs.deep_sea_protocol import PROTOCOL_SIZES

    jobs = [(line, n) for line in LINES for n in args.sizes]
    with tempfile.TemporaryDirectory() as tmp, ProcessPoolExecutor(max_workers=2) as pool:
        futures = {job: pool.submit(rate, *job, args.steps, os.path.join(tmp, f"{job[0]}_{job[1]}")) for job in jobs}
        rates = {job: f.result() for job, f in futures.items()}
    print(f"{os.cpu_count()} cores, {args.steps:,} agent steps per measured run, two runs at once, load average "
          f"{os.getloadavg()[0]:.1f}")
    for line in LINES:
        measured = np.array([rates[(line, n)] for n in args.sizes])
        print(f"{line}: agent steps/s at N = " + ", ".join(f"{n}: {r:,.0f}" for n, r in zip(args.sizes, measured)))
        per_size = np.interp(PROTOCOL_SIZES, args.sizes, measured)
        steps = [PROTOCOL_EPISODES * n for n in PROTOCOL_SIZES]
        core_h = sum(s / r for s, r in zip(steps, per_size)) / 3600
        print(f"  whole protocol, one seed: {sum(steps) / 1e6:.1f}M agent steps, {core_h:.2f} core-hours; "
              f"{args.seeds} seeds on {args.cores} cores: {core_h * args.seeds / args.cores:.1f} hours (nothing "
              "stopping early)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
