"""Notebook 12's summary and metrics: the findings one line each with their numbers
(:func:`summary`), the settings and lines as text (:func:`settings_text`, :func:`lines_text`,
:func:`run_cost_line`) and what the notebook writes to ``metrics.json`` (:func:`metrics`)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pcnn_explore.envs.deep_sea import deep_sea_id
from pcnn_explore.run.variants import variant_label as label  # the paper's name of a variant
from pcnn_explore.experiments.exploration.laptop_settings import DEEP_SEA_LINES, ExplorationSettings, _deep_sea_fields
from pcnn_explore.experiments.exploration.laptop_runs import DeepSeaRun, coverage_table
from pcnn_explore.experiments.exploration.laptop_goals import (
    GOAL_N,
    PAPER,
    coverage_goal,
    deep_sea_goal,
    deep_sea_kit_goal,
    findings,
    location_goal,
    strict_goal,
    verdict,
)

if TYPE_CHECKING:
    from pcnn_explore.experiments.exploration.count_maps import CountMaps

__all__ = ["summary", "settings_text", "lines_text", "run_cost_line", "metrics"]


def summary(profile: str, table: dict, rooms: dict, maps: "CountMaps") -> dict[str, Any]:
    """The findings of notebook 12 with the numbers that decide them, one line each; the verdict
    (on the paper's claim only); ``findings``: name, kind ("paper" or "kit") and answer of each."""
    goals = {"deep_sea": deep_sea_goal(table), "deep_sea_kit": deep_sea_kit_goal(table),
             "strict_goal": strict_goal(table), "coverage": coverage_goal(rooms), "location": location_goal(maps)}
    d, k, g = goals["deep_sea"], goals["deep_sea_kit"], goals["strict_goal"]
    c, loc = goals["coverage"], goals["location"]["summary"]
    found = {f["name"]: f["answer"] for f in findings(profile, goals)}
    hard = f"N = {', '.join(str(n) for n in d['hard'])}" if d["hard"] else "none"  # words, not a list
    lines = [f"paper: the paper's bonus (DQN-CTS, DQN-PixelCNN) makes DQN reach DeepSea's +1 where DQN does not, "
             f"the seeds reaching it late by Fisher's exact test at each N where DQN reached it late in no seed "
             f"({hard}): {found['deep_sea']}"]
    for n, row in d["seed_tests"].items():
        lines += [f"  N = {n}: {t['sentence']}" for t in row.values()]
    lines.append(f"kit: the kit's position-biased PixelCNN (DQN-PixelCNN with the position bias) reaches it where "
                 f"DQN does not, the same test: {found['deep_sea_kit']}")
    for n, row in k["seed_tests"].items():
        lines += [f"  N = {n}: {t['sentence']}" for t in row.values()]
    lines.append(f"kit, the strict goal: at N >= {GOAL_N} DQN-CTS and DQN-PixelCNN "
                 f"(position bias) reach the goal late in every seed, DQN and DQN + MMC in none: {found['strict_goal']}")
    for n, row in d["detail"].items():
        lines.append(f"  N = {n}: " + ", ".join(f"{label(v)} {t}" for v, t in row.items()))
    lines.append(f"  largest N where the bonus agents reach it in every seed and the baselines in none: "
                 f"{'none' if g['largest_separated'] is None else g['largest_separated']}")
    lines.append("kit: on the egocentric task intrinsic-only agents visit >= 2x the distinct cells of DQN: "
                 f"{found['coverage']} (ratios " + ", ".join(f"{label(v)} {r:.2f}" for v, r in c["ratios"].items())
                 + ")")
    lines.append("kit: the paper's PixelCNN gives every cell of a row the same probability while CTS and the "
                 f"position-biased PixelCNN rank cells by visits: {found['location']} ("
                 + "; ".join(f"{m}: spread {v['row_spread_nats']:.2f} nats, Spearman "
                             f"{v['spearman_log_rho_vs_visits']:.2f}" for m, v in loc.items()) + ")")
    return {"verdict": verdict(profile, goals), "goals": goals, "lines": lines, "findings": findings(profile, goals)}


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
    """What notebook 12 writes to ``metrics.json`` (keys are strings; N as "N=10")."""
    deep = {v: {f"N={n}": {k: row[k] for k in ("seeds", "seed_ids", "reached_late", "late_successes", "first_success_steps",
                                                 "distinct_cells", "reachable_cells")}
                for n, row in rows.items()} for v, rows in table.items()}
    lines = {v: {"kind": DEEP_SEA_LINES[v].kind, "label": DEEP_SEA_LINES[v].display,
                 "settings": dict(DEEP_SEA_LINES[v].overrides)} for v in settings.deep_sea_variants}
    return {"profile": settings.profile, "seeds": list(settings.seeds), "settings": settings.to_dict(),
            "deep_sea_lines": lines, "deep_sea": deep, "coverage": coverage_table(rooms), "count_maps": maps.summary(), "paper": dict(PAPER),
            "summary": {"verdict": summ["verdict"], "lines": summ["lines"], "findings": summ["findings"],
                        "goals": {k: {kk: vv for kk, vv in g.items() if kk != "summary"}
                                  for k, g in summ["goals"].items()}}}
