"""The density notebooks' claims (00-06), declared in :mod:`pcnn_explore.study.preregistered` and decided
by each experiment's ``decisions`` on the per-seed values of its summary, on hand-made numbers.

Exact p by hand: the sign-flip test over 6 seeds counts the 2^6 = 64 sign patterns of the paired
differences; when every difference has one sign, only the observed pattern reaches the observed
mean: p = 1/64 = 0.015625 <= 0.025 (agrees in that direction). With equal magnitudes and one of six
the other way, 1 + 6 = 7 patterns reach it: p = 7/64 = 0.109 (undecided). Fewer than 6 seeds per
line decide nothing: ``not testable: too few seeds at this profile``.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from pcnn_explore.experiments.density import conv_cts, episode_spikes, lr_schedules, online_training, pg_montezuma
from pcnn_explore.experiments.density import pseudo_counts, samples
from pcnn_explore.experiments.density import density_stats as ds
from pcnn_explore.experiments.density.density_training import seed_list
from pcnn_explore.study import decide, decide_again, metrics_record, notebook_words
from pcnn_explore.study.preregistered import conv_cts as conv_cts_plan
from pcnn_explore.study.preregistered import pseudo_counts as pseudo_counts_plan
from pcnn_explore.report.index import verdict_word

SEEDS = [0, 2, 4]
SIX = [0, 2, 4, 6, 8, 10]
P1 = 1 / 64  # every one of 6 paired differences one way
P7 = 7 / 64  # equal magnitudes, one of 6 the other way
FEW = "not testable: too few seeds at this profile"
NAN = float("nan")


def _by_name(decisions):
    return {d.name: d for d in decisions}


def test_seed_list_keeps_held_out_streams_apart():
    assert seed_list(0, 3) == (0, 2, 4) and seed_list(5, 1) == (5,)
    with pytest.raises(ValueError, match="n_seeds"):
        seed_list(0, 0)
    with pytest.raises(ValueError, match="seed"):
        seed_list(-1, 3)


def _spikes(fraction, chance, seeds):
    return {"seeds": list(seeds), "spikes_near_start_fraction_per_seed": list(fraction),
            "chance_fraction_per_seed": list(chance)}


def test_the_notebook_word_is_the_paper_claims_and_the_record_decides_again_to_itself():
    agree = episode_spikes.decisions(_spikes([0.8, 0.7, 0.9, 0.8, 0.7, 0.9], [0.05] * 6, SIX))
    record = metrics_record(agree)
    assert (record["schema"], record["word"], record["kit_word"]) == (1, "agrees", None)
    assert verdict_word({"profile": "study", **record}) == "agrees"
    assert verdict_word({"profile": "smoke", **record}) == "not testable"  # a smoke run is never a verdict
    assert [decide_again(d) for d in agree] == agree
    few = episode_spikes.decisions(_spikes([0.8, 0.7, 0.9], [0.05] * 3, SEEDS))
    assert few[0].sentence.startswith(f"{FEW} (needs 6 per line, has 3)")
    assert notebook_words(few) == (FEW, None)
    undecided = episode_spikes.decisions(_spikes([0.8, NAN, 0.9] * 2, [0.05] * 6, SIX))
    assert undecided[0].word == "inconclusive" and notebook_words(undecided)[0] == "inconclusive"


CLAIM_00 = "PixelCNN PG does not vanish"


def _counts(exponent, seeds, count_slope=None):
    out = {"seeds": list(seeds), "pixelcnn_repeat_pg_exponent_per_seed": list(exponent)}
    if count_slope is not None:
        out["cts_repeat_count_slope_per_seed"] = list(count_slope)
    return _by_name(pseudo_counts.decisions(out))


def test_pseudo_counts_pg_exponent_above_the_floor():
    assert pseudo_counts_plan.PG_EXPONENT_FLOOR == -0.5
    # a PG that levels off: b - (-1/2) > 0 on every seed: the sign flip's p = 1/64
    c = _counts([0.2, 0.1, 0.0, 0.2, 0.1, 0.0], SIX)[CLAIM_00]
    assert c.word == "agrees" and c.test == "sign_flip" and c.p == pytest.approx(P1)
    assert c.estimate == pytest.approx(0.1) and "PixelCNN's PG exponent b = 0.1" in c.sentence
    assert "against the threshold -0.5" in c.sentence and "b - (" not in c.sentence  # no garbled exponent
    # a PG that decays like a count's (b near -1) on every seed: differs
    assert _counts([-0.9, -1.0, -1.1] * 2, SIX)[CLAIM_00].word == "differs"
    # five seeds level off, one decays as far: 7 of the 64 patterns reach the mean, p = 7/64: undecided
    c = _counts([0.0] * 5 + [-1.0], SIX)[CLAIM_00]
    assert c.word == "inconclusive" and c.p == pytest.approx(P7)
    # three seeds decide nothing, however clear
    assert _counts([0.2, 0.1, 0.0], SEEDS)[CLAIM_00].sentence.startswith(FEW)
    nan = _counts([0.1, NAN, 0.0] * 2, SIX)[CLAIM_00]
    assert nan.word == "inconclusive" and nan.sentence == (
        "inconclusive: not decided: 4 of 6 seeds give a finite value, a test needs all and at least 2")
    assert decide(pseudo_counts_plan.pg_claim(SIX, floor=-1.5), [-1.0] * 6).word == "agrees"
    # the first part: CTS's pseudo-count grows with the real count (slope above 0)
    both = _counts([0.2] * 6, SIX, count_slope=[0.05, 0.04, 0.1, 0.06, 0.05, 0.07])
    assert list(both) == ["pseudo-counts grow with real counts", CLAIM_00]
    grow = both["pseudo-counts grow with real counts"]
    assert grow.word == "agrees" and grow.p == pytest.approx(P1) and grow.estimate == pytest.approx(0.37 / 6)
    flat = _counts([0.2] * 6, SIX, count_slope=[-0.001, -0.003, -0.001, -0.002, -0.001, -0.001])
    assert flat["pseudo-counts grow with real counts"].word == "differs"


def test_pg_decay_exponent_by_hand():
    k = np.arange(60)
    # PG = 3 / k: exponent -1 (the first visit, k = 0, is left out); a PG that levels off: 0
    assert ds.pg_decay_exponent(k, np.r_[100.0, 3.0 / k[1:]]) == pytest.approx(-1.0)
    assert ds.pg_decay_exponent(k, np.full(60, 7.0)) == pytest.approx(0.0, abs=1e-12)
    # a count's PG ln(1 + 1/k) over k = 1..59: -0.9457; a count 20 times slower, ln(1 + 20/k): -0.6414
    assert ds.pg_decay_exponent(k, np.log1p(1.0 / np.maximum(k, 1))) == pytest.approx(-0.9457402, abs=1e-6)
    assert ds.pg_decay_exponent(k, np.log1p(20.0 / np.maximum(k, 1))) == pytest.approx(-0.6413780, abs=1e-6)
    assert ds.pg_decay_exponent(k, np.log1p(20.0 / np.maximum(k, 1))) < pseudo_counts_plan.PG_EXPONENT_FLOOR
    # non-positive PGs (a PixelCNN is not learning-positive) leave the fit: k^-1/2 with two zeros and a -1
    pg = np.r_[5.0, k[1:] ** -0.5]
    pg[[3, 10, 20]] = [0.0, -1.0, 0.0]
    assert ds.pg_decay_exponent(k, pg) == pytest.approx(-0.5)
    assert math.isnan(ds.pg_decay_exponent([0, 1, 2], [5.0, 1.0, 0.5]))  # two visits with k >= 1
    assert math.isnan(ds.pg_decay_exponent([0, 1, 2, 3], [5.0, 1.0, -0.1, 0.0]))
    with pytest.raises(ValueError, match="one value per visit"):
        ds.pg_decay_exponent([0, 1, 2], [1.0, 2.0])


def _orders(area, rise, seeds):
    out = {"seeds": list(seeds)}
    for m in area:
        out[f"heldout_area_{m}_nats_per_seed"] = list(area[m])
        out[f"worst_heldout_increase_{m}_nats_per_seed"] = list(rise[m])
    return _by_name(online_training.decisions(out))


def test_training_orders_equivalence_margin():
    area = {"online": [100.0] * 6, "permutation": [101.0, 99.0, 100.5, 101.0, 99.0, 100.5],
            "replacement": [130.0, 131.0, 129.0, 130.0, 131.0, 129.0]}
    rise = {m: [2.0] * 6 for m in area}
    c = _orders(area, rise, SIX)
    assert list(c) == ["permutation progress", "permutation stability", "replacement progress", "replacement stability"]
    # permutation: relative areas .01, -.01, .005 (twice): inside +-.1 on every seed, both one-sided p = 1/64
    p = c["permutation progress"]
    assert p.word == "agrees" and p.estimate == pytest.approx(0.01 / 6) and p.p == pytest.approx(P1)
    assert p.test == "sign_flip_tost" and "rise share" in c["permutation stability"].sentence
    assert c["permutation stability"].word == "agrees"  # rise shares .0198 .. .0202 against .02
    # replacement: .30, .31, .29: beyond the margin on every seed
    assert c["replacement progress"].word == "differs"
    rise["permutation"] = [2.0, 2.0, 2.0, 20.0, 2.0, 2.0]  # one seed's curve jumps: not shown inside the margin
    assert _orders(area, rise, SIX)["permutation stability"].word == "inconclusive"
    few = _orders({m: v[:3] for m, v in area.items()}, {m: v[:3] for m, v in rise.items()}, SEEDS)
    assert {v.reason for v in few.values()} == {"too few seeds at this profile"}
    with pytest.raises(ValueError, match="online"):
        _orders({"permutation": [1.0] * 6}, {"permutation": [0.0] * 6}, SIX)


def test_episode_spikes_against_chance():
    spikes = lambda f, c: episode_spikes.decisions(_spikes(f, c, SIX))[0]  # noqa: E731
    c = spikes([0.8, 0.7, 0.9] * 2, [0.05] * 6)
    assert c.word == "agrees" and c.p == pytest.approx(P1) and c.estimate == pytest.approx(0.75)
    assert c.name == "spikes at episode starts" and c.claim.label == "near-start share - chance"
    # five seeds .1 above chance, one .1 below: p = 7/64, one lucky seed less does not decide it
    assert spikes([0.2] * 5 + [0.0], [0.1] * 6).word == "inconclusive"
    assert spikes([0.0, 0.01, 0.0] * 2, [0.1] * 6).word == "differs"
    nan = spikes([0.8, NAN, 0.9] * 2, [0.05] * 6)
    assert nan.sentence == "inconclusive: not decided: 4 of 6 seeds give a finite value, a test needs all and at least 2"
    # no seed's run ranks a spike (every share None): too short to test the claim, not testable, no number
    short = spikes([None] * 6, [0.0] * 6)
    assert (short.word, short.reason, short.estimate, short.n) == ("not testable", "too few seeds at this profile",
                                                                   None, None)
    assert short.sentence == ("not testable: too few seeds at this profile (no episode start after the first frames "
                              "of any seed: this run is too short to test the claim)")


def _grid(c, s, i):
    return {("constant", 1e-4): c[0], ("constant", 1e-3): c[1], ("constant", 1e-2): c[2],
            ("inverse_sqrt", 0.1): s[0], ("inverse_sqrt", 1.0): s[1], ("inverse", 1.0): i[0], ("inverse", 10.0): i[1]}


def _schedules(runs, seeds):
    """03's decisions on per-seed final losses ``runs[i][(schedule, rate)]``, as its summary keys them."""
    summary = {"seeds": list(seeds)}
    for (schedule, lr) in runs[0]:
        summary[f"final_loss_{schedule}_{lr:g}_nats_per_seed"] = [r[(schedule, lr)] for r in runs]
    return _by_name(lr_schedules.decisions(summary))


