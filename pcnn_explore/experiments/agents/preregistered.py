"""The agent notebooks' claims, fixed before the runs that decide them.

This file is the record: per deep-sea notebook (07-10) the paper's sentence, the lines each claim
compares (:mod:`pcnn_explore.experiments.agents.lines`), the quantity, the test, the margin, the part
of bsuite's protocol (sizes, episodes) and the seeds, with the argument why that many seeds can show
the effects expected. The notebooks read it (:mod:`pcnn_explore.experiments.agents.deep_sea_figures`);
changing a claim is a visible commit of this file, made before the runs it is judged on.

Seeds. :data:`TUNING_SEEDS` and :data:`TUNING_MAPPINGS` are the seeds and action mappings the kit's
DeepSea settings and its additions were chosen or looked at on (``benchmarks/deep_sea_settings.py``,
the 0.1 studies, the tests); no verdict uses them. Verdicts are decided on :data:`VERDICT_SEEDS`
(401-410, never used before this file) on bsuite's mapping seed 42 drawn by bsuite's rule (the kit's
earlier studies used the kit's own draw of 42, another map).

Tests (:mod:`pcnn_explore.verdicts`; the exact one-sided p decides at (1 - level) / 2 in each
direction, 0.025 at level 0.95, and the interval shown comes from the same test):

- ``fisher``: per seed, whether the size was solved by bsuite's rule within the episodes run
  (binary); the two lines' counts by Fisher's exact test, each line's Clopper-Pearson interval;
- ``sign_flip``: a per-seed rate, paired by seed (same seed, same mapping), by the exact sign-flip
  permutation test;
- ``equivalence``: "no effect" within +-margin, two one-sided sign-flip tests (TOST), paired by seed;
- ``share``: k of n seeds against a stated chance, the exact Clopper-Pearson interval;
- ``not_testable``: a sentence of the paper the task cannot test, said as such, with the why in its
  ``note`` (``not testable on this task: ...``); where it names lines and a quantity their per-seed
  values are still recorded, for the reader, and decide nothing. 07's "DQN-PixelCNN beats DQN-CTS" was
  a Fisher claim until 0.3 made it one of these (:data:`PIXELCNN_BEATS_CTS_ON_DEEP_SEA`): the paper's
  PixelCNN cannot count DeepSea's cells, so the task cannot test the claim whatever the seeds show.

Why 10 seeds. The outcomes on a size where DQN fails are near all-or-nothing per seed (DQN sees
the +1 of DeepSea-14 with chance about 143 x 2^-14 = 0.009 in the 143 episodes (2,000 agent steps)
its epsilon takes to fall to 0.01, and almost never after; a probe of the paper's form of the CTS bonus on DeepSea-14, 4 tuning seeds,
solved 3 of 4). With 10 seeds per line Fisher's exact test agrees at 0.025 for 6 of 10 against 0 of
10 (p = 0.0054) and 7 of 10 against 1 of 10 (p = 0.0099), not for 6 against 1 (p = 0.029): it can
show the large effect the paper reports (a bonus agent far ahead of DQN), not a small one. The
paired sign-flip test reaches p = 2^-10 = 0.001 when every seed moves the same way and needs at
least 6 seeds to reach 0.025 at all. The equivalence margin 0.1 of success rate is bsuite's own
scale (a size is solved once more than a tenth of the episodes find the +1); Fig. 12's "fairly
robust" gets 0.2, a fifth of the range.
"""
from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["TUNING_SEEDS", "TUNING_MAPPINGS", "VERDICT_SEEDS", "VERDICT_MAPPING", "LEVEL", "Claim", "Plan", "PLANS",
           "QUANTITIES", "TESTS", "plan", "NOTEBOOK_FIGURES", "PIXELCNN_CANNOT_COUNT", "PIXELCNN_BEATS_CTS_ON_DEEP_SEA",
           "RUN_WITH_CTS"]

