"""Notebook 13's claims (:data:`CLAIMS`, each a :class:`ReactorClaim` of kind "paper" or "kit"), what
the paper says (:data:`PAPER`), and how they are decided: each claim's verdict (:func:`decide`), the
paper verdict (:func:`overall`) and the kit verdict beside it (:func:`kit_overall`)."""
from __future__ import annotations

import dataclasses
import math
from typing import Any

from pcnn_explore.experiments.agents.preregistered import LEVEL, RUN_WITH_CTS
from pcnn_explore.run.variants import MMC_BETA
from pcnn_explore.verdicts import (
    NOT_TESTABLE,
    TOO_FEW_SEEDS,
    Verdict,
    combine_verdicts,
    not_testable,
    notebook_verdict,
    paired_verdict,
    progress_verdict,
)
from pcnn_explore.experiments.agents.reactor_lines import LINES

__all__ = ["PAPER", "ReactorClaim", "CLAIMS", "NOT_TESTABLE", "measure_text", "decide", "overall", "kit_overall"]

#: the paper verdict of a smoke run, which checks the plumbing only
SMOKE = not_testable(TOO_FEW_SEEDS, "smoke runs check the plumbing only")

PAPER = {
    "fig7_fig8": "Reactor-PixelCNN improves on Reactor on a large fraction of the 57 games, in area under the "
                 "curve (Fig. 8); Reactor beats DQN in about 50 of 57 games (Fig. 7, 16)",
    "sec4_2": "on hard, sparse-reward games Reactor seems unable to make full use of the bonus; the authors' "
              "hypothesis: Retrace's truncated importance ratios cut the propagation of reward over long horizons, "
              "which MMC keeps (no numbers given)",
    "mmc_beta": MMC_BETA,
    "bonus_fraction": "the bonus (and the density model's update) on a random 25% of Reactor's steps",
    # the claim the report shows beside the verdict
    "verdict": "the bonus helps Reactor (Fig. 7, 8), yet on hard, sparse-reward games DQN with the bonus and MMC "
               "makes more of it (Sec. 4.2); decided with the paper's CTS bonus form on both sides, run with CTS where "
               "the paper ran PixelCNN (its PixelCNN cannot count DeepSea's cells)",
}


@dataclasses.dataclass(frozen=True)
class ReactorClaim:
    """One claim: ``lines`` (a, b) compared as a - b > 0 in ``quantity`` (per seed) by ``test``; ``kind``
    "paper" (the paper's lines and baselines only) or "kit"; ``paper``: what the paper says; ``note``:
    what the claim's record says of how it is run (the paper's claims: with CTS where the paper ran
    PixelCNN, and why)."""

    name: str
    kind: str
    sentence: str
    lines: tuple[str, ...]
    quantity: str
    test: str
    paper: str
    note: str = ""


CLAIMS: tuple[ReactorClaim, ...] = (
    ReactorClaim("bonus_helps_reactor", "paper", "the bonus helps Reactor: Reactor-CTS above Reactor in AUC (Fig. 7, 8)",
                 ("reactor_cts", "reactor"), "auc", "sign_flip", "improves on many of 57 games (Fig. 8)", RUN_WITH_CTS),
    ReactorClaim("dqn_mmc_above_reactor_bonus", "paper", "Reactor cannot make full use of the bonus: DQN-CTS + MMC "
                 "above Reactor-CTS in AUC (Sec. 4.2)", ("cts_mmc", "reactor_cts"), "auc", "sign_flip",
                 "Reactor cannot make full use of the bonus on sparse games (Sec. 4.2)", RUN_WITH_CTS),
    ReactorClaim("traces_cut", "kit", "Retrace's trace product from x_0 to a large reward on Reactor-CTS lies below "
                 "the MMC mix of DQN-CTS (the kit's measure of Sec. 4.2's hypothesis)", ("reactor_cts", "cts_mmc"),
                 "from_start_product", "sign_flip", "hypothesis: truncated traces cut long-horizon reward (no numbers)"),
    ReactorClaim("position_bias_helps_reactor", "kit", "does the kit's position-biased PixelCNN bonus lift Reactor's "
                 "AUC?", ("reactor_pixelcnn_pos", "reactor"), "auc", "sign_flip", "the paper's PixelCNN, not this one"),
    ReactorClaim("kit_dqn_above_reactor_bonus", "kit", "with the kit's position-biased PixelCNN, does DQN + MMC reach "
                 "a higher AUC than Reactor with the same bonus?", ("pixelcnn_pos_mmc", "reactor_pixelcnn_pos"), "auc",
                 "sign_flip", "the paper's PixelCNN, not this one"),
)
for _c in CLAIMS:  # a paper claim compares the paper's lines and baselines only
    assert _c.kind == "kit" or all(LINES[k].kind != "kit" for k in _c.lines), _c.name


