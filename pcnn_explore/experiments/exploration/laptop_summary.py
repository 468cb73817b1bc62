"""Notebook 12's summary and metrics: its claims decided (:func:`decisions`), the findings one line
each with their numbers (:func:`summary`), the settings and lines as text (:func:`settings_text`,
:func:`lines_text`, :func:`run_cost_line`) and what the notebook writes to ``metrics.json``
(:func:`metrics`: the numbers, and the claims record of :func:`pcnn_explore.study.metrics_record`)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from pcnn_explore.envs.deep_sea import deep_sea_id
from pcnn_explore.run.variants import variant_label as label  # the paper's name of a variant
from pcnn_explore.experiments.exploration.laptop_settings import DEEP_SEA_LINES, ExplorationSettings, _deep_sea_fields
from pcnn_explore.experiments.exploration.laptop_runs import DeepSeaRun, coverage_table
from pcnn_explore.experiments.exploration.laptop_goals import (
    GOAL_N,
    KIT_AGENTS,
    PAPER,
    PAPER_AGENTS,
    coverage_goal,
    hard_sizes,
    location_goal,
    reach_decisions,
    reached,
    strict_goal,
)
from pcnn_explore.study import Decision, decide, metrics_record, notebook_words
from pcnn_explore.study.preregistered import exploration_on_a_laptop as pre
from pcnn_explore.verdicts import combine_verdicts

if TYPE_CHECKING:
    from pcnn_explore.experiments.exploration.count_maps import CountMaps

__all__ = ["summary", "decisions", "settings_text", "lines_text", "run_cost_line", "metrics", "budget_words"]


def _status(h: bool | None) -> str:
    return "not run at this profile" if h is None else ("holds" if h else "does not hold")


def budget_words(episodes: int) -> str:
    """The DeepSea budget of a run in words: ``"1,500 episodes"``."""
    return f"{int(episodes):,} episodes"


def decisions(table: Mapping, goals: Mapping[str, Mapping[str, Any]], readings: Mapping[str, str],
              seeds: Sequence[int] = (), budget: str = "") -> list[Decision]:
    """Notebook 12's claims decided (:mod:`pcnn_explore.study.preregistered.exploration_on_a_laptop`), in
    the order made: the paper lines' and then the kit line's seeds reaching the +1 late against DQN's at
    each size where DQN reached it in no seed (a line with no such size: not testable), then the kit's
    readings (``goals``' ``holds`` None: not run at this profile, not testable), each with its line of
    ``readings`` as the words no test makes."""
    hard = hard_sizes(table)
    sizes = sorted({n for rows in table.values() for n in rows})
    out: list[Decision] = []
    for lines in (PAPER_AGENTS, KIT_AGENTS):
        found = reach_decisions(table, lines, hard, budget) if hard else []
        out += found or [decide(pre.no_hard_size_claim(v, label(v), seeds, sizes, budget)) for v in lines if v in table]
    run = [name for name in pre.KIT_READINGS if goals[name]["holds"] is not None]
    for claim in pre.kit_claims(run, seeds, sizes, budget):
        out.append(decide(claim, detail=readings[claim.name] if claim.test == "reading" else ""))
    return out


def _word(ds: Sequence[Decision]) -> str:
    """The words of ``ds`` combined (:func:`pcnn_explore.verdicts.combine_verdicts`)."""
    return combine_verdicts([d.word for d in ds]) if ds else "not run at this profile"


def summary(profile: str, table: dict, coverage: Mapping, count_maps: Mapping, seeds: Sequence[int] = (),
            budget: str = "") -> dict[str, Any]:
    """The findings of notebook 12 with the numbers that decide them, one line each (``lines``),
    ``goals`` (the numbers: seeds reaching the goal late per size, the hard sizes, the kit's readings)
    and ``decisions`` (:func:`decisions`); ``coverage``: the egocentric task's
    :func:`~pcnn_explore.experiments.exploration.laptop_runs.coverage_table`, ``count_maps``:
    :meth:`~pcnn_explore.experiments.exploration.count_maps.CountMaps.summary`; ``seeds`` and ``budget``
    the claims' design."""
    hard = hard_sizes(table)
    goals = {"deep_sea": {"detail": reached(table), "hard": hard}, "strict_goal": strict_goal(table),
             "coverage": coverage_goal(coverage), "location": location_goal(count_maps)}
    g, c = goals["strict_goal"], goals["coverage"]
    readings = {
        "strict_goal": f"kit, the strict goal: at N >= {GOAL_N} DQN-CTS and DQN-PixelCNN (position bias) reach the goal "
                       f"late in every seed, DQN and DQN + MMC in none: {_status(g['holds'])}",
        "coverage": "kit: on the egocentric task intrinsic-only agents visit >= 2x the distinct cells of DQN: "
                    f"{_status(c['holds'])} (ratios " + ", ".join(f"{label(v)} {r:.2f}" for v, r in c["ratios"].items())
                    + ")",
        "location": "kit: the paper's PixelCNN gives every cell of a row the same probability while CTS and the "
                    f"position-biased PixelCNN rank cells by visits: {_status(goals['location']['holds'])} ("
                    + "; ".join(f"{m}: spread {v['row_spread_nats']:.2f} nats, Spearman "
                                f"{v['spearman_log_rho_vs_visits']:.2f}" for m, v in count_maps.items()) + ")"}
    made = decisions(table, goals, readings, seeds, budget)
    word, _ = notebook_words(made)
    hard_text = f"N = {', '.join(str(n) for n in hard)}" if hard else "none"  # words, not a list
    every = {lines: reach_decisions(table, lines, budget=budget) for lines in (PAPER_AGENTS, KIT_AGENTS)}
    kit = [d for d in made if d.claim.lines[:1] and d.claim.lines[0] in KIT_AGENTS]
    lines = [f"paper: the paper's bonus (DQN-CTS, DQN-PixelCNN) makes DQN reach DeepSea's +1 where DQN does not, "
             f"the seeds reaching it late by Fisher's exact test at each N where DQN reached it late in no seed "
             f"({hard_text}): {word}"]
    lines += [f"  N = {d.claim.design.sizes[0]}: {d.sentence}" for d in every[PAPER_AGENTS]]
    lines.append(f"kit: the kit's position-biased PixelCNN (DQN-PixelCNN with the position bias) reaches it where "
                 f"DQN does not, the same test: {_word(kit)}")
    lines += [f"  N = {d.claim.design.sizes[0]}: {d.sentence}" for d in every[KIT_AGENTS]]
    lines.append(readings["strict_goal"])
    for n, row in goals["deep_sea"]["detail"].items():
        lines.append(f"  N = {n}: " + ", ".join(f"{label(v)} {t}" for v, t in row.items()))
    lines.append(f"  largest N where the bonus agents reach it in every seed and the baselines in none: "
                 f"{'none' if g['largest_separated'] is None else g['largest_separated']}")
    lines += [readings["coverage"], readings["location"]]
    return {"goals": goals, "lines": lines, "decisions": made}


def settings_text(settings: ExplorationSettings, variant: str = "cts_mmc") -> str:
    """One sentence: the training settings of ``variant``'s DeepSea runs as they resolve for this
    profile (``TrainConfig.preset``: preset < DeepSea's env_defaults < the notebook's overrides < the
    line's settings, :data:`DEEP_SEA_LINES`), with the line's kind and exploration rule."""
    from pcnn_explore.envs import auto_network
    from pcnn_explore.run.lines import exploration_rule
    from pcnn_explore.run.variants import variant_overrides
    from pcnn_explore.run.config import TrainConfig

    env = deep_sea_id(settings.deep_sea_sizes[0])
    cfg = TrainConfig.preset(settings.profile, env=env, **{**variant_overrides(variant),
                                                            **_deep_sea_fields(settings, variant)})
    return (f"{label(variant)} on {env} ({settings.profile} profile): network {auto_network(env, cfg.network)}, "
            f"epsilon {cfg.epsilon_start:g} -> {cfg.epsilon_end:g} over {cfg.epsilon_decay_steps:,} steps, a gradient "
            f"step every {cfg.train_every} agent steps (batch {cfg.batch_size}, lr {cfg.lr:g}), target network every "
            f"{cfg.target_update_every:,} steps, PG scale c = {cfg.pg_scale:g} ({cfg.pg_schedule}), bonus scale beta "
            f"{cfg.bonus_scale:g}, MMC beta {cfg.mmc_beta:g}, the density model scores {cfg.scored_frame}, "
            f"{exploration_rule(DEEP_SEA_LINES[variant])} ({DEEP_SEA_LINES[variant].kind} line).")


def lines_text(settings: ExplorationSettings) -> list[str]:
    """One line per DeepSea line run: its variant, kind (baseline, paper, kit), label and exploration rule."""
    from pcnn_explore.run.lines import exploration_rule

    return [f"{v} ({DEEP_SEA_LINES[v].kind}): {DEEP_SEA_LINES[v].display}, {exploration_rule(DEEP_SEA_LINES[v])}"
            for v in settings.deep_sea_variants]


def run_cost_line(runs: list[DeepSeaRun], seconds: float) -> str:
    """One sentence: how many DeepSea runs and agent steps this call covered, and its wall time
    (``seconds``); finished runs are read back, not rerun, so only a first call pays for them."""
    return (f"{len(runs)} DeepSea runs, {sum(r.steps for r in runs):,} agent steps in all; "
            f"this cell took {seconds / 60:.1f} min (runs already finished under output_dir are read back).")


def metrics(settings: ExplorationSettings, table: dict, rooms: dict, maps: "CountMaps", summ: dict) -> dict[str, Any]:
    """What notebook 12 writes to ``metrics.json`` (keys are strings; N as "N=10"): the numbers, the
    summary's lines and goals, and the claims record (:func:`pcnn_explore.study.metrics_record`)."""
    deep = {v: {f"N={n}": {k: row[k] for k in ("seeds", "seed_ids", "reached_late", "late_successes", "first_success_steps",
                                                 "distinct_cells", "reachable_cells")}
                for n, row in rows.items()} for v, rows in table.items()}
    lines = {v: {"kind": DEEP_SEA_LINES[v].kind, "label": DEEP_SEA_LINES[v].display,
                 "settings": dict(DEEP_SEA_LINES[v].overrides)} for v in settings.deep_sea_variants}
    return {"profile": settings.profile, "seeds": list(settings.seeds), "settings": settings.to_dict(),
            "deep_sea_lines": lines, "deep_sea": deep, "coverage": coverage_table(rooms), "count_maps": maps.summary(),
            "paper": dict(PAPER), "summary": {"lines": summ["lines"], "goals": summ["goals"]},
            **metrics_record(summ["decisions"])}
