"""Notebook 13's lines (:data:`LINES`): Reactor, Reactor with the paper's CTS bonus form, the paper's
DQN-CTS + MMC and the kit's position-biased PixelCNN lines, each a
:class:`~pcnn_explore.experiments.agents.deep_sea_study.StudyVariant` whose overrides state every
setting of its method, with a ``kind`` ("baseline", "paper" or "kit"); their labels
(:func:`line_labels`)."""
from __future__ import annotations

import dataclasses

from pcnn_explore.run.lines import StudyVariant, study_variant
from pcnn_explore.run.lines import PAPER_METHOD, line as named_line, paper_bonus
from pcnn_explore.run.variants import variant_agent

__all__ = ["LINES", "line_labels"]


def _reactor_line(model: str, key: str, label: str, kind: str) -> StudyVariant:
    """Reactor with ``model``'s paper bonus form, every setting stated: the state acted in scored, the
    bonus on a random 25% of steps, no MMC (Retrace), no novelty-scaled exploration."""
    fields = {**paper_bonus(model), "scored_frame": "state", "bonus_fraction": 0.25, "mmc_beta": 0.0,
              "novelty_epsilon": 0.0, "intrinsic_only": False}
    return study_variant(f"reactor_{model}", key, label, kind=kind, **fields)


#: the lines of notebook 13 by key (the key is the variant's name), each with its kind and every setting
LINES: dict[str, StudyVariant] = {v.key: v for v in (
    study_variant("reactor", "reactor", "Reactor", kind="baseline", mmc_beta=0.0, novelty_epsilon=0.0),
    _reactor_line("cts", "reactor_cts", "Reactor-CTS", "paper"),
    dataclasses.replace(named_line("paper_cts"), key="cts_mmc", label="DQN-CTS + MMC"),
    _reactor_line("pixelcnn_pos", "reactor_pixelcnn_pos", "Reactor-PixelCNN, position bias (kit)", "kit"),
    dataclasses.replace(named_line("kit_pixelcnn_pos"), key="pixelcnn_pos_mmc",
                        label="DQN-PixelCNN, position bias + MMC (kit)"),
)}
assert dict(LINES["cts_mmc"].overrides)["mmc_beta"] == PAPER_METHOD["mmc_beta"]


def line_labels(variants) -> dict[str, str]:
    """Each line's label (kit lines say so)."""
    return {v: LINES[v].display for v in variants}


def _exploration(v: str) -> str:
    return "samples from its policy" if variant_agent(v) == "reactor" else (
        "novelty-scaled epsilon" if dict(LINES[v].overrides).get("novelty_epsilon") else "epsilon-greedy")
