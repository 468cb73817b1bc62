"""The Retrace trace products a Reactor learn call used: by hand on a constant policy, and the
``traces.csv`` the training loop writes (one row per gradient step, cut back on resume)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from pcnn_explore.agents.reactor import TRACE_FIELDS, ReactorAgent
from pcnn_explore.agents.retrace import reward_trace_products
from pcnn_explore.agents.sequence_replay import SequenceBatch
from test_reactor import _constant_agent  # all weights 0: pi = (1/4, 3/4), Q = (1, 2)

torch.set_num_threads(1)


def _hand_batch() -> SequenceBatch:
    # A: mid-episode (burn-in holds an earlier step), +1 at step 2
    # B: starts its episode (first = 1 at x_0), 3 stored steps, rewards above 0.5 at steps 0 and 2
    # C: no reward above 0.5
    action = [[1, 0, 1, 0], [0, 0, 1, 0], [1, 1, 1, 1]]
    mu = [[0.5, 0.5, 0.9, 0.2], [0.3, 0.4, 0.6, 1.0], [0.75, 0.75, 0.75, 0.75]]
    reward = [[0.0, 0.0, 0.99, 0.0], [1.0, 0.2, 0.7, 0.0], [0.3, 0.0, 0.0, 0.0]]
    mask = [[1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 1, 1]]
    burn_in, L = 1, 4
    first = np.zeros((3, burn_in + L + 1), np.float32)
    first[:, 0] = 1
    first[1, 1] = 1
    f32 = lambda x: np.asarray(x, np.float32)  # noqa: E731
    return SequenceBatch(obs=np.zeros((3, burn_in + L + 1, 1, 1, 3), np.uint8), first=first,
                         action=np.asarray(action, np.int64), mu=f32(mu), reward=f32(reward),
                         terminated=np.zeros((3, L), np.float32), mask=f32(mask), length=np.array([4, 3, 4]),
                         index=np.arange(3), burn_in=burn_in)


def test_logged_traces_are_the_truncated_importance_weights_by_hand():
    agent = _constant_agent()
    agent.losses(_hand_batch())
    got = agent.last_traces
    assert set(got) == set(TRACE_FIELDS)
    # c_s = min(1, pi(a_s) / mu(a_s)), pi = (1/4, 3/4), for s = 1 ... n-1
    c_a = [0.25 / 0.5, 0.75 / np.float32(0.9), min(1.0, 0.25 / np.float32(0.2))]  # 0.5, 0.8333, 1
    c_b = [0.25 / np.float32(0.4), min(1.0, 0.75 / np.float32(0.6))]  # 0.625, 1
    c_c = [1.0, 1.0, 1.0]
    assert c_a[2] == 1.0 and c_b[1] == 1.0  # truncated at 1
    p_a, p_b = c_a[0] * c_a[1], c_b[0] * c_b[1]  # up to the last rewarded step, k = 2 in both
    assert got["sequences"] == 3 and got["rewarded"] == 2 and got["from_start"] == 1
    assert got["span_mean"] == 2 and got["from_start_span_mean"] == 2
    assert got["product_mean"] == pytest.approx((p_a + p_b) / 2, rel=1e-6)
    assert got["product_min"] == pytest.approx(0.5 * 0.75 / 0.9, rel=1e-6)
    assert got["from_start_product_mean"] == pytest.approx(0.625, rel=1e-6)
    assert got["c_mean"] == pytest.approx(np.mean(c_a + c_b + c_c), rel=1e-6)


def test_reward_trace_products_edge_cases():
    c = torch.tensor([[0.5, 0.2, 0.0], [0.5, 0.2, 0.0], [0.9, 0.9, 0.0]])
    r = torch.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    mask = torch.tensor([[1.0, 1, 1], [1, 1, 1], [1, 1, 0]])  # the third's reward lies in its padding
    p, k = reward_trace_products(c, r, mask)
    assert k.tolist() == [2, 0, -1]
    assert p[0].item() == pytest.approx(0.1) and p[1].item() == 1.0 and math.isnan(p[2].item())
    with pytest.raises(ValueError, match=r"\(B, L\)"):
        reward_trace_products(c[0], r[0], mask[0])


def test_the_loop_writes_one_row_per_gradient_step_and_resume_cuts_back(tmp_path):
    from pcnn_explore.run.trace_log import TRACE_COLUMNS, TRACES, read_traces
    from pcnn_explore.run import TrainConfig, train

    common = dict(env="DeepSea-4-v0", agent="reactor", learning_starts=20, train_every=2, tensorboard=False)
    full = TrainConfig.preset("smoke", steps=80, out_dir=str(tmp_path / "full"), **common)
    train(full, progress=False)
    t = read_traces(full.out_dir)
    header = (tmp_path / "full" / TRACES).read_text().splitlines()[0]
    assert header == ",".join(TRACE_COLUMNS)
    # a gradient step after every 2nd agent step beyond learning_starts: steps 22, 24, ..., 80
    assert t["step"].tolist() == list(range(22, 81, 2))
    assert (t["sequences"] == full.batch_size).all()
    assert ((t["c_mean"] > 0) & (t["c_mean"] <= 1)).all()
    won = t["rewarded"] > 0
    assert ((t["from_start"] <= t["rewarded"]) & (t["rewarded"] <= t["sequences"])).all()
    assert np.isnan(t["product_mean"][~won]).all() and ((t["product_min"][won] > 0) & (t["product_mean"][won] <= 1)).all()
    # a run stopped at step 40 and resumed to 80 writes the same rows as the run without a stop
    part = TrainConfig.preset("smoke", steps=40, out_dir=str(tmp_path / "part"), checkpoint_every=40, **common)
    train(part, progress=False)
    with open(tmp_path / "part" / TRACES, "a") as f:  # a row the checkpoint does not cover is dropped on resume
        f.write("44" + ",1" * (len(TRACE_COLUMNS) - 1) + "\n")
    from dataclasses import replace

    train(replace(part, steps=80), resume=True, progress=False)
    assert (tmp_path / "part" / TRACES).read_text() == (tmp_path / "full" / TRACES).read_text()


def test_trimmed_window_gives_the_losses_and_gradients_of_the_full_one(monkeypatch):
    import pcnn_explore.agents.reactor as reactor_module
    from pcnn_explore.agents.sequence_replay import SequenceReplay, trim_window

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    replay = SequenceReplay(1, 400, (1, 6, 6))
    for e in range(30):  # DeepSea-6-like episodes: 6 steps, one row per step
        for t in range(6):
            o, o2 = np.zeros((1, 6, 6), np.uint8), np.zeros((1, 6, 6), np.uint8)
            o[0, t, rng.integers(6)], o2[0, min(t + 1, 5), rng.integers(6)] = 1, 1
            replay.add(0, o, int(rng.integers(2)), float(rng.uniform(0.2, 1)), float(t == 5 and e % 3 == 0),
                       t == 5, o2, t == 5)
    batch = replay.sample(16, rng)
    cut = trim_window(batch)
    assert cut.obs.shape[1] < batch.obs.shape[1] and cut.action.shape[1] == int(batch.length.max()) <= 6

    def losses_and_grads(trim):
        monkeypatch.setattr(reactor_module, "trim_window", trim)
        agent = ReactorAgent((1, 6, 6), 2, network="mlp")
        agent.net.load_state_dict(reference.state_dict())
        agent.target.load_state_dict(reference.state_dict())
        critic, policy, q_ret = agent.losses(batch)
        (critic + policy).backward()
        return critic, policy, q_ret, [p.grad.clone() for p in agent.net.parameters()], agent.last_traces

    reference = ReactorAgent((1, 6, 6), 2, network="mlp").net
    full = losses_and_grads(lambda b: b)
    trimmed = losses_and_grads(trim_window)
    mask = torch.from_numpy(batch.mask) > 0
    for a, b in zip(full[:2], trimmed[:2]):
        assert a.item() == pytest.approx(b.item(), rel=1e-5)
    torch.testing.assert_close(full[2][mask], trimmed[2][mask], rtol=1e-5, atol=1e-6)
    assert (trimmed[2][:, int(batch.length.max()):] == 0).all()  # past the longest sequence
    for a, b in zip(full[3], trimmed[3]):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
    assert full[4].keys() == trimmed[4].keys()
    for k in full[4]:
        assert full[4][k] == pytest.approx(trimmed[4][k], rel=1e-5, nan_ok=True), k
