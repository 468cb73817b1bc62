"""Notebook 12's runs and what they show: the DeepSea runs (:func:`run_deep_sea`, one
:class:`DeepSeaRun` each, tabulated by :func:`success_table` and :func:`deep_sea_lines`) and the
egocentric room-coverage runs (:func:`run_rooms`, :func:`coverage_curve`, :func:`coverage_table`).
Steps are agent steps throughout; cells are (row, column) positions."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import numpy as np

from pcnn_explore.envs.deep_sea import deep_sea_size, occupiable_cells
from pcnn_explore.experiments.agents.agent_runs import run_specs
from pcnn_explore.run.variants import variant_label as label  # the paper's name of a variant
from pcnn_explore.experiments.exploration.laptop_settings import ExplorationSettings, deep_sea_specs, room_specs

__all__ = ["SUCCESS_RETURN", "DeepSeaRun", "read_deep_sea_run", "run_deep_sea", "coverage_curve", "run_rooms",
           "map_cells", "success_table", "deep_sea_lines", "coverage_table"]

#: an episode whose return exceeds this paid DeepSea's +1 (its return is 1 - k 0.01/N; any other is <= 0)
SUCCESS_RETURN = 0.5


@dataclasses.dataclass
class DeepSeaRun:
    """What one DeepSea run shows. Steps are agent steps; cells are (row, column) positions."""

    variant: str
    size: int  # N
    seed: int
    steps: int  # agent steps run
    episodes: int  # complete episodes
    successes: int  # episodes that paid the +1
    late_successes: int  # of them, those ending in the last late_fraction of the steps
    first_success_step: float  # agent step of the first +1 (NaN: never)
    distinct_cells: int  # cells of the grid occupied by the end (rows 0..N-1; the row below it is not counted)
    reachable_cells: int  # N (N + 1) / 2: the cells the agent can occupy before an episode ends

    @property
    def reached_late(self) -> bool:
        return self.late_successes > 0


def read_deep_sea_run(out_dir: str | os.PathLike, variant: str, size: int, seed: int, steps: int,
                      late_fraction: float = 0.25) -> DeepSeaRun:
    """Summarise the ``log.csv`` of a DeepSea run of ``steps`` agent steps."""
    from pcnn_explore.run import read_log

    log = read_log(out_dir)
    done = log["complete"] == 1
    success = done & (log["return"] > SUCCESS_RETURN)
    late = success & (log["step"] > steps * (1.0 - late_fraction))
    cells = np.nan_to_num(log["distinct_cells"], nan=0.0)
    first = log["step"][success][0] if success.any() else np.nan
    return DeepSeaRun(variant, int(size), int(seed), int(log["step"][-1]) if len(log["step"]) else 0,
                      int(done.sum()), int(success.sum()), int(late.sum()), float(first),
                      int(cells.max()) if len(cells) else 0, occupiable_cells(size))


def run_deep_sea(settings: ExplorationSettings, output_dir: str | os.PathLike, progress: bool = False
                 ) -> list[DeepSeaRun]:
    """Train (or read back finished) DeepSea runs; one :class:`DeepSeaRun` per N x variant x seed."""
    settings.check()
    specs = deep_sea_specs(settings, Path(output_dir) / "runs")
    run_specs(specs, settings.workers, progress=progress)
    return [read_deep_sea_run(s.out_dir, s.variant, deep_sea_size(s.env), s.seed, s.steps, settings.late_fraction)
            for s in specs]


def coverage_curve(out_dir: str | os.PathLike, grid: np.ndarray) -> np.ndarray:
    """Distinct cells visited by each agent step of ``grid`` (float (len(grid),)), from ``log.csv``.

    The log has one row per episode with the count at the episode's end; between two ends the
    count is taken as the earlier one (a lower bound), 0 before the first end; NaN after the run.
    """
    from pcnn_explore.run import read_log

    log = read_log(out_dir)
    ends, cells = log["step"], np.nan_to_num(log["distinct_cells"], nan=0.0)
    idx = np.searchsorted(ends, grid, side="right") - 1
    out = np.where(idx >= 0, cells[np.clip(idx, 0, None)] if len(cells) else 0.0, 0.0)
    return np.where(grid > (ends[-1] if len(ends) else 0), np.nan, out)


def run_rooms(settings: ExplorationSettings, output_dir: str | os.PathLike, n_points: int = 50,
              progress: bool = False) -> dict[str, Any]:
    """Train (or read back) the egocentric runs; return ``{"steps": (n_points,) agent steps,
    "cells": {variant: (n_seeds, n_points) distinct cells}}``."""
    settings.check()
    specs = room_specs(settings, Path(output_dir) / "runs")
    run_specs(specs, settings.workers, progress=progress)
    grid = np.linspace(0, settings.room_steps, n_points + 1)[1:].round().astype(np.int64)
    cells = {v: np.stack([coverage_curve(s.out_dir, grid) for s in specs if s.variant == v])
             for v in settings.room_variants}
    return {"env": settings.room_env, "steps": grid, "cells": cells, "reachable": map_cells(settings.room_env)}


def map_cells(env_id: str) -> int | None:
    """Cells the agent can stand on in a RoomChain map (None for other envs)."""
    import gymnasium as gym

    from pcnn_explore.envs import check_env_id
    from pcnn_explore.envs.minigrid_tasks import RoomChainEnv, room_chain_cells

    check_env_id(env_id)
    env = gym.make(env_id).unwrapped
    return room_chain_cells(env.n_rooms, env.room_size) if isinstance(env, RoomChainEnv) else None


# ------------------------------------------------------------------------------- summaries
def success_table(runs: list[DeepSeaRun]) -> dict[str, dict[int, dict[str, Any]]]:
    """variant -> N -> {"seeds": runs, "seed_ids": the seeds' ids in run order, "reached_late": seeds that
    reach the goal late in training, "late_successes": per seed, episodes paying +1 in the late part,
    "first_success_steps": per seed (NaN: never), "distinct_cells": per seed, "reachable_cells": N (N + 1) / 2}."""
    table: dict[str, dict[int, dict[str, Any]]] = {}
    for r in runs:
        row = table.setdefault(r.variant, {}).setdefault(r.size, {
            "seeds": 0, "seed_ids": [], "reached_late": 0, "late_successes": [], "first_success_steps": [], "distinct_cells": [],
            "reachable_cells": r.reachable_cells})
        row["seeds"] += 1
        row["seed_ids"].append(r.seed)
        row["reached_late"] += int(r.reached_late)
        row["late_successes"].append(r.late_successes)
        row["first_success_steps"].append(r.first_success_step)
        row["distinct_cells"].append(r.distinct_cells)
    return table


def deep_sea_lines(table: dict[str, dict[int, dict[str, Any]]]) -> list[str]:
    """One line per variant and N: seeds reaching the goal late, late +1 episodes per seed, the
    step of the first +1 per seed, cells visited of those reachable."""
    return [f"{label(v):45s} N={n:2d}  reached late: {row['reached_late']}/{row['seeds']}  late +1 episodes per "
            f"seed: {row['late_successes']}  first +1 at step: {[None if np.isnan(x) else int(x) for x in row['first_success_steps']]}"
            f"  cells: {row['distinct_cells']} of {row['reachable_cells']}"
            for v, rows in table.items() for n, row in sorted(rows.items())]


def coverage_table(rooms: dict[str, Any]) -> dict[str, dict[str, float]]:
    """variant -> {"final_cells_mean", "final_cells_min", "final_cells_max"} at the last step."""
    out = {}
    for v, c in rooms["cells"].items():
        last = c[:, -1]
        out[v] = {"final_cells_mean": float(np.mean(last)), "final_cells_min": float(np.min(last)),
                  "final_cells_max": float(np.max(last))}
    return out
