"""The density notebooks' verdicts (00-06) under the PixelCNN's two optimizer readings, declared before any run on
their seeds.

This file is the record: per density notebook the optimizer readings its verdict is decided under, the seeds its
``study`` (and ``paper``) verdict is decided on, the per-seed budget, the per-seed cost the pilot measured under
each reading on a tuning seed and the wall time that gives on 2 CPU cores. Each experiment's settings read their
study preset's seeds and reading here (:func:`preset_fields`; 03 its frames too, :func:`study_fields`); changing
them is a visible commit of this file, made before the runs it is judged on. Each notebook's claims are declared in
its own module beside this one (e.g. :mod:`pcnn_explore.study.preregistered.pseudo_counts`; 03's two statements
of the lowest loss in :mod:`pcnn_explore.study.preregistered.lr_schedules`).

Readings (issue 44). Every density verdict runs twice, once per reading of the PixelCNN's RMSProp
(:data:`READINGS`; the settings' ``rmsprop``): ``tf1``, the paper's (App. A names the arguments of TensorFlow 1's
``RMSPropOptimizer``, trained on the per-pixel mean cross-entropy, as the paper group's public PixelCNN bonus is),
and ``torch``, the kit's reading before 0.3.0, the sensitivity reading. The CTS models have no such optimizer:
their runs are the same under both, and they run under both, so that every line of a paired claim runs on the
same seeds in the same run. Each claim is decided under each reading on its own. A notebook's headline word is
the paper reading's; the torch reading's word is decided too and shown beside it; where a claim's two words
differ, the top table says :data:`DEPENDS_ON_READING`, with both readings' numbers (estimate, interval, p, n).

Seeds. A run of seed s trains on the stream (and model weights) of seed s and draws its held-out frames from the
stream of seed s + 1, so a notebook's seeds step by 2
(:func:`pcnn_explore.experiments.density.density_training.seed_list`). :data:`TUNING_SEEDS` are the seeds the
density notebooks were built, piloted and tested on (smoke 0 and 2, the 3-seed study 0, 2 and 4, their held-out
streams, the tests' 0-9, this file's pilot on seed 0 and its held-out stream 1). :data:`SEEN_SEEDS` are seeds
whose runs have been seen: 7, 8, 11 and 13 (an outside check of 03 and 05 under the readings), the agents' seen
seeds 401-410, and 701-740, the seeds of the density verdicts decided before the readings were named. No verdict
takes either (:func:`check_not_verdict_or_seen`). Every study verdict runs on :data:`VERDICT_SEEDS`' first
``n_seeds`` (801, 803, ...; held-out streams 802, 804, ...), never run before this file, under both readings.

Tests. Every claim is decided by an exact test at one-sided 0.025 on at least
:data:`pcnn_explore.verdicts.MIN_SEEDS` (6) seeds (:func:`pcnn_explore.study.decide`): the paired sign-flip test
reaches p = 2^-n when every seed moves the same way, so 6 seeds decide only when all 6 agree (p = 1/64 = 0.016),
8 tolerate a small dissent and 10 or more a few. No density claim declares a smallest effect of interest (they
are directions, not sizes), so no power analysis sets their seeds: each notebook takes at least 6 seeds and as
many as fit its budget (:func:`seeds_that_fit`), up to :data:`MAX_SEEDS` (20: the sign-flip test enumerates all
2^20 sign patterns exactly).

Budgets. A density notebook may take :data:`BUDGET_S` (20 minutes) per reading on 2 cores; 03 may take
:data:`LR_SCHEDULES_BUDGET_S` (45 minutes) per reading on 2 cores, because its own limits say its claims need
longer than 10K frames. :func:`seeds_that_fit` takes the most seeds (a multiple of the workers, at most
:data:`MAX_SEEDS`) whose expected wall time, ceil(n_seeds / workers) x per_seed_cpu_s + :data:`START_S`, stays
within :data:`MARGIN` of the budget (room for a busy machine), and 6 where fewer fit that but 6 fit the whole
budget (04: 6 seeds, 17.8 minutes). So 00, 02 and 05 take 20 seeds (3.1, 2.1 and 10.4 minutes per reading), 01
18 (15.6 minutes), 03 8 (37.7 minutes), 04 6 (17.8 minutes) and 06 8 (14.6 minutes); about 1 h 41 min per reading,
3 h 23 min for both. 03 takes the longest of the pilot's budgets (10K,
30K, 100K frames for the whole grid of 9 (schedule, initial rate) pairs) that fits at least 6 seeds in its 45
minutes: 30K frames (562 s of CPU per seed under the dearer reading, 8 seeds in 37.7 minutes; 100K would take
1,875 s per seed, 94 minutes with 6 seeds, twice the budget), the final loss averaged over the last quarter, 7,500
frames (as the earlier study's 2,500 of 10K) (:data:`PRICES_03`). Every other per-seed budget is the earlier
study's, unchanged.

Costs (the pilot, ``benchmarks/density_readings_pilot.py``, its output in :data:`PILOT_FILE`): ``per_seed_cpu_s``
is the larger of the two readings' CPU time (user + system, :func:`resource.getrusage`) of one seed's run at the
study budget, one torch thread, on the project's 2-core x86_64 machine (torch 2.13 CPU), tuning seed 0, a cold
stream cache (stream generation included), each run in a fresh interpreter, two at once. CPU time rather than
wall, as the machine ran other work at the same time (load average 2-5; 03 and 04 ran at the busiest, their wall
time about 2.7 times their CPU time; 04's CPU time came out above the earlier plan's measure of the same budget,
the others', 03's included, below it). 00, 02 at the full budget; 05 at half, 03 at half of the
earlier 10K (5K frames, all 9 rates), 01 and 06 at a quarter and 04 at a fifth of the frames, scaled up linearly
(which overstates their fixed costs, the held-out streams and the samples); 03 at 30K and 100K frames priced
linearly from its 5K run, every run of the grid counted as training all its frames (an upper bound where a run
diverges and stops). Seeds run 2 at once (``workers``: one process per core,
:func:`pcnn_explore.experiments.density.density_training.run_seeds`), except 00, whose seeds run one after
another. :attr:`DensityPlan.expected_wall_s` is the wall time of one reading's run of the notebook.

Claims dropped to ``not testable: too few seeds at this profile`` for time: none (:data:`DROPPED_FOR_TIME`). Not
testable for other reasons, as before: 06's App. C claim (agent scores; ``not testable on this task``), 11's one
recorded episode (no seeds), any claim at the ``smoke`` profile (2 seeds, plumbing only).

The PixelCNN lines of the agent notebooks (07, 12, 13) are declared in
:mod:`pcnn_explore.study.preregistered.pixelcnn_readings`.

How the re-run runs (next, on these seeds only): each notebook once per reading, each reading in its own output
folder, the paper's through ``pcnn-explore reproduce --profile study --only NN`` (the study preset: seeds and
reading from here) and the torch reading's with the notebook's ``rmsprop`` parameter set to ``"torch"`` (papermill
``-p rmsprop torch``); then the two records are joined, the paper reading's first, and the report decides each
claim under both. 03 decides :data:`pcnn_explore.study.preregistered.lr_schedules.RERUN_CLAIMS`.
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path

__all__ = ["FIRST_VERDICT_SEED", "VERDICT_SEEDS", "TUNING_SEEDS", "SEEN_SEEDS", "PAPER_READING", "SENSITIVITY_READING",
           "READINGS", "DEPENDS_ON_READING", "CORES", "BUDGET_S", "LR_SCHEDULES_BUDGET_S", "START_S", "MARGIN",
           "MAX_SEEDS", "MIN_SEEDS", "PILOT_FILE", "DensityPlan", "PLANS", "PRICES_03", "expected_wall_s", "DROPPED_FOR_TIME", "check_not_verdict_or_seen",
           "seeds_that_fit", "plan", "preset_seeds", "preset_fields", "study_fields"]

#: the first verdict seed of every density notebook; a notebook's seeds are 801, 803, ... (step 2)
FIRST_VERDICT_SEED = 801
#: the seeds every density verdict may take, in order (each notebook the first ``n_seeds``), with their
#: held-out streams' seeds s + 1: 801-840, none run before this file
VERDICT_SEEDS = tuple(range(FIRST_VERDICT_SEED, FIRST_VERDICT_SEED + 40, 2))
#: seeds the density notebooks were built, piloted and tested on (and their held-out streams): never a verdict's
TUNING_SEEDS = tuple(range(0, 10))
#: seeds whose runs were seen before this file: an outside check of 03 and 05 under the readings (7, 8, 11, 13),
#: the agents' seen seeds 401-410, and the density verdicts' earlier seeds 701-740 with their held-out streams
SEEN_SEEDS = (7, 8, 11, 13, *range(401, 411), *range(701, 741))
#: the PixelCNN's optimizer readings every density verdict runs under: the paper's (the headline word) and the
#: sensitivity reading, decided too and shown beside it (:data:`pcnn_explore.names.DENSITY_OPTIMIZERS`)
PAPER_READING, SENSITIVITY_READING = "tf1", "torch"
READINGS = (PAPER_READING, SENSITIVITY_READING)
#: what the top table says of a claim whose two readings give different words (with both readings' numbers)
DEPENDS_ON_READING = "depends on the optimizer reading"
#: the study profile's machine: 2 CPU cores
CORES = 2
#: the budget of a density notebook at the study profile, per reading: 20 minutes on 2 cores
BUDGET_S = 20 * 60
#: 03's budget at the study profile, per reading: 45 minutes on 2 cores (its claims need longer than 10K frames)
LR_SCHEDULES_BUDGET_S = 45 * 60
#: seconds allowed for the seed workers' start (a fresh interpreter each, importing torch and the
#: experiment: measured 2.5 s of CPU, 5 s of wall on the loaded machine)
START_S = 10.0
#: the share of its budget a plan's expected wall time may take (the rest: room for a busy machine)
MARGIN = 0.85
#: the most seeds a density verdict takes (the exact sign-flip test enumerates 2^20 patterns)
MAX_SEEDS = 20
#: the fewest seeds a decided claim rests on (:data:`pcnn_explore.verdicts.MIN_SEEDS`)
MIN_SEEDS = 6
#: the pilot's record (``benchmarks/density_readings_pilot.py``)
PILOT_FILE = Path(__file__).resolve().parents[3] / "data" / "pilot" / "density_readings_pilot.json"


def check_not_verdict_or_seen(seeds, tuning_ok: bool = False) -> tuple[int, ...]:
    """``seeds`` as ints if none is seen (:data:`SEEN_SEEDS`) or, unless ``tuning_ok``, a tuning seed
    (:data:`TUNING_SEEDS`); else a ValueError naming them. A verdict's seeds and their held-out streams pass
    with ``tuning_ok`` False; a pilot's with it True (a pilot runs tuning seeds only, never a seen one)."""
    seeds = tuple(int(s) for s in seeds)
    seen = sorted(set(seeds) & set(SEEN_SEEDS))
    tuning = [] if tuning_ok else sorted(set(seeds) & set(TUNING_SEEDS) - set(SEEN_SEEDS))
    if seen or tuning:
        raise ValueError(f"seeds {seen + tuning} were seen before this plan ({'seen: ' + str(seen) if seen else ''}"
                         f"{'; ' if seen and tuning else ''}{'tuning: ' + str(tuning) if tuning else ''}): "
                         f"a verdict takes the declared seeds {VERDICT_SEEDS[0]}, {VERDICT_SEEDS[1]}, ...")
    return seeds


