"""The deep-sea pilot and the power of each claim that declares a smallest effect of interest (07-10):
what the seen seeds and the tuning seeds show, how many verdict seeds, sizes and episodes each claim
needs for a power of 0.8 at its effect of interest (:func:`analyse`, whose numbers
:mod:`pcnn_explore.study.preregistered.deep_sea_power` records), and what a design costs.

Two sources, neither ever a verdict's:

- the seen seeds 401-410 (:data:`pcnn_explore.study.preregistered.deep_sea.PILOT_SEEDS`): the first
  study's per-seed values, DeepSea-14, 3,000 episodes, bsuite's mapping 42 (:func:`seen_values`, frozen
  in ``data/pilot/deep_sea_seen.json`` before the re-run replaced them);
- the pilot's runs on tuning seeds (:data:`PILOT_SEEDS`), each with its declared mapping seed, on
  DeepSea-10, 12 and 14 at the caps of :data:`PILOT_CAPS`, every run stopping once bsuite's rule holds
  (:func:`pcnn_explore.experiments.agents.pilot.run_pilot`; per-run values in :data:`PILOT_FILE`, read
  back by :func:`load_pilot`).

The power model (pure maths): a line solves DeepSea-N within cap E with probability p_line(N, E) (the
pilot's share of runs whose bsuite solve episode is <= E), sizes and seeds independent; a seed's
deep-sea score is its share of the design's sizes solved, and the claim is decided by the exact paired
sign-flip test of the per-seed score differences at one-sided :data:`~pcnn_explore.study.power_model.ALPHA` (ties drop out):
:func:`~pcnn_explore.study.power_model.score_power`, a seeded simulation of :data:`~pcnn_explore.study.power_model.POWER_DRAWS` draws (seed :data:`~pcnn_explore.study.power_model.POWER_SEED`,
standard error <= 0.5 / sqrt(draws) = 0.011; the design search and the seeds-needed bisection use
1,000 draws, standard error <= 0.016), each draw's p exact by :func:`~pcnn_explore.study.power_model.sign_flip_p_lattice`;
:func:`~pcnn_explore.study.power_model.paired_resample_power` (per-seed pilot pairs resampled); :func:`~pcnn_explore.study.power_model.fisher_power` and
:func:`~pcnn_explore.study.power_model.share_power` (exact sums over binomials).

A design's price (:func:`design_minutes`): agent steps per run (N x the episodes it runs: its solve
episode when it solves, else the cap; the pilot's mean per line and size) over the line's measured
agent steps per second (:func:`agent_rates`, two runs at once, as a study runs them) plus the pilot's
per-run overhead (:func:`run_overhead`), in wall minutes on 2 cores.
"""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from pcnn_explore.study.preregistered import deep_sea as pre
from pcnn_explore.verdicts import TOO_FEW_SEEDS

__all__ = ["agent_rates", "run_overhead", "expected_episodes", "design_minutes",
           "PILOT_SEEDS", "PILOT_LINES", "PILOT_SIZES", "PILOT_CAPS", "RATE_PROBE_LINES", "PILOT_FILE", "SEEN_FILE",
           "load_pilot", "seen_values", "claim_power", "seeds_needed_for", "analyse"]

from pcnn_explore.study.power_model import (ALPHA, POWER_DRAWS, POWER_SEED, fisher_power, paired_resample_power,
                                           score_power, share_power)

# --- a design's price ---------------------------------------------------------------------------------------

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


# --- the pilot's record and the seen seeds -----------------------------------------------------------------

#: tuning seeds the pilot runs (never a verdict's: deep_sea.TUNING_SEEDS), as many as its budget allows
PILOT_SEEDS = (0, 1, 2, 3, 4)
#: the lines of 07-10's claims whose solve probabilities the power analysis reads (the PixelCNN and kit
#: lines: the seen seeds' DeepSea-14 values, and their speed from :data:`RATE_PROBE_LINES`)
PILOT_LINES = ("dqn", "dqn_mmc", "paper_cts", "paper_cts_horizon", "paper_cts_scale", "paper_cts_no_mmc",
               "paper_cts_no_mmc_horizon", "paper_cts_intrinsic", "c0.1", "c1", "c10")
