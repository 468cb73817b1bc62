"""Agent studies on bsuite's deep-sea protocol: the runs, and the per-run and per-seed values that
the notebooks' claims (:mod:`pcnn_explore.experiments.agents.deep_sea_claims`) are decided on.

API (every agent notebook, 07-10 and 13, can use it):

- :class:`StudyVariant` / :func:`study_variant`: one line of a study: ``variant`` (a name of the rule
  of :mod:`pcnn_explore.run.variants`, e.g. ``cts_mmc``), ``key`` (metrics key and run
  folder), ``overrides`` (TrainConfig fields on top of the variant's, e.g. ``mmc_beta``, ``pg_scale``)
  and ``label`` (legend text; "" for the paper's name of the variant).
- :class:`DeepSeaStudySettings`: ``sizes`` (the N of ``DeepSea-N-v0``), ``episodes`` (the episode cap
  per size, same order, or one value for every size), ``seeds`` (10 at the study profile; the
  seed is the unit), ``workers`` (runs at once), ``mapping_seed`` (None: bsuite's 42; an integer:
  that mapping for every run; ``"per_seed"``: each seed its own declared mapping seed,
  :func:`pcnn_explore.study.preregistered.deep_sea.mapping_for`, drawn by bsuite's rule),
  ``train_overrides`` (TrainConfig fields for every run), ``train_profile`` (the TrainConfig preset
  each run starts from; None: ``profile``, so a notebook profile can ask for bsuite's budget while
  its runs keep the study preset's DQN), ``density_optimizer`` (the PixelCNN's optimizer reading the
  study's PixelCNN lines train under, ``tf1`` or ``torch``, notebook 07's; None: a study that names none,
  08-10 and 14). Presets ``smoke`` / ``study`` / ``paper``
  (``for_notebook(profile, seed=..., n_seeds=..., sizes=..., episodes=...)``).
- :func:`study_specs` (the RunSpecs: env ``DeepSea-N-v0``, steps = episodes x N, since every DeepSea
  episode lasts exactly N agent steps; a line's per-size settings resolved for N, e.g.
  ``paper_cts_horizon``'s bonus scale) and :func:`run_study` (runs them with
  :func:`pcnn_explore.experiments.agents.agent_runs.run_specs`, reads each run back) -> :class:`DeepSeaStudy`.
- :func:`read_run` -> :class:`RunValues` of one run's ``log.csv`` (testable on hand-made logs).
- :class:`DeepSeaStudy`: ``runs``; ``per_seed(key, field)`` (one value per seed, the mean over the
  study's sizes of a :class:`RunValues` field), ``per_seed_score(key)`` (bsuite's deep-sea score of
  each seed over the study's sizes), ``coverage_curves(key, size, points)``, ``scaling_rows()`` (the
  columns of :data:`pcnn_explore.sweep.deep_sea_report.SCALING_COLUMNS`, for
  :func:`pcnn_explore.plots.deep_sea.plot_deep_sea_scaling`), ``metrics()`` (per-seed values for
  metrics.json) and ``table()``.

Per run (:class:`RunValues`), over the first ``cap`` complete episodes of its log:

- ``solve_episode``: the 1-based episode at which bsuite's rule is first met (fewer than 9 in 10
  episodes so far bad), checked at **every** episode (bsuite: at its logged episodes only); None if
  never; ``solved``: whether the rule was met in the run (``solve_episode`` is not None);
  ``bsuite_solve_episode``: the first of bsuite's logged episodes at which it holds;
  ``counts_for_score``: whether the size counts for bsuite's deep-sea score
  (:func:`~pcnn_explore.envs.deep_sea_protocol.solved_in_time` on ``bsuite_solve_episode``);
- ``success_rate``: the share of the last quarter of the episodes run that found the +1;
- ``first_success_episode``: the 1-based episode of the first +1 (None: never);
- ``coverage``: distinct cells visited by the end, as a share of the N (N + 1) / 2 cells the agent
  can occupy (``log.csv``'s ``distinct_cells``, which leaves out the row below the grid);
  ``coverage_curve``: (E,) the same after each episode.

The seed is the unit: no value pools episodes across seeds.
"""
from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
from typing import Any, ClassVar, Sequence

import numpy as np

from pcnn_explore.envs.deep_sea import deep_sea_id, deep_sea_size, occupiable_cells
from pcnn_explore.envs.deep_sea_protocol import (
    PROTOCOL_EPISODES,
    PROTOCOL_SIZES,
    SUCCESS_RETURN,
    deep_sea_score,
    solve_episode,
    solved_in_time,
)
from pcnn_explore.study.preregistered.deep_sea import (PER_SEED, PILOT_SEEDS, STUDY_DESIGN, check_mapping_seed,
                                                      mapping_of)
