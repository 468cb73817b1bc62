"""The PixelCNN's optimizer reading as an experiment setting: every density notebook's experiment (00-06), 12's
lines and count maps and 13's lines train their PixelCNNs under the reading the settings name (tf1, the paper's,
by default; torch, the sensitivity reading), metrics.json's settings record it, and a bad reading is refused
before any run."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pcnn_explore.density.pixelcnn import PixelCNNDensity
from pcnn_explore.experiments.density import episode_spikes, pseudo_counts
from pcnn_explore.experiments.density.conv_cts import ConvCTSSettings
from pcnn_explore.experiments.density.episode_spikes import EpisodeSpikesSettings
from pcnn_explore.experiments.density.lr_schedules import LrScheduleSettings
from pcnn_explore.experiments.density.online_training import OnlineTrainingSettings
from pcnn_explore.experiments.density.pg_montezuma import PgSettings
from pcnn_explore.experiments.density.pseudo_counts import PseudoCountSettings
from pcnn_explore.experiments.density.samples import SamplesSettings

SETTINGS = {"00": PseudoCountSettings, "01": OnlineTrainingSettings, "02": EpisodeSpikesSettings,
            "03": LrScheduleSettings, "04": SamplesSettings, "05": PgSettings, "06": ConvCTSSettings}
READINGS = ("tf1", "torch")


@pytest.fixture
def built(monkeypatch):
    """The optimizer form of every PixelCNN built while the test runs, in order."""
    forms = []
    init = PixelCNNDensity.__init__

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        forms.append(self.optimizer.form)

    monkeypatch.setattr(PixelCNNDensity, "__init__", spy)
    return forms


@pytest.mark.parametrize("nb", sorted(SETTINGS))
def test_every_density_setting_defaults_to_the_paper_reading_and_records_the_one_it_runs(nb):
    cls = SETTINGS[nb]
    for profile in ("smoke", "study", "paper"):
        assert cls.preset(profile).rmsprop == "tf1"
    s = cls.preset("smoke", rmsprop="torch")
    assert s.rmsprop == "torch" and s.to_dict()["rmsprop"] == "torch"  # what metrics.json's "settings" holds
    assert cls.preset("study", rmsprop=None).rmsprop == "tf1"  # a parameters cell's None: the preset's
    with pytest.raises(ValueError, match="setting rmsprop must be one of tf1, torch"):
        cls.preset("smoke", rmsprop="adam").check()


@pytest.mark.parametrize("nb", [n for n in sorted(SETTINGS) if n != "00"])
@pytest.mark.parametrize("reading", READINGS)
def test_model_arguments_give_the_pixelcnns_the_reading_and_the_cts_models_none(nb, reading):
    s = SETTINGS[nb].preset("smoke", rmsprop=reading, device="cpu")
    for name in ("pixelcnn", "pixelcnn_pos"):
        assert s.model_kwargs(name) == {"seed": s.seed, "device": "cpu", "rmsprop": reading}
    for name in ("cts", "convcts"):
        assert s.model_kwargs(name) == {}


@pytest.mark.parametrize("reading", READINGS)
def test_02s_experiment_trains_its_pixelcnn_under_the_reading(built, reading):
    s = EpisodeSpikesSettings.preset("smoke", n_frames=30, baseline=5, min_separation=3, n_seeds=1, rmsprop=reading,
                                     device="cpu")
    r = episode_spikes.run(s)
    assert built == [reading]
    assert r.settings.rmsprop == reading


def test_the_two_readings_train_02s_pixelcnn_differently_from_the_same_start():
    runs = {r: episode_spikes.run(EpisodeSpikesSettings.preset("smoke", n_frames=12, baseline=3, min_separation=2,
                                                               n_seeds=1, rmsprop=r, device="cpu"))
            for r in READINGS}
    # the same weights score the first frame alike; one update under each reading moves them apart
    assert runs["tf1"].trace.log_rho[0] == runs["torch"].trace.log_rho[0]
    assert runs["tf1"].trace.log_rho_prime[0] != runs["torch"].trace.log_rho_prime[0]


@pytest.mark.parametrize("reading", READINGS)
def test_00s_experiment_builds_every_pixelcnn_under_the_reading(built, reading):
    s = PseudoCountSettings.preset("smoke", n_frames=30, repeat_every=5, n_repeats=3, n_seeds=1, rmsprop=reading)
    pseudo_counts.run(s)
    assert built == [reading, reading]  # the stream's PixelCNN and the repeated frame's


def test_a_bad_reading_is_refused_before_00_or_02_runs(built):
    with pytest.raises(ValueError, match="setting rmsprop must be one of tf1, torch"):
        pseudo_counts.run_all(PseudoCountSettings.preset("smoke", rmsprop="tf2"))
    with pytest.raises(ValueError, match="setting rmsprop must be one of tf1, torch"):
        episode_spikes.run_all(EpisodeSpikesSettings.preset("smoke", rmsprop="tf2"))
    assert built == []


@pytest.mark.parametrize("reading", READINGS)
def test_12s_pixelcnn_lines_and_count_maps_run_under_the_reading(built, reading, tmp_path):
    from pcnn_explore.experiments.exploration.count_maps import pseudo_count_maps
    from pcnn_explore.experiments.exploration.laptop_settings import ExplorationSettings, deep_sea_specs, room_specs

    s = ExplorationSettings.preset("smoke", density_optimizer=reading,
                                   deep_sea_variants=("dqn", "cts_mmc", "pixelcnn_mmc", "pixelcnn_pos_mmc"),
                                   room_variants=("dqn", "pixelcnn_mmc_intrinsic"))
    ds = {sp.variant: dict(sp.overrides) for sp in deep_sea_specs(s, tmp_path)}
    assert {v: f.get("density_optimizer") for v, f in ds.items()} == {
        "dqn": None, "cts_mmc": None, "pixelcnn_mmc": reading, "pixelcnn_pos_mmc": reading}
    rooms = {sp.variant: dict(sp.overrides).get("density_optimizer") for sp in room_specs(s, tmp_path)}
    assert rooms == {"dqn": None, "pixelcnn_mmc_intrinsic": reading}
    pseudo_count_maps(dataclasses.replace(s, counts_size=3, counts_episodes=2, counts_models=("cts", "pixelcnn")))
    assert built == [reading, reading]  # the trained PixelCNN and its probe copy
    with pytest.raises(ValueError, match="setting rmsprop must be one of tf1, torch"):
        dataclasses.replace(s, density_optimizer="tf2").check()


@pytest.mark.parametrize("reading", READINGS)
def test_13s_pixelcnn_lines_run_under_the_reading(reading, tmp_path):
    from pcnn_explore.experiments.agents.reactor_runs import specs
    from pcnn_explore.experiments.agents.reactor_settings import ReactorStudySettings

    s = ReactorStudySettings.preset("smoke", density_optimizer=reading)
    got = {sp.variant: dict(sp.overrides).get("density_optimizer") for sp in specs(s, tmp_path)}
    assert got == {"reactor": None, "reactor_cts": None, "cts_mmc": None, "reactor_pixelcnn_pos": reading,
                   "pixelcnn_pos_mmc": reading}
    assert ReactorStudySettings.preset("study").density_optimizer == "tf1"
    with pytest.raises(ValueError, match="setting rmsprop must be one of tf1, torch"):
        dataclasses.replace(s, density_optimizer="sgd").check()


def test_a_pilot_run_per_notebook_and_reading_is_the_study_preset_scaled_on_a_tuning_seed():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "density_readings_pilot.py"
    spec = importlib.util.spec_from_file_location("density_readings_pilot", path)
    pilot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pilot)
    from pcnn_explore.study.preregistered import density as prereg

    for nb, cls in SETTINGS.items():
        for reading in READINGS:
            s = pilot.settings_of(nb, reading)
            assert isinstance(s, cls) and s.rmsprop == reading and s.profile == "study"
            assert s.seeds() == (0,) and set(s.seeds()) <= set(prereg.TUNING_SEEDS)
            share, fields = pilot.SHARES[nb][1:]
            # each scaled field is the study's times the share (03's of the earlier study's 10K frames, 2,500 averaged)
            study = cls.preset("study") if nb != "03" else cls.preset("study", n_frames=10_000, average_last=2_500)
            for k, v in fields.items():
                assert v == pytest.approx(getattr(study, k) * share), (nb, k)
    assert np.isclose(pilot.SHARES["03"][1] * 10_000, 5_000)
    assert pilot.PRICE_03_FRAMES == (10_000, 30_000, 100_000)