#: DeepSea sizes of the pilot and their episode caps, the largest a design may use (bsuite's limit
#: 2^N + 100 is logged as 1,000 at N = 10 and 4,000 at N = 12; at N = 14 the seen seeds' 3,000)
PILOT_SIZES = (10, 12, 14)
PILOT_CAPS = (1_000, 4_000, 3_000)
#: lines run briefly on one tuning seed for their speed only (the PixelCNN lines, the kit's line; a probe
#: shorter than a second, as the kit's line that solves at once, times nothing)
RATE_PROBE_LINES = ("paper_pixelcnn", "kit_pixelcnn_pos", "kit")
#: where the pilot's per-run values are stored (small, committed)
PILOT_FILE = Path(__file__).resolve().parents[2] / "data" / "pilot" / "deep_sea_pilot.json"
#: the seen seeds' per-seed values, frozen from the first study's report (its 07-10 folders were replaced
#: by the re-run on the verdict seeds): :func:`seen_values`' default
SEEN_FILE = PILOT_FILE.parent / "deep_sea_seen.json"


def load_pilot(path=PILOT_FILE) -> dict[str, Any]:
    """The stored pilot (:func:`pcnn_explore.experiments.agents.pilot.run_pilot`'s record)."""
    return json.loads(Path(path).read_text())


# --- the seen seeds -----------------------------------------------------------------------------------------

def seen_values(report_dir=None, notebooks: Mapping[str, str] = pre.NOTEBOOKS) -> dict[str, dict[str, Any]]:
    """The seen seeds' per-seed values (401-410, DeepSea-14, 3,000 episodes, mapping 42) of every line of
    07-10: ``{line: {"seeds", "solved" (0/1), "first_success_episode" (cap + 1 if never), "coverage",
    "success_rate", "size", "cap"}}`` from ``report_dir/<notebook>/metrics.json`` (a first study's
    report); a line in several notebooks is read once (the same runs). Without ``report_dir``: the
    values read so from the first study's report at commit 3ab3e3d, frozen in :data:`SEEN_FILE`."""
    if report_dir is None:
        return json.loads(SEEN_FILE.read_text())["lines"]
    root = Path(report_dir)
    out: dict[str, dict[str, Any]] = {}
    for folder in notebooks.values():
        m = json.loads((root / folder / "metrics.json").read_text())
        (size,), (cap,) = m["settings"]["sizes"], m["settings"]["episodes"]
        for key, v in m["per_seed"].items():
            if key in out:
                continue
            by_seed = {r["seed"]: r for r in v["runs"] if r["size"] == size}
            out[key] = {"seeds": list(v["seeds"]), "size": size, "cap": cap,
                        "solved": [int(bool(by_seed[s]["solved"])) for s in v["seeds"]],
                        "first_success_episode": list(v["first_success_episode"]),
                        "coverage": list(v["coverage"]), "success_rate": list(v["success_rate"])}
    return out


# --- the analysis: each claim's pilot numbers, the design, its power and price ----------------------------

#: lines the pilot did not time, priced at the rate of a line it did (same model and exploration)
RATE_OF = {"kit_constant_c": "paper_cts", "kit_next_state": "paper_cts", "kit_mmc": "paper_cts",
           "kit_novelty": "paper_cts", "novelty_only": "paper_cts", "kit": "paper_cts",
           "kit_pixelcnn_pos": "kit_pixelcnn_pos", "paper_pixelcnn": "paper_pixelcnn"}
#: lines the pilot did not run on DeepSea-10 and 12, modelled there as another line (declared): the
#: paper's PixelCNN as DQN (it cannot count DeepSea's cells; on the seen seeds both solve 0 of 10 at 14),
#: the kit's additions as the paper's CTS line they add to
MODEL_AS = {"paper_pixelcnn": "dqn", "kit_pixelcnn_pos": "dqn", "kit_constant_c": "paper_cts",
            "kit_next_state": "paper_cts", "kit_mmc": "paper_cts", "kit_novelty": "paper_cts",
            "novelty_only": "paper_cts", "kit": "paper_cts"}
#: the design space searched per notebook: size sets (each size at its pilot cap) and seeds per line
SIZE_SETS = ((10, 12, 14), (10, 12), (12, 14), (10,), (12,), (14,))
MAX_SEEDS = 40


