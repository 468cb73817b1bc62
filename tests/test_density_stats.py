"""Hand-computed cases for the density-experiment statistics and training helpers."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from pcnn_explore.experiments.density import density_stats as ds
from pcnn_explore.experiments.density.density_training import heldout_loss, train_stream, training_order

torch.set_num_threads(1)


def test_pg_variability_by_hand():
    # diffs |1-2|,|3-1|,|2-3|,|4-2| = 1,2,1,2 -> median 1.5; median of (2,1,3,2,4) = 2
    assert ds.pg_variability([2, 1, 3, 2, 4]) == pytest.approx(0.75)
    assert ds.pg_variability([5, 5, 5]) == 0.0
    assert math.isnan(ds.pg_variability([-1, -2, -1]))


def test_peak_to_median_by_hand():
    assert ds.peak_to_median([1, 2, 3, 4, 40]) == pytest.approx(40 / 3)
    assert math.isnan(ds.peak_to_median([0, 0, 1]))


def test_pg_summary_by_hand():
    s = ds.pg_summary([2, -1, 3, 2, 4])
    assert s["mean"] == pytest.approx(2.0)
    assert s["median"] == 2.0
    # diffs 3,4,1,2 -> median 2.5; / 2
    assert s["variability"] == pytest.approx(1.25)
    assert s["peak_to_median"] == pytest.approx(2.0)
    assert s["negative_fraction"] == pytest.approx(0.2)


@pytest.mark.parametrize("bad, error", [([1.0, float("nan")], ValueError), ([[1.0, 2.0]], ValueError),
                                        ([1.0], ValueError), ([1.0, float("inf")], ValueError)])
def test_bad_traces_are_rejected(bad, error):
    with pytest.raises(error):
        ds.pg_variability(bad)


def test_trailing_median_by_hand():
    out = ds.trailing_median([1, 5, 3, 10, 0], window=2)
    assert np.isnan(out[:2]).all()
    assert out[2:].tolist() == [3.0, 4.0, 6.5]  # median(1,5), median(5,3), median(3,10)
    with pytest.raises(ValueError, match="window"):
        ds.trailing_median([1, 2], 0)


def test_top_spikes_respects_separation_and_order():
    h = np.array([0, 9, 8, 0, 0, 7, np.nan, 6, 0, 0])
    assert ds.top_spikes(h, 3, min_separation=2).tolist() == [1, 5, 7]  # 8 at index 2 is too close to 1
    assert ds.top_spikes(h, 3, min_separation=0).tolist() == [1, 2, 5]
    assert ds.top_spikes(h, 10, min_separation=4).tolist() == [1, 5, 9]
    assert ds.top_spikes(h, 0, 1).tolist() == []


def test_near_episode_start_by_hand():
    starts = np.zeros(20, bool)
    starts[[0, 10]] = True
    assert ds.near_episode_start([0, 2, 3, 9, 10, 13, 14], starts, window=3).tolist() == \
        [True, True, True, False, True, True, False]
    assert ds.near_episode_start([5], np.zeros(20, bool), 3).tolist() == [False]


def test_spike_alignment_finds_spikes_at_episode_starts():
    loss = np.full(40, 10.0)
    starts = np.zeros(40, bool)
    starts[[0, 12, 30]] = True
    loss[[12, 31]] = 50.0    # spikes at a start and one frame after a start
    loss[20] = 30.0          # a smaller spike away from any start
    r = ds.spike_alignment(loss, starts, window=2, baseline=4, min_separation=3)
    # k defaults to the 2 starts after the baseline window; the two highest spikes are 12 and 31
    assert r.spikes.tolist() == [12, 31]
    assert r.fraction == 1.0
    # eligible frames 4..39 = 36; near a start: 12,13,14 and 30,31,32 -> 6/36
    assert r.chance == pytest.approx(6 / 36)
    r3 = ds.spike_alignment(loss, starts, k=3, window=2, baseline=4, min_separation=3)
    assert r3.spikes.tolist() == [12, 31, 20] and r3.fraction == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="one flag per loss"):
        ds.spike_alignment(loss, starts[:-1])


def test_moving_average_and_tail_mean_by_hand():
    np.testing.assert_allclose(ds.moving_average([1, 3, 5, 7], 2), [1, 2, 4, 6])
    assert ds.tail_mean([1, 2, 3, 4], 2) == 3.5
    assert ds.tail_mean([1, 2], 10) == 1.5
    with pytest.raises(ValueError):
        ds.tail_mean([], 1)


def test_training_orders():
    rng = np.random.default_rng(0)
    assert training_order(5, "online", rng).tolist() == [0, 1, 2, 3, 4]
    perm = training_order(50, "permutation", rng)
    assert sorted(perm.tolist()) == list(range(50)) and perm.tolist() != list(range(50))
    repl = training_order(50, "replacement", rng)
    assert repl.min() >= 0 and repl.max() < 50 and len(set(repl.tolist())) < 50
    with pytest.raises(ValueError, match="online, permutation, replacement"):
        training_order(5, "shuffled", rng)


class _CountingModel:
    """Records the frames it is trained on; log rho = -(updates so far), log rho' = log rho + 1."""

    def __init__(self):
        self.seen = []

    def update(self, frame):
        self.seen.append(int(frame[0, 0]))
        return -float(len(self.seen) - 1), -float(len(self.seen) - 1) + 1.0

    def log_prob(self, frames):
        return np.full(len(frames), -float(len(self.seen)))


