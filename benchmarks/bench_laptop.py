"""Agent steps per second on a laptop's CPU, and where each agent step's time goes.

    python benchmarks/bench_laptop.py                  # the table of docs/benchmarks.md (about 3 minutes on 2 cores)
    python benchmarks/bench_laptop.py --steps 20000    # longer runs, steadier figures
    python benchmarks/bench_laptop.py --json out.json

Each case runs ``pcnn_explore.run.train`` for ``--steps`` agent steps in this process, one torch thread:

- ``DeepSea-20 cts, train's settings``: exactly what ``pcnn-explore train --env DeepSea-20-v0 --bonus cts``
  resolves to (DeepSea's defaults: a gradient step every 2 agent steps, Adam; the paper's CTS bonus
  and MMC beta 0.1; TensorBoard on), once with each learn step (``learn_step`` numpy, the default
  there, and torch), 1 env;
- with the study profile's ``--train-every 4 --batch-size 32`` and no TensorBoard:
  ``DeepSea-20-v0`` ``dqn`` (no bonus) and ``cts_mmc`` (CTS bonus, MMC beta 0.1), and
  ``MiniGrid-RoomChain-R6-v0`` with ``--view partial``: ``cts_mmc``; each with 1 and 8 envs.

It prints, per case, agent steps per second over the loop (start-up excluded) and the loop's time per agent step split into env (stepping the envs), act (the
epsilon-greedy actions of all envs), learn (gradient steps, sampling included), density (the
density model's updates and the bonus) and rest (replay writes, logging, checkpoints, the loop
itself), in microseconds, as a markdown table. The parts are timed by wrapping the loop's calls
(a few hundred nanoseconds each), so they add up to the loop's wall time.
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from contextlib import contextmanager  # noqa: E402

#: the study profile's laptop settings of the cases below
LAPTOP = {"train_every": 4, "batch_size": 32, "tensorboard": False}
#: (label, env id, bonus, extra TrainConfig settings, env counts: None for --envs)
CASES = (
    ("DeepSea-20 cts, train's settings, numpy step", "DeepSea-20-v0", "cts", {"learn_step": "numpy"}, (1,)),
    ("DeepSea-20 cts, train's settings, torch step", "DeepSea-20-v0", "cts", {"learn_step": "torch"}, (1,)),
    ("DeepSea-20 dqn", "DeepSea-20-v0", "none", LAPTOP, None),
    ("DeepSea-20 cts_mmc", "DeepSea-20-v0", "cts", {**LAPTOP, "mmc_beta": 0.1}, None),
    ("RoomChain-R6 partial cts_mmc", "MiniGrid-RoomChain-R6-v0", "cts", {**LAPTOP, "mmc_beta": 0.1, "view": "partial"},
     None),
)
PARTS = ("env", "act", "learn", "density")


@contextmanager
def timed(clock: dict):
    """Wrap the loop's calls so that ``clock[part]`` sums their wall seconds; undone on exit."""
    from pcnn_explore.run.envs import EnvPool
    from pcnn_explore.run.learners import DQNLearner
    from pcnn_explore.run.scorer import BonusScorer

    targets = [(EnvPool, "step", "env"), (DQNLearner, "act", "act"), (DQNLearner, "learn", "learn"),
               (BonusScorer, "submit", "density")]
    saved = [(cls, name, getattr(cls, name)) for cls, name, _ in targets]

    def wrap(fn, part):
        def inner(*args, **kwargs):
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                clock[part] += time.perf_counter() - t
        return inner

    for cls, name, part in targets:
        setattr(cls, name, wrap(getattr(cls, name), part))
    try:
        yield clock
    finally:
        for cls, name, fn in saved:
            setattr(cls, name, fn)


def run_case(env_id: str, bonus: str, extra: dict, num_envs: int, steps: int, seed: int, out: str) -> dict:
    from pcnn_explore.run import TrainConfig, train

    cfg = TrainConfig.preset("study", env=env_id, bonus=bonus, steps=steps, num_envs=num_envs, seed=seed,
                             num_threads=1, out_dir=out, **extra)
    clock = dict.fromkeys(PARTS, 0.0)
    with timed(clock):
        result = train(cfg, progress=False)
    us = {part: 1e6 * clock[part] / steps for part in PARTS}
    us["rest"] = 1e6 * result.wall_seconds / steps - sum(us.values())
    return {"steps_per_second": result.steps_per_second, "us_per_step": us, "steps": steps, "num_envs": num_envs}


def table(rows: list[dict]) -> str:
    head = "| case | envs | agent steps/s | " + " | ".join(f"{p} (us)" for p in (*PARTS, "rest")) + " |"
    lines = [head, "|" + "---|" * (3 + len(PARTS) + 1)]
    for r in rows:
        us = r["us_per_step"]
        lines.append(f"| {r['case']} | {r['num_envs']} | {r['steps_per_second']:,.0f} | "
                     + " | ".join(f"{us[p]:.0f}" for p in (*PARTS, "rest")) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6000, help="agent steps per case (a multiple of every --envs value)")
    parser.add_argument("--envs", type=int, nargs="+", default=[1, 8], help="env counts to run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", help="run only the cases whose label contains this text")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.steps < 1 or any(args.steps % n for n in args.envs):
        parser.error(f"--steps ({args.steps}) must be positive and a multiple of every --envs value {args.envs}")
    import torch

    torch.set_num_threads(1)
    rows = []
    cases = [c for c in CASES if args.only is None or args.only in c[0]]
    if not cases:
        parser.error(f"--only {args.only!r} matches no case: " + "; ".join(c[0] for c in CASES))
    with tempfile.TemporaryDirectory() as tmp:
        for k, (_, env_id, bonus, extra, _) in enumerate(cases):  # imports, numba's cached kernels, first calls
            run_case(env_id, bonus, extra, 8, 64, args.seed, os.path.join(tmp, f"warm{k}"))
        for label, env_id, bonus, extra, envs in cases:
            for n in envs or args.envs:
                r = run_case(env_id, bonus, extra, n, args.steps, args.seed, os.path.join(tmp, f"{len(rows)}"))
                rows.append({"case": label, **r})
                print(f"{label}, {n} env(s): {r['steps_per_second']:,.0f} agent steps/s", flush=True)
    print(f"\n{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
          f"{args.steps} agent steps per case, load average {os.getloadavg()[0]:.1f}\n")
    print(table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
