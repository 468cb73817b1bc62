"""Exploration you can see on a laptop (notebook 12): does the bonus make the agent explore, and
why does the paper's PixelCNN need to know *where* a pixel is?

Three parts, each a function of :class:`ExplorationSettings`:

- :func:`run_deep_sea`: DeepSea-N (:mod:`pcnn_explore.envs.deep_sea`) for each N of ``deep_sea_sizes``
  and each line of :data:`DEEP_SEA_LINES` (the named lines of
  :mod:`pcnn_explore.experiments.agents.lines`, every setting stated: the baselines DQN and DQN + MMC;
  the paper's DQN-CTS, DQN-PixelCNN and CTS intrinsic reward only, each with its paper bonus form,
  the state acted in scored, MMC 0.1, epsilon-greedy; the kit's DQN-PixelCNN with the position
  bias), ``seeds`` runs each of ``deep_sea_episodes`` episodes (N agent steps per episode). A run
  *reaches the goal late in training* when an episode ending in the last ``late_fraction`` of its
  steps pays the +1 (return > 0.5; every other return is <= 0).
- :func:`run_rooms`: coverage (distinct cells visited against agent steps, ``log.csv``'s
  ``distinct_cells``) on the egocentric MiniGrid-RoomChain task (agent's 7x7 view; the density
  model sees that view) for DQN and intrinsic-reward-only agents.
- :func:`pseudo_count_maps`: each density model trained on the DeepSea frames of a random walk,
  then asked for the pseudo-count of the agent in every cell, beside the true visit counts.

The paper's claim (:func:`deep_sea_goal`) is decided on the paper's lines alone, per seed whether
the run reached the goal late, by Fisher's exact test (:func:`pcnn_explore.verdicts.solved_verdict`,
seeds keyed by their ids); it needs :func:`pcnn_explore.verdicts.seeds_needed` ("fisher": 4) seeds
per line to be testable at all and is "not testable at this profile" with fewer (the smoke
profile's one). The study profile runs the 10 verdict seeds 401-410
(:data:`pcnn_explore.experiments.agents.preregistered.VERDICT_SEEDS`), none of which chose a setting.
The kit's line gets the same test as a kit finding (:func:`deep_sea_kit_goal`).

Every training run is one :func:`pcnn_explore.run.train` run (TrainConfig presets, DeepSea's
:func:`pcnn_explore.envs.env_defaults`, the line's settings on top), run through
:func:`pcnn_explore.experiments.agents.agent_runs.run_specs`. Steps are agent steps throughout.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from pcnn_explore.envs.deep_sea import deep_sea_id, deep_sea_size, occupiable_cells
from pcnn_explore.experiments.agents.agent_runs import RunSpec, run_specs
from pcnn_explore.experiments.agents.lines import baseline_line, line as named_line
from pcnn_explore.experiments.agents.preregistered import VERDICT_SEEDS
from pcnn_explore.run.variants import check_variant
from pcnn_explore.run.variants import variant_label as label  # the paper's name of a variant
from pcnn_explore.experiments.exploration.count_maps import CountMaps, pseudo_count_maps, random_walk_frames
from pcnn_explore.profiles import ExperimentSettings, check_profile

__all__ = ["ExplorationSettings", "DeepSeaRun", "label", "deep_sea_specs", "room_specs", "run_deep_sea", "run_rooms",
           "read_deep_sea_run", "coverage_curve", "random_walk_frames", "pseudo_count_maps", "CountMaps",
           "success_table", "deep_sea_lines", "coverage_table", "map_cells", "deep_sea_goal", "deep_sea_kit_goal",
           "strict_goal", "coverage_goal", "DEEP_SEA_LINES", "PAPER_AGENTS", "KIT_AGENTS", "BONUS_AGENTS",
           "location_goal", "verdict", "findings", "summary", "metrics", "settings_text", "lines_text", "run_cost_line",
           "SUCCESS_RETURN", "GOAL_N", "KINDS", "PAPER"]

#: an episode whose return exceeds this paid DeepSea's +1 (its return is 1 - k 0.01/N; any other is <= 0)
SUCCESS_RETURN = 0.5
#: the DeepSea lines by variant name, each a named line with every setting stated and its kind
#: ("baseline", "paper" or "kit"): :mod:`pcnn_explore.experiments.agents.lines`
DEEP_SEA_LINES = {v.variant: v for v in (baseline_line(), baseline_line(mmc=True), named_line("paper_cts"),
                                         named_line("paper_pixelcnn"), named_line("kit_pixelcnn_pos"),
                                         named_line("paper_cts_intrinsic"))}


@dataclasses.dataclass
class ExplorationSettings(ExperimentSettings):
    """Settings of notebook 12. Steps are agent steps; DeepSea runs last ``deep_sea_episodes``
    episodes of N steps each (steps = episodes x N)."""

    profile: str = "study"
    seeds: tuple[int, ...] = VERDICT_SEEDS  # (the verdict seeds: no setting was chosen on them)
    deep_sea_sizes: tuple[int, ...] = (6, 10, 14)
    deep_sea_variants: tuple[str, ...] = ("dqn", "dqn_mmc", "cts_mmc", "pixelcnn_mmc", "pixelcnn_pos_mmc",
                                          "cts_mmc_intrinsic")
    deep_sea_episodes: int = 1_500
    #: TrainConfig fields for every DeepSea run, on top of TrainConfig's preset and env_defaults
    deep_sea_overrides: tuple[tuple[str, Any], ...] = ()
    late_fraction: float = 0.25  # the last quarter of a run's steps is "late in training"
    room_env: str = "MiniGrid-RoomChain-R6-v0"
    room_variants: tuple[str, ...] = ("dqn", "cts_mmc_intrinsic")
    room_steps: int = 15_000
    #: the agent's egocentric view; epsilon 1 -> 0.05 over 2,500 steps; PG scale 10 (the paper's Fig. 12:
    #: higher c explores harder; c = 1 left the intrinsic agent at 32 cells of R6 in 15K steps, c = 10 at 45)
    room_overrides: tuple[tuple[str, Any], ...] = (("view", "partial"), ("epsilon_decay_steps", 2_500),
                                                   ("pg_scale", 10.0), ("lr", 1e-3), ("target_update_every", 500))
    counts_size: int = 10  # DeepSea N of the pseudo-count maps
    counts_episodes: int = 300  # random-walk episodes the density models train on
    counts_models: tuple[str, ...] = ("cts", "pixelcnn", "pixelcnn_pos")
    workers: int = 2

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(seeds=(0,), deep_sea_sizes=(5,), deep_sea_variants=("dqn", "cts_mmc", "pixelcnn_pos_mmc"),
                      deep_sea_episodes=40, room_env="MiniGrid-RoomChain-R3-v0", room_steps=200,
                      room_overrides=(("view", "partial"),), counts_size=5, counts_episodes=20),
        "study": dict(),
        "paper": dict(seeds=(0, 1, 2, 3, 4), deep_sea_sizes=(10, 20, 30, 40), deep_sea_episodes=10_000,
                      room_env="MiniGrid-RoomChain-R8-v0", room_steps=200_000,
                      room_variants=("dqn", "cts_mmc_intrinsic", "pixelcnn_mmc_intrinsic",
                                     "pixelcnn_pos_mmc_intrinsic")),
    }


    def check(self) -> None:
        """Raise ValueError/TypeError on bad settings, before any run starts."""
        from pcnn_explore.envs.deep_sea import DEEP_SEA_SIZES
        from pcnn_explore.envs import check_env_id

        check_profile(self.profile)
        for name in ("seeds", "deep_sea_sizes", "deep_sea_variants", "room_variants", "counts_models"):
            v = getattr(self, name)
            if isinstance(v, str) or not isinstance(v, (tuple, list)) or not v:
                raise TypeError(f"{name} must be a non-empty tuple, got {v!r}")
        for s in self.seeds:
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
                raise ValueError(f"seeds must be non-negative integers, got {s!r}")
        for n in self.deep_sea_sizes:
            if n not in DEEP_SEA_SIZES:
                raise ValueError(f"deep_sea_sizes: DeepSea-N exists for N in "
                                 f"{DEEP_SEA_SIZES[0]}..{DEEP_SEA_SIZES[-1]}, got {n!r}")
        for v in (*self.deep_sea_variants, *self.room_variants):
            check_variant(v)
        for v in self.deep_sea_variants:
            if v not in DEEP_SEA_LINES:
                raise ValueError(f"deep_sea_variants: {v!r} is not a DeepSea line of notebook 12: choose from "
                                 f"{', '.join(DEEP_SEA_LINES)}")
        for name in ("deep_sea_episodes", "room_steps", "counts_size", "counts_episodes", "workers"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not 0 < self.late_fraction <= 1:
            raise ValueError(f"late_fraction must be in (0, 1], got {self.late_fraction!r}")
        if self.counts_size < 3:
            raise ValueError(f"counts_size must be at least 3 (DeepSea-3 is the smallest), got {self.counts_size}")
        check_env_id(self.room_env)


# ------------------------------------------------------------------------------------- runs
def _specs(env: str, variants, seeds, steps: int, profile: str, root: Path, overrides) -> list[RunSpec]:
    over = tuple(sorted(dict(overrides).items()))
    return [RunSpec(v, env, int(s), int(steps), profile, str(root / env.replace("/", "_") / f"{v}_s{s}"), over)
            for v in variants for s in seeds]


def _deep_sea_fields(settings: ExplorationSettings, variant: str) -> dict[str, Any]:
    """The TrainConfig fields of ``variant``'s DeepSea runs: ``deep_sea_overrides`` with the line's own
    settings (:data:`DEEP_SEA_LINES`) on top."""
    return {**dict(settings.deep_sea_overrides), **dict(DEEP_SEA_LINES[variant].overrides)}


def deep_sea_specs(settings: ExplorationSettings, out_root: str | os.PathLike) -> list[RunSpec]:
    """One RunSpec per N x variant x seed; N x ``deep_sea_episodes`` steps each, under ``out_root/deep_sea``;
    each with its line's settings (:func:`_deep_sea_fields`)."""
    root = Path(out_root) / "deep_sea"
    return [spec for n in settings.deep_sea_sizes for v in settings.deep_sea_variants
            for spec in _specs(deep_sea_id(n), (v,), settings.seeds, n * settings.deep_sea_episodes, settings.profile,
                               root, _deep_sea_fields(settings, v))]


