"""Every notebook's findings as one list of claims, whatever shape its ``metrics.json`` has.

The index (:mod:`pcnn_explore.report.index`) shows one row per claim: the claim in plain words, its
verdict word, this run's number with its interval and unit, and n with the test. The notebooks
write their findings in four shapes, each read here by an adapter (:func:`claims_of`):

- ``claims``: ``{name: {kind, claim, verdict, sentence, estimate, interval, n, method, quantity,
  labels, values, values_b}}`` (07-10; 13 keeps the same under ``summary.claims``, with ``word``; the
  density notebooks 00-06 and 11 from 0.3 on, and any report re-decided by
  :mod:`pcnn_explore.report.rerender`);
- ``summary.findings`` and ``summary.lines`` (12): a finding's ``answer`` (a verdict word,
  ``holds``, ``does not hold`` or ``not run at this profile``) and its line of text;
- ``summary.verdict`` alone (the density notebooks 00-06, 11): each sub-claim the sentence names
  (``name: word: quantity = v, 95% interval [lo, hi] (test over n seeds)``) is a claim; with none,
  the notebook's verdict is one claim, the paper's sentence.

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
from pcnn_explore.verdicts import NOT_TESTABLE, TOO_FEW_SEEDS, VERDICTS, reason_of, word_of

__all__ = ["Claim", "claims_of", "words", "unverdict", "short_claim", "NOT_TESTABLE", "SMOKE_REASON"]

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
    "03_lr_schedules": "Constant 1e-3 and 0.1 n^-1/2 each give the lowest loss; n^-1 worst (Fig. 3)",
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

#: notebook 12's findings in plain words, by name
_FINDINGS = {
    "deep_sea": "the bonus makes DQN reach DeepSea's +1 where DQN does not",
    "deep_sea_kit": "the position-biased PixelCNN's bonus reaches it where DQN does not",
    "strict_goal": "at N of 20 or more the bonus agents reach the goal late in every seed",
    "coverage": "on the egocentric task intrinsic-only agents visit twice DQN's distinct cells",
    "location": "CTS and the position-biased PixelCNN rank DeepSea cells by visits; PixelCNN does not",
}
_ANSWERS = {"holds": "agrees", "does not hold": "differs", "not run at this profile": NOT_TESTABLE}

#: a quantity's words and unit
_QUANTITIES = {
    "solved": ("seeds solved", ""), "success_rate": ("success rate", "share of episodes"),
    "auc": ("AUC", "share of episodes"), "coverage": ("coverage", "share of cells"),
    "first_success_episode": ("first success", "episodes"), "found": ("seeds that found the +1", ""),
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


def _claim_order(name: str) -> list[str]:
    """The order a notebook's claims were fixed in (the agent plans, 13's claims), to show them so."""
    try:
        if str(name).startswith("13"):
            from pcnn_explore.experiments.agents.reactor_claims import CLAIMS

            return [c.name for c in CLAIMS]
        from pcnn_explore.experiments.agents.preregistered import PLANS

        plan = PLANS.get(str(name)[:2])
        return [c.name for c in plan.claims] if plan is not None else []
    except ImportError:  # pragma: no cover - the report reads metrics without the agents installed
        return []


def _ordered(name: str, records: Mapping[str, Any]) -> list[str]:
    """The keys of a notebook's claims records in the order its claims were made: each record's own
    ``order`` (0 first; the density notebooks write it, since metrics.json sorts its keys), else the
    notebook's fixed plan (:func:`_claim_order`), else the records' own order; records without an
    ``order`` after those with one."""
    plan = _claim_order(name)

    def rank(k: str) -> tuple[int, int]:
        r = records[k]
        own = r.get("order") if isinstance(r, Mapping) else None
        if isinstance(own, int) and not isinstance(own, bool):
            return (0, own)
        return (1, plan.index(k) if k in plan else len(plan))

    return sorted(records, key=rank)


def _word(text: Any, smoke: bool) -> str:
    if smoke:
        return NOT_TESTABLE
    w = word_of(str(text or ""))
    return w or _ANSWERS.get(str(text or "").strip(), "no verdict")


def _reason(word: str, sentence: str, smoke: bool) -> str:
    """Why a ``not testable`` claim is not testable: its reason (:data:`pcnn_explore.verdicts.REASONS`)
    with the detail its sentence gives, ``too few seeds at this profile (needs 6 per line, has 3)``;
    "" for any other word. A sentence naming no reason (``not testable at this profile``, before 0.3)
    reads as too few seeds."""
    if word != NOT_TESTABLE:
        return ""
    if smoke:
        return SMOKE_REASON
    text = str(sentence or "").strip()
    reason = reason_of(text) or TOO_FEW_SEEDS
    at = text.lower().find(reason)
    if at >= 0:
        tail = text[at + len(reason):].split(";")[0].strip(" :")
        if tail.startswith("(") and tail.count("(") > tail.count(")"):  # its detail went on past the ";"
            tail += ")"
        bracket = re.match(r"\([^()]*\)", tail)
        tail = bracket.group(0) if bracket else tail
    else:
        tail = re.sub(r"(?i)^not testable(?: at this profile)?:?\s*", "", text).split(";")[0].strip()
    if not tail:
        return reason
    return f"{reason} {tail}" if tail.startswith("(") else f"{reason}: {tail}"


def _p(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def _from_record(name: str, c: Mapping, smoke: bool) -> Claim:
    """One claim of the ``claims`` shape (07-10, 13, and 00-06 and 11 from 0.3 on)."""
    sentence = str(c.get("sentence") or "")
    word = _word(c.get("verdict") or c.get("word") or sentence, smoke)
    quantity = str(c.get("quantity") or "")
    what, unit = _QUANTITIES.get(quantity, (words(quantity) if quantity else "", ""))
    test = str(c.get("test") or "")
    number = ""
    a, b = c.get("values"), c.get("values_b")
    intervals = c.get("intervals") or []
    if test == "fisher" and isinstance(a, list) and isinstance(b, list) and a and b:
        ka, kb = int(sum(1 for v in a if v)), int(sum(1 for v in b if v))
        ia = _interval(intervals[0]).replace(", 95% ", " ") if len(intervals) == 2 else ""
        ib = _interval(intervals[1]).replace(", 95% ", " ") if len(intervals) == 2 else ""
        number = f"{what} {ka}/{len(a)}{ia} vs {kb}/{len(b)}{ib}"
    elif isinstance(c.get("estimate"), (int, float)) and test != "not_testable":
        diff = " difference" if len(c.get("labels") or ()) == 2 else ""
        label = str(c.get("label") or "") or f"{what}{diff}"
        number = f"{label} {_f(c['estimate'])}" + (f" ({unit})" if unit else "") + _interval(c.get("interval"))
    p = _p(c.get("p_value"))
    method = str(c.get("method") or "")
    n = c.get("n") if isinstance(c.get("n"), int) and not isinstance(c.get("n"), bool) else 0
    per_line = int(c.get("n_per_line") or 0) or (len(a) if isinstance(a, list) and a else n)
    how = method if " over " in method else ", ".join(x for x in (f"n = {n}" if n else "", method) if x)
    claim = plain_words(str(c.get("claim") or words(name)))
    kind = "kit" if str(c.get("kind") or "paper") == "kit" else "paper"
    shown = unverdict(sentence) if smoke else sentence
    return Claim(claim, kind, word, plain_words(number.strip()), plain_words(how), plain_words(shown),
                 plain_words(_reason(word, sentence, smoke)), per_line, p, str(c.get("n_unit") or "seed"))


_SUB = re.compile(
    r"(?:^|; |\(|: )(?P<name>[^:;()]+?): (?P<word>" + "|".join(re.escape(w) for w in _ALL_WORDS) +
    r"): (?P<q>[^;=]+?) = (?P<v>[-+0-9.e]+), 95% interval \[(?P<lo>[^,\]]+), (?P<hi>[^\]]+)\] "
    r"\((?P<test>[^()]+?) over (?P<n>\d+) seeds\)(?P<rest>[^;]*)")
#: a unit at the end of a quantity: a word, never a number (``b - (-0.5)`` is no unit)
_UNIT = re.compile(r"\s*\(([A-Za-z][A-Za-z ]*)\)$")


def _schedules(text: str) -> str:
    """The learning-rate schedules' keys in a density notebook's words as the paper writes them:
    ``inverse_sqrt`` -> ``n^-1/2``, ``inverse`` -> ``n^-1``."""
    return re.sub(r"\binverse\b", "n^-1", re.sub(r"\binverse_sqrt\b", "n^-1/2", text))


def _from_sentence(name: str, sentence: str, paper: str, smoke: bool) -> list[Claim]:
    """The sub-claims a density notebook's verdict sentence names (before 0.3); else the sentence as one claim."""
    found = []
    for m in _SUB.finditer(sentence):
        q = _schedules(m["q"].strip())
        unit = _UNIT.search(q)
        q_words = q[: unit.start()] if unit else q
        number = f"{q_words} = {m['v']}" + (f" {unit.group(1)}" if unit else "") + f", 95% [{m['lo']}, {m['hi']}]"
        p = re.search(r"\bp = ([-+0-9.e]+)", m["rest"])
        detail = m.group(0).lstrip("; (:").strip()
        word = NOT_TESTABLE if smoke else (word_of(m["word"]) or m["word"])
        found.append(Claim(plain_words(_schedules(m["name"].strip())), "paper", word, plain_words(number),
                           f"{m['test'].strip()} over {m['n']} seeds", unverdict(detail) if smoke else detail,
                           _reason(word, m["word"], smoke), int(m["n"]), float(p.group(1)) if p else None))
    if found:
        return found
    word = _word(sentence, smoke)
    return [Claim(short_claim(name, paper), "paper", word, "", "", unverdict(sentence) if smoke else sentence,
                  _reason(word, sentence, smoke))]