def test_train_stream_follows_order_and_evaluates_on_schedule():
    frames = np.arange(5, dtype=np.uint8)[:, None, None] * np.ones((1, 2, 2), np.uint8)
    model = _CountingModel()
    trace = train_stream(model, frames, order=np.array([4, 0, 2, 2, 1]), eval_frames=frames[:3], eval_every=2)
    assert model.seen == [4, 0, 2, 2, 1]
    assert trace.loss.tolist() == [0, 1, 2, 3, 4]
    assert trace.pg.tolist() == [1, 1, 1, 1, 1]
    assert trace.eval_steps.tolist() == [0, 2, 4, 5]
    assert trace.eval_loss.tolist() == [0, 2, 4, 5]
    assert heldout_loss(model, frames, batch=2) == 5.0
    with pytest.raises(ValueError, match="eval_every"):
        train_stream(_CountingModel(), frames, eval_frames=frames)


# -- settings of the experiment modules: bad values are rejected before any stream or model ------
from pcnn_explore.experiments.density import conv_cts, episode_spikes, lr_schedules, online_training, pg_montezuma, samples  # noqa: E402
from pcnn_explore.study import notebook_words  # noqa: E402


@pytest.mark.parametrize("module, cls, overrides, words", [
    (online_training, "OnlineTrainingSettings", dict(n_heldout=500), "n_heldout"),
    (online_training, "OnlineTrainingSettings", dict(methods=("online", "shuffled")), "methods"),
    (online_training, "OnlineTrainingSettings", dict(game="Freewya"), "Freeway"),
    (episode_spikes, "EpisodeSpikesSettings", dict(baseline=1000), "baseline"),
    (episode_spikes, "EpisodeSpikesSettings", dict(window=-1), "window"),
    (lr_schedules, "LrScheduleSettings", dict(grid={"cosine": (0.1,)}), "cosine"),
    (lr_schedules, "LrScheduleSettings", dict(grid={"constant": (0.0,)}), "positive"),
    (lr_schedules, "LrScheduleSettings", dict(average_last=1000), "average_last"),
    (samples, "SamplesSettings", dict(models=("cts", "gan")), "models"),
    (samples, "SamplesSettings", dict(n_samples=0), "n_samples"),
    (pg_montezuma, "PgSettings", dict(warmup=-5), "warmup"),
    (conv_cts, "ConvCTSSettings", dict(games=()), "games"),
    (episode_spikes, "EpisodeSpikesSettings", dict(n_seeds=0), "n_seeds"),
    (conv_cts, "ConvCTSSettings", dict(n_heldout=100), "n_heldout"),
])
def test_bad_settings_fail_before_any_work(module, cls, overrides, words, tmp_path):
    settings = getattr(module, cls).preset("smoke", cache_dir=str(tmp_path), **overrides)
    with pytest.raises((ValueError, TypeError), match=words):
        module.run(settings)
    assert not any(tmp_path.iterdir())  # no stream generated or cached


