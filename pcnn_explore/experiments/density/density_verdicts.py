"""The density notebooks' verdicts on the paper (00-06, 11), decided over seeds.

Every rule here takes per-seed numbers (one per independent run: a fresh stream and a fresh
model of that seed) and decides each of the paper's claims with :mod:`pcnn_explore.verdicts`: an
exact test (the sign-flip test paired by seed, the permutation test unpaired, TOST built from them)
at one-sided 0.025, on at least :data:`MIN_SEEDS` seeds (fewer: ``not testable: too few seeds at this
profile``). No t interval decides. Only the paper's models count: the kit's position-biased PixelCNN
(``pixelcnn_pos``) is shown beside them and never enters a verdict.

:func:`verdict_line` produces every notebook's verdict sentence: its first word is the notebook's
word of :func:`pcnn_explore.verdicts.notebook_verdict` over its paper claims (agrees, partly, mixed,
differs, inconclusive, or not testable with its reason); claims named in ``kit`` are the kit's own
reading and stay out of it. :func:`claim_records` turns the claims into the ``claims`` records of
metrics.json the report reads (:mod:`pcnn_explore.report.claims`).

The rules, per notebook (the quantities are defined where the experiments compute them):

- 00 (Sec. 2.1, 5 and 7) :func:`pseudo_counts`: ``pseudo-counts grow with real counts``: CTS's
  pseudo-count of a repeated frame against its real count has a least-squares slope above 0 (the
  sign-flip test of the per-seed slopes against 0); ``PixelCNN PG does not vanish``: the exponent b of
  PG ~ k^b of the repeated frame over its visits k lies above :data:`PG_EXPONENT_FLOOR` (a count's PG
  decays as k^-1, one that levels off has b = 0);
- 01 (Fig. 2 left) :func:`training_orders`: each other order against online training, the relative
  area of the held-out curve (``area_m / area_online - 1``) and the largest rise's share of the
  area ("rise share"), both equivalent within :data:`ORDER_MARGIN` (TOST);
- 02 (Fig. 2 middle) :func:`episode_spikes`: share of the largest loss spikes near an episode start
  greater than chance's share;
- 03 (Fig. 3, Sec. 3.2) :func:`lr_schedules`: each named rate on its own (constant 1e-3; 0.1 n^-1/2)
  gives a lower final loss than the best run of every rate the paper does not name; n^-1's best is
  worse than the other schedules' best; the constant schedule's spread of final loss across initial
  rates, ln(worst / best) with every loss capped at :data:`DIVERGED_LOSS`, is smaller than each
  decaying schedule's;
- 04 (Fig. 4) :func:`samples`: PixelCNN's samples lie nearer to held-out real frames (never trained
  on, so a copied training frame scores no better than a new realistic one) than CTS's;
- 05 (Fig. 9) :func:`pg_claims`: PixelCNN's PG lower, smoother and with higher peaks (quantile
  :data:`PEAK_QUANTILE` / median) than CTS's, each claim on its own;
- 06 (App. C) :func:`conv_cts`: App. C's claim rests on agent scores (PixelCNN's edge over CTS for
  exploration): ``not testable on this task`` here (:data:`APPENDIX_C_AGENTS`); the density-level
  ordering per game, held-out loss CTS > ConvCTS > PixelCNN, is a claim of its own, the kit's reading
  (:data:`CONV_CTS_KIT`), and never makes the notebook's word;
- 11 (Fig. 10) :func:`qualitative`: one recorded episode, no seeds: not testable (too few seeds); the
  text says which conditions the episode meets.
"""
from __future__ import annotations

import math
import re
from typing import Any, Collection, Mapping, Sequence

import numpy as np

from pcnn_explore.envs.frames import DENSITY_HEIGHT, DENSITY_LEVELS, DENSITY_WIDTH
from pcnn_explore.experiments.density.density_stats import capped_log_spread
from pcnn_explore.verdicts import (
    MIN_SEEDS,
    NOT_ON_THIS_TASK,
    NOT_TESTABLE,
    TOO_FEW_SEEDS,
    VERDICTS,
    Verdict,
    combine_verdicts,
    difference_verdict,
    equivalence_verdict,
    not_testable,
    notebook_verdict,
    progress_verdict,
)

