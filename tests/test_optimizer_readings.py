"""The optimizer readings, against float64 references written from their formulas (not from torch's
optimizers), and their life in a run: checkpoints record them, resume under them, refuse another.

PixelCNN, ``tf1`` (the paper's, the default): TF1's RMSPropOptimizer on the per-pixel mean
cross-entropy, g = grad(-log rho(x) / (H W)):

    v_0 = 1;  v <- 0.95 v + 0.05 g^2;  m <- 0.9 m + lr_n g / sqrt(v + 1e-4);  w <- w - m

DQN, ``dqn3`` (the paper's, the default of optimizer rmsprop): DQN 3.0's update on G, the gradient of
the minibatch's SUMMED Huber loss (B x the mean's):

    g_0 = g2_0 = 0;  g <- 0.95 g + 0.05 G;  g2 <- 0.95 g2 + 0.05 G^2;  w <- w - lr G / sqrt(g2 - g^2 + 0.01)
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from pcnn_explore.agents.dqn import DQNAgent
from pcnn_explore.agents.replay import Batch
from pcnn_explore.density import PixelCNNDensity, make_density
from pcnn_explore.density.pixelcnn import PixelCNN, learning_rate
from pcnn_explore.run import LOG_COLUMNS, TrainConfig, read_log, train

sys.path.insert(0, str(Path(__file__).parent))
from test_train import assert_same  # noqa: E402  (checkpoints compared tensor by tensor)

torch.set_num_threads(1)
U32 = 2.0 ** -24  # float32's unit roundoff
H, W, LEVELS = 5, 7, 4


# ------------------------------------------------------------------------------ PixelCNN reference
def _frames(n: int, seed: int = 4) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, LEVELS, (n, H, W)).astype(np.uint8)


def _log_rho(net: PixelCNN, frame: np.ndarray) -> torch.Tensor:
    """log rho(x) in nats (the sum over pixels), float64, differentiable."""
    t = torch.from_numpy(frame.reshape(1, -1)).long()
    return torch.log_softmax(net(t.double() / (LEVELS - 1)), -1).gather(-1, t.unsqueeze(-1)).sum()


class Tf1Reference:
    """The tf1 reading written out in float64: the formulas of the module docstring."""

    def __init__(self, model: PixelCNNDensity, v0: float = 1.0, rate_inside: bool = True):
        self.net = PixelCNN(model.height, model.width, levels=model.levels).double()
        self.net.load_state_dict({k: v.double() for k, v in model.net.state_dict().items()})
        self.params = list(self.net.parameters())
        self.v = [torch.full_like(p, v0) for p in self.params]
        self.m = [torch.zeros_like(p) for p in self.params]
        self.rate_inside, self.grads = rate_inside, []

    def update(self, frame: np.ndarray, lr: float) -> tuple[float, float]:
        before = _log_rho(self.net, frame)
        self.net.zero_grad()
        (-before / (H * W)).backward()  # the per-pixel mean cross-entropy
        self.grads = [p.grad.clone() for p in self.params]
        with torch.no_grad():
            for p, v, m in zip(self.params, self.v, self.m):
                g = p.grad
                v.mul_(0.95).add_(0.05 * g * g)
                if self.rate_inside:  # TF1: m <- 0.9 m + lr g / sqrt(v + eps); w <- w - m
                    m.mul_(0.9).add_(lr * g / torch.sqrt(v + 1e-4))
                    p.sub_(m)
                else:  # the rate after the momentum (torch's placement), for contrast
                    m.mul_(0.9).add_(g / torch.sqrt(v + 1e-4))
                    p.sub_(lr * m)
            after = _log_rho(self.net, frame)
        return before.item(), after.item()


# float64 model against the float64 reference: both round each operation to 1.1e-16; a weight after 12
# updates carries the rounding of its gradient's sums (35 pixels x up to 64 channels) through the steps,
# 1e-13 relative at most: 1e-12 on the log-probabilities and 1e-10 on the weights leave margin, while a
# wrong reading (accumulator from 0, the rate after the momentum, the sum for the mean) moves them by
# 1e-4 or more (checked below).
LP_TOL, W_RTOL, W_ATOL = 1e-12, 1e-10, 1e-12


@pytest.mark.parametrize("schedule", ["constant", "inverse", "inverse_sqrt"])
def test_tf1_is_the_default_and_equals_its_formulas_with_a_rate_that_changes(schedule):
    m = PixelCNNDensity(H, W, LEVELS, lr=0.01, lr_schedule=schedule, seed=3, dtype=torch.float64)  # no reading given
    assert m.rmsprop == "tf1" and m.optimizer.form == "tf1"
    ref, after_momentum = Tf1Reference(m), Tf1Reference(m, rate_inside=False)
    for n, frame in enumerate(_frames(12), start=1):
        lr = learning_rate(0.01, n, schedule)
        ours = m.update(frame)
        assert ours == pytest.approx(ref.update(frame, lr), rel=LP_TOL, abs=LP_TOL)
        after_momentum.update(frame, lr)
    for p, q in zip(m.net.parameters(), ref.net.parameters()):
        torch.testing.assert_close(p, q, rtol=W_RTOL, atol=W_ATOL)
    gap = max(float((p - q).detach().abs().max()) for p, q in zip(ref.net.parameters(), after_momentum.net.parameters()))
    assert (gap > 1e-4) == (schedule != "constant")  # a changing rate inside the momentum is not the rate after it


def test_the_first_update_starts_from_an_accumulator_of_one():
    m = PixelCNNDensity(H, W, LEVELS, lr=0.01, seed=5, dtype=torch.float64)
    assert torch.equal(m.optimizer.square_avg, torch.ones_like(m.optimizer.flat))
    assert not m.optimizer.momentum_buffer.any()
    w0 = m.optimizer.flat.clone()
    ref, from_zero = Tf1Reference(m), Tf1Reference(m, v0=0.0)
    frame = _frames(1)[0]
    m.update(frame)
    ref.update(frame, 0.01)
    from_zero.update(frame, 0.01)
    g = torch.cat([x.reshape(-1) for x in ref.grads])
    # v_1 = 0.95 + 0.05 g^2; m_1 = lr g / sqrt(v_1 + 1e-4); w_1 = w_0 - m_1
    v1 = 0.95 + 0.05 * g * g
    torch.testing.assert_close(m.optimizer.square_avg, v1, rtol=1e-15, atol=0)
    torch.testing.assert_close(m.optimizer.momentum_buffer, 0.01 * g / torch.sqrt(v1 + 1e-4), rtol=1e-13, atol=1e-18)
    torch.testing.assert_close(m.optimizer.flat, w0 - 0.01 * g / torch.sqrt(v1 + 1e-4), rtol=1e-13, atol=1e-16)
    # the step from an accumulator of 0 is another step: lr g / sqrt(0.05 g^2 + 1e-4), up to 4.5 lr
    gap = max(float((p - q).detach().abs().max()) for p, q in zip(ref.net.parameters(), from_zero.net.parameters()))
    assert gap > 1e-3


def test_the_mean_against_the_sum_gradients_differ_by_the_pixel_count_and_the_pg_stays_in_nats():
    frames = _frames(3, seed=8)
    tf1, torch_ = (PixelCNNDensity(H, W, LEVELS, seed=6, dtype=torch.float64, rmsprop=r) for r in ("tf1", "torch"))
    first = [m.update(frames[0]) for m in (tf1, torch_)]
    assert first[0][0] == first[1][0]  # the same weights before: the same log rho
    # the hand-written gradient of each reading's loss: -log rho / (H W) under tf1, -log rho under torch
    # (float64: an element is a sum of up to 35 x 64 products, rounded to 1e-16 of their sizes, so an element
    # that cancels to near 0 is exact only to 1e-13 of the largest element)
    g_sum = torch_.optimizer.flat_grad
    torch.testing.assert_close(tf1.optimizer.flat_grad * (H * W), g_sum, rtol=1e-13, atol=1e-13 * float(g_sum.abs().max()))
    for m in (tf1, torch_):  # log rho and log rho' are the whole frame's, in nats, under both readings
        before = m.log_prob(frames[1:2])[0]
        got = m.update(frames[1])
        assert got[0] == before and got[1] == m.log_prob(frames[1:2])[0]
        assert abs(got[0]) > H * W * 0.5  # a frame's nats, not a pixel's mean (log 4 = 1.39 per pixel here)


def test_the_default_float32_model_follows_the_formulas():
    # make_density("pixelcnn"): float32, tf1. Against the float64 formulas from the same (float32) weights,
    # over K updates: each update rounds every weight once (half a unit of float32, U32 |w|) and its step
    # m (<= lr |g| / sqrt(0.95), |g| < 1) carries float32's relative error of a few 1e-6 (sums of 35
    # pixels' gradients through four layers), 1e-9 absolute: the weights within K U32 max|w| x 2.
    # Each log-probability sums 35 float32 per-pixel terms, each within 64 U32 of its size (four layers of
    # dot products of up to 64 terms): within 35 x 64 U32 max|log p| of the float64 value.
    m = make_density("pixelcnn", H, W, LEVELS, seed=2, lr=1e-3)
    assert isinstance(m, PixelCNNDensity) and m.rmsprop == "tf1" and m.dtype == torch.float32
    ref = Tf1Reference(m)
    k = 4
    for frame in _frames(k, seed=9):
        ours, want = m.update(frame), ref.update(frame, 1e-3)
        lp_tol = 64 * U32 * max(abs(want[0]), abs(want[1]))  # 64 U32 |log p| per pixel, summed: 64 U32 |log rho|
        assert ours == pytest.approx(want, rel=0, abs=lp_tol)
    w_max = max(float(p.detach().abs().max()) for p in ref.net.parameters())
    for p, q in zip(m.net.parameters(), ref.net.parameters()):
        torch.testing.assert_close(p.detach().double(), q.detach(), rtol=0, atol=2 * k * U32 * w_max)


def test_a_state_of_the_other_reading_is_refused_and_one_without_a_reading_is_torchs():
    tf1, old = PixelCNNDensity(3, 3, 2, seed=1), PixelCNNDensity(3, 3, 2, seed=1, rmsprop="torch")
    old.update(np.zeros((3, 3), np.uint8))
    with pytest.raises(ValueError, match="'torch' RMSProp reading.*rmsprop='torch'"):
        tf1.load_state_dict(old.state_dict())
    state = old.state_dict()
    del state["rmsprop"], state["optimizer"]["form"]  # as saved before the readings were named
    fresh = PixelCNNDensity(3, 3, 2, seed=4, rmsprop="torch")
    fresh.load_state_dict(state)
    assert fresh.update(np.ones((3, 3), np.uint8)) == old.update(np.ones((3, 3), np.uint8))
    with pytest.raises(ValueError, match="rmsprop must be one of tf1, torch"):
        PixelCNNDensity(3, 3, 2, rmsprop="adam")


# ----------------------------------------------------------------------------------- DQN 3.0
OBS, N_ACTIONS, B, LR, GAMMA = (1, 3, 3), 3, 8, 2.5e-4, 0.9


def _batches(n: int) -> list[Batch]:
    rng = np.random.default_rng(11)
    out = []
    for _ in range(n):
        obs = rng.integers(0, 256, (B, *OBS), dtype=np.uint8)
        nxt = rng.integers(0, 256, (B, *OBS), dtype=np.uint8)
        out.append(Batch(obs, rng.integers(0, N_ACTIONS, B).astype(np.int64),
                         rng.uniform(-3, 3, B).astype(np.float32),  # TD errors on both sides of the clip at 1
                         nxt, (rng.random(B) < 0.25).astype(np.float32), np.zeros(B, np.float32), np.arange(B)))
    return out


def _agent(rmsprop: str = "dqn3") -> DQNAgent:
    torch.manual_seed(7)
    return DQNAgent(OBS, N_ACTIONS, network="mlp", hidden=6, gamma=GAMMA, optimizer="rmsprop", lr=LR, rmsprop=rmsprop)


def _mlp64(params, obs: np.ndarray) -> torch.Tensor:
    """The MLP's Q-values in float64: relu(W1 x + b1), relu(W2 h + b2), W3 h + b3, x = pixels / 255."""
    w1, b1, w2, b2, w3, b3 = params
    x = torch.from_numpy(obs.reshape(len(obs), -1)).double() / 255.0
    h = torch.relu(x @ w1.T + b1)
    return torch.relu(h @ w2.T + b2) @ w3.T + b3


