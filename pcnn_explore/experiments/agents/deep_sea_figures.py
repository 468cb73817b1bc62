"""Notebooks 07-10 on bsuite's deep-sea task: each figure's lines, its part of the protocol and its
claims, all read from the fixed plan of :mod:`pcnn_explore.study.preregistered.deep_sea`, decided
by :func:`pcnn_explore.study.decide` on the study's per-seed values
(:func:`pcnn_explore.experiments.agents.deep_sea_claims.decisions`).

The paper's figures ran on Atari; on a CPU the claims are tested on DeepSea-N
(:mod:`pcnn_explore.envs.deep_sea`, bsuite's deep_sea), the task built to need deep exploration.
Every line states its whole method (:mod:`pcnn_explore.experiments.agents.lines`): the paper's line
per density model, its baselines, and the kit's additions as kit lines with kit verdicts. A paper
verdict combines the notebook's paper claims, each comparing the paper's lines with a baseline under
the same exploration rule; the kit verdict combines its kit claims.

Seeds: the study profile runs the plan's verdict seeds (701 and up, as many as its power analysis
chose, each with its declared mapping seed, :func:`~pcnn_explore.study.preregistered.deep_sea.mapping_for`)
on the plan's sizes and episode caps, and refuses, before any training, tuning seeds, the seen seeds
401-410 (the pilot's) or too few seeds for a claim's test to reach its level. At the smoke profile
(2 seeds) every test is "not testable: too few seeds at this profile" by its own arithmetic.

Fig. 5 (notebook 07) runs under the PixelCNN's optimizer readings, one run per reading (``density_optimizer``
of its settings: ``tf1``, the paper's and the default, or ``torch``): each reading's plan, lines and claims
(:func:`pcnn_explore.experiments.agents.deep_sea_readings.reading_plan`), on the re-run's new verdict seeds
801-840 at the study profile (anything else refused,
:func:`~pcnn_explore.study.preregistered.pixelcnn_readings.check_new_seeds`). Figs. 11-13 train no PixelCNN
and take no reading.
"""
from __future__ import annotations

from typing import Any, Sequence

from pcnn_explore.experiments.agents import deep_sea_claims as claims
from pcnn_explore.experiments.agents.deep_sea_study import (
    DeepSeaStudy,
    DeepSeaStudySettings,
    StudyVariant,
    run_study,
    settings_of,
)
from pcnn_explore.study import Decision, metrics_record, notebook_words
from pcnn_explore.study.preregistered import deep_sea as preregistered
from pcnn_explore.study.preregistered.deep_sea import random_finds_within, random_success_rate
from pcnn_explore.verdicts import binomial_interval

__all__ = ["FIGURES", "variants", "settings", "run", "decide", "metrics", "closing_note", "plan", "interval",
           "per_seed_figure", "scaling_figure", "coverage_figure", "atari", "check_study_settings", "describe_plan"]

FIGURES = {"fig5": "Fig. 5", "fig11": "Fig. 11", "fig12": "Fig. 12", "fig13": "Fig. 13"}
#: the figure whose PixelCNN lines run under the PixelCNN's optimizer readings (notebook 07)
READINGS_FIGURE = "fig5"
#: the test of each claim kind, for the seeds check (share needs as many as sign flip)
_TEST_FOR_SEEDS = {"fisher": "fisher", "sign_flip": "sign_flip", "sign_flip_tost": "sign_flip", "share": "sign_flip"}


def _check_figure(figure: str) -> None:
    if figure not in FIGURES:
        raise ValueError(f"figure must be one of {', '.join(FIGURES)}, got {figure!r}")


