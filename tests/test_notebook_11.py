"""Notebook 11 (Fig. 10) runs headlessly and reports the intrinsic reward around the milestones."""
from __future__ import annotations

import numpy as np

from pcnn_explore.record import load_episode, shipped_episode


def test_notebook_11_smoke(notebook_runner):
    metrics = notebook_runner("11_intrinsic_reward_episode.ipynb", interactive=False)
    episode = load_episode(shipped_episode("montezuma_pixelcnn"))
    assert metrics["profile"] == "smoke"
    assert metrics["density_model"] == "pixelcnn" and metrics["compare"]["density_model"] == "cts"
    # Figures that depend on the emulator come from the shipped episode's own arrays and metadata.
    assert metrics["episode"] == episode.metadata["settings"]
    assert metrics["n_frames"] == len(episode) == episode.metadata["settings"]["max_steps"]
    assert metrics["room_change_steps"] == episode.room_change_steps.tolist()
    assert len(metrics["room_change_steps"]) >= 3  # room 1 -> 2 and back: the milestones exist
    assert metrics["extrinsic_return"] == float(episode.rewards.sum()) > 0
    assert np.isclose(metrics["mean_bonus"], episode.bonus.mean())
    assert np.isclose(metrics["max_bonus"], episode.bonus.max())
    changes = episode.room_change_steps
    assert np.isclose(metrics["bonus_at_room_changes"], episode.bonus[changes].mean())
    assert np.isclose(metrics["room_change_to_median"], episode.bonus[changes].mean() / np.median(episode.bonus))
    # The shipped PixelCNN episode shows the paper's milestone: the first room change has the
    # episode's largest bonus.
    assert metrics["first_room_change_step"] == changes[0] == episode.bonus.argmax()
    assert metrics["first_room_change_rank"] == 1
    assert metrics["episode"]["policy"] == "scripted"
    # the CTS recording replays the same actions: the same rooms at the same steps
    cts = load_episode(shipped_episode("montezuma_cts"))
    assert metrics["compare"]["room_change_steps"] == cts.room_change_steps.tolist() == metrics["room_change_steps"]


def test_notebook_11_without_comparison(notebook_runner):
    metrics = notebook_runner("11_intrinsic_reward_episode.ipynb", interactive=False, compare_path=False)
    assert "compare" not in metrics
    assert metrics["n_frames"] == len(load_episode(shipped_episode("montezuma_pixelcnn")))
