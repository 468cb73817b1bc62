"""Notebook 12's settings and run specs: the DeepSea lines it runs (:data:`DEEP_SEA_LINES`), its
settings (:class:`ExplorationSettings`) and one :class:`~pcnn_explore.experiments.agents.agent_runs.RunSpec`
per run (:func:`deep_sea_specs`, :func:`room_specs`). Steps are agent steps throughout."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from pcnn_explore.envs.deep_sea import deep_sea_id
from pcnn_explore.experiments.density.density_training import check_reading
from pcnn_explore.experiments.agents.agent_runs import RunSpec
from pcnn_explore.run.lines import baseline_line, line as named_line
from pcnn_explore.study.preregistered.deep_sea import PER_SEED, check_mapping_seed, mapping_of, refuse_seen_seeds
from pcnn_explore.study.preregistered.pixelcnn_readings import PLANS as READING_PLANS, check_new_seeds
from pcnn_explore.run.variants import check_variant
from pcnn_explore.profiles import ExperimentSettings, check_profile

__all__ = ["DEEP_SEA_LINES", "STUDY_SEEDS", "ExplorationSettings", "deep_sea_specs", "room_specs"]

#: the study profile's seeds: the PixelCNN readings' re-run's new verdict seeds for 12, 801-820, none run before it
#: was declared (:data:`pcnn_explore.study.preregistered.pixelcnn_readings.PLANS`), each on its own DeepSea map
STUDY_SEEDS = READING_PLANS["12"].seeds

#: the DeepSea lines by variant name, each a named line with every setting stated and its kind
#: ("baseline", "paper" or "kit"): :mod:`pcnn_explore.experiments.agents.lines`
DEEP_SEA_LINES = {v.variant: v for v in (baseline_line(), baseline_line(mmc=True), named_line("paper_cts"),
                                         named_line("paper_pixelcnn"), named_line("kit_pixelcnn_pos"),
                                         named_line("paper_cts_intrinsic"))}


@dataclasses.dataclass
class ExplorationSettings(ExperimentSettings):
    """Settings of notebook 12. Steps are agent steps; DeepSea runs last ``deep_sea_episodes``
    episodes of N steps each (steps = episodes x N). ``mapping_seed``: None (bsuite's 42 for every
    seed), an integer (that map for every seed) or ``"per_seed"`` (each seed its declared map, seed +
    10,000: the study profile's, so a verdict speaks for the task rather than one map).
    ``density_optimizer``: the PixelCNN's optimizer reading of every PixelCNN line and count map, "tf1"
    (the paper's, the default) or "torch" (the sensitivity reading); the CTS lines ignore it."""

    profile: str = "study"
    seeds: tuple[int, ...] = STUDY_SEEDS  # (the declared new verdict seeds 801-820: no setting was chosen on them)
    mapping_seed: int | str | None = None
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
    density_optimizer: str = "tf1"

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(seeds=(0,), deep_sea_sizes=(5,), deep_sea_variants=("dqn", "cts_mmc", "pixelcnn_pos_mmc"),
                      deep_sea_episodes=40, room_env="MiniGrid-RoomChain-R3-v0", room_steps=200,
                      room_overrides=(("view", "partial"),), counts_size=5, counts_episodes=20),
        "study": dict(mapping_seed=PER_SEED),
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
        check_mapping_seed(self.mapping_seed)
        check_reading(self.density_optimizer)
        if self.profile == "study":
            refuse_seen_seeds(self.seeds, "of notebook 12 ", f"{STUDY_SEEDS[0]}..{STUDY_SEEDS[-1]}")
            check_new_seeds(self.seeds, "notebook 12: ")
        if self.counts_size < 3:
            raise ValueError(f"counts_size must be at least 3 (DeepSea-3 is the smallest), got {self.counts_size}")
        check_env_id(self.room_env)

    def mapping_of(self, seed: int) -> int | None:
        """The DeepSea mapping seed of ``seed``'s runs (None: the env's, bsuite's 42)."""
        return mapping_of(self.mapping_seed, seed)


# ------------------------------------------------------------------------------------- runs
def _specs(env: str, variants, seeds, steps: int, profile: str, root: Path, overrides) -> list[RunSpec]:
    over = tuple(sorted(dict(overrides).items()))
    return [RunSpec(v, env, int(s), int(steps), profile, str(root / env.replace("/", "_") / f"{v}_s{s}"), over)
            for v in variants for s in seeds]


def _deep_sea_fields(settings: ExplorationSettings, variant: str) -> dict[str, Any]:
    """The TrainConfig fields of ``variant``'s DeepSea runs: ``deep_sea_overrides`` with the line's own
    settings (:data:`DEEP_SEA_LINES`) on top, a PixelCNN line's optimizer reading the settings'
    (``density_optimizer``)."""
    fields = {**dict(settings.deep_sea_overrides), **dict(DEEP_SEA_LINES[variant].overrides)}
    return {**fields, "density_optimizer": settings.density_optimizer} if "density_optimizer" in fields else fields


def deep_sea_specs(settings: ExplorationSettings, out_root: str | os.PathLike) -> list[RunSpec]:
    """One RunSpec per N x variant x seed; N x ``deep_sea_episodes`` steps each, under ``out_root/deep_sea``;
    each with its line's settings (:func:`_deep_sea_fields`) and its seed's ``mapping_seed`` where set
    (:meth:`ExplorationSettings.mapping_of`)."""
    root = Path(out_root) / "deep_sea"
    specs = []
    for n in settings.deep_sea_sizes:
        for v in settings.deep_sea_variants:
            fields = _deep_sea_fields(settings, v)
            for s in settings.seeds:
                mapping = settings.mapping_of(s)
                specs += _specs(deep_sea_id(n), (v,), (s,), n * settings.deep_sea_episodes, settings.profile, root,
                                fields if mapping is None else {**fields, "mapping_seed": mapping})
    return specs


def room_specs(settings: ExplorationSettings, out_root: str | os.PathLike) -> list[RunSpec]:
    """One RunSpec per room variant x seed, ``room_steps`` steps each, under ``out_root/rooms`` (a PixelCNN
    variant's under the settings' ``density_optimizer``)."""
    root = Path(out_root) / "rooms"
    return [spec for v in settings.room_variants for spec in _specs(
        settings.room_env, (v,), settings.seeds, settings.room_steps, settings.profile, root,
        {**dict(settings.room_overrides), "density_optimizer": settings.density_optimizer} if "pixelcnn" in v
        else settings.room_overrides)]
