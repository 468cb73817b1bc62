"""Notebooks 07-10 on bsuite's deep-sea protocol: each figure's lines, its study profile, and its
claims decided with :mod:`pcnn_explore.experiments.agents.deep_sea_claims` (the rules and their thresholds
are stated there and in :data:`RULES`).

The paper's figures ran on Atari; on a CPU the claims are tested on DeepSea-N
(:mod:`pcnn_explore.envs.deep_sea`), the task built to need deep exploration. Choices, each stated in
the notebooks:

- the bonus model of Fig. 11, 12 and 13 is CTS (``bonus="cts"``), the paper's other density model:
  the paper's translation-invariant PixelCNN gives every DeepSea cell (nearly) the same pseudo-count
  (:data:`~pcnn_explore.experiments.agents.deep_sea_claims.NOT_TESTABLE_PIXELCNN`);
- every line sets MMC's beta explicitly (0 without MMC, ``mmc_beta`` with it, by default the kit's
  DeepSea value 0.5, :data:`pcnn_explore.envs.deep_sea.DEEP_SEA_MMC_BETA`; the paper's is 0.1), so DeepSea's
  preset never adds MMC silently;
- the other DeepSea settings are the kit's (:data:`pcnn_explore.envs.deep_sea.DEEP_SEA_DEFAULTS`), among
  them c held constant: Fig. 12's scales are then constant scales, and the paper's n^-1/2 decay
  against a constant c is the kit's own question (``pg_schedule="inverse_sqrt"`` runs the paper's).

At the smoke profile every claim is ``not testable at this profile`` (the rule's outcome is kept
under ``decided`` as a plumbing check).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from pcnn_explore.envs.deep_sea import DEEP_SEA_MMC_BETA
from pcnn_explore.experiments.agents import deep_sea_claims as claims
from pcnn_explore.experiments.agents.deep_sea_study import (
    DeepSeaStudy,
    DeepSeaStudySettings,
    StudyVariant,
    random_finds_within,
    random_success_rate,
    run_study,
    settings_of,
    study_variant,
)
from pcnn_explore.verdicts import binomial_interval, t_interval

__all__ = ["FIGURES", "RULES", "variants", "settings", "run", "decide", "metrics", "line_claims", "closing_note", "scale_key",
           "PAPER_SCALES", "interval", "per_seed_figure", "scaling_figure", "coverage_figure", "atari"]

FIGURES = {"fig5": "Fig. 5", "fig11": "Fig. 11", "fig12": "Fig. 12", "fig13": "Fig. 13"}
PAPER_SCALES = (0.1, 1.0, 10.0)
#: the study profile's part of the protocol where a figure needs another than the preset's (DeepSea-10,
#: 1,000 episodes): Fig. 13 asks whether the +1 is found, which a random policy does in 62% of
#: 1,000 DeepSea-10 episodes but only 6% of 1,000 DeepSea-14 episodes
STUDY_PART = {"fig13": dict(sizes=(14,), episodes=(1_000,))}
#: each figure's rule, in words (metrics.json's ``rules``)
RULES = {
    "fig5": "the bonus makes DQN explore: paired difference of the per-seed success rate (last quarter of the "
            "episodes) DQN-CTS - DQN, agrees when its 95% t interval lies above 0; the paper's PixelCNN against "
            "CTS is not testable on DeepSea; the position-biased PixelCNN is the kit's, never agreement",
    "fig11": "only the combination progresses: each agent's per-seed success rate against the random policy's "
             "2^-N (95% t interval above: progress; at or below: none); agrees when only the bonus with MMC progresses",
    "fig12": f"robust across c: each c's success rate within +-{claims.ROBUST_MARGIN:g} of c = 0.1's (95% paired t "
             "interval inside the margin); larger c sooner: paired difference of the first-+1 episode (censored at "
             "cap + 1) c = 10 - c = 0.1 below 0",
    "fig13": "the intrinsic reward alone explores: paired difference of the mean coverage (share of the N(N+1)/2 "
             "cells, averaged over the coverage curve) intrinsic-only - DQN above 0; finds the +1: seeds that found "
             "it, exact 95% interval above the random policy's chance within the same episodes",
}


#: each figure's claim in the paper's words (metrics.json's ``paper.verdict``)
PAPER_CLAIMS = {"fig5": "the bonus makes DQN explore: DQN-CTS and DQN-PixelCNN far ahead of DQN on hard exploration",
                "fig11": "only the bonus with MMC makes progress on hard, sparse-reward games",
                "fig12": "robust across c = 0.1 to 10; a larger c explores harder, peaks sooner",
                "fig13": "the intrinsic reward alone trains an agent that explores and scores"}


#: Fig. 11's DeepSea lines that stand for the paper's DQN-PixelCNN lines (the bonus model is CTS here)
_PAPER_LINES = {"fig11": {"bonus": "pixelcnn", "bonus_mmc": "pixelcnn_mmc"}}


def line_claims(figure: str, keys: Sequence[str]) -> dict[str, str]:
    """The paper's claim of each line (:data:`pcnn_explore.experiments.agents.agent_figures.FIGURES`) named
    as the summary names the line's success rate, ``<key>_success_rate_mean``, so the report shows
    each claim beside this run's number; a line the paper does not draw (the kit's) gets none."""
    from pcnn_explore.experiments.agents.agent_figures import FIGURES as ATARI

    said = ATARI[figure].claims
    lines = {k: _PAPER_LINES.get(figure, {}).get(k, k) for k in keys}
    return {f"{k}_success_rate_mean": said[line] for k, line in lines.items() if line in said}


def scale_key(c: float) -> str:
    """Metrics key of a PG scale: 0.1 -> "c0.1", 10 -> "c10"."""
    return f"c{c:g}"


def variants(figure: str, bonus: str = "cts", mmc_beta: float | None = None, scales: Sequence[float] = PAPER_SCALES,
             pg_schedule: str = "constant") -> list[StudyVariant]:
    """The lines of ``figure`` (a key of :data:`FIGURES`), MMC's beta explicit in each (``mmc_beta``
    None: the kit's DeepSea value 0.5)."""
    from pcnn_explore.density import label

    beta = DEEP_SEA_MMC_BETA if mmc_beta is None else float(mmc_beta)
    mmc = f" (MMC beta {beta:g})"
    if figure == "fig5":
        return [study_variant("dqn", mmc_beta=0.0),
                study_variant("cts_mmc", label="DQN-CTS" + mmc, mmc_beta=beta),
                study_variant("pixelcnn_mmc", label="DQN-PixelCNN" + mmc, mmc_beta=beta),
                study_variant("pixelcnn_pos_mmc", label="DQN-PixelCNN with position bias (the kit's)" + mmc,
                              mmc_beta=beta)]
    if figure == "fig11":
        return [study_variant("dqn", mmc_beta=0.0), study_variant("dqn_mmc", label="DQN + MMC" + mmc, mmc_beta=beta),
                study_variant(bonus, "bonus", f"DQN-{label(bonus)} without MMC", mmc_beta=0.0),
                study_variant(f"{bonus}_mmc", "bonus_mmc", f"DQN-{label(bonus)}" + mmc, mmc_beta=beta)]
    if figure == "fig12":
        if not scales or any(isinstance(c, bool) or not isinstance(c, (int, float)) or not c > 0 for c in scales):
            raise ValueError(f"scales must be positive numbers (the PG scales c), got {scales!r}")
        return [study_variant(f"{bonus}_mmc", scale_key(c), f"DQN-{label(bonus)}, c = {c:g} ({pg_schedule})",
                              mmc_beta=beta, pg_scale=float(c), pg_schedule=pg_schedule) for c in scales]
    if figure == "fig13":
        return [study_variant(f"{bonus}_mmc_intrinsic", "intrinsic_only",
                              f"DQN-{label(bonus)}, intrinsic reward only" + mmc, mmc_beta=beta),
                study_variant("dqn", mmc_beta=0.0)]
    raise ValueError(f"figure must be one of {', '.join(FIGURES)}, got {figure!r}")


