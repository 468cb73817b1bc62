"""The MLP's learn step in numpy is torch's autograd step to float32 rounding.

Over many random networks and batches (one-hot DeepSea grids, dense random frames, several sizes,
Q-learning, MMC and double Q-learning targets, errors in both parts of the Huber loss): the same loss,
gradients, Adam state and weights after a step, and after hundreds of steps the same greedy action in
every cell of the grid. A checkpoint written by either path loads into the other; subnormal moments
are flushed; the step refuses the networks and optimisers it is not written for, and ``learn_step``
resolves to it only where it applies.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pcnn_explore.agents.dqn import DQNAgent
from pcnn_explore.agents.mlp_step import NumpyMLPStep, _adam, first_layer
from pcnn_explore.agents.replay import Batch
from pcnn_explore.checks import SettingError
from pcnn_explore.run import TrainConfig

torch.set_num_threads(1)
#: float32 tolerances: one step's values are sums of a few hundred float32 terms taken in another order
RTOL, ATOL = 1e-5, 1e-6


def grid_batch(rng, n: int, size: int, n_actions: int = 2, dense: bool = False, reward_scale: float = 1.0) -> Batch:
    """A replay batch of (n, 1, size, size) frames: one-hot grids (DeepSea's) or dense random bytes."""
    def frames():
        if dense:
            return rng.integers(0, 256, size=(n, 1, size, size), dtype=np.uint8)
        f = np.zeros((n, 1, size, size), np.uint8)
        f[np.arange(n), 0, rng.integers(size, size=n), rng.integers(size, size=n)] = 255
        return f

    return Batch(obs=frames(), action=rng.integers(n_actions, size=n).astype(np.int64),
                 reward=(reward_scale * rng.normal(size=n)).astype(np.float32), next_obs=frames(),
                 done=(rng.random(n) < 0.2).astype(np.float32),
                 mc_return=(reward_scale * rng.normal(size=n)).astype(np.float32), index=np.arange(n))


def twin_agents(seed: int, size: int, n_actions: int = 2, hidden: int = 50, **kw) -> tuple[DQNAgent, DQNAgent]:
    """Two agents with the same initial weights: torch's learn step and the numpy one."""
    agents = []
    for learn_step in ("torch", "numpy"):
        torch.manual_seed(seed)
        agents.append(DQNAgent((1, size, size), n_actions, network="mlp", hidden=hidden, optimizer="adam", lr=1e-3,
                               learn_step=learn_step, **kw))
    for p in agents[0].target.parameters():  # a target network unlike the online one
        p.data.normal_(0, 0.3, generator=torch.Generator().manual_seed(seed + 1000))
    agents[1].target.load_state_dict(agents[0].target.state_dict())
    return agents[0], agents[1]


def close(a, b, what: str, rtol: float = RTOL, atol: float = ATOL) -> None:
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol, atol=atol,
                               err_msg=what)


CASES = [  # (size, n_actions, hidden, dense, target settings, reward scale)
    (5, 2, 50, False, {}, 1.0),
    (10, 2, 50, False, {"mmc_beta": 0.1}, 1.0),
    (20, 2, 50, False, {"mmc_beta": 0.5, "gamma": 0.9}, 5.0),  # most errors in Huber's linear part
    (20, 3, 64, False, {"double_q": True, "mmc_beta": 0.1}, 1.0),
    (8, 4, 32, True, {"mmc_beta": 0.1}, 1.0),  # dense frames: every input nonzero
    (8, 2, 50, True, {"double_q": True}, 3.0),
]


