"""Notebook 13's decisions, summary and metrics: each claim of
:data:`pcnn_explore.study.preregistered.reactor.CLAIMS` decided on the study's per-seed values
(:func:`decisions`), one line per line and claim with its numbers (:func:`summary`), the rows of the
paper-against-run table (:func:`paper_rows`) and what the notebook writes to ``metrics.json``
(:func:`metrics`: the claims record of :func:`pcnn_explore.study.metrics_record`)."""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np

from pcnn_explore.experiments.agents.reactor_lines import LINES, _exploration
from pcnn_explore.experiments.agents.reactor_settings import STUDY_SEEDS, ReactorStudySettings
from pcnn_explore.run.variants import MMC_BETA
from pcnn_explore.study import Decision, decide, metrics_record, notebook_words
from pcnn_explore.study.preregistered.deep_sea import LEVEL
from pcnn_explore.study.preregistered.reactor import CLAIMS, measure_text
from pcnn_explore.verdicts import binomial_interval

__all__ = ["PAPER", "decisions", "summary", "paper_rows", "metrics"]

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
for _c in CLAIMS:  # a paper claim compares the paper's lines and baselines only
    assert _c.kind == "kit" or all(LINES[k].kind != "kit" for k in _c.lines), _c.name


def decisions(study: dict[str, Any], seeds: Sequence[int], variants, level: float = LEVEL) -> list[Decision]:
    """Each claim of :data:`CLAIMS` whose lines were all run, decided by :func:`pcnn_explore.study.decide`
    on ``study``'s per-seed values (``study["per_seed"][line][quantity]``, one per seed of ``seeds``):
    a paired claim on a's and b's values paired by seed; ``traces_cut`` on the MMC mix of the DQN-CTS
    runs minus the trace product of each seed whose Reactor-CTS runs replayed a large reward from an
    episode's first step (the other seeds have none). Each claim's design holds the study profile's declared
    seeds, the PixelCNN readings' re-run's 801-820 (:data:`~pcnn_explore.experiments.agents.reactor_settings.STUDY_SEEDS`)."""
    out = []
    for c in CLAIMS:
        if not all(k in variants for k in c.lines):
            continue
        c = dataclasses.replace(c, design=dataclasses.replace(c.design, seeds=STUDY_SEEDS))
        labels = tuple(LINES[k].display for k in c.lines)
        if c.quantity == "from_start_product":
            beta = float(study["dqn_mmc_beta"])
            got = [(int(s), float(p)) for s, p in zip(seeds, study["traces"][c.lines[0]][c.quantity]) if p == p]
            claim = dataclasses.replace(c, labels=labels, measure=measure_text(c.quantity, labels, beta))
            out.append(decide(claim, [beta - p for _, p in got], seeds=[s for s, _ in got], level=level))
            continue
        a, b = (study["per_seed"][k][c.quantity] for k in c.lines)
        claim = dataclasses.replace(c, labels=labels, measure=measure_text(c.quantity, labels))
        out.append(decide(claim, a, b, seeds=seeds, level=level))
    return out


def _maps(settings: ReactorStudySettings) -> str:
    """How the seeds' DeepSea maps were drawn, for the summary's first line."""
    maps = [settings.mapping_of(s) for s in settings.seeds]
    if all(m is None for m in maps):
        return ", bsuite's map 42 for every seed"
    if len(set(maps)) == 1:
        return f", map {maps[0]} for every seed"
    return f", each on its own map: mapping seed = seed + 10,000 ({maps[0]}..{maps[-1]}, bsuite's rule)"


def summary(settings: ReactorStudySettings, study: dict[str, Any]) -> dict[str, Any]:
    """``{"word", "kit_word"}`` (the paper claims' and the kit claims' words,
    :func:`pcnn_explore.study.notebook_words`), ``"decisions"`` (:func:`decisions`) and ``"lines"``: one
    line each with its numbers."""
    decided = decisions(study, settings.seeds, settings.variants)
    sizes = ", ".join(str(n) for n in settings.sizes)
    lines = [f"DeepSea-N, N = {sizes}, {settings.episodes} episodes, {len(settings.seeds)} seeds "
             f"({', '.join(map(str, settings.seeds))}{_maps(settings)}); a uniformly random policy finds the +1 in 2^-N of its "
             f"episodes ({0.5 ** min(settings.sizes):.2g} at N = {min(settings.sizes)}):"]
    for v, row in study["per_seed"].items():
        k, n = sum(x == 1.0 for x in row["solved"]), len(row["solved"])
        lo, hi = binomial_interval(k, n, LEVEL)
        lines.append(f"  {LINES[v].display} ({LINES[v].kind}, {_exploration(v)}): AUC per seed "
                     f"{', '.join(f'{x:.3f}' for x in row['auc'])} (mean {np.mean(row['auc']):.3f}); solved in time "
                     f"at bsuite's logged episode on every size: {k}/{n} seeds [{lo:.2f}, {hi:.2f}] (95% Clopper-Pearson)")
    for d in decided:
        p = "" if d.p is None else f"; p = {d.p:.3g}"
        lines.append(f"{d.kind}: {d.claim.sentence}: {d.sentence} (test {d.test}, n = {d.n}{p})")
    word, kit = notebook_words(decided)
    return {"word": word, "kit_word": kit, "decisions": decided, "lines": lines}


def paper_rows(summ: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(kind and quantity, the paper, this run: word, estimate, 95% interval, p, n) per claim, for
    :func:`pcnn_explore.report.paper_vs_run`."""
    rows = []
    for d in summ["decisions"]:
        what = f"{d.kind}: {d.claim.quantity} " + " - ".join(d.claim.labels)
        lo, hi = d.interval
        got = d.word if d.estimate is None or lo is None or d.p is None else (
            f"{d.word}: {d.estimate:+.3f} [{lo:+.3f}, {hi:+.3f}], p = {d.p:.3g}, n = {d.n}")
        rows.append((what, d.claim.paper, got))
    return rows


def metrics(settings: ReactorStudySettings, study: dict[str, Any], summ: dict[str, Any],
            wall_s: float | None = None) -> dict[str, Any]:
    """What notebook 13 writes to ``metrics.json`` (with each line's kind, label and settings, and the
    claims record of :func:`pcnn_explore.study.metrics_record`)."""
    lines = {v: {"kind": LINES[v].kind, "label": LINES[v].display, "variant": LINES[v].variant,
                 "settings": dict(LINES[v].overrides), "exploration": _exploration(v)} for v in settings.variants}
    return {"profile": settings.profile, "seeds": list(settings.seeds), "sizes": list(settings.sizes),
            "episodes": settings.episodes, "settings": settings.to_dict(), "lines": lines,
            "per_seed": study["per_seed"], "runs": study["runs"], "traces": study["traces"],
            "dqn_mmc_beta": study["dqn_mmc_beta"], "summary": {"lines": summ["lines"]}, "paper": PAPER,
            "wall_s": wall_s, "main_figure": "reactor_deep_sea.png", **metrics_record(summ["decisions"])}
