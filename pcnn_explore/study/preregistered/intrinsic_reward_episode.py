"""Notebook 11's claim (Fig. 10): the intrinsic reward peaks at milestones such as entering a new room.

The paper shows one episode and no numbers, and so does this notebook: one episode is one sample, no
seeds, so no test decides. The claim is declared ``not testable: too few seeds at this profile`` (one
recorded episode); its record keeps the episode's number, the density model's bonus at room changes
over its median, on n = 1 episode, and says which of these conditions the episode meets:

- the bonus at room changes is at least :data:`PEAK_RATIO` times the episode's median;
- the first room change ranks among the top :data:`TOP_SHARE` of steps by bonus;
- with the CTS recording of the same episode (the contrast of Fig. 9: PixelCNN's peaks at rare
  events are sharper): PixelCNN's room-change-to-median ratio is above CTS's.
"""
from __future__ import annotations

from pcnn_explore.study.claim import Claim
from pcnn_explore.verdicts import TOO_FEW_SEEDS

__all__ = ["NOTEBOOK", "CLAIM", "PEAK_RATIO", "TOP_SHARE", "WHY", "claim"]

NOTEBOOK = "11_intrinsic_reward_episode"
#: the claim's name
CLAIM = "peaks at milestones"
PEAK_RATIO = 2.0
TOP_SHARE = 0.05
#: why one episode decides nothing
WHY = "one recorded episode, no seeds"
_MODELS = {"pixelcnn": "PixelCNN", "cts": "CTS", "pixelcnn_pos": "PixelCNN with position bias"}


def claim(density_model: str = "pixelcnn") -> Claim:
    """The claim on an episode recorded with ``density_model``'s bonus."""
    model = _MODELS.get(str(density_model), str(density_model))
    return Claim(NOTEBOOK, CLAIM, "paper", f"the intrinsic reward peaks at room changes (at least {PEAK_RATIO:g}x the median)",
                 "not_testable", quantity="bonus at room changes over the episode's median", unit="",
                 label=f"{model}'s bonus at room changes over its median", n_unit="episode", lines=(str(density_model),),
                 labels=(model,), reason=TOO_FEW_SEEDS, note=WHY, method="one recorded episode",
                 paper="the intrinsic reward peaks at milestones such as entering a new room, even late in training",
                 where="Fig. 10")
