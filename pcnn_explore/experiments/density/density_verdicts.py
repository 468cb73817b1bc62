"""The density notebooks' verdicts on the paper (00-06, 11), decided over seeds.

Every rule here takes per-seed numbers (one per independent run: a fresh stream and a fresh
model of that seed) and decides each of the paper's claims with :mod:`pcnn_explore.verdicts`
(Student's t over seeds, paired where both sides ran the same seeds). A claim ``agrees`` only when
its 95% interval excludes the other answer, ``differs`` when it excludes the paper's answer, and
is ``inconclusive`` otherwise. Only the paper's models count: the kit's position-biased PixelCNN
(``pixelcnn_pos``) is shown beside them and never enters a verdict.

:func:`verdict_line` produces every notebook's verdict sentence: its first word is
:func:`overall_word` of the claims' words (:func:`pcnn_explore.verdicts.combine_verdicts`: all agree:
``agrees``; some agree: ``partly``; every decided one differs: ``differs``; else ``inconclusive``), or
``not testable at this profile``
for smoke runs and runs with fewer than :data:`MIN_SEEDS` seeds. The report index reads that word.

The rules, per notebook (the quantities are defined where the experiments compute them):

- 00 (Sec. 5 and 7: with its constant step size PixelCNN's "per-step PG never completely vanishes")
  :func:`pseudo_counts`: the exponent b of PG ~ k^b of a repeated frame over its visits k lies above
  :data:`PG_EXPONENT_FLOOR` (a count's PG decays as k^-1, one that levels off has b = 0);
- 01 (Fig. 2 left) :func:`training_orders`: each other order against online training, the relative
  area of the held-out curve (``area_m / area_online - 1``) and the largest rise's share of the
  area, both equivalent within :data:`ORDER_MARGIN`;
- 02 (Fig. 2 middle) :func:`episode_spikes`: share of the largest loss spikes near an episode start
  greater than chance's share;
- 03 (Fig. 3, Sec. 3.2) :func:`lr_schedules`: the named rates give the lowest final loss; n^-1's
  best is worse than the other schedules' best; the constant schedule's spread of final loss
  across initial rates, ln(worst / best) with every loss capped at :data:`DIVERGED_LOSS`, is smaller
  than each decaying schedule's;
- 04 (Fig. 4) :func:`samples`: PixelCNN's samples lie nearer to held-out real frames (never trained
  on, so a copied training frame scores no better than a new realistic one) than CTS's;
- 05 (Fig. 9) :func:`pg_claims`: PixelCNN's PG lower, smoother and with higher peaks (quantile
  :data:`PEAK_QUANTILE` / median) than CTS's, each claim on its own;
- 06 (App. C) :func:`conv_cts`: per game, held-out loss CTS > ConvCTS > PixelCNN, directional (the
  density-level ordering App. C's explanation implies); App. C's own evidence, agent scores, is
  a claim of its own that is always ``not testable at this profile`` here (:data:`APPENDIX_C_AGENTS`);
- 11 (Fig. 10) :func:`qualitative`: one recorded episode, no interval: agrees when every stated
  condition holds, partly when some do.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from pcnn_explore.envs.frames import DENSITY_HEIGHT, DENSITY_LEVELS, DENSITY_WIDTH
from pcnn_explore.experiments.density.density_stats import capped_log_spread
from pcnn_explore.verdicts import VERDICTS, Verdict, combine_verdicts, difference_verdict, equivalence_verdict

__all__ = ["MIN_SEEDS", "ORDER_MARGIN", "PEAK_QUANTILE", "DIVERGED_LOSS", "PG_EXPONENT_FLOOR", "APPENDIX_C_AGENTS",
           "NOT_TESTABLE", "seed_list",
           "overall_word", "verdict_line", "pseudo_counts", "training_orders", "episode_spikes", "lr_schedules", "samples",
           "pg_claims", "conv_cts", "qualitative", "VERDICTS"]

#: fewest seeds (independent runs) a quantitative claim is decided on
MIN_SEEDS = 3
#: 01's equivalence margin: relative area difference, and difference of the rise's share of the area
ORDER_MARGIN = 0.10
#: 05's peak measure: this quantile of the PG trace over its median
PEAK_QUANTILE = 0.99
#: 03: the cap on a final loss, a uniform model's, 42 x 42 ln 8 = 3668 nats per frame. A run at or above
#: it (a NaN or a finite blow-up such as 9.2e7 nats) has learned nothing a uniform guess does not give;
#: how far above it lies says nothing about the schedule, so every such run counts as this one value
DIVERGED_LOSS = DENSITY_HEIGHT * DENSITY_WIDTH * math.log(DENSITY_LEVELS)
#: 00: the claim "the PG never completely vanishes" is b > this, for PG ~ k^b over a repeated frame's
#: visits: halfway between a count's decay (b = -1) and a PG that levels off (b = 0); -1/2 or below,
#: the PG falls by a factor sqrt(10) or more per tenfold visits, which is vanishing. Over the study's
#: visits k = 1..59 a count's PG ln(1 + 1/k) gives -0.95, and a count 20 times slower, ln(1 + 20/k)
#: (a pseudo-count slope of 0.05, as CTS's), still -0.64: below the floor
PG_EXPONENT_FLOOR = -0.5
#: 06: what held-out loss cannot decide of App. C, the claim's sentence in the paper and its evidence
APPENDIX_C_AGENTS = ("App. C's claim, the convolution \"explains part, but not all of PixelCNN's advantage\" (Sec. 5), "
                     "rests on agent scores (Fig. 14: DQN-ConvCTS like DQN-PixelCNN on dense-reward games, as poor "
                     "as DQN-CTS on sparse-reward ones); held-out loss is another level (a lower loss need not give "
                     "a better bonus) and no density-level run measures agent scores")
NOT_TESTABLE = VERDICTS[-1]


def seed_list(seed: int, n_seeds: int) -> tuple[int, ...]:
    """The runs' seeds: ``seed, seed + 2, ..., seed + 2 (n_seeds - 1)``. Every run draws its held-out
    frames from the stream of its seed + 1, so no run's held-out frame is another run's training frame."""
    for name, v, least in (("seed", seed, 0), ("n_seeds", n_seeds, 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < least:
            raise ValueError(f"setting {name} must be an int >= {least}, got {v!r}")
    return tuple(int(seed) + 2 * k for k in range(int(n_seeds)))


def overall_word(words: Sequence[str]) -> str:
    """The word of a notebook with several claims: :func:`pcnn_explore.verdicts.combine_verdicts`, the
    one combining rule (ValueError for no words or a word not in :data:`VERDICTS`)."""
    return combine_verdicts(words)


def verdict_line(profile: str, claims: Mapping[str, Verdict | str], n_seeds: int, note: str = "") -> str:
    """The notebook's verdict sentence: its word (:func:`overall_word` of the claims), then each
    claim's name and sentence. ``not testable at this profile`` for smoke runs and with fewer than
    :data:`MIN_SEEDS` seeds (the claims' numbers follow). A claim given as a str is one that could
    not be decided (its reason); it counts as inconclusive. ``note`` ends the sentence."""
    parts = [f"{name}: {c if isinstance(c, str) else c.sentence}" for name, c in claims.items()]
    detail = "; ".join(parts) + (f" ({note})" if note else "")
    if profile == "smoke":
        return f"{NOT_TESTABLE}: smoke runs check the plumbing only ({detail})"
    if n_seeds < MIN_SEEDS:
        return f"{NOT_TESTABLE}: {n_seeds} seed(s), a claim needs {MIN_SEEDS} ({detail})"
    word = overall_word([c.word if isinstance(c, Verdict) else "inconclusive" for c in claims.values()])
    return f"{word} over {n_seeds} seeds: {detail}"


def _enough(*columns: Sequence[float]) -> str | None:
    """Why the per-seed columns cannot be decided on (fewer than 2 finite values), else None."""
    for c in columns:
        finite = [v for v in c if v is not None and math.isfinite(v)]
        if len(finite) < 2 or len(finite) < len(c):
            return f"not decided: {len(finite)} of {len(c)} seeds give a finite value, an interval needs all and at least 2"
    return None


def _difference(a, b, direction, seeds, claim) -> Verdict | str:
    return _enough(a, b) or difference_verdict(a, b, direction, seeds_a=seeds, seeds_b=seeds, claim=claim)


# ------------------------------------------------------------------------------------ notebooks
def pseudo_counts(exponent: Sequence[float], seeds: Sequence[int],
                  floor: float = PG_EXPONENT_FLOOR) -> dict[str, Verdict | str]:
    """00: per-seed exponent b of PixelCNN's PG of a repeated frame, PG ~ k^b over its visits k
    (:func:`~pcnn_explore.experiments.density.density_stats.pg_decay_exponent`); claim (Sec. 5, 7:
    the per-step PG never completely vanishes): b > ``floor``. A count's PG gives b near -1, so a
    PixelCNN whose PG decays like a count's makes this differ. Decided as
    :func:`pcnn_explore.verdicts.difference_verdict` decides: the paired t interval of b - floor over
    seeds, the exact sign flip where the exponents have no spread."""
    return {"PixelCNN PG does not vanish": _difference(exponent, [float(floor)] * len(exponent), "greater", seeds,
                                                       f"PG exponent b - ({floor:g})")}


def training_orders(area: Mapping[str, Sequence[float]], rise: Mapping[str, Sequence[float]],
                    seeds: Sequence[int], margin: float = ORDER_MARGIN) -> dict[str, Verdict | str]:
    """01: ``area[order]``, ``rise[order]``: per-seed area of the held-out curve and its largest
    rise (nats per frame), one order being ``"online"``. Per other order: ``progress`` is the
    equivalence of ``area / area_online - 1`` with 0, ``stability`` of ``rise / area`` with
    online's, both within ``margin`` (continuous quantities: the paired t interval, the exact sign flip
    only where the values have no spread, as in :func:`pcnn_explore.verdicts.difference_verdict`)."""
    if "online" not in area:
        raise ValueError("training_orders compares every order with online training: area has no 'online'")
    base = np.asarray(area["online"], dtype=np.float64)
    base_share = np.asarray(rise["online"], dtype=np.float64) / base
    out: dict[str, Verdict | str] = {}
    zeros = [0.0] * len(seeds)
    for m in area:
        if m == "online":
            continue
        rel = list(np.asarray(area[m], dtype=np.float64) / base - 1.0)
        share = list(np.asarray(rise[m], dtype=np.float64) / np.asarray(area[m], dtype=np.float64))
        out[f"{m} progress"] = _enough(rel) or equivalence_verdict(
            rel, zeros, margin, seeds_a=seeds, seeds_b=seeds, claim=f"area {m} / area online - 1", exact=False)
        out[f"{m} stability"] = _enough(share, base_share) or equivalence_verdict(
            share, list(base_share), margin, seeds_a=seeds, seeds_b=seeds, claim=f"rise share {m} - online", exact=False)
    return out


def episode_spikes(fraction: Sequence[float], chance: Sequence[float], seeds: Sequence[int]) -> dict[str, Verdict | str]:
    """02: per-seed share of the largest loss spikes within the window after an episode start, and
    the share chance would give (NaN where a run has no spike to rank); claim: fraction > chance."""
    return {"spikes at episode starts": _difference(fraction, chance, "greater", seeds, "near-start share - chance")}


def lr_schedules(final_loss: Sequence[Mapping[tuple[str, float], float]], seeds: Sequence[int],
                 named: Sequence[tuple[str, float]] = (("constant", 1e-3), ("inverse_sqrt", 0.1))) -> dict[str, Verdict | str]:
    """03: ``final_loss[i][(schedule, lr)]``: seed i's final loss (nats per frame; NaN for a diverged
    run). Every loss that is not finite or lies above :data:`DIVERGED_LOSS` counts as
    :data:`DIVERGED_LOSS`, so a NaN and a finite blow-up are the same failed run. Claims (nats):
    ``named rates best``: min over ``named`` minus min over the other runs < 0; ``n^-1 worst``: n^-1's
    best minus the larger of the other schedules' bests > 0; ``constant more robust than S``: the
    spread of constant's final losses over its initial rates minus S's < 0, for each S with more
    than one rate, the spread being ln(worst / best) of the capped losses
    (:func:`~pcnn_explore.experiments.density.density_stats.capped_log_spread`): a failed run adds at
    most ln(3668 / best), about 3.6 for a best of 100 nats, never a blow-up's size."""
    runs = [{k: (DIVERGED_LOSS if not math.isfinite(v) else min(float(v), DIVERGED_LOSS)) for k, v in fl.items()}
            for fl in final_loss]
    if not runs:
        raise ValueError("lr_schedules needs the final losses of at least one seed")
    named = [tuple(k) for k in named]
    out: dict[str, Verdict | str] = {}
    others = [k for k in runs[0] if k not in named]
    present = [k for k in named if k in runs[0]]
    if present and others:
        a = [min(r[k] for k in present) for r in runs]
        b = [min(r[k] for k in others) for r in runs]
        out["named rates best"] = _difference(a, b, "less", seeds, "best named - best other (nats)")
    best = {s: [min(v for (s2, _), v in r.items() if s2 == s) for r in runs]
            for s in dict.fromkeys(s for s, _ in runs[0])}
    if "inverse" in best and len(best) > 1:
        rest = [max(best[s][i] for s in best if s != "inverse") for i in range(len(runs))]
        out["n^-1 worst"] = _difference(best["inverse"], rest, "greater", seeds, "best n^-1 - best other (nats)")
    spread = {s: [capped_log_spread([v for (s2, _), v in r.items() if s2 == s], DIVERGED_LOSS) for r in runs]
              for s in best}
    n_rates = {s: sum(1 for s2, _ in runs[0] if s2 == s) for s in best}
    if n_rates.get("constant", 0) > 1:
        for s in spread:
            if s != "constant" and n_rates[s] > 1:  # one rate has no spread to compare
                out[f"constant more robust than {s}"] = _difference(spread["constant"], spread[s], "less", seeds,
                                                                    f"ln(worst / best) constant - {s}")
    return out