# ------------------------------------------------------------------------------- verdicts
def _fields(v: Verdict) -> dict[str, Any]:
    return {"word": v.word, "reason": v.reason, "estimate": v.estimate, "interval": list(v.interval), "p_value": v.p_value, "n": v.n,
            "test": v.test, "values": list(v.values), "values_b": list(v.values_b), "method": v.method,
            "sentence": v.sentence}


def _by_seed(values, seeds) -> dict[int, float]:
    return {int(s): float(x) for s, x in zip(seeds, values)}


def measure_text(quantity: str, labels, beta: float | None = None) -> str:
    """The words of what a claim measures, as its sentence writes them: ``AUC Reactor-CTS - Reactor``;
    for the trace product, ``MMC mix 0.1 - prod c from x_0 (Reactor-CTS)``."""
    if quantity == "from_start_product":  # (a record re-rendered before 0.3 lost its mix: no number then)
        return f"MMC mix{'' if beta is None else f' {beta:g}'} - prod c from x_0 ({labels[0]})"
    return f"{quantity.upper()} {labels[0]} - {labels[1]}"


def decide(study: dict[str, Any], seeds, variants, level: float = LEVEL) -> dict[str, dict[str, Any]]:
    """Each claim of :data:`CLAIMS` whose lines were all run, as ``{"kind", "claim", "lines", "labels",
    "quantity", "test", "word", "p_value", "n", "estimate", "interval", "values", "values_b",
    "sentence", ...}``. Paired claims: :func:`~pcnn_explore.verdicts.paired_verdict` of a's and b's
    per-seed values keyed by seed id. ``traces_cut``: the exact sign flip of the MMC mix - product over the
    seeds whose Reactor-CTS runs replayed a large reward from an episode's first step
    (``not testable: too few seeds at this profile`` with fewer than 6 such seeds)."""
    per, seeds, out = study["per_seed"], list(seeds), {}
    for c in CLAIMS:
        if not all(k in variants for k in c.lines):
            continue
        labels = [LINES[k].display for k in c.lines]
        head = {"kind": c.kind, "claim": c.sentence, "lines": list(c.lines), "labels": labels,
                "quantity": c.quantity, "test": c.test, **({"note": c.note} if c.note else {})}
        if c.quantity == "from_start_product":
            beta = float(study["dqn_mmc_beta"])
            got = {s: p for s, p in _by_seed(study["traces"][c.lines[0]]["from_start_product"], seeds).items() if p == p}
            extra = {"mmc_beta": beta, "seeds_with_replays": len(got), "products": list(got.values()),
                     "product_seeds": list(got)}
            if len(got) < 2:
                out[c.name] = {**head, "word": NOT_TESTABLE, "reason": TOO_FEW_SEEDS, "p_value": math.nan,
                               "n": len(got), "sentence": not_testable(
                                   TOO_FEW_SEEDS, f"{len(got)} seed(s) replayed a large reward from an episode's "
                                                  "first step; the test needs 6 or more"), **extra}
            else:
                v = progress_verdict([beta - p for p in got.values()], 0.0, level,
                                     claim=measure_text(c.quantity, labels, beta))
                out[c.name] = {**head, **_fields(v), **extra}
            continue
        a, b = (_by_seed(per[k][c.quantity], seeds) for k in c.lines)
        v = paired_verdict(a, b, "greater", level, claim=measure_text(c.quantity, labels))
        out[c.name] = {**head, **_fields(v)}
    return out


def _words(claims: dict[str, dict[str, Any]], kind: str) -> list[str]:
    for name, c in claims.items():
        if c.get("kind") not in ("paper", "kit"):
            raise ValueError(f"claim {name!r}: kind must be paper or kit, got {c.get('kind')!r}")
    return [c["word"] for c in claims.values() if c["kind"] == kind]


def overall(profile: str, claims: dict[str, dict[str, Any]]) -> str:
    """The paper verdict: the paper claims' words combined by
    :func:`pcnn_explore.verdicts.notebook_verdict` (the one rule; ``not testable`` with its reason); kit
    claims never enter it; smoke or no paper claim: not testable (too few seeds at this profile)."""
    words = _words(claims, "paper")
    if profile == "smoke" or not words:
        return SMOKE if profile == "smoke" else not_testable(TOO_FEW_SEEDS, "no paper claim's lines were run")
    return notebook_verdict([c.get("sentence") or c["word"] for c in claims.values() if c["kind"] == "paper"])


def kit_overall(profile: str, claims: dict[str, dict[str, Any]]) -> str | None:
    """The kit verdict, beside the paper's: the kit claims' words combined by the same rule (None: no
    kit claim; smoke: not testable)."""
    words = _words(claims, "kit")
    if not words:
        return None
    return NOT_TESTABLE if profile == "smoke" else combine_verdicts(words)
