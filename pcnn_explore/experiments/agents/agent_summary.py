"""The ``summary`` and ``paper`` entries of notebooks 07-10's metrics.json: the paper's evaluation
(maximum score, AUC, improvement in % of AUC over DQN; :mod:`pcnn_explore.evaluation`) of each
line on the experiment's first env, beside the paper's numbers and claims, and a verdict that covers
every env the experiment ran (:func:`games_verdict`: the count of games that agree, and each game's word).

The verdict (``summary["verdict"]``) is one of ``agrees``, ``partly``, ``differs`` or
``not testable at this profile``, followed by the numbers that decide it. Smoke runs are plumbing
checks: never testable. The rules, per figure, on the AUC over the windows every line has:

- Fig. 5: agrees when DQN-PixelCNN and DQN-CTS both improve on DQN and DQN-PixelCNN's AUC is at
  least DQN-CTS's; partly when only DQN-PixelCNN improves on DQN; else differs.
- Fig. 11: agrees when DQN-PixelCNN (bonus and MMC) has the highest AUC of the four; partly when
  it beats DQN only; else differs.
- Fig. 12: agrees when every scale c scores (maximum score > 0) and the largest c's maximum
  score is at least the smallest's; partly when some scale scores; else differs.
- Fig. 13: agrees when the intrinsic-only agent scores and its AUC is at least DQN's (where DQN
  ran); partly when it scores, below DQN; else differs.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from pcnn_explore.evaluation import format_improvement, Improvement
from pcnn_explore.verdicts import VERDICTS

if TYPE_CHECKING:
    from pcnn_explore.experiments.agents.agent_curves import AgentExperimentResults

__all__ = ["VERDICTS", "summary", "paper", "verdict", "games_verdict"]

#: per figure: the lines its rule compares
_NEEDS = {"fig5": ("dqn", "cts_mmc", "pixelcnn_mmc"), "fig11": ("dqn", "dqn_mmc", "pixelcnn", "pixelcnn_mmc"),
          "fig12": (), "fig13": ("intrinsic_only",)}


def _gt(a: float, b: float) -> bool:
    return not (math.isnan(a) or math.isnan(b)) and a > b


def _imp(ev: dict, key: str) -> str:
    d = ev[key]
    return "n/a" if d["improvement"] is None else format_improvement(Improvement(d["improvement"], d["symmetric"]))


def verdict(figure: str, ev: dict[str, dict], profile: str, steps: int) -> str:
    """The verdict of one figure from :meth:`AgentExperimentResults.evaluation` (see the module docstring)."""
    if profile == "smoke":
        return f"not testable at this profile: smoke runs ({steps:,} agent steps) check the plumbing only"
    lacking = [k for k in _NEEDS[figure] if k not in ev]
    if lacking or (figure == "fig12" and not ev):
        return f"not testable at this profile: the lines it compares ({', '.join(lacking) or 'scales'}) were not run"
    auc = {k: d["auc"] for k, d in ev.items()}
    peak = {k: d["max_score"] for k, d in ev.items()}
    if figure == "fig5":
        numbers = (f"AUC over DQN: DQN-PixelCNN {_imp(ev, 'pixelcnn_mmc')}, DQN-CTS {_imp(ev, 'cts_mmc')}; "
                   f"AUC DQN-PixelCNN {auc['pixelcnn_mmc']:.3g} vs DQN-CTS {auc['cts_mmc']:.3g}")
        pc, cts = _gt(auc["pixelcnn_mmc"], auc["dqn"]), _gt(auc["cts_mmc"], auc["dqn"])
        word = "agrees" if pc and cts and not _gt(auc["cts_mmc"], auc["pixelcnn_mmc"]) else "partly" if pc else "differs"
    elif figure == "fig11":
        others = [k for k in ("dqn", "dqn_mmc", "pixelcnn")]
        numbers = "AUC " + ", ".join(f"{k} {auc[k]:.3g}" for k in (*others, "pixelcnn_mmc"))
        best = all(_gt(auc["pixelcnn_mmc"], auc[k]) for k in others)
        word = "agrees" if best else "partly" if _gt(auc["pixelcnn_mmc"], auc["dqn"]) else "differs"
    elif figure == "fig12":
        keys = sorted(ev, key=lambda k: float(k[1:]) if k[1:].replace(".", "", 1).isdigit() else math.inf)
        scoring = [k for k in keys if _gt(peak[k], 0.0)]
        numbers = "maximum score " + ", ".join(f"{k} {peak[k]:.3g}" for k in keys)
        word = ("agrees" if len(scoring) == len(keys) and not _gt(peak[keys[0]], peak[keys[-1]])
                else "partly" if scoring else "differs")
    else:
        scores = _gt(peak["intrinsic_only"], 0.0)
        numbers = f"intrinsic-only maximum score {peak['intrinsic_only']:.3g}, AUC {auc['intrinsic_only']:.3g}"
        if "dqn" in ev:
            numbers += f" vs DQN's {peak['dqn']:.3g}, {auc['dqn']:.3g}"
        above = "dqn" not in ev or not _gt(auc["dqn"], auc["intrinsic_only"])
        word = "agrees" if scores and above else "partly" if scores else "differs"
    return f"{word}: {numbers}"


def summary(figure: str, results: AgentExperimentResults) -> dict[str, Any]:
    """metrics.json's ``summary``: per line ``<key>_max_score``, ``<key>_best_peak``, ``<key>_auc``,
    ``<key>_auc_vs_dqn_pct`` (and ``..._symmetric`` where marked), the curve window (agent steps), and
    the verdict."""
    ev = results.evaluation()
    out: dict[str, Any] = {"env": results.envs[0], "curve_window_steps": results.curve_window}
    for key, d in ev.items():
        out[f"{key}_max_score"], out[f"{key}_best_peak"], out[f"{key}_auc"] = d["max_score"], d["best_peak"], d["auc"]
        if d["improvement"] is not None and key != "dqn":
            out[f"{key}_auc_vs_dqn_pct"] = d["improvement"]
            if d["symmetric"]:
                out[f"{key}_auc_vs_dqn_symmetric"] = True
    profile = results.runs[0].spec.profile if results.runs else "smoke"
    steps = max((r.spec.steps for r in results.runs), default=0)
    if len(results.envs) <= 1:
        out["verdict"] = verdict(figure, ev, profile, steps)
        return out
    per_game = {env: verdict(figure, results.evaluation(env), profile, steps) for env in results.envs}
    out["envs"], out["verdict_by_game"] = list(results.envs), per_game
    out["verdict"] = games_verdict(per_game)
    return out


def games_verdict(per_game: dict[str, str]) -> str:
    """A figure's verdict over every game its grid runs (Fig. 6's caption counts games likewise):
    ``agrees`` when every game's verdict agrees, ``partly`` when some agree or partly agree,
    ``differs`` when none does; ``not testable at this profile`` when no game is testable. The
    count and each game's word follow."""
    words = {env: v.split(":", 1)[0] for env, v in per_game.items()}
    testable = {env: w for env, w in words.items() if w != "not testable at this profile"}
    if not testable:
        return next(iter(per_game.values()))
    k = sum(w == "agrees" for w in testable.values())
    word = ("agrees" if k == len(testable) else
            "partly" if k or any(w == "partly" for w in testable.values()) else "differs")
    games = "; ".join(f"{env} {w}" for env, w in words.items())
    return f"{word}: agrees in {k} of {len(per_game)} games ({games})"