@pytest.mark.parametrize("case", CASES, ids=[f"N{c[0]}-A{c[1]}-H{c[2]}{'-dense' if c[3] else ''}" for c in CASES])
def test_one_step_gives_torchs_loss_gradients_adam_state_and_weights(case):
    size, n_actions, hidden, dense, settings, scale = case
    rng = np.random.default_rng(size * 100 + n_actions)
    for seed in range(8):  # random networks, each on a fresh batch
        ref, fast = twin_agents(seed, size, n_actions, hidden, **settings)
        for _ in range(seed % 3):  # some nets with Adam state already built
            batch = grid_batch(rng, 32, size, n_actions, dense, scale)
            ref.learn(batch), fast.learn(batch)
        batch = grid_batch(rng, 32, size, n_actions, dense, scale)
        loss, grads = fast._numpy_step.gradients(batch)
        grads = [g.copy() for g in grads]
        want_loss = ref._loss(*(torch.from_numpy(np.asarray(x)) for x in (
            batch.obs, batch.next_obs, batch.action, batch.reward, batch.done, batch.mc_return)))
        for p in ref.q.parameters():
            p.grad = None
        want_loss.backward()
        close(loss, float(want_loss.detach()), "loss")
        for k, (g, p) in enumerate(zip(grads, ref.q.parameters())):
            close(g, p.grad.numpy(), f"gradient of parameter {k}", atol=1e-7)
        ref._step(ref.optimizer)
        fast._numpy_step(batch)
        for k, (p, q) in enumerate(zip(ref.q.parameters(), fast.q.parameters())):
            close(q.detach().numpy(), p.detach().numpy(), f"weights {k} after the step")
            s, t = ref.optimizer.state[p], fast.optimizer.state[q]
            assert float(s["step"]) == float(t["step"]) == 1 + seed % 3
            close(t["exp_avg"].numpy(), s["exp_avg"].numpy(), f"Adam's first moment of {k}", atol=1e-9)
            close(t["exp_avg_sq"].numpy(), s["exp_avg_sq"].numpy(), f"Adam's second moment of {k}", atol=1e-12)