check_not_verdict_or_seen(VERDICT_SEEDS + tuple(s + 1 for s in VERDICT_SEEDS))  # declared new, held-out streams too


def expected_wall_s(n_seeds: int, per_seed_cpu_s: float, workers: int) -> float:
    """Wall seconds of ``n_seeds`` seeds at ``per_seed_cpu_s`` each, ``workers`` at once (plus :data:`START_S`
    for the workers' start when there are more than one)."""
    return math.ceil(n_seeds / workers) * per_seed_cpu_s + (START_S if workers > 1 else 0.0)


def seeds_that_fit(per_seed_cpu_s: float, workers: int, budget_s: float = BUDGET_S) -> int:
    """The most seeds, a multiple of ``workers`` and at most :data:`MAX_SEEDS`, whose expected wall time stays
    within :data:`MARGIN` x ``budget_s``; where fewer than :data:`MIN_SEEDS` do, :data:`MIN_SEEDS` if they fit
    the whole budget (a claim needs 6), else the most that fit it (then fewer than 6: its claims are dropped for
    time)."""
    def most(limit: float) -> int:
        n = 0
        while n + workers <= MAX_SEEDS and expected_wall_s(n + workers, per_seed_cpu_s, workers) <= limit:
            n += workers
        return n

    n = most(MARGIN * budget_s)
    if n >= MIN_SEEDS:
        return n
    return MIN_SEEDS if expected_wall_s(MIN_SEEDS, per_seed_cpu_s, workers) <= budget_s else most(budget_s)