def settings(figure: str, profile: str, seed: int | None = None, n_seeds: int | None = None,
             **given: Any) -> DeepSeaStudySettings:
    """The study settings of ``figure`` at ``profile`` (:func:`~pcnn_explore.experiments.agents.deep_sea_study.settings_of`;
    the study profile's part of the protocol from :data:`STUDY_PART` unless ``sizes`` / ``episodes`` are given)."""
    if figure not in FIGURES:
        raise ValueError(f"figure must be one of {', '.join(FIGURES)}, got {figure!r}")
    part = STUDY_PART.get(figure, {}) if profile == "study" else {}
    given = {**part, **{k: v for k, v in given.items() if v is not None}}
    return settings_of(profile, seed, n_seeds, **given)


def run(figure: str, study_settings: DeepSeaStudySettings, lines: Sequence[StudyVariant], output_dir,
        progress: bool = False) -> DeepSeaStudy:
    """Train (or read back) the study's runs under ``output_dir/runs``."""
    if figure not in FIGURES:
        raise ValueError(f"figure must be one of {', '.join(FIGURES)}, got {figure!r}")
    return run_study(study_settings, lines, output_dir, progress=progress)


def interval(values: Sequence[float]) -> tuple[float, float]:
    """The 95% t interval of per-seed values (NaN, NaN with one seed)."""
    return t_interval(values) if len(values) > 1 else (math.nan, math.nan)