class Dqn3Reference:
    """DQN 3.0's update written out in float64 (module docstring): G is the gradient of the SUM over the
    minibatch of the Huber losses, i.e. sum_i clip(Q_i - y_i, -1, 1) grad Q_i."""

    def __init__(self, agent: DQNAgent):
        self.w = [p.detach().double().clone().requires_grad_(True) for p in agent.q.parameters()]
        self.target = [p.detach().double().clone() for p in agent.target.parameters()]
        self.g = [torch.zeros_like(p) for p in self.w]
        self.g2 = [torch.zeros_like(p) for p in self.w]
        self.grads: list[torch.Tensor] = []

    def learn(self, b: Batch) -> float:
        with torch.no_grad():
            y = torch.from_numpy(b.reward).double() + GAMMA * (1 - torch.from_numpy(b.done).double()) * _mlp64(
                self.target, b.next_obs).max(dim=1).values  # Q-learning (MMC mix 0)
        q = _mlp64(self.w, b.obs).gather(1, torch.from_numpy(b.action)[:, None]).squeeze(1)
        td = q - y
        huber = torch.where(td.abs() < 1, 0.5 * td * td, td.abs() - 0.5)
        for p in self.w:
            p.grad = None
        huber.sum().backward()
        self.grads = [p.grad.clone() for p in self.w]
        with torch.no_grad():
            for p, g, g2 in zip(self.w, self.g, self.g2):
                G = p.grad
                g.mul_(0.95).add_(0.05 * G)
                g2.mul_(0.95).add_(0.05 * G * G)
                p.sub_(LR * G / torch.sqrt(g2 - g * g + 0.01))
        return float(huber.detach().mean())


