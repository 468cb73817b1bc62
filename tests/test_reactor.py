"""Reactor agent: the beta-LOO gradient, Retrace wiring, acting from the rng, learning a chain, resume."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from pcnn_explore.agents.reactor import ReactorAgent, beta_loo_policy_loss
from pcnn_explore.agents.sequence_replay import SequenceBatch, SequenceReplay
from pcnn_explore.checkpoint import load, save_atomic

torch.set_num_threads(1)


def _grad(logits, q, ret, action, entropy_cost):
    x = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
    loss = beta_loo_policy_loss(x, torch.tensor(q, dtype=torch.float64), torch.tensor(ret, dtype=torch.float64),
                                torch.tensor(action), entropy_cost)
    loss.sum().backward()
    return x.grad.numpy()


def test_policy_gradient_hand_case():
    # pi = (1/2, 1/2), Q = (1, 3), a_hat = 0, R = 2; d pi_a / d l_j = pi_a (delta_aj - pi_j):
    # G_0 = (R - Q_0) pi_0 (1 - pi_0) + Q_0 pi_0 (1 - pi_0) - Q_1 pi_1 pi_0 = 0.25 + 0.25 - 0.75 = -0.25, G_1 = 0.25;
    # the entropy is maximal there (zero gradient). The loss's gradient is -G.
    np.testing.assert_allclose(_grad([0.0, 0.0], [1.0, 3.0], 2.0, 0, 0.5), [0.25, -0.25], rtol=0, atol=1e-15)


def test_policy_gradient_matches_the_beta_loo_formula():
    logits, q, ret, a, eta = np.array([0.3, -1.2, 0.7]), np.array([0.5, 2.0, -1.0]), 1.7, 2, 0.01
    pi = np.exp(logits) / np.exp(logits).sum()
    dpi = np.diag(pi) - np.outer(pi, pi)  # dpi[a, j] = d pi_a / d l_j
    g = (ret - q[a]) * dpi[a] + q @ dpi  # beta-LOO, beta = 1
    g_entropy = -pi * (np.log(pi) - pi @ np.log(pi))  # d H / d l_j
    np.testing.assert_allclose(_grad(logits, q, ret, a, eta), -(g + eta * g_entropy), rtol=1e-12, atol=1e-15)


def _constant_agent(gamma=0.5, num_envs=1) -> ReactorAgent:
    """All weights 0: pi = (1/4, 3/4) and Q = (1, 2) in every state, online and target."""
    agent = ReactorAgent((1, 1, 3), 2, num_envs=num_envs, network="small", hidden=4, lstm_size=4, gamma=gamma)
    with torch.no_grad():
        for net in (agent.net, agent.target):
            for p in net.parameters():
                p.zero_()
            net.policy.bias.copy_(torch.log(torch.tensor([0.25, 0.75])))
            net.q.bias.copy_(torch.tensor([1.0, 2.0]))
    return agent


def _batch(action, mu, reward, terminated, mask, burn_in=1):
    L = len(action)
    W = burn_in + L + 1
    first = np.zeros((1, W), np.float32)
    first[0, 0] = 1
    f32 = lambda x: np.asarray([x], np.float32)  # noqa: E731
    return SequenceBatch(obs=np.zeros((1, W, 1, 1, 3), np.uint8), first=first, action=np.asarray([action], np.int64),
                         mu=f32(mu), reward=f32(reward), terminated=f32(terminated), mask=f32(mask),
                         length=np.array([int(sum(mask))]), index=np.array([0]), burn_in=burn_in)


def test_retrace_targets_in_the_agent_hand_case():
    # V = 0.25 * 1 + 0.75 * 2 = 1.75; a_1 = 0: c_1 = min(1, 0.25 / 0.5) = 0.5, Q(x_1, a_1) = 1;
    # step 2 is padding, so c_2 = 0: Q^ret_1 = 0 + 0.5 * 1.75 = 0.875;
    # Q^ret_0 = 1 + 0.5 * (0.5 * (0.875 - 1) + 1.75) = 1.84375
    agent = _constant_agent()
    _, _, q_ret = agent.losses(_batch([1, 0, 0], [0.5, 0.5, 1.0], [1.0, 0.0, 0.0], [0, 0, 0], [1, 1, 0]))
    np.testing.assert_allclose(q_ret[0, :2].numpy(), [1.84375, 0.875], rtol=0, atol=1e-6)
    # terminal at step 1: Q^ret_1 = 0, Q^ret_0 = 1 + 0.5 * (0.5 * (0 - 1) + 1.75) = 1.625
    critic, _, q_ret = agent.losses(_batch([1, 0, 0], [0.5, 0.5, 1.0], [1.0, 0.0, 0.0], [0, 1, 0], [1, 1, 0]))
    np.testing.assert_allclose(q_ret[0, :2].numpy(), [1.625, 0.0], rtol=0, atol=1e-6)
    # critic: mean over the 2 stored steps of 1/2 (Q(x_t, a_t) - Q^ret_t)^2, Q(x_0, 1) = 2, Q(x_1, 0) = 1
    assert critic.item() == pytest.approx(0.5 * ((2 - 1.625) ** 2 + (1 - 0.0) ** 2) / 2, abs=1e-6)


def test_act_draws_from_the_policy_with_the_rng():
    agent = _constant_agent()
    u = np.random.default_rng(7).random(4)
    actions, mus = _constant_agent(num_envs=4).act_batch([np.zeros((1, 1, 3), np.uint8)] * 4,
                                                         np.random.default_rng(7))
    np.testing.assert_array_equal(actions, (u >= 0.25).astype(int))  # pi = (1/4, 3/4): inverse CDF
    np.testing.assert_allclose(mus, np.where(actions == 1, 0.75, 0.25), rtol=1e-6)
    rng = np.random.default_rng(7)
    assert [agent.act(np.zeros((1, 1, 3), np.uint8), rng)[0] for _ in range(4)] == list((u >= 0.25).astype(int))


def test_act_batch_is_deterministic_and_keeps_a_state_per_env():
    obs = [np.random.default_rng(i).integers(0, 255, (3, 7, 7), dtype=np.uint8) for i in range(3)]
    runs = []
    for _ in range(2):
        torch.manual_seed(0)
        agent = ReactorAgent((3, 7, 7), 4, num_envs=3, network="small", hidden=8, lstm_size=8)
        rng = np.random.default_rng(1)
        runs.append([agent.act_batch(obs, rng) for _ in range(5)])
        h = agent.h.clone()
        agent.reset_state(1)
        assert (agent.h[1] == 0).all() and (agent.h[[0, 2]] == h[[0, 2]]).all() and (h[1] != 0).any()
    for (a1, m1), (a2, m2) in zip(*runs):
        np.testing.assert_array_equal(a1, a2)
        np.testing.assert_array_equal(m1, m2)


class Chain:
    """5 states in a row; action 1 moves right, 0 left (clipped); reaching state 4 pays 1 and ends
    the episode (terminal); a time limit of 12 steps. Observation: one-hot row (1, 1, 5) uint8."""

    def reset(self):
        self.s, self.t = 0, 0
        return self.obs()

    def obs(self):
        o = np.zeros((1, 1, 5), np.uint8)
        o[0, 0, self.s] = 255
        return o

    def step(self, a):
        self.s, self.t = max(0, self.s + (1 if a == 1 else -1)), self.t + 1
        return self.obs(), float(self.s == 4), self.s == 4, self.t == 12


def _run(agent, replay, env, rng, steps, learn=True, obs=None, updates=None):
    """Act, store and, with ``learn``, take a gradient step per agent step once 32 transitions are
    stored (batch 8; target synced every 25 updates, counted in ``updates[0]``). Returns the episode
    lengths (99: cut by the time limit), the actions taken and the last observation."""
    obs = env.reset() if obs is None else obs
    updates = [0] if updates is None else updates
    lengths, actions = [], []
    for _ in range(steps):
        a, mu = agent.act(obs, rng)
        nxt, r, term, trunc = env.step(a)
        replay.add(0, obs, a, mu, r, term, nxt, term or trunc)
        obs = nxt
        actions.append(a)
        if term or trunc:
            lengths.append(env.t if term else 99)
            obs = env.reset()
            agent.reset_state(0)
        if learn and replay.shards[0].written > 32:
            agent.learn(replay.sample(8, rng))
            updates[0] += 1
            if updates[0] % 25 == 0:
                agent.sync_target()
    return lengths, actions, obs


def _chain_setup(seed=0):
    torch.manual_seed(seed)
    agent = ReactorAgent((1, 1, 5), 2, network="small", hidden=32, lstm_size=32, gamma=0.9, lr=3e-3)
    replay = SequenceReplay(1, 5000, (1, 1, 5), seq_len=6, burn_in=2)
    return agent, replay, Chain(), np.random.default_rng(seed)


def test_learns_the_chain():
    agent, replay, env, rng = _chain_setup()
    before, _, _ = _run(agent, replay, env, rng, 200, learn=False)
    _run(agent, replay, env, rng, 250)
    after, _, _ = _run(agent, replay, env, rng, 200, learn=False)
    assert np.mean([x == 99 for x in before]) > 0.2  # the untrained policy often fails within 12 steps
    assert np.mean(after) <= 4.5 and max(after) < 99  # trained: the goal in about 4 steps, every time


def test_resume_continues_bit_for_bit(tmp_path):
    agent, replay, env, rng = _chain_setup(seed=3)
    updates = [0]
    _, _, obs = _run(agent, replay, env, rng, 50, obs=None, updates=updates)
    save_atomic({"agent": agent.state_dict(), "replay": replay.state_dict(defer=True)}, tmp_path / "ck.pt")
    saved_rng, saved_env = copy.deepcopy(rng.bit_generator.state), (env.s, env.t)
    _, actions_a, _ = _run(agent, replay, env, rng, 30, obs=obs, updates=list(updates))

    agent_b, replay_b, env_b, rng_b = _chain_setup(seed=11)  # other weights, overwritten by the load
    state = load(tmp_path / "ck.pt")
    agent_b.load_state_dict(state["agent"])
    replay_b.load_state_dict(state["replay"])
    rng_b.bit_generator.state = saved_rng
    env_b.s, env_b.t = saved_env
    _, actions_b, _ = _run(agent_b, replay_b, env_b, rng_b, 30, obs=obs, updates=list(updates))
    assert actions_a == actions_b
    for (name, p), q in zip(agent.net.state_dict().items(), agent_b.net.state_dict().values()):
        assert torch.equal(p, q), name
    for p, q in zip(agent.target.state_dict().values(), agent_b.target.state_dict().values()):
        assert torch.equal(p, q)
    assert torch.equal(agent.h, agent_b.h) and torch.equal(agent.c, agent_b.c)


def test_atari_shaped_smoke():
    """(4, 84, 84) stacks: the Nature torso, a 4-frame sequence replay, two envs."""
    torch.manual_seed(0)
    agent = ReactorAgent((4, 84, 84), 3, num_envs=2, lstm_size=16)
    replay = SequenceReplay(2, 64, (4, 84, 84), stack=4, seq_len=3, burn_in=1)
    rng = np.random.default_rng(0)
    obs = [np.random.default_rng(i).integers(0, 255, (4, 84, 84), dtype=np.uint8) for i in range(2)]
    for t in range(6):
        actions, mus = agent.act_batch(obs, rng)
        nxt = [np.roll(o, 1, axis=0) for o in obs]
        for i in range(2):
            replay.add(i, obs[i], int(actions[i]), float(mus[i]), 1.0, t == 5, nxt[i], t == 5)
        obs = nxt
    batch = replay.sample(2, rng)
    assert batch.obs.shape == (2, 5, 4, 84, 84)
    assert np.isfinite(agent.learn(batch).item())