def test_unknown_setting_and_profile_are_rejected():
    with pytest.raises(TypeError, match="n_frame"):
        online_training.OnlineTrainingSettings.preset("smoke", n_frame=10)
    with pytest.raises(ValueError, match="unknown profile"):
        online_training.OnlineTrainingSettings.preset("quick")


def _trace(eval_loss):
    from pcnn_explore.experiments.density.density_training import TrainTrace

    z = np.zeros(1)
    return TrainTrace(order=z, log_rho=z, log_rho_prime=z, eval_steps=np.arange(len(eval_loss)),
                      eval_loss=np.asarray(eval_loss, float), seconds=0.0)


#: six seeds: values copied to every seed have no spread, and the exact sign flip needs 6 to reach 0.025
SIX = (0, 2, 4, 6, 8, 10)


def _seeded(results, seeds=(0, 2, 4)):
    """Copies of one hand-made result under the given seeds (one run per seed)."""
    import dataclasses

    return [dataclasses.replace(results, settings=dataclasses.replace(results.settings, seed=s)) for s in seeds]


def test_online_training_summary_by_hand():
    s = online_training.OnlineTrainingSettings.preset("smoke")
    r = online_training.OnlineTrainingResults(
        settings=s, traces={"online": _trace([500, 300, 320, 210]), "permutation": _trace([500, 250, 200]),
                            "replacement": _trace([500, 220])},
        train_index=np.arange(3), heldout_index=np.arange(1), phases=np.zeros(4, int))
    assert r.final_heldout_loss() == {"online": 210.0, "permutation": 200.0, "replacement": 220.0}
    assert r.relative_spread() == pytest.approx(0.1)
    assert r.worst_increase() == {"online": 20.0, "permutation": 0.0, "replacement": 0.0}
    # curves by hand (trapezoids over steps 0, 1, ...): online (400 + 310 + 265) / 3 = 325, permutation
    # (375 + 225) / 2 = 300, replacement 360; rises: online 20 (a share 20 / 325 of its area), others 0
    c = online_training.comparison(r)
    assert c["area"] == {"online": 325.0, "permutation": 300.0, "replacement": 360.0}
    runs = _seeded(r, SIX)
    # the same curves on every seed: no spread, so no t interval of width 0; the exact sign flip decides, and 6
    # seeds (p = 2^-6 <= 0.025; 3 could not) show permutation's area 300 / 325 - 1 = -0.077 inside the margin
    # 0.1, replacement's 360 / 325 - 1 = 0.108 outside; the rise shares differ by 0.062
    summary = online_training.summary(runs)
    assert summary["seeds"] == list(SIX) and summary["heldout_area_online_nats_per_seed"] == [325.0] * 6
    assert summary["worst_heldout_increase_online_nats_per_seed"] == [20.0] * 6
    decisions = online_training.decisions(summary)
    claims = {d.name: d for d in decisions}
    assert {k: v.word for k, v in claims.items()} == {
        "permutation progress": "agrees", "permutation stability": "agrees",
        "replacement progress": "differs", "replacement stability": "agrees"}
    assert claims["replacement progress"].interval == pytest.approx((360 / 325 - 1, 360 / 325 - 1))
    assert claims["permutation stability"].estimate == pytest.approx(-20 / 325)
    # TOST over 6 identical pairs: both one-sided sign flips reach their smallest p, 2^-6; replacement's area
    # lies above the margin on every seed, so its claimed side has p = 1 and the opposite side 2^-6 (differs)
    assert [claims[k].p for k in claims] == [2 ** -6, 2 ** -6, 1.0, 2 ** -6]
    assert {v.test for v in claims.values()} == {"sign_flip_tost"} and {v.n for v in claims.values()} == {6}
    # three agree and one differs: the notebook's word is mixed (0.3; partly is for agrees with none differing)
    assert notebook_words(decisions)[0] == "mixed"
    # 5 seeds: 2^-5 = 0.031 > 0.025, no claim can be decided, so neither can the notebook
    five = online_training.decisions(online_training.summary(runs[:5]))
    assert {(v.word, v.reason) for v in five} == {("not testable", "too few seeds at this profile")}
    assert notebook_words(five)[0] == "not testable: too few seeds at this profile"
    assert notebook_words(online_training.decisions(online_training.summary(runs[:1])))[0].startswith(
        "not testable: too few seeds at this profile")