@dataclasses.dataclass(frozen=True)
class DensityPlan:
    """One density notebook's study verdict, per reading: notebook ("00".."06"), n_seeds (verdict seeds, the
    first of :data:`VERDICT_SEEDS`), budget (per seed, the study preset's frames/updates, in words),
    per_seed_cpu_s (the pilot's, the larger of the readings', see the module docstring), workers (seeds at once
    on :data:`CORES`), budget_s (the notebook's budget per reading), fields (the study preset's fields this plan
    sets besides the seeds and the reading: 03's frames), pilot_cpu_s ((reading, per-seed CPU seconds) of
    the pilot)."""

    notebook: str
    n_seeds: int
    budget: str
    per_seed_cpu_s: float
    workers: int
    budget_s: float = BUDGET_S
    fields: tuple[tuple[str, object], ...] = ()
    pilot_cpu_s: tuple[tuple[str, float], ...] = ()

    def __post_init__(self):
        if self.n_seeds > len(VERDICT_SEEDS):
            raise ValueError(f"density plan {self.notebook}: {self.n_seeds} seeds, the declared pool holds "
                             f"{len(VERDICT_SEEDS)}")
        check_not_verdict_or_seen(self.seeds + self.heldout_seeds)

    @property
    def seeds(self) -> tuple[int, ...]:
        """The verdict seeds: 801, 803, ... (``n_seeds`` of them)."""
        return VERDICT_SEEDS[:self.n_seeds]

    @property
    def heldout_seeds(self) -> tuple[int, ...]:
        """The seeds of the held-out streams: each verdict seed + 1."""
        return tuple(s + 1 for s in self.seeds)

    @property
    def readings(self) -> tuple[str, ...]:
        """The optimizer readings the verdict is decided under, the headline's first."""
        return READINGS

    @property
    def expected_wall_s(self) -> float:
        """Expected wall time of one reading's run of the notebook on :data:`CORES` cores, seconds."""
        return expected_wall_s(self.n_seeds, self.per_seed_cpu_s, self.workers)


