"""The agent notebooks' PixelCNN claims (07, 12, 13) under the PixelCNN's two optimizer readings, declared before
any run on their seeds.

This file is the record of the re-run issue 44 asks for on the agent side: for each agent notebook whose claims use
a PixelCNN line, the readings, each such claim's test form, design and budget, and the new verdict seeds. The
density notebooks' record is :mod:`pcnn_explore.study.preregistered.density`; the claims themselves stay declared
where they are (:mod:`~pcnn_explore.study.preregistered.deep_sea` for 07,
:mod:`~pcnn_explore.study.preregistered.exploration_on_a_laptop` for 12, :mod:`~pcnn_explore.study.preregistered.reactor`
for 13); this file fixes how they are run again. Changing it is a visible commit, made before the runs.

Readings. ``tf1`` (the paper's: TensorFlow 1's RMSProp on the per-pixel mean cross-entropy) and ``torch`` (the
sensitivity reading), :data:`~pcnn_explore.study.preregistered.density.READINGS`. A PixelCNN line runs under the
reading its notebook's run names (07: the lines ``paper_pixelcnn`` and ``paper_pixelcnn_torch``, whose
``density_optimizer`` is fixed; 12 and 13: the settings' ``density_optimizer``). Each reading is its own run of
the notebook, in its own output folder, every line of a paired claim (DQN, the CTS lines, Reactor too) run on the
same seeds in it. The headline word is the paper reading's; the torch reading's is decided too and shown beside
it; where a claim's two words differ the top table says
:data:`~pcnn_explore.study.preregistered.density.DEPENDS_ON_READING`, with both readings' numbers.

Seeds. The agent notebooks' seeds step by 1, each seed s on its own DeepSea map (mapping seed s + 10,000,
:func:`pcnn_explore.study.preregistered.deep_sea.mapping_for`). 701-740 decided the verdicts before the readings
were named, 401-410 the first study's, 7, 8, 11 and 13 an outside check of the readings: all are seen now; the
tuning seeds stay tuning seeds. Every re-run takes :data:`VERDICT_SEEDS` (801 and up, never run before this file):
07 its first 40, 12 and 13 their first 20 (:data:`PLANS`). :func:`check_new_seeds` refuses anything else.

07 (Fig. 5). The power model of the deep-sea pilot (:mod:`pcnn_explore.study.power`) sizes 07's PixelCNN claims
under the paper's reading: it models the paper's PixelCNN line as DQN (it cannot count DeepSea's cells;
:data:`pcnn_explore.study.power.MODEL_AS`) and raises its solve chances by the claim's effect of interest (0.2 of
the sizes), so the seeds a claim needs, K, do not depend on the reading: K = 39 per line for
``pixelcnn_bonus_explores`` and for ``position_bias_helps`` on 07's design (DeepSea-10, 1,000 episodes;
:data:`pcnn_explore.study.preregistered.deep_sea_power.POWER`). What the reading moves is the price: the probe
``benchmarks/pixelcnn_line_readings_probe.py`` (``data/pilot/pixelcnn_readings_probe.json``) times the PixelCNN
lines under each reading and prices 07's design with them (:data:`PROBE`). A claim whose lines fit its reading's
run at its K seeds within 45 minutes is decided; one whose lines do not reads ``not testable: too few seeds at this
profile (needs K per line)`` under that reading. The probe timed the PixelCNN lines at about 1,300 agent steps per
second under either reading (the pilot's probe before the readings were named: 258 and 225, over 100 episodes),
so 07's paper-reading run with both PixelCNN lines added costs 27.2 minutes at 40 seeds (39 are needed), and the
torch run (the sensitivity lines and DQN) 7.6: both claims are decided under both readings, on 07's design
(DeepSea-10, 1,000 episodes, runs ending once solved) and 40 seeds per line, 801-840. Even at the pilot's older,
slower rate, ``paper_pixelcnn`` alone fitted (34.9 minutes at 40 seeds); both lines would not have (50.1). The
position-biased line under the torch reading is a line to name at the re-run (:data:`KIT_POS_TORCH`, as
``paper_pixelcnn_torch`` names the paper's). 07's other claims are decided again on the same runs. ``pixelcnn_beats_cts`` stays ``not testable on this task`` under
both readings (the paper's PixelCNN cannot count DeepSea's cells; the paper's evidence is Atari's frames).

12. The paper's ``pixelcnn_mmc N<n>`` and the kit's ``pixelcnn_pos_mmc N<n>``: the seeds whose run reaches
DeepSea-N's +1 late in training, the line against DQN, Fisher's exact test at one-sided 0.025, at each size where
DQN reaches it late in no seed; the kit's ``location`` reading from the count maps (the PixelCNNs trained under
the run's reading). The other claims of 12 (``cts_mmc N<n>``, the kit's readings) are decided again on the same
runs. Design unchanged: DeepSea-6, 10 and 14 at 1,500 episodes, each seed its own map, the room chain R6 at 15,000
steps, 20 seeds per line.

13. Only the kit's claims use PixelCNN lines (``position_bias_helps_reactor``: Reactor-PixelCNN (position bias)
against Reactor; ``kit_dqn_above_reactor_bonus``: DQN-PixelCNN (position bias) + MMC against Reactor-PixelCNN
(position bias)), AUC of the success curve, the sign-flip test paired by seed at one-sided 0.025. 13 runs again
in full on the new seeds under each reading (its paper claims use no PixelCNN line: their lines run the same under
both readings, and they are decided again on the new seeds). Design unchanged: DeepSea-10, 400 episodes, 20 seeds
per line.

Budgets. Each run of an agent notebook (one reading) may take 45 minutes on 2 cores, the agent notebooks' study
budget (:mod:`pcnn_explore.profiles`); 12's and 13's study runs took 34 min 23 s and 17 min 45 s on 701-720
(docs/study-report/README.md), and the PixelCNN's per-update cost is the same under both readings to within the
density pilot's spread (``data/pilot/density_readings_pilot.json``), so each reading's run is expected to take
about as long (:attr:`ReadingPlan.expected_minutes`).
"""
from __future__ import annotations