def _probs(pilot, seen, line: str, sizes, caps) -> list[float]:
    """Per size, the line's chance of solving within the cap: the pilot's tuning runs, pooled at N = 14
    with the seen seeds (bsuite's rule within 3,000 episodes); a line the pilot did not run on a size
    is modelled as :data:`MODEL_AS`."""
    out = []
    for n, cap in zip(sizes, caps):
        k = t = 0
        runs = [r for r in pilot["runs"] if r["line"] == line and r["size"] == n]
        k += sum(r["bsuite_solve_episode"] is not None and r["bsuite_solve_episode"] <= cap for r in runs)
        t += len(runs)
        if n == 14 and line in seen and cap <= 3_000:
            k += sum(seen[line]["score"])
            t += len(seen[line]["score"])
        if t == 0:
            return _probs(pilot, seen, MODEL_AS[line], sizes, caps) if line in MODEL_AS else [math.nan] * len(sizes)
        out.append(k / t)
    return out


def _tuning_scores(pilot, line: str, sizes, caps) -> dict[int, float]:
    by = {}
    for s in pilot["seeds"]:
        runs = {r["size"]: r for r in pilot["runs"] if r["line"] == line and r["seed"] == s}
        if all(n in runs for n in sizes):
            by[s] = float(np.mean([runs[n]["bsuite_solve_episode"] is not None and runs[n]["bsuite_solve_episode"] <= c
                                   for n, c in zip(sizes, caps)]))
    return by


def _interval(d: Sequence[float]) -> list[float | None]:
    from pcnn_explore.verdicts import shown_interval, sign_flip_interval

    if len(d) < 2:
        return [None, None]
    lo, hi = shown_interval(list(d), sign_flip_interval, 0.95)
    return [None if not math.isfinite(lo) else round(lo, 4), None if not math.isfinite(hi) else round(hi, 4)]


def _pilot_numbers(pilot, seen, claim, sizes, caps) -> dict[str, Any]:
    """The pilot's effect of ``claim`` (a - b, or a's share): on the tuning seeds over the design's sizes,
    and on the seen seeds at DeepSea-14 / 3,000 episodes, each mean with its 95% sign-flip interval and n."""
    out: dict[str, Any] = {}
    a, b = claim.lines[0], claim.lines[1] if len(claim.lines) > 1 else None
    if claim.quantity in ("score", "solved") and b is not None:
        ta, tb = _tuning_scores(pilot, a, sizes, caps), _tuning_scores(pilot, b, sizes, caps)
        common = sorted(set(ta) & set(tb))
        if common:
            d = [ta[s] - tb[s] for s in common]
            out["tuning"] = {"effect": round(float(np.mean(d)), 4), "interval": _interval(d), "n": len(d),
                             "what": "score difference over the design's sizes, tuning seeds"}
        if a in seen and b in seen:
            d = [x - y for x, y in zip(seen[a]["score"], seen[b]["score"])]
            out["seen"] = {"effect": round(float(np.mean(d)), 4), "interval": _interval(d), "n": len(d),
                           "solved": f"{sum(seen[a]['score']):g}/10 vs {sum(seen[b]['score']):g}/10",
                           "what": "solved-share difference at DeepSea-14, 3,000 episodes, seeds 401-410, mapping 42"}
    elif claim.quantity == "coverage" and b is not None and a in seen and b in seen:
        d = [x - y for x, y in zip(seen[a]["coverage"], seen[b]["coverage"])]
        out["seen"] = {"effect": round(float(np.mean(d)), 4), "interval": _interval(d), "n": len(d),
                       "what": "final coverage difference at DeepSea-14, seeds 401-410"}
    elif claim.quantity == "first_success_episode" and b is not None and a in seen and b in seen:
        d = [x - y for x, y in zip(seen[a]["first_success_episode"], seen[b]["first_success_episode"])]
        out["seen"] = {"effect": round(float(np.mean(d)), 1), "interval": _interval(d), "n": len(d),
                       "what": "first +1 episode difference (censored at 3,001) at DeepSea-14, seeds 401-410"}
    elif claim.quantity == "found" and a in seen:
        k = sum(x <= 3_000 for x in seen[a]["first_success_episode"])
        out["seen"] = {"effect": k / 10, "n": 10, "what": "share of seeds 401-410 finding the +1 at DeepSea-14"}
    return out


