"""Notebook 12's claims (exploration on a laptop): the paper's, that the pseudo-count bonus with MMC
makes DQN reach a sparse reward that epsilon-greedy DQN does not, and the kit's own questions.

- ``<line> N<n>`` (:func:`reach_claim`): the seeds of a line that reached DeepSea-N's +1 late in
  training against DQN's, by Fisher's exact test (per-seed flags, 1 reached, 0 not), one claim per
  line at each size where DQN reached it late in no seed (the sizes "where DQN does not"); the
  paper's DQN-CTS and DQN-PixelCNN are the paper's claims, the position-biased PixelCNN the kit's.
- ``strict_goal``, ``coverage``, ``location`` (:func:`kit_claims`): the kit's readings with no test
  (word ``no verdict``), each ``not testable`` with its reason where the profile does not run what
  it needs (:data:`NOT_RUN`).
- a paper line with no size where DQN missed the +1 in every seed (:func:`no_hard_size_claim`):
  ``not testable``, the sizes it needs not run.
"""
from __future__ import annotations

from typing import Sequence

from pcnn_explore.study.claim import Claim, Design
from pcnn_explore.verdicts import TOO_FEW_SEEDS

__all__ = ["NOTEBOOK", "PAPER", "WHERE", "PAPER_LINES", "KIT_LINES", "KIT_READINGS", "NOT_RUN", "reach_claim",
           "no_hard_size_claim", "kit_claims"]

NOTEBOOK = "12_exploration_on_a_laptop"
PAPER = ("the pseudo-count bonus (with MMC) makes DQN explore: it reaches a sparse reward that epsilon-greedy DQN "
         "does not (hard exploration games)")
WHERE = "Sec. 4.1, Fig. 5"
#: the paper's lines whose claim notebook 12 decides, and the kit's line decided the same way
PAPER_LINES = ("cts_mmc", "pixelcnn_mmc")
KIT_LINES = ("pixelcnn_pos_mmc",)
#: the kit's questions no test decides, by name: the claim in plain words
KIT_READINGS = {
    "strict_goal": "at N of 20 or more the bonus agents reach the goal late in every seed",
    "coverage": "on the egocentric task intrinsic-only agents visit twice DQN's distinct cells",
    "location": "CTS and the position-biased PixelCNN rank DeepSea cells by visits; PixelCNN does not",
}
#: why a kit reading is not testable where the profile does not run what it needs
NOT_RUN = {
    "strict_goal": "the sizes it needs are not run at this profile",
    "coverage": "the egocentric runs it needs are not run at this profile",
    "location": "the density models' maps it needs are not made at this profile",
}


def _design(seeds: Sequence[int], sizes: Sequence[int], budget: str) -> Design:
    return Design(tuple(int(s) for s in seeds), tuple(int(n) for n in sizes), budget)


def reach_claim(line: str, label: str, n: int, seeds: Sequence[int] = (), budget: str = "") -> Claim:
    """The claim that ``line`` (its paper name ``label``) reaches DeepSea-``n``'s +1 late in more seeds
    than DQN, Fisher's exact test; the paper's for :data:`PAPER_LINES`, the kit's otherwise."""
    kind = "paper" if line in PAPER_LINES else "kit"
    return Claim(NOTEBOOK, f"{line} N{n}", kind, f"the bonus makes DQN reach DeepSea-{n}'s +1 where DQN does not "
                 f"({label})", "fisher", quantity="solved", label="seeds solved",
                 measure=f"seeds reaching the +1 late at N = {n}, {label} - DQN", lines=(line, "dqn"),
                 labels=(label, "DQN"), paper=PAPER, where=WHERE, design=_design(seeds, (n,), budget))


def no_hard_size_claim(line: str, label: str, seeds: Sequence[int] = (), sizes: Sequence[int] = (),
                       budget: str = "") -> Claim:
    """``line``'s claim where no size run is one DQN misses in every seed: not testable."""
    kind = "paper" if line in PAPER_LINES else "kit"
    return Claim(NOTEBOOK, line, kind, f"the bonus makes DQN reach DeepSea's +1 where DQN does not ({label})",
                 "not_testable", quantity="solved", label="seeds solved", lines=(line, "dqn"), labels=(label, "DQN"),
                 paper=PAPER, where=WHERE, reason=TOO_FEW_SEEDS,
                 note="no size run where DQN reached the +1 late in no seed", design=_design(seeds, sizes, budget))


def kit_claims(run: Sequence[str], seeds: Sequence[int] = (), sizes: Sequence[int] = (), budget: str = "") -> tuple[Claim, ...]:
    """The kit's readings of :data:`KIT_READINGS`, in that order: a ``reading`` for each name in ``run``
    (the profile runs what it needs), else ``not testable`` with :data:`NOT_RUN`'s reason."""
    design = _design(seeds, sizes, budget)
    return tuple(Claim(NOTEBOOK, name, "kit", sentence, "reading", design=design) if name in run else
                 Claim(NOTEBOOK, name, "kit", sentence, "not_testable", reason=TOO_FEW_SEEDS, note=NOT_RUN[name],
                       design=design)
                 for name, sentence in KIT_READINGS.items())
