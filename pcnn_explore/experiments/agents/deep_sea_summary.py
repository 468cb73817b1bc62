"""bsuite's deep-sea score and scaling, computed from scaling rows (notebook 14,
:mod:`pcnn_explore.experiments.agents.deep_sea_scaling`, which re-exports these): pure functions of the
rows, a text and two figures; nothing here runs an agent.

What it computes, per line, from the scaling rows (:data:`pcnn_explore.sweep.deep_sea_report.SCALING_COLUMNS`,
one per run: the study's :meth:`DeepSeaStudy.scaling_rows` or a sweep report's ``deep_sea_scaling.csv``):

- ``per_seed_score``: bsuite's deep-sea score of each seed (its share of the sizes run whose
  bsuite solve episode, at bsuite's logged episodes, is below 2^N + 100; a size without a log counts
  as not solved), what bsuite's own analysis scores on these logs: with today's stop rule, the score a
  run on to the cap would get. Runs of earlier kits stopped at the first episode where the rule held,
  which bsuite may not log (11, say): such a run has no bsuite solve episode in its log and counts as
  not solved there, so for them ``per_seed_score`` is a lower bound; ``per_seed_score_upper`` counts
  such a run at bsuite's next logged episode (12), the most it could get. ``stopped_between_logged``
  counts these runs (0 for runs of today's kit, where the two scores are equal);
- ``score_interval``: the exact 95% interval of the mean per-seed score by inverting the sign-flip
  test (:func:`pcnn_explore.verdicts.sign_flip_interval`), clipped to [0, 1]; with 5 seeds or fewer
  no shift is rejected and it is [0, 1];
- ``largest_n_solved``: per seed, the largest N whose run met bsuite's rule (every episode) within
  its cap (None: none);
- ``seeds_solved``: per size, the seeds whose run met the rule, with the exact Clopper-Pearson
  interval of that share (:func:`pcnn_explore.verdicts.binomial_interval`).

Over the whole protocol's 21 sizes while only some are in (:func:`protocol_score`): each seed's score
between a lower bound (a size not yet run counted as not solved) and an upper one (counted as solved),
with an interval from the low end of the lower scores' exact interval to the high end of the upper ones'.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from pcnn_explore.envs.deep_sea_protocol import (FORGIVE_EPISODES, PROTOCOL_EPISODES, PROTOCOL_SIZES,
                                                 bsuite_logged_episodes)

__all__ = ["next_logged_episode", "summarise", "protocol_score", "protocol_score_text",
           "summary_text", "whole_protocol_text",
           "scaling_figure", "score_figure"]


def next_logged_episode(episode: int) -> int:
    """The first of bsuite's logged episodes at or after ``episode`` (11 -> 12, 12 -> 12, 101 -> 120)."""
    e = int(episode)
    logged = bsuite_logged_episodes(2 * e)
    return int(logged[logged >= e][0])


def _counts(size: int, episode: int | None, cap: int) -> bool:
    return episode is not None and episode < 2 ** size + FORGIVE_EPISODES and episode <= min(cap, PROTOCOL_EPISODES)


def summarise(rows: Sequence[Mapping[str, Any]], caps: Mapping[int, int] | None = None,
              labels: Mapping[str, str] | None = None) -> dict[str, dict]:
    """Per line (``variant`` of the rows, in order): the values of the module docstring. ``rows``: the
    scaling rows (``size``, ``variant``, ``seed``, ``episodes_run``, ``solve_episode``,
    ``bsuite_solve_episode``, ``counts_for_score``); ``caps``: each size's episode cap (None: the
    protocol's 10K). A run "stopped between logged episodes" ran exactly to its every-episode solve
    episode, which bsuite does not log."""
    from pcnn_explore.verdicts import binomial_interval, sign_flip_interval

    caps = dict(caps or {})
    out: dict[str, dict] = {}
    for key in dict.fromkeys(r["variant"] for r in rows):
        mine = [r for r in rows if r["variant"] == key]
        sizes, seeds = sorted({int(r["size"]) for r in mine}), sorted({int(r["seed"]) for r in mine})
        by = {(int(r["size"]), int(r["seed"])): r for r in mine}
        low, high, largest, between = [], [], [], 0
        for s in seeds:
            lo = hi = 0
            solved_sizes = []
            for n in sizes:
                r = by.get((n, s))
                if r is None:
                    continue
                cap, e, seen = caps.get(n, PROTOCOL_EPISODES), r["solve_episode"], r["bsuite_solve_episode"]
                lo += int(bool(r["counts_for_score"]))
                upper = bool(r["counts_for_score"])
                if seen is None and e is not None and int(r["episodes_run"]) == int(e):
                    between += 1
                    upper = _counts(n, next_logged_episode(int(e)), cap)
                hi += int(upper)
                if e is not None:
                    solved_sizes.append(n)
            low.append(lo / len(sizes))
            high.append(hi / len(sizes))
            largest.append(max(solved_sizes) if solved_sizes else None)
        a, b = sign_flip_interval(low)
        solved_by_size = {}
        for n in sizes:
            k = sum(by.get((n, s), {}).get("solve_episode") is not None for s in seeds)
            solved_by_size[str(n)] = {"k": k, "n": len(seeds), "interval": list(binomial_interval(k, len(seeds)))}
        out[key] = {"label": (labels or {}).get(key, key), "sizes": sizes, "seeds": seeds, "per_seed_score": low,
                    "score_mean": sum(low) / len(low), "score_interval": [max(0.0, a), min(1.0, b)],
                    "per_seed_score_upper": high, "stopped_between_logged": between,
                    "largest_n_solved": largest, "seeds_solved": solved_by_size}
    return out