import dataclasses

from pcnn_explore.study.preregistered import deep_sea as pre
from pcnn_explore.study.preregistered.density import DEPENDS_ON_READING, PAPER_READING, READINGS, SENSITIVITY_READING
from pcnn_explore.study.preregistered.deep_sea_power import DESIGNS, POWER

__all__ = ["KIT_POS_TORCH", "VERDICT_SEEDS", "SEEN_SEEDS", "BUDGET_MINUTES", "PROBE", "ReadingPlan", "PLANS", "seeds_needed",
           "check_new_seeds", "DEPENDS_ON_READING", "READINGS", "PAPER_READING", "SENSITIVITY_READING"]

#: the agent re-runs' verdict seeds, 801-840, none run before this file (each notebook its first ``n_seeds``)
VERDICT_SEEDS = tuple(range(801, 841))
#: seeds seen before this file: the deep-sea verdicts' 701-740, the first study's 401-410, the outside check's
#: 7, 8, 11 and 13
SEEN_SEEDS = (7, 8, 11, 13, *pre.PILOT_SEEDS, *pre.VERDICT_SEED_POOL)
#: each agent notebook's run, per reading, on 2 cores (the study profile's budget)
BUDGET_MINUTES = 45.0
#: 07's price per reading from the probe (``data/pilot/pixelcnn_readings_probe.json``): wall minutes on 2 cores
#: of each candidate run, priced by :func:`pcnn_explore.study.power.design_minutes`
PROBE: dict[str, float] = {}


def check_new_seeds(seeds, who: str = "") -> tuple[int, ...]:
    """``seeds`` as ints when every one is a declared new verdict seed (:data:`VERDICT_SEEDS`); else a ValueError
    naming the seen or tuning ones (:data:`SEEN_SEEDS`, :data:`pcnn_explore.study.preregistered.deep_sea.TUNING_SEEDS`)."""
    seeds = tuple(int(s) for s in seeds)
    seen = sorted(set(seeds) & set(SEEN_SEEDS))
    tuning = sorted(set(seeds) & set(pre.TUNING_SEEDS))
    other = sorted(set(seeds) - set(VERDICT_SEEDS) - set(seen) - set(tuning))
    if seen or tuning or other:
        parts = [f"{what} {v}" for what, v in (("seen", seen), ("tuning", tuning), ("undeclared", other)) if v]
        raise ValueError(f"{who}verdict seeds must be the declared new seeds {VERDICT_SEEDS[0]}-{VERDICT_SEEDS[-1]}; "
                         f"got {'; '.join(parts)}")
    return seeds


