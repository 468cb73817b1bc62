"""Notebook 11's one claim on hand-made episode summaries: one episode decides nothing, whatever it shows."""
from pcnn_explore.experiments.density.milestones import decisions, episode_detail, summary
from pcnn_explore.study import decide_again, metrics_record
from pcnn_explore.study.preregistered.intrinsic_reward_episode import CLAIM
from pcnn_explore.verdicts import TOO_FEW_SEEDS

HEAD = "not testable: too few seeds at this profile (one recorded episode, no seeds): "


def _s(ratio, rank, n=200, first=40):
    return {"density_model": "pixelcnn", "room_change_to_median": ratio, "first_room_change_rank": rank,
            "n_frames": n, "first_room_change_step": first, "max_bonus": 1.0, "max_bonus_step": 40,
            "extrinsic_return": 400.0}


def _sentence(s, compare=None):
    (d,) = decisions(s, compare)
    return d.sentence


def test_milestone_claim_is_not_testable_and_says_what_the_episode_shows():
    # one episode is one sample, no seeds: nothing is decided whatever the episode shows, so the word is not
    # testable with its reason, too few seeds; the text says what the episode shows
    assert _sentence(_s(3.0, 1)).startswith(HEAD + "in this episode pixelcnn peaks at room changes")
    assert "; not:" not in _sentence(_s(3.0, 1))
    assert "; not: first room change in the top 5%" in _sentence(_s(3.0, 50))  # a peak, not among the top 5%
    assert "; not: pixelcnn peaks at room changes" in _sentence(_s(1.5, 1))
    assert _sentence(_s(0.5, 150)).startswith(HEAD + "in this episode no condition holds; not: ")
    assert _sentence(_s(None, None, first=None)) == HEAD + "the episode has no room change"
    for s in (_s(3.0, 1), _s(0.5, 150), _s(None, None, first=None)):
        (d,) = decisions(s)
        assert (d.name, d.kind, d.word, d.reason, d.n, d.claim.n_unit) == (CLAIM, "paper", "not testable",
                                                                           TOO_FEW_SEEDS, 1, "episode")
        assert decide_again(d) == d
    # the record keeps the episode's number (none without a room change), on n = 1 episode
    (d,) = decisions(_s(3.0, 1), {**_s(1.2, 9), "density_model": "cts"})
    assert (d.estimate, d.values, d.interval, d.p) == (3.0, (3.0,), (None, None), None)
    assert d.claim.label == "PixelCNN's bonus at room changes over its median"
    assert decisions(_s(None, None, first=None))[0].estimate is None
    record = metrics_record([d])
    assert record["word"] == "not testable: too few seeds at this profile" and record["kit_word"] is None
    s = summary(_s(3.0, 1), compare={**_s(1.2, 9), "density_model": "cts"})
    assert s["compare_cts_room_change_to_median"] == 1.2 and "verdict" not in s and "claims" not in s


def test_milestone_detail_uses_the_cts_contrast():
    cts = {**_s(1.2, 9), "density_model": "cts"}
    assert _sentence(_s(3.0, 1), cts).startswith(HEAD + "in this episode pixelcnn peaks")
    # PixelCNN peaks at the room change, but CTS's peak there stands out more: the text says so
    sharper_cts = {**_s(4.0, 1), "density_model": "cts"}
    assert episode_detail(_s(3.0, 1), sharper_cts) == (
        "in this episode pixelcnn peaks at room changes (>= 2x median), first room change in the top 5% holds; not: "
        "pixelcnn sharper than cts at room changes (pixelcnn bonus at room changes 3.00x the median; the first room "
        "change (step 40) ranks 1 of 200 steps; cts 4.00x)")
