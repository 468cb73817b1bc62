"""The paper's agent claims (Fig. 5, 11, 12, 13) decided on a deep-sea study, with
:mod:`pcnn_explore.verdicts`: the seed is the unit, each rule states its threshold or margin.

Every function takes per-seed values (lists in the same seed order; :class:`~pcnn_explore.experiments.agents.deep_sea_study.DeepSeaStudy`
gives them) and returns a :class:`~pcnn_explore.verdicts.Verdict` or a dict ``{"verdict", "sentence",
"parts"}`` whose ``verdict`` is one of :data:`pcnn_explore.verdicts.VERDICTS`:

- Fig. 5, :func:`bonus_explores`: "the bonus makes DQN explore": the paired difference (bonus agent
  minus DQN) of the per-seed success rate of the last quarter of episodes (mean over the study's
  sizes); ``agrees`` when its 95% t interval lies above 0. :func:`pixelcnn_against_cts`: what DeepSea
  can and cannot decide about the paper's PixelCNN against CTS.
- Fig. 11, :func:`only_combination_progresses`: each agent's progress against the random policy's
  success rate 2^-N (:func:`~pcnn_explore.verdicts.progress_verdict`: ``agrees`` = progress, its
  interval above 2^-N; ``differs`` = none, its interval at or below it); the claim agrees when the
  combination progresses and the three others do not, differs when one of the three progresses or
  the combination does not, else inconclusive.
- Fig. 12, :func:`robust_across_c`: equivalence of each c's success rate with the reference c within
  a stated margin; :func:`larger_c_sooner`: the paired difference of the first-+1 episode (censored at
  cap + 1), larger c minus smaller c, claimed below 0.
- Fig. 13, :func:`intrinsic_covers_more`: the paired difference of the per-seed mean coverage (area
  under the coverage curve) intrinsic-only minus DQN, claimed above 0; :func:`finds_reward`: seeds
  that found the +1 within the cap, k of n (exact interval), against the random policy's chance of
  finding it in as many episodes.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from pcnn_explore.verdicts import Verdict, difference_verdict, equivalence_verdict, progress_verdict, share_verdict

__all__ = ["bonus_explores", "pixelcnn_against_cts", "only_combination_progresses", "robust_across_c",
           "larger_c_sooner", "intrinsic_covers_more", "finds_reward", "ROBUST_MARGIN", "NOT_TESTABLE_PIXELCNN",
           "verdict_dict"]

#: Fig. 12's equivalence margin: success rates (last quarter of the episodes) within 0.2 of each
#: other count as the same (bsuite counts a size solved once more than 0.1 of the episodes succeed)
ROBUST_MARGIN = 0.2

#: why DeepSea cannot decide the paper's PixelCNN against CTS
NOT_TESTABLE_PIXELCNN = (
    "not testable at this profile: on DeepSea the density frame is one pixel of one level in a blank N x N "
    "frame, and the paper's translation-invariant PixelCNN reads the same context (zeros, also its padding) "
    "for the agent's pixel in every cell, so it gives every cell nearly the same pseudo-count (only where the "
    "grid's edges cut its receptive field can it tell cells apart) and does not count visits to cells as CTS "
    "does: whatever bonus it gives on DeepSea is not the paper's mechanism, and the paper's PixelCNN > CTS "
    "rests on Atari frames' structure. DeepSea tests the kit's "
    "position-biased PixelCNN against CTS, a kit question that never counts as agreement with the paper")


def verdict_dict(v: Verdict) -> dict[str, Any]:
    """A verdict as plain values for metrics.json: word, estimate, interval, per-seed values, sentence."""
    return {"verdict": v.word, "estimate": v.estimate, "interval": list(v.interval), "level": v.level,
            "values": list(v.values), "values_b": list(v.values_b), "method": v.method, "sentence": v.sentence}


def bonus_explores(bonus: Sequence[float], dqn: Sequence[float], seeds: Sequence[int],
                   name: str = "bonus agent") -> Verdict:
    """Fig. 5: the bonus makes DQN explore. ``bonus``/``dqn``: per-seed success rates (last quarter of
    the episodes) on the same ``seeds``; paired t, claimed bonus - DQN > 0."""
    return difference_verdict(bonus, dqn, "greater", seeds_a=seeds, seeds_b=seeds,
                              claim=f"success rate {name} - DQN")


def pixelcnn_against_cts(pixelcnn: Sequence[float], cts: Sequence[float], seeds: Sequence[int]) -> dict[str, Any]:
    """The paper's DQN-PixelCNN against DQN-CTS on DeepSea: always ``not testable at this profile``
    (:data:`NOT_TESTABLE_PIXELCNN`), with the measured paired difference beside it as a kit finding."""
    v = difference_verdict(pixelcnn, cts, "greater", seeds_a=seeds, seeds_b=seeds,
                           claim="success rate DQN-PixelCNN - DQN-CTS")
    return {"verdict": "not testable at this profile", "sentence": NOT_TESTABLE_PIXELCNN,
            "measured": verdict_dict(v)}


def _combine(words: Sequence[str]) -> str:
    """All agree -> agrees; any differs -> differs; else inconclusive."""
    if all(w == "agrees" for w in words):
        return "agrees"
    return "differs" if "differs" in words else "inconclusive"


def only_combination_progresses(values: Mapping[str, Sequence[float]], combination: str, threshold: float
                                ) -> dict[str, Any]:
    """Fig. 11. ``values``: per agent key, per-seed success rates; ``combination``: the key of the bonus
    with MMC; ``threshold``: the random policy's success rate (2^-N, or its mean over the sizes).
    Each agent's progress is decided by :func:`~pcnn_explore.verdicts.progress_verdict`; the claim
    "only the combination progresses" agrees when the combination's verdict is ``agrees`` and each
    other's ``differs`` (no progress), differs when the combination's is ``differs`` or another's
    ``agrees``, else inconclusive."""
    if combination not in values or len(values) < 2:
        raise ValueError(f"values must hold the combination {combination!r} and at least one other agent")
    parts = {k: progress_verdict(v, threshold, claim=f"{k} success rate") for k, v in values.items()}
    others = [parts[k].word for k in values if k != combination]
    combo = parts[combination].word
    if combo == "agrees" and all(w == "differs" for w in others):
        word = "agrees"
    elif combo == "differs" or "agrees" in others:
        word = "differs"
    else:
        word = "inconclusive"
    progressed = [k for k, p in parts.items() if p.word == "agrees"]
    each = "; ".join(f"{k} {p.estimate:.3g} [{p.interval[0]:.3g}, {p.interval[1]:.3g}] {p.word}" for k, p in parts.items())
    sentence = (f"{word}: progress (success-rate 95% interval above {threshold:.3g}) by "
                f"{', '.join(progressed) or 'none'} ({each}); the claim is that only {combination} progresses")
    return {"verdict": word, "sentence": sentence, "threshold": threshold,
            "parts": {k: verdict_dict(p) for k, p in parts.items()}}


def robust_across_c(values: Mapping[str, Sequence[float]], reference: str, seeds: Sequence[int],
                    margin: float = ROBUST_MARGIN) -> dict[str, Any]:
    """Fig. 12: robust across c. ``values``: per scale key, per-seed success rates on the same seeds;
    each other scale against ``reference`` by :func:`~pcnn_explore.verdicts.equivalence_verdict` with
    ``margin``; the claim agrees when every one agrees, differs when one differs, else inconclusive."""
    if reference not in values or len(values) < 2:
        raise ValueError(f"values must hold the reference scale {reference!r} and at least one other")
    parts = {k: equivalence_verdict(v, values[reference], margin, seeds_a=seeds, seeds_b=seeds,
                                    claim=f"success rate {k} - {reference}")
             for k, v in values.items() if k != reference}
    word = _combine([p.word for p in parts.values()])
    sentence = (f"{word}: each scale's success rate against {reference}'s within +-{margin:g}: "
                + "; ".join(f"{k} {p.word} [{p.interval[0]:.3g}, {p.interval[1]:.3g}]" for k, p in parts.items()))
    return {"verdict": word, "sentence": sentence, "margin": margin, "parts": {k: verdict_dict(p) for k, p in parts.items()}}


def larger_c_sooner(larger: Sequence[float], smaller: Sequence[float], seeds: Sequence[int],
                    names: tuple[str, str] = ("larger c", "smaller c")) -> Verdict:
    """Fig. 12: a larger c finds the +1 sooner. Per-seed first-+1 episodes (censored at cap + 1);
    paired t, claimed larger - smaller < 0."""
    return difference_verdict(larger, smaller, "less", seeds_a=seeds, seeds_b=seeds,
                              claim=f"first +1 episode {names[0]} - {names[1]}")


def intrinsic_covers_more(intrinsic: Sequence[float], dqn: Sequence[float], seeds: Sequence[int]) -> Verdict:
    """Fig. 13: the intrinsic reward alone explores. Per-seed mean coverage (share of the N (N + 1) / 2
    cells, averaged over the run's coverage curve); paired t, claimed intrinsic-only - DQN > 0."""
    return difference_verdict(intrinsic, dqn, "greater", seeds_a=seeds, seeds_b=seeds,
                              claim="mean coverage intrinsic-only - DQN")


def finds_reward(found: Sequence[bool], chance: float, name: str = "seeds that found the +1") -> Verdict:
    """Fig. 13: the intrinsic-only agent finds the +1 (which it never learns from). ``found``: per
    seed; ``chance``: the random policy's chance of finding it within the same episodes
    (:func:`~pcnn_explore.experiments.agents.deep_sea_study.random_finds_within`). ``agrees`` when the exact
    interval of the share lies above ``chance``."""
    found = [bool(f) for f in found]
    return share_verdict(sum(found), len(found), chance, claim=name)