def _rates(runs, seeds):
    """03's named rates each on its own (the text claim's detail), as :func:`_schedules` keys them."""
    summary = {"seeds": list(seeds)}
    for (schedule, lr) in runs[0]:
        summary[f"final_loss_{schedule}_{lr:g}_nats_per_seed"] = [r[(schedule, lr)] for r in runs]
    return _by_name(lr_schedules.rate_details(summary))


def test_lr_schedules_caption_text_worst_and_robustness():
    from pcnn_explore.study.preregistered import lr_schedules as plan03

    three = [_grid((120, 100, 110), (105, 140), (200, NAN)), _grid((121, 101, 111), (104, 150), (210, 300)),
             _grid((119, 99, 112), (106, 145), (190, 250))]
    runs = three * 2
    ln = math.log
    c = _schedules(runs, SIX)
    # the re-run's claims, in the declared order; the decaying schedules in alphabetical order, whatever the grid's
    assert tuple(c) == plan03.RERUN_CLAIMS == (
        "constant 1e-3 smallest (caption)", "constant 1e-3 or 0.1 n^-1/2 lowest (text)", "n^-1 worst",
        "constant more robust than inverse", "constant more robust than inverse_sqrt")
    # the caption: constant 1e-3 (100, 101, 99) against the smallest of every other run (105, 104, 106: 0.1 n^-1/2,
    # named by the text but not by the caption): -5, -3, -7 on each half, all below: p = 1/64
    cap = c[plan03.CAPTION]
    assert cap.word == "agrees" and cap.estimate == pytest.approx(-5.0) and cap.p == pytest.approx(P1)
    assert cap.values == (100, 101, 99) * 2 and cap.values_b == (105, 104, 106) * 2
    assert cap.claim.sentence == plan03.CAPTION_SENTENCE and cap.test == "sign_flip"
    # the text: min(100, 105) = 100, min(101, 104) = 101, min(99, 106) = 99 against the smallest unnamed run
    # (110, 111, 112): -10, -10, -13, mean -11
    text = c[plan03.TEXT]
    assert text.word == "agrees" and text.estimate == pytest.approx(-11.0) and text.p == pytest.approx(P1)
    assert text.values_b == (110, 111, 112) * 2
    # each named rate on its own against the best unnamed run (110, 111, 112; 0.1 n^-1/2 is named, 1 n^-1/2 not):
    # constant 1e-3: 100, 101, 99 -> below on every seed; 0.1 n^-1/2: 105, 104, 106 -> below on every seed;
    # the text claim's detail, deciding nothing
    r = _rates(runs, SIX)
    first, second = r["constant 1e-3 lowest"], r["0.1 n^-1/2 lowest"]
    assert first.word == "agrees" and first.estimate == pytest.approx(-11.0) and first.p == pytest.approx(P1)
    assert second.word == "agrees" and second.estimate == pytest.approx(-6.0)
    assert text.detail == ("each named rate alone, deciding nothing: constant 1e-3 alone - best unnamed rate -11 "
                           f"nats, 95% [{first.interval[0]:.3g}, {first.interval[1]:.3g}], p = 0.0156 (agrees); "
                           f"0.1 n^-1/2 alone - best unnamed rate -6 nats, 95% [{second.interval[0]:.3g}, "
                           f"{second.interval[1]:.3g}], p = 0.0156 (agrees)")
    assert decide_again(text).detail == text.detail and decide_again(text).word == "agrees"
    # 0.1 n^-1/2 no better than the unnamed rates: it differs on its own, constant 1e-3 still agrees, and both
    # statements still agree (caption: 100 - min(110, 130, ...) = -10, -10, -13)
    worse = [dict(r) for r in runs]
    for r in worse:
        r[("inverse_sqrt", 0.1)] = 130.0
    assert _rates(worse, SIX)["0.1 n^-1/2 lowest"].word == "differs"
    assert _rates(worse, SIX)["constant 1e-3 lowest"].word == "agrees"
    assert _schedules(worse, SIX)[plan03.CAPTION].estimate == pytest.approx(-11.0)
    assert {_schedules(worse, SIX)[k].word for k in (plan03.CAPTION, plan03.TEXT)} == {"agrees"}
    # 0.1 n^-1/2 at 90 beats constant 1e-3 on every seed: the caption differs (+10, +11, +9), the text agrees
    # (90 - 110, 90 - 111, 90 - 112: mean -21)
    better = [dict(r) for r in runs]
    for r in better:
        r[("inverse_sqrt", 0.1)] = 90.0
    b = _schedules(better, SIX)
    assert b[plan03.CAPTION].word == "differs" and b[plan03.CAPTION].estimate == pytest.approx(10.0)
    assert b[plan03.TEXT].word == "agrees" and b[plan03.TEXT].estimate == pytest.approx(-21.0)
    # n^-1's best 200, 210, 190 against max(constant's, n^-1/2's best) 105, 104, 106: 95, 106, 84
    assert c["n^-1 worst"].word == "agrees" and c["n^-1 worst"].estimate == pytest.approx(95.0)
    rob_s = c["constant more robust than inverse_sqrt"]
    assert rob_s.word == "agrees" and rob_s.values[:3] == pytest.approx((ln(1.2), ln(121 / 101), ln(119 / 99)))
    assert rob_s.values_b[:3] == pytest.approx((ln(140 / 105), ln(150 / 104), ln(145 / 106)))
    # n^-1: the diverged run counts as a uniform model's loss, ln(3668.1 / 200) = 2.91 on seeds 0 and 6 only
    assert ds.DIVERGED_LOSS == pytest.approx(1764 * math.log(8))
    rob = c["constant more robust than inverse"]
    assert rob.values_b[0] == pytest.approx(ln(ds.DIVERGED_LOSS / 200)) and rob.word == "agrees"
    # a finite blow-up and a NaN are the same failed run: 9.2e7 nats counts as the cap, as NaN does
    blown = [dict(r) for r in runs]
    blown[0][("inverse", 10.0)] = 9.2e7
    same = _schedules(blown, SIX)["constant more robust than inverse"]
    assert same.values_b == rob.values_b and same.word == rob.word
    assert _schedules(blown, SIX)["n^-1 worst"].values == c["n^-1 worst"].values
    # the constant schedule is the one that fails: differs
    failing = [dict(r) for r in runs]
    for r in failing:
        r[("constant", 1e-2)] = float("inf")
    assert _schedules(failing, SIX)["constant more robust than inverse_sqrt"].word == "differs"
    # three seeds decide nothing
    assert {v.reason for v in _schedules(three, SEEDS).values()} == {"too few seeds at this profile"}
    # one rate per schedule (the smoke grid): both statements against n^-1's one rate, no spread to compare
    smoke = _schedules([{("constant", 1e-3): 1.0, ("inverse_sqrt", 0.1): 2.0, ("inverse", 1.0): 3.0}] * 2, [0, 2])
    assert list(smoke) == [plan03.CAPTION, plan03.TEXT, "n^-1 worst"]
    assert smoke[plan03.CAPTION].values_b == (2.0, 2.0) and smoke[plan03.TEXT].values_b == (3.0, 3.0)
    # only the named rates: the caption's constant 1e-3 against 0.1 n^-1/2; nothing unnamed for the text to beat,
    # n^-1 absent
    only = _schedules([{("constant", 1e-3): 1.0, ("inverse_sqrt", 0.1): 2.0}] * 2, [0, 2])
    assert list(only) == [plan03.CAPTION] and only[plan03.CAPTION].values_b == (2.0, 2.0)
    assert _rates([{("constant", 1e-3): 1.0, ("inverse_sqrt", 0.1): 2.0}] * 2, [0, 2]) == {}
    with pytest.raises(ValueError, match="final_loss_"):
        lr_schedules.decisions({"seeds": [0, 2]})