def _from_findings(summary: Mapping, smoke: bool) -> list[Claim]:
    """Notebook 12's findings, each with its line of text (before 0.3; from 0.3 on 12 keeps ``claims``)."""
    lines = [str(x) for x in summary.get("lines") or [] if isinstance(x, str) and not x.startswith(" ")]
    used: set[int] = set()
    out = []
    for f in summary.get("findings") or []:
        if not isinstance(f, Mapping):
            continue
        answer, kind = str(f.get("answer") or ""), "kit" if f.get("kind") == "kit" else "paper"
        line = ""
        for i, text in enumerate(lines):
            if i not in used and text.startswith(kind) and f": {answer}" in text:
                used.add(i)
                line = text
                break
        number = ""
        m = re.search(re.escape(f": {answer}") + r" \((.*)\)$", line)
        if m:
            number = m.group(1)
        claim = _FINDINGS.get(str(f.get("name")), words(str(f.get("name") or "")))
        word = _word(answer, smoke)
        out.append(Claim(claim, kind, word, plain_words(unverdict(number) if smoke else number), "",
                         plain_words(unverdict(line) if smoke else line), _reason(word, answer, smoke)))
    return out


def claims_of(name: str, metrics: Mapping | None) -> list[Claim]:
    """Every claim of one notebook's ``metrics.json``, the paper's first, then the kit's (see the
    module docstring); ``[]`` when it records no finding."""
    metrics = metrics if isinstance(metrics, Mapping) else {}
    smoke = metrics.get("profile") == "smoke"
    summary = metrics.get("summary") if isinstance(metrics.get("summary"), Mapping) else {}
    paper = metrics.get("paper") if isinstance(metrics.get("paper"), Mapping) else {}
    records = metrics.get("claims") if isinstance(metrics.get("claims"), Mapping) else summary.get("claims")
    if isinstance(records, Mapping) and records:
        keys = _ordered(name, records)
        found = [_from_record(k, records[k], smoke) for k in keys if isinstance(records[k], Mapping)]
    elif summary.get("findings"):
        found = _from_findings(summary, smoke)
    elif summary.get("verdict"):
        found = _from_sentence(name, str(summary["verdict"]), str(paper.get("verdict") or ""), smoke)
    else:
        found = []
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