def test_dqn3_is_the_default_rmsprop_and_equals_its_formulas():
    # float32 agent against the float64 formulas from the same weights, over K steps: each step rounds
    # every weight once (U32 |w|); its step lr G / sqrt(g2 - g^2 + 0.01) changes by at most lr / 0.1
    # times G's float32 error (a few 1e-7 absolute: sums over 8 transitions through three layers of 9 or
    # 6 inputs), 1e-9: the weights within K x 2 U32 max|w|. The loss (the batch's mean Huber loss, which
    # learn returns) within 64 U32 of its size per step. Torch's reading moves the weights by 1e-4.
    agent, other = _agent(), _agent("torch")
    assert agent.rmsprop == "dqn3" and type(agent.optimizer).__name__ == "DQN3RMSprop"
    assert DQNAgent(OBS, N_ACTIONS, network="mlp", optimizer="rmsprop").rmsprop == "dqn3"
    ref = Dqn3Reference(agent)
    k = 6
    for b in _batches(k):
        loss, want = float(agent.learn(b)), ref.learn(b)
        other.learn(b)
        assert loss == pytest.approx(want, rel=64 * U32, abs=1e-12)
    # after a step, .grad holds G: the SUMMED loss's gradient, B times the mean's
    for p, g in zip(agent.q.parameters(), ref.grads):
        torch.testing.assert_close(p.grad.double(), g, rtol=0, atol=1e-5 * float(g.abs().max()) + 1e-9)
    w_max = max(float(p.detach().abs().max()) for p in ref.w)
    for p, q in zip(agent.q.parameters(), ref.w):
        torch.testing.assert_close(p.detach().double(), q.detach(), rtol=0, atol=2 * k * U32 * w_max)
    gap = max(float((p - q).detach().abs().max()) for p, q in zip(other.q.parameters(), agent.q.parameters()))
    assert gap > 1e-4