def plan(figure: str, reading: str | None = None) -> preregistered.Plan:
    """The fixed plan of ``figure`` (:func:`pcnn_explore.study.preregistered.deep_sea.plan`); Fig. 5's under the
    PixelCNN's optimizer ``reading`` (None: tf1, the paper's;
    :func:`~pcnn_explore.experiments.agents.deep_sea_readings.reading_plan`). ValueError for a reading given to a
    figure that trains no PixelCNN."""
    _check_figure(figure)
    if figure == READINGS_FIGURE:
        from pcnn_explore.experiments.agents.deep_sea_readings import reading_plan

        return reading_plan(reading)
    if reading is not None:
        raise ValueError(f"{FIGURES[figure]} trains no PixelCNN line: its plan takes no optimizer reading "
                         f"(density_optimizer None), got {reading!r}")
    return preregistered.plan(figure)


def variants(figure: str, reading: str | None = None) -> list[StudyVariant]:
    """The lines of ``figure``'s plan (under ``reading``, :func:`plan`), in its order
    (:data:`pcnn_explore.experiments.agents.lines.LINES`); ValueError where a paper claim would compare a kit
    line or lines with different exploration rules."""
    from pcnn_explore.run.lines import line

    p = plan(figure, reading)
    lines = [line(k) for k in p.lines]
    claims.check_plan(p, {v.key: v for v in lines})
    return lines


def check_study_settings(figure: str, s: DeepSeaStudySettings) -> None:
    """At the study profile: ValueError, before any training, for a tuning seed, a seen seed (Fig. 5: any seed
    but the re-run's new verdict seeds) or fewer seeds than a claim's exact test needs to reach the plan's level."""
    from pcnn_explore.verdicts import seeds_needed

    if s.profile != "study":
        return
    p = plan(figure, s.density_optimizer)
    tuned = sorted(set(s.seeds) & set(preregistered.TUNING_SEEDS))
    if tuned:
        raise ValueError(f"seeds {tuned} are tuning seeds (preregistered.TUNING_SEEDS): a verdict is never decided on "
                         f"them; use the plan's seeds {p.seeds[0]}..{p.seeds[-1]} (seed=None) or others")
    seen = sorted(set(s.seeds) & set(preregistered.PILOT_SEEDS))
    if seen:
        raise ValueError(f"seeds {seen} are the seen seeds 401-410 (preregistered.PILOT_SEEDS, now pilot data): a "
                         f"verdict is never decided on them; use the plan's seeds {p.seeds[0]}..{p.seeds[-1]} (seed=None)")
    if figure == READINGS_FIGURE:
        from pcnn_explore.study.preregistered.pixelcnn_readings import check_new_seeds

        check_new_seeds(s.seeds, f"{FIGURES[figure]} under the PixelCNN's optimizer readings: ")
    for c in p.claims:
        if c.test in _TEST_FOR_SEEDS:
            need = seeds_needed(_TEST_FOR_SEEDS[c.test], preregistered.LEVEL)
            if len(s.seeds) < need:
                raise ValueError(f"{len(s.seeds)} seeds cannot decide claim {c.name} at the study profile: its "
                                 f"{c.test} test needs at least {need} seeds to reach its level; give n_seeds >= {need}")


def settings(figure: str, profile: str, seed: int | None = None, n_seeds: int | None = None,
             density_optimizer: str | None = None, **given: Any) -> DeepSeaStudySettings:
    """The study settings of ``figure`` at ``profile``: at the study profile the plan's sizes, episodes
    and seeds unless given (checked by :func:`check_study_settings`); other profiles their preset. Fig. 5's
    under the PixelCNN's optimizer reading ``density_optimizer`` (None: tf1, the paper's); another figure
    takes none (ValueError)."""
    p = plan(figure, density_optimizer)
    if figure == READINGS_FIGURE:
        from pcnn_explore.experiments.agents.deep_sea_readings import check_reading

        given["density_optimizer"] = check_reading(density_optimizer)
    given = {k: v for k, v in given.items() if v is not None}
    if profile == "study":
        every = (("stop_when_solved", True), ("tensorboard", False)) if p.stop_when_solved else (("tensorboard", False),)
        given = {"sizes": p.sizes, "episodes": p.episodes, "mapping_seed": preregistered.PER_SEED,
                 "train_overrides": every, **given}
        if seed is None and n_seeds is None:
            given.setdefault("seeds", p.seeds)
        elif seed is None:
            seed = p.seeds[0]
    s = settings_of(profile, seed, n_seeds, **given)
    check_study_settings(figure, s)
    return s