def room_specs(settings: ExplorationSettings, out_root: str | os.PathLike) -> list[RunSpec]:
    """One RunSpec per room variant x seed, ``room_steps`` steps each, under ``out_root/rooms``."""
    return _specs(settings.room_env, settings.room_variants, settings.seeds, settings.room_steps, settings.profile,
                  Path(out_root) / "rooms", settings.room_overrides)


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


#: the paper's lines whose claim notebook 12 decides: the paper's bonus agents against DQN
PAPER_AGENTS = ("cts_mmc", "pixelcnn_mmc")
#: the kit's line, decided the same way as a kit finding
KIT_AGENTS = ("pixelcnn_pos_mmc",)
BONUS_AGENTS = ("cts_mmc", "pixelcnn_pos_mmc")  # the strict goal (kit): these reach DeepSea's +1 in every seed
BASELINES = ("dqn", "dqn_mmc")  # ... and these in none
GOAL_N = 20  # ... on DeepSea-N with N >= GOAL_N (the goal)
#: the paper's claim that notebook 12 decides (metrics.json's ``paper``, shown by the report index)
PAPER = {"verdict": "the pseudo-count bonus (with MMC) makes DQN explore: it reaches a sparse reward that "
                    "epsilon-greedy DQN does not (hard exploration games), decided on the paper's DQN-CTS and "
                    "DQN-PixelCNN; notebook 12's other findings are the kit's own"}