def test_dqn3_starts_from_zero_accumulators_with_epsilon_inside_the_root():
    agent = _agent()
    state = agent.optimizer.state
    assert all(not s["grad_avg"].any() and not s["square_avg"].any() for s in state.values())
    ref = Dqn3Reference(agent)
    b = _batches(1)[0]
    agent.learn(b)
    ref.learn(b)
    for p, G in zip(agent.q.parameters(), ref.grads):
        s = state[p]
        # g_1 = 0.05 G, g2_1 = 0.05 G^2, the step lr G / sqrt(0.0475 G^2 + 0.01): at most lr / sqrt(0.0475)
        torch.testing.assert_close(s["grad_avg"].double(), 0.05 * G, rtol=1e-5, atol=1e-9)
        torch.testing.assert_close(s["square_avg"].double(), 0.05 * G * G, rtol=1e-5, atol=1e-9)
    # the first step, element by element: lr G / sqrt(0.0475 G^2 + 0.01), within a rounding of the weight
    # (U32 |w|) and of G's float32 error (1e-9); epsilon outside the root, lr G / (sqrt(0.0475) |G| + 0.01),
    # is another step here (checked: at least 1e-5 apart on some weight)
    w0 = [p.detach().double() for p in _agent().q.parameters()]
    outside = 0.0
    for p, q, G in zip(agent.q.parameters(), w0, ref.grads):
        want = LR * G / torch.sqrt(0.0475 * G * G + 0.01)
        torch.testing.assert_close(q - p.detach().double(), want, rtol=0, atol=U32 * float(q.abs().max()) + 1e-9)
        outside = max(outside, float((LR * G / (math.sqrt(0.0475) * G.abs() + 0.01) - want).abs().max()))
    assert outside > 1e-5