def seeds_needed(claim: str) -> int:
    """K, the seeds per line the deep-sea power model asks of a 07 claim for a power of 0.8 (reading-independent:
    the paper's PixelCNN is modelled as DQN raised by the claim's effect of interest)."""
    return int(POWER[claim]["needs"])


@dataclasses.dataclass(frozen=True)
class ReadingPlan:
    """An agent notebook's re-run under the readings: notebook, its PixelCNN claims (name -> how each reads under
    the paper's reading: ``"decided"`` or its not-testable sentence), the lines of each reading's run, the seeds,
    sizes and episode caps, the budget and the expected minutes of each reading's run on 2 cores."""

    notebook: str
    claims: tuple[tuple[str, str], ...]
    lines: tuple[tuple[str, tuple[str, ...]], ...]
    n_seeds: int
    sizes: tuple[int, ...]
    episodes: tuple[int, ...]
    expected_minutes: tuple[tuple[str, float], ...]
    budget_minutes: float = BUDGET_MINUTES

    def __post_init__(self):
        check_new_seeds(self.seeds, f"notebook {self.notebook}: ")

    @property
    def seeds(self) -> tuple[int, ...]:
        return VERDICT_SEEDS[:self.n_seeds]

    @property
    def readings(self) -> tuple[str, ...]:
        return READINGS


PROBE.update({
    "07 lines (the design's, no PixelCNN), 40 seeds": 21.6,
    "tf1 run: 07 lines + paper_pixelcnn + kit_pixelcnn_pos, 40 seeds": 27.2,
    "torch run: paper_pixelcnn_torch + kit_pixelcnn_pos (torch) + dqn, 40 seeds": 7.6,
})

_DECIDED = "decided"
#: the kit's position-biased PixelCNN line under the torch reading: named at the re-run (as paper_pixelcnn_torch is)
KIT_POS_TORCH = "kit_pixelcnn_pos_torch"

#: per agent notebook, its re-run under the readings
PLANS: dict[str, ReadingPlan] = {p.notebook: p for p in (
    # 07: K = 39 per line (seeds_needed) for both PixelCNN claims; at 40 seeds both fit the paper reading's run
    # (27.2 minutes with every line of 07's design, PROBE), so both are decided; the torch run takes the
    # sensitivity lines and DQN, the line they are paired with (7.6 minutes)
    ReadingPlan("07", (("pixelcnn_bonus_explores", _DECIDED), ("position_bias_helps", _DECIDED),
                       ("pixelcnn_beats_cts", "not testable on this task: " + pre.PIXELCNN_BEATS_CTS_ON_DEEP_SEA)),
                (("tf1", (*DESIGNS["07"]["lines"], "paper_pixelcnn", "kit_pixelcnn_pos")),
                 ("torch", ("dqn", "paper_pixelcnn_torch", KIT_POS_TORCH))),
                40, DESIGNS["07"]["sizes"], DESIGNS["07"]["episodes"], (("tf1", 27.2), ("torch", 7.6))),
    # 12: every line of the notebook on 801-820 under each reading (34 min 23 s on 701-720)
    ReadingPlan("12", (("pixelcnn_mmc N<n>", _DECIDED), ("pixelcnn_pos_mmc N<n>", _DECIDED), ("location", "no verdict")),
                (("tf1", ("dqn", "dqn_mmc", "cts_mmc", "pixelcnn_mmc", "pixelcnn_pos_mmc", "cts_mmc_intrinsic")),
                 ("torch", ("dqn", "dqn_mmc", "cts_mmc", "pixelcnn_mmc", "pixelcnn_pos_mmc", "cts_mmc_intrinsic"))),
                20, (6, 10, 14), (1_500, 1_500, 1_500), (("tf1", 35.0), ("torch", 35.0))),
    # 13: every line on 801-820 under each reading (17 min 45 s on 701-720)
    ReadingPlan("13", (("position_bias_helps_reactor", _DECIDED), ("kit_dqn_above_reactor_bonus", _DECIDED)),
                (("tf1", ("reactor", "reactor_cts", "cts_mmc", "reactor_pixelcnn_pos", "pixelcnn_pos_mmc")),
                 ("torch", ("reactor", "reactor_cts", "cts_mmc", "reactor_pixelcnn_pos", "pixelcnn_pos_mmc"))),
                20, (10,), (400,), (("tf1", 18.0), ("torch", 18.0))),
)}