#: what a finding is about: "paper" (a claim of the paper, decided into a verdict word) or "kit" (the
#: kit's own question, answered "holds" / "does not hold" / "undecided"; never counted as agreement
#: with the paper)
KINDS = ("paper", "kit")
NOT_TESTABLE = "not testable at this profile"


def _combine(words: list[str]) -> str | None:
    """One verdict word for several decided words (None: nothing decided), by the one combining rule
    :func:`pcnn_explore.verdicts.combine_verdicts`."""
    from pcnn_explore.verdicts import combine_verdicts

    return combine_verdicts(words) if words else None


def _hard(table: dict[str, dict[int, dict[str, Any]]]) -> list[int]:
    """The sizes where DQN reached the goal late in no seed (the claim is about tasks epsilon-greedy does not solve)."""
    return [n for n in sorted(table.get("dqn", {})) if table["dqn"][n]["reached_late"] == 0]


def _reached_tests(table: dict[str, dict[int, dict[str, Any]]], agents) -> dict[int, dict[str, dict[str, Any]]]:
    """Per N where both ran and per agent of ``agents``: the agent's seeds that reached the goal late
    against DQN's, by Fisher's exact test (:func:`pcnn_explore.verdicts.solved_verdict`, each seed keyed
    by its id); "not testable at this profile" with fewer seeds per line than
    :func:`pcnn_explore.verdicts.seeds_needed` gives for it."""
    from pcnn_explore.verdicts import seeds_needed, solved_verdict

    need = seeds_needed("fisher")
    tests: dict[int, dict[str, dict[str, Any]]] = {}
    for n, base in sorted(table.get("dqn", {}).items()):
        for v in agents:
            row = table.get(v, {}).get(n)
            if row is None:
                continue
            a = {s: x > 0 for s, x in zip(row["seed_ids"], row["late_successes"])}
            b = {s: x > 0 for s, x in zip(base["seed_ids"], base["late_successes"])}
            claim = f"seeds reaching the +1 late, {label(v)} - DQN"
            if min(len(a), len(b)) < need:
                tests.setdefault(n, {})[v] = {
                    "word": NOT_TESTABLE, "test": "fisher", "p_value": None, "n": len(a) + len(b),
                    "sentence": f"{NOT_TESTABLE}: {claim}: {sum(a.values())}/{len(a)} vs {sum(b.values())}/{len(b)}; "
                                f"Fisher's exact test needs at least {need} seeds per line to reach 0.025"}
                continue
            t = solved_verdict(a, b, "greater", claim=claim)
            tests.setdefault(n, {})[v] = {"word": t.word, "test": t.test, "p_value": t.p_value, "n": t.n,
                                          "intervals": [list(i) for i in t.intervals], "sentence": t.sentence}
    return tests


