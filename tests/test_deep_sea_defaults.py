"""DeepSea's training defaults: the kit's choices, how they resolve, and that the paper's stay selectable."""
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


def test_deep_sea_defaults_are_the_kits_measured_choices():
    assert env_defaults("DeepSea-14-v0") == {
        "scored_frame": "next_state", "pg_scale": 0.1, "pg_schedule": "constant", "train_every": 2,
        "target_update_every": 50, "epsilon_decay_steps": 2_000, "epsilon_end": 0.01, "learning_starts": 500,
        "lr": 1e-3}
    assert env_defaults("DeepSea-14-v0") is not DEEP_SEA_DEFAULTS  # a copy: callers cannot change the table
    assert DEEP_SEA_MMC_BETA == 0.5
    assert env_defaults("DeepSea-14-v0", "paper") == env_defaults("DeepSea-14-v0")
    assert env_defaults("DeepSea-14-v0", "smoke") == {} and env_defaults("MiniGrid-Empty-5x5-v0") == {}


def test_study_run_on_deep_sea_resolves_to_the_kits_settings():
    cfg = TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts")
    assert (cfg.scored_frame, cfg.pg_scale, cfg.pg_schedule, cfg.mmc_beta) == ("next_state", 0.1, "constant", 0.5)
    assert (cfg.train_every, cfg.target_update_every, cfg.epsilon_end) == (2, 50, 0.01)
    # the paper's forms stay selectable and win over the env's defaults
    paper = TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts", scored_frame="state",
                               pg_schedule="inverse_sqrt", mmc_beta=0.1, train_every=4)
    assert (paper.scored_frame, paper.pg_schedule, paper.mmc_beta, paper.train_every) == ("state", "inverse_sqrt",
                                                                                          0.1, 4)


def test_auto_mmc_is_deep_seas_only_for_a_dqn_with_a_bonus():
    assert TrainConfig.preset("study", env="DeepSea-10-v0", bonus="none").mmc_beta == 0.0
    assert TrainConfig.preset("study", env="DeepSea-10-v0").mmc_beta == 0.0  # bonus none by default
    assert TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts", agent="reactor").mmc_beta == 0.0
    assert TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts", mmc_beta=0.0).mmc_beta == 0.0
    assert TrainConfig.preset("smoke", env="DeepSea-10-v0", bonus="cts").mmc_beta == 0.1
    assert TrainConfig.preset("study", env="MiniGrid-Empty-5x5-v0", bonus="cts").mmc_beta == 0.1
    # a TrainConfig built without its preset takes no env defaults: the paper's 0.1
    assert TrainConfig(env="DeepSea-10-v0", bonus="cts").mmc_beta == 0.1


def test_novelty_scaled_exploration_is_deep_seas_for_a_count_based_dqn_scoring_the_next_state():
    assert DEEP_SEA_NOVELTY_EPSILON == 1.0
    assert TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts").novelty_epsilon == 1.0
    assert TrainConfig.preset("paper", env="DeepSea-10-v0", bonus="pixelcnn").novelty_epsilon == 1.0
    for off in (dict(bonus="none"), dict(bonus="cts", agent="reactor"), dict(bonus="cts", scored_frame="state"),
                dict(bonus="cts", novelty_epsilon=0.0)):
        assert TrainConfig.preset("study", env="DeepSea-10-v0", **off).novelty_epsilon == 0.0, off
    assert TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts", novelty_epsilon=0.5).novelty_epsilon == 0.5
    assert TrainConfig.preset("smoke", env="DeepSea-10-v0", bonus="cts").novelty_epsilon == 0.0  # no env defaults
    assert TrainConfig.preset("study", env="MiniGrid-Empty-5x5-v0", bonus="cts",
                              scored_frame="next_state").novelty_epsilon == 0.0


def test_cli_help_says_what_is_known_about_the_scored_frame():
    out = subprocess.run([sys.executable, "-m", "pcnn_explore", "train", "--help"], capture_output=True, text=True,
                         check=True, cwd=ROOT, env={"COLUMNS": "400", "PATH": ""}).stdout
    line = " ".join(out.split())
    assert "the paper says only that the density model receives a single frame" in line
    assert "the state acted in (the paper's)" not in line
    assert "DeepSea: 0.5 with a bonus, the kit's" in line


def _load_bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location("deep_sea_settings", ROOT / "benchmarks" / "deep_sea_settings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ablation_table_reads_runs_by_bsuites_rule(tmp_path):
    bench = _load_bench()
    assert bench.VARIANTS["kit"] == {} and bench.VARIANTS["state"] == {"scored_frame": "state"}
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
    """The kit's DeepSea settings (next state scored, a gradient step every 2 steps, target every 50,
    MMC 0.5): 200 steps and a resume to 400 give the log and weights of 400 steps run at once."""
    import torch

    from pcnn_explore.run.loop import train
    from pcnn_explore.checkpoint import load
    from pcnn_explore.run.log import read_log

    def cfg(name, steps):
        return TrainConfig.preset("study", env="DeepSea-5-v0", bonus="cts", seed=101, steps=steps, learning_starts=60,
                                  replay_capacity=1_000, checkpoint_every=0, out_dir=str(tmp_path / name),
                                  tensorboard=False)

    assert (cfg("a", 1).scored_frame, cfg("a", 1).train_every, cfg("a", 1).mmc_beta) == ("next_state", 2, 0.5)
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
