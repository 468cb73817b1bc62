"""Training runs: every bonus kind end to end, logs, SIGKILL-and-resume, policies, bad flags."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from pcnn_explore.checkpoint import load
from pcnn_explore.run import LOG_COLUMNS, TrainConfig, load_policy, read_log, train

torch.set_num_threads(1)
ENV = "MiniGrid-Empty-5x5-v0"  # 100-step time limit: episodes are short
ROOT = Path(__file__).resolve().parents[1]


def smoke(tmp_path, name="run", **kw) -> TrainConfig:
    kw = {"env": ENV, "out_dir": str(tmp_path / name), "steps": 250, **kw}
    return TrainConfig.preset("smoke", **kw)


def check_log_covers_every_step(log: dict, steps: int, budget_cuts: int = 0) -> None:
    """Episode lengths tile steps 1..steps exactly once; only runs' ends cut episodes short."""
    assert log["length"].sum() == steps
    np.testing.assert_array_equal(log["step"], np.cumsum(log["length"]))
    np.testing.assert_array_equal(log["episode"], np.arange(len(log["step"])))
    assert (log["complete"][:-1] == 0).sum() == budget_cuts


@pytest.mark.parametrize("bonus", ["none", "pixelcnn", "cts", "convcts"])
def test_short_run_for_each_bonus(tmp_path, bonus):
    cfg = smoke(tmp_path, bonus=bonus, mmc_beta=0.0 if bonus == "none" else 0.1)
    result = train(cfg, progress=False)
    assert result.steps == 250
    log = read_log(cfg.out_dir)
    assert tuple(log) == LOG_COLUMNS
    check_log_covers_every_step(log, 250)
    assert np.isfinite(log["td_loss"][-1])  # learning started after learning_starts = 100
    if bonus == "none":
        assert (log["intrinsic_return"] == 0).all() and np.isnan(log["prediction_gain_mean"]).all()
    else:
        assert (log["intrinsic_return"] > 0).all() and np.isfinite(log["prediction_gain_mean"]).all()
    ck = load(Path(cfg.out_dir) / "checkpoint.pt")
    assert ck["step"] == 250 and ck["config"]["bonus"] == bonus
    if bonus != "none":
        assert ck["bonus"]["n"] == 250  # the density model trained once per agent step
    events = list((Path(cfg.out_dir) / "tb").glob("events.out.tfevents.*"))
    assert events
    if bonus == "pixelcnn":
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

        acc = EventAccumulator(str(Path(cfg.out_dir) / "tb"))
        acc.Reload()
        tags = set(acc.Tags()["scalars"])
        for tag in ("charts/episodic_return", "bonus/prediction_gain", "bonus/pseudo_count",
                    "bonus/intrinsic_reward", "losses/td", "perf/steps_per_second"):
            assert tag in tags, tag


def test_rewards_are_clipped_and_intrinsic_only_ignores_extrinsic(tmp_path):
    # Empty-5x5 pays up to ~1 on reaching the goal; with a bonus, r + r+ must be clipped to [-1, 1].
    cfg = smoke(tmp_path, bonus="cts", mmc_beta=0.1, steps=200)
    train(cfg, progress=False)
    ck = load(Path(cfg.out_dir) / "checkpoint.pt")
    r = ck["replay"]["shards"][0]["reward"][ck["replay"]["shards"][0]["has_transition"]]
    assert r.max() <= 1.0 and r.min() >= -1.0
    assert (r[:5] == 1.0).all()  # the first frames are novel: the bonus saturates the clip