def deep_sea_goal(table: dict[str, dict[int, dict[str, Any]]]) -> dict[str, Any]:
    """The paper's claim on DeepSea (kind "paper"): the pseudo-count bonus makes DQN reach a reward
    that epsilon-greedy DQN does not, decided on the paper's lines (:data:`PAPER_AGENTS`) alone.

    Per N and paper line: the seeds that reached the goal late against DQN's (:func:`_reached_tests`).
    ``seed_tests``: {N: {variant: {"word", "test", "p_value", "n", "sentence", ...}}}; ``word``: those
    words combined over the sizes ``hard`` where DQN reached the goal late in no seed (None: no such
    N decided, e.g. no DQN run, or DQN solves every size run); ``detail``: {N: {variant: "k of n seeds"}}."""
    sizes = sorted({n for rows in table.values() for n in rows})
    detail = {n: {v: f"{table[v][n]['reached_late']} of {table[v][n]['seeds']} seeds"
                  for v in table if n in table[v]} for n in sizes}
    tests, hard = _reached_tests(table, PAPER_AGENTS), _hard(table)
    return {"kind": "paper", "lines": [v for v in PAPER_AGENTS if v in table], "detail": detail, "seed_tests": tests,
            "hard": hard, "word": _combine([t["word"] for n in hard for t in tests.get(n, {}).values()])}