def run(figure: str, study_settings: DeepSeaStudySettings, lines: Sequence[StudyVariant], output_dir,
        progress: bool = False) -> DeepSeaStudy:
    """Train (or read back) the study's runs under ``output_dir/runs`` (the settings checked first)."""
    _check_figure(figure)
    check_study_settings(figure, study_settings)
    study_settings.check_lines(lines)
    return run_study(study_settings, lines, output_dir, progress=progress)


def interval(values: Sequence[float]) -> tuple[float, float]:
    """The exact 95% interval of the mean of per-seed values (sign-flip test inversion); NaN where too
    few seeds bound it."""
    from pcnn_explore.verdicts import shown_interval, sign_flip_interval

    return shown_interval(values, sign_flip_interval, preregistered.LEVEL)


def _threshold(study: DeepSeaStudy) -> float:
    return sum(random_success_rate(n) for n in study.settings.sizes) / len(study.settings.sizes)


def chance(study: DeepSeaStudy) -> float:
    """The random policy's chance of finding the +1 within the study's episodes, mean over its sizes."""
    sizes = study.settings.sizes
    return sum(random_finds_within(n, study.settings.episode_cap(n)) for n in sizes) / len(sizes)


def decide(figure: str, study: DeepSeaStudy) -> list[Decision]:
    """The figure's claims decided on ``study``'s per-seed values
    (:func:`~pcnn_explore.experiments.agents.deep_sea_claims.decisions`), in the plan's order."""
    p = plan(figure, study.settings.density_optimizer)
    claims.check_plan(p, {v.key: v for v in study.variants})
    return claims.decisions(p, lambda k, q: claims.claim_values(study, k, q), study.labels, chance(study))


def metrics(figure: str, study: DeepSeaStudy, decided: list[Decision], atari: dict | None = None) -> dict[str, Any]:
    """metrics.json of a deep-sea notebook: profile, settings, the plan, each line with its full resolved
    settings, per-seed values, the claims record (:func:`pcnn_explore.study.metrics_record`), the
    scaling rows, the run time; ``atari``: the paper profile's Atari summary, where it ran. Fig. 5's settings
    name the PixelCNN's optimizer reading it ran under (``density_optimizer``), which a take of both readings'
    runs reads (:func:`pcnn_explore.report.take.joined_metrics`)."""
    from pcnn_explore.envs.deep_sea import deep_sea_id
    from pcnn_explore.run.lines import exploration_rule, resolved_settings

    p = plan(figure, study.settings.density_optimizer)

    env = deep_sea_id(study.settings.sizes[0])
    rates = {k: study.per_seed(k, "success_rate") for k in study.keys}
    solved = {k: sum(r.solved for r in study.runs if r.key == k) for k in study.keys}
    runs = {k: sum(1 for r in study.runs if r.key == k) for k in study.keys}
    out = {"profile": study.settings.profile, "figure": FIGURES[figure], "settings": study.settings.to_dict(),
           "plan": p.to_dict(),
           "lines": {v.key: {"variant": v.variant, "label": v.display, "kind": v.kind,
                             "exploration": exploration_rule(v), "overrides": dict(v.overrides),
                             "settings": resolved_settings(v, env, study.settings.profile)} for v in study.variants},
           "per_seed": study.metrics(),
           "intervals": {k: {"success_rate": list(interval(rates[k])), "solved_seeds": solved[k], "runs": runs[k],
                             "solved_exact": list(binomial_interval(solved[k], runs[k]))} for k in study.keys},
           "scaling": study.scaling_rows(), "wall_s": study.wall_s,
           "summary": {**{f"{k}_solved_runs": f"{solved[k]} of {runs[k]}" for k in study.keys},
                       "run_minutes": study.wall_s / 60},
           "paper": {"verdict": p.paper},
           "main_figure": "deep_sea_scaling.png", **metrics_record(decided)}
    if atari is not None:
        out["atari"] = atari
    return out