def protocol_score(rows: Sequence[Mapping[str, Any]], seeds: Sequence[int], sizes: Sequence[int] = PROTOCOL_SIZES) -> dict:
    """bsuite's score over all ``sizes`` of one line's runs held so far (``rows``: its scaling rows):
    ``{"complete", "sizes_in" (sizes every seed has run), "per_seed_lower", "per_seed_upper"
    (:func:`pcnn_explore.envs.deep_sea_protocol.score_bounds`: a size not yet run counted as not solved,
    and as solved), "lower_mean", "upper_mean", "interval"}``; ``interval`` runs from the low end of the
    lower scores' exact 95% interval to the high end of the upper scores', so it holds the score's
    interval whatever the sizes still to run give; once complete it is the score's."""
    from pcnn_explore.envs.deep_sea_protocol import score_bounds
    from pcnn_explore.verdicts import sign_flip_interval

    counted = {int(s): {} for s in seeds}
    for r in rows:
        counted[int(r["seed"])][int(r["size"])] = bool(r["counts_for_score"])
    bounds = [score_bounds(counted[int(s)], sizes) for s in seeds]
    lower, upper = [b[0] for b in bounds], [b[1] for b in bounds]
    sizes_in = [n for n in sizes if all(n in counted[int(s)] for s in seeds)]
    return {"complete": len(sizes_in) == len(sizes), "sizes_in": sizes_in, "per_seed_lower": lower, "per_seed_upper": upper,
            "lower_mean": sum(lower) / len(lower), "upper_mean": sum(upper) / len(upper),
            "interval": [max(0.0, sign_flip_interval(lower)[0]), min(1.0, sign_flip_interval(upper)[1])]}


def protocol_score_text(p: Mapping) -> str:
    """A line's :func:`protocol_score` in words: ``0.91 [0.86, 0.95]`` once complete, else ``between 0.12
    and 0.66 [0.00, 0.76]`` (the bounds' means and the interval that holds the score)."""
    lo, hi = p["interval"]
    if p["complete"]:
        return f"{p['lower_mean']:.2f} [{lo:.2f}, {hi:.2f}]"
    return f"between {p['lower_mean']:.2f} and {p['upper_mean']:.2f} [{lo:.2f}, {hi:.2f}]"


def whole_protocol_text(whole: Mapping | None) -> str:
    """Per line, bsuite's score over the 21 sizes: ``0.71 [0.60, 0.80]`` once every run is in, else
    ``between 0.24 and 1.00 [0.24, 1.00] over 6 seeds, 5 of 21 sizes in``; then the largest N solved per seed."""
    if not whole:
        return "no bsuite log of the whole protocol in the store"
    out = [f"{whole['part']}: bsuite's deep-sea score over N = 10 ... 50 (10K episodes), per line, 95% exact interval"]
    for x in whole["lines"].values():
        p = x["protocol_score"]
        score = f"{protocol_score_text(p)} over {len(p['per_seed_lower'])} seeds" + (
            "" if p["complete"] else f", {len(p['sizes_in'])} of {len(PROTOCOL_SIZES)} sizes in")
        largest = ", ".join("-" if n is None else str(n) for n in x["largest_n_solved"])
        out.append(f"{x['label']}: {score}; largest N solved {largest}")
    return "\n".join(out)


def summary_text(summary: Mapping[str, dict], part: str) -> str:
    """One line per line: mean score, its interval, the per-seed scores and the largest N solved."""
    out = [f"{part}: bsuite's deep-sea score over the sizes run, per seed"]
    for key, x in summary.items():
        lo, hi = x["score_interval"]
        largest = ", ".join("-" if n is None else str(n) for n in x["largest_n_solved"])
        out.append(f"{x['label']}: mean {x['score_mean']:.2f} [{lo:.2f}, {hi:.2f}] over {len(x['seeds'])} seeds; "
                   f"per seed {', '.join(f'{v:.2f}' for v in x['per_seed_score'])}; largest N solved {largest}"
                   + (f"; {x['stopped_between_logged']} runs stopped between bsuite's logged episodes "
                      f"(upper bound mean {sum(x['per_seed_score_upper']) / len(x['seeds']):.2f})"
                      if x["stopped_between_logged"] else ""))
    return "\n".join(out)


def scaling_figure(rows: Sequence[Mapping[str, Any]], labels: Mapping[str, str], title: str):
    """Episodes to solve against N with 2^N dashed (:func:`pcnn_explore.plots.deep_sea.plot_deep_sea_scaling`)."""
    from pcnn_explore.plots.deep_sea import plot_deep_sea_scaling

    return plot_deep_sea_scaling(rows, labels, None, title)


def score_figure(summary: Mapping[str, dict], part: str):
    """Per line: each seed's score (dots) and the mean with its exact sign-flip interval (bar); a Figure."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.6), layout="constrained")
    ax = fig.add_subplot()
    for i, (key, x) in enumerate(summary.items()):
        n = len(x["per_seed_score"])
        ax.scatter([i + 0.15 * (j / max(n - 1, 1) - 0.5) for j in range(n)], x["per_seed_score"], s=14, alpha=0.7)
        lo, hi = x["score_interval"]
        ax.errorbar([i], [x["score_mean"]], yerr=[[x["score_mean"] - lo], [hi - x["score_mean"]]], fmt="D",
                    color="k", capsize=4)
    ax.set_xticks(range(len(summary)))
    ax.set_xticklabels([x["label"] for x in summary.values()], fontsize=8, rotation=10)
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("deep-sea score (share of sizes)")
    ax.set_title(f"bsuite's deep-sea score per seed, mean and exact 95% interval ({part})", fontsize=9)
    return fig