CLAIM_04 = "PixelCNN samples nearer held-out frames"


def _samples(distance, seeds):
    summary = {"seeds": list(seeds), **{f"sample_distance_{m}_per_seed": list(v) for m, v in distance.items()}}
    return _by_name(samples.decisions(summary))


def test_samples_distance_rule():
    c = _samples({"pixelcnn": [0.2, 0.25, 0.22] * 2, "cts": [0.6, 0.65, 0.61] * 2, "pixelcnn_pos": [0.0] * 6}, SIX)
    assert list(c) == [CLAIM_04] and c[CLAIM_04].word == "agrees"
    assert c[CLAIM_04].claim.label == "held-out distance PixelCNN - CTS" and c[CLAIM_04].values == (0.2, 0.25, 0.22) * 2
    worse = _samples({"pixelcnn": [0.7, 0.72, 0.71] * 2, "cts": [0.6, 0.65, 0.61] * 2, "pixelcnn_pos": [0.0] * 6}, SIX)
    assert worse[CLAIM_04].word == "differs"  # the kit's model never rescues it
    mixed = _samples({"pixelcnn": [0.5, 0.7, 0.62] * 2, "cts": [0.6] * 6}, SIX)  # -.1, .1, .02 twice
    assert mixed[CLAIM_04].word == "inconclusive"
    assert _samples({"pixelcnn": [0.3] * 3, "cts": [0.6] * 3}, SEEDS)[CLAIM_04].word == "not testable"
    assert _samples({"pixelcnn": [0.3] * 6}, SIX) == {}  # without CTS there is nothing to compare