def _part(study: DeepSeaStudy) -> str:
    s = study.settings
    sizes = ", ".join(f"DeepSea-{n} ({s.episode_cap(n):,} episodes)" for n in s.sizes)
    reading = "" if s.density_optimizer is None else f", the PixelCNN's optimizer reading {s.density_optimizer}"
    return f"{sizes}, {len(s.seeds)} seeds{reading}"


def closing_note(figure: str, study: DeepSeaStudy, decided: list[Decision]) -> str:
    """The notebook's closing note: the part of the protocol run, the paper verdict and each paper claim
    with its test, p and interval, then the kit's lines beside it, each line's solved count."""
    s = study.settings
    word, kit = notebook_words(decided)
    lines = [f"{FIGURES[figure]} on {_part(study)} ({', '.join(map(str, s.seeds))}), profile {s.profile}; "
             f"training (or reading back finished runs) took {study.wall_s / 60:.1f} min with {s.workers} workers.",
             f"Paper verdict: {word}."]
    for kind in ("paper", "kit"):
        if kind == "kit" and kit:
            lines.append(f"Kit verdict (the kit's additions, never part of the paper verdict): {kit}.")
        lines += [f"- [{kind}] {d.claim.sentence} ({' vs '.join(d.claim.lines)}): {d.sentence}"
                  for d in decided if d.kind == kind]
    for k in study.keys:
        solved = sum(r.solved for r in study.runs if r.key == k)
        n = sum(1 for r in study.runs if r.key == k)
        low, high = binomial_interval(solved, n)
        lines.append(f"- {study.labels[k]}: solved {solved} of {n} runs by bsuite's rule (exact 95% [{low:.2f}, {high:.2f}]);"
                     f" per-seed success rate {', '.join(f'{v:.2f}' for v in study.per_seed(k, 'success_rate'))}")
    return "\n".join(lines)


def per_seed_figure(figure: str, study: DeepSeaStudy, field: str = "success_rate"):
    """Per-seed values of every line with the exact 95% interval of their mean (:func:`pcnn_explore.plots.deep_sea_study.plot_per_seed`):
    ``success_rate`` (the random policy's 2^-N dashed for Fig. 11), ``coverage`` (mean coverage, Fig. 13)
    or ``first_success_episode`` (censored at cap + 1, Fig. 12)."""
    from pcnn_explore.plots.deep_sea_study import plot_per_seed

    if field == "coverage":
        values = {study.labels[k]: list(claims.claim_values(study, k, "coverage").values()) for k in study.keys}
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


def describe_plan(figure: str, reading: str | None = None) -> str:
    """The fixed plan of ``figure`` (under ``reading``, :func:`plan`) in words: the paper's sentence, the study
    part and seeds, each line with its kind and exploration rule, and each claim with its lines, quantity, test
    and margin."""
    from pcnn_explore.run.lines import exploration_rule, line

    p = plan(figure, reading)
    out = [f"{p.figure}: {p.paper}", f"Study profile: {p.scope}; seeds {p.seeds[0]}-{p.seeds[-1]} "
           f"({len(p.seeds)}), each with its own mapping seed (seed + {preregistered.MAPPING_OFFSET:,}) drawn by "
           f"bsuite's rule; budget about {p.budget_minutes:g} minutes on 2 cores.", "Lines:"]
    out += [f"  {k:<22} {line(k).kind:<8} {exploration_rule(line(k)):<22} {line(k).display}" for k in p.lines]
    out.append("Claims:")
    for c in p.claims:
        how = "" if c.test == "not_testable" else (
            f" [{' vs '.join(c.lines)}; {preregistered.QUANTITIES[c.quantity]}; {c.test}"
            + (f", margin +-{c.margin:g}" if c.test.endswith("tost") else f", {c.direction}") + "]")
        out.append(f"  ({c.kind}) {c.name}: {c.sentence}{how}")
    return "\n".join(out)
