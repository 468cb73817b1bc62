"""Notebook 13's summary and metrics: the verdicts and one line per line and claim with its numbers
(:func:`summary`), the rows of the paper-against-run table (:func:`paper_rows`) and what the notebook
writes to ``metrics.json`` (:func:`metrics`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from pcnn_explore.experiments.agents.preregistered import LEVEL
from pcnn_explore.verdicts import binomial_interval
from pcnn_explore.experiments.agents.reactor_lines import LINES, _exploration
from pcnn_explore.experiments.agents.reactor_settings import ReactorStudySettings
from pcnn_explore.experiments.agents.reactor_claims import CLAIMS, PAPER, decide, kit_overall, overall

__all__ = ["summary", "paper_rows", "metrics"]


def _maps(settings: ReactorStudySettings) -> str:
    """How the seeds' DeepSea maps were drawn, for the summary's first line."""
    maps = [settings.mapping_of(s) for s in settings.seeds]
    if all(m is None for m in maps):
        return ", bsuite's map 42 for every seed"
    if len(set(maps)) == 1:
        return f", map {maps[0]} for every seed"
    return f", each on its own map: mapping seed = seed + 10,000 ({maps[0]}..{maps[-1]}, bsuite's rule)"


def summary(settings: ReactorStudySettings, study: dict[str, Any]) -> dict[str, Any]:
    """The paper verdict (:func:`overall`), the kit verdict (:func:`kit_overall`), the claims
    (:func:`decide`) and one line each with its numbers."""
    claims = decide(study, settings.seeds, settings.variants)
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
    for c in claims.values():
        p = "" if not c.get("p_value") == c.get("p_value") else f"; p = {c['p_value']:.3g}"
        lines.append(f"{c['kind']}: {c['claim']}: {c['sentence']} (test {c['test']}, n = {c['n']}{p})")
    return {"verdict": overall(settings.profile, claims), "kit_verdict": kit_overall(settings.profile, claims),
            "claims": claims, "lines": lines}


def paper_rows(summ: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(kind and quantity, the paper, this run: verdict, estimate, 95% interval, p, n) per claim, for
    :func:`pcnn_explore.report.paper_vs_run`."""
    paper = {c.name: c.paper for c in CLAIMS}
    rows = []
    for name, c in summ["claims"].items():
        what = f"{c['kind']}: {c['quantity']} " + " - ".join(c["labels"])
        if "estimate" in c:
            lo, hi = c["interval"]
            got = (f"{c['word']}: {c['estimate']:+.3f} [{lo:+.3f}, {hi:+.3f}], p = {c['p_value']:.3g}, "
                   f"n = {c['n']}")
        else:
            got = c["word"]
        rows.append((what, paper[name], got))
    return rows


def metrics(settings: ReactorStudySettings, study: dict[str, Any], summ: dict[str, Any],
            wall_s: float | None = None) -> dict[str, Any]:
    """What notebook 13 writes to ``metrics.json`` (with each line's kind, label and settings)."""
    lines = {v: {"kind": LINES[v].kind, "label": LINES[v].display, "variant": LINES[v].variant,
                 "settings": dict(LINES[v].overrides), "exploration": _exploration(v)} for v in settings.variants}
    return {"profile": settings.profile, "seeds": list(settings.seeds), "sizes": list(settings.sizes),
            "episodes": settings.episodes, "settings": settings.to_dict(), "lines": lines,
            "per_seed": study["per_seed"], "runs": study["runs"], "traces": study["traces"],
            "dqn_mmc_beta": study["dqn_mmc_beta"], "summary": summ, "paper": PAPER, "wall_s": wall_s,
            "main_figure": "reactor_deep_sea.png"}