def deep_sea_kit_goal(table: dict[str, dict[int, dict[str, Any]]]) -> dict[str, Any]:
    """The kit's question (kind "kit"): does the kit's line (:data:`KIT_AGENTS`, the position-biased
    PixelCNN) reach the goal late where DQN does not? The same test as :func:`deep_sea_goal`; ``word``
    its words combined over the ``hard`` sizes; ``holds``: True where that word agrees, False where it
    differs, None otherwise (not run or undecided)."""
    tests, hard = _reached_tests(table, KIT_AGENTS), _hard(table)
    word = _combine([t["word"] for n in hard for t in tests.get(n, {}).values()])
    return {"kind": "kit", "lines": [v for v in KIT_AGENTS if v in table], "seed_tests": tests, "hard": hard,
            "word": word, "holds": True if word == "agrees" else False if word == "differs" else None}


def strict_goal(table: dict[str, dict[int, dict[str, Any]]]) -> dict[str, Any]:
    """The issue's strict goal (kind "kit", not the paper's claim): on DeepSea-N with N >= :data:`GOAL_N`
    DQN-CTS and DQN-PixelCNN with the position bias (:data:`BONUS_AGENTS`) reach the goal late in every
    seed, DQN and DQN + MMC in none. ``holds`` (None: no N >= GOAL_N run); ``sizes`` those N;
    ``largest_separated``: the largest N (any size) where that holds (None: no such N)."""
    sizes = sorted({n for rows in table.values() for n in rows})
    big = [n for n in sizes if n >= GOAL_N]

    def separated(n: int) -> bool:
        bonus = [table[v][n] for v in BONUS_AGENTS if v in table and n in table[v]]
        base = [table[v][n] for v in BASELINES if v in table and n in table[v]]
        return bool(bonus) and bool(base) and all(r["reached_late"] == r["seeds"] for r in bonus) \
            and all(r["reached_late"] == 0 for r in base)

    ok = [n for n in sizes if separated(n)]
    return {"kind": "kit", "sizes": big, "holds": (all(separated(n) for n in big) if big else None),
            "largest_separated": max(ok) if ok else None}


def coverage_goal(rooms: dict[str, Any], baseline: str = "dqn", factor: float = 2.0) -> dict[str, Any]:
    """The kit's question (kind "kit") on the egocentric task: every intrinsic-only variant's mean
    distinct cells at the end is at least ``factor`` times the baseline's.
    ``{"kind": "kit", "ratios": {variant: ratio}, "holds": bool or None}``."""
    final = coverage_table(rooms)
    if baseline not in final:
        return {"kind": "kit", "ratios": {}, "holds": None}
    base = final[baseline]["final_cells_mean"]
    ratios = {v: (f["final_cells_mean"] / base if base > 0 else float("inf"))
              for v, f in final.items() if v.endswith("_intrinsic")}
    return {"kind": "kit", "ratios": ratios, "holds": (all(r >= factor for r in ratios.values()) if ratios else None)}


def location_goal(maps: "CountMaps", paper: str = "pixelcnn", located: tuple[str, ...] = ("cts", "pixelcnn_pos"),
                  min_spearman: float = 0.5, max_spread: float = 0.5) -> dict[str, Any]:
    """The kit's question (kind "kit"; the paper does not discuss it): the paper's PixelCNN cannot tell
    the cells of a row apart (log rho spreads less than ``max_spread`` nats over a row, mean over rows)
    while the located models rank cells by their visits (Spearman >= ``min_spearman``).
    ``{"kind": "kit", "holds": bool or None, "summary": CountMaps.summary()}``."""
    summ = maps.summary()
    if paper not in summ or not any(m in summ for m in located):
        return {"kind": "kit", "holds": None, "summary": summ}
    holds = summ[paper]["row_spread_nats"] < max_spread and all(
        summ[m]["spearman_log_rho_vs_visits"] >= min_spearman for m in located if m in summ)
    return {"kind": "kit", "holds": bool(holds), "summary": summ}


def _check_kinds(goals: dict[str, dict[str, Any]]) -> None:
    for name, g in goals.items():
        if g.get("kind") not in KINDS:
            raise ValueError(f"goal {name!r}: kind must be one of {KINDS}, got {g.get('kind')!r}")