def test_heldout_distance_does_not_reward_copying():
    # 1 x 4 frames; training frames A, B; held-out frames C, D (an independent stream: never trained on)
    a, b = [0, 0, 0, 0], [1, 1, 1, 1]
    c, d = [0, 0, 1, 1], [1, 1, 0, 0]
    train, heldout = np.array([[a], [b]], np.uint8), np.array([[c], [d]], np.uint8)
    copier = np.array([[a], [b]], np.uint8)  # draws the training frames back
    new = np.array([[[0, 0, 1, 0]], [[1, 1, 0, 1]]], np.uint8)  # new frames, one pixel from a held-out frame
    # nearest training frame: the copier 0, the new frames 1/4 -- the old measure preferred the copier
    assert ds.nearest_frame_distance(copier, train).mean() == 0.0
    assert ds.nearest_frame_distance(new, train).mean() == 0.25
    # nearest held-out frame: a copy scores what the real training frames score (1/2), no better; the new ones 1/4
    assert ds.nearest_frame_distance(copier, heldout).mean() == ds.nearest_frame_distance(train, heldout).mean() == 0.5
    assert ds.nearest_frame_distance(new, heldout).mean() == 0.25
    # over seeds, a copying PixelCNN against a CTS drawing new realistic frames: the claim differs
    copy_seeds = {"pixelcnn": [0.5, 0.52, 0.49] * 2, "cts": [0.25, 0.3, 0.26] * 2}
    assert _samples(copy_seeds, SIX)[CLAIM_04].word == "differs"