def _threshold(study: DeepSeaStudy) -> float:
    return sum(random_success_rate(n) for n in study.settings.sizes) / len(study.settings.sizes)


def _mean_coverage(study: DeepSeaStudy, key: str) -> list[float]:
    per_size = [study.mean_coverage(key, n) for n in study.settings.sizes]
    return [sum(v) / len(v) for v in zip(*per_size)]


def decide(figure: str, study: DeepSeaStudy) -> dict[str, Any]:
    """The figure's claims on ``study``: ``{"verdict": the figure's word, "claims": {name: {verdict,
    sentence, ...}}}``. At the smoke profile each claim's verdict is ``not testable at this profile``
    and the rule's own outcome is kept as ``decided``."""
    seeds, rate = study.seeds, (lambda k: study.per_seed(k, "success_rate"))
    out: dict[str, Any] = {}
    if figure == "fig5":
        out["bonus_explores"] = claims.verdict_dict(claims.bonus_explores(rate("cts_mmc"), rate("dqn"), seeds, "DQN-CTS"))
        pc = claims.verdict_dict(claims.bonus_explores(rate("pixelcnn_mmc"), rate("dqn"), seeds, "DQN-PixelCNN"))
        out["pixelcnn_explores"] = {"verdict": "not testable at this profile", "sentence": claims.NOT_TESTABLE_PIXELCNN,
                                    "measured": pc}
        out["pixelcnn_against_cts"] = claims.pixelcnn_against_cts(rate("pixelcnn_mmc"), rate("cts_mmc"), seeds)
        kit = claims.verdict_dict(claims.bonus_explores(rate("pixelcnn_pos_mmc"), rate("dqn"), seeds,
                                                        "DQN-PixelCNN with position bias"))
        out["kit_position_pixelcnn_explores"] = {**kit, "kit": True,
                                                 "note": "the kit's model: a finding of the kit, never agreement with the paper"}
        main = "bonus_explores"
    elif figure == "fig11":
        out["only_combination_progresses"] = claims.only_combination_progresses(
            {k: rate(k) for k in study.keys}, "bonus_mmc", _threshold(study))
        main = "only_combination_progresses"
    elif figure == "fig12":
        keys = study.keys
        scales = sorted(keys, key=lambda k: float(k[1:]))
        out["robust_across_c"] = claims.robust_across_c({k: rate(k) for k in keys}, scales[0], seeds)
        out["larger_c_sooner"] = claims.verdict_dict(claims.larger_c_sooner(
            study.per_seed(scales[-1], "first_success_episode"), study.per_seed(scales[0], "first_success_episode"),
            seeds, (scales[-1], scales[0])))
        schedule = dict(study.variants[0].overrides).get("pg_schedule", "constant")
        out["schedule"] = {"verdict": "not testable at this profile", "kit": True,
                           "sentence": f"not testable at this profile: the scales ran with the {schedule} schedule; the "
                                       "paper's n^-1/2 decay against a constant c is the kit's own question (run "
                                       "pg_schedule='inverse_sqrt' beside it to ask it), not a claim of the paper"}
        main = "robust_across_c"
    elif figure == "fig13":
        out["intrinsic_covers_more"] = claims.verdict_dict(claims.intrinsic_covers_more(
            _mean_coverage(study, "intrinsic_only"), _mean_coverage(study, "dqn"), seeds))
        for n in study.settings.sizes:
            found = [study.run("intrinsic_only", n, s).first_success_episode is not None for s in seeds]
            chance = random_finds_within(n, study.settings.episode_cap(n))
            out[f"finds_reward_N{n}"] = {**claims.verdict_dict(claims.finds_reward(found, chance)), "chance": chance}
        main = "intrinsic_covers_more"
    else:
        raise ValueError(f"figure must be one of {', '.join(FIGURES)}, got {figure!r}")
    if study.settings.profile == "smoke":
        for c in out.values():
            c["decided"], c["verdict"] = c["verdict"], "not testable at this profile"
            c["sentence"] = "not testable at this profile: smoke runs check the plumbing only; " + c["sentence"]
    return {"verdict": out[main]["verdict"], "main": main, "rule": RULES[figure], "claims": out}


