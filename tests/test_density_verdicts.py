"""The density notebooks' verdict rules (00-06, 11) on hand-made per-seed numbers.

Intervals by hand: over 3 seeds the 95% t interval of a mean is mean -+ t(0.975, 2) s / sqrt(3),
t(0.975, 2) = 4.302653, so the half-width is 2.484138 s (s the sample standard deviation).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from pcnn_explore.experiments.density import density_stats as ds
from pcnn_explore.experiments.density import density_verdicts as dv
from pcnn_explore.report.index import verdict_word

SEEDS = [0, 2, 4]
HALF = 4.302652729911275 / math.sqrt(3)  # half-width per unit of standard deviation, 3 seeds


def test_overall_word_combines_the_claims():
    assert dv.overall_word(["agrees", "agrees"]) == "agrees"
    assert dv.overall_word(["agrees", "inconclusive", "differs"]) == "partly"
    # the one combining rule (verdicts.combine_verdicts): differs only when every decided claim differs
    assert dv.overall_word(["differs", "inconclusive"]) == "inconclusive"
    assert dv.overall_word(["differs", "not testable at this profile"]) == "differs"
    assert dv.overall_word(["inconclusive", "inconclusive"]) == "inconclusive"
    with pytest.raises(ValueError, match="one or more"):
        dv.overall_word([])
    with pytest.raises(ValueError, match="one or more"):
        dv.overall_word(["agrees", "mostly"])


def test_seed_list_keeps_held_out_streams_apart():
    assert dv.seed_list(0, 3) == (0, 2, 4) and dv.seed_list(5, 1) == (5,)
    with pytest.raises(ValueError, match="n_seeds"):
        dv.seed_list(0, 0)
    with pytest.raises(ValueError, match="seed"):
        dv.seed_list(-1, 3)


def test_verdict_line_starts_with_a_word_the_report_reads():
    agree = dv.episode_spikes([0.8, 0.7, 0.9], [0.05] * 3, SEEDS)
    line = dv.verdict_line("study", agree, 3, note="n")
    assert line.startswith("agrees over 3 seeds: spikes at episode starts: agrees: ") and line.endswith(" (n)")
    assert verdict_word({"profile": "study", "summary": {"verdict": line}}) == "agrees"
    smoke = dv.verdict_line("smoke", agree, 3)
    assert smoke.startswith("not testable at this profile: smoke runs check the plumbing only (")
    few = dv.verdict_line("study", agree, 2)
    assert few.startswith("not testable at this profile: 2 seed(s), a claim needs 3 (")
    assert verdict_word({"profile": "study", "summary": {"verdict": few}}) == "not testable at this profile"
    undecided = dv.verdict_line("paper", {"x": "not decided: no spikes"}, 3)
    assert undecided == "inconclusive over 3 seeds: x: not decided: no spikes"
    assert verdict_word({"profile": "paper", "summary": {"verdict": undecided}}) == "inconclusive"


CLAIM_00 = "PixelCNN PG does not vanish"


def test_pseudo_counts_pg_exponent_above_the_floor():
    assert dv.PG_EXPONENT_FLOOR == -0.5
    # a PG that levels off: exponents .2, .1, 0 -> b + .5 = .7, .6, .5, mean .6, s .1
    c = dv.pseudo_counts([0.2, 0.1, 0.0], SEEDS)[CLAIM_00]
    assert c.word == "agrees" and c.test == "paired_t"
    assert c.interval == pytest.approx((0.6 - HALF * 0.1, 0.6 + HALF * 0.1))
    # a PG that decays like a count's (b near -1): -.4, -.5, -.6 -> [-.748, -.252], wholly below the floor
    c = dv.pseudo_counts([-0.9, -1.0, -1.1], SEEDS)[CLAIM_00]
    assert c.word == "differs" and c.interval == pytest.approx((-0.5 - HALF * 0.1, -0.5 + HALF * 0.1))
    # one seed levels off, one decays: .7, -.5, .1 -> mean .1, s .6: [-1.39, 1.59]
    assert dv.pseudo_counts([0.2, -1.0, -0.4], SEEDS)[CLAIM_00].word == "inconclusive"
    # the same exponent on every seed: no spread, no t interval; the exact sign flip over 3 seeds cannot
    # give p below 1/8; over 6 it can (2^-6 = 0.016 <= 0.025)
    flat = dv.pseudo_counts([0.0] * 3, SEEDS)[CLAIM_00]
    assert flat.word == "not testable at this profile" and flat.test == "sign_flip"
    assert dv.pseudo_counts([0.0] * 6, list(range(0, 12, 2)))[CLAIM_00].word == "agrees"
    nan = dv.pseudo_counts([0.1, float("nan"), 0.0], SEEDS)[CLAIM_00]
    assert nan == "not decided: 2 of 3 seeds give a finite value, an interval needs all and at least 2"
    assert dv.pseudo_counts([-1.0] * 3, SEEDS, floor=-1.5)[CLAIM_00].estimate == pytest.approx(0.5)


def test_pg_decay_exponent_by_hand():
    k = np.arange(60)
    # PG = 3 / k: exponent -1 (the first visit, k = 0, is left out); a PG that levels off: 0
    assert ds.pg_decay_exponent(k, np.r_[100.0, 3.0 / k[1:]]) == pytest.approx(-1.0)
    assert ds.pg_decay_exponent(k, np.full(60, 7.0)) == pytest.approx(0.0, abs=1e-12)
    # a count's PG ln(1 + 1/k) over k = 1..59: -0.9457; a count 20 times slower, ln(1 + 20/k): -0.6414
    assert ds.pg_decay_exponent(k, np.log1p(1.0 / np.maximum(k, 1))) == pytest.approx(-0.9457402, abs=1e-6)
    assert ds.pg_decay_exponent(k, np.log1p(20.0 / np.maximum(k, 1))) == pytest.approx(-0.6413780, abs=1e-6)
    assert ds.pg_decay_exponent(k, np.log1p(20.0 / np.maximum(k, 1))) < dv.PG_EXPONENT_FLOOR
    # non-positive PGs (a PixelCNN is not learning-positive) leave the fit: k^-1/2 with two zeros and a -1
    pg = np.r_[5.0, k[1:] ** -0.5]
    pg[[3, 10, 20]] = [0.0, -1.0, 0.0]
    assert ds.pg_decay_exponent(k, pg) == pytest.approx(-0.5)
    assert math.isnan(ds.pg_decay_exponent([0, 1, 2], [5.0, 1.0, 0.5]))  # two visits with k >= 1
    assert math.isnan(ds.pg_decay_exponent([0, 1, 2, 3], [5.0, 1.0, -0.1, 0.0]))
    with pytest.raises(ValueError, match="one value per visit"):
        ds.pg_decay_exponent([0, 1, 2], [1.0, 2.0])


def test_training_orders_equivalence_margin():
    area = {"online": [100.0, 100.0, 100.0], "permutation": [101.0, 99.0, 100.5], "replacement": [105.0, 95.0, 115.0]}
    rise = {m: [2.0, 2.0, 2.0] for m in area}
    c = dv.training_orders(area, rise, SEEDS)
    assert list(c) == ["permutation progress", "permutation stability", "replacement progress", "replacement stability"]
    # permutation: relative areas .01, -.01, .005: mean .0016667, s .0104083 -> [-.02419, .02752] inside +-.1
    p = c["permutation progress"]
    assert p.word == "agrees" and p.estimate == pytest.approx(0.01 / 6)
    assert p.interval == pytest.approx((0.01 / 6 - HALF * 0.0104083, 0.01 / 6 + HALF * 0.0104083), abs=1e-6)
    assert c["permutation stability"].word == "agrees"  # rise shares .0198 .. .0202 against .02
    # replacement: .05, -.05, .15: mean .05, s .1 -> [-.198, .298] straddles the margin
    r = c["replacement progress"]
    assert r.word == "inconclusive" and r.interval == pytest.approx((0.05 - HALF * 0.1, 0.05 + HALF * 0.1))
    area["replacement"] = [130.0, 131.0, 129.0]  # .30, .31, .29: [.2752, .3248], wholly above the margin
    assert dv.training_orders(area, rise, SEEDS)["replacement progress"].word == "differs"
    rise["replacement"] = [20.0, 20.0, 20.0]  # a curve that jumps by 15% of its level: stability differs
    assert dv.training_orders(area, rise, SEEDS)["replacement stability"].word == "differs"
    with pytest.raises(ValueError, match="online"):
        dv.training_orders({"permutation": [1.0] * 3}, {"permutation": [0.0] * 3}, SEEDS)


def test_episode_spikes_against_chance():
    c = dv.episode_spikes([0.8, 0.7, 0.9], [0.05] * 3, SEEDS)["spikes at episode starts"]
    assert c.word == "agrees" and c.interval == pytest.approx((0.75 - HALF * 0.1, 0.75 + HALF * 0.1))
    # differences .1, .5, 0: mean .2, s .26458 -> [-.457, .857]: one lucky seed does not decide it
    assert dv.episode_spikes([0.2, 0.6, 0.1], [0.1] * 3, SEEDS)["spikes at episode starts"].word == "inconclusive"
    assert dv.episode_spikes([0.0, 0.01, 0.0], [0.1, 0.1, 0.1], SEEDS)["spikes at episode starts"].word == "differs"
    nan = dv.episode_spikes([0.8, float("nan"), 0.9], [0.05] * 3, SEEDS)["spikes at episode starts"]
    assert nan == "not decided: 2 of 3 seeds give a finite value, an interval needs all and at least 2"


def _grid(c, s, i):
    return {("constant", 1e-4): c[0], ("constant", 1e-3): c[1], ("constant", 1e-2): c[2],
            ("inverse_sqrt", 0.1): s[0], ("inverse_sqrt", 1.0): s[1], ("inverse", 1.0): i[0], ("inverse", 10.0): i[1]}


def test_lr_schedules_named_rates_worst_and_robustness():
    runs = [_grid((120, 100, 110), (105, 140), (200, float("nan"))), _grid((121, 101, 111), (104, 150), (210, 300)),
            _grid((119, 99, 112), (106, 145), (190, 250))]
    ln = math.log
    c = dv.lr_schedules(runs, SEEDS)
    assert list(c) == ["named rates best", "n^-1 worst", "constant more robust than inverse_sqrt",
                       "constant more robust than inverse"]
    # best named 100, 101, 99 against the best other run 110, 111, 112: -10, -10, -13 -> mean -11, s sqrt(3)
    named = c["named rates best"]
    assert named.word == "agrees" and named.interval == pytest.approx((-11 - HALF * math.sqrt(3), -11 + HALF * math.sqrt(3)))
    # n^-1's best 200, 210, 190 against max(constant's, n^-1/2's best) 105, 104, 106: 95, 106, 84
    assert c["n^-1 worst"].word == "agrees" and c["n^-1 worst"].estimate == pytest.approx(95.0)
    # spreads ln(worst / best): constant ln 1.2, ln(121/101), ln(119/99); n^-1/2 ln(140/105), ln(150/104),
    # ln(145/106): differences -.1054, -.1856, -.1293, mean -.1401, s .0412 -> [-.2424, -.0378]: agrees
    rob_s = c["constant more robust than inverse_sqrt"]
    assert rob_s.word == "agrees" and rob_s.values == pytest.approx((ln(1.2), ln(121 / 101), ln(119 / 99)))
    assert rob_s.values_b == pytest.approx((ln(140 / 105), ln(150 / 104), ln(145 / 106)))
    d = [ln(1.2) - ln(140 / 105), ln(121 / 101) - ln(150 / 104), ln(119 / 99) - ln(145 / 106)]
    assert rob_s.interval == pytest.approx((np.mean(d) - HALF * np.std(d, ddof=1), np.mean(d) + HALF * np.std(d, ddof=1)))
    # n^-1: the diverged run counts as a uniform model's loss, ln(3668.1 / 200) = 2.91 on seed 0 only
    # (ln 300/210 = .357, ln 250/190 = .274 on the others): one failure on one seed is inconclusive
    assert dv.DIVERGED_LOSS == pytest.approx(1764 * math.log(8))
    rob = c["constant more robust than inverse"]
    assert rob.word == "inconclusive" and rob.values_b[0] == pytest.approx(ln(dv.DIVERGED_LOSS / 200))
    assert dv.overall_word([v.word for v in c.values()]) == "partly"
    # a finite blow-up and a NaN are the same failed run: 9.2e7 nats counts as the cap, 3668 nats, as NaN does
    blown = [dict(r) for r in runs]
    blown[0][("inverse", 10.0)] = 9.2e7
    same = dv.lr_schedules(blown, SEEDS)["constant more robust than inverse"]
    assert same.values_b == rob.values_b and same.interval == rob.interval and same.word == "inconclusive"
    # (on raw nats, the old rule, seed 0's n^-1 spread was 9.2e7 - 200 against 90 and 60 on the others: the
    # interval was the blow-up's size); the best runs never see the cap
    assert dv.lr_schedules(blown, SEEDS)["n^-1 worst"].values == c["n^-1 worst"].values
    # n^-1 fails on every seed, at different sizes (NaN, 9.2e7, 5e4): all capped, ln(3668.1 / best) per seed,
    # constant's spreads far below: differs is impossible, agrees
    every = [dict(r) for r in runs]
    for r, bad in zip(every, (float("nan"), 9.2e7, 5e4)):
        r[("inverse", 10.0)] = bad
    rob = dv.lr_schedules(every, SEEDS)["constant more robust than inverse"]
    assert rob.word == "agrees"
    assert rob.values_b == pytest.approx(tuple(ln(dv.DIVERGED_LOSS / b) for b in (200, 210, 190)))
    # the constant schedule is the one that fails: differs
    worse = [dict(r) for r in runs]
    for r in worse:
        r[("constant", 1e-2)] = float("inf")
    assert dv.lr_schedules(worse, SEEDS)["constant more robust than inverse_sqrt"].word == "differs"
    # the same spreads on every seed: no spread of the differences; 3 seeds cannot reach p 1/8 by the sign flip
    flat = [_grid((120, 100, 110), (105, 140), (200, 300))] * 3
    assert dv.lr_schedules(flat, SEEDS)["constant more robust than inverse"].word == "not testable at this profile"
    # one rate per schedule (the smoke grid): no spread to compare
    smoke = dv.lr_schedules([{("constant", 1e-3): 1.0, ("inverse_sqrt", 0.1): 2.0, ("inverse", 1.0): 3.0}] * 2, [0, 2])
    assert list(smoke) == ["named rates best", "n^-1 worst"]


CLAIM_04 = "PixelCNN samples nearer held-out frames"


def test_samples_distance_rule():
    c = dv.samples({"pixelcnn": [0.2, 0.25, 0.22], "cts": [0.6, 0.65, 0.61], "pixelcnn_pos": [0.0] * 3}, SEEDS)
    assert list(c) == [CLAIM_04] and c[CLAIM_04].word == "agrees"
    worse = dv.samples({"pixelcnn": [0.7, 0.72, 0.71], "cts": [0.6, 0.65, 0.61], "pixelcnn_pos": [0.0] * 3}, SEEDS)
    assert worse[CLAIM_04].word == "differs"  # the kit's model never rescues it
    # differences -.1, .1, .02: inconclusive; the same distances on every seed: the sign flip over 3 cannot decide
    mixed = dv.samples({"pixelcnn": [0.5, 0.7, 0.62], "cts": [0.6, 0.6, 0.6]}, SEEDS)
    assert mixed[CLAIM_04].word == "inconclusive"
    flat = dv.samples({"pixelcnn": [0.3] * 3, "cts": [0.6] * 3}, SEEDS)
    assert flat[CLAIM_04].word == "not testable at this profile"


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
    # over seeds, a copying PixelCNN against a CTS drawing new realistic frames: the rule says differs
    copy_seeds = {"pixelcnn": [0.5, 0.52, 0.49], "cts": [0.25, 0.3, 0.26]}
    assert dv.samples(copy_seeds, SEEDS)[CLAIM_04].word == "differs"


def test_pg_claims_each_decided_on_its_own():
    pix = [{"mean": 1.0, "variability": 0.5, "peak_quantile": 3.0}, {"mean": 1.1, "variability": 0.6, "peak_quantile": 3.2},
           {"mean": 0.9, "variability": 0.4, "peak_quantile": 2.8}]
    cts = [{"mean": 2.0, "variability": 0.45, "peak_quantile": 5.0}, {"mean": 2.1, "variability": 0.7, "peak_quantile": 5.1},
           {"mean": 1.9, "variability": 0.5, "peak_quantile": 4.9}]
    c = dv.pg_claims({"pixelcnn": pix, "cts": cts}, SEEDS)
    # every seed's mean PG 1 nat below CTS's: no spread, so no t interval of width 0; the exact sign flip
    # decides, and 3 seeds can give no p below 1/8
    assert c["lower PG"].word == "not testable at this profile" and c["lower PG"].interval == (-math.inf, math.inf)
    assert c["lower PG"].estimate == pytest.approx(-1.0)
    assert c["smoother"].word == "inconclusive"  # .05, -.1, -.1
    assert c["sharper peaks"].word == "differs" and c["sharper peaks"].estimate == pytest.approx(-2.0)
    assert dv.verdict_line("study", c, 3).startswith("inconclusive over 3 seeds: lower PG: not testable at this profile: ")


def test_conv_cts_is_directional():
    # ConvCTS between the two, but PixelCNN worse than CTS: the old symmetric rule said "agrees"
    wrong_way = {"Freeway": {"cts": [100.0, 101.0, 99.0], "convcts": [110.0, 112.0, 109.0], "pixelcnn": [120.0, 122.0, 121.0]}}
    c = dv.conv_cts(wrong_way, SEEDS)
    assert [v.word for v in c.values()] == ["differs", "differs", "differs", "not testable at this profile"]
    # App. C's own claim is not testable here and leaves the word alone: the held-out ordering contradicts it
    assert dv.verdict_line("study", c, 3).startswith("differs over 3 seeds: Freeway PixelCNN < CTS: differs: ")
    right = {"Freeway": {"cts": [120.0, 122.0, 121.0], "convcts": [110.0, 112.0, 109.0], "pixelcnn": [100.0, 101.0, 99.0]},
             "MontezumaRevenge": {"cts": [50.0, 60.0, 40.0], "convcts": [45.0, 61.0, 41.0], "pixelcnn": [30.0, 31.0, 29.0]}}
    c = dv.conv_cts(right, SEEDS)
    assert all(c[f"Freeway {k}"].word == "agrees" for k in ("PixelCNN < CTS", "ConvCTS < CTS", "ConvCTS > PixelCNN"))
    assert "held-out loss ConvCTS - CTS (nats)" in c["Freeway ConvCTS < CTS"].sentence
    assert c["MontezumaRevenge ConvCTS < CTS"].word == "inconclusive"  # -5, 1, 1
    assert dv.verdict_line("study", c, 3).startswith("partly over 3 seeds: ")
    # the same held-out losses on every seed: no spread, the sign flip over 3 seeds cannot decide
    flat = dv.conv_cts({"Freeway": {"cts": [120.0] * 3, "convcts": [110.0] * 3, "pixelcnn": [100.0] * 3}}, SEEDS)
    assert {v.word for v in flat.values()} == {"not testable at this profile"}
    assert dv.verdict_line("study", flat, 3).startswith("not testable at this profile over 3 seeds: ")


def test_conv_cts_held_out_loss_never_agrees_with_appendix_c():
    # every held-out ordering agrees on every game: the notebook is still only "partly", since App. C's
    # claim rests on agent scores (Fig. 14), which no density-level run measures
    right = {"Freeway": {"cts": [120.0, 122.0, 121.0], "convcts": [110.0, 112.0, 109.0], "pixelcnn": [100.0, 101.0, 99.0]}}
    c = dv.conv_cts(right, SEEDS)
    assert list(c)[-1] == "App. C agent scores" and [v.word for v in c.values()][:3] == ["agrees"] * 3
    agents = c["App. C agent scores"]
    assert agents.word == "not testable at this profile" and agents.sentence == f"not testable at this profile: {dv.APPENDIX_C_AGENTS}"
    assert "agent scores (Fig. 14" in agents.sentence and "held-out loss is another level" in agents.sentence
    line = dv.verdict_line("study", c, 3)
    assert line.startswith("partly over 3 seeds: ") and "App. C agent scores: not testable at this profile: " in line
    assert dv.verdict_line("study", dv.conv_cts(right, SEEDS), 3) == line


def test_qualitative_verdict_of_one_episode():
    # one episode decides nothing, whatever it shows: the text says what held
    assert dv.qualitative("study", {"a": True, "b": True}, "d") == (
        "inconclusive: one recorded episode, no seeds, so no test decides; in this episode a, b holds (d)")
    assert dv.qualitative("study", {"a": True, "b": False}, "d") == (
        "inconclusive: one recorded episode, no seeds, so no test decides; in this episode a holds; not: b (d)")
    assert dv.qualitative("paper", {"a": False}, "d").startswith("inconclusive: ")
    assert dv.qualitative("smoke", {"a": True}, "d").startswith("not testable at this profile: ")
    with pytest.raises(ValueError, match="at least one condition"):
        dv.qualitative("study", {}, "d")


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