def _leaves_floor_prob(p_c: Sequence[float], n: int, alpha: float = ALPHA) -> float:
    """P(a line with per-size solve chances ``p_c`` leaves the floor 0 in ``n`` seeds): the sign-flip
    test's p is 2^-(seeds scoring above 0), so at least the smallest k with 2^-k <= alpha must."""
    from math import comb

    q = 1.0 - float(np.prod([1.0 - p for p in p_c]))
    k_min = math.ceil(-math.log2(alpha))
    return float(sum(comb(n, j) * q ** j * (1 - q) ** (n - j) for j in range(k_min, n + 1)))


def claim_power(pilot, seen, claim, sizes, caps, n: int, draws: int = POWER_DRAWS) -> tuple[float, float, str]:
    """(power, effect of interest used, the model in words) of ``claim`` with ``n`` seeds per line on the
    design (``sizes`` at ``caps``), by the model of the module docstring."""
    q = claim.quantity
    if claim.test == "not_testable" and claim.reason == TOO_FEW_SEEDS:
        # a claim the plan declared underpowered keeps the test it would take: its power is the plan's reason
        claim = dataclasses.replace(claim, test="sign_flip" if claim.margin is None else "sign_flip_tost")
    if claim.test in ("sign_flip", "fisher") and q == "score":
        seen_lb = (_pilot_numbers(pilot, seen, claim, sizes, caps).get("seen") or {}).get("interval", [None])[0]
        effect = max(pre.SCORE_SESOI, seen_lb or 0.0)
        p_b = _probs(pilot, seen, claim.lines[1], sizes, caps)
        p_a = [min(1.0, p + effect) for p in p_b]
        return score_power(p_a, p_b, n, draws=draws), effect, "per-size solve chances of b from the pilot, a's raised by the effect"
    if claim.test == "sign_flip_tost" and q == "score":
        p_b = _probs(pilot, seen, claim.lines[1], sizes, caps)
        control = pre.POSITIVE_CONTROLS.get(claim.name, claim.lines[1])
        p_c = _probs(pilot, seen, control, sizes, caps)
        tost = score_power(p_b, p_b, n, draws=draws, margin=claim.margin)
        return tost * _leaves_floor_prob(p_c, n), claim.margin, (
            f"no true difference (both lines at b's pilot chances), TOST at +-{claim.margin:g}, times the chance that "
            f"{control} leaves the floor")
    if q == "first_success_episode":
        pairs = []
        for s in pilot["seeds"]:
            row = {}
            for k in claim.lines:
                runs = {r["size"]: r for r in pilot["runs"] if r["line"] == k and r["seed"] == s}
                if not all(m in runs for m in sizes):
                    break
                row[k] = [runs[m]["first_success_episode"] if runs[m]["first_success_episode"] is not None
                          and runs[m]["first_success_episode"] <= c else c + 1 for m, c in zip(sizes, caps)]
            if len(row) == 2:
                a, b = row[claim.lines[0]], row[claim.lines[1]]
                moved = [max(1, x - pre.FIRST_SUCCESS_SESOI) if x <= c else x for x, c in zip(a, caps)]
                pairs.append((float(np.mean(moved)), float(np.mean(b))))
        if not pairs:
            return math.nan, pre.FIRST_SUCCESS_SESOI, "no pilot pairs"
        return (paired_resample_power(pairs, n, "less", resolution=10.0, draws=draws), pre.FIRST_SUCCESS_SESOI,
                "the tuning seeds' per-seed pairs resampled, a's found episodes moved 500 sooner, never-found tied at the cap")
    if q == "coverage":
        pairs = [(x, y) for x, y in zip(seen[claim.lines[0]]["coverage"], seen[claim.lines[1]]["coverage"])]
        d = np.array([x - y for x, y in pairs])
        shifted = [(float(x - d.mean() + pre.COVERAGE_SESOI), float(y)) for (x, y) in pairs]
        return (paired_resample_power(shifted, n, "greater", resolution=0.001, draws=draws), pre.COVERAGE_SESOI,
                "the seen seeds' coverage pairs resampled, their mean difference set to the effect")
    if q == "found":
        chance = float(np.mean([pre.random_finds_within(m, c) for m, c in zip(sizes, caps)]))
        return share_power(min(1.0, chance + pre.FOUND_SESOI), chance, n), pre.FOUND_SESOI, (
            f"each seed finds the +1 with the chance {chance:.3f} + the effect; exact binomial")
    return math.nan, math.nan, "not testable on this task"