def metrics(figure: str, study: DeepSeaStudy, decided: dict[str, Any], atari: dict | None = None) -> dict[str, Any]:
    """metrics.json of a deep-sea notebook: profile, settings, lines, per-seed values (``per_seed``),
    intervals of the success rate and score per line, the claims with their verdicts, the scaling
    rows, the run time; ``atari``: the paper profile's Atari summary, where it ran."""
    rates = {k: study.per_seed(k, "success_rate") for k in study.keys}
    out = {"profile": study.settings.profile, "figure": FIGURES[figure], "settings": study.settings.to_dict(),
           "lines": {v.key: {"variant": v.variant, "label": v.display, "overrides": dict(v.overrides)}
                     for v in study.variants},
           "per_seed": study.metrics(),
           "intervals": {k: {"success_rate": list(interval(rates[k])),
                             "score": list(interval(study.per_seed_score(k))),
                             "solved_seeds": sum(r.solved for r in study.runs if r.key == k),
                             "runs": sum(1 for r in study.runs if r.key == k)} for k in study.keys},
           "verdict": decided["verdict"], "rule": decided["rule"], "claims": decided["claims"],
           "scaling": study.scaling_rows(), "wall_s": study.wall_s,
           "summary": {"verdict": decided["claims"][decided["main"]]["sentence"],
                       **{f"{k}_success_rate_mean": sum(rates[k]) / len(rates[k]) for k in study.keys},
                       **{f"{k}_solved_runs": f"{sum(r.solved for r in study.runs if r.key == k)} of "
                                              f"{sum(1 for r in study.runs if r.key == k)}" for k in study.keys},
                       "run_minutes": study.wall_s / 60},
           "paper": {"verdict": PAPER_CLAIMS[figure], **line_claims(figure, study.keys)},
           "main_figure": "deep_sea_scaling.png"}
    if atari is not None:
        out["atari"] = atari
    return out


def closing_note(figure: str, study: DeepSeaStudy, decided: dict[str, Any]) -> str:
    """The notebook's closing note: the part of the protocol run, each claim's verdict with its numbers, the run time."""
    s = study.settings
    part = ", ".join(f"DeepSea-{n} ({s.episode_cap(n):,} episodes)" for n in s.sizes)
    lines = [f"{FIGURES[figure]} on {part}, {len(s.seeds)} seeds ({', '.join(map(str, s.seeds))}), profile {s.profile}; "
             f"training (or reading back finished runs) took {study.wall_s / 60:.1f} min with {s.workers} workers.",
             f"Rule: {decided['rule']}.", f"Verdict: {decided['verdict']}."]
    lines += [f"- {name}: {c['sentence']}" for name, c in decided["claims"].items()]
    for k in study.keys:
        solved = sum(r.solved for r in study.runs if r.key == k)
        n = sum(1 for r in study.runs if r.key == k)
        low, high = binomial_interval(solved, n)
        lines.append(f"- {study.labels[k]}: solved {solved} of {n} runs by bsuite's rule (exact 95% [{low:.2f}, {high:.2f}]);"
                     f" per-seed success rate {', '.join(f'{v:.2f}' for v in study.per_seed(k, 'success_rate'))}")
    return "\n".join(lines)


