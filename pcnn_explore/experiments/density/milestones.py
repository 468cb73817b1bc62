"""Fig. 10 (notebook 11): the intrinsic reward over an episode peaks at milestones (room changes).

metrics.json's ``summary`` and ``paper`` for a recorded episode summarised by
:func:`pcnn_explore.record.summarize_episode` (bonus values are the pseudo-count bonus r+,
dimensionless; steps are agent steps). The paper shows one episode and no numbers, and so does this
notebook: one episode is one sample, so no test decides and the verdict is ``not testable: too few
seeds at this profile (one recorded episode, no seeds)``
(:func:`pcnn_explore.experiments.density.density_verdicts.qualitative`), its number kept in the claims
record (:func:`claim_records`); its text says which of these conditions the episode meets

- the bonus at room changes is at least :data:`PEAK_RATIO` times the episode's median;
- the first room change ranks among the top :data:`TOP_SHARE` of steps by bonus;
- with the CTS recording of the same episode (the contrast of Fig. 9: PixelCNN's peaks at rare
  events are sharper): PixelCNN's room-change-to-median ratio is above CTS's.

Not testable: no room change in the episode, or a smoke run.
"""
from __future__ import annotations

import math

from pcnn_explore.experiments.density.density_verdicts import qualitative
from pcnn_explore.verdicts import NOT_TESTABLE, TOO_FEW_SEEDS, not_testable

__all__ = ["PEAK_RATIO", "TOP_SHARE", "PAPER", "CLAIM", "verdict", "claim_records", "summary"]

PEAK_RATIO = 2.0
TOP_SHARE = 0.05

PAPER = {
    "room_change_to_median": "peaks well above the typical step (Fig. 10; no number given)",
    "first_room_change_rank": "a peak: among the largest bonuses of the episode",
    "verdict": "the intrinsic reward peaks at milestones such as entering a new room, even late in training (Fig. 10)",
}


#: the notebook's one paper claim (the name of its claims record)
CLAIM = "peaks at milestones"
_MODELS = {"pixelcnn": "PixelCNN", "cts": "CTS", "pixelcnn_pos": "PixelCNN with position bias"}


def claim_records(verdict_text: str, ratio: float | None, density_model: str = "pixelcnn") -> dict:
    """metrics.json's ``claims`` record of the one paper claim: not testable (one recorded episode,
    too few seeds), with its number, the density model's bonus at room changes over the episode's
    median bonus (``ratio``, dimensionless; None or NaN when the episode has no room change), on
    n = 1 episode, so that the report's first screen shows it."""
    estimate = None if ratio is None or (isinstance(ratio, float) and math.isnan(ratio)) else float(ratio)
    model = _MODELS.get(str(density_model), str(density_model))
    return {CLAIM: {"kind": "paper", "order": 0,
                    "claim": f"the intrinsic reward peaks at room changes (at least {PEAK_RATIO:g}x the median)",
                    "verdict": NOT_TESTABLE, "reason": TOO_FEW_SEEDS, "sentence": verdict_text,
                    "label": f"{model}'s bonus at room changes over its median", "estimate": estimate,
                    "n": 1, "n_per_line": 1, "n_unit": "episode", "method": "one recorded episode"}}


def verdict(s: dict, profile: str, compare: dict | None = None) -> str:
    """The qualitative verdict (see the module docstring) of one episode summary ``s``."""
    if s.get("first_room_change_step") is None:
        return f"{not_testable(TOO_FEW_SEEDS, 'one recorded episode, no seeds')}: the episode has no room change"
    ratio, rank, n = s["room_change_to_median"], s["first_room_change_rank"], s["n_frames"]
    name = s["density_model"]
    detail = (f"{name} bonus at room changes {ratio:.2f}x the median; the first room change "
              f"(step {s['first_room_change_step']}) ranks {rank} of {n} steps")
    conditions = {f"{name} peaks at room changes (>= {PEAK_RATIO:g}x median)": not math.isnan(ratio) and ratio >= PEAK_RATIO,
                  f"first room change in the top {TOP_SHARE:.0%}": rank <= max(1, math.ceil(TOP_SHARE * n))}
    if compare is not None:
        other, c_ratio = compare["density_model"], compare["room_change_to_median"]
        detail += f"; {other} {c_ratio:.2f}x"
        conditions[f"{name} sharper than {other} at room changes"] = (not math.isnan(ratio) and not math.isnan(c_ratio)
                                                                      and ratio > c_ratio)
    return qualitative(profile, conditions, detail)


def summary(s: dict, profile: str, compare: dict | None = None) -> dict:
    """Key figures for metrics.json's ``summary`` (and ``compare_...`` for the second model), the
    verdict and the claims record (:func:`claim_records`)."""
    keys = ("room_change_to_median", "first_room_change_step", "first_room_change_rank", "n_frames", "max_bonus",
            "max_bonus_step", "extrinsic_return")
    out = {k: s[k] for k in keys}
    if compare is not None:
        out.update({f"compare_{compare['density_model']}_{k}": compare[k]
                    for k in ("room_change_to_median", "first_room_change_rank", "max_bonus")})
    out["verdict"] = verdict(s, profile, compare)
    out["claims"] = claim_records(out["verdict"], s.get("room_change_to_median"), s.get("density_model", "pixelcnn"))
    return out