def test_hundreds_of_steps_stay_together_and_act_alike_in_every_cell():
    size = 12
    rng = np.random.default_rng(7)
    cells = np.zeros((size * size, 1, size, size), np.uint8)
    cells[np.arange(size * size), 0, np.arange(size * size) // size, np.arange(size * size) % size] = 255
    for seed in range(4):
        ref, fast = twin_agents(seed, size, mmc_beta=0.1)
        for k in range(400):
            batch = grid_batch(rng, 32, size)
            close(fast.learn(batch), float(ref.learn(batch)), f"loss of step {k}", rtol=1e-4, atol=1e-5)
            if k % 50 == 49:
                ref.sync_target(), fast.sync_target()
        for p, q in zip(ref.q.parameters(), fast.q.parameters()):
            close(q.detach().numpy(), p.detach().numpy(), "weights after 400 steps", rtol=1e-4, atol=1e-5)
        with torch.no_grad():
            q_ref = ref.q(torch.from_numpy(cells)).numpy()
        clear = np.abs(q_ref[:, 0] - q_ref[:, 1]) > 1e-4  # cells whose greedy action float32 rounding cannot flip
        assert clear.mean() > 0.9
        acts = np.array(fast.greedy_actions(list(cells)))
        np.testing.assert_array_equal(acts[clear], q_ref.argmax(axis=1)[clear])
        np.testing.assert_array_equal(acts[clear], np.array(ref.greedy_actions(list(cells)))[clear])


def test_a_checkpoint_of_either_step_continues_in_the_other():
    rng = np.random.default_rng(3)
    ref, fast = twin_agents(0, 6)
    for _ in range(20):
        batch = grid_batch(rng, 16, 6)
        ref.learn(batch), fast.learn(batch)
    # numpy -> torch and torch -> numpy: both continue from the other's state as they would from their own
    for source, target_kind in ((fast, "torch"), (ref, "numpy")):
        torch.manual_seed(99)
        other = DQNAgent((1, 6, 6), 2, network="mlp", optimizer="adam", lr=1e-3, learn_step=target_kind)
        other.load_state_dict(source.state_dict())
        batch = grid_batch(rng, 16, 6)
        copy = DQNAgent((1, 6, 6), 2, network="mlp", optimizer="adam", lr=1e-3, learn_step=source.learn_step)
        copy.load_state_dict(source.state_dict())
        copy.learn(batch), other.learn(batch)
        for p, q in zip(copy.q.parameters(), other.q.parameters()):
            close(q.detach().numpy(), p.detach().numpy(), f"{source.learn_step} -> {target_kind}")
        for p, q in zip(copy.q.parameters(), other.q.parameters()):
            assert float(other.optimizer.state[q]["step"]) == float(copy.optimizer.state[p]["step"]) == 21
    # the numpy step writes into the optimiser state a checkpoint saves, not into a copy of it
    saved = fast.state_dict()["optimizer"]
    before = saved["state"][0]["exp_avg"].clone()
    fast.learn(grid_batch(rng, 16, 6))
    assert not torch.equal(fast.state_dict()["optimizer"]["state"][0]["exp_avg"], before)
    assert float(fast.state_dict()["optimizer"]["state"][0]["step"]) == 21


def test_first_layer_over_nonzero_inputs_is_the_dense_product():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(7, 30)).astype(np.float32)
    b = rng.normal(size=7).astype(np.float32)
    obs = np.zeros((5, 30), np.uint8)
    obs[0, 3] = 255
    obs[1, [0, 29]] = [17, 255]
    obs[2] = rng.integers(0, 256, size=30)
    obs[4, 29] = 1  # row 3: all zero, so the bias alone
    out = np.empty((5, 7), np.float32)
    first_layer(obs, w, b, out)
    dense = (obs.astype(np.float32) / np.float32(255.0)) @ w.T + b
    np.testing.assert_allclose(out, dense, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(out[0], w[:, 3] + b)  # one-hot: exactly a column of W plus b
    np.testing.assert_array_equal(out[3], b)


def test_adam_flushes_subnormal_moments_and_otherwise_follows_torchs_rule():
    f = np.float32
    p = np.array([1.0, 1.0, 1.0], np.float32)
    g = np.array([0.0, 0.5, -2.0], np.float32)
    m = np.array([1e-38, 0.1, 0.0], np.float32)  # 0.9 * 1e-38 is subnormal in float32
    v = np.array([1e-38, 0.01, 0.0], np.float32)
    t = 3
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1.5e-4
    _adam(p, g, m, v, (f(b1), f(1 - b1)), (f(b2), f(1 - b2)), f(lr / (1 - b1 ** t)), f(np.sqrt(1 - b2 ** t)), f(eps))
    assert m[0] == 0.0 and v[0] == 0.0 and p[0] == 1.0  # flushed: no step from a moment of 1e-38
    for i, (m0, v0) in enumerate(((0.1, 0.01), (0.0, 0.0))[:2], start=1):
        gi = float(g[i])
        m1, v1 = m0 + (1 - b1) * (gi - m0), b2 * v0 + (1 - b2) * gi * gi
        step = lr / (1 - b1 ** t) * m1 / (np.sqrt(v1) / np.sqrt(1 - b2 ** t) + eps)
        close(m[i], m1, "first moment"), close(v[i], v1, "second moment"), close(p[i], 1.0 - step, "weight")


@pytest.mark.parametrize("network, optimizer, why", [("small", "adam", "SmallCNN"), ("mlp", "rmsprop", "RMSprop")])
def test_the_numpy_step_refuses_what_it_is_not_written_for(network, optimizer, why):
    with pytest.raises(ValueError, match=rf"{why}.*learn_step='torch'"):
        DQNAgent((1, 8, 8), 2, network=network, optimizer=optimizer, learn_step="numpy")
    with pytest.raises(ValueError, match="learn_step must be one of"):
        DQNAgent((1, 8, 8), 2, network="mlp", learn_step="jax")


def test_learn_step_resolves_to_numpy_only_where_it_applies():
    assert TrainConfig.preset("study", env="DeepSea-20-v0", bonus="cts").learn_step == "numpy"
    assert TrainConfig.preset("study", env="MiniGrid-Empty-5x5-v0").learn_step == "torch"
    assert TrainConfig.preset("study", env="DeepSea-20-v0", agent="reactor").learn_step == "torch"
    assert TrainConfig.preset("study", env="DeepSea-20-v0", optimizer="rmsprop").learn_step == "torch"
    assert TrainConfig.preset("study", env="DeepSea-20-v0", learn_step="torch").learn_step == "torch"
    with pytest.raises(SettingError, match=r"learn_step.*optimizer.*rmsprop.*needs adam"):
        TrainConfig.preset("study", env="DeepSea-20-v0", optimizer="rmsprop", learn_step="numpy")
    with pytest.raises(SettingError, match=r"learn_step.*network.*auto.*needs mlp"):
        TrainConfig.preset("study", env="MiniGrid-Empty-5x5-v0", learn_step="numpy")


def test_the_numpy_step_needs_the_agents_own_memory():
    agent = DQNAgent((1, 5, 5), 2, network="mlp", optimizer="adam", learn_step="numpy")
    step = agent._numpy_step
    assert isinstance(step, NumpyMLPStep)
    w1 = step.online[0]
    assert np.shares_memory(w1, agent.q._dense[0].weight.detach().numpy())
    agent.load_state_dict(agent.state_dict())  # the optimiser's state tensors are new: the step is rebuilt
    assert agent._numpy_step is not step
    moment = agent.optimizer.state[agent.q._dense[0].weight]["exp_avg"]
    assert np.shares_memory(agent._numpy_step._flat[2][0], moment.numpy())
