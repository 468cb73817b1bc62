"""The density notebooks' verdict rules (00-06, 11) on hand-made per-seed numbers.

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

from pcnn_explore.experiments.density import density_stats as ds
from pcnn_explore.experiments.density import density_verdicts as dv
from pcnn_explore.report.index import verdict_word

SEEDS = [0, 2, 4]
SIX = [0, 2, 4, 6, 8, 10]
P1 = 1 / 64  # every one of 6 paired differences one way
P7 = 7 / 64  # equal magnitudes, one of 6 the other way
FEW = "not testable: too few seeds at this profile"


def test_overall_word_combines_the_claims():
    assert dv.overall_word(["agrees", "agrees"]) == "agrees"
    assert dv.overall_word(["agrees", "inconclusive"]) == "partly"
    assert dv.overall_word(["agrees", "inconclusive", "differs"]) == "mixed"  # a differs never disappears
    assert dv.overall_word(["differs", "inconclusive"]) == "differs"
    assert dv.overall_word(["differs", "not testable"]) == "differs"
    assert dv.overall_word(["inconclusive", "inconclusive"]) == "inconclusive"
    assert dv.overall_word(["not testable", "not testable"]) == "not testable"
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
    agree = dv.episode_spikes([0.8, 0.7, 0.9, 0.8, 0.7, 0.9], [0.05] * 6, SIX)
    line = dv.verdict_line("study", agree, 6, note="n")
    assert line.startswith("agrees over 6 seeds: spikes at episode starts: agrees: ") and line.endswith(" (n)")
    assert verdict_word({"profile": "study", "summary": {"verdict": line}}) == "agrees"
    smoke = dv.verdict_line("smoke", agree, 6)
    assert smoke.startswith(f"{FEW} (smoke runs check the plumbing only) (")
    few = dv.verdict_line("study", dv.episode_spikes([0.8, 0.7, 0.9], [0.05] * 3, SEEDS), 3)
    assert few.startswith(f"{FEW} (3 seeds, a claim needs 6) (spikes at episode starts: {FEW} (needs 6 per line, has 3)")
    assert verdict_word({"profile": "study", "summary": {"verdict": few}}) == "not testable"
    undecided = dv.verdict_line("paper", {"x": "not decided: no spikes"}, 6)
    assert undecided == "inconclusive over 6 seeds: x: inconclusive: not decided: no spikes"
    assert verdict_word({"profile": "paper", "summary": {"verdict": undecided}}) == "inconclusive"
    # the kit's claims stay out of the word: a notebook whose one paper claim is not testable on this task
    kit = dv.verdict_line("study", {"k": agree["spikes at episode starts"]}, 6, kit=("k",))
    assert kit.startswith("not testable on this task: no paper claim over 6 seeds: kit, k: agrees: ")


CLAIM_00 = "PixelCNN PG does not vanish"


def test_pseudo_counts_pg_exponent_above_the_floor():
    assert dv.PG_EXPONENT_FLOOR == -0.5
    # a PG that levels off: b - (-1/2) > 0 on every seed: the sign flip's p = 1/64
    c = dv.pseudo_counts([0.2, 0.1, 0.0, 0.2, 0.1, 0.0], SIX)[CLAIM_00]
    assert c.word == "agrees" and c.test == "sign_flip" and c.p_value == pytest.approx(P1)
    assert c.estimate == pytest.approx(0.1) and "PixelCNN's PG exponent b = 0.1" in c.sentence
    assert "against the threshold -0.5" in c.sentence and "b - (" not in c.sentence  # no garbled exponent
    # a PG that decays like a count's (b near -1) on every seed: differs
    assert dv.pseudo_counts([-0.9, -1.0, -1.1] * 2, SIX)[CLAIM_00].word == "differs"
    # five seeds level off, one decays as far: 7 of the 64 patterns reach the mean, p = 7/64: undecided
    c = dv.pseudo_counts([0.0] * 5 + [-1.0], SIX)[CLAIM_00]
    assert c.word == "inconclusive" and c.p_value == pytest.approx(P7)
    # three seeds decide nothing, however clear
    assert dv.pseudo_counts([0.2, 0.1, 0.0], SEEDS)[CLAIM_00].sentence.startswith(FEW)
    nan = dv.pseudo_counts([0.1, float("nan"), 0.0] * 2, SIX)[CLAIM_00]
    assert nan == "not decided: 4 of 6 seeds give a finite value, a test needs all and at least 2"
    assert dv.pseudo_counts([-1.0] * 6, SIX, floor=-1.5)[CLAIM_00].word == "agrees"
    # the first part: CTS's pseudo-count grows with the real count (slope above 0)
    both = dv.pseudo_counts([0.2] * 6, SIX, count_slope=[0.05, 0.04, 0.1, 0.06, 0.05, 0.07])
    assert list(both) == ["pseudo-counts grow with real counts", CLAIM_00]
    grow = both["pseudo-counts grow with real counts"]
    assert grow.word == "agrees" and grow.p_value == pytest.approx(P1) and grow.estimate == pytest.approx(0.37 / 6)
    flat = dv.pseudo_counts([0.2] * 6, SIX, count_slope=[-0.001, -0.003, -0.001, -0.002, -0.001, -0.001])
    assert flat["pseudo-counts grow with real counts"].word == "differs"


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
    area = {"online": [100.0] * 6, "permutation": [101.0, 99.0, 100.5, 101.0, 99.0, 100.5],
            "replacement": [130.0, 131.0, 129.0, 130.0, 131.0, 129.0]}
    rise = {m: [2.0] * 6 for m in area}
    c = dv.training_orders(area, rise, SIX)
    assert list(c) == ["permutation progress", "permutation stability", "replacement progress", "replacement stability"]
    # permutation: relative areas .01, -.01, .005 (twice): inside +-.1 on every seed, both one-sided p = 1/64
    p = c["permutation progress"]
    assert p.word == "agrees" and p.estimate == pytest.approx(0.01 / 6) and p.p_value == pytest.approx(P1)
    assert p.test == "sign_flip_tost" and "rise share" in c["permutation stability"].sentence
    assert c["permutation stability"].word == "agrees"  # rise shares .0198 .. .0202 against .02
    # replacement: .30, .31, .29: beyond the margin on every seed
    assert c["replacement progress"].word == "differs"
    rise["permutation"] = [2.0, 2.0, 2.0, 20.0, 2.0, 2.0]  # one seed's curve jumps: not shown inside the margin
    assert dv.training_orders(area, rise, SIX)["permutation stability"].word == "inconclusive"
    few = dv.training_orders({m: v[:3] for m, v in area.items()}, {m: v[:3] for m, v in rise.items()}, SEEDS)
    assert {v.reason for v in few.values()} == {"too few seeds at this profile"}
    with pytest.raises(ValueError, match="online"):
        dv.training_orders({"permutation": [1.0] * 6}, {"permutation": [0.0] * 6}, SIX)


def test_episode_spikes_against_chance():
    c = dv.episode_spikes([0.8, 0.7, 0.9] * 2, [0.05] * 6, SIX)["spikes at episode starts"]
    assert c.word == "agrees" and c.p_value == pytest.approx(P1) and c.estimate == pytest.approx(0.75)
    # five seeds .1 above chance, one .1 below: p = 7/64, one lucky seed less does not decide it
    assert dv.episode_spikes([0.2] * 5 + [0.0], [0.1] * 6, SIX)["spikes at episode starts"].word == "inconclusive"
    assert dv.episode_spikes([0.0, 0.01, 0.0] * 2, [0.1] * 6, SIX)["spikes at episode starts"].word == "differs"
    nan = dv.episode_spikes([0.8, float("nan"), 0.9] * 2, [0.05] * 6, SIX)["spikes at episode starts"]
    assert nan == "not decided: 4 of 6 seeds give a finite value, a test needs all and at least 2"


def _grid(c, s, i):
    return {("constant", 1e-4): c[0], ("constant", 1e-3): c[1], ("constant", 1e-2): c[2],
            ("inverse_sqrt", 0.1): s[0], ("inverse_sqrt", 1.0): s[1], ("inverse", 1.0): i[0], ("inverse", 10.0): i[1]}


def test_lr_schedules_named_rates_worst_and_robustness():
    three = [_grid((120, 100, 110), (105, 140), (200, float("nan"))), _grid((121, 101, 111), (104, 150), (210, 300)),
             _grid((119, 99, 112), (106, 145), (190, 250))]
    runs = three * 2
    ln = math.log
    c = dv.lr_schedules(runs, SIX)
    assert list(c) == ["constant 1e-3 lowest", "0.1 n^-1/2 lowest", "n^-1 worst", "constant more robust than inverse_sqrt",
                       "constant more robust than inverse"]
    # each named rate on its own against the best unnamed run (110, 111, 112; 0.1 n^-1/2 is named, 1 n^-1/2 not):
    # constant 1e-3: 100, 101, 99 -> below on every seed; 0.1 n^-1/2: 105, 104, 106 -> below on every seed
    first, second = c["constant 1e-3 lowest"], c["0.1 n^-1/2 lowest"]
    assert first.word == "agrees" and first.estimate == pytest.approx(-11.0) and first.p_value == pytest.approx(P1)
    assert second.word == "agrees" and second.estimate == pytest.approx(-6.0)
    # 0.1 n^-1/2 no better than the unnamed rates: it differs, and constant 1e-3 still agrees on its own
    worse = [dict(r, **{}) for r in runs]
    for r in worse:
        r[("inverse_sqrt", 0.1)] = 130.0
    assert dv.lr_schedules(worse, SIX)["0.1 n^-1/2 lowest"].word == "differs"
    assert dv.lr_schedules(worse, SIX)["constant 1e-3 lowest"].word == "agrees"
    # n^-1's best 200, 210, 190 against max(constant's, n^-1/2's best) 105, 104, 106: 95, 106, 84
    assert c["n^-1 worst"].word == "agrees" and c["n^-1 worst"].estimate == pytest.approx(95.0)
    rob_s = c["constant more robust than inverse_sqrt"]
    assert rob_s.word == "agrees" and rob_s.values[:3] == pytest.approx((ln(1.2), ln(121 / 101), ln(119 / 99)))
    assert rob_s.values_b[:3] == pytest.approx((ln(140 / 105), ln(150 / 104), ln(145 / 106)))
    # n^-1: the diverged run counts as a uniform model's loss, ln(3668.1 / 200) = 2.91 on seeds 0 and 6 only
    assert dv.DIVERGED_LOSS == pytest.approx(1764 * math.log(8))
    rob = c["constant more robust than inverse"]
    assert rob.values_b[0] == pytest.approx(ln(dv.DIVERGED_LOSS / 200)) and rob.word == "agrees"
    # a finite blow-up and a NaN are the same failed run: 9.2e7 nats counts as the cap, as NaN does
    blown = [dict(r) for r in runs]
    blown[0][("inverse", 10.0)] = 9.2e7
    same = dv.lr_schedules(blown, SIX)["constant more robust than inverse"]
    assert same.values_b == rob.values_b and same.word == rob.word
    assert dv.lr_schedules(blown, SIX)["n^-1 worst"].values == c["n^-1 worst"].values
    # the constant schedule is the one that fails: differs
    failing = [dict(r) for r in runs]
    for r in failing:
        r[("constant", 1e-2)] = float("inf")
    assert dv.lr_schedules(failing, SIX)["constant more robust than inverse_sqrt"].word == "differs"
    # three seeds decide nothing
    assert {v.reason for v in dv.lr_schedules(three, SEEDS).values()} == {"too few seeds at this profile"}
    # one rate per schedule (the smoke grid): the named rates against n^-1's one rate, no spread to compare
    smoke = dv.lr_schedules([{("constant", 1e-3): 1.0, ("inverse_sqrt", 0.1): 2.0, ("inverse", 1.0): 3.0}] * 2, [0, 2])
    assert list(smoke) == ["constant 1e-3 lowest", "0.1 n^-1/2 lowest", "n^-1 worst"]


CLAIM_04 = "PixelCNN samples nearer held-out frames"


def test_samples_distance_rule():
    c = dv.samples({"pixelcnn": [0.2, 0.25, 0.22] * 2, "cts": [0.6, 0.65, 0.61] * 2, "pixelcnn_pos": [0.0] * 6}, SIX)
    assert list(c) == [CLAIM_04] and c[CLAIM_04].word == "agrees"
    worse = dv.samples({"pixelcnn": [0.7, 0.72, 0.71] * 2, "cts": [0.6, 0.65, 0.61] * 2, "pixelcnn_pos": [0.0] * 6}, SIX)
    assert worse[CLAIM_04].word == "differs"  # the kit's model never rescues it
    mixed = dv.samples({"pixelcnn": [0.5, 0.7, 0.62] * 2, "cts": [0.6] * 6}, SIX)  # -.1, .1, .02 twice
    assert mixed[CLAIM_04].word == "inconclusive"
    assert dv.samples({"pixelcnn": [0.3] * 3, "cts": [0.6] * 3}, SEEDS)[CLAIM_04].word == "not testable"


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
    copy_seeds = {"pixelcnn": [0.5, 0.52, 0.49] * 2, "cts": [0.25, 0.3, 0.26] * 2}
    assert dv.samples(copy_seeds, SIX)[CLAIM_04].word == "differs"


def test_pg_claims_each_decided_on_its_own():
    pix = [{"mean": 1.0, "variability": 0.5, "peak_quantile": 3.0}, {"mean": 1.1, "variability": 0.6, "peak_quantile": 3.2},
           {"mean": 0.9, "variability": 0.4, "peak_quantile": 2.8}] * 2
    cts = [{"mean": 2.0, "variability": 0.45, "peak_quantile": 5.0}, {"mean": 2.1, "variability": 0.7, "peak_quantile": 5.1},
           {"mean": 1.9, "variability": 0.5, "peak_quantile": 4.9}] * 2
    c = dv.pg_claims({"pixelcnn": pix, "cts": cts}, SIX)
    # every seed's mean PG 1 nat below CTS's: no spread, and the exact sign flip decides all the same
    assert c["lower PG"].word == "agrees" and c["lower PG"].estimate == pytest.approx(-1.0)
    assert c["smoother"].word == "inconclusive"  # .05, -.1, -.1 twice
    assert c["sharper peaks"].word == "differs" and c["sharper peaks"].estimate == pytest.approx(-2.0)
    assert dv.verdict_line("study", c, 6).startswith("mixed over 6 seeds: lower PG: agrees: ")


def test_conv_cts_is_directional():
    # ConvCTS between the two, but PixelCNN worse than CTS: each ordering on its own, in its direction
    wrong_way = {"Freeway": {"cts": [100.0, 101.0, 99.0] * 2, "convcts": [110.0, 112.0, 109.0] * 2,
                             "pixelcnn": [120.0, 122.0, 121.0] * 2}}
    c = dv.conv_cts(wrong_way, SIX)
    assert [v.word for v in c.values()] == ["not testable", "differs", "differs", "differs"]
    right = {"Freeway": {"cts": [120.0, 122.0, 121.0] * 2, "convcts": [110.0, 112.0, 109.0] * 2,
                         "pixelcnn": [100.0, 101.0, 99.0] * 2},
             "MontezumaRevenge": {"cts": [50.0, 60.0, 40.0] * 2, "convcts": [45.0, 61.0, 41.0] * 2,
                                  "pixelcnn": [30.0, 31.0, 29.0] * 2}}
    c = dv.conv_cts(right, SIX)
    assert all(c[f"Freeway {k}"].word == "agrees" for k in ("PixelCNN < CTS", "ConvCTS < CTS", "ConvCTS > PixelCNN"))
    assert "held-out loss ConvCTS - CTS (nats)" in c["Freeway ConvCTS < CTS"].sentence
    assert c["MontezumaRevenge ConvCTS < CTS"].word == "inconclusive"  # -5, 1, 1 twice
    assert dv.conv_cts_kit(c) == tuple(k for k in c if k != "App. C agent scores")


def test_conv_cts_held_out_loss_never_agrees_with_appendix_c():
    # every held-out ordering agrees on every game: the notebook is still not testable on this task, since
    # App. C's claim rests on agent scores (Fig. 14), which no density-level run measures; the ordering is
    # the kit's reading, a claim of its own
    right = {"Freeway": {"cts": [120.0, 122.0, 121.0] * 2, "convcts": [110.0, 112.0, 109.0] * 2,
                         "pixelcnn": [100.0, 101.0, 99.0] * 2}}
    c = dv.conv_cts(right, SIX)
    assert list(c)[0] == "App. C agent scores" and [v.word for v in c.values()][1:] == ["agrees"] * 3
    agents = c["App. C agent scores"]
    assert agents.word == "not testable" and agents.reason == "not testable on this task"
    assert agents.sentence == f"not testable on this task: {dv.APPENDIX_C_AGENTS}"
    assert "agent scores (Fig. 14" in agents.sentence and "held-out loss is another level" in agents.sentence
    line = dv.verdict_line("study", c, 6, kit=dv.conv_cts_kit(c))
    assert line.startswith("not testable on this task over 6 seeds: App. C agent scores: not testable on this task: ")
    assert "kit, Freeway PixelCNN < CTS: agrees: " in line
    records = dv.claim_records(c, kit=dv.conv_cts_kit(c))
    assert [r["kind"] for r in records.values()] == ["paper", "kit", "kit", "kit"]
    assert records["Freeway PixelCNN < CTS"]["label"] == "held-out loss PixelCNN - CTS (nats)"
    assert records["Freeway PixelCNN < CTS"]["n_per_line"] == 6 and records["App. C agent scores"]["reason"]


def test_qualitative_verdict_of_one_episode():
    # one episode decides nothing, whatever it shows: the text says what held
    assert dv.qualitative("study", {"a": True, "b": True}, "d") == (
        f"{FEW} (one recorded episode, no seeds): in this episode a, b holds (d)")
    assert dv.qualitative("study", {"a": True, "b": False}, "d") == (
        f"{FEW} (one recorded episode, no seeds): in this episode a holds; not: b (d)")
    assert dv.qualitative("smoke", {"a": True}, "d").startswith(f"{FEW} (smoke runs check the plumbing only): ")
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