_FREEWAY_03 = 30_000
_03 = f"{_FREEWAY_03:,} Freeway frames for each of 9 (schedule, initial rate) pairs, the final loss averaged over the last 7,500"
#: per notebook, its study verdict's seeds, budget and cost (per reading); costs from :data:`PILOT_FILE` (CPU
#: seconds per seed at the study budget, per reading; ``per_seed_cpu_s`` the larger)
PLANS = {p.notebook: p for p in (
    DensityPlan("00", 20, "3,000 agent steps of Montezuma's Revenge; a frame repeated 60 times, every 20 steps",
                9.2, 1, pilot_cpu_s=(("tf1", 8.9), ("torch", 9.2))),
    DensityPlan("01", 18, "16,000 Freeway frames, 3 training orders, 128 held-out frames every 1,000 updates",
                103.2, 2, pilot_cpu_s=(("tf1", 102.1), ("torch", 103.2))),
    DensityPlan("02", 20, "6,000 Pong frames (the paper's 6K)", 11.9, 2, pilot_cpu_s=(("tf1", 11.9), ("torch", 11.7))),
    DensityPlan("03", 8, _03, 562.4, 2, LR_SCHEDULES_BUDGET_S, (("n_frames", _FREEWAY_03), ("average_last", _FREEWAY_03 // 4)),
                pilot_cpu_s=(("tf1", 527.0), ("torch", 562.4))),
    DensityPlan("04", 6, "25,000 training steps (the paper's) on 2 Montezuma streams, 4 models, 8 samples each",
                353.2, 2, pilot_cpu_s=(("tf1", 353.2), ("torch", 328.5))),
    DensityPlan("05", 20, "2,000 warm-up and 5,000 analysed steps (the paper's) on 2 Montezuma streams, 3 models",
                61.2, 2, pilot_cpu_s=(("tf1", 61.2), ("torch", 60.2))),
    DensityPlan("06", 8, "10,000 frames of Freeway and of Montezuma's Revenge, 4 models", 216.7, 2,
                pilot_cpu_s=(("tf1", 216.7), ("torch", 216.3))),
)}
#: 03's per-seed CPU seconds for the whole grid at each budget the pilot priced, per reading (10K: the earlier
#: study's; 100K: about 3 times the 45 minutes with 6 seeds)
PRICES_03 = {10_000: {"tf1": 175.7, "torch": 187.5}, 30_000: {"tf1": 527.0, "torch": 562.4},
             100_000: {"tf1": 1756.7, "torch": 1874.6}}

#: claims dropped to "not testable: too few seeds at this profile" for time: notebook -> claims
DROPPED_FOR_TIME: dict[str, tuple[str, ...]] = {}


def plan(notebook: str) -> DensityPlan:
    """The plan of density notebook ``notebook`` ("00".."06"); KeyError naming the choices."""
    try:
        return PLANS[notebook]
    except KeyError:
        raise KeyError(f"no density plan for notebook {notebook!r}: choose one of {', '.join(PLANS)}") from None


def preset_seeds(notebook: str) -> dict:
    """The study preset's seed fields of ``notebook``: its first verdict seed and ``n_seeds``."""
    p = plan(notebook)
    return {"seed": p.seeds[0], "n_seeds": p.n_seeds}


def preset_fields(notebook: str) -> dict:
    """The study (and paper) preset's declared fields of ``notebook``: its seeds (:func:`preset_seeds`) and
    the optimizer reading its headline verdict runs under, the paper's (:data:`PAPER_READING`)."""
    return {**preset_seeds(notebook), "rmsprop": PAPER_READING}


def study_fields(notebook: str) -> dict:
    """The study preset's fields of ``notebook`` besides the seeds and the reading that this plan sets
    (03: ``n_frames`` and ``average_last``; the others: none)."""
    return dict(plan(notebook).fields)
