"""Notebook 11 (Fig. 10) runs headlessly and reports the intrinsic reward around the milestones."""
from __future__ import annotations

import numpy as np

from pcnn_explore.record import load_episode, shipped_episode
from pcnn_explore.report.first_screen import notebook_row
from pcnn_explore.report.index import verdict_word
from pcnn_explore.study import decisions_of


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
    # the one paper claim's record: not testable (one episode), with its number, which the first screen shows
    (record,) = decisions_of(metrics)
    ratio = metrics["room_change_to_median"]
    assert (record.name, record.kind, record.word, record.reason, record.estimate, record.n, record.method) == (
        "peaks at milestones", "paper", "not testable", "too few seeds at this profile", ratio, 1, "one recorded episode")
    assert record.claim.sentence == "the intrinsic reward peaks at room changes (at least 2x the median)"
    assert record.claim.label == "PixelCNN's bonus at room changes over its median" and record.claim.n_unit == "episode"
    assert record.sentence.startswith("not testable: too few seeds at this profile (one recorded episode, no seeds): "
                                      "in this episode pixelcnn peaks at room changes")
    assert "; cts " in record.sentence and not {"verdict", "claims"} & set(metrics["summary"])
    row = notebook_row("11_intrinsic_reward_episode", metrics, verdict_word(metrics))
    assert row.number == f"PixelCNN's bonus at room changes over its median {ratio:.3g}, n = 1 episode"
    assert row.word == "not testable" and row.reason.startswith("not testable: too few seeds at this profile")


def test_notebook_11_without_comparison(notebook_runner):
    metrics = notebook_runner("11_intrinsic_reward_episode.ipynb", interactive=False, compare_path=False)
    assert "compare" not in metrics
    assert metrics["n_frames"] == len(load_episode(shipped_episode("montezuma_pixelcnn")))
