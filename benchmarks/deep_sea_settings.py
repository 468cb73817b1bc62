"""DeepSea settings of count-based DQN: the kit's DeepSea defaults against the forms they replace.

Every run is ``pcnn-explore train --env DeepSea-N-v0 --bonus cts --seed S --mapping-seed M
--steps E`` at the study profile (DeepSea's defaults, :data:`pcnn_explore.envs.DEEP_SEA_DEFAULTS`),
with one variant's settings on top, scored by bsuite's rule
(:func:`pcnn_explore.deep_sea_protocol.solve_episode`, checked at every episode).

Variants (:data:`VARIANTS`):

- ``kit``: the kit's DeepSea defaults as they are.
- ``state``: the kit's defaults but the density model scores the state acted in (x_t), the
  kit's earlier default (Bellemare et al. 2016's choice; the paper says only that the density
  model "receives a single frame").
- ``earlier``: every DeepSea default as it was before the kit's choices were measured (the state
  acted in, c = 1 with the paper's n^-1/2 decay, MMC beta 0.1, one gradient step per 4 agent steps,
  target copied every 100 steps, epsilon to 0.05).
- ``earlier_next``: ``earlier`` with the next state scored (the scored frame alone changed).
- ``dqn``: no bonus (DQN with the same schedule, MMC off as the paper's baseline).

Usage (runs one at a time; a run already in ``--out`` is read, not rerun)::

    python benchmarks/deep_sea_settings.py run --sizes 10 14 --seeds 101 102 103 \\
        --mapping-seeds 42 --variants kit earlier --episodes 3000 --out runs/deep_sea_settings
    python benchmarks/deep_sea_settings.py table --out runs/deep_sea_settings

The table: variant, size N, seed, mapping seed, episodes run, solve episode by bsuite's rule
(unsolved: "-"), first episode with the +1 ("-": none), distinct cells visited of the N(N+1)/2.

Measured on this machine (2 shared cores), study profile, ``--bonus cts``: see the table
``MEASURED`` below (the exact runs named in each row).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: variant -> TrainConfig settings on top of the study preset and DeepSea's defaults
VARIANTS = {
    "kit": {},
    "state": {"scored_frame": "state"},
    "earlier": {"scored_frame": "state", "pg_scale": 1.0, "pg_schedule": "inverse_sqrt", "mmc_beta": 0.1,
                "train_every": 4, "target_update_every": 100, "epsilon_end": 0.05},
    "earlier_next": {"scored_frame": "next_state", "pg_scale": 1.0, "pg_schedule": "inverse_sqrt", "mmc_beta": 0.1,
                     "train_every": 4, "target_update_every": 100, "epsilon_end": 0.05},
    "dqn": {"bonus": "none"},
}

MEASURED = """
(filled in from the runs)
"""


def run_dir(out: Path, variant: str, size: int, seed: int, mapping_seed: int) -> Path:
    return out / f"{variant}_N{size}_s{seed}_m{mapping_seed}"


def run_one(out: Path, variant: str, size: int, seed: int, mapping_seed: int, episodes: int) -> Path:
    from pcnn_explore.run.config import TrainConfig
    from pcnn_explore.run.loop import train

    path = run_dir(out, variant, size, seed, mapping_seed)
    settings = {"bonus": "cts", **VARIANTS[variant]}
    cfg = TrainConfig.preset("study", env=f"DeepSea-{size}-v0", seed=seed, mapping_seed=mapping_seed,
                             steps=episodes * size, out_dir=str(path), tensorboard=False, **settings)
    train(cfg, resume=(path / "checkpoint.pt").exists(), progress=False)
    return path


def summary(path: Path) -> dict:
    """One row of the table from a run's log."""
    from pcnn_explore.deep_sea_protocol import solve_episode, successes_from_log
    from pcnn_explore.run.state import read_log

    log = read_log(path)
    wins = successes_from_log(log)
    first = int(np.flatnonzero(wins)[0]) + 1 if wins.any() else None
    cells = int(log["distinct_cells"][-1]) if len(log["distinct_cells"]) else 0
    return {"episodes": int(wins.size), "solve": solve_episode(wins), "first": first, "cells": cells}


def table(out: Path) -> str:
    lines = [f"{'variant':<12} {'N':>3} {'seed':>5} {'map':>4} {'episodes':>8} {'solve':>6} {'first+1':>7} {'cells':>9}"]
    rows = []
    for path in sorted(p for p in out.iterdir() if (p / "log.csv").exists()):
        variant, size, seed, mapping = path.name.rsplit("_", 3)
        rows.append((variant, int(size[1:]), int(seed[1:]), int(mapping[1:]), summary(path)))
    for variant, size, seed, mapping, s in sorted(rows, key=lambda r: (r[1], r[0], r[3], r[2])):
        dash = lambda v: "-" if v is None else str(v)  # noqa: E731
        cells = f"{s['cells']}/{size * (size + 1) // 2}"
        lines.append(f"{variant:<12} {size:>3} {seed:>5} {mapping:>4} {s['episodes']:>8} {dash(s['solve']):>6} "
                     f"{dash(s['first']):>7} {cells:>9}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the missing runs one at a time, then print the table")
    run.add_argument("--sizes", type=int, nargs="+", default=[10, 14])
    run.add_argument("--seeds", type=int, nargs="+", default=[101, 102, 103])
    run.add_argument("--mapping-seeds", type=int, nargs="+", default=[42])
    run.add_argument("--variants", nargs="+", choices=tuple(VARIANTS), default=["kit", "earlier"])
    run.add_argument("--episodes", type=int, default=3_000, help="episodes per run (steps = episodes * N)")
    run.add_argument("--out", type=Path, default=ROOT / "runs" / "deep_sea_settings")
    show = sub.add_parser("table", help="print the table of the runs in --out")
    show.add_argument("--out", type=Path, default=ROOT / "runs" / "deep_sea_settings")
    args = parser.parse_args(argv)
    if args.command == "run":
        args.out.mkdir(parents=True, exist_ok=True)
        for size in args.sizes:
            for variant in args.variants:
                for mapping in args.mapping_seeds:
                    for seed in args.seeds:
                        path = run_one(args.out, variant, size, seed, mapping, args.episodes)
                        print(path.name, summary(path), flush=True)
    print(table(args.out))


if __name__ == "__main__":
    main()