def test_intrinsic_only_learns_from_the_bonus_alone(tmp_path):
    # pg_scale 0: the bonus is exactly 0, so an intrinsic-only agent stores only zero rewards even
    # though its extrinsic returns (logged) are positive; the same run with extrinsic rewards stores them.
    kw = dict(bonus="cts", pg_scale=0.0, epsilon_decay_steps=0, epsilon_end=1.0, n_actions=3, steps=600)
    runs = {}
    for intrinsic_only in (True, False):
        cfg = smoke(tmp_path, f"intr{intrinsic_only}", intrinsic_only=intrinsic_only, **kw)
        train(cfg, progress=False)
        rep = load(Path(cfg.out_dir) / "checkpoint.pt")["replay"]["shards"][0]
        runs[intrinsic_only] = (read_log(cfg.out_dir), rep["reward"][rep["has_transition"]])
    log, rewards = runs[True]
    assert log["return"].max() > 0  # the random walk (left/right/forward) reaches the goal
    assert (rewards == 0).all() and (log["intrinsic_return"] == 0).all()
    log, rewards = runs[False]
    assert rewards.sum() == pytest.approx(log["return"].sum(), abs=1e-5)
    assert rewards.max() > 0


def test_identical_seeds_give_identical_runs_with_or_without_the_bonus_thread(tmp_path):
    a = smoke(tmp_path, "a", bonus="pixelcnn", mmc_beta=0.1, steps=200, bonus_thread=True)
    b = smoke(tmp_path, "b", bonus="pixelcnn", mmc_beta=0.1, steps=200, bonus_thread=False)
    train(a, progress=False)
    train(b, progress=False)
    la, lb = read_log(a.out_dir), read_log(b.out_dir)
    for col in LOG_COLUMNS:
        if col != "wall_seconds":
            np.testing.assert_array_equal(la[col], lb[col])
    ca, cb = load(Path(a.out_dir) / "checkpoint.pt"), load(Path(b.out_dir) / "checkpoint.pt")
    for c in (ca, cb):
        c.pop("config")
    assert_same(ca, cb)
    c = smoke(tmp_path, "c", bonus="pixelcnn", mmc_beta=0.1, steps=200, seed=1)
    train(c, progress=False)
    assert not np.array_equal(read_log(c.out_dir)["prediction_gain_mean"], la["prediction_gain_mean"])


def _cli(*args):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return [sys.executable, "-m", "pcnn_explore", "train", *args], env