def test_a_dqn_state_of_the_other_reading_is_refused():
    a, b = _agent(), _agent("torch")
    for x in (a, b):
        x.learn(_batches(1)[0])
    with pytest.raises(ValueError, match="'torch' RMSProp reading.*rmsprop='torch'"):
        a.load_state_dict(b.state_dict())
    with pytest.raises(ValueError, match="'dqn3' RMSProp reading.*rmsprop='dqn3'"):
        b.load_state_dict(a.state_dict())
    c = _agent()
    c.load_state_dict(a.state_dict())  # the same reading: continues exactly
    batch = _batches(2)[1]
    assert torch.equal(c.learn(batch), a.learn(batch))
    for p, q in zip(a.q.parameters(), c.q.parameters()):
        assert torch.equal(p, q)


# ------------------------------------------------------------------------------------ runs
ENV = "MiniGrid-Empty-5x5-v0"
READINGS = [("tf1", "dqn3"), ("torch", "torch")]


def _cfg(out: Path, steps: int, density: str, rmsprop: str) -> TrainConfig:
    return TrainConfig.preset("smoke", env=ENV, bonus="pixelcnn", mmc_beta=0.1, optimizer="rmsprop",
                              density_optimizer=density, rmsprop=rmsprop, steps=steps, checkpoint_every=0,
                              tensorboard=False, seed=5, out_dir=str(out))


def _same_logs(a: Path, b: Path) -> None:
    la, lb = read_log(a), read_log(b)
    for col in LOG_COLUMNS:
        if col != "wall_seconds":
            np.testing.assert_array_equal(la[col], lb[col], err_msg=col)


def _checkpoint(out: Path) -> dict:
    from pcnn_explore.checkpoint import load

    c = load(out / "checkpoint.pt")
    c["config"].pop("out_dir")
    return c


