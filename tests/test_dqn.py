"""DQN maths: discounted returns, the mixed Monte Carlo target, and the learning step's target."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pcnn_explore.agents.dqn import DQNAgent, discounted_returns, mixed_mc_target
from pcnn_explore.agents.replay import Batch

torch.set_num_threads(1)


def test_discounted_returns_hand_computed():
    # gamma 0.5: G2 = 2, G1 = 0 + 0.5 * 2 = 1, G0 = 1 + 0.5 * 1 = 1.5
    np.testing.assert_array_equal(discounted_returns([1.0, 0.0, 2.0], 0.5), [1.5, 1.0, 2.0])
    # gamma 0.9, rewards [0, 0, 1]: [0.81, 0.9, 1]
    np.testing.assert_allclose(discounted_returns([0, 0, 1], 0.9), [0.81, 0.9, 1.0], rtol=0, atol=1e-15)
    # gamma 0: returns are the rewards; gamma 1: suffix sums
    np.testing.assert_array_equal(discounted_returns([3, -1, 2], 0.0), [3, -1, 2])
    np.testing.assert_array_equal(discounted_returns([3, -1, 2], 1.0), [4, 1, 2])
    out = discounted_returns([], 0.99)
    assert out.shape == (0,) and out.dtype == np.float64


def test_discounted_returns_rejects_bad_input():
    with pytest.raises(ValueError, match="gamma"):
        discounted_returns([1.0], 1.5)
    with pytest.raises(ValueError, match="1-D"):
        discounted_returns([[1.0, 2.0]], 0.9)


def test_mixed_mc_target_hand_computed():
    # (1 - 0.1) * (1 + 0.99 * 1 * 2) + 0.1 * 5 = 0.9 * 2.98 + 0.5 = 3.182
    assert mixed_mc_target(1.0, 2.0, 0.0, 5.0, 0.99, 0.1) == pytest.approx(3.182, abs=1e-12)
    # done: no bootstrap: 0.9 * 1 + 0.1 * 5 = 1.4
    assert mixed_mc_target(1.0, 2.0, 1.0, 5.0, 0.99, 0.1) == pytest.approx(1.4, abs=1e-12)
    # beta 0 is the Q-learning target, beta 1 the Monte Carlo return
    assert mixed_mc_target(0.5, 4.0, 0.0, 9.0, 0.5, 0.0) == pytest.approx(2.5, abs=1e-12)
    assert mixed_mc_target(0.5, 4.0, 0.0, 9.0, 0.5, 1.0) == pytest.approx(9.0, abs=1e-12)


def test_mixed_mc_target_elementwise_numpy_and_torch():
    r = np.array([0.0, 1.0, -1.0])
    q = np.array([1.0, 2.0, 3.0])
    d = np.array([0.0, 1.0, 0.0])
    mc = np.array([0.5, 1.0, 0.0])
    expected = np.array([0.75 * (0 + 0.5 * 1) + 0.25 * 0.5, 0.75 * 1 + 0.25 * 1, 0.75 * (-1 + 0.5 * 3) + 0])
    np.testing.assert_allclose(mixed_mc_target(r, q, d, mc, 0.5, 0.25), expected, rtol=0, atol=1e-15)
    t = mixed_mc_target(*(torch.tensor(a) for a in (r, q, d, mc)), 0.5, 0.25)
    np.testing.assert_allclose(t.numpy(), expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("bad", [-0.1, 1.1])
def test_mixed_mc_target_rejects_bad_beta_and_gamma(bad):
    with pytest.raises(ValueError, match="beta"):
        mixed_mc_target(1.0, 1.0, 0.0, 1.0, 0.9, bad)
    with pytest.raises(ValueError, match="gamma"):
        mixed_mc_target(1.0, 1.0, 0.0, 1.0, bad, 0.1)


def _agent_with_known_q(double_q: bool, beta: float) -> DQNAgent:
    """Online Q = 0 everywhere except final bias [0, 0.5, 0]; target Q = [1, 2, 3] for every state."""
    agent = DQNAgent((3, 8, 8), 3, network="small", hidden=4, gamma=0.5, mmc_beta=beta, double_q=double_q,
                     optimizer="adam", lr=1e-3)
    with torch.no_grad():
        for net in (agent.q, agent.target):
            for p in net.parameters():
                p.zero_()
        agent.q.head[-1].bias.copy_(torch.tensor([0.0, 0.5, 0.0]))
        agent.target.head[-1].bias.copy_(torch.tensor([1.0, 2.0, 3.0]))
    return agent


def _batch(action, reward, done, mc):
    n = len(action)
    obs = np.zeros((n, 3, 8, 8), np.uint8)
    return Batch(obs, np.asarray(action, np.int64), np.asarray(reward, np.float32), obs.copy(),
                 np.asarray(done, np.float32), np.asarray(mc, np.float32), np.arange(n))


def _huber(x):
    x = np.abs(x)
    return np.where(x < 1, 0.5 * x**2, x - 0.5).mean()


@pytest.mark.parametrize("double_q, next_q", [(False, 3.0), (True, 2.0)])
def test_learn_uses_the_mixed_target(double_q, next_q):
    # regular: max_a' Q_target = 3; double: a' = argmax Q_online = 1 -> Q_target(., 1) = 2
    agent = _agent_with_known_q(double_q, beta=0.2)
    b = _batch(action=[0, 1], reward=[1.0, 0.0], done=[0.0, 1.0], mc=[2.0, 4.0])
    q_sa = np.array([0.0, 0.5])
    y = 0.8 * (np.array([1.0, 0.0]) + 0.5 * np.array([1.0, 0.0]) * next_q) + 0.2 * np.array([2.0, 4.0])
    loss = float(agent.learn(b))
    assert loss == pytest.approx(_huber(q_sa - y), abs=1e-6)


def test_learn_moves_q_towards_target_and_sync_copies():
    agent = _agent_with_known_q(False, beta=0.0)
    b = _batch(action=[2] * 4, reward=[1.0] * 4, done=[1.0] * 4, mc=[0.0] * 4)
    first = float(agent.learn(b))
    for _ in range(50):
        last = float(agent.learn(b))
    assert last < first
    agent.sync_target()
    for p, t in zip(agent.q.parameters(), agent.target.parameters()):
        assert torch.equal(p, t)


def test_optimizers_and_bad_settings():
    from pcnn_explore.agents.rmsprop import DQN3RMSprop

    a = DQNAgent((4, 84, 84), 6, optimizer="rmsprop")  # the paper's reading, DQN 3.0's update
    assert isinstance(a.optimizer, DQN3RMSprop) and a.rmsprop == "dqn3"
    g = a.optimizer.param_groups[0]
    assert (g["lr"], g["alpha"], g["eps"], g["centered"], g["momentum"]) == (2.5e-4, 0.95, 0.01, True, 0)
    opt = DQNAgent((4, 84, 84), 6, optimizer="rmsprop", rmsprop="torch").optimizer  # the torch reading
    assert isinstance(opt, torch.optim.RMSprop)
    g = opt.param_groups[0]
    assert (g["lr"], g["alpha"], g["eps"], g["centered"], g["momentum"]) == (2.5e-4, 0.95, 0.01, True, 0)
    with pytest.raises(ValueError, match="rmsprop must be one of"):
        DQNAgent((3, 8, 8), 3, optimizer="rmsprop", rmsprop="tf1")
    assert type(a.q).__name__ == "NatureCNN"
    assert a.q(torch.zeros(2, 4, 84, 84, dtype=torch.uint8)).shape == (2, 6)
    with pytest.raises(ValueError, match="optimizer"):
        DQNAgent((3, 8, 8), 3, optimizer="sgd")
    with pytest.raises(ValueError, match="mmc_beta"):
        DQNAgent((3, 8, 8), 3, mmc_beta=2.0)


def test_act_is_epsilon_greedy():
    agent = _agent_with_known_q(False, 0.0)
    obs = np.zeros((3, 8, 8), np.uint8)
    rng = np.random.default_rng(0)
    assert all(agent.act(obs, 0.0, rng) == 1 for _ in range(10))  # greedy: bias 0.5 on action 1
    actions = [agent.act(obs, 1.0, rng) for _ in range(300)]
    assert set(actions) == {0, 1, 2}


def _filled_replays(n_steps: int = 120):
    """The same transitions in a host replay and in a device-resident one (device "cpu")."""
    from pcnn_explore.agents.replay import ReplayBuffer

    rng = np.random.default_rng(0)
    host = ReplayBuffer(64, (4, 8, 8), stack=4, gamma=0.9)
    dev = ReplayBuffer(64, (4, 8, 8), stack=4, gamma=0.9, device="cpu")
    stack = [rng.integers(0, 256, (1, 8, 8), dtype=np.uint8)] * 4
    for t in range(n_steps):
        nxt = stack[1:] + [rng.integers(0, 256, (1, 8, 8), dtype=np.uint8)]
        args = (np.concatenate(stack), int(rng.integers(3)), float(rng.normal()), t % 11 == 10,
                np.concatenate(nxt), t % 11 == 10)
        host.add(*args)
        dev.add(*args)
        stack = nxt
    return host, dev


@pytest.mark.parametrize("optimizer, rmsprop", [("rmsprop", "dqn3"), ("rmsprop", "torch"), ("adam", "dqn3")])
def test_learn_from_a_device_resident_replay_equals_learn_from_host_batches(optimizer, rmsprop):
    host, dev = _filled_replays()
    agents = []
    for _ in range(2):
        torch.manual_seed(3)
        agents.append(DQNAgent((4, 8, 8), 3, network="small", hidden=16, gamma=0.9, mmc_beta=0.1,
                               optimizer=optimizer, lr=1e-3, rmsprop=rmsprop))
    for step in range(6):
        a = agents[0].learn(host.sample(8, np.random.default_rng(step)))
        b = agents[1].learn(dev.sample(8, np.random.default_rng(step)))
        assert a.shape == () and torch.equal(a, b)
        if step == 3:
            for agent in agents:
                agent.sync_target()
    for p, q in zip(agents[0].q.parameters(), agents[1].q.parameters()):
        assert torch.equal(p, q)


def test_cuda_graph_is_off_on_the_cpu_and_state_loading_drops_a_graph():
    agent = DQNAgent((3, 8, 8), 3, network="small", hidden=4)
    assert agent.cuda_graph is False
    with pytest.raises(ValueError, match="CUDA"):
        DQNAgent((3, 8, 8), 3, network="small", hidden=4, cuda_graph=True)
    agent._graph = object()  # stands for a captured step: its optimiser state is replaced on loading
    agent.load_state_dict(agent.state_dict())
    assert agent._graph is None


def test_sync_target_copies_in_place():
    agent = _agent_with_known_q(False, beta=0.0)
    pointers = [t.data_ptr() for t in agent.target.parameters()]
    agent.learn(_batch(action=[2] * 4, reward=[1.0] * 4, done=[1.0] * 4, mc=[0.0] * 4))
    agent.sync_target()
    assert pointers == [t.data_ptr() for t in agent.target.parameters()]
    for p, t in zip(agent.q.parameters(), agent.target.parameters()):
        assert torch.equal(p, t)


@pytest.mark.parametrize("rmsprop", ["dqn3", "torch"])
def test_loading_a_state_keeps_the_agents_own_optimiser_settings(rmsprop):
    # e.g. a state saved by a CUDA agent whose optimiser was not capturable, resumed into a graphed one
    a = DQNAgent((3, 8, 8), 3, network="small", hidden=4, optimizer="rmsprop", rmsprop=rmsprop)
    a.learn(_batch(action=[0, 1], reward=[1.0, 0.0], done=[0.0, 1.0], mc=[0.0, 0.0]))
    state = a.state_dict()
    state["optimizer"]["param_groups"][0].update(foreach=False, capturable=True)
    b = DQNAgent((3, 8, 8), 3, network="small", hidden=4, optimizer="rmsprop", rmsprop=rmsprop)
    b.load_state_dict(state)
    g = b.optimizer.param_groups[0]
    assert (g["foreach"], g["capturable"]) == (True, False)
    b.learn(_batch(action=[0, 1], reward=[1.0, 0.0], done=[0.0, 1.0], mc=[0.0, 0.0]))


def test_mlp_network_hand_computed_and_chosen_by_auto_for_deep_sea_only():
    from pcnn_explore.agents.networks import MLP, SmallCNN, make_q_network
    from pcnn_explore.envs import auto_network

    net = make_q_network((1, 20, 20), 2, "mlp")
    assert isinstance(net, MLP)  # two dense layers of 50 (bsuite's DQN), then the action values
    assert sum(p.numel() for p in net.parameters()) == (400 * 50 + 50) + (50 * 50 + 50) + (50 * 2 + 2)
    # hand-computed: one-hot input, weights set by hand
    tiny = make_q_network((1, 1, 2), 2, "mlp", hidden=2)
    with torch.no_grad():
        tiny.features[1].weight.copy_(torch.tensor([[1.0, 0.0], [0.0, -1.0]]))
        tiny.features[1].bias.copy_(torch.tensor([0.5, 0.0]))
        tiny.head[0].weight.copy_(torch.tensor([[2.0, 0.0], [1.0, 1.0]]))
        tiny.head[0].bias.copy_(torch.tensor([0.0, -2.0]))
        tiny.head[2].weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
        tiny.head[2].bias.copy_(torch.tensor([0.0, 3.0]))
    obs = torch.tensor([[[[255, 0]]], [[[0, 255]]]], dtype=torch.uint8)
    # x = (1, 0): h1 = relu(1.5, 0) = (1.5, 0); h2 = relu(3, -0.5) = (3, 0); q = (3, 3)
    # x = (0, 1): h1 = relu(0.5, -1) = (0.5, 0); h2 = relu(1, -1.5) = (1, 0); q = (1, 3)
    torch.testing.assert_close(tiny(obs), torch.tensor([[3.0, 3.0], [1.0, 3.0]]))
    assert auto_network("DeepSea-20-v0", "auto") == "mlp"
    assert auto_network("DeepSea-20-v0", "small") == "small"
    assert auto_network("MiniGrid-Empty-5x5-v0", "auto") == "auto"
    assert isinstance(make_q_network((3, 20, 20), 3, auto_network("MiniGrid-Empty-5x5-v0", "auto")), SmallCNN)
    with pytest.raises(ValueError, match="'auto', 'nature', 'small' or 'mlp'"):
        make_q_network((1, 4, 4), 2, "dense")


@pytest.mark.cpu_kernels
def test_mlp_acts_in_numpy_with_the_q_values_of_its_forward_and_sees_every_update():
    """On a CPU an MLP agent acts through numpy views of its weights: the hand-computed net's values,
    torch's Q-values to float32 rounding on random nets, the same greedy actions, and the views
    follow optimiser steps, load_state_dict and a move to new memory."""
    import copy

    from pcnn_explore.agents.dqn import DQNAgent
    from pcnn_explore.agents.networks import make_q_network
    from pcnn_explore.agents.replay import Batch

    tiny = make_q_network((1, 1, 2), 2, "mlp", hidden=2)
    with torch.no_grad():  # the hand-computed net above: q = (3, 3) and (1, 3)
        for p, v in zip(tiny.parameters(), ([[1.0, 0.0], [0.0, -1.0]], [0.5, 0.0], [[2.0, 0.0], [1.0, 1.0]],
                                             [0.0, -2.0], [[1.0, 0.0], [0.0, 1.0]], [0.0, 3.0])):
            p.copy_(torch.tensor(v))
    obs = np.array([[[[255, 0]]], [[[0, 255]]]], dtype=np.uint8)
    np.testing.assert_array_equal(tiny.q_values_numpy(obs), [[3.0, 3.0], [1.0, 3.0]])

    torch.manual_seed(0)
    agent = DQNAgent((1, 6, 6), 3, network="mlp", hidden=16, lr=1e-2)
    assert agent._numpy_act
    grid = np.zeros((36, 1, 6, 6), np.uint8)
    grid.reshape(36, 36)[np.arange(36), np.arange(36)] = 255  # every one-hot cell
    noise = np.random.default_rng(0).integers(0, 256, (20, 1, 6, 6), dtype=np.uint8)

    def check():
        for x in (grid, noise):
            with torch.no_grad():
                want = agent.q(torch.from_numpy(x)).numpy()
            got = agent.q.q_values_numpy(x)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
            top2 = np.sort(want, axis=1)[:, -2:]
            clear = top2[:, 1] - top2[:, 0] > 1e-4  # no near-ties: the greedy actions must agree
            actions = np.array(agent.greedy_actions(list(x)))
            np.testing.assert_array_equal(actions[clear], want.argmax(axis=1)[clear])
            assert [agent.greedy_action(o) for o in x[:5]] == list(actions[:5])
        return agent.q.q_values_numpy(grid).copy()

    first = check()
    saved = copy.deepcopy(agent.state_dict())
    batch = Batch(grid[:8], np.arange(8) % 3, np.ones(8, np.float32), grid[1:9], np.zeros(8, np.float32),
                  np.zeros(8, np.float32), np.arange(8))
    for _ in range(3):
        agent.learn(batch)  # in-place optimiser steps
    assert not np.allclose(check(), first)
    agent.load_state_dict(saved)  # in-place copies
    np.testing.assert_array_equal(check(), first)
    agent.q.double().float()  # new parameter memory
    np.testing.assert_array_equal(check(), first)


def test_cpu_adam_is_torch_fused_adam_bit_for_bit_and_shares_its_state_layout():
    """DQN's CPU Adam (no torch.optim) gives the weights of torch.optim.Adam(fused=True) exactly, and
    a state saved by either resumes in the other with the same next steps."""
    import copy

    from pcnn_explore.agents.adam import FusedAdam
    from pcnn_explore.agents.networks import make_q_network

    torch.manual_seed(0)
    ours, theirs = make_q_network((3, 8, 8), 3, "mlp", 16), make_q_network((3, 8, 8), 3, "mlp", 16)
    theirs.load_state_dict(ours.state_dict())
    a = FusedAdam(ours.parameters(), lr=1e-3, eps=1.5e-4)
    b = torch.optim.Adam(theirs.parameters(), lr=1e-3, eps=1.5e-4, fused=True)
    grads = [[torch.randn_like(p) for p in ours.parameters()] for _ in range(40)]

    def steps(net, opt, gs):
        for g in gs:
            for p, gp in zip(net.parameters(), g):
                p.grad = gp.clone()
            opt.step()

    steps(ours, a, grads[:20])
    steps(theirs, b, grads[:20])
    for p, q in zip(ours.parameters(), theirs.parameters()):
        assert torch.equal(p, q)
    sa, sb = a.state_dict(), b.state_dict()
    assert sa["param_groups"] == sb["param_groups"]
    assert sa["state"].keys() == sb["state"].keys()
    for i in sa["state"]:
        for k in ("step", "exp_avg", "exp_avg_sq"):
            assert torch.equal(sa["state"][i][k], sb["state"][i][k])
    # crossed resume: torch's state into ours, ours into torch's
    ours2, theirs2 = make_q_network((3, 8, 8), 3, "mlp", 16), make_q_network((3, 8, 8), 3, "mlp", 16)
    ours2.load_state_dict(theirs.state_dict())
    theirs2.load_state_dict(ours.state_dict())
    a2, b2 = FusedAdam(ours2.parameters(), lr=5.0), torch.optim.Adam(theirs2.parameters(), lr=1e-3, fused=True)
    a2.load_state_dict(copy.deepcopy(b.state_dict()))  # as from a file (state dicts share the live tensors)
    b2.load_state_dict(copy.deepcopy(a.state_dict()))
    assert a2.param_groups[0]["lr"] == 1e-3
    steps(ours2, a2, grads[20:])
    steps(theirs2, b2, grads[20:])
    steps(ours, a, grads[20:])
    for p, q, r in zip(ours.parameters(), ours2.parameters(), theirs2.parameters()):
        assert torch.equal(p, q) and torch.equal(p, r)
    with pytest.raises(ValueError, match="parameter tensors"):
        FusedAdam(make_q_network((3, 8, 8), 3, "small", 4).parameters(), lr=1e-3).load_state_dict(a.state_dict())


def test_a_cpu_dqn_agent_learns_without_importing_torch_dynamo():
    """torch.optim imports torch._dynamo when an optimiser is built (seconds of start-up)."""
    import subprocess
    import sys

    code = ("import sys, numpy as np\n"
            "from pcnn_explore.agents.dqn import DQNAgent\n"
            "from pcnn_explore.agents.replay import Batch\n"
            "a = DQNAgent((1, 4, 4), 2, network='mlp', hidden=8, optimizer='adam')\n"
            "z = np.zeros((2, 1, 4, 4), np.uint8)\n"
            "a.learn(Batch(z, np.zeros(2, np.int64), np.ones(2, np.float32), z, np.zeros(2, np.float32), "
            "np.zeros(2, np.float32), np.zeros(2, np.int64)))\n"
            "a.load_state_dict(a.state_dict())\n"
            "print('torch._dynamo' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
