"""The density notebooks' verdict seeds (study/preregistered/density.py): declared, disjoint from
the tuning seeds, at least 6 per claim, read by every study preset, within the 20-minute budget; the
seed workers that make that budget (density_training.run_seeds); 03's per-seed early curves."""
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


def test_every_density_notebook_has_a_plan_of_at_least_six_verdict_seeds_from_701():
    assert sorted(prereg.PLANS) == sorted(SETTINGS)
    for nb, p in prereg.PLANS.items():
        assert p.n_seeds >= MIN_SEEDS == 6, nb
        # 701, 703, ...: step 2, each run's held-out stream is its seed + 1
        assert p.seeds == tuple(range(701, 701 + 2 * p.n_seeds, 2)), nb
        assert p.heldout_seeds == tuple(range(702, 702 + 2 * p.n_seeds, 2)), nb


def test_verdict_seeds_and_their_heldout_streams_are_disjoint_from_the_tuning_seeds():
    assert set(prereg.TUNING_SEEDS) >= {0, 1, 2, 3, 4, 5, 7}  # smoke, the 3-seed study and its held-out streams, 03's check
    for p in prereg.PLANS.values():
        assert not (set(p.seeds) | set(p.heldout_seeds)) & set(prereg.TUNING_SEEDS)
        assert not set(p.seeds) & set(p.heldout_seeds)  # no run's held-out stream is another run's training stream


@pytest.mark.parametrize("nb", sorted(SETTINGS))
def test_study_and_paper_presets_use_the_declared_seeds_smoke_the_tuning_ones(nb):
    cls = SETTINGS[nb]
    for profile in ("study", "paper"):
        s = cls.preset(profile)
        assert s.seeds() == prereg.plan(nb).seeds and s.n_seeds == prereg.plan(nb).n_seeds
        # a notebook's parameters cell passes seed=None, n_seeds=None: the preset's
        assert cls.preset(profile, seed=None, n_seeds=None).seeds() == prereg.plan(nb).seeds
    assert set(cls.preset("smoke").seeds()) <= set(prereg.TUNING_SEEDS)


def test_expected_wall_time_is_priced_by_hand_and_every_plan_is_within_twenty_minutes():
    p = prereg.DensityPlan("xx", 7, "frames", 100.0, 2)
    assert p.expected_wall_s == 4 * 100.0 + prereg.START_S  # ceil(7 / 2) rounds of 100 s, plus the workers' start
    assert prereg.DensityPlan("xx", 6, "frames", 10.0, 1).expected_wall_s == 60.0  # one after another: no workers
    for nb, plan in prereg.PLANS.items():
        assert plan.per_seed_cpu_s > 0, nb  # measured
        assert plan.expected_wall_s <= prereg.BUDGET_S, nb
    assert prereg.DROPPED_FOR_TIME == {}  # every claim fits its 6 seeds: none dropped for time


def test_plan_of_an_unknown_notebook_names_the_choices():
    with pytest.raises(KeyError, match="no density plan for notebook '07': choose one of 00, 01"):
        prereg.plan("07")


def test_seed_workers_one_per_core_up_to_the_seeds_never_more_than_asked():
    s = EpisodeSpikesSettings.preset("study", device="cpu")
    assert seed_workers(s, cpus=2) == 2
    assert seed_workers(s, cpus=16) == s.n_seeds == prereg.plan("02").n_seeds
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