def _interrupted(cfg: TrainConfig, monkeypatch, after: int = 150) -> int:
    """Run ``cfg`` and stop it by Ctrl-C after step ``after`` (mid-run, mid-episode): the run takes a
    checkpoint at the step reached (:mod:`pcnn_explore.run.interrupt`). Returns that step."""
    import os
    import signal

    from pcnn_explore.run import logger

    sent = []

    class CtrlC(logger.CsvLog):
        def write(self, row):
            super().write(row)
            if row["step"] > after and not sent:
                sent.append(row["step"])
                os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(logger, "CsvLog", CtrlC)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt) as caught:
            train(cfg, progress=False)
    finally:
        signal.signal(signal.SIGINT, previous)
        monkeypatch.undo()
    assert caught.value.checkpoint == caught.value.step < cfg.steps
    return caught.value.step


@pytest.mark.parametrize("density, rmsprop", READINGS)
def test_resume_under_each_reading_equals_the_uninterrupted_run(tmp_path, monkeypatch, density, rmsprop):
    _interrupted(_cfg(tmp_path / "split", 250, density, rmsprop), monkeypatch)
    saved = _checkpoint(tmp_path / "split")
    assert (saved["config"]["density_optimizer"], saved["config"]["rmsprop"]) == (density, rmsprop)  # recorded
    assert saved["bonus"]["model"]["rmsprop"] == saved["bonus"]["model"]["optimizer"]["form"] == density
    train(_cfg(tmp_path / "split", 250, density, rmsprop), resume=True, progress=False)
    train(_cfg(tmp_path / "once", 250, density, rmsprop), progress=False)
    _same_logs(tmp_path / "split", tmp_path / "once")
    assert np.isfinite(read_log(tmp_path / "once")["td_loss"][-1])  # DQN learned (from step 100)
    assert_same(_checkpoint(tmp_path / "split"), _checkpoint(tmp_path / "once"))


def test_the_readings_change_the_run(tmp_path):
    for density, rmsprop in READINGS:
        train(_cfg(tmp_path / density, 200, density, rmsprop), progress=False)
    a, b = read_log(tmp_path / "tf1"), read_log(tmp_path / "torch")
    assert not np.array_equal(a["prediction_gain_mean"], b["prediction_gain_mean"])
    assert not np.array_equal(a["td_loss"], b["td_loss"], equal_nan=True)


def _strip_readings(run: Path) -> None:
    """Rewrite ``run``'s checkpoint and settings as the kit wrote them before the readings were named."""
    from pcnn_explore.checkpoint import load, read_meta, save_atomic

    path = run / "checkpoint.pt"
    saved, meta = load(path, checksum=True), read_meta(path)
    for config in (saved["config"], meta["config"]):
        del config["density_optimizer"], config["rmsprop"]
    del saved["bonus"]["model"]["rmsprop"], saved["bonus"]["model"]["optimizer"]["form"]
    save_atomic(saved, path, meta=meta)
    settings = json.loads((run / "settings.json").read_text())
    del settings["density_optimizer"], settings["rmsprop"]
    (run / "settings.json").write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n")


def test_a_checkpoint_from_before_the_readings_resumes_under_torch_and_says_so(tmp_path, capsys, monkeypatch):
    from pcnn_explore.checkpoint import read_meta
    from pcnn_explore.cli import main

    old = tmp_path / "old"
    _interrupted(_cfg(old, 250, "torch", "torch"), monkeypatch)
    _strip_readings(old)
    assert "density_optimizer" not in read_meta(old / "checkpoint.pt")["config"]
    capsys.readouterr()
    assert main(["train", "--resume", "--out", str(old), "--check"]) == 0
    out = capsys.readouterr().out
    assert " density_optimizer=torch " in " ".join(out.split()) + " "
    assert main(["train", "--resume", "--out", str(old), "--no-progress"]) == 0
    out = capsys.readouterr().out
    note = [line for line in out.splitlines() if "saved before these settings existed" in line]
    assert note == ["the checkpoint was saved before these settings existed; resuming with the values its version "
                    "used: density_optimizer=torch, rmsprop=torch"]
    settings = json.loads((old / "settings.json").read_text())
    assert (settings["density_optimizer"], settings["rmsprop"]) == ("torch", "torch")
    train(_cfg(tmp_path / "once", 250, "torch", "torch"), progress=False)
    _same_logs(old, tmp_path / "once")


