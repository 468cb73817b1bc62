"""``pcnn-explore train`` from the command line: a flag per setting, one-line errors, safe resumes."""
from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from pcnn_explore.checks import flag
from pcnn_explore.cli import main
from pcnn_explore.run.cli import add_arguments, config_from_args
from pcnn_explore.run import TrainConfig, load_policy, read_log, train

torch.set_num_threads(1)
ENV = "MiniGrid-Empty-5x5-v0"


def parse(*argv: str) -> TrainConfig:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return config_from_args(parser.parse_args(["--env", ENV, "--out", "x", *argv]))


def cli(*argv: str, capsys) -> tuple[int, str, str]:
    try:
        status = main(["train", "--env", ENV, "--profile", "smoke", "--no-progress", *argv])
    except SystemExit as e:  # argparse errors
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def snapshot(folder: Path) -> dict:
    return {p.relative_to(folder): (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "cts"
    train(TrainConfig.preset("smoke", env=ENV, bonus="cts", steps=150, out_dir=str(out)), progress=False)
    return out


def test_help_lists_every_setting(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    for f in dataclasses.fields(TrainConfig):
        assert flag(f.name) in text, f.name
    assert "--resume" in text and "--mmc" in text and "--out" in text


def test_help_imports_neither_torch_nor_gymnasium_nor_ray():
    code = ("import sys\nfrom pcnn_explore.cli import main\ntry:\n    main(['train', '--help'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in ('torch', 'gymnasium', 'ray', 'numba') if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "--network {auto,nature,small,mlp}" in done.stdout and "--bonus" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_every_setting_is_settable_and_auto_overrides_the_preset():
    cfg = parse("--lr", "0.01", "--replay-capacity", "500", "--epsilon-decay-steps", "7", "--target-update-every", "9",
                "--density-lr", "0.002", "--optimizer", "rmsprop", "--gamma", "0.9", "--batch-size", "8",
                "--learning-starts", "3", "--double-q", "--no-tensorboard", "--bonus-thread", "false", "--mmc", "0.3")
    assert (cfg.lr, cfg.replay_capacity, cfg.epsilon_decay_steps, cfg.target_update_every, cfg.density_lr) == (
        0.01, 500, 7, 9, 0.002)
    assert (cfg.optimizer, cfg.gamma, cfg.batch_size, cfg.learning_starts) == ("rmsprop", 0.9, 8, 3)
    assert cfg.double_q is True and cfg.tensorboard is False and cfg.bonus_thread is False and cfg.mmc_beta == 0.3
    assert parse("--profile", "smoke").hidden == 64  # the preset's value
    assert parse("--profile", "smoke", "--hidden", "auto").hidden is None
    assert parse("--bonus", "cts", "--mmc", "auto").mmc_beta == 0.1


@pytest.mark.parametrize("argv, words", [
    (["--out", "{tmp}/o", "--intrinsic-only"], "--intrinsic-only needs --bonus"),
    (["--out", "{tmp}/o", "--steps", "-5"], "expected a positive integer"),
    (["--out", "{tmp}/o", "--hidden", "many"], "expected a positive integer or auto"),
    (["--out", "{tmp}/o", "--gamma", "nan"], "expected a number in [0, 1]"),
    (["--out", "{tmp}/o", "--device", "tpu"], "--device must be"),
    (["--out", "{tmp}/o", "--resume"], "cannot resume: {tmp}/o does not exist"),
    (["--out", "{tmp}/empty", "--resume"], "cannot resume: {tmp}/empty holds no checkpoint"),
    (["--out", "{tmp}/afile"], "{tmp}/afile is a file, not a folder"),
])
def test_errors_are_one_line_naming_the_flag_and_touch_nothing(tmp_path, capsys, argv, words):
    (tmp_path / "empty").mkdir()
    (tmp_path / "afile").write_text("x")
    before = snapshot(tmp_path)
    status, out, err = cli(*[a.format(tmp=tmp_path) for a in argv], capsys=capsys)
    assert status == 2
    assert words.format(tmp=tmp_path) in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert snapshot(tmp_path) == before and sorted(os.listdir(tmp_path)) == ["afile", "empty"]


def test_resume_of_a_run_without_checkpoint_keeps_its_log(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "log.csv").write_text("step,episode\n1,0\n")
    before = snapshot(out)
    status, _, err = cli("--out", str(out), "--resume", capsys=capsys)
    assert status == 2 and "holds a log but no checkpoint" in err and str(out) in err
    assert snapshot(out) == before


@pytest.mark.parametrize("damage", ["garbage", "truncated", "not_a_dict"])
def test_unreadable_checkpoint_is_an_error_and_the_log_stays(tmp_path, capsys, finished_run, damage):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    ckpt = out / "checkpoint.pt"
    if damage == "garbage":
        ckpt.write_bytes(b"\x80\x02garbage")
    elif damage == "truncated":
        ckpt.write_bytes(ckpt.read_bytes()[: ckpt.stat().st_size // 2])
    else:
        torch.save({"format": 1}, ckpt)
    before = snapshot(out)
    status, _, err = cli("--out", str(out), "--bonus", "cts", "--steps", "300", "--resume", capsys=capsys)
    assert status == 2 and "not a readable pcnn-explore checkpoint" in err and str(ckpt) in err
    assert "weights_only" not in err and "allow_pickle" not in err and len(err.strip().splitlines()) == 1
    assert snapshot(out) == before


def test_resume_with_changed_settings_names_the_flag(tmp_path, capsys, finished_run):
    before = snapshot(finished_run)
    status, _, err = cli("--out", str(finished_run), "--bonus", "pixelcnn", "--steps", "300", "--resume",
                         capsys=capsys)
    assert status == 2 and "--bonus: checkpoint 'cts' vs now 'pixelcnn'" in err
    assert len(err.strip().splitlines()) == 1 and snapshot(finished_run) == before


@pytest.mark.parametrize("steps", ["100", "150"])
def test_resume_of_a_finished_run_does_nothing(capsys, finished_run, steps):
    before = snapshot(finished_run)
    status, out, _ = cli("--out", str(finished_run), "--bonus", "cts", "--steps", steps, "--resume", capsys=capsys)
    assert status == 0 and "already ran 150 agent steps" in out and "nothing to do" in out
    assert snapshot(finished_run) == before


def test_load_policy_reads_only_the_policy_file(tmp_path, finished_run):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    from pcnn_explore.checkpoint import load

    policy_file = load(out / "policy.pt")
    assert set(policy_file) == {"format", "config", "step", "obs_shape", "n_actions", "network", "q"}  # no replay, no optimiser
    (out / "checkpoint.pt").write_bytes(b"the replay buffer is not needed")
    for where in (out, out / "checkpoint.pt", out / "policy.pt"):
        env_id, policy = load_policy(where)
        assert env_id == ENV
        obs, _ = policy.make_env(seed=0).reset()
        assert 0 <= policy(obs) < 7


def test_a_run_stores_and_prints_its_settings(tmp_path, capsys):
    status, out, _ = cli("--out", str(tmp_path / "r"), "--steps", "5", "--seed", "4", capsys=capsys)
    assert status == 0
    import json

    stored = json.loads((tmp_path / "r" / "settings.json").read_text())
    assert stored["seed"] == 4 and stored["steps"] == 5 and stored == TrainConfig.preset(
        "smoke", env=ENV, steps=5, seed=4, out_dir=str(tmp_path / "r")).to_dict()
    # 5 steps end no episode: say so rather than print nan
    assert "no finished episode yet" in out and "nan" not in out
    status = main(["train", "--env", ENV, "--profile", "smoke", "--out", str(tmp_path / "p"), "--steps", "5"])
    assert status == 0 and "settings: env=MiniGrid-Empty-5x5-v0" in capsys.readouterr().out


def test_smoke_run_on_the_default_env_ends_episodes(tmp_path):
    cfg = TrainConfig.preset("smoke", out_dir=str(tmp_path / "r"))
    result = train(cfg, progress=False)
    assert result.episodes >= 1 and read_log(cfg.out_dir)["complete"].sum() >= 1


def test_presets_paper_protocol_and_checkpoint_intervals():
    paper = TrainConfig.preset("paper", env="ALE/Pong-v5", bonus="pixelcnn")
    assert paper.sticky_actions == 0.0 and paper.checkpoint_interval == 1_000_000  # Mnih et al. 2015's ALE
    study = TrainConfig.preset("study", env=ENV)
    assert study.checkpoint_every is None and study.checkpoint_interval == 10_000  # long runs can resume
    assert TrainConfig.preset("study", env=ENV, steps=3_000_000).checkpoint_interval == 300_000
    assert TrainConfig.preset("study", env=ENV, checkpoint_every=0).checkpoint_interval == 0


def test_module_entry_point_reports_errors_without_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pcnn_explore", "train", "--env", ENV, "--out", str(tmp_path),
                           "--resume"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "holds no checkpoint" in proc.stderr


def test_density_streams_follow_the_paper_protocol_at_the_paper_profile():
    from pcnn_explore.experiments.density.samples import SamplesSettings

    assert SamplesSettings.preset("paper").stream_options()["sticky_actions"] == 0.0
    assert SamplesSettings.preset("study").stream_options()["sticky_actions"] == 0.25
    assert SamplesSettings.preset("paper", sticky_actions=0.25).stream_options()["sticky_actions"] == 0.25


@pytest.mark.parametrize("argv, flags, message", [
    (["--agent", "reactor", "--replay-capacity", "100", "--num-envs", "2"], ("--replay-capacity", "--num-envs"),
     "each env's replay 50 slots; reactor with stack 1 needs more than seq_len + burn_in + stack = 66: "
     "raise --replay-capacity to at least 133"),
    (["--agent", "reactor", "--replay-capacity", "66"], ("--replay-capacity",), "at least 67"),
    (["--replay-capacity", "16", "--num-envs", "8", "--steps", "80"], ("--replay-capacity", "--num-envs"),
     "dqn with stack 1 needs at least 2 * stack + 2 = 4: raise --replay-capacity to at least 25"),
    (["--n-actions", "8"], ("--n-actions",), "--n-actions 8 is more than the 7 actions of MiniGrid-Empty-5x5-v0"),
    (["--env", "MiniGrid-Serpentine-7x7-v0", "--n-actions", "4"], ("--n-actions",), "more than the 3 actions"),
    (["--env", "DeepSea-6-v0", "--n-actions", "2"], ("--n-actions",), "leave --n-actions at auto"),
    (["--env", "ALE/Pong-v5", "--n-actions", "2"], ("--n-actions",), "leave --n-actions at auto"),
    (["--env", "DeepSea-6-v0", "--view", "partial"], ("--view",), "leave --view at full"),
])
def test_settings_the_env_or_replay_can_never_run_are_refused_before_anything_is_written(
        tmp_path, capsys, argv, flags, message):
    out = tmp_path / "run"
    status, stdout, err = cli("--out", str(out), *argv, capsys=capsys)
    assert status == 2 and stdout == ""
    assert err.count("\n") == 1 and err.startswith("pcnn-explore train: error: ") and message in err, err
    assert all(f in err for f in flags), err
    assert not out.exists() and not tmp_path.joinpath("run").exists()


def test_the_smallest_replays_the_checks_allow_can_be_built():
    from pcnn_explore.agents.sequence_replay import SequenceReplay
    from pcnn_explore.run.shards import ReplayShards

    # the minimum each refusal names is the exact boundary of the replays' own limits
    TrainConfig.preset("smoke", env=ENV, agent="reactor", replay_capacity=133, num_envs=2, steps=80)
    SequenceReplay(2, 133, (3, 4, 4), stack=1)
    with pytest.raises(ValueError, match="capacity"):
        SequenceReplay(2, 132, (3, 4, 4), stack=1)
    with pytest.raises(ValueError, match="replay_capacity 132 over num_envs 2"):
        TrainConfig.preset("smoke", env=ENV, agent="reactor", replay_capacity=132, num_envs=2, steps=80)
    TrainConfig.preset("smoke", env=ENV, replay_capacity=25, num_envs=8, steps=80)
    ReplayShards(8, 25, (3, 4, 4), stack=1, gamma=0.99, running_episode="paper")
    with pytest.raises(ValueError, match="capacity"):
        ReplayShards(8, 24, (3, 4, 4), stack=1, gamma=0.99, running_episode="paper")
    with pytest.raises(ValueError, match="replay_capacity 24 over num_envs 8"):
        TrainConfig.preset("smoke", env=ENV, replay_capacity=24, num_envs=8, steps=80)
    assert TrainConfig.preset("smoke", env=ENV, n_actions=7).n_actions == 7
