"""Notebook 11 (Fig. 10) runs headlessly and reports the intrinsic reward around the milestones."""
from __future__ import annotations

import numpy as np

from pcnn_explore.record import load_episode, shipped_episode


def test_notebook_11_smoke(notebook_runner):
    metrics = notebook_runner("11_intrinsic_reward_episode.ipynb", interactive=False)
    episode = load_episode(shipped_episode("montezuma_pixelcnn"))
    assert metrics["profile"] == "smoke"
    assert metrics["density_model"] == "pixelcnn" and metrics["compare"]["density_model"] == "cts"
    assert metrics["n_frames"] == len(episode) == 500
    assert metrics["room_change_steps"] == episode.room_change_steps.tolist()
    assert metrics["room_change_steps"][:3] == [219, 233, 239]
    assert metrics["extrinsic_return"] == 400.0
    assert np.isclose(metrics["mean_bonus"], episode.bonus.mean())
    assert np.isclose(metrics["max_bonus"], episode.bonus.max())
    changes = episode.room_change_steps
    assert np.isclose(metrics["bonus_at_room_changes"], episode.bonus[changes].mean())
    assert np.isclose(metrics["room_change_to_median"], episode.bonus[changes].mean() / np.median(episode.bonus))
    # The shipped PixelCNN episode shows the paper's milestone: the first room change has the
    # episode's largest bonus.
    assert metrics["first_room_change_step"] == 219 and metrics["first_room_change_rank"] == 1
    assert metrics["episode"]["policy"] == "scripted" and metrics["episode"]["warmup_frames"] == 2000


def test_notebook_11_without_comparison(notebook_runner):
    metrics = notebook_runner("11_intrinsic_reward_episode.ipynb", interactive=False, compare_path=False)
    assert "compare" not in metrics and metrics["n_frames"] == 500