def seeds_needed_for(pilot, seen, claim, sizes, caps, target: float = 0.8, most: int = 200) -> int | None:
    """The fewest seeds per line (6..``most``) with power >= ``target`` (bisection; None: more than ``most``)."""
    if claim_power(pilot, seen, claim, sizes, caps, most, draws=1_000)[0] < target:
        return None
    lo, hi = 6, most
    while lo < hi:
        mid = (lo + hi) // 2
        if claim_power(pilot, seen, claim, sizes, caps, mid, draws=1_000)[0] >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


def analyse(pilot=None, seen=None, budget_minutes: float = 45.0, workers: int = 2) -> dict[str, Any]:
    """The power analysis of every claim of 07-10: per notebook the design (sizes, caps, seeds per line,
    lines run) with the most paper claims at power >= 0.8 within ``budget_minutes`` on ``workers`` cores
    (then the most claims, then the most sizes, then the most seeds, capped at :data:`MAX_SEEDS`), its
    price, and per claim the pilot's numbers, the effect of interest, the power and the seeds per line it
    would need on that design's sizes (its lines run or not)."""
    pilot = load_pilot() if pilot is None else pilot
    seen = seen_values() if seen is None else seen
    for k, v in seen.items():
        v.setdefault("score", [float(x) for x in v["solved"]])
    caps_of = dict(zip(PILOT_SIZES, PILOT_CAPS))
    out: dict[str, Any] = {"designs": {}, "claims": {}, "rates": agent_rates(pilot)}
    for nb, p in pre.PLANS.items():
        testable = [c for c in p.claims if c.test != "not_testable" or c.reason == TOO_FEW_SEEDS]
        best = None
        for sizes in SIZE_SETS:
            caps = tuple(caps_of[n] for n in sizes)
            line_sets = [tuple(p.lines)]
            slow = tuple(k for k in p.lines if "pixelcnn" in k)
            if slow:
                line_sets.append(tuple(k for k in p.lines if k not in slow))
            for lines in line_sets:
                price1 = design_minutes(pilot, lines, sizes, caps, 1, workers, RATE_OF, p.stop_when_solved)
                n = min(MAX_SEEDS, int(budget_minutes // price1))
                if n < 6:
                    continue
                powers = {c.name: claim_power(pilot, seen, c, sizes, caps, n, draws=1_000)[0]
                          if all(k in lines for k in c.lines) else 0.0 for c in testable}
                paper = sum(powers[c.name] >= 0.8 for c in testable if c.kind == "paper")
                total = sum(v >= 0.8 for v in powers.values())
                key = (paper, total, len(sizes), n)
                if best is None or key > best[0]:
                    best = (key, sizes, caps, lines, n, price1 * n)
        _, sizes, caps, lines, n, price = best
        out["designs"][nb] = {"sizes": sizes, "episodes": caps, "seeds": n, "lines": lines,
                              "minutes": round(price, 1), "budget_minutes": budget_minutes}
        for c in testable:
            runs_all = all(k in lines for k in c.lines)
            power, effect, model = claim_power(pilot, seen, c, sizes, caps, n)
            if not runs_all:
                power, model = 0.0, model + f"; its lines ({', '.join(k for k in c.lines if k not in lines)}) do not fit the budget"
            need = seeds_needed_for(pilot, seen, c, sizes, caps)
            out["claims"][c.name] = {"notebook": nb, "pilot": _pilot_numbers(pilot, seen, c, sizes, caps),
                                     "effect_of_interest": effect, "model": model, "sizes": sizes, "episodes": caps,
                                     "seeds": n, "budget_minutes": budget_minutes, "minutes": round(price, 1),
                                     "power": round(power, 3), "needs": need if need is not None else ">200"}
    return out
