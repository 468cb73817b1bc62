"""The density notebooks' verdict seeds (00-06), declared before any run on them.

This file is the record: per density notebook the seeds its ``study`` (and ``paper``) verdict is
decided on, the per-seed budget, the per-seed cost measured on a tuning seed and the wall time that
gives on 2 CPU cores. Each experiment's settings read their study preset's seeds here
(:func:`preset_seeds`); changing them is a visible commit of this file, made before the runs it
is judged on.

Seeds. A run of seed s trains on the stream (and model weights) of seed s and draws its held-out
frames from the stream of seed s + 1, so a notebook's seeds step by 2
(:func:`pcnn_explore.experiments.density.density_training.seed_list`). :data:`TUNING_SEEDS` are the
seeds the density notebooks were built, piloted and tested on before this file (smoke 0 and 2, the
3-seed study 0, 2 and 4, their held-out streams 1, 3 and 5, the tests' 0-9, and seed 7 of an outside
check of 03): no verdict uses them. Every study verdict runs on :data:`VERDICT_SEEDS`' first
``n_seeds`` (701, 703, ...; held-out streams 702, 704, ...), never run before this file. The agent
notebooks' seeds 701 and up (their own plans) are DeepSea
runs, another task: the numbers coincide, the runs share nothing.

Tests. Every claim is decided by an exact test at one-sided 0.025 on at least
:data:`pcnn_explore.verdicts.MIN_SEEDS` (6) seeds (:func:`pcnn_explore.study.decide`; each notebook's claims
in its own module beside this one, e.g. :mod:`pcnn_explore.study.preregistered.pseudo_counts`):
the paired sign-flip test reaches p = 2^-n when every seed moves the same way, so 6 seeds decide
only when all 6 agree (p = 1/64 = 0.016; one seed the other way gives at least 2/64 = 0.031), 8 seeds
tolerate a small dissent (the smallest difference the other way: p = 2/256) and 10 seeds a few. So
the cheap notebooks (00, 02, 05) take 10 seeds, the dear ones as many as fit in 20 minutes on 2 cores
(:data:`BUDGET_S`) with some margin for a busy machine: 8 for 01, 03 and 06, 6 for 04 (8 would take
about 21 minutes).

Costs. ``per_seed_cpu_s`` is the CPU time of one seed's run at the study budget, one torch thread,
on the project's 2-core x86_64 machine (torch 2.13 CPU), measured with :func:`resource.getrusage` on
tuning seed 0 with a cold stream cache (stream generation included): 00, 02 and 05 at the full
budget, 01, 03 and 06 at a quarter of the frames and 04 at a fifth, scaled up linearly (which
overstates their fixed costs, the held-out streams and the samples). CPU time rather than wall,
as the machine ran other work at the same time. Seeds run 2 at once (``workers``: one process per
core, :func:`pcnn_explore.experiments.density.density_training.run_seeds`), except 00, whose seeds
take 13 s each and run one after another; :attr:`DensityPlan.expected_wall_s` is
ceil(n_seeds / workers) x per_seed_cpu_s, plus :data:`START_S` for the workers' start.

Per-seed budgets are the earlier study's, unchanged: each fits 6 or more seeds in the 20 minutes, so
no budget was shortened and none of the paper's numbers beside this run's moved.

Claims dropped to ``not testable: too few seeds at this profile`` for time: none (:data:`DROPPED_FOR_TIME`).
Every paper claim of 00-05 and the kit's density-level reading of 06 gets at least 6 verdict seeds
within its notebook's study budget. Not testable for other reasons, as before: 06's App. C claim
(agent scores; ``not testable on this task``), 11's one recorded episode (no seeds), any claim at the
``smoke`` profile (2 seeds, plumbing only).
"""
from __future__ import annotations

import dataclasses
import math

__all__ = ["FIRST_VERDICT_SEED", "VERDICT_SEEDS", "TUNING_SEEDS", "CORES", "BUDGET_S", "START_S", "DensityPlan",
           "PLANS", "DROPPED_FOR_TIME", "plan", "preset_seeds", "preset_fields", "PAPER_READING",
           "SENSITIVITY_READING", "READINGS", "SEEN_SEEDS", "check_not_verdict_or_seen"]

