"""Notebook 13's settings (:class:`ReactorStudySettings`, :func:`settings_for`): the lines, seeds,
DeepSea sizes and episodes of each profile, checked before any run. Steps are agent steps."""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from pcnn_explore.study.preregistered.deep_sea import (LEVEL, PER_SEED, check_mapping_seed, mapping_of,
                                                      refuse_seen_seeds)
from pcnn_explore.study.preregistered.pixelcnn_readings import PLANS as READING_PLANS, check_new_seeds
from pcnn_explore.study.preregistered.reactor import STUDY_EPISODES, STUDY_SIZES
from pcnn_explore.run.variants import check_variant, variant_agent
from pcnn_explore.profiles import ExperimentSettings, check_profile
from pcnn_explore.verdicts import seeds_needed
from pcnn_explore.experiments.agents.reactor_lines import LINES
from pcnn_explore.experiments.density.density_training import check_reading

__all__ = ["STUDY_SEEDS", "ReactorStudySettings", "settings_for"]

#: the study profile's seeds: the PixelCNN readings' re-run's new verdict seeds for 13, 801-820, none run before it
#: was declared (:data:`pcnn_explore.study.preregistered.pixelcnn_readings.PLANS`), used for nothing else, each on
#: its own DeepSea map (:func:`pcnn_explore.study.preregistered.deep_sea.mapping_for`)
STUDY_SEEDS = READING_PLANS["13"].seeds
_LONGEST = 33  # one Reactor sequence (pcnn_explore.agents.sequence_replay.SEQ_LEN)
#: the study profile's test: every claim is decided by the exact sign flip
_STUDY_TEST = "sign_flip"


@dataclasses.dataclass
class ReactorStudySettings(ExperimentSettings):
    """Settings of notebook 13: every line x seed runs ``episodes`` episodes of DeepSea-N (N agent
    steps each) for each N in ``sizes``; ``mapping_seed``: None (bsuite's 42 for every seed), an
    integer (that map for every seed) or ``"per_seed"`` (each seed its declared map, seed + 10,000:
    the study profile's, so a verdict speaks for the task rather than one map); ``density_optimizer``: the
    PixelCNN's optimizer reading of every PixelCNN line, "tf1" (the paper's, the default) or "torch" (the
    sensitivity reading)."""

    profile: str = "study"
    seeds: tuple[int, ...] = STUDY_SEEDS
    sizes: tuple[int, ...] = STUDY_SIZES
    episodes: int = STUDY_EPISODES
    #: keys of :data:`LINES`: the paper's (Reactor, Reactor-CTS, DQN-CTS + MMC) and the kit's PixelCNN lines
    variants: tuple[str, ...] = ("reactor", "reactor_cts", "cts_mmc", "reactor_pixelcnn_pos", "pixelcnn_pos_mmc")
    #: TrainConfig fields for every run, under each line's own settings
    overrides: tuple[tuple[str, Any], ...] = (("tensorboard", False),)
    late_fraction: float = 0.25  # the last quarter of a run's episodes is "late in training"
    window: int = 50  # episodes per point of the success curves
    workers: int = 2
    mapping_seed: int | str | None = None
    density_optimizer: str = "tf1"

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(seeds=(0, 1), sizes=(4,), episodes=25, window=5,
                      overrides=(("learning_starts", 20), ("tensorboard", False))),
        "study": dict(mapping_seed=PER_SEED),
        "paper": dict(sizes=tuple(range(10, _LONGEST, 2)), episodes=10_000, window=500),
    }

    def check(self) -> None:
        """Raise ValueError/TypeError on bad settings, before any run starts; at the study profile also
        for a tuning seed or fewer seeds than the claims' exact test needs."""
        from pcnn_explore.envs.deep_sea import DEEP_SEA_SIZES

        check_profile(self.profile)
        for name in ("seeds", "sizes", "variants"):
            v = getattr(self, name)
            if isinstance(v, str) or not isinstance(v, (tuple, list)) or not v:
                raise TypeError(f"{name} must be a non-empty tuple, got {v!r}")
            if len(set(v)) != len(v):
                raise ValueError(f"{name} repeat: {v!r}")
        for v in self.variants:
            check_variant(v)
            if v not in LINES:
                raise ValueError(f"variants: {v!r} is not a line of notebook 13: choose from {', '.join(LINES)}")
        if not any(variant_agent(v) == "reactor" for v in self.variants):
            raise ValueError(f"variants: name at least one Reactor line (reactor, reactor_cts, ...), "
                             f"got {self.variants!r}")
        for n in self.sizes:
            if n not in DEEP_SEA_SIZES or n > _LONGEST:
                raise ValueError(f"sizes: DeepSea-N with N in 3..{_LONGEST} (an episode must fit one {_LONGEST}-step "
                                 f"Reactor sequence), got {n!r}")
        for s in self.seeds:
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
                raise ValueError(f"seeds must be non-negative integers, got {self.seeds!r}")
        for name in ("episodes", "window", "workers"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not 0 < self.late_fraction <= 1:
            raise ValueError(f"late_fraction must be in (0, 1], got {self.late_fraction!r}")
        check_mapping_seed(self.mapping_seed)
        check_reading(self.density_optimizer)
        if self.profile == "study":
            refuse_seen_seeds(self.seeds, "", f"{STUDY_SEEDS[0]}..{STUDY_SEEDS[-1]} (seed=None)")
            check_new_seeds(self.seeds, "notebook 13: ")
            need = seeds_needed(_STUDY_TEST, LEVEL)
            if len(self.seeds) < need:
                raise ValueError(f"{len(self.seeds)} seeds cannot decide notebook 13's claims at the study profile: "
                                 f"the exact sign-flip test needs at least {need}; give n_seeds >= {need}")

    def mapping_of(self, seed: int) -> int | None:
        """The DeepSea mapping seed of ``seed``'s runs (None: the env's, bsuite's 42)."""
        return mapping_of(self.mapping_seed, seed)

    def steps(self, size: int) -> int:
        """Agent steps per run on DeepSea-``size``: ``episodes`` x N."""
        return int(self.episodes) * int(size)


def settings_for(profile: str, seed: int | None = None, n_seeds: int | None = None, **given: Any) -> ReactorStudySettings:
    """The preset of ``profile``; ``seed``/``n_seeds`` pick seeds ``seed, seed + 1, ...`` (None: the
    preset's first seed / number of seeds); any other setting given (None: the preset's). The study
    profile's settings are checked here (:meth:`ReactorStudySettings.check`), before any run."""
    if seed is None and n_seeds is None:
        s = ReactorStudySettings.preset(profile, **given)
    else:
        first = ReactorStudySettings.preset(profile).seeds[0] if seed is None else seed
        s = ReactorStudySettings.for_notebook(profile, seed=first, n_seeds=n_seeds, **given)
    if profile == "study":
        s.check()
    return s