__all__ = ["MIN_SEEDS", "ORDER_MARGIN", "PEAK_QUANTILE", "DIVERGED_LOSS", "PG_EXPONENT_FLOOR", "APPENDIX_C_AGENTS",
           "NOT_TESTABLE", "CONV_CTS_KIT", "seed_list", "overall_word", "verdict_line", "claim_records",
           "pseudo_counts", "training_orders", "episode_spikes", "lr_schedules", "samples", "pg_claims", "conv_cts",
           "qualitative", "conv_cts_kit", "VERDICTS"]

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
                     "as DQN-CTS on sparse-reward ones); a density notebook runs no agent, and held-out loss is "
                     "another level (a lower loss need not give a better bonus)")
#: 06: the density-level claims are the kit's reading of App. C (their names end so)
CONV_CTS_KIT = ("PixelCNN < CTS", "ConvCTS < CTS", "ConvCTS > PixelCNN")


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


def _sentence(c: Verdict | str) -> str:
    """A claim's sentence; a str claim is one that could not be decided (its reason): inconclusive."""
    return c.sentence if isinstance(c, Verdict) else f"inconclusive: {c}"


def verdict_line(profile: str, claims: Mapping[str, Verdict | str], n_seeds: int, note: str = "",
                 kit: Collection[str] = ()) -> str:
    """The notebook's verdict sentence: its word (:func:`pcnn_explore.verdicts.notebook_verdict` of the
    paper claims, those not named in ``kit``), then each claim's name and sentence, the kit's marked.
    ``not testable: too few seeds at this profile`` for smoke runs and with fewer than
    :data:`MIN_SEEDS` seeds (the claims' numbers follow). A claim given as a str is one that could
    not be decided (its reason); it counts as inconclusive. ``note`` ends the sentence."""
    parts = [f"{'kit, ' if name in kit else ''}{name}: {_sentence(c)}" for name, c in claims.items()]
    detail = "; ".join(parts) + (f" ({note})" if note else "")
    if profile == "smoke":
        return f"{not_testable(TOO_FEW_SEEDS, 'smoke runs check the plumbing only')} ({detail})"
    paper = [_sentence(c) for name, c in claims.items() if name not in kit]
    word = notebook_verdict(paper) if paper else not_testable(NOT_ON_THIS_TASK, "no paper claim")
    if n_seeds < MIN_SEEDS and not word.startswith(NOT_ON_THIS_TASK):
        return f"{not_testable(TOO_FEW_SEEDS, f'{n_seeds} seeds, a claim needs {MIN_SEEDS}')} ({detail})"
    return f"{word} over {n_seeds} seeds: {detail}"