#: the first verdict seed of every density notebook; a notebook's seeds are 701, 703, ... (step 2)
FIRST_VERDICT_SEED = 701
#: the seeds every density verdict may take, in order (each notebook the first ``n_seeds``), with their
#: held-out streams' seeds s + 1: 701-740, none used before this file
VERDICT_SEEDS = tuple(range(FIRST_VERDICT_SEED, FIRST_VERDICT_SEED + 40, 2))
#: seeds the density notebooks were built, piloted and tested on before this file (and their
#: held-out streams): never a verdict's
TUNING_SEEDS = tuple(range(0, 10))
#: seeds whose runs were seen: an outside check of 03 and 05 under the optimizer readings (7, 8, 11, 13), the
#: agents' seen seeds 401-410, and the density notebooks' verdict seeds 701-740 with their held-out streams, decided
#: before the readings were named
SEEN_SEEDS = (7, 8, 11, 13, *range(401, 411), *range(701, 741))
#: the PixelCNN's optimizer readings every density verdict runs under: the paper's (the headline word) and the
#: sensitivity reading, decided too and shown beside it (:data:`pcnn_explore.names.DENSITY_OPTIMIZERS`)
PAPER_READING, SENSITIVITY_READING = "tf1", "torch"
READINGS = (PAPER_READING, SENSITIVITY_READING)
#: the study profile's machine: 2 CPU cores
CORES = 2
#: the design's budget of a density notebook at the study profile: about 20 minutes on 2 cores
BUDGET_S = 20 * 60
#: seconds allowed for the seed workers' start (a fresh interpreter each, importing torch and the
#: experiment: measured 2.5 s of CPU, 5 s of wall on the loaded machine)
START_S = 10.0


@dataclasses.dataclass(frozen=True)
class DensityPlan:
    """One density notebook's study verdict: notebook ("00".."06"), n_seeds (verdict seeds, the
    first of :data:`VERDICT_SEEDS`), budget (per seed, the study preset's frames/updates),
    per_seed_cpu_s (measured, see the module docstring), workers (seeds at once on :data:`CORES`)."""

    notebook: str
    n_seeds: int
    budget: str
    per_seed_cpu_s: float
    workers: int

    @property
    def seeds(self) -> tuple[int, ...]:
        """The verdict seeds: 701, 703, ... (``n_seeds`` of them)."""
        return VERDICT_SEEDS[:self.n_seeds]

    @property
    def heldout_seeds(self) -> tuple[int, ...]:
        """The seeds of the held-out streams: each verdict seed + 1."""
        return tuple(s + 1 for s in self.seeds)

    @property
    def expected_wall_s(self) -> float:
        """Expected wall time of the notebook's runs on :data:`CORES` cores, seconds."""
        return math.ceil(self.n_seeds / self.workers) * self.per_seed_cpu_s + (START_S if self.workers > 1 else 0.0)


#: per notebook, its study verdict's seeds, budget and cost
PLANS = {p.notebook: p for p in (
    DensityPlan("00", 10, "3,000 agent steps of Montezuma's Revenge; a frame repeated 60 times, every 20 steps",
                12.9, 1),
    DensityPlan("01", 8, "16,000 Freeway frames, 3 training orders, 128 held-out frames every 1,000 updates",
                185.0, 2),
    DensityPlan("02", 10, "6,000 Pong frames (the paper's 6K)", 16.4, 2),
    DensityPlan("03", 8, "10,000 Freeway frames for each of 9 (schedule, initial rate) pairs", 237.9, 2),
    DensityPlan("04", 6, "25,000 training steps (the paper's) on 2 Montezuma streams, 4 models, 8 samples each",
                313.6, 2),
    DensityPlan("05", 10, "2,000 warm-up and 5,000 analysed steps (the paper's) on 2 Montezuma streams, 3 models",
                89.3, 2),
    DensityPlan("06", 8, "10,000 frames of Freeway and of Montezuma's Revenge, 4 models", 224.0, 2),
)}

#: claims dropped to "not testable: too few seeds at this profile" for time: notebook -> claims
DROPPED_FOR_TIME: dict[str, tuple[str, ...]] = {}


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
