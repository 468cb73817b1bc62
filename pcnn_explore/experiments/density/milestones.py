"""Fig. 10 (notebook 11): the intrinsic reward over an episode peaks at milestones (room changes).

metrics.json's ``summary`` and ``paper`` for a recorded episode summarised by
:func:`pcnn_explore.record.summarize_episode` (bonus values are the pseudo-count bonus r+,
dimensionless; steps are agent steps), and the notebook's one claim decided on it
(:func:`decisions`). The paper shows one episode and no numbers, and so does this notebook: one
episode is one sample, so no test decides; the claim
(:mod:`pcnn_explore.study.preregistered.intrinsic_reward_episode`) is ``not testable: too few seeds
at this profile (one recorded episode, no seeds)``, its record keeps the episode's number and says
which of the claim's conditions the episode meets (:func:`episode_detail`).
"""
from __future__ import annotations

import math

from pcnn_explore.study import Decision, decide
from pcnn_explore.study.preregistered import intrinsic_reward_episode as plan

__all__ = ["PAPER", "episode_detail", "decisions", "summary"]

PAPER = {
    "room_change_to_median": "peaks well above the typical step (Fig. 10; no number given)",
    "first_room_change_rank": "a peak: among the largest bonuses of the episode",
    "verdict": "the intrinsic reward peaks at milestones such as entering a new room, even late in training (Fig. 10)",
}


def episode_detail(s: dict, compare: dict | None = None) -> str:
    """What the episode summary ``s`` shows of the claim's conditions
    (:mod:`pcnn_explore.study.preregistered.intrinsic_reward_episode`): which hold and which not, with
    its numbers (and ``compare``'s, the CTS recording of the same episode); that it has no room change."""
    if s.get("first_room_change_step") is None:
        return "the episode has no room change"
    ratio, rank, n = s["room_change_to_median"], s["first_room_change_rank"], s["n_frames"]
    name = s["density_model"]
    detail = (f"{name} bonus at room changes {ratio:.2f}x the median; the first room change "
              f"(step {s['first_room_change_step']}) ranks {rank} of {n} steps")
    conditions = {
        f"{name} peaks at room changes (>= {plan.PEAK_RATIO:g}x median)": not math.isnan(ratio) and ratio >= plan.PEAK_RATIO,
        f"first room change in the top {plan.TOP_SHARE:.0%}": rank <= max(1, math.ceil(plan.TOP_SHARE * n))}
    if compare is not None:
        other, c_ratio = compare["density_model"], compare["room_change_to_median"]
        detail += f"; {other} {c_ratio:.2f}x"
        conditions[f"{name} sharper than {other} at room changes"] = (not math.isnan(ratio) and not math.isnan(c_ratio)
                                                                      and ratio > c_ratio)
    held = [k for k, v in conditions.items() if v]
    return (f"in this episode {', '.join(held) or 'no condition'} holds"
            + (f"; not: {', '.join(k for k in conditions if k not in held)}" if len(held) < len(conditions) else "")
            + f" ({detail})")


def decisions(s: dict, compare: dict | None = None) -> list[Decision]:
    """The notebook's one claim decided on the episode summary ``s`` (and ``compare``): not testable,
    one episode; its value the density model's bonus at room changes over the episode's median (None
    without a room change), its detail :func:`episode_detail`."""
    claim = plan.claim(s.get("density_model", "pixelcnn"))
    return [decide(claim, [s.get("room_change_to_median")], detail=episode_detail(s, compare))]


def summary(s: dict, compare: dict | None = None) -> dict:
    """Key figures for metrics.json's ``summary`` (and ``compare_...`` for the second model)."""
    keys = ("room_change_to_median", "first_room_change_step", "first_room_change_rank", "n_frames", "max_bonus",
            "max_bonus_step", "extrinsic_return")
    out = {k: s[k] for k in keys}
    if compare is not None:
        out.update({f"compare_{compare['density_model']}_{k}": compare[k]
                    for k in ("room_change_to_median", "first_room_change_rank", "max_bonus")})
    return out