def test_lr_schedule_ranking_by_hand():
    s = lr_schedules.LrScheduleSettings.preset("study", grid={"constant": (1e-3, 1e-2), "inverse": (1.0, 10.0),
                                                               "inverse_sqrt": (0.1,)})
    final = {("constant", 1e-3): 100.0, ("constant", 1e-2): 150.0, ("inverse", 1.0): 300.0,
             ("inverse", 10.0): float("nan"), ("inverse_sqrt", 0.1): 110.0}
    r = lr_schedules.LrScheduleResults(settings=s, traces={}, final_loss=final)
    assert r.best() == ("constant", 1e-3)
    assert r.best_per_schedule() == {"constant": (1e-3, 100.0), "inverse": (1.0, 300.0), "inverse_sqrt": (0.1, 110.0)}
    assert r.ranking() == ["constant", "inverse_sqrt", "inverse"]
    runs = _seeded(r, SIX)
    # the same losses on every seed (6: the exact sign flip decides where nothing spreads, p = 2^-6); the caption:
    # constant 1e-3 against the smallest other run, min(150, 300, cap, 110) = 110: 100 - 110 = -10; the text:
    # min(100, 110) = 100 against the smallest unnamed run, min(150, 300, cap) = 150: -50; each named rate on its
    # own (the text's detail): constant 1e-3 100 - 150 = -50, 0.1 n^-1/2 110 - 150 = -40; n^-1's best 300 vs
    # max(100, 110): +190; spreads: ln(worst / best): constant ln(150 / 100), n^-1 ln(3668.1 / 300) (the diverged
    # run counts as a uniform model, the cap); n^-1/2 has one rate: no spread
    summary = lr_schedules.summary(runs)
    assert summary["final_loss_constant_0.001_nats"] == 100.0 and math.isnan(summary["final_loss_inverse_10_nats"])
    assert summary["final_loss_constant_0.01_nats_per_seed"] == [150.0] * 6
    caption, text = "constant 1e-3 smallest (caption)", "constant 1e-3 or 0.1 n^-1/2 lowest (text)"
    claims = {d.name: d for d in lr_schedules.decisions(summary)}
    assert {k: v.word for k, v in claims.items()} == {
        caption: "agrees", text: "agrees", "n^-1 worst": "agrees", "constant more robust than inverse": "agrees"}
    assert [claims[k].estimate for k in (caption, text, "n^-1 worst")] == pytest.approx([-10.0, -50.0, 190.0])
    rates = {d.name: d for d in lr_schedules.rate_details(summary)}
    assert [rates[k].estimate for k in ("constant 1e-3 lowest", "0.1 n^-1/2 lowest")] == pytest.approx([-50.0, -40.0])
    assert claims["constant more robust than inverse"].estimate == pytest.approx(
        math.log(1.5) - math.log(1764 * math.log(8) / 300))
    assert {v.p for v in claims.values()} == {2 ** -6} and {v.test for v in claims.values()} == {"sign_flip"}
    assert notebook_words(list(claims.values()))[0] == "agrees"
    assert summary["best"] == "constant 0.001" and summary["ranking"] == "constant < n^-1/2 < n^-1"
    # 0.1 n^-1/2 ends above the best unnamed run (200 - 150 = +50 on every seed): that named rate differs on its
    # own, yet both statements agree (caption 100 - 150 = -50, text min(100, 200) - 150 = -50)
    final[("inverse_sqrt", 0.1)] = 200.0
    claims = {d.name: d for d in lr_schedules.decisions(lr_schedules.summary(runs))}
    assert {claims[k].word for k in (caption, text)} == {"agrees"}
    assert [claims[k].estimate for k in (caption, text)] == pytest.approx([-50.0, -50.0])
    rates = {d.name: d for d in lr_schedules.rate_details(lr_schedules.summary(runs))}
    assert rates["0.1 n^-1/2 lowest"].estimate == pytest.approx(50.0) and rates["0.1 n^-1/2 lowest"].p == 1.0
    assert claims["n^-1 worst"].estimate == pytest.approx(100.0)  # 300 - max(100, 200)
    # constant 1e-3 at 120 above 0.1 n^-1/2's 110: the caption differs (120 - 110 = +10), the text agrees
    # (min(120, 110) - 150 = -40): the notebook is mixed
    final[("inverse_sqrt", 0.1)] = 110.0
    final[("constant", 1e-3)] = 120.0
    decisions = lr_schedules.decisions(lr_schedules.summary(runs))
    claims = {d.name: d for d in decisions}
    assert (claims[caption].word, claims[text].word) == ("differs", "agrees")
    assert [claims[k].estimate for k in (caption, text)] == pytest.approx([10.0, -40.0])
    assert notebook_words(decisions)[0] == "mixed"
    five = lr_schedules.decisions(lr_schedules.summary(runs[:5]))
    assert notebook_words(five)[0] == "not testable: too few seeds at this profile"