@pytest.mark.slow
@pytest.mark.parametrize("env_id, bonus, steps, every", [
    (ENV, "pixelcnn", 600, 150),
    # the MLP's numpy learn step (learn_step auto on DeepSea): its Adam state is the optimiser's own
    ("DeepSea-10-v0", "cts", 30_000, 4_000),
])
def test_sigkill_then_resume_covers_every_step_once_and_matches_uninterrupted(tmp_path, env_id, bonus, steps, every):
    common = ["--env", env_id, "--bonus", bonus, "--mmc", "0.1", "--profile", "smoke", "--seed", "3",
              "--steps", str(steps), "--checkpoint-every", str(every), "--no-progress"]
    killed, ref = tmp_path / "killed", tmp_path / "ref"
    cmd, env = _cli(*common, "--out", str(killed))
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ckpt = killed / "checkpoint.pt"
    deadline = time.time() + 120
    # kill once a checkpoint exists and the log has gone past it, between two checkpoints
    while time.time() < deadline and proc.poll() is None:
        if ckpt.exists():
            log = read_log(killed)
            saved = load(ckpt)["step"]
            if len(log["step"]) and saved < log["step"][-1] < (saved // every + 1) * every:
                break
        time.sleep(0.01)
    assert proc.poll() is None, "the run finished before it could be killed: raise steps"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert load(ckpt)["step"] < steps
    cmd, env = _cli(*common, "--out", str(killed), "--resume")
    subprocess.run(cmd, env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    cmd, env = _cli(*common, "--out", str(ref))
    subprocess.run(cmd, env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    got, want = read_log(killed), read_log(ref)
    check_log_covers_every_step(got, steps)
    for col in LOG_COLUMNS:
        if col != "wall_seconds":
            np.testing.assert_array_equal(got[col], want[col], err_msg=col)
    a, b = load(killed / "checkpoint.pt"), load(ref / "checkpoint.pt")
    assert a["bonus"]["n"] == steps and ("net" in a["bonus"]["model"]) == (bonus == "pixelcnn")
    assert a["config"]["learn_step"] == ("numpy" if env_id.startswith("DeepSea") else "torch")
    a["config"].pop("out_dir"), b["config"].pop("out_dir")
    # networks, optimisers, density model, replay, RNG states, counters: all identical
    assert_same(a, b)


def assert_same(a, b, path="checkpoint"):
    assert type(a) is type(b), path
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            assert_same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, torch.Tensor):
        assert torch.equal(a, b), path
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=path)
    else:
        assert a == b, path


def test_resume_drops_log_rows_written_after_the_checkpoint(tmp_path):
    cfg = smoke(tmp_path, steps=150)
    train(cfg, progress=False)
    path = Path(cfg.out_dir) / "log.csv"
    clean = path.read_text()
    # a crash after the checkpoint leaves rows the checkpoint does not know about
    path.write_text(clean + "170,99,0.5,20,1,0,0,nan,0.1,0.1,1.0,nan,nan,0\n")
    assert read_log(cfg.out_dir)["step"][-1] == 170
    result = train(smoke(tmp_path, steps=200), resume=True, progress=False)
    assert result.steps == 200 and path.read_text().startswith(clean)
    log = read_log(cfg.out_dir)
    assert 99 not in log["episode"] and 170 not in log["step"]
    check_log_covers_every_step(log, 200, budget_cuts=1)


def test_resume_refuses_changed_settings_and_fresh_run_refuses_existing_dir(tmp_path):
    cfg = smoke(tmp_path, steps=120)
    train(cfg, progress=False)
    with pytest.raises(ValueError, match="already holds a training run"):
        train(cfg, progress=False)
    with pytest.raises(ValueError, match="settings differ.*mmc_beta"):
        train(smoke(tmp_path, steps=120, mmc_beta=0.5), resume=True, progress=False)
    # extending the budget continues the run
    result = train(smoke(tmp_path, steps=220), resume=True, progress=False)
    assert result.steps == 220
    log = read_log(cfg.out_dir)
    check_log_covers_every_step(log, 220, budget_cuts=1)  # the first run's budget cut one episode
    assert log["complete"][np.searchsorted(log["step"], 120)] == 0


def test_load_policy_acts_in_the_trained_env(tmp_path):
    cfg = smoke(tmp_path, steps=120)
    train(cfg, progress=False)
    env_id, policy = load_policy(cfg.out_dir)
    assert env_id == ENV
    env = policy.make_env(seed=1)
    obs, info = env.reset()
    assert "rgb" in info and info["density_frame"].shape == (42, 42)
    ck = load(Path(cfg.out_dir) / "checkpoint.pt")
    q = torch.nn.Module()
    from pcnn_explore.agents.networks import make_q_network

    q = make_q_network(tuple(ck["obs_shape"]), ck["n_actions"], "auto", cfg.hidden)
    q.load_state_dict(ck["agent"]["q"])
    with torch.no_grad():
        want = int(q(torch.from_numpy(obs)[None]).argmax())
    assert policy(obs) == want
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        load_policy(tmp_path / "nowhere")


@pytest.mark.parametrize("args, message", [
    (["--env", "ALE/NoSuchGame-v5"], "unknown env id"),
    (["--env", "CartPole-v1"], "unsupported env id"),
    (["--env", ENV, "--steps", "-5"], "expected a positive integer"),
    (["--env", ENV, "--steps", "0"], "expected a positive integer"),
    (["--env", ENV, "--bonus", "hash"], "invalid choice: 'hash'"),
    (["--env", ENV, "--mmc", "1.5"], "expected a number in [0, 1]"),
    (["--env", ENV, "--profile", "huge"], "invalid choice: 'huge'"),
])
def test_bad_flags_fail_before_any_work(tmp_path, capsys, args, message):
    from pcnn_explore.cli import main

    out = tmp_path / "out"
    try:
        status = main(["train", *args, "--out", str(out), "--no-progress"])
    except SystemExit as e:  # argparse errors
        status = e.code
    assert status == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_cli_refuses_existing_run_without_resume(tmp_path, capsys):
    from pcnn_explore.cli import main

    cfg = smoke(tmp_path, steps=110)
    train(cfg, progress=False)
    assert main(["train", "--env", ENV, "--profile", "smoke", "--out", cfg.out_dir, "--no-progress"]) == 2
    assert "--resume" in capsys.readouterr().err


def test_config_validation_names_the_setting():
    with pytest.raises(ValueError, match="unknown bonus 'hash'"):
        TrainConfig.preset("smoke", env=ENV, bonus="hash")
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        TrainConfig.preset("smoke", env=ENV, steps=-1)
    with pytest.raises(ValueError, match="intrinsic_only=True needs a bonus"):
        TrainConfig.preset("smoke", env=ENV, intrinsic_only=True)
    with pytest.raises(ValueError, match="unknown pg_schedule"):
        TrainConfig.preset("smoke", env=ENV, pg_schedule="log")
    with pytest.raises(TypeError, match="no setting"):
        TrainConfig.preset("smoke", env=ENV, beta=0.1)
    with pytest.raises(TypeError, match="TrainConfig"):
        train({"env": ENV})
    # the paper: bonus agents use MMC (beta 0.1) unless told otherwise, the baseline DQN does not
    assert TrainConfig.preset("smoke", env=ENV).mmc_beta == 0.0
    assert TrainConfig.preset("smoke", env=ENV, bonus="pixelcnn").mmc_beta == 0.1
    assert TrainConfig.preset("smoke", env=ENV, bonus="pixelcnn", mmc_beta=0.0).mmc_beta == 0.0
    paper = TrainConfig.preset("paper", env="ALE/MontezumaRevenge-v5")
    assert (paper.replay_capacity, paper.optimizer, paper.target_update_every, paper.steps) == (
        1_000_000, "rmsprop", 40_000, 37_500_000)


@pytest.mark.parametrize("agent, capacity", [("dqn", 16), ("reactor", 70)])
def test_episodes_longer_than_the_replay_finish_the_run(tmp_path, capsys, agent, capacity):
    from pcnn_explore.cli import main

    out = tmp_path / agent
    status = main(["train", "--env", ENV, "--agent", agent, "--replay-capacity", str(capacity), "--profile", "smoke",
                   "--steps", "240", "--learning-starts", "40", "--out", str(out), "--no-progress"])
    assert status == 0, capsys.readouterr().err
    log = read_log(out)
    assert log["length"].max() > capacity  # an episode overwrote its own first transitions in the replay
    check_log_covers_every_step(log, 240, budget_cuts=0)
    assert (out / "checkpoint.pt").exists()


def test_deep_sea_run_trains_and_saves_the_mlp_that_auto_picks(tmp_path):
    from pcnn_explore.agents.networks import MLP

    cfg = TrainConfig.preset("smoke", env="DeepSea-5-v0", steps=150, seed=1, tensorboard=False,
                             out_dir=str(tmp_path / "r"))
    train(cfg, progress=False)
    ck = load(Path(cfg.out_dir) / "policy.pt")
    assert ck["network"] == "mlp" and ck["q"]["features.1.weight"].shape == (64, 25)  # smoke: hidden 64
    _, policy = load_policy(cfg.out_dir)
    assert isinstance(policy.agent.q, MLP)
    obs, _ = policy.make_env(seed=0).reset()
    with torch.no_grad():
        assert policy(obs) == int(policy.agent.q(torch.from_numpy(obs)[None]).argmax())
