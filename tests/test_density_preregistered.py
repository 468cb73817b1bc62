"""The density notebooks' verdict seeds (study/preregistered/density.py): declared, new (801 and up), disjoint from
the tuning and the seen seeds (refused), at least 6 per claim and as many as fit, read by every study preset with
the paper's optimizer reading, within the 20-minute budget (45 for 03) at the pilot's costs; the seed workers that
make that budget (density_training.run_seeds); 03's per-seed early curves; 03's two statements of the lowest loss
declared as claims with their test forms; the agent notebooks' PixelCNN re-runs
(study/preregistered/pixelcnn_readings.py)."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from pcnn_explore.study.preregistered import density as prereg
from pcnn_explore.experiments.density.conv_cts import ConvCTSSettings
from pcnn_explore.experiments.density.density_training import TrainTrace, run_seeds, seed_workers
from pcnn_explore.experiments.density.episode_spikes import EpisodeSpikesSettings
from pcnn_explore.experiments.density.episode_spikes import run as spikes_run
from pcnn_explore.experiments.density.lr_schedules import LrScheduleResults, LrScheduleSettings, early_curves
from pcnn_explore.experiments.density.online_training import OnlineTrainingSettings
from pcnn_explore.experiments.density.pg_montezuma import PgSettings
from pcnn_explore.experiments.density.pseudo_counts import PseudoCountSettings
from pcnn_explore.experiments.density.samples import SamplesSettings
from pcnn_explore.verdicts import MIN_SEEDS

SETTINGS = {"00": PseudoCountSettings, "01": OnlineTrainingSettings, "02": EpisodeSpikesSettings,
            "03": LrScheduleSettings, "04": SamplesSettings, "05": PgSettings, "06": ConvCTSSettings}


def test_every_density_notebook_has_a_plan_of_at_least_six_new_verdict_seeds_from_801():
    assert sorted(prereg.PLANS) == sorted(SETTINGS)
    for nb, p in prereg.PLANS.items():
        assert p.n_seeds >= MIN_SEEDS == 6, nb
        # 801, 803, ...: step 2, each run's held-out stream is its seed + 1
        assert p.seeds == tuple(range(801, 801 + 2 * p.n_seeds, 2)), nb
        assert p.heldout_seeds == tuple(range(802, 802 + 2 * p.n_seeds, 2)), nb
        assert p.readings == ("tf1", "torch"), nb  # the paper's reading first: the headline word's


def test_verdict_seeds_and_their_heldout_streams_are_disjoint_from_the_tuning_and_the_seen_seeds():
    assert set(prereg.TUNING_SEEDS) >= {0, 1, 2, 3, 4, 5, 7}  # smoke, the 3-seed study and its held-out streams, 03's check
    # the outside check of the readings, the agents' seen seeds, the density verdicts decided before the readings
    assert set(prereg.SEEN_SEEDS) == {7, 8, 11, 13} | set(range(401, 411)) | set(range(701, 741))
    for p in prereg.PLANS.values():
        assert not (set(p.seeds) | set(p.heldout_seeds)) & (set(prereg.TUNING_SEEDS) | set(prereg.SEEN_SEEDS))
        assert not set(p.seeds) & set(p.heldout_seeds)  # no run's held-out stream is another run's training stream


@pytest.mark.parametrize("seed", [7, 8, 11, 13, 401, 410, 701, 733, 740, 0, 4, 9])
def test_the_plan_refuses_a_seen_or_tuning_seed_as_a_verdict_seed(seed):
    with pytest.raises(ValueError, match=rf"seeds \[{seed}\] were seen before this plan .*a verdict takes the declared "
                                         r"seeds 801, 803"):
        prereg.check_not_verdict_or_seen((801, seed))
    assert prereg.check_not_verdict_or_seen((801, 802, 839, 840)) == (801, 802, 839, 840)


def test_a_pilot_may_take_tuning_seeds_but_never_a_seen_one():
    assert prereg.check_not_verdict_or_seen((0, 1), tuning_ok=True) == (0, 1)
    for seed in (7, 8, 11, 13, 405, 701):
        with pytest.raises(ValueError, match="seen: "):
            prereg.check_not_verdict_or_seen((0, seed), tuning_ok=True)


def test_a_plan_with_more_seeds_than_the_declared_pool_is_refused():
    assert len(prereg.VERDICT_SEEDS) == prereg.MAX_SEEDS == 20
    with pytest.raises(ValueError, match="21 seeds, the declared pool holds 20"):
        prereg.DensityPlan("xx", 21, "frames", 1.0, 2)


@pytest.mark.parametrize("nb", sorted(SETTINGS))
def test_study_and_paper_presets_use_the_declared_seeds_smoke_the_tuning_ones(nb):
    cls = SETTINGS[nb]
    for profile in ("study", "paper"):
        s = cls.preset(profile)
        assert s.seeds() == prereg.plan(nb).seeds and s.n_seeds == prereg.plan(nb).n_seeds
        assert s.rmsprop == prereg.PAPER_READING == "tf1"  # the headline verdict's reading, from the plan
        assert cls.preset(profile, rmsprop="torch").seeds() == prereg.plan(nb).seeds  # the sensitivity run: same seeds
    for k, v in prereg.study_fields(nb).items():  # 03's frames
        assert getattr(cls.preset("study"), k) == v
        # a notebook's parameters cell passes seed=None, n_seeds=None: the preset's
        assert cls.preset(profile, seed=None, n_seeds=None).seeds() == prereg.plan(nb).seeds
    assert set(cls.preset("smoke").seeds()) <= set(prereg.TUNING_SEEDS)


def test_expected_wall_time_is_priced_by_hand_and_every_plan_is_within_its_budget():
    p = prereg.DensityPlan("xx", 7, "frames", 100.0, 2)
    assert p.expected_wall_s == 4 * 100.0 + prereg.START_S  # ceil(7 / 2) rounds of 100 s, plus the workers' start
    assert prereg.DensityPlan("xx", 6, "frames", 10.0, 1).expected_wall_s == 60.0  # one after another: no workers
    assert prereg.BUDGET_S == 20 * 60 and prereg.LR_SCHEDULES_BUDGET_S == 45 * 60
    for nb, plan in prereg.PLANS.items():
        assert plan.per_seed_cpu_s > 0, nb  # measured
        budget = 45 * 60 if nb == "03" else 20 * 60  # 03 may take 45 minutes per reading, the others 20
        assert plan.budget_s == budget, nb
        start = prereg.START_S if plan.workers > 1 else 0.0
        assert math.ceil(plan.n_seeds / plan.workers) * plan.per_seed_cpu_s + start <= budget, nb
    assert prereg.DROPPED_FOR_TIME == {}  # every claim fits its 6 seeds: none dropped for time


def test_seeds_that_fit_takes_as_many_as_fit_within_the_margin_and_six_where_only_the_budget_holds_them():
    # 100 s a seed, 2 at once, 1,200 s: rounds of 100 s + 10 s start within 0.85 x 1,200 = 1,020 s: 10 rounds
    assert prereg.seeds_that_fit(100.0, 2, 1_200) == 20
    assert prereg.seeds_that_fit(103.2, 2, 1_200) == 18  # 9 x 103.2 + 10 = 938.8; 10 rounds 1,042 > 1,020
    assert prereg.seeds_that_fit(9.2, 1, 1_200) == 20  # one after another, capped at the pool's 20
    # 353.2 s: 2 rounds within the margin (716.4 s), 3 rounds (1,069.6 s) within the whole 1,200 s: 6
    assert prereg.seeds_that_fit(353.2, 2, 1_200) == 6
    assert prereg.seeds_that_fit(500.0, 2, 1_200) == 4  # 6 would take 1,510 s: the most that fit, fewer than 6
    assert prereg.seeds_that_fit(562.4, 2, 45 * 60) == 8  # 03 at 30K frames: 4 x 562.4 + 10 = 2,259.6 <= 2,295


def test_each_plan_takes_as_many_seeds_as_fit_at_the_pilots_dearer_reading():
    import json

    pilot = json.loads(prereg.PILOT_FILE.read_text())
    measured = {(r["notebook"], r["reading"]): r for r in pilot["runs"]}
    assert {r for _, r in measured} == set(prereg.READINGS)
    for nb, plan in prereg.PLANS.items():
        if nb == "03":  # priced at its 30K frames from its run at 5K
            per = {r: measured[(nb, r)]["per_seed_cpu_s_at_frames"]["30000"] for r in prereg.READINGS}
        else:
            per = {r: measured[(nb, r)]["per_seed_cpu_s"] for r in prereg.READINGS}
        assert dict(plan.pilot_cpu_s) == pytest.approx(per, abs=0.051), nb
        assert plan.per_seed_cpu_s == pytest.approx(max(per.values()), abs=0.051), nb
        assert plan.n_seeds == prereg.seeds_that_fit(plan.per_seed_cpu_s, plan.workers, plan.budget_s), nb
        assert measured[(nb, "tf1")]["seed"] == 0  # a tuning seed


def test_03_takes_the_longest_priced_budget_that_fits_six_seeds_in_45_minutes():
    fits = {frames: prereg.seeds_that_fit(max(cost.values()), 2, prereg.LR_SCHEDULES_BUDGET_S)
            for frames, cost in prereg.PRICES_03.items()}
    assert fits == {10_000: 20, 30_000: 8, 100_000: 2}
    assert prereg.study_fields("03") == {"n_frames": 30_000, "average_last": 7_500} and prereg.study_fields("02") == {}
    assert LrScheduleSettings.preset("study").n_frames == max(f for f, n in fits.items() if n >= 6)
    assert LrScheduleSettings.preset("paper").n_frames == 1_000_000  # the paper profile keeps the paper's 1M


def test_plan_of_an_unknown_notebook_names_the_choices():
    with pytest.raises(KeyError, match="no density plan for notebook '07': choose one of 00, 01"):
        prereg.plan("07")


def test_seed_workers_one_per_core_up_to_the_seeds_never_more_than_asked():
    s = EpisodeSpikesSettings.preset("study", device="cpu")
    assert seed_workers(s, cpus=2) == 2
    assert seed_workers(s, cpus=32) == s.n_seeds == prereg.plan("02").n_seeds  # (20 seeds, 32 cores)
    assert seed_workers(dataclasses.replace(s, workers=3), cpus=16) == 3
    assert seed_workers(dataclasses.replace(s, workers=5, n_seeds=2), cpus=16) == 2
    assert seed_workers(EpisodeSpikesSettings.preset("smoke"), cpus=16) == 1  # smoke: seconds, no worker start
    with pytest.raises(ValueError, match="setting workers must be an int >= 0"):
        dataclasses.replace(s, workers=-1).check()


@pytest.mark.slow
def test_seeds_run_in_two_workers_give_what_one_process_gives():
    s = EpisodeSpikesSettings.preset("smoke", n_frames=60, baseline=10, min_separation=5)
    one = run_seeds(spikes_run, s)
    two = run_seeds(spikes_run, dataclasses.replace(s, workers=2))
    # each result holds the settings as given, with its seed (not the worker's own copy)
    assert [r.settings for r in two] == [dataclasses.replace(s, workers=2, seed=k) for k in (0, 2)]
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a.trace.log_rho, b.trace.log_rho)
        np.testing.assert_array_equal(a.trace.log_rho_prime, b.trace.log_rho_prime)
    assert not np.array_equal(one[0].trace.log_rho, one[1].trace.log_rho)  # the seeds differ


def _trace(loss) -> TrainTrace:
    loss = np.asarray(loss, dtype=np.float64)
    return TrainTrace(order=np.arange(len(loss)), log_rho=-loss, log_rho_prime=-loss, eval_steps=np.zeros(0, np.int64),
                      eval_loss=np.zeros(0), seconds=0.0)


def test_early_curves_are_each_seeds_bin_means_over_its_finite_updates():
    grid = {"constant": (1e-3,), "inverse": (1.0,)}
    s = LrScheduleSettings.preset("smoke", grid=grid, n_frames=8, average_last=2, early_updates=6, early_bin=2)
    runs = [
        LrScheduleResults(s, {("constant", 1e-3): _trace([10, 20, 30, 50, 7, 9, 1, 1]),
                              ("inverse", 1.0): _trace([4, 6, 8, np.inf, np.nan, np.nan, np.nan, np.nan])}, {}),
        LrScheduleResults(dataclasses.replace(s, seed=2),
                          {("constant", 1e-3): _trace([1, 3, 5, 7, 9, 11, 0, 0]),
                           ("inverse", 1.0): _trace([2, 2, 2, 2, 2, 2, 2, 2])}, {}),
    ]
    out = early_curves(runs)
    assert out["early_updates"] == 6 and out["early_bin"] == 2 and out["updates"] == [2, 4, 6]
    assert out["seeds"] == [0, 2]
    assert out["curves"]["constant_0.001"] == [[15.0, 40.0, 8.0], [2.0, 6.0, 10.0]]
    # diverged at update 4: the bin holds one finite update (8), the next none (None)
    assert out["curves"]["inverse_1"] == [[5.0, 8.0, None], [2.0, 2.0, 2.0]]
    with pytest.raises(ValueError, match="differ besides the seed"):
        early_curves([runs[0], LrScheduleResults(dataclasses.replace(s, early_bin=3), runs[1].traces, {})])


def test_early_updates_must_be_whole_bins_within_the_run():
    with pytest.raises(ValueError, match=r"early_updates \(25\) must be a multiple of early_bin \(10\)"):
        LrScheduleSettings.preset("study", early_updates=25).check()
    with pytest.raises(ValueError, match="at most n_frames"):
        LrScheduleSettings.preset("smoke", early_updates=50, early_bin=5).check()


def test_plot_early_curves_draws_one_panel_per_schedule_one_line_per_rate_and_seed():
    from pcnn_explore.plots.density import plot_early_curves

    curves = {"early_updates": 4, "early_bin": 2, "updates": [2, 4], "seeds": [701, 703, 705],
              "curves": {"constant_0.001": [[5.0, 4.0], [6.0, 3.0], [5.5, None]],
                         "constant_0.01": [[9.0, 8.0]] * 3, "inverse_1": [[7.0, 6.0]] * 3}}
    fig = plot_early_curves(curves)
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["constant: 3 seeds", "n^-1: 3 seeds"]
    assert [len(ax.lines) for ax in axes] == [7, 4]  # rates x seeds, and the uniform model's loss dashed
    assert list(axes[1].lines[-1].get_ydata()) == [42 * 42 * math.log(8)] * 2
    y = axes[0].lines[2].get_ydata()
    assert y[0] == 5.5 and math.isnan(y[1])  # a bin with no finite update is a gap
    with pytest.raises(ValueError, match="holds no schedule"):
        plot_early_curves({**curves, "curves": {}})


# --- 03's two statements of the lowest loss, declared as claims before the re-run ---------------------------------

def test_03s_caption_and_text_are_two_claims_with_their_test_forms():
    from pcnn_explore.study.preregistered import lr_schedules as plan03

    seeds = prereg.plan("03").seeds
    caption, text = plan03.caption_smallest(seeds), plan03.text_lowest(seeds)
    assert (caption.name, text.name) == (plan03.CAPTION, plan03.TEXT) == (
        "constant 1e-3 smallest (caption)", "constant 1e-3 or 0.1 n^-1/2 lowest (text)")
    for c in (caption, text):
        assert c.kind == "paper" and c.test == "sign_flip" and c.direction == "less" and c.unit == "nats"
        assert c.design.seeds == seeds == tuple(range(801, 817, 2))
    assert "smallest loss is achieved by a constant learning rate of 10^-3" in caption.paper
    assert "constant learning rate of 0.001 or a decaying learning rate of 0.1 n^-1/2" in text.paper
    assert plan03.RERUN_CLAIMS[:3] == (plan03.CAPTION, plan03.TEXT, plan03.WORST)
    assert not any("lowest" in n and n != plan03.TEXT for n in plan03.RERUN_CLAIMS)  # each rate alone: detail


def test_03s_statements_take_their_values_from_the_grid_as_declared():
    from pcnn_explore.study import decide
    from pcnn_explore.study.preregistered import lr_schedules as plan03

    # 2 seeds of a grid of 4 runs (nats, capped): constant 1e-3, 0.1 n^-1/2, and two unnamed runs
    runs = {("constant", 1e-3): [120.0, 130.0], ("inverse_sqrt", 0.1): [110.0, 140.0],
            ("constant", 1e-4): [150.0, 125.0], ("inverse", 1.0): [160.0, 170.0]}
    # caption: constant 1e-3 against the best of every other run (0.1 n^-1/2 included)
    assert plan03.statement_values(plan03.CAPTION, runs) == ([120.0, 130.0], [110.0, 125.0])
    # text: the better of the two named runs against the best unnamed run
    assert plan03.statement_values(plan03.TEXT, runs) == ([110.0, 130.0], [150.0, 125.0])
    with pytest.raises(ValueError, match="needs 0.1 n\\^-1/2 in the grid"):
        plan03.statement_values(plan03.TEXT, {k: v for k, v in runs.items() if k[0] != "inverse_sqrt"})
    with pytest.raises(ValueError, match="no statement claim"):
        plan03.statement_values("n^-1 worst", runs)
    # six seeds where constant 1e-3 is lowest by 5 nats every time: both agree at p = 1/64
    six = {("constant", 1e-3): [100.0] * 6, ("inverse_sqrt", 0.1): [105.0] * 6, ("constant", 1e-4): [110.0] * 6}
    seeds = tuple(range(801, 813, 2))
    for name, claim in ((plan03.CAPTION, plan03.caption_smallest(seeds)), (plan03.TEXT, plan03.text_lowest(seeds))):
        a, b = plan03.statement_values(name, six)
        d = decide(claim, a, b, seeds=seeds)
        assert d.word == "agrees" and d.p == pytest.approx(1 / 64), name


# --- the agent notebooks' PixelCNN re-runs ------------------------------------------------------------------------

def test_the_agent_re_runs_take_new_seeds_and_refuse_seen_and_tuning_ones():
    from pcnn_explore.study.preregistered import pixelcnn_readings as ag

    assert ag.PLANS["07"].seeds == tuple(range(801, 841))
    assert ag.PLANS["12"].seeds == ag.PLANS["13"].seeds == tuple(range(801, 821))
    for bad, what in ((7, "seen"), (13, "seen"), (405, "seen"), (720, "seen"), (0, "tuning"), (301, "tuning"),
                      (900, "undeclared")):
        with pytest.raises(ValueError, match=f"{what} \\[{bad}\\]"):
            ag.check_new_seeds((801, bad))


def test_07s_pixelcnn_claims_are_sized_by_the_power_model_and_fit_each_readings_run():
    import json

    from pcnn_explore.study.preregistered import pixelcnn_readings as ag
    from pcnn_explore.study.preregistered.deep_sea_power import DESIGNS

    k = {c: ag.seeds_needed(c) for c in ("pixelcnn_bonus_explores", "position_bias_helps")}
    assert k == {"pixelcnn_bonus_explores": 39, "position_bias_helps": 39}
    p = ag.PLANS["07"]
    assert p.n_seeds >= max(k.values())
    assert dict(p.claims)["pixelcnn_bonus_explores"] == dict(p.claims)["position_bias_helps"] == "decided"
    assert dict(p.claims)["pixelcnn_beats_cts"].startswith("not testable on this task")
    lines = dict(p.lines)
    assert {"paper_pixelcnn", "kit_pixelcnn_pos", "dqn"} <= set(lines["tf1"]) and set(DESIGNS["07"]["lines"]) <= set(lines["tf1"])
    assert {"paper_pixelcnn_torch", "dqn"} <= set(lines["torch"])  # every line of a paired claim on the same seeds
    probe = json.loads((prereg.PILOT_FILE.parent / "pixelcnn_readings_probe.json").read_text())
    assert probe["seeds_needed"] == k
    for key, minutes in ag.PROBE.items():
        assert probe["minutes"][key] == minutes
    for plan in ag.PLANS.values():
        assert dict(plan.expected_minutes).keys() == {"tf1", "torch"}
        assert all(m <= plan.budget_minutes == 45.0 for m in dict(plan.expected_minutes).values()), plan.notebook
    assert dict(ag.PLANS["07"].expected_minutes) == {
        "tf1": ag.PROBE["tf1 run: 07 lines + paper_pixelcnn + kit_pixelcnn_pos, 40 seeds"],
        "torch": ag.PROBE["torch run: paper_pixelcnn_torch + kit_pixelcnn_pos (torch) + dqn, 40 seeds"]}


def test_the_lines_of_07s_two_reading_runs_are_named_lines_under_their_reading():
    from pcnn_explore.run.lines import LINES
    from pcnn_explore.study.preregistered import pixelcnn_readings as ag

    lines = dict(ag.PLANS["07"].lines)
    assert set(lines["tf1"]) | set(lines["torch"]) <= set(LINES)  # every line of each reading's run is named
    fields = lambda key: dict(LINES[key].overrides)  # noqa: E731
    # the sensitivity lines are the paper-reading lines with the torch reading, nothing else changed
    for paper, torch in (("paper_pixelcnn", "paper_pixelcnn_torch"), ("kit_pixelcnn_pos", ag.KIT_POS_TORCH)):
        assert fields(paper)["density_optimizer"] == "tf1" and fields(torch)["density_optimizer"] == "torch"
        assert {**fields(torch), "density_optimizer": "tf1"} == fields(paper)
        assert LINES[torch].variant == LINES[paper].variant and LINES[torch].kind == LINES[paper].kind
    assert LINES[ag.KIT_POS_TORCH].display == ("DQN-PixelCNN with position bias (the kit's model), torch reading of "
                                               "its optimizer (sensitivity)")