def test_an_older_run_that_trains_under_neither_reading_is_not_told_about_them(tmp_path):
    # a CTS run with Adam: neither reading applies; resumed by the Python API with today's defaults
    cfg = dict(env=ENV, bonus="cts", mmc_beta=0.1, steps=120, checkpoint_every=0, tensorboard=False)
    train(TrainConfig.preset("smoke", out_dir=str(tmp_path / "cts"), **cfg), progress=False)
    _strip_readings_of_config(tmp_path / "cts")
    from pcnn_explore.run.resume import open_run

    start = open_run(TrainConfig.preset("smoke", out_dir=str(tmp_path / "cts"), **{**cfg, "steps": 200}), resume=True)
    assert start.backfill_note() is None


def _strip_readings_of_config(run: Path) -> None:
    from pcnn_explore.checkpoint import load, read_meta, save_atomic

    path = run / "checkpoint.pt"
    saved, meta = load(path, checksum=True), read_meta(path)
    for config in (saved["config"], meta["config"]):
        del config["density_optimizer"], config["rmsprop"]
    save_atomic(saved, path, meta=meta)


@pytest.mark.parametrize("flag, asked, what", [("--density-optimizer", "tf1", "the PixelCNN's RMSProp"),
                                               ("--rmsprop", "dqn3", "DQN's RMSProp")])
def test_a_reading_that_differs_from_the_checkpoints_is_refused_in_one_line(tmp_path, capsys, flag, asked, what):
    from pcnn_explore.cli import main

    run = tmp_path / "run"
    train(_cfg(run, 120, "torch", "torch"), progress=False)
    before = (run / "checkpoint.pt").read_bytes(), (run / "log.csv").read_text()
    for extra in ((), ("--check",)):
        capsys.readouterr()
        assert main(["train", "--resume", "--out", str(run), "--steps", "200", "--no-progress", flag, asked,
                     *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0, err
        assert (f"cannot resume {run}: its checkpoint trained under the torch reading of {what} and {flag} {asked} "
                f"was asked: leave {flag} unset (the checkpoint's torch) to resume, or choose another --out") in err
    assert ((run / "checkpoint.pt").read_bytes(), (run / "log.csv").read_text()) == before  # nothing written
    # the Python API names the setting to pass
    name = flag[2:].replace("-", "_")
    asked_cfg = _cfg(run, 200, asked, "torch") if name == "density_optimizer" else _cfg(run, 200, "torch", asked)
    with pytest.raises(ValueError, match=f"set {name}='torch' to resume"):
        train(asked_cfg, resume=True, progress=False)


def test_check_prints_the_readings(tmp_path, capsys):
    from pcnn_explore.cli import main

    assert main(["train", "--env", ENV, "--bonus", "pixelcnn", "--profile", "paper", "--out", str(tmp_path / "r"),
                 "--check"]) == 0
    text = " ".join(capsys.readouterr().out.split()) + " "
    assert " optimizer=rmsprop rmsprop=dqn3 " in text and " density_optimizer=tf1 " in text
    assert main(["train", "--env", ENV, "--bonus", "pixelcnn", "--out", str(tmp_path / "r"), "--check",
                 "--density-optimizer", "torch", "--rmsprop", "torch"]) == 0
    text = " ".join(capsys.readouterr().out.split()) + " "
    assert " rmsprop=torch " in text and " density_optimizer=torch " in text
    with pytest.raises(SystemExit) as e:  # argparse: one line and status 2
        main(["train", "--env", ENV, "--out", str(tmp_path / "r"), "--check", "--density-optimizer", "sum"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--density-optimizer: invalid choice: 'sum'" in err and "tf1" in err