def test_pg_claims_by_hand():
    s = pg_montezuma.PgSettings.preset("study")
    stats = {"explorer": {"cts": ds.pg_summary([4, 8, 2, 6, 30]), "pixelcnn": ds.pg_summary([1, 1.1, 1, 1.2, 20])}}
    r = pg_montezuma.PgResults(settings=s, pg={}, stats=stats, traces={}, episode_starts={"explorer": np.zeros(5, bool)},
                               steps=np.arange(5), rooms={"explorer": None},
                               location={"explorer": {m: {"static_loss_share": 0.5, "recency_gap_nats": 0.0}
                                                      for m in ("cts", "pixelcnn")}},
                               static_fraction={"explorer": 0.3})
    # cts: mean 10, median 6, diffs 4,6,4,24 -> variability 5/6, 0.99 quantile 8 + 0.96 x 22 = 29.12 -> 29.12 / 6;
    # pixelcnn: mean 4.86,
    # median 1.1, diffs .1,.1,.2,18.8 -> variability .15/1.1, 0.99 quantile 19.248 / 1.1 = 17.5
    assert stats["explorer"]["pixelcnn"]["peak_quantile"] == pytest.approx(19.248 / 1.1)
    runs = _seeded(r, SIX)
    decided = lambda runs: pg_montezuma.decisions(pg_montezuma.summary(runs))  # noqa: E731
    assert {v.name: v.word for v in decided(runs)} == {"lower PG": "agrees", "smoother": "agrees", "sharper peaks": "agrees"}
    assert notebook_words(decided(runs))[0] == "agrees"
    stats["explorer"]["pixelcnn"] = ds.pg_summary([10, 20, 10, 20, 21])
    # pixelcnn now: mean 16.2 (+6.2 over cts), diffs 10,10,10,1 -> variability 10 / 20 = 0.5 (5/6 - 0.5 below
    # cts), 0.99 quantile 20 + 0.96 x 1 = 20.96 -> 20.96 / 20, below cts's 29.12 / 6
    claims = {d.name: d for d in decided(runs)}
    assert {k: v.word for k, v in claims.items()} == {
        "lower PG": "differs", "smoother": "agrees", "sharper peaks": "differs"}
    assert [claims[k].estimate for k in claims] == pytest.approx([6.2, 0.5 - 5 / 6, 20.96 / 20 - 29.12 / 6])
    # the claimed side of a difference against the claim has p = 1, its opposite 2^-6
    assert [claims[k].p for k in claims] == [1.0, 2 ** -6, 1.0]
    # one agrees and two differ: mixed (0.3; before it, partly)
    assert notebook_words(decided(runs))[0] == "mixed"
    assert notebook_words(decided(runs[:5]))[0] == "not testable: too few seeds at this profile"
    # without both models there is no claim to decide
    assert pg_montezuma.decisions({k: v for k, v in pg_montezuma.summary(runs).items() if not k.startswith("cts_")}) == []