from pcnn_explore.profiles import ExperimentSettings
from pcnn_explore.run.lines import StudyVariant, study_variant

__all__ = ["StudyVariant", "study_variant", "DeepSeaStudySettings", "RunValues", "read_run", "study_specs",
           "run_study", "DeepSeaStudy", "STUDY_SEEDS", "RUN_FIELDS", "censored_first_success"]

#: the seeds of notebook 14's bsuite score (mapping 42, no verdict) and the seen seeds of the first
#: study (401-410, now :data:`~pcnn_explore.study.preregistered.deep_sea.PILOT_SEEDS`); the
#: deep-sea notebooks' verdicts run each plan's own seeds (701 and up, ``Plan.seeds``)
STUDY_SEEDS = PILOT_SEEDS
#: the per-run values :meth:`DeepSeaStudy.per_seed` reads
RUN_FIELDS = ("success_rate", "coverage", "first_success_episode", "solve_episode", "solved")


@dataclasses.dataclass
class DeepSeaStudySettings(ExperimentSettings):
    """Which part of bsuite's protocol a study runs (see the module docstring for the fields).

    smoke: DeepSea-4, 12 episodes, 2 seeds (plumbing only: the numbers mean nothing). study: notebook
    07's design from the pilot (:data:`~pcnn_explore.study.preregistered.deep_sea.STUDY_DESIGN`:
    DeepSea-10 at 1,000 episodes, verdict seeds 701-740, each with its own mapping seed, runs stopping
    once solved); each deep-sea notebook's plan sets its own sizes, caps and seeds (about 45 minutes
    on 2 cores at most). paper: bsuite's 21 sizes, 10K episodes each, the seen seeds
    401-410 on bsuite's mapping 42 (a cluster's work)."""

    PRESETS: ClassVar[dict] = {
        "smoke": dict(sizes=(4,), episodes=(12,), seeds=(0, 1), workers=2,
                      train_overrides=(("tensorboard", False),)),
        "study": dict(sizes=STUDY_DESIGN["sizes"], episodes=STUDY_DESIGN["episodes"], seeds=STUDY_DESIGN["seeds"],
                      workers=2, mapping_seed=PER_SEED,
                      train_overrides=(("stop_when_solved", True), ("tensorboard", False))),
        "paper": dict(sizes=PROTOCOL_SIZES, episodes=(PROTOCOL_EPISODES,), seeds=STUDY_SEEDS, workers=1),
    }
    profile: str = "study"
    sizes: tuple[int, ...] = STUDY_DESIGN["sizes"]
    episodes: tuple[int, ...] = STUDY_DESIGN["episodes"]
    seeds: tuple[int, ...] = STUDY_DESIGN["seeds"]
    workers: int = 2
    mapping_seed: int | str | None = None
    train_overrides: tuple[tuple[str, Any], ...] = ()
    #: the TrainConfig preset of every run (None: ``profile``)
    train_profile: str | None = None
    #: the PixelCNN's optimizer reading of the study's PixelCNN lines ("tf1" the paper's, "torch" the sensitivity
    #: reading): each such line must state it (07 runs each reading's own lines); None: the study names none
    density_optimizer: str | None = None

    def __post_init__(self) -> None:
        for name in ("sizes", "episodes", "seeds"):
            value = getattr(self, name)
            if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
                setattr(self, name, (int(value),))
            elif isinstance(value, list):
                setattr(self, name, tuple(value))

    def episode_cap(self, size: int) -> int:
        """The episodes run on DeepSea-``size``."""
        return int(self.episodes[0] if len(self.episodes) == 1 else self.episodes[list(self.sizes).index(size)])

    def check(self) -> None:
        """Raise ValueError on bad settings, before any run starts."""
        from pcnn_explore.envs.deep_sea import DEEP_SEA_SIZES
        from pcnn_explore.profiles import check_profile

        check_profile(self.profile)
        if self.train_profile is not None:
            check_profile(self.train_profile)

        def whole(x) -> bool:
            return not isinstance(x, bool) and isinstance(x, (int, np.integer))

        if not self.sizes or any(not whole(n) or n not in DEEP_SEA_SIZES for n in self.sizes):
            raise ValueError(f"sizes must be DeepSea sizes N in {DEEP_SEA_SIZES[0]}..{DEEP_SEA_SIZES[-1]}, "
                             f"got {self.sizes!r}")
        if len(set(self.sizes)) != len(self.sizes):
            raise ValueError(f"sizes repeat: {self.sizes!r}")
        if len(self.episodes) not in (1, len(self.sizes)) or any(not whole(e) or e < 1 for e in self.episodes):
            raise ValueError(f"episodes must be one positive episode cap, or one per size ({len(self.sizes)}), "
                             f"got {self.episodes!r}")
        if not self.seeds or any(not whole(s) or s < 0 for s in self.seeds) or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds must be distinct non-negative integers, got {self.seeds!r}")
        if not whole(self.workers) or self.workers < 1:
            raise ValueError(f"workers must be a positive integer, got {self.workers!r}")
        check_mapping_seed(self.mapping_seed)
        if self.density_optimizer is not None:
            from pcnn_explore.experiments.density.density_training import check_reading

            check_reading(self.density_optimizer)

    def check_lines(self, variants: Sequence[StudyVariant]) -> None:
        """ValueError, before any run, for a line that trains its PixelCNN under another optimizer reading than
        the study's ``density_optimizer`` (none where the study names none)."""
        if self.density_optimizer is None:
            return
        other = {v.key: dict(v.overrides)["density_optimizer"] for v in variants
                 if dict(v.overrides).get("density_optimizer", self.density_optimizer) != self.density_optimizer}
        if other:
            raise ValueError(f"a {self.density_optimizer} run of the PixelCNN's optimizer readings cannot run "
                             f"{', '.join(f'{k} ({r})' for k, r in other.items())}: give each reading's own lines "
                             f"(paper_pixelcnn under tf1, paper_pixelcnn_torch under torch)")

    def mapping_of(self, seed: int) -> int | None:
        """The mapping seed of ``seed``'s runs (None: the env's, bsuite's 42)."""
        return mapping_of(self.mapping_seed, seed)


