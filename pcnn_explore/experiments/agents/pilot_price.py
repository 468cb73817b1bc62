"""A deep-sea design's price from the pilot's runs (part of :mod:`pcnn_explore.experiments.agents.pilot`,
which re-exports every name): agent steps per second per line (:func:`agent_rates`), the seconds a run
costs beyond its training (:func:`run_overhead`), the episodes a run stopping once solved runs
(:func:`expected_episodes`), and a design's wall minutes on a number of cores (:func:`design_minutes`)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["agent_rates", "run_overhead", "expected_episodes", "design_minutes"]


def agent_rates(pilot: Mapping[str, Any]) -> dict[str, float]:
    """Agent steps per second of each line (runs two at once), from the pilot's runs and probes: the
    sum of their agent steps over the sum of their wall seconds."""
    out: dict[str, list[float]] = {}
    for r in list(pilot["runs"]) + list(pilot.get("probe", [])):
        if r["wall_s"] and r["wall_s"] >= 1.0 and r["episodes_run"]:  # a run under a second times nothing
            s = out.setdefault(r["line"], [0.0, 0.0])
            s[0] += r["episodes_run"] * r["size"]
            s[1] += r["wall_s"]
    return {k: a / w for k, (a, w) in out.items() if w > 0}


def run_overhead(pilot: Mapping[str, Any]) -> float:
    """Seconds of one run beyond its logged training wall (process start, imports, compilation, reading
    back), from the pilot's last seed, which ran every run fresh: (seed wall x workers - the runs' wall) /
    runs; 0 where the pilot records no seed."""
    if not pilot.get("seeds"):
        return 0.0
    s, wall = pilot["seeds"][-1], pilot["seed_wall_s"][-1]
    runs = [r for r in pilot["runs"] if r["seed"] == s]
    return max(0.0, (wall * pilot.get("workers", 2) - sum(r["wall_s"] for r in runs)) / max(1, len(runs)))


def expected_episodes(pilot: Mapping[str, Any], line: str, size: int, cap: int) -> float:
    """The mean episodes a run of ``line`` on DeepSea-``size`` runs with cap ``cap`` and stopping once
    solved (the pilot's runs: its bsuite solve episode where <= cap, else the cap)."""
    runs = [r for r in pilot["runs"] if r["line"] == line and r["size"] == size]
    if not runs:
        return float(cap)
    return float(np.mean([r["bsuite_solve_episode"] if r["bsuite_solve_episode"] is not None
                          and r["bsuite_solve_episode"] <= cap else cap for r in runs]))


def design_minutes(pilot: Mapping[str, Any], lines: Sequence[str], sizes: Sequence[int], caps: Sequence[int],
                   n: int, workers: int = 2, rate_of: Mapping[str, str] | None = None,
                   stop_when_solved: bool = True) -> float:
    """Wall minutes of a design on ``workers`` cores: per line and size, ``n`` runs of the pilot's mean
    episodes (:func:`expected_episodes`; the cap without ``stop_when_solved``) x N agent steps at the
    line's measured rate (:func:`agent_rates`; ``rate_of`` maps a line the pilot did not time to one it
    did) plus the pilot's per-run overhead (:func:`run_overhead`), divided among the workers."""
    rates = agent_rates(pilot)
    overhead = run_overhead(pilot)
    rate_of = dict(rate_of or {})
    total = 0.0
    for k in lines:
        timed = k if k in rates else rate_of.get(k)
        if timed not in rates:
            raise ValueError(f"no measured rate for line {k!r}: give rate_of={{{k!r}: a timed line}}")
        for size, cap in zip(sizes, caps):
            ep = expected_episodes(pilot, k if k in {r['line'] for r in pilot['runs']} else timed, size, cap) \
                if stop_when_solved else float(cap)
            total += n * (ep * size / rates[timed] + overhead)
    return total / workers / 60.0