def claim_records(claims: Mapping[str, Verdict | str], kit: Collection[str] = (),
                  quantity: Mapping[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """The claims as metrics.json's ``claims`` records (what :mod:`pcnn_explore.report.claims` reads):
    per name ``{kind, claim, order, verdict, reason, sentence, estimate, interval, level, p_value, test,
    n, n_per_line, method, values, values_b}``, plain JSON values (NaN as None). ``order`` is the
    claim's place in ``claims`` (0 first): metrics.json sorts its keys, so the report finds the
    notebook's first paper claim by it, never by the names' alphabetical order."""
    def plain(x):
        return None if isinstance(x, float) and not math.isfinite(x) else x

    out = {}
    for order, (name, c) in enumerate(claims.items()):
        head = {"kind": "kit" if name in kit else "paper", "claim": name, "order": order}
        if not isinstance(c, Verdict):
            out[name] = {**head, "verdict": "inconclusive", "sentence": _sentence(c)}
            continue
        said = re.search(r"(?:^|: )([^:;=]+?) = [-+0-9.einf]+(?: over \d+ seeds)?, \d+% interval", c.sentence)
        out[name] = {**head, "verdict": c.word, "reason": c.reason, "sentence": c.sentence,
                     "label": (quantity or {}).get(name) or (said.group(1).strip() if said else ""), "estimate": plain(float(c.estimate)),
                     "interval": [plain(float(x)) for x in c.interval], "level": c.level,
                     "p_value": plain(float(c.p_value)), "test": c.test, "n": int(c.n),
                     "n_per_line": len(c.values), "method": c.method, "values": [plain(float(v)) for v in c.values],
                     "values_b": [plain(float(v)) for v in c.values_b]}
    return out


def _enough(*columns: Sequence[float]) -> str | None:
    """Why the per-seed columns cannot be decided on (fewer than 2 finite values), else None."""
    for c in columns:
        finite = [v for v in c if v is not None and math.isfinite(v)]
        if len(finite) < 2 or len(finite) < len(c):
            return f"not decided: {len(finite)} of {len(c)} seeds give a finite value, a test needs all and at least 2"
    return None


def _difference(a, b, direction, seeds, claim) -> Verdict | str:
    return _enough(a, b) or difference_verdict(a, b, direction, seeds_a=seeds, seeds_b=seeds, claim=claim)


# ------------------------------------------------------------------------------------ notebooks
def pseudo_counts(exponent: Sequence[float], seeds: Sequence[int], floor: float = PG_EXPONENT_FLOOR,
                  count_slope: Sequence[float] | None = None) -> dict[str, Verdict | str]:
    """00: ``exponent``: per-seed exponent b of PixelCNN's PG of a repeated frame, PG ~ k^b over its
    visits k (:func:`~pcnn_explore.experiments.density.density_stats.pg_decay_exponent`); claim (Sec. 5,
    7: the per-step PG never completely vanishes): b > ``floor``, by the sign-flip test of b - floor
    (:func:`pcnn_explore.verdicts.progress_verdict`). A count's PG gives b near -1, so a PixelCNN whose
    PG decays like a count's makes this differ. ``count_slope``: per-seed least-squares slope of CTS's
    pseudo-count of the repeated frame against its real count; claim (Sec. 2.1, after Bellemare et al.
    2016: pseudo-counts generalise counts): the slope > 0, the pseudo-count grows with the real count.
    PixelCNN's own pseudo-count is not held to it: with its constant step size its PG does not vanish,
    so its pseudo-count stays small (the other claim)."""
    out: dict[str, Verdict | str] = {}
    if count_slope is not None:
        out["pseudo-counts grow with real counts"] = _enough(count_slope) or progress_verdict(
            list(count_slope), 0.0, claim="CTS's pseudo-count slope against the real count")
    out["PixelCNN PG does not vanish"] = _enough(exponent) or progress_verdict(
        list(exponent), float(floor), claim="PixelCNN's PG exponent b")
    return out


def training_orders(area: Mapping[str, Sequence[float]], rise: Mapping[str, Sequence[float]],
                    seeds: Sequence[int], margin: float = ORDER_MARGIN) -> dict[str, Verdict | str]:
    """01: ``area[order]``, ``rise[order]``: per-seed area of the held-out curve and its largest
    rise (nats per frame), one order being ``"online"``. Per other order: ``progress`` is the
    equivalence of ``area / area_online - 1`` with 0, ``stability`` of the rise share ``rise / area``
    with online's, both within ``margin``, by TOST built from sign flips paired by seed
    (:func:`pcnn_explore.verdicts.equivalence_verdict`). These quantities have no floor: the rule of
    a positive control is for lines that can sit at one (a success rate of 0 on DeepSea). The control
    passed is online training's held-out area against 0, positive by construction, so it never makes
    the claim "not testable: the lines do not move"; that the loss curves fall is not checked here."""
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
            rel, zeros, margin, seeds_a=seeds, seeds_b=seeds, claim=f"area {m} / area online - 1",
            control=list(base), floor=0.0)
        out[f"{m} stability"] = _enough(share, base_share) or equivalence_verdict(
            share, list(base_share), margin, seeds_a=seeds, seeds_b=seeds, claim=f"rise share {m} - online",
            control=list(base), floor=0.0)
    return out


def episode_spikes(fraction: Sequence[float], chance: Sequence[float], seeds: Sequence[int]) -> dict[str, Verdict | str]:
    """02: per-seed share of the largest loss spikes within the window after an episode start, and
    the share chance would give (NaN where a run has no spike to rank); claim: fraction > chance."""
    return {"spikes at episode starts": _difference(fraction, chance, "greater", seeds, "near-start share - chance")}


def _rate(key: tuple[str, float]) -> str:
    """A (schedule, initial rate) as the paper writes it: ``constant 1e-3``, ``0.1 n^-1/2``, ``1 n^-1``."""
    schedule, lr = key
    rate = f"{lr:g}" if lr >= 0.01 else f"{lr:.0e}".replace("e-0", "e-")
    return {"constant": f"constant {rate}", "inverse_sqrt": f"{rate} n^-1/2", "inverse": f"{rate} n^-1"}.get(
        schedule, f"{schedule} {rate}")


def lr_schedules(final_loss: Sequence[Mapping[tuple[str, float], float]], seeds: Sequence[int],
                 named: Sequence[tuple[str, float]] = (("constant", 1e-3), ("inverse_sqrt", 0.1))) -> dict[str, Verdict | str]:
    """03: ``final_loss[i][(schedule, lr)]``: seed i's final loss (nats per frame; NaN for a diverged
    run). Every loss that is not finite or lies above :data:`DIVERGED_LOSS` counts as
    :data:`DIVERGED_LOSS`, so a NaN and a finite blow-up are the same failed run. Claims (nats), each
    decided on its own by the sign-flip test paired by seed: ``<rate> lowest``, for each named rate
    (constant 1e-3; 0.1 n^-1/2): its final loss minus the best of the runs the paper does not name < 0;
    ``n^-1 worst``: n^-1's best minus the larger of the other schedules' bests > 0; ``constant more
    robust than S``: the spread of constant's final losses over its initial rates minus S's < 0, for
    each S with more than one rate, the spread being ln(worst / best) of the capped losses
    (:func:`~pcnn_explore.experiments.density.density_stats.capped_log_spread`): a failed run adds at
    most ln(3668 / best), about 3.6 for a best of 100 nats, never a blow-up's size."""
    runs = [{k: (DIVERGED_LOSS if not math.isfinite(v) else min(float(v), DIVERGED_LOSS)) for k, v in fl.items()}
            for fl in final_loss]
    if not runs:
        raise ValueError("lr_schedules needs the final losses of at least one seed")
    named = [tuple(k) for k in named]
    out: dict[str, Verdict | str] = {}
    others = [k for k in runs[0] if k not in named]
    if others:
        b = [min(r[k] for k in others) for r in runs]
        for k in named:
            if k in runs[0]:
                out[f"{_rate(k)} lowest"] = _difference([r[k] for r in runs], b, "less", seeds,
                                                        f"{_rate(k)} - best unnamed rate (nats)")
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
    """06: ``heldout[game][model]``: per-seed held-out loss (nats per frame). First, ``App. C agent
    scores``: App. C's claim on its own evidence, agent scores (PixelCNN's edge over CTS for
    exploration), ``not testable on this task`` here (:data:`APPENDIX_C_AGENTS`): the notebook's one
    paper claim, so its word is ``not testable``. Then per game, directional, the density level (the
    accuracy ordering App. C's explanation implies, not its evidence), a claim of its own, the kit's
    reading (names ending in :data:`CONV_CTS_KIT`; :func:`verdict_line` takes them as ``kit``): PixelCNN
    below CTS, ConvCTS below CTS, ConvCTS above PixelCNN."""
    agents = not_testable(NOT_ON_THIS_TASK, APPENDIX_C_AGENTS)
    out: dict[str, Verdict | str] = {
        "App. C agent scores": Verdict(NOT_TESTABLE, math.nan, (math.nan, math.nan), 0.95, (), (),
                                       "none: a density notebook runs no agent", agents, reason=NOT_ON_THIS_TASK)}
    for game, h in heldout.items():
        out[f"{game} PixelCNN < CTS"] = _difference(h["pixelcnn"], h["cts"], "less", seeds,
                                                    "held-out loss PixelCNN - CTS (nats)")
        out[f"{game} ConvCTS < CTS"] = _difference(h["convcts"], h["cts"], "less", seeds,
                                                   "held-out loss ConvCTS - CTS (nats)")
        out[f"{game} ConvCTS > PixelCNN"] = _difference(h["convcts"], h["pixelcnn"], "greater", seeds,
                                                        "held-out loss ConvCTS - PixelCNN (nats)")
    return out


def conv_cts_kit(claims: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of 06's claims that are the kit's reading (the density-level ordering)."""
    return tuple(n for n in claims if n.endswith(CONV_CTS_KIT))


def qualitative(profile: str, conditions: Mapping[str, bool], detail: str) -> str:
    """11's reading of one recorded episode: one episode is one sample, no seeds, so no test can decide:
    ``not testable: too few seeds at this profile (one recorded episode)`` whatever the episode shows;
    the text says which of ``conditions`` the episode meets and which not."""
    if not conditions:
        raise ValueError("qualitative needs at least one condition")
    held = [k for k, v in conditions.items() if v]
    text = (f"in this episode {', '.join(held) or 'no condition'} "
            "holds" + (f"; not: {', '.join(k for k in conditions if k not in held)}" if len(held) < len(conditions) else "")
            + f" ({detail})")
    why = "smoke runs check the plumbing only" if profile == "smoke" else "one recorded episode, no seeds"
    return f"{not_testable(TOO_FEW_SEEDS, why)}: {text}"