def test_device_setting_is_checked():
    from pcnn_explore.experiments.density.density_training import resolve_device

    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="'auto', 'cpu' or 'cuda"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU"):
            resolve_device("cuda")
    s = pg_montezuma.PgSettings.preset("smoke", device="cpu")
    assert s.model_kwargs("pixelcnn") == {"seed": 0, "device": "cpu", "rmsprop": "tf1"} and s.model_kwargs("cts") == {}


def test_conv_cts_verdict_by_hand_is_not_testable_on_this_task():
    s = conv_cts.ConvCTSSettings.preset("study", games=("Freeway",))
    other = {"late_loss": 1.0, "pg_variability": 0.1, "pg_mean": 1.0, "static_loss_share": 0.5, "recency_gap_nats": 0.0}
    table = {"Freeway": {"cts": {"heldout_loss": 120.0, **other}, "convcts": {"heldout_loss": 110.0, **other},
                         "pixelcnn": {"heldout_loss": 100.0, **other}}}
    r = conv_cts.ConvCTSResults(settings=s, traces={}, table=table, rows={"Freeway": ("Freeway", "random")},
                                static_fraction={"Freeway": 0.5})
    runs = _seeded(r, SIX)
    # the same losses on every seed (6: the exact sign flip decides, p = 2^-6): every held-out ordering agrees
    # (100 - 120 = -20, 110 - 120 = -10, 110 - 100 = +10), but these are the kit's reading; App. C's one paper
    # claim rests on agent scores and is not testable on this task, so the notebook's word is not testable on
    # this task, never agrees or partly however the held-out losses fall
    decisions = conv_cts.decisions(conv_cts.summary(runs))
    claims = {d.name: d for d in decisions}
    assert {k: (v.word, v.reason, v.kind) for k, v in claims.items()} == {
        "App. C agent scores": ("not testable", "not testable on this task", "paper"),
        "Freeway PixelCNN < CTS": ("agrees", "", "kit"), "Freeway ConvCTS < CTS": ("agrees", "", "kit"),
        "Freeway ConvCTS > PixelCNN": ("agrees", "", "kit")}
    assert [claims[k].estimate for k in list(claims)[1:]] == [-20.0, -10.0, 10.0]
    assert [claims[k].p for k in list(claims)[1:]] == [2 ** -6] * 3
    assert notebook_words(decisions) == ("not testable on this task", "agrees")
    table["Freeway"]["pixelcnn"]["heldout_loss"] = 130.0  # PixelCNN worst: its accuracy advantage is not there
    decisions = conv_cts.decisions(conv_cts.summary(runs))
    assert [d.word for d in decisions] == ["not testable", "differs", "agrees", "differs"]
    assert notebook_words(decisions)[0] == "not testable on this task"