def samples(distance: Mapping[str, Sequence[float]], seeds: Sequence[int]) -> dict[str, Verdict | str]:
    """04: ``distance[model]``: per-seed mean over the model's samples of the distance to the nearest
    *held-out* frame (share of pixels that differ, 0..1; frames of an independent stream the model
    never trained on, so copying a training frame scores what a real frame scores, no better);
    claim: PixelCNN's < CTS's."""
    return {"PixelCNN samples nearer held-out frames": _difference(distance["pixelcnn"], distance["cts"], "less", seeds,
                                                                    "held-out distance PixelCNN - CTS")}


def pg_claims(stats: Mapping[str, Sequence[Mapping[str, float]]], seeds: Sequence[int],
              a: str = "pixelcnn", b: str = "cts") -> dict[str, Verdict | str]:
    """05: ``stats[model][i]``: seed i's PG statistics (``mean`` nats, ``variability``, ``peak_quantile``
    ratio). The three claims of ``a`` against ``b``, each decided on its own."""
    col = lambda m, k: [float(s[k]) for s in stats[m]]  # noqa: E731
    return {"lower PG": _difference(col(a, "mean"), col(b, "mean"), "less", seeds, f"mean PG {a} - {b} (nats)"),
            "smoother": _difference(col(a, "variability"), col(b, "variability"), "less", seeds,
                                    f"variability {a} - {b}"),
            "sharper peaks": _difference(col(a, "peak_quantile"), col(b, "peak_quantile"), "greater", seeds,
                                         f"q{PEAK_QUANTILE:g}/median {a} - {b}")}


