"""Run agent variants x seeds: one training run per (variant, env, seed), in worker processes.

Shared by the agent experiments (Fig. 5, 11, 12, 13 of the paper; their table is
:mod:`pcnn_explore.experiments.agents.agent_figures`). Each run is a trial of the sweep runner
(:func:`pcnn_explore.sweep.runner.run_trials`): one resumable :func:`pcnn_explore.run.train`
in its own output folder, in a pool of worker processes on this machine by default (no Ray), as a
Ray task where ``$RAY_ADDRESS`` names a cluster or a Ray is already started in this process (or
where ``executor``/``$PCNN_EXPLORE_EXECUTOR`` says ``ray``), at most ``workers`` at once, one CPU
and one torch thread each. A folder that already holds the same run is reused (finished: read back; unfinished:
resumed); one holding other settings is replaced. Variants are named by the rule of
:mod:`pcnn_explore.run.variants`. The runs' logs become curves and summaries in
:mod:`pcnn_explore.experiments.agents.agent_curves` (whose names are importable from here too).

Units: ``step`` is counted in agent steps (one action; on Atari one agent step is 4 emulator
frames).
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from pcnn_explore.experiments.agents.agent_curves import (
    AgentExperimentResults,
    curves_by_variant,
    final_success_rate,
    summarise_runs,
)
from pcnn_explore.run.variants import LABELS, VARIANTS, check_variant, variant_label, variant_overrides
from pcnn_explore.profiles import ExperimentSettings

__all__ = [
    "VARIANTS",
    "LABELS",
    "variant_overrides",
    "variant_label",
    "RunSpec",
    "RunResult",
    "run_one",
    "load_run",
    "run_grid",
    "run_specs",
    "load_sweep_runs",
    "curves_by_variant",
    "summarise_runs",
    "final_success_rate",
    "AgentSettings",
    "AgentExperimentResults",
    "make_specs",
    "run_experiment",
    "STUDY_TASK",
    "SMOKE_TASK",
    "HARD_TASK",
    "STUDY_TRAIN_OVERRIDES",
    "PAPER_AGENT_STEPS",
]


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One training run: a variant (see :func:`variant_overrides`) plus overrides, on one env and seed."""

    variant: str
    env: str
    seed: int
    steps: int
    profile: str
    out_dir: str
    overrides: tuple[tuple[str, Any], ...] = ()  # extra TrainConfig fields (pg_scale, epsilon_decay_steps, ...)
    name: str = ""  # short key for metrics ("dqn", "c10", ...); default: the variant
    label: str = ""  # legend text; default: the paper's name of the variant

    @property
    def key(self) -> str:
        return self.name or self.variant

    @property
    def display(self) -> str:
        return self.label or variant_label(self.variant)

    def config_fields(self) -> dict[str, Any]:
        return {**variant_overrides(self.variant), **dict(self.overrides)}


@dataclasses.dataclass
class RunResult:
    """What one run leaves for the figures: its episodes, in agent steps.

    episode_end_step: (E,) int, agent step at which each episode ended.
    episode_return: (E,) float, undiscounted extrinsic return of each episode.
    episode_intrinsic: (E,) float, sum of the bonus r+ over each episode (0 without a bonus).
    """

    spec: RunSpec
    episode_end_step: np.ndarray
    episode_return: np.ndarray
    episode_intrinsic: np.ndarray
    wall_s: float  # training wall-clock seconds (to the last logged episode)
    steps_done: int  # agent steps run (spec.steps for a finished run)

    @property
    def key(self) -> str:
        return self.spec.key

    @property
    def label(self) -> str:
        return self.spec.display


def _check_spec(spec: RunSpec) -> None:
    check_variant(spec.variant)
    if isinstance(spec.steps, bool) or not isinstance(spec.steps, (int, np.integer)) or spec.steps < 1:
        raise ValueError(f"steps must be a positive number of agent steps, got {spec.steps!r}")
    if isinstance(spec.seed, bool) or not isinstance(spec.seed, (int, np.integer)) or spec.seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {spec.seed!r}")