def test_pg_claims_each_decided_on_its_own():
    pix = {"mean_pg_nats": [1.0, 1.1, 0.9] * 2, "pg_variability": [0.5, 0.6, 0.4] * 2, "peak_quantile": [3.0, 3.2, 2.8] * 2}
    cts = {"mean_pg_nats": [2.0, 2.1, 1.9] * 2, "pg_variability": [0.45, 0.7, 0.5] * 2, "peak_quantile": [5.0, 5.1, 4.9] * 2}
    summary = {"seeds": SIX, **{f"pixelcnn_{k}_per_seed": v for k, v in pix.items()},
               **{f"cts_{k}_per_seed": v for k, v in cts.items()}}
    decisions = pg_montezuma.decisions(summary)
    c = _by_name(decisions)
    # every seed's mean PG 1 nat below CTS's: no spread, and the exact sign flip decides all the same
    assert c["lower PG"].word == "agrees" and c["lower PG"].estimate == pytest.approx(-1.0)
    assert c["smoother"].word == "inconclusive"  # .05, -.1, -.1 twice
    assert c["sharper peaks"].word == "differs" and c["sharper peaks"].estimate == pytest.approx(-2.0)
    assert c["sharper peaks"].claim.measure == "q0.99/median pixelcnn - cts"
    assert notebook_words(decisions)[0] == "mixed"


