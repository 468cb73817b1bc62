"""Every notebook's claims as the report's rows, read from the one record of metrics.json.

The index (:mod:`pcnn_explore.report.index`) shows one row per claim: the claim in plain words, its
verdict word, this run's number with its interval and unit, and n with the test. Each notebook writes
its claims as one list of :class:`pcnn_explore.study.Decision` records with a ``schema`` number
(:func:`pcnn_explore.study.metrics_record`); :func:`claims_of` reads them (:func:`pcnn_explore.study.decisions_of`)
in the order the claims were made, the paper's first, and nothing else: metrics without ``schema``
hold no row.

A claim that is ``not testable`` carries its reason (:attr:`Claim.reason`, one of
:data:`pcnn_explore.verdicts.REASONS` with its detail). A smoke run tests nothing: every claim reads
``not testable`` (too few seeds; smoke runs check the plumbing only) and the words of a verdict are
taken out of what the notebook wrote (:func:`unverdict`). Every text shown passes through
:func:`pcnn_explore.report.tables.plain_words`: "bonus scale" and "MMC mix", never two betas. :func:`words` turns a
metrics name (``final_loss_constant_0.0001_nats_per_seed``) into words with its unit
(``final loss, constant 1e-4 (nats), per seed``); nothing the index shows is an identifier.
"""
from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, Mapping

from pcnn_explore.report.tables import plain_words
from pcnn_explore.study import DEPENDS_ON_OPTIMIZER, OPTIMIZER_READINGS, Decision, decisions_of
from pcnn_explore.verdicts import NOT_ON_THIS_TASK, NOT_TESTABLE, TOO_FEW_SEEDS, VERDICTS, word_of

__all__ = ["Claim", "claims_of", "decisions", "row", "words", "unverdict", "short_claim", "NOT_TESTABLE",
           "SMOKE_REASON"]

_WORDS = tuple(w for w in VERDICTS if w != NOT_TESTABLE)
#: every verdict word a notebook may have written, the words before 0.3 among them (longest first)
_ALL_WORDS = (NOT_TESTABLE + " at this profile", NOT_TESTABLE, *_WORDS, "partly")
#: why a smoke run tests nothing (its claims read ``not testable`` with this reason)
SMOKE_REASON = f"{TOO_FEW_SEEDS} (smoke runs check the plumbing only)"


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim of a notebook as the index shows it (every field plain text)."""
    claim: str  # the claim in plain words
    kind: str  # "paper" or "kit" (the kit's own question, not the paper's claim)
    word: str  # a word of VERDICTS, or "no verdict"
    number: str = ""  # this run's number with its interval and unit
    test: str = ""  # n and the test
    detail: str = ""  # the notebook's sentence (shown below the fold)
    reason: str = ""  # why it is not testable (a reason of pcnn_explore.verdicts.REASONS, with its detail)
    n: int = 0  # the seeds (or episodes) per line it rests on; 0: not known
    p: float | None = None  # the one-sided p of the claim's direction, where a test gave one
    n_unit: str = "seed"  # what n counts ("seed", or "episode" for one recorded episode)


#: each shipped notebook's claim in at most about 15 words (the index's top table), by its name: what
#: its paper claims test, no more
SHORT_CLAIMS = {
    "00_pseudo_counts": "Pseudo-counts grow with real counts; PixelCNN's prediction gain never vanishes (Sec. 2.1, 5, 7)",
    "01_online_vs_shuffled": "Online, shuffled and with-replacement training learn alike (Fig. 2, left)",
    "02_episode_start_spikes": "The density model's loss spikes at episode starts (Fig. 2, middle)",
    "03_lr_schedules": "Lowest loss: constant 1e-3 (caption), or it or 0.1 n^-1/2 (text); n^-1 worst (Fig. 3)",
    "04_samples": "PixelCNN samples look better than CTS samples after 25K steps (Fig. 4)",
    "05_pg_montezuma": "PixelCNN's prediction gain is lower and smoother than CTS's, with sharper peaks (Fig. 9)",
    "06_conv_cts": "Convolutions explain part, not all, of PixelCNN's edge over CTS (App. C)",
    "07_dqn_pixelcnn": "The bonus makes DQN explore; DQN-PixelCNN beats DQN-CTS (Fig. 5)",
    "08_mmc_ablation": "Only the bonus with mixed Monte Carlo makes progress (Fig. 11)",
    "09_pg_scale": "The bonus is robust for scales c = 0.1 to 10 (Fig. 12; run with CTS)",
    "10_intrinsic_only": "The intrinsic reward alone trains an agent that explores and scores (Fig. 13)",
    "11_intrinsic_reward_episode": "The intrinsic reward peaks at milestones such as a new room (Fig. 10)",
    "12_exploration_on_a_laptop": "The bonus with MMC reaches a sparse reward that DQN misses",
    "13_reactor": "The bonus helps Reactor, yet DQN with it and MMC gains more (run with CTS)",
    "14_deep_sea_scaling": "The kit's question: how far up deep sea's size does the bonus solve?",
}

_UNITS = {"nats": "nats", "frames": "frames", "steps": "agent steps", "episodes": "episodes", "minutes": "minutes",
          "s": "s", "bits": "bits"}
_NAMES = {"cts": "CTS", "pixelcnn": "PixelCNN", "convcts": "ConvCTS", "dqn": "DQN", "mmc": "MMC", "pg": "PG",
          "auc": "AUC", "heldout": "held-out", "pos": "position bias", "inverse": "n^-1", "sqrt": "",
          "lr": "learning rate", "n": "n"}
_SUBJECTS = {"constant", "inverse", "cts", "pixelcnn", "convcts", "dqn", "random", "bonus", "kit", "paper", "compare"}


def _number(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) < 1e-2:
        mantissa, exp = f"{x:.0e}".split("e")
        return f"{mantissa}e{int(exp)}"
    return f"{x:g}"


def words(name: str) -> str:
    """A metrics name in words with its unit: ``final_loss_constant_0.0001_nats_per_seed`` ->
    ``final loss, constant 1e-4 (nats), per seed``; ``c0.1_solved_runs`` -> ``c0.1 solved runs``;
    ``dqn_mmc_beta`` -> ``DQN MMC mix`` (:func:`~pcnn_explore.report.tables.plain_words`)."""
    text = str(name)
    tail = ""
    if text.endswith("_per_seed"):
        text, tail = text[: -len("_per_seed")], ", per seed"
    text = text.replace("inverse_sqrt", "inverse sqrt")
    tokens = [t for t in re.split(r"[_\s]+", text) if t]
    unit = ""
    if len(tokens) > 1 and tokens[-1] in _UNITS:
        unit = f" ({_UNITS[tokens.pop()]})"
    out: list[str] = []
    for i, t in enumerate(tokens):
        if t == "inverse" and i + 1 < len(tokens) and tokens[i + 1] == "sqrt":
            shown = "n^-1/2"
        elif t == "sqrt" and i and tokens[i - 1] == "inverse":
            continue
        else:
            try:
                shown = _number(float(t)) if re.fullmatch(r"[-+]?\d*\.?\d+(e[-+]?\d+)?", t) else _NAMES.get(t, t)
            except ValueError:
                shown = _NAMES.get(t, t)
        if i and t in _SUBJECTS and out and not out[-1].endswith(","):
            out[-1] += ","
        out.append(shown)
    return plain_words(" ".join(w for w in out if w) + unit + tail)


def unverdict(text: str) -> str:
    """``text`` with the words of a verdict taken out (``named rates best: agrees: x = 1`` ->
    ``named rates best: x = 1``): what a profile that tests nothing may show of a notebook's reading."""
    words_ = "|".join(re.escape(w) for w in _ALL_WORDS)
    text = re.sub(rf"(?i)\b(?:{words_})\b(?: over \d+ seeds)?(?:: |\s*(?=\()|$)", "", str(text))
    return re.sub(r"\s{2,}", " ", text).strip(" :;")