def _episodes_from_log(log: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Complete episodes' end steps, extrinsic returns and summed bonus from a training log.

    The log (:func:`pcnn_explore.run.read_log`) has one row per episode: ``step`` (agent step at
    its end), ``return`` (extrinsic), ``intrinsic_return`` and ``complete`` (0 for an episode cut
    by the end of the step budget, which is left out here).
    """
    complete = np.asarray(log["complete"]).astype(bool)
    steps = np.asarray(log["step"], dtype=np.int64)[complete]
    returns = np.asarray(log["return"], dtype=np.float64)[complete]
    intrinsic = np.nan_to_num(np.asarray(log["intrinsic_return"], dtype=np.float64)[complete])
    return steps, returns, intrinsic


SPEC_FILE = "run_spec.json"
_TRAIN_OUTPUTS = ("log.csv", "traces.csv", "checkpoint.pt", "policy.pt", "settings.json", "tb", SPEC_FILE, "trial.json",
                  "attempt.json", "result.json")


def _clear_run_dir(out_dir: Path) -> None:
    """Remove what an earlier run left in ``out_dir`` (only the files a training run writes)."""
    import shutil

    for name in _TRAIN_OUTPUTS:
        p = out_dir / name
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()


def _spec_text(spec: RunSpec) -> str:
    return json.dumps(dataclasses.asdict(spec), indent=1) + "\n"


def _trial(spec: RunSpec):
    """The sweep trial that trains ``spec`` (its folder also gets ``run_spec.json`` for :func:`load_run`)."""
    from pcnn_explore.sweep.grid import Trial

    return Trial(spec.env, spec.variant, int(spec.seed), spec.profile, str(Path(spec.out_dir).resolve()),
                 tuple(sorted({**dict(spec.overrides), "steps": int(spec.steps)}.items())), spec.key,
                 ((SPEC_FILE, _spec_text(spec)),))


def run_one(spec: RunSpec) -> RunResult:
    """Train one run in this process (one torch thread, no Ray) and read its episodes back.

    ``spec.out_dir`` gets the training outputs (log.csv, tb/, checkpoint.pt) and ``run_spec.json``;
    what an earlier run left there is replaced, so the results always match ``spec``.
    """
    import torch

    from pcnn_explore.run import train

    _check_spec(spec)
    torch.set_num_threads(1)
    cfg = _trial(spec).config()
    out = Path(spec.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _clear_run_dir(out)
    (out / SPEC_FILE).write_text(_spec_text(spec))
    train(cfg, progress=False)
    return load_run(out)


def _read_result(spec: RunSpec, out: Path, max_step: int | None = None) -> RunResult:
    from pcnn_explore.run import read_log

    log = read_log(out)
    if max_step is not None:
        keep = np.asarray(log["step"]) <= max_step
        log = {k: np.asarray(v)[keep] for k, v in log.items()}
        spec = dataclasses.replace(spec, steps=min(spec.steps, int(max_step)))
    ends, rets, intr = _episodes_from_log(log)
    n = len(log["step"])
    wall = float(np.asarray(log["wall_seconds"])[-1]) if n else 0.0
    done = int(np.asarray(log["step"])[-1]) if n else 0
    return RunResult(spec, ends, rets, intr, wall, done)


def load_run(out_dir: str | os.PathLike, max_step: int | None = None) -> RunResult:
    """Read a run written by :func:`run_one` or :func:`run_specs`, or a trial of ``pcnn-explore sweep``
    (its ``trial.json``); also a run cut short (its finished episodes so far).

    ``max_step``: keep only the episodes that ended by that agent step, so runs of different
    lengths (or cut at different times) compare over the same budget. The training schedule
    (epsilon decay, learning start) does not depend on the step budget, so such a prefix is what
    a run of ``max_step`` steps would have logged, up to the cut episode.
    """
    out = Path(out_dir)
    if not (out / SPEC_FILE).is_file() and (out / "trial.json").is_file():  # a trial of pcnn-explore sweep
        t = json.loads((out / "trial.json").read_text())
        over = tuple(sorted((k, v) for k, v in t["overrides"].items() if k != "steps"))
        spec = RunSpec(t["variant"], t["env"], int(t["seed"]), int(t["settings"]["steps"]), t["profile"], str(out),
                       over, t["line"])
        return _read_result(spec, out, max_step)
    d = json.loads((out / SPEC_FILE).read_text())
    d["overrides"] = tuple(tuple(kv) for kv in d["overrides"])
    return _read_result(RunSpec(**d), out, max_step)


#: environment variable that picks run_specs' executor when its ``executor`` argument is None
EXECUTOR_VARIABLE = "PCNN_EXPLORE_EXECUTOR"


def run_specs(specs: Sequence[RunSpec], workers: int = 1, progress: bool = False,
              executor: str | None = None, on_done: Callable[[int], None] | None = None) -> list[RunResult]:
    """Run ``specs`` (at most ``workers`` at once) and return their results in the same order.

    ``executor``: ``local`` (worker processes on this machine, no Ray), ``ray`` (Ray tasks: the
    cluster of ``$RAY_ADDRESS``, else a local Ray stopped when the runs end) or ``auto`` (ray where
    ``$RAY_ADDRESS`` is set or Ray runs in this process, else local); None: ``$PCNN_EXPLORE_EXECUTOR``,
    else ``auto``. The results do not depend on ``workers`` nor on the executor (each run is seeded
    by its spec alone). A folder already holding the same finished run is read back without
    training; an unfinished one is resumed from its checkpoint; one holding another run is
    replaced. ``progress`` prints a line per run that starts or ends. ``on_done(i)`` is called as
    soon as ``specs[i]`` finishes training here (:func:`~pcnn_explore.sweep.runner.run_trials`).
    Raises RuntimeError naming the runs that failed.
    """
    from pcnn_explore.sweep.ray_cluster import release
    from pcnn_explore.sweep.runner import run_trials
    from pcnn_explore.sweep.view import SweepView

    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if executor is None:
        executor = os.environ.get(EXECUTOR_VARIABLE) or "auto"
    if executor not in ("auto", "local", "ray"):
        raise ValueError(f"executor must be auto, local or ray, got {executor!r} (argument executor or "
                         f"${EXECUTOR_VARIABLE})")
    for s in specs:
        _check_spec(s)
    if not specs:
        return []
    try:
        records = run_trials([_trial(s) for s in specs], executor=executor, max_concurrent=workers,
                             on_mismatch="replace", on_done=on_done,
                             view=SweepView(tty=False, every_s=float("inf")) if progress else None)
    finally:
        release()  # a local Ray started here stops with the runs (not a cluster joined by address)
    failed = [f"{r['name']}: {r['error']}" for r in records if r["status"] != "done"]
    if failed:
        raise RuntimeError(f"{len(failed)} of {len(records)} runs failed: " + "; ".join(failed))
    return [load_run(s.out_dir) for s in specs]


def run_grid(
    env: str,
    variants: Sequence[str],
    seeds: Sequence[int],
    steps: int,
    profile: str,
    out_root: str | os.PathLike,
    workers: int = 1,
    extra: dict[str, Any] | None = None,
) -> list[RunResult]:
    """Run every variant x seed on ``env`` and return the results (variant-major order).

    ``extra``: TrainConfig fields applied to every run (e.g. ``{"pg_scale": 1.0}``).
    Each run writes under ``out_root/<variant>_s<seed>`` (see :func:`run_specs` for what is reused).
    """
    from pcnn_explore.profiles import check_profile

    check_profile(profile)
    if not variants or not seeds:
        raise ValueError("run_grid needs at least one variant and one seed")
    over = tuple(sorted((extra or {}).items()))
    specs = [RunSpec(v, env, int(s), int(steps), profile, str(Path(out_root) / f"{v}_s{s}"), over)
             for v in variants for s in seeds]
    return run_specs(specs, workers)


def load_sweep_runs(sweep_dir: str | os.PathLike, specs: Sequence[RunSpec]) -> list[RunResult]:
    """The runs of ``specs`` from a sweep made by ``pcnn-explore sweep`` (e.g. on a cluster).

    Each spec is found in its trial folder ``sweep_dir/<env>/<variant>[,field=value]/seed<k>``,
    the line named by the spec's variant and the overrides it adds to the figure's (its
    ``line_overrides``; see :func:`make_specs`). Unfinished trials count with the episodes they
    have logged. Raises ValueError listing the trials the sweep lacks.
    """
    root = Path(sweep_dir)
    if not root.is_dir():
        raise ValueError(f"sweep_dir {str(sweep_dir)!r} is not a folder: give the --out of a pcnn-explore sweep")
    missing = [s.out_dir for s in specs if not (Path(s.out_dir) / "log.csv").is_file()]
    if missing:
        shown = ", ".join(os.path.relpath(m, root) for m in missing[:4]) + (", ..." if len(missing) > 4 else "")
        raise ValueError(f"the sweep in {root} lacks {len(missing)} of the {len(specs)} runs this figure needs "
                         f"({shown}); run its grid there first (pcnn-explore sweep <grid> --out {root})")
    return [_read_result(s, Path(s.out_dir)) for s in specs]


# ---------------------------------------------------------------------------------------------
# Settings shared by the four agent experiments (their table: agent_figures)

#: the CPU-scale task of the study notebooks (benchmarks/task_search.py, data/task_search.json):
#: a 20-step winding corridor that a random policy ends in 5% of its 196-step episodes. The
#: 9x9 corridor (36 steps, no random success in 200 episodes) is the harder task the search
#: tried; no agent solved it within the 12-15K agent steps that were affordable.
STUDY_TASK = "MiniGrid-Serpentine-7x7-v0"
HARD_TASK = "MiniGrid-Serpentine-9x9-v0"
#: smoke runs use the study task with a few hundred steps (plumbing only)
SMOKE_TASK = "MiniGrid-Serpentine-7x7-v0"
#: CPU-scale schedule: epsilon 1 -> 0.05 over 2,500 agent steps (TrainConfig's study preset: 20,000,
#: which left the agents acting at random for the whole affordable budget)
STUDY_TRAIN_OVERRIDES = (("epsilon_decay_steps", 2_500),)
#: agent steps per paper run: 150M frames at frame skip 4 (the appendix table's budget)
PAPER_AGENT_STEPS = 150_000_000 // 4


@dataclasses.dataclass
class AgentSettings(ExperimentSettings):
    """Fields every agent experiment has (mixed into each experiment's settings dataclass).

    envs: env ids (study: the CPU task; paper: Atari games). seeds: one run per seed and variant.
    steps: agent steps per run. workers: runs at once (worker processes, one CPU and torch thread each).
    curve_window: agent steps per point of the training curves (the paper: 1M frames, 250K agent
    steps on Atari). window: last episodes counted by the success rate.
    """

    profile: str = "study"
    envs: tuple[str, ...] = (STUDY_TASK,)
    seeds: tuple[int, ...] = (0, 1, 2)
    steps: int = 30_000
    workers: int = 2
    curve_window: int = 1_000
    window: int = 20
    #: TrainConfig fields set for every run of the experiment, as (field, value) pairs
    train_overrides: tuple[tuple[str, Any], ...] = ()

    def check(self) -> None:
        """Raise ValueError/TypeError on bad settings, before any run starts."""
        from pcnn_explore.envs import check_env_id
        from pcnn_explore.profiles import check_profile

        check_profile(self.profile)
        if isinstance(self.envs, str):
            raise TypeError(f"envs must be a tuple of env ids, got the string {self.envs!r}; write ({self.envs!r},)")
        if not self.envs:
            raise ValueError("envs is empty: name at least one env id")
        for e in self.envs:
            check_env_id(e)
        if not self.seeds:
            raise ValueError("seeds is empty: give at least one seed")
        for s in self.seeds:
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
                raise ValueError(f"seeds must be non-negative integers, got {s!r}")
        if len(set(self.seeds)) != len(tuple(self.seeds)):
            raise ValueError(f"seeds repeat: {tuple(self.seeds)}")
        for name in ("steps", "workers", "curve_window", "window"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        from pcnn_explore.run import TrainConfig

        known = {f.name for f in dataclasses.fields(TrainConfig)}
        for item in self.train_overrides:
            if not (isinstance(item, tuple) and len(item) == 2):
                raise TypeError(f"train_overrides holds (field, value) pairs, got {item!r}")
            if item[0] not in known:
                raise ValueError(f"train_overrides: TrainConfig has no field {item[0]!r}")
            if item[0] in ("env", "seed", "steps", "out_dir", "profile"):
                raise ValueError(f"train_overrides may not set {item[0]!r}: it comes from the experiment's settings")


def run_experiment(settings: AgentSettings, specs: list[RunSpec], sweep_dir: str | os.PathLike | None = None,
                   progress: bool = False) -> AgentExperimentResults:
    """Check settings, run ``specs`` (at most ``settings.workers`` at once) and collect the results;
    with ``sweep_dir``, read them from that sweep instead of training (:func:`load_sweep_runs`)."""
    settings.check()
    results = load_sweep_runs(sweep_dir, specs) if sweep_dir is not None else run_specs(specs, settings.workers, progress)
    return AgentExperimentResults(results, window=settings.window, curve_window=settings.curve_window)


def make_specs(settings: AgentSettings, out_root: str | os.PathLike,
               variants: Sequence[tuple[str, str, dict[str, Any], str]], sweep_layout: bool = False) -> list[RunSpec]:
    """Specs for every env x (variant_name, key, overrides, label) x seed, written under ``out_root``.

    Folders: ``out_root/<env>/<key>_s<seed>``; with ``sweep_layout``, a sweep's trial folders
    ``out_root/<env>/<variant>[,field=value]/seed<seed>`` (the line named by the variant's own overrides).
    """
    from pcnn_explore.sweep.grid import folder_safe, line_name

    specs = []
    for env in settings.envs:
        env_dir = folder_safe(env)
        for variant, key, overrides, label in variants:
            check_variant(variant)
            fields = {**dict(settings.train_overrides), **overrides}
            for s in settings.seeds:
                folder = (Path(out_root) / env_dir / line_name(variant, overrides) / f"seed{s}" if sweep_layout
                          else Path(out_root) / env_dir / f"{key}_s{s}")
                specs.append(RunSpec(variant, env, int(s), int(settings.steps), settings.profile, str(folder),
                                     tuple(sorted(fields.items())), key, label))
    return specs