def _conv(heldout, seeds):
    summary = {"seeds": list(seeds)}
    for game, h in heldout.items():
        summary.update({f"{game}_{m}_heldout_loss_nats_per_seed": list(v) for m, v in h.items()})
    return conv_cts.decisions(summary)


def test_conv_cts_is_directional():
    # ConvCTS between the two, but PixelCNN worse than CTS: each ordering on its own, in its direction
    wrong_way = {"Freeway": {"cts": [100.0, 101.0, 99.0] * 2, "convcts": [110.0, 112.0, 109.0] * 2,
                             "pixelcnn": [120.0, 122.0, 121.0] * 2}}
    assert [v.word for v in _conv(wrong_way, SIX)] == ["not testable", "differs", "differs", "differs"]
    right = {"Freeway": {"cts": [120.0, 122.0, 121.0] * 2, "convcts": [110.0, 112.0, 109.0] * 2,
                         "pixelcnn": [100.0, 101.0, 99.0] * 2},
             "MontezumaRevenge": {"cts": [50.0, 60.0, 40.0] * 2, "convcts": [45.0, 61.0, 41.0] * 2,
                                  "pixelcnn": [30.0, 31.0, 29.0] * 2}}
    c = _by_name(_conv(right, SIX))
    assert all(c[f"Freeway {k}"].word == "agrees" for k in ("PixelCNN < CTS", "ConvCTS < CTS", "ConvCTS > PixelCNN"))
    assert "held-out loss ConvCTS - CTS (nats)" in c["Freeway ConvCTS < CTS"].sentence
    assert c["MontezumaRevenge ConvCTS < CTS"].word == "inconclusive"  # -5, 1, 1 twice
    assert [d.kind for d in c.values()] == ["paper"] + ["kit"] * 6
    # a game without the three models gives no ordering; App. C's claim stays
    del right["MontezumaRevenge"]["convcts"]
    assert list(_by_name(_conv(right, SIX)))[4:] == []


