"""Notebook 12's goals: the numbers its claims are decided on or read from (the claims themselves:
:mod:`pcnn_explore.study.preregistered.exploration_on_a_laptop`).

- :func:`hard_sizes`: the sizes where DQN reached DeepSea's +1 late in no seed (the paper's claim is
  about rewards epsilon-greedy DQN does not reach);
- :func:`reach_decisions`: per line and size, its seeds that reached the +1 late against DQN's,
  decided by :func:`pcnn_explore.study.decide` (Fisher's exact test on per-seed flags);
- the kit's readings: :func:`strict_goal`, :func:`coverage_goal` (from the egocentric task's
  :func:`~pcnn_explore.experiments.exploration.laptop_runs.coverage_table`), :func:`location_goal`
  (from :meth:`~pcnn_explore.experiments.exploration.count_maps.CountMaps.summary`); each ``holds``
  True, False, or None where the profile does not run what it needs.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from pcnn_explore.run.variants import variant_label as label  # the paper's name of a variant
from pcnn_explore.study import Decision, decide
from pcnn_explore.study.preregistered import exploration_on_a_laptop as pre

__all__ = ["PAPER_AGENTS", "KIT_AGENTS", "BONUS_AGENTS", "BASELINES", "GOAL_N", "PAPER", "hard_sizes", "reached",
           "reach_decisions", "strict_goal", "coverage_goal", "location_goal"]

#: the paper's lines whose claim notebook 12 decides: the paper's bonus agents against DQN
PAPER_AGENTS = pre.PAPER_LINES
#: the kit's line, decided the same way as a kit claim
KIT_AGENTS = pre.KIT_LINES
BONUS_AGENTS = ("cts_mmc", "pixelcnn_pos_mmc")  # the kit's strict goal: these reach DeepSea's +1 in every seed
BASELINES = ("dqn", "dqn_mmc")  # ... and these in none
GOAL_N = 20  # ... on DeepSea-N with N >= GOAL_N (the kit's strict goal)
#: the paper's claim that notebook 12 decides (metrics.json's ``paper``, shown by the report index)
PAPER = {"verdict": f"{pre.PAPER}, decided on the paper's DQN-CTS and DQN-PixelCNN; notebook 12's other findings "
                    "are the kit's own"}

Table = Mapping[Any, Mapping[int, Mapping[str, Any]]]


def hard_sizes(table: Table) -> list[int]:
    """The sizes where DQN reached the goal late in no seed (the claim is about tasks epsilon-greedy does not solve)."""
    return [n for n in sorted(table.get("dqn", {})) if table["dqn"][n]["reached_late"] == 0]


def reached(table: Table) -> dict[int, dict[str, str]]:
    """{N: {variant: "k of n seeds"}}: the seeds of each line that reached the goal late, per size."""
    sizes = sorted({n for rows in table.values() for n in rows})
    return {n: {v: f"{table[v][n]['reached_late']} of {table[v][n]['seeds']} seeds" for v in table if n in table[v]}
            for n in sizes}


def _flags(row: Mapping[str, Any]) -> list[float]:
    return [1.0 if x > 0 else 0.0 for x in row["late_successes"]]


def reach_decisions(table: Table, lines: Sequence[str], sizes: Sequence[int] | None = None, budget: str = "") -> list[Decision]:
    """Per size of ``sizes`` (default: every size DQN ran) and line of ``lines`` run there: the line's
    seeds that reached the goal late against DQN's (:func:`~pcnn_explore.study.preregistered.exploration_on_a_laptop.reach_claim`),
    decided on the per-seed flags in the seeds' order."""
    out = []
    for n, base in sorted(table.get("dqn", {}).items()):
        if sizes is not None and n not in sizes:
            continue
        for v in lines:
            row = table.get(v, {}).get(n)
            if row is None:
                continue
            claim = pre.reach_claim(v, label(v), n, row["seed_ids"], budget)
            out.append(decide(claim, _flags(row), _flags(base), seeds=row["seed_ids"]))
    return out


def strict_goal(table: Table) -> dict[str, Any]:
    """The kit's strict goal: on DeepSea-N with N >= :data:`GOAL_N` DQN-CTS and DQN-PixelCNN with the
    position bias (:data:`BONUS_AGENTS`) reach the goal late in every seed, DQN and DQN + MMC in none.
    ``holds`` (None: no N >= GOAL_N run); ``sizes`` those N; ``largest_separated``: the largest N (any
    size) where that holds (None: no such N)."""
    sizes = sorted({n for rows in table.values() for n in rows})
    big = [n for n in sizes if n >= GOAL_N]

    def separated(n: int) -> bool:
        bonus = [table[v][n] for v in BONUS_AGENTS if v in table and n in table[v]]
        base = [table[v][n] for v in BASELINES if v in table and n in table[v]]
        return bool(bonus) and bool(base) and all(r["reached_late"] == r["seeds"] for r in bonus) \
            and all(r["reached_late"] == 0 for r in base)

    ok = [n for n in sizes if separated(n)]
    return {"sizes": big, "holds": (all(separated(n) for n in big) if big else None),
            "largest_separated": max(ok) if ok else None}


def coverage_goal(final: Mapping[str, Mapping[str, float]], baseline: str = "dqn", factor: float = 2.0) -> dict[str, Any]:
    """The kit's question on the egocentric task: every intrinsic-only variant's mean distinct cells at
    the end (``final``: :func:`~pcnn_explore.experiments.exploration.laptop_runs.coverage_table`) is at
    least ``factor`` times the baseline's. ``{"ratios": {variant: ratio}, "holds": bool or None}``."""
    if baseline not in final:
        return {"ratios": {}, "holds": None}
    base = final[baseline]["final_cells_mean"]
    ratios = {v: (f["final_cells_mean"] / base if base > 0 else float("inf"))
              for v, f in final.items() if v.endswith("_intrinsic")}
    return {"ratios": ratios, "holds": (all(r >= factor for r in ratios.values()) if ratios else None)}


def location_goal(summ: Mapping[str, Mapping[str, float]], paper: str = "pixelcnn",
                  located: tuple[str, ...] = ("cts", "pixelcnn_pos"), min_spearman: float = 0.5,
                  max_spread: float = 0.5) -> dict[str, Any]:
    """The kit's question (the paper does not discuss it): the paper's PixelCNN cannot tell the cells of
    a row apart (log rho spreads less than ``max_spread`` nats over a row, mean over rows) while the
    located models rank cells by their visits (Spearman >= ``min_spearman``); ``summ``:
    :meth:`~pcnn_explore.experiments.exploration.count_maps.CountMaps.summary`. ``{"holds": bool or None}``."""
    if paper not in summ or not any(m in summ for m in located):
        return {"holds": None}
    holds = summ[paper]["row_spread_nats"] < max_spread and all(
        summ[m]["spearman_log_rho_vs_visits"] >= min_spearman for m in located if m in summ)
    return {"holds": bool(holds)}
