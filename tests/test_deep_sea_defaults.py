"""DeepSea's training defaults: its scale adaptations only, the paper's method, and the kit's variant
selectable by name."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pcnn_explore.envs.deep_sea import DEEP_SEA_NOVELTY_EPSILON
from pcnn_explore.envs import DEEP_SEA_DEFAULTS, DEEP_SEA_MMC_BETA, env_defaults
from pcnn_explore.run.config import TrainConfig

ROOT = Path(__file__).resolve().parents[1]


def test_deep_sea_defaults_are_its_scale_adaptations_only():
    assert env_defaults("DeepSea-14-v0") == {
        "train_every": 2, "target_update_every": 50, "epsilon_decay_steps": 2_000, "epsilon_end": 0.01,
        "learning_starts": 500, "optimizer": "adam", "lr": 1e-3}
    assert env_defaults("DeepSea-14-v0") is not DEEP_SEA_DEFAULTS  # a copy: callers cannot change the table
    assert DEEP_SEA_MMC_BETA == 0.5  # the kit's named addition, applied by no default
    assert env_defaults("DeepSea-14-v0", "paper") == env_defaults("DeepSea-14-v0")
    assert env_defaults("DeepSea-14-v0", "smoke") == {} and env_defaults("MiniGrid-Empty-5x5-v0") == {}


def test_the_paper_profile_on_deep_sea_runs_adam_with_adams_learning_rate():
    # before: the paper profile's RMSprop with DeepSea's lr 1e-3 (Adam's)
    cfg = TrainConfig.preset("paper", env="DeepSea-10-v0", bonus="pixelcnn")
    assert (cfg.optimizer, cfg.lr) == ("adam", 1e-3)
    assert TrainConfig.preset("paper", env="ALE/Pong-v5").optimizer == "rmsprop"  # Atari: Nature DQN's
    assert TrainConfig.preset("paper", env="DeepSea-10-v0", optimizer="rmsprop").optimizer == "rmsprop"


def test_study_run_on_deep_sea_resolves_to_the_papers_method():
    cfg = TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts")
    # the state acted in, MMC 0.1, epsilon-greedy, and CTS's form: c = 1 constant, beta = 0.05
    assert (cfg.scored_frame, cfg.mmc_beta, cfg.novelty_epsilon) == ("state", 0.1, 0.0)
    assert (cfg.pg_scale, cfg.pg_schedule, cfg.bonus_scale) == (1.0, "constant", 0.05)
    assert (cfg.train_every, cfg.target_update_every, cfg.epsilon_end) == (2, 50, 0.01)
    pixel = TrainConfig.preset("study", env="DeepSea-10-v0", bonus="pixelcnn")
    assert (pixel.pg_scale, pixel.pg_schedule, pixel.bonus_scale, pixel.mmc_beta) == (0.1, "inverse_sqrt", 1.0, 0.1)
    # the kit's variant stays selectable by name and wins over the env's defaults
    kit = TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts", scored_frame="next_state", pg_scale=0.1,
                             pg_schedule="constant", bonus_scale=1.0, mmc_beta=DEEP_SEA_MMC_BETA,
                             novelty_epsilon=DEEP_SEA_NOVELTY_EPSILON)
    assert (kit.scored_frame, kit.pg_scale, kit.pg_schedule, kit.bonus_scale, kit.mmc_beta, kit.novelty_epsilon) == (
        "next_state", 0.1, "constant", 1.0, 0.5, 1.0)


def test_auto_mmc_is_the_papers_on_every_env():
    assert TrainConfig.preset("study", env="DeepSea-10-v0", bonus="none").mmc_beta == 0.0
    assert TrainConfig.preset("study", env="DeepSea-10-v0").mmc_beta == 0.0  # bonus none by default
    assert TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts", agent="reactor").mmc_beta == 0.0
    assert TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts", mmc_beta=0.0).mmc_beta == 0.0
    assert TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts").mmc_beta == 0.1  # before: 0.5
    assert TrainConfig.preset("paper", env="DeepSea-10-v0", bonus="pixelcnn").mmc_beta == 0.1
    assert TrainConfig.preset("smoke", env="DeepSea-10-v0", bonus="cts").mmc_beta == 0.1
    assert TrainConfig.preset("study", env="MiniGrid-Empty-5x5-v0", bonus="cts").mmc_beta == 0.1
    assert TrainConfig(env="DeepSea-10-v0", bonus="cts").mmc_beta == 0.1


def test_novelty_scaled_exploration_is_applied_by_no_default():
    assert DEEP_SEA_NOVELTY_EPSILON == 1.0  # the kit's named addition
    assert TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts").novelty_epsilon == 0.0  # before: 1
    assert TrainConfig.preset("paper", env="DeepSea-10-v0", bonus="pixelcnn").novelty_epsilon == 0.0
    # scoring the next state no longer brings it either
    assert TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts",
                              scored_frame="next_state").novelty_epsilon == 0.0
    assert TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts", scored_frame="next_state",
                              novelty_epsilon=0.5).novelty_epsilon == 0.5


def test_cli_help_says_what_is_known_about_the_scored_frame():
    out = subprocess.run([sys.executable, "-m", "pcnn_explore", "train", "--help"], capture_output=True, text=True,
                         check=True, cwd=ROOT, env={"COLUMNS": "400", "PATH": ""}).stdout
    line = " ".join(out.split())
    assert "the paper says only that the density model receives a single frame" in line
    assert "the state acted in (the paper's)" not in line
    assert "DeepSea: 0.5 with a bonus, the kit's" not in line  # no longer a default
    assert "auto: 0.1 for a DQN with a bonus (the paper's, Sec. 4.1, on every env)" in line
    assert "auto: the paper's form of the density model (pixelcnn 0.1; cts, convcts 1)" in line
    assert "--mapping-rule {bsuite,kit_v1,auto}" in line


def _load_bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location("deep_sea_settings", ROOT / "benchmarks" / "deep_sea_settings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ablation_table_reads_runs_by_bsuites_rule(tmp_path):
    bench = _load_bench()
    # the kit's variant is named explicitly (since 0.2.0 the defaults are the paper's), on the kit's maps
    assert bench.VARIANTS["kit"] == {"scored_frame": "next_state", "pg_scale": 0.1, "pg_schedule": "constant",
                                     "bonus_scale": 1.0, "mmc_beta": 0.5, "novelty_epsilon": 1.0,
                                     "mapping_rule": "kit_v1"}
    assert bench.VARIANTS["state"] == {**bench.VARIANTS["kit"], "scored_frame": "state", "novelty_epsilon": 0.0}
    assert bench.VARIANTS["paper"] == {}
    columns = "step,episode,return,length,complete,intrinsic_return,intrinsic_mean,prediction_gain_mean,epsilon," \
              "td_loss,wall_seconds,distinct_cells,first_success_step,density_updates"
    # 12 episodes of N = 3: the +1 (0.99) in episodes 10, 11 and 12; a last row cut mid-episode
    returns = [0, -0.003, 0, 0, 0, 0, 0, 0, 0, 0.99, 0.99, 0.99, 0.99]
    rows = [f"{3 * (e + 1)},{e},{r},3,{int(e < 12)},0,0,0,0,0,0,{min(6, e + 2)},nan,0" for e, r in enumerate(returns)]
    run = tmp_path / "kit_N3_s101_m42"
    run.mkdir()
    (run / "log.csv").write_text("\n".join([columns, *rows]) + "\n")
    # bad episodes / episodes: after 10, 9/10 = 0.9 (not below 0.9); after 11, 9/11 < 0.9: solved at 11
    assert bench.summary(run) == {"episodes": 12, "solve": 11, "first": 10, "cells": 6}
    lines = bench.table(tmp_path).splitlines()
    assert lines[1].split() == ["kit", "3", "101", "42", "12", "11", "10", "6/6"]


def test_ablation_script_rejects_an_unknown_variant(capsys):
    bench = _load_bench()
    with pytest.raises(SystemExit) as e:
        bench.main(["run", "--variants", "paperish"])
    assert e.value.code == 2 and "invalid choice: 'paperish'" in capsys.readouterr().err


def test_a_run_with_deep_seas_defaults_resumes_bit_for_bit(tmp_path):
    """DeepSea's defaults (the state acted in scored, CTS's form c = 1 constant and beta = 0.05, MMC 0.1,
    a gradient step every 2 steps, target every 50): 200 steps and a resume to 400 give the log and
    weights of 400 steps run at once."""
    import torch

    from pcnn_explore.run.loop import train
    from pcnn_explore.checkpoint import load
    from pcnn_explore.run.log import read_log

    def cfg(name, steps):
        return TrainConfig.preset("study", env="DeepSea-5-v0", bonus="cts", seed=101, steps=steps, learning_starts=60,
                                  replay_capacity=1_000, checkpoint_every=0, out_dir=str(tmp_path / name),
                                  tensorboard=False)

    a = cfg("a", 1)
    assert (a.scored_frame, a.train_every, a.mmc_beta, a.pg_scale, a.bonus_scale) == ("state", 2, 0.1, 1.0, 0.05)
    train(cfg("once", 400), progress=False)
    train(cfg("split", 200), progress=False)
    train(cfg("split", 400), resume=True, progress=False)
    once, split = read_log(tmp_path / "once"), read_log(tmp_path / "split")
    for name in once:
        if name != "wall_seconds":
            np.testing.assert_array_equal(once[name], split[name], err_msg=name)
    assert once["intrinsic_return"].sum() > 0 and np.isfinite(once["td_loss"]).any()
    a = load(tmp_path / "once" / "policy.pt")  # pcnn_explore.checkpoint: checksum checked, weights_only
    b = load(tmp_path / "split" / "policy.pt")
    assert a["step"] == b["step"] == 400 and a["q"].keys() == b["q"].keys() and len(a["q"]) > 0
    assert all(torch.equal(a["q"][k], b["q"][k]) for k in a["q"])


def test_cts_counts_cell_action_pairs_only_when_every_pixel_sees_the_action():
    counts = _load_bench().pair_counts(size=4, frames=600, seed=1)
    for name in ("row", "level"):
        assert counts[name]["(3, 3) a=1: true"] == 0 and counts[name]["(3, 3) a=0: true"] > 40
    # the action in one extra pixel: the pair never taken looks as familiar as the one taken
    assert counts["row"]["(3, 3) a=1: pseudo"] > 0.5 * counts["row"]["(3, 3) a=0: pseudo"] > 10
    # the action in every pixel's level: the pair never taken has a pseudo-count below 1
    assert counts["level"]["(3, 3) a=1: pseudo"] < 1 < 10 < counts["level"]["(3, 3) a=0: pseudo"]