def verdict(profile: str, goals: dict[str, dict[str, Any]]) -> str:
    """The notebook's verdict on the paper, from the goals of kind "paper" alone (their ``word``s
    combined: agrees, partly, differs or inconclusive); "not testable at this profile" for smoke or
    when no paper goal was decided. Goals of kind "kit" never enter it. Every goal needs a kind."""
    _check_kinds(goals)
    word = _combine([g["word"] for g in goals.values() if g["kind"] == "paper" and g.get("word") is not None])
    return "not testable at this profile" if profile == "smoke" or word is None else word


def _status(h: bool | None) -> str:
    return "not run at this profile" if h is None else ("holds" if h else "does not hold")


def findings(profile: str, goals: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per goal: ``{"name", "kind", "answer"}``; a paper goal's answer is its verdict word
    (smoke or undecided: "not testable at this profile"), a kit goal's "holds", "does not hold",
    "undecided" (run, but its test decided neither way) or "not run at this profile" (never a verdict
    word on the paper)."""
    _check_kinds(goals)
    out = []
    for name, g in goals.items():
        if g["kind"] == "paper":
            answer = "not testable at this profile" if profile == "smoke" or g.get("word") is None else g["word"]
        elif g.get("holds") is None and g.get("word") is not None:
            answer = "undecided"
        else:
            answer = _status(g.get("holds"))
        out.append({"name": name, "kind": g["kind"], "answer": answer})
    return out


def summary(profile: str, table: dict, rooms: dict, maps: "CountMaps") -> dict[str, Any]:
    """The findings of notebook 12 with the numbers that decide them, one line each; the verdict
    (on the paper's claim only); ``findings``: name, kind ("paper" or "kit") and answer of each."""
    goals = {"deep_sea": deep_sea_goal(table), "deep_sea_kit": deep_sea_kit_goal(table),
             "strict_goal": strict_goal(table), "coverage": coverage_goal(rooms), "location": location_goal(maps)}
    d, k, g = goals["deep_sea"], goals["deep_sea_kit"], goals["strict_goal"]
    c, loc = goals["coverage"], goals["location"]["summary"]
    found = {f["name"]: f["answer"] for f in findings(profile, goals)}
    hard = f"N = {', '.join(str(n) for n in d['hard'])}" if d["hard"] else "none"  # words, not a list
    lines = [f"paper: the paper's bonus (DQN-CTS, DQN-PixelCNN) makes DQN reach DeepSea's +1 where DQN does not, "
             f"the seeds reaching it late by Fisher's exact test at each N where DQN reached it late in no seed "
             f"({hard}): {found['deep_sea']}"]
    for n, row in d["seed_tests"].items():
        lines += [f"  N = {n}: {t['sentence']}" for t in row.values()]
    lines.append(f"kit: the kit's position-biased PixelCNN (DQN-PixelCNN with the position bias) reaches it where "
                 f"DQN does not, the same test: {found['deep_sea_kit']}")
    for n, row in k["seed_tests"].items():
        lines += [f"  N = {n}: {t['sentence']}" for t in row.values()]
    lines.append(f"kit (the issue's goal, not the paper's claim): at N >= {GOAL_N} DQN-CTS and DQN-PixelCNN "
                 f"(position bias) reach the goal late in every seed, DQN and DQN + MMC in none: {found['strict_goal']}")
    for n, row in d["detail"].items():
        lines.append(f"  N = {n}: " + ", ".join(f"{label(v)} {t}" for v, t in row.items()))
    lines.append(f"  largest N where the bonus agents reach it in every seed and the baselines in none: "
                 f"{'none' if g['largest_separated'] is None else g['largest_separated']}")
    lines.append("kit: on the egocentric task intrinsic-only agents visit >= 2x the distinct cells of DQN: "
                 f"{found['coverage']} (ratios " + ", ".join(f"{label(v)} {r:.2f}" for v, r in c["ratios"].items())
                 + ")")
    lines.append("kit: the paper's PixelCNN gives every cell of a row the same probability while CTS and the "
                 f"position-biased PixelCNN rank cells by visits: {found['location']} ("
                 + "; ".join(f"{m}: spread {v['row_spread_nats']:.2f} nats, Spearman "
                             f"{v['spearman_log_rho_vs_visits']:.2f}" for m, v in loc.items()) + ")")
    return {"verdict": verdict(profile, goals), "goals": goals, "lines": lines, "findings": findings(profile, goals)}


def settings_text(settings: ExplorationSettings, variant: str = "cts_mmc") -> str:
    """One sentence: the training settings of ``variant``'s DeepSea runs as they resolve for this
    profile (``TrainConfig.preset``: preset < DeepSea's env_defaults < the notebook's overrides < the
    line's settings, :data:`DEEP_SEA_LINES`), with the line's kind and exploration rule."""
    from pcnn_explore.envs import auto_network
    from pcnn_explore.experiments.agents.lines import exploration_rule
    from pcnn_explore.run.variants import variant_overrides
    from pcnn_explore.run.config import TrainConfig

    env = deep_sea_id(settings.deep_sea_sizes[0])
    cfg = TrainConfig.preset(settings.profile, env=env, **{**variant_overrides(variant),
                                                            **_deep_sea_fields(settings, variant)})
    return (f"{label(variant)} on {env} ({settings.profile} profile): network {auto_network(env, cfg.network)}, "
            f"epsilon {cfg.epsilon_start:g} -> {cfg.epsilon_end:g} over {cfg.epsilon_decay_steps:,} steps, a gradient "
            f"step every {cfg.train_every} agent steps (batch {cfg.batch_size}, lr {cfg.lr:g}), target network every "
            f"{cfg.target_update_every:,} steps, PG scale c = {cfg.pg_scale:g} ({cfg.pg_schedule}), bonus scale beta "
            f"{cfg.bonus_scale:g}, MMC beta {cfg.mmc_beta:g}, the density model scores {cfg.scored_frame}, "
            f"{exploration_rule(DEEP_SEA_LINES[variant])} ({DEEP_SEA_LINES[variant].kind} line).")


def lines_text(settings: ExplorationSettings) -> list[str]:
    """One line per DeepSea line run: its variant, kind (baseline, paper, kit), label and exploration rule."""
    from pcnn_explore.experiments.agents.lines import exploration_rule

    return [f"{v} ({DEEP_SEA_LINES[v].kind}): {DEEP_SEA_LINES[v].display}, {exploration_rule(DEEP_SEA_LINES[v])}"
            for v in settings.deep_sea_variants]


def run_cost_line(runs: list[DeepSeaRun], seconds: float) -> str:
    """One sentence: how many DeepSea runs and agent steps this call covered, and its wall time
    (``seconds``); finished runs are read back, not rerun, so only a first call pays for them."""
    return (f"{len(runs)} DeepSea runs, {sum(r.steps for r in runs):,} agent steps in all; "
            f"this cell took {seconds / 60:.1f} min (runs already finished under output_dir are read back).")


def metrics(settings: ExplorationSettings, table: dict, rooms: dict, maps: "CountMaps", summ: dict) -> dict[str, Any]:
    """What notebook 12 writes to ``metrics.json`` (keys are strings; N as "N=10")."""
    deep = {v: {f"N={n}": {k: row[k] for k in ("seeds", "seed_ids", "reached_late", "late_successes", "first_success_steps",
                                                 "distinct_cells", "reachable_cells")}
                for n, row in rows.items()} for v, rows in table.items()}
    lines = {v: {"kind": DEEP_SEA_LINES[v].kind, "label": DEEP_SEA_LINES[v].display,
                 "settings": dict(DEEP_SEA_LINES[v].overrides)} for v in settings.deep_sea_variants}
    return {"profile": settings.profile, "seeds": list(settings.seeds), "settings": settings.to_dict(),
            "deep_sea_lines": lines, "deep_sea": deep, "coverage": coverage_table(rooms), "count_maps": maps.summary(), "paper": dict(PAPER),
            "summary": {"verdict": summ["verdict"], "lines": summ["lines"], "findings": summ["findings"],
                        "goals": {k: {kk: vv for kk, vv in g.items() if kk != "summary"}
                                  for k, g in summ["goals"].items()}}}