@dataclasses.dataclass(frozen=True)
class RunValues:
    """The values of one run (see the module docstring); episodes are 1-based. ``solve_episode``: the
    first episode at which bsuite's rule held, checked at every episode (None: never); ``solved``:
    whether it held at some episode of the run (``solve_episode`` is not None), not whether the size
    counts for the score; ``bsuite_solve_episode``: the first of bsuite's logged episodes at which it
    held, as bsuite finds it (None: never); ``counts_for_score``: whether that is below 2^N + 100
    within the protocol's 10K episodes (the size counts for bsuite's deep-sea score)."""

    key: str
    size: int
    seed: int
    cap: int
    episodes_run: int
    solve_episode: int | None
    solved: bool
    bsuite_solve_episode: int | None
    counts_for_score: bool
    success_rate: float
    first_success_episode: int | None
    coverage: float
    coverage_curve: np.ndarray = dataclasses.field(repr=False, compare=False)
    wall_s: float = 0.0


def read_run(out_dir: str | os.PathLike, key: str, size: int, seed: int, cap: int) -> RunValues:
    """Read a DeepSea-``size`` run's ``log.csv`` (its first ``cap`` complete episodes) into
    :class:`RunValues`. A run with no complete episode has success rate and coverage NaN."""
    from pcnn_explore.envs.deep_sea_protocol import bsuite_solve_episode
    from pcnn_explore.run.log import read_log

    log = read_log(out_dir)
    complete = np.asarray(log["complete"], dtype=np.float64) == 1
    returns = np.asarray(log["return"], dtype=np.float64)[complete][:cap]
    cells = np.nan_to_num(np.asarray(log["distinct_cells"], dtype=np.float64)[complete][:cap], nan=0.0)
    wall = np.asarray(log["wall_seconds"], dtype=np.float64)
    success = returns > SUCCESS_RETURN
    e = len(success)
    first = int(np.flatnonzero(success)[0]) + 1 if success.any() else None
    solve, seen = solve_episode(list(success)), bsuite_solve_episode(list(success))
    last = success[e - max(1, e // 4):] if e else success
    curve = cells / occupiable_cells(size)
    return RunValues(key=key, size=int(size), seed=int(seed), cap=int(cap), episodes_run=e, solve_episode=solve,
                     solved=solve is not None, bsuite_solve_episode=seen,
                     counts_for_score=bool(solved_in_time(int(size), seen, PROTOCOL_EPISODES)),
                     success_rate=float(last.mean()) if e else math.nan, first_success_episode=first,
                     coverage=float(curve[-1]) if e else math.nan, coverage_curve=curve,
                     wall_s=float(wall[complete][:cap][-1]) if e else 0.0)


def censored_first_success(run: RunValues) -> float:
    """The episode of the first +1, or ``cap + 1`` for a run that never found it (a lower bound)."""
    return float(run.first_success_episode if run.first_success_episode is not None else run.cap + 1)


def study_specs(settings: DeepSeaStudySettings, variants: Sequence[StudyVariant], out_root: str | os.PathLike):
    """One RunSpec per size x variant x seed, in that order, under ``out_root/DeepSea-N-v0/<key>_s<seed>``;
    steps = episode cap x N. Every run gets ``settings.train_overrides``, the variant's settings on
    DeepSea-N on top (:meth:`StudyVariant.fields_for`: per-size ones resolved for N), and its seed's
    ``mapping_seed`` where set (:meth:`DeepSeaStudySettings.mapping_of`)."""
    from pcnn_explore.experiments.agents.agent_runs import RunSpec

    settings.check()
    settings.check_lines(variants)
    keys = [v.key for v in variants]
    if not variants or len(set(keys)) != len(keys):
        raise ValueError(f"a study needs at least one variant and distinct keys, got {keys}")
    specs = []
    for n in settings.sizes:
        env = deep_sea_id(n)
        for v in variants:
            line_fields = {**dict(settings.train_overrides), **v.fields_for(env)}
            for s in settings.seeds:
                fields = dict(line_fields)
                mapping = settings.mapping_of(s)
                if mapping is not None:
                    fields["mapping_seed"] = mapping
                specs.append(RunSpec(v.variant, env, int(s), settings.episode_cap(n) * int(n),
                                     settings.train_profile or settings.profile,
                                     str(Path(out_root) / env / f"{v.key}_s{s}"), tuple(sorted(fields.items())),
                                     v.key, v.display))
    return specs


def run_study(settings: DeepSeaStudySettings, variants: Sequence[StudyVariant], out_dir: str | os.PathLike,
              progress: bool = False) -> "DeepSeaStudy":
    """Train (or read back finished, resume unfinished) every run of the study under ``out_dir/runs``
    with :func:`~pcnn_explore.experiments.agents.agent_runs.run_specs` and read their values."""
    import time

    from pcnn_explore.experiments.agents.agent_runs import run_specs

    specs = study_specs(settings, variants, Path(out_dir) / "runs")
    start = time.monotonic()
    run_specs(specs, settings.workers, progress=progress)
    wall = time.monotonic() - start
    runs = [read_run(s.out_dir, s.key, deep_sea_size(s.env), s.seed, s.steps // deep_sea_size(s.env)) for s in specs]
    return DeepSeaStudy(settings, list(variants), runs, wall)


@dataclasses.dataclass
class DeepSeaStudy:
    """The runs of one study and their per-seed values (see the module docstring)."""

    settings: DeepSeaStudySettings
    variants: list[StudyVariant]
    runs: list[RunValues]
    wall_s: float = math.nan  # seconds :func:`run_study` spent running (or reading back) the runs

    @property
    def keys(self) -> list[str]:
        return [v.key for v in self.variants]

    @property
    def seeds(self) -> list[int]:
        return list(self.settings.seeds)

    @property
    def labels(self) -> dict[str, str]:
        return {v.key: v.display for v in self.variants}

    def run(self, key: str, size: int, seed: int) -> RunValues:
        for r in self.runs:
            if (r.key, r.size, r.seed) == (key, size, seed):
                return r
        raise KeyError(f"no run of {key!r} on DeepSea-{size} with seed {seed}")

    def per_seed(self, key: str, field: str, sizes: Sequence[int] | None = None) -> list[float]:
        """One value per seed (in ``seeds`` order): the mean over ``sizes`` (default: the study's) of
        the runs' ``field`` (:data:`RUN_FIELDS`; ``first_success_episode`` censored at cap + 1,
        ``solve_episode`` likewise, ``solved`` as 0/1)."""
        if field not in RUN_FIELDS:
            raise ValueError(f"field must be one of {RUN_FIELDS}, got {field!r}")
        if key not in self.keys:
            raise KeyError(f"no variant {key!r} in this study (it has {', '.join(self.keys)})")

        def value(r: RunValues) -> float:
            if field == "first_success_episode":
                return censored_first_success(r)
            if field == "solve_episode":
                return float(r.solve_episode if r.solve_episode is not None else r.cap + 1)
            return float(getattr(r, field))

        sizes = list(self.settings.sizes if sizes is None else sizes)
        return [float(np.mean([value(self.run(key, n, s)) for n in sizes])) for s in self.seeds]

    def per_seed_score(self, key: str) -> list[float]:
        """bsuite's deep-sea score of each seed over the study's sizes, each size capped at its episodes."""
        return [deep_sea_score({n: self.run(key, n, s).bsuite_solve_episode for n in self.settings.sizes},
                               episodes=max(self.settings.episode_cap(n) for n in self.settings.sizes))
                for s in self.seeds]

    def coverage_curves(self, key: str, size: int, points: int = 20) -> tuple[np.ndarray, np.ndarray]:
        """(episodes (P,), coverage (seeds, P)): each seed's coverage after ``points`` evenly spaced
        episodes up to the cap (NaN past the episodes a run logged)."""
        cap = self.settings.episode_cap(size)
        at = np.unique(np.linspace(1, cap, min(points, cap)).round().astype(np.int64))
        rows = []
        for s in self.seeds:
            c = self.run(key, size, s).coverage_curve
            rows.append(np.where(at <= len(c), c[np.clip(at - 1, 0, max(len(c) - 1, 0))] if len(c) else np.nan, np.nan))
        return at, np.asarray(rows, dtype=np.float64)

    def mean_coverage(self, key: str, size: int, points: int = 20) -> list[float]:
        """Per seed: the mean of its coverage curve over ``points`` evenly spaced episodes (the area
        under the coverage curve, as a share: 1 means every cell from the first episode)."""
        return [float(np.nanmean(row)) for row in self.coverage_curves(key, size, points)[1]]

    def scaling_rows(self) -> list[dict[str, Any]]:
        """One row per run in :data:`pcnn_explore.sweep.deep_sea_report.SCALING_COLUMNS`' columns
        (``variant`` is the study's key)."""
        return [{"size": r.size, "variant": r.key, "seed": r.seed, "episodes_run": r.episodes_run,
                 "solved": int(r.solved), "solve_episode": r.solve_episode,
                 "bsuite_solve_episode": r.bsuite_solve_episode, "counts_for_score": int(r.counts_for_score)}
                for r in self.runs]

    def metrics(self) -> dict[str, Any]:
        """metrics.json's per-seed values: ``{key: {"seeds", "score", "success_rate", "coverage",
        "first_success_episode" (censored at cap + 1), "runs": [per run: size, seed, solve_episode,
        solved, success_rate, first_success_episode, coverage, episodes_run]}}``."""
        out: dict[str, Any] = {}
        for key in self.keys:
            out[key] = {"label": self.labels[key], "seeds": self.seeds, "score": self.per_seed_score(key),
                        **{f: self.per_seed(key, f) for f in ("success_rate", "coverage", "first_success_episode")},
                        "runs": [{"size": r.size, "seed": r.seed, "solve_episode": r.solve_episode,
                                  "solved": r.solved, "success_rate": r.success_rate,
                                  "first_success_episode": r.first_success_episode, "coverage": r.coverage,
                                  "episodes_run": r.episodes_run} for r in self.runs if r.key == key]}
        return out

    def table(self) -> str:
        """One line per run: key, N, seed, episodes, solve episode, first +1, last-quarter success rate, coverage."""
        lines = [f"{'variant':<22} {'N':>3} {'seed':>5} {'episodes':>8} {'solve':>6} {'first+1':>7} "
                 f"{'success':>7} {'cells':>6}"]
        for r in self.runs:
            lines.append(f"{r.key:<22} {r.size:>3} {r.seed:>5} {r.episodes_run:>8} {r.solve_episode or '-':>6} "
                         f"{r.first_success_episode or '-':>7} {r.success_rate:>7.3f} {r.coverage:>6.0%}")
        return "\n".join(lines)


def settings_of(profile: str, seed: int | None = None, n_seeds: int | None = None,
                **given: Any) -> DeepSeaStudySettings:
    """The preset of ``profile``; ``seed``/``n_seeds`` pick seeds ``seed, seed + 1, ...`` (None: the
    preset's seeds); any other setting given (None: the preset's)."""
    if seed is None and n_seeds is None:
        return DeepSeaStudySettings.preset(profile, **given)
    first = DeepSeaStudySettings.preset(profile).seeds[0] if seed is None else seed
    return DeepSeaStudySettings.for_notebook(profile, seed=first, n_seeds=n_seeds, **given)


__all__ += ["settings_of"]