def per_seed_figure(figure: str, study: DeepSeaStudy, field: str = "success_rate"):
    """Per-seed values of every line with their 95% t intervals (:func:`pcnn_explore.plots.deep_sea_study.plot_per_seed`):
    ``success_rate`` (the random policy's 2^-N dashed for Fig. 11), ``coverage`` (mean coverage, Fig. 13)
    or ``first_success_episode`` (censored at cap + 1, Fig. 12)."""
    from pcnn_explore.plots.deep_sea_study import plot_per_seed

    if field == "coverage":
        values = {study.labels[k]: _mean_coverage(study, k) for k in study.keys}
        ylabel = "mean coverage (share of the N(N+1)/2 cells)"
    else:
        values = {study.labels[k]: study.per_seed(k, field) for k in study.keys}
        ylabel = {"success_rate": "success rate, last quarter of the episodes",
                  "first_success_episode": "episode of the first +1 (never: cap + 1)"}.get(field, field)
    threshold = _threshold(study) if figure == "fig11" and field == "success_rate" else None
    return plot_per_seed(values, {k: interval(v) for k, v in values.items()}, ylabel, threshold,
                         "random policy 2^-N" if threshold is not None else "")


def scaling_figure(study: DeepSeaStudy):
    """The deep-sea scaling figure of the study's runs (:func:`pcnn_explore.plots.deep_sea.plot_deep_sea_scaling`)."""
    from pcnn_explore.plots.deep_sea import plot_deep_sea_scaling

    caps = ", ".join(f"{study.settings.episode_cap(n):,}" for n in study.settings.sizes)
    return plot_deep_sea_scaling(study.scaling_rows(), study.labels, None,
                                 f"Episodes to solve (bsuite's rule; {caps} episodes run)")


def coverage_figure(study: DeepSeaStudy, size: int | None = None):
    """Coverage over episodes on DeepSea-``size`` (default: the study's largest), every seed and the mean."""
    from pcnn_explore.plots.deep_sea_study import plot_coverage

    n = max(study.settings.sizes) if size is None else size
    return plot_coverage({study.labels[k]: study.coverage_curves(k, n, points=50) for k in study.keys},
                         f"DeepSea-{n}: cells visited over episodes (thin: seeds; thick: mean)")


_ATARI = {"fig5": "DqnBonusSettings", "fig11": "MmcAblationSettings", "fig12": "PgScaleSettings",
          "fig13": "IntrinsicOnlySettings"}


def atari(figure: str, profile: str, output_dir, seed: int | None = None, n_seeds: int | None = None, sweep_dir=None,
          progress: bool = False) -> dict[str, Any] | None:
    """At the paper profile: the figure's Atari grid as before (:func:`pcnn_explore.experiments.agents.agent_figures.run`
    under ``output_dir/atari``, or a finished sweep's runs with ``sweep_dir``), ``{"summary", "paper"}``,
    whose verdict counts every game the grid runs; None at any other profile."""
    if profile != "paper":
        return None
    from pcnn_explore.experiments.agents import agent_figures, agent_summary
    from pathlib import Path

    cls = getattr(agent_figures, _ATARI[figure])
    results = agent_figures.run(cls.for_notebook(profile, seed=seed or 0, n_seeds=n_seeds), Path(output_dir) / "atari",
                                sweep_dir=sweep_dir, progress=progress)
    return {"summary": agent_summary.summary(figure, results), "paper": agent_summary.paper(figure, results)}
