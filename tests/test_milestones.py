"""Notebook 11's verdict on hand-made episode summaries."""
from pcnn_explore.experiments.density.milestones import CLAIM, summary, verdict
from pcnn_explore.verdicts import TOO_FEW_SEEDS, reason_of, word_of


def _s(ratio, rank, n=200, first=40):
    return {"density_model": "pixelcnn", "room_change_to_median": ratio, "first_room_change_rank": rank,
            "n_frames": n, "first_room_change_step": first, "max_bonus": 1.0, "max_bonus_step": 40,
            "extrinsic_return": 400.0}


def test_milestone_verdicts():
    # one episode is one sample, no seeds: nothing is decided whatever the episode shows, so the word is not
    # testable with its reason, too few seeds (0.3; was inconclusive); the text says what the episode shows
    head = "not testable: too few seeds at this profile (one recorded episode, no seeds): "
    assert verdict(_s(3.0, 1), "study").startswith(head + "in this episode pixelcnn peaks at room changes")
    assert "; not:" not in verdict(_s(3.0, 1), "study")
    assert "; not: first room change in the top 5%" in verdict(_s(3.0, 50), "study")  # a peak, not among the top 5%
    assert "; not: pixelcnn peaks at room changes" in verdict(_s(1.5, 1), "study")
    assert verdict(_s(0.5, 150), "study").startswith(head + "in this episode no condition holds; not: ")
    assert verdict(_s(3.0, 1), "smoke").startswith(
        "not testable: too few seeds at this profile (smoke runs check the plumbing only): ")
    assert verdict(_s(3.0, None, first=None), "study") == head + "the episode has no room change"
    for s in (_s(3.0, 1), _s(0.5, 150), _s(3.0, None, first=None)):
        assert word_of(verdict(s, "study")) == "not testable" and reason_of(verdict(s, "study")) == TOO_FEW_SEEDS
    s = summary(_s(3.0, 1), "study", compare={**_s(1.2, 9), "density_model": "cts"})
    assert s["compare_cts_room_change_to_median"] == 1.2 and "cts 1.20x" in s["verdict"]
    record = s["claims"][CLAIM]
    assert (record["verdict"], record["reason"], record["estimate"], record["n"]) == (
        "not testable", TOO_FEW_SEEDS, 3.0, 1)


def test_milestone_verdict_uses_the_cts_contrast():
    cts = {**_s(1.2, 9), "density_model": "cts"}
    assert verdict(_s(3.0, 1), "study", cts).startswith("not testable: too few seeds at this profile (one recorded "
                                                        "episode, no seeds): in this episode pixelcnn peaks")
    # PixelCNN peaks at the room change, but CTS's peak there stands out more: the text says so
    sharper_cts = {**_s(4.0, 1), "density_model": "cts"}
    assert verdict(_s(3.0, 1), "study", sharper_cts) == (
        "not testable: too few seeds at this profile (one recorded episode, no seeds): in this episode pixelcnn "
        "peaks at room "
        "changes (>= 2x median), "
        "first room change in the top 5% holds; not: pixelcnn sharper than cts at room changes (pixelcnn bonus at "
        "room changes 3.00x the median; the first room change (step 40) ranks 1 of 200 steps; cts 4.00x)")