def test_conv_cts_held_out_loss_never_agrees_with_appendix_c():
    # every held-out ordering agrees on every game: the notebook is still not testable on this task, since
    # App. C's claim rests on agent scores (Fig. 14), which no density-level run measures; the ordering is
    # the kit's reading, a claim of its own
    right = {"Freeway": {"cts": [120.0, 122.0, 121.0] * 2, "convcts": [110.0, 112.0, 109.0] * 2,
                         "pixelcnn": [100.0, 101.0, 99.0] * 2}}
    decisions = _conv(right, SIX)
    c = _by_name(decisions)
    assert list(c)[0] == "App. C agent scores" and [v.word for v in decisions][1:] == ["agrees"] * 3
    agents = c["App. C agent scores"]
    assert agents.word == "not testable" and agents.reason == "not testable on this task"
    assert agents.sentence == f"not testable on this task: {conv_cts_plan.APPENDIX_C_AGENTS}"
    assert "agent scores (Fig. 14" in agents.sentence and "held-out loss is another level" in agents.sentence
    assert notebook_words(decisions) == ("not testable on this task", "agrees")
    assert c["Freeway PixelCNN < CTS"].claim.label == "held-out loss PixelCNN - CTS (nats)"
    assert c["Freeway PixelCNN < CTS"].values == tuple(right["Freeway"]["pixelcnn"])


def test_peak_quantile_ratio_ignores_a_single_maximum():
    pg = [1.0] * 99 + [100.0]
    assert ds.peak_to_median(pg) == 100.0
    assert ds.peak_quantile_ratio(pg, 0.99) == pytest.approx(1.99)  # 1 + 0.01 * 99 between the two top values
    assert math.isnan(ds.peak_quantile_ratio([0.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match="high quantile"):
        ds.peak_quantile_ratio(pg, 0.3)
    assert ds.pg_summary([2, -1, 3, 2, 4], q=0.75)["peak_quantile"] == pytest.approx(3.0 / 2.0)


def test_nearest_frame_distance_by_hand():
    frames = np.array([[[0, 0], [0, 0]], [[1, 1], [1, 0]]], np.uint8)
    samples = np.array([[[1, 1], [0, 0]], [[0, 0], [0, 0]]], np.uint8)
    # the first sample differs from frame 0 in 2 pixels, from frame 1 in 1; the second is frame 0
    assert ds.nearest_frame_distance(samples, frames, chunk=1).tolist() == [0.25, 0.0]
    with pytest.raises(ValueError, match="share H, W"):
        ds.nearest_frame_distance(samples, np.zeros((3, 2, 3), np.uint8))