def conv_cts(heldout: Mapping[str, Mapping[str, Sequence[float]]], seeds: Sequence[int]) -> dict[str, Verdict | str]:
    """06: ``heldout[game][model]``: per-seed held-out loss (nats per frame). Per game, directional, of
    the density level (the accuracy ordering App. C's explanation implies, not its evidence):
    PixelCNN below CTS (an accuracy advantage exists), ConvCTS below CTS (the convolution gives part
    of it), ConvCTS above PixelCNN (not all of it). Last, ``App. C agent scores``: App. C's claim on
    its own evidence, always ``not testable at this profile`` here (:data:`APPENDIX_C_AGENTS`), so the
    notebook's word is at best ``partly``: held-out loss alone never agrees with App. C."""
    out: dict[str, Verdict | str] = {}
    for game, h in heldout.items():
        out[f"{game} PixelCNN < CTS"] = _difference(h["pixelcnn"], h["cts"], "less", seeds,
                                                    "held-out loss PixelCNN - CTS (nats)")
        out[f"{game} ConvCTS < CTS"] = _difference(h["convcts"], h["cts"], "less", seeds,
                                                   "held-out loss ConvCTS - CTS (nats)")
        out[f"{game} ConvCTS > PixelCNN"] = _difference(h["convcts"], h["pixelcnn"], "greater", seeds,
                                                        "held-out loss ConvCTS - PixelCNN (nats)")
    out["App. C agent scores"] = Verdict(NOT_TESTABLE, math.nan, (math.nan, math.nan), 0.95, (), (),
                                         "none: another level", f"{NOT_TESTABLE}: {APPENDIX_C_AGENTS}")
    return out


def qualitative(profile: str, conditions: Mapping[str, bool], detail: str) -> str:
    """11's reading of one recorded episode: one episode is one sample, with no seeds no test can
    decide, so the word is ``inconclusive`` whatever the episode shows (too few seeds decide nothing);
    the text says which of ``conditions`` the episode meets and which not. Smoke runs: not testable."""
    if not conditions:
        raise ValueError("qualitative needs at least one condition")
    held = [k for k, v in conditions.items() if v]
    text = (f"one recorded episode, no seeds, so no test decides; in this episode {', '.join(held) or 'no condition'} "
            "holds" + (f"; not: {', '.join(k for k in conditions if k not in held)}" if len(held) < len(conditions) else "")
            + f" ({detail})")
    if profile == "smoke":
        return f"{NOT_TESTABLE}: smoke runs check the plumbing only ({text})"
    return f"inconclusive: {text}"