#: seeds the kit's DeepSea settings and additions were chosen or looked at on: never a verdict's
TUNING_SEEDS = (0, 1, 2, 3, 4, 101, 102, 103, 301, 302, 303, 304, 305)
#: (mapping seed, mapping rule) pairs the kit was tuned on: never a verdict's
TUNING_MAPPINGS = ((42, "kit_v1"), (5, "kit_v1"), (7, "kit_v1"), (17, "kit_v1"), (1001, "kit_v1"), (1002, "kit_v1"),
                   (1003, "kit_v1"), (1004, "kit_v1"))
#: the verdicts' seeds (the study profile's): used for nothing else
VERDICT_SEEDS = tuple(range(401, 411))
#: the verdicts' action mapping: bsuite's deep-sea sweep's seed, drawn by bsuite's rule
VERDICT_MAPPING = (42, "bsuite")
#: the level of every interval; each one-sided test decides at (1 - LEVEL) / 2
LEVEL = 0.95

QUANTITIES = {
    "solved": "solved by bsuite's rule within the episodes run (per seed, 0 or 1)",
    "success_rate": "share of the last quarter of the episodes that found the +1 (per seed)",
    "coverage": "mean share of the N(N+1)/2 cells visited, over the run's coverage curve (per seed)",
    "first_success_episode": "episode of the first +1, cap + 1 if never (per seed)",
    "found": "found the +1 at least once within the episodes run (per seed, 0 or 1)",
}
TESTS = ("fisher", "sign_flip", "equivalence", "share", "not_testable")


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim: ``lines`` (a, b) compared as a - b in ``direction`` ("greater", "less"; "equal" for
    an equivalence within ``margin``); ``kind`` "paper" (decided on the paper's lines and baselines
    only, under one exploration rule) or "kit"; ``sentence``: the paper's words (paper) or the kit's
    question (kit)."""

    name: str
    kind: str
    sentence: str
    lines: tuple[str, ...]
    quantity: str
    test: str
    direction: str = "greater"
    margin: float | None = None
    chance: str = ""  # share tests: what the threshold is
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("paper", "kit"):
            raise ValueError(f"{self.name}: kind must be paper or kit, got {self.kind!r}")
        if self.test not in TESTS:
            raise ValueError(f"{self.name}: test must be one of {TESTS}, got {self.test!r}")
        if self.test != "not_testable" and self.quantity not in QUANTITIES:
            raise ValueError(f"{self.name}: quantity must be one of {tuple(QUANTITIES)}, got {self.quantity!r}")
        if (self.test == "equivalence") != (self.margin is not None):
            raise ValueError(f"{self.name}: an equivalence test needs a margin, and only it")


@dataclasses.dataclass(frozen=True)
class Plan:
    """A notebook's fixed plan: its figure, the paper's sentence, its lines (keys of
    :data:`pcnn_explore.experiments.agents.lines.LINES`), the study profile's sizes, episodes and
    seeds, and its claims."""

    notebook: str
    figure: str
    paper: str
    lines: tuple[str, ...]
    sizes: tuple[int, ...]
    episodes: int
    seeds: tuple[int, ...]
    claims: tuple[Claim, ...]
    scope: str = ""

    def claim(self, name: str) -> Claim:
        for c in self.claims:
            if c.name == name:
                return c
        raise KeyError(f"{self.notebook} has no claim {name!r}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: why the paper's PixelCNN cannot be the bonus model of a DeepSea claim (notebook 12 measures it)
PIXELCNN_CANNOT_COUNT = ("the paper's PixelCNN is translation-invariant and reads the same context around the agent's "
                         "one pixel in every DeepSea cell, so it cannot count DeepSea's cells (notebook 12 measures this)")
#: why 07's "DQN-PixelCNN beats DQN-CTS" is not testable on DeepSea
PIXELCNN_BEATS_CTS_ON_DEEP_SEA = (PIXELCNN_CANNOT_COUNT + "; the paper's evidence is the structure of Atari frames "
                                  "(Fig. 5's games), which DeepSea's one-pixel frames do not have")
#: the note of a claim the paper made with PixelCNN and the kit runs with CTS (09; 13's in reactor_claims)
RUN_WITH_CTS = ("run with CTS where the paper ran PixelCNN: " + PIXELCNN_CANNOT_COUNT
                + "; CTS, the paper's other density model, can")

_FIG5 = "On the hard, sparse-reward games both bonus agents beat DQN by far, and DQN-PixelCNN beats DQN-CTS on most of them"
_KIT_Q = "does the kit's addition ({what}) solve DeepSea-14 more often than the paper's CTS line?"


def _kit_claim(key: str, what: str) -> Claim:
    return Claim(f"{key}_helps", "kit", _KIT_Q.format(what=what), (key, "paper_cts"), "solved", "fisher")


PLANS: dict[str, Plan] = {p.notebook: p for p in (
    Plan("07", "Fig. 5", _FIG5 + " (Fig. 5 and the appendix table, 150M frames, 3 seeds).",
         ("dqn", "paper_cts", "paper_pixelcnn", "paper_cts_scale", "kit_pixelcnn_pos", "kit_constant_c",
          "kit_next_state", "kit_mmc", "kit_novelty", "novelty_only", "kit"),
         (14,), 3_000, VERDICT_SEEDS, (
             Claim("cts_bonus_explores", "paper", "the CTS bonus makes DQN explore: DQN-CTS solves the hard task where "
                   "DQN does not", ("paper_cts", "dqn"), "solved", "fisher"),
             Claim("pixelcnn_bonus_explores", "paper", "the PixelCNN bonus makes DQN explore: DQN-PixelCNN solves the "
                   "hard task where DQN does not", ("paper_pixelcnn", "dqn"), "solved", "fisher",
                   note="the paper's PixelCNN reads the same context around the agent's one pixel in every DeepSea "
                        "cell, so it can hardly count cells (notebook 12): its line is shown with whatever verdict "
                        "it gets"),
             Claim("pixelcnn_beats_cts", "paper", "DQN-PixelCNN beats DQN-CTS", ("paper_pixelcnn", "paper_cts"),
                   "solved", "not_testable", note=PIXELCNN_BEATS_CTS_ON_DEEP_SEA),
             Claim("cts_scale_sensitivity", "kit", "does the CTS verdict hold with the bonus scale 10 times the "
                   "declared 0.05?", ("paper_cts_scale", "dqn"), "solved", "fisher"),
             Claim("position_bias_helps", "kit", "does the kit's position-biased PixelCNN solve DeepSea-14 more often "
                   "than the paper's PixelCNN?", ("kit_pixelcnn_pos", "paper_pixelcnn"), "solved", "fisher"),
             _kit_claim("kit_constant_c", "c = 0.1 held constant, bonus scale 1"),
             _kit_claim("kit_next_state", "the next state scored"),
             _kit_claim("kit_mmc", "MMC mix 0.5"),
             _kit_claim("kit_novelty", "novelty-scaled epsilon on next-state scoring"),
             _kit_claim("novelty_only", "the pseudo-count drives epsilon, no bonus in the reward"),
             _kit_claim("kit", "all of them"),
         ), scope="DeepSea-14, 3,000 episodes (42,000 agent steps) per run"),
    Plan("08", "Fig. 11", "Only the combination of the PixelCNN bonus and MMC makes progress on the hardest games "
         "(Fig. 11, bottom right: Montezuma's Revenge, Private Eye).",
         ("dqn", "dqn_mmc", "paper_cts_no_mmc", "paper_cts"), (14,), 3_000, VERDICT_SEEDS, (
             Claim("combination_progresses", "paper", "the bonus with MMC makes progress where DQN does not",
                   ("paper_cts", "dqn"), "success_rate", "sign_flip"),
             Claim("mmc_alone_no_progress", "paper", "MMC alone makes no progress over DQN",
                   ("dqn_mmc", "dqn"), "success_rate", "equivalence", "equal", 0.1),
             Claim("bonus_alone_no_progress", "paper", "the bonus without MMC makes no progress over DQN",
                   ("paper_cts_no_mmc", "dqn"), "success_rate", "equivalence", "equal", 0.1),
         ), scope="DeepSea-14, 3,000 episodes per run; the bonus model is CTS (the paper's PixelCNN cannot count "
                  "DeepSea's cells)"),
    Plan("09", "Fig. 12", "The PG scale c in c n^-1/2 PG (c = 0.1, 1, 10) leaves results fairly robust; a larger c "
         "explores harder and peaks sooner (Fig. 12).",
         ("c0.1", "c1", "c10", "kit_constant_c"), (14,), 3_000, VERDICT_SEEDS, (
             Claim("robust_c1", "paper", "c = 1 does as well as c = 0.1 (fairly robust)", ("c1", "c0.1"),
                   "success_rate", "equivalence", "equal", 0.2, note=RUN_WITH_CTS),
             Claim("robust_c10", "paper", "c = 10 does as well as c = 0.1 (fairly robust)", ("c10", "c0.1"),
                   "success_rate", "equivalence", "equal", 0.2, note=RUN_WITH_CTS),
             Claim("larger_c_sooner", "paper", "a larger c finds the reward sooner", ("c10", "c0.1"),
                   "first_success_episode", "sign_flip", "less", note=RUN_WITH_CTS),
             Claim("constant_c_helps", "kit", "does c = 0.1 held constant (the kit's form) solve more often than "
                   "c = 0.1 n^-1/2?", ("kit_constant_c", "c0.1"), "success_rate", "sign_flip"),
         ), scope="DeepSea-14, 3,000 episodes per run; " + RUN_WITH_CTS + "; the PG of CTS scaled by c n^-1/2 "
                  "with bonus scale 1, the form of Fig. 12"),
    Plan("10", "Fig. 13", "An agent trained on the intrinsic reward alone explores, and on some games scores "
         "(Fig. 13).",
         ("paper_cts_intrinsic", "dqn"), (14,), 3_000, VERDICT_SEEDS, (
             Claim("intrinsic_explores", "paper", "the intrinsic reward alone explores more than DQN",
                   ("paper_cts_intrinsic", "dqn"), "coverage", "sign_flip"),
             Claim("intrinsic_finds_reward", "paper", "the intrinsic-only agent finds the reward more often than "
                   "dithering would", ("paper_cts_intrinsic",), "found", "share",
                   chance="the random policy's chance of the +1 within the same episodes, 1 - (1 - 2^-N)^E"),
             Claim("intrinsic_scores", "paper", "the intrinsic-only agent scores", ("paper_cts_intrinsic",), "",
                   "not_testable", note="DeepSea tests exploring, not scoring: both actions of the last row end on "
                                        "the same empty frame, so the bonus cannot reward taking the +1"),
         ), scope="DeepSea-14, 3,000 episodes per run"),
)}

#: notebook -> the key :mod:`pcnn_explore.experiments.agents.deep_sea_figures` uses
NOTEBOOK_FIGURES = {"07": "fig5", "08": "fig11", "09": "fig12", "10": "fig13"}


def plan(figure: str) -> Plan:
    """The plan of ``figure`` ("fig5", "fig11", "fig12", "fig13") or of its notebook ("07" ...)."""
    by_figure = {f: PLANS[n] for n, f in NOTEBOOK_FIGURES.items()}
    if figure in PLANS:
        return PLANS[figure]
    if figure not in by_figure:
        raise ValueError(f"no plan for {figure!r}: choose one of {', '.join(by_figure)} or {', '.join(PLANS)}")
    return by_figure[figure]
