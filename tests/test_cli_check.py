"""``pcnn-explore train --check`` and ``record --check``: every check a run makes, the resolved
settings printed, status 0, and nothing written; a bad setting is the run's own one-line error."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import torch

from pcnn_explore.cli import main
from pcnn_explore.run.loop import describe
from pcnn_explore.run import TrainConfig, train

torch.set_num_threads(1)
ENV = "MiniGrid-Empty-5x5-v0"


def snapshot(folder: Path) -> dict:
    """Every path under ``folder`` with its bytes and modification time (folders: None, mtime)."""
    return {p.relative_to(folder): (p.read_bytes() if p.is_file() else None, p.stat().st_mtime_ns)
            for p in folder.rglob("*")}


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        status = main(argv)
    except SystemExit as e:  # argparse errors
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def short_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "cts"
    train(TrainConfig.preset("smoke", env=ENV, bonus="cts", steps=150, out_dir=str(out)), progress=False)
    return out


def test_train_check_prints_the_resolved_settings_and_creates_nothing(tmp_path, capsys):
    out = tmp_path / "runs" / "ds"
    status, stdout, err = run(["train", "--env", "DeepSea-10-v0", "--bonus", "cts", "--steps", "2000",
                               "--out", str(out), "--check"], capsys)
    assert status == 0 and err == ""
    cfg = TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts", steps=2000, out_dir=str(out))
    assert stdout == describe(cfg) + f"\ncheck passed: a run would start afresh in {out}, 2000 agent steps; " \
                                     "nothing was written\n"
    assert "mapping_seed=42" in stdout and "mapping_rule=bsuite" in stdout  # DeepSea's own, resolved
    # the paper's method (MMC 0.1 since 0.2.0, the kit's 0.5 before) and CTS's bonus form, resolved
    text = " ".join(stdout.split())
    assert all(f" {kv} " in f" {text} " for kv in ("mmc_beta=0.1", "pg_scale=1.0", "pg_schedule=constant",
                                                   "bonus_scale=0.05", "scored_frame=state", "novelty_epsilon=0.0"))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("argv, message", [
    (["--env", "Nope-v0"], "unsupported env id 'Nope-v0'"),
    (["--env", "MiniGrid-Serpentine-7x7-v0", "--n-actions", "4"], "--n-actions 4 is more than the 3 actions"),
    (["--env", "DeepSea-6-v0", "--num-envs", "2", "--steps", "2001"],
     "--steps (2001) must be a multiple of --num-envs (2)"),
    (["--env", ENV, "--intrinsic-only"], "--intrinsic-only needs --bonus"),
    (["--env", ENV, "--device", "cuda:0"] if not torch.cuda.is_available() else ["--env", ENV, "--device", "tpu"],
     "--device"),
    (["--env", ENV, "--resume"], "cannot resume: {out} does not exist"),
])
def test_train_check_refuses_what_a_run_refuses_with_one_line(tmp_path, capsys, argv, message):
    out = tmp_path / "run"
    status, stdout, err = run(["train", "--profile", "smoke", "--out", str(out), *argv, "--check"], capsys)
    assert status == 2 and stdout == ""
    assert err.count("\n") == 1 and err.startswith("pcnn-explore train: error: "), err
    assert message.format(out=out) in err, err
    assert os.listdir(tmp_path) == []


def test_train_check_on_a_run_folder_says_what_a_run_would_do_and_touches_nothing(short_run, capsys):
    before = snapshot(short_run)
    base = ["train", "--out", str(short_run), "--check"]
    status, stdout, _ = run([*base, "--env", ENV, "--bonus", "cts", "--profile", "smoke"], capsys)
    assert status == 2 and stdout == ""  # a fresh run refuses a folder that holds one
    status, stdout, _ = run([*base, "--resume", "--steps", "300"], capsys)
    assert status == 0 and f"a run would resume {short_run} at step 150 of 300" in stdout
    assert "steps=300" in stdout and "bonus=cts" in stdout  # the checkpoint's settings, --steps grown
    status, stdout, _ = run([*base, "--resume"], capsys)
    assert status == 0 and "already ran 150 agent steps (--steps 150): a run would do nothing" in stdout
    status, _, err = run([*base, "--resume", "--bonus", "pixelcnn"], capsys)
    assert status == 2 and "--bonus: checkpoint 'cts' vs now 'pixelcnn'" in err
    assert snapshot(short_run) == before


def test_record_check_prints_the_resolved_settings_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "ep.npz"
    before = snapshot(tmp_path)
    status, stdout, err = run(["record", "--env", "ALE/MontezumaRevenge-v5", "--policy", "scripted",
                               "--density", "cts", "--warmup-frames", "20", "--max-steps", "30", "--seed", "3",
                               "--out", str(out), "--check"], capsys)
    assert status == 0 and err == ""
    assert stdout == ("settings: env=ALE/MontezumaRevenge-v5 policy=scripted density=cts warmup_frames=20 "
                      "max_steps=30 episodes=1 seed=3 pg_scale=0.1 pg_schedule=inverse_sqrt bonus_scale=1.0 "
                      f"sticky_actions=0.0 device=cpu out={out}\n"
                      "bonus form: cts, c = 0.1 n^-1/2, beta = 1 (record's own form); train --bonus cts runs the "
                      "paper's form by default, cts, c = 1 constant, beta = 0.05\n"
                      f"check passed: a recording would write {out}; nothing was written\n")
    assert not out.exists() and snapshot(tmp_path) == before


@pytest.mark.parametrize("argv, message", [
    (["--env", "Nope-v0", "--out", "{tmp}/ep.npz"], "unsupported env id 'Nope-v0'"),
    (["--env", "DeepSea-6-v0", "--out", "{tmp}/ep.h5"], "--out must end in .npz"),
    (["--env", "DeepSea-6-v0", "--out", "{tmp}/no/ep.npz"], "does not exist; create it first"),
    (["--env", "DeepSea-6-v0", "--policy", "scripted", "--out", "{tmp}/ep.npz"], "no scripted policy for"),
    (["--env", "DeepSea-6-v0", "--max-steps", "0", "--out", "{tmp}/ep.npz"], "max_steps must be an integer >= 1"),
    (["--env", "DeepSea-6-v0", "--pg-schedule", "log", "--out", "{tmp}/ep.npz"], "unknown --pg-schedule 'log'"),
    (["--env", "DeepSea-6-v0", "--device", "bogus", "--out", "{tmp}/ep.npz"], "bogus"),
])
def test_record_check_refuses_what_a_recording_refuses_with_one_line(tmp_path, capsys, argv, message):
    status, stdout, err = run(["record", *[a.format(tmp=tmp_path) for a in argv], "--check"], capsys)
    assert status == 2 and stdout == ""
    assert err.count("\n") == 1 and err.startswith("pcnn-explore record: error: ") and message in err, err
    assert os.listdir(tmp_path) == []


def test_record_check_loads_a_checkpoint_policy_and_matches_its_env(tmp_path, short_run, capsys):
    run_dir = tmp_path / "run"
    shutil.copytree(short_run, run_dir)
    before = snapshot(tmp_path)
    base = ["record", "--policy", str(run_dir), "--density", "cts", "--out", str(tmp_path / "ep.npz"), "--check"]
    status, stdout, _ = run([*base, "--env", ENV], capsys)
    assert status == 0 and f"policy={run_dir} " in stdout
    status, stdout, err = run([*base, "--env", "MiniGrid-Empty-8x8-v0"], capsys)
    assert status == 2 and f"was trained on '{ENV}', not 'MiniGrid-Empty-8x8-v0'; pass --env {ENV}" in err
    assert snapshot(tmp_path) == before