def paper(figure: str, results: AgentExperimentResults) -> dict[str, Any]:
    """metrics.json's ``paper``, under the summary's names: the paper's claim of each line beside
    its learning curve's area (``<key>_auc``), the paper's numbers where it gives them for this env
    (Fig. 5: the appendix table's maximum scores; Fig. 12: Sec. 6's record peaks for c > 0.1, beside
    the best peak), and its claim as ``verdict``."""
    from pcnn_explore.experiments.agents.agent_figures import FIGURES
    from pcnn_explore.sweep.report import load_paper_scores, RECORD_PEAK, PAPER_COLUMNS

    fig = FIGURES[figure]
    out: dict[str, Any] = {f"{key}_auc": claim for key, claim in fig.claims.items()}
    scores = load_paper_scores().get(results.envs[0], {})
    for a in fig.arms:
        if figure == "fig5" and a.variant in PAPER_COLUMNS and not math.isnan(scores.get(PAPER_COLUMNS[a.variant], math.nan)):
            out[f"{a.key}_max_score"] = scores[PAPER_COLUMNS[a.variant]]
        if figure == "fig12" and a.overrides.get("pg_scale", 0.1) > 0.1 and not math.isnan(scores.get(RECORD_PEAK, math.nan)):
            out[f"{a.key}_best_peak"] = f"record peak {scores[RECORD_PEAK]:,.0f} (c > 0.1, one run)"
    out["verdict"] = {"fig5": "DQN-PixelCNN > DQN-CTS > DQN on hard exploration (AUC and maximum score)",
                      "fig11": "only the bonus with MMC makes progress on hard, sparse-reward games",
                      "fig12": "robust across c = 0.1 to 10; a larger c explores harder, peaks sooner",
                      "fig13": "the intrinsic reward alone trains an agent that scores"}[figure]
    return out
