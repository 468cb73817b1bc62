"""Notebook 14's claims: the kit's own question, no paper claim. Over bsuite's whole deep-sea protocol
(21 sizes, N = 10 ... 50, 10K episodes each, seeds 701-706), the kit's line scores higher than each
other line of the protocol: DQN, the paper's DQN-CTS and its horizon reading of the bonus scale
(:data:`AGAINST`, in that order; :func:`claims`).

Each is the sign-flip test paired by seed of bsuite's deep-sea score (the share of the 21 sizes solved,
bsuite's rule), the kit's line minus the other: the kit's per-seed score with a size not yet run counted
as not solved, against the other's with it counted as solved
(:func:`pcnn_explore.experiments.agents.deep_sea_summary.protocol_score`), so that a claim decided
while sizes are missing holds whatever they give; once every run is in, both are the scores.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from pcnn_explore.study.claim import Claim, Design

__all__ = ["NOTEBOOK", "KIT", "AGAINST", "WHERE", "BUDGET", "claims"]

NOTEBOOK = "14_deep_sea_scaling"
#: the kit's line, and the lines it is compared with, in the claims' order
KIT = "kit"
AGAINST = ("dqn", "paper_cts", "paper_cts_horizon")
WHERE = "bsuite's deep_sea (Osband et al. 2020), not the paper's"
BUDGET = "10,000 episodes per size, stopped when bsuite's rule holds"


def claims(labels: Mapping[str, str], seeds: Sequence[int], sizes: Sequence[int]) -> tuple[Claim, ...]:
    """The kit's line (``labels[KIT]``) against each line of :data:`AGAINST` (named by ``labels``), on
    ``seeds`` and ``sizes``."""
    design = Design(tuple(int(s) for s in seeds), tuple(int(n) for n in sizes), BUDGET)
    kit = labels.get(KIT, KIT)
    return tuple(Claim(NOTEBOOK, f"kit against {key}", "kit",
                       f"the kit's line scores higher than {labels.get(key, key)} over bsuite's whole deep-sea protocol",
                       "sign_flip", quantity="deep_sea_score", label="score difference",
                       measure=f"bsuite's deep-sea score, the kit's line - {labels.get(key, key)}", lines=(KIT, key),
                       labels=(kit, labels.get(key, key)), where=WHERE, design=design)
                 for key in AGAINST)