def short_claim(name: str, paper_sentence: str = "") -> str:
    """The notebook's claim in at most about 15 words: :data:`SHORT_CLAIMS` by its name, else the
    paper's sentence up to its first colon, semicolon or bracket, cut to 15 words."""
    known = SHORT_CLAIMS.get(str(name))
    if known:
        return known
    first = re.split(r"[:;(]", str(paper_sentence or ""), maxsplit=1)[0].strip()
    cut = first.split()
    return plain_words(" ".join(cut[:15]) + (" ..." if len(cut) > 15 else ""))


def _f(x: Any) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "?"
    return f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else f"{float(x):.3g}"


def _finite_pair(iv: Any) -> bool:
    return (isinstance(iv, (list, tuple)) and len(iv) == 2
            and all(isinstance(v, (int, float)) and v is not None and math.isfinite(v) for v in iv))


def _interval(iv: Any) -> str:
    if _finite_pair(iv):
        return f", 95% [{_f(iv[0])}, {_f(iv[1])}]"
    if isinstance(iv, (list, tuple)) and len(iv) == 2:
        return ", 95% interval unbounded on these seeds"  # a sign flip over 3 seeds bounds nothing
    return ""


def _p(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def _reason(d: Decision, word: str, smoke: bool) -> str:
    """Why a ``not testable`` claim is not testable: its reason with its detail, ``too few seeds at this
    profile (needs 6 per line, has 3)``, ``not testable on this task: <why>``; "" for any other word."""
    if word != NOT_TESTABLE:
        return ""
    if smoke:
        return SMOKE_REASON
    reason = d.reason or TOO_FEW_SEEDS
    why = d.why.split(";")[0].strip()
    if not why:
        return reason
    return f"{reason}: {why}" if reason == NOT_ON_THIS_TASK else f"{reason} ({why})"


def _reading_number(reading: str, c: Claim) -> str:
    """One reading's number in a row of two: ``tf1, <number>, p = 0.0156, n = 8 (agrees)``."""
    parts = [reading, c.number or "no number"]
    if c.p is not None and c.number:
        parts.append(f"p = {c.p:.3g}")
    if c.n:
        parts.append(f"n = {c.n}")
    return ", ".join(parts) + f" ({c.word})"


def _row_of_readings(d: Decision, smoke: bool) -> Claim:
    """The row of a claim decided under the PixelCNN's two optimizer readings: the paper reading's word where
    the two agree, else :data:`pcnn_explore.study.DEPENDS_ON_OPTIMIZER`; both readings' numbers, each with its
    p, n and word; the paper reading's test and reason."""
    (n1, d1), (n2, d2) = d.readings
    r1, r2 = row(d1, smoke), row(d2, smoke)
    word = r1.word if r1.word == r2.word else DEPENDS_ON_OPTIMIZER
    number = "; ".join(_reading_number(n, r) for n, r in ((n1, r1), (n2, r2)))
    shown = unverdict(d.sentence) if smoke else d.sentence
    return Claim(r1.claim, r1.kind, word, number, r1.test, plain_words(shown), r1.reason if word == r1.word else "",
                 r1.n, None, r1.n_unit)


def row(d: Decision, smoke: bool = False) -> Claim:
    """The report's row of one decided claim (:class:`pcnn_explore.study.Decision`); a smoke run's reads
    ``not testable`` with the verdict words taken out of its sentence. A claim decided under the PixelCNN's
    two optimizer readings gives both readings' numbers (:func:`_row_of_readings`)."""
    if d.readings and tuple(k for k, _ in d.readings) == OPTIMIZER_READINGS:
        return _row_of_readings(d, smoke)
    c = d.claim
    word = NOT_TESTABLE if smoke else (word_of(d.word) or "no verdict")
    unit = f" ({c.unit})" if c.unit else ""
    number = ""
    a, b = d.values, d.values_b
    if d.test == "fisher" and a and b:
        ka, kb = sum(1 for v in a if v), sum(1 for v in b if v)
        ia, ib = ((_interval(i).replace(", 95% ", " ") for i in d.intervals) if len(d.intervals) == 2 else ("", ""))
        number = f"{c.label} {ka}/{len(a)}{ia} vs {kb}/{len(b)}{ib}"
    elif d.estimate is not None:
        shown = "" if d.test in ("not_testable", "reading") else _interval(d.interval)
        number = f"{c.label} {_f(d.estimate)}{unit}{shown}"
    n = d.n or 0
    how = d.method if " over " in d.method else ", ".join(x for x in (f"n = {n}" if n else "", d.method) if x)
    shown = unverdict(d.sentence) if smoke else d.sentence
    return Claim(plain_words(c.sentence), c.kind, word, plain_words(number.strip()), plain_words(how), plain_words(shown),
                 plain_words(_reason(d, word, smoke)), len(a) or n, _p(d.p), c.n_unit)


def decisions(metrics: Mapping | None) -> list[Decision]:
    """The decided claims of a notebook's metrics.json (:func:`pcnn_explore.study.decisions_of`); ``[]``
    for metrics without the claims record (written before it, or by a notebook that failed)."""
    if not isinstance(metrics, Mapping) or "schema" not in metrics:
        return []
    return decisions_of(metrics)


def claims_of(name: str, metrics: Mapping | None) -> list[Claim]:
    """Every claim row of one notebook's ``metrics.json``, the paper's first, then the kit's, each in the
    order the claims were made; ``[]`` when it records no claim."""
    smoke = isinstance(metrics, Mapping) and metrics.get("profile") == "smoke"
    found = [row(d, smoke) for d in decisions(metrics)]
    return [c for c in found if c.kind == "paper"] + [c for c in found if c.kind == "kit"]


def scope(metrics_by_name: Mapping[str, Mapping | None]) -> str:
    """One sentence: what the agent verdicts rest on (DeepSea sizes, episodes, agent steps and
    seeds, from the agent notebooks' ``settings``, or 14's ``protocol``); "" when no agent notebook
    is in the run."""
    parts = []
    for name, m in sorted(metrics_by_name.items()):
        s = ((m or {}).get("settings") or (m or {}).get("protocol")) if isinstance(m, Mapping) else None
        if not isinstance(s, Mapping):
            continue
        sizes = s.get("sizes", s.get("deep_sea_sizes"))
        episodes = s.get("episodes", s.get("deep_sea_episodes"))
        seeds = s.get("seeds")
        if sizes is None or episodes is None or not isinstance(seeds, list):
            continue
        sizes = [int(n) for n in (sizes if isinstance(sizes, list) else [sizes])]
        episodes = [int(e) for e in (episodes if isinstance(episodes, list) else [episodes])]
        if not sizes or not episodes:
            continue
        steps = max(episodes) * max(sizes)  # a DeepSea-N episode is N agent steps
        parts.append(f"{name[:2]}: DeepSea-{', '.join(str(n) for n in sizes)}, {max(episodes):,} episodes "
                     f"(up to {steps:,} agent steps a run), {len(seeds)} seed{'s' if len(seeds) != 1 else ''}")
    return "; ".join(parts)
