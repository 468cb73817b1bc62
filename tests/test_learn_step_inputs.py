"""DQN's two learn steps (torch's autograd and the numpy one) refuse the same bad inputs with the same message.

A transition is checked where it is stored (the run's learner -> its replay shards -> ``ReplayBuffer.add``):
an action outside [0, n_actions) or not an integer, a reward that is not finite once rounded to float32
(the dtype it is stored in: 1e39 is not), an observation whose values are not uint8 pixels (a float or
wider integer frame is taken only where every value is a whole number in [0, 255], and then stored
exactly). A batch given to ``learn`` directly is checked at the entry of either step, with the same
words: its layout against the network (B observations of the shape it was built for, one action,
reward, done and mc_return per observation, numpy arrays), its values, and ``done`` exactly 0 or 1.
Before, the numpy step read and wrote out of bounds for an action out of range (loss ~1e26), for one
action given for four observations (the process died: exit 139, or numba's "out of memory") and for
(4, 1, 40, 40) frames given to a 25-input network (loss 1.8e36); it learned finite weights from a NaN
reward where torch's became NaN, cast float frames to uint8 (0.5 -> 0, 300 -> 44), and neither step
looked at ``done`` (NaN or 2.0 made the loss NaN or a wrong target). The numpy step's cases that read
out of bounds run in a subprocess, so that a crash of the old code is a failing test.

``learn_step`` auto picks the numpy step only where numba and scipy are installed; where not, it says so
in one line and the run uses torch's step. Missing packages are simulated with ``sys.modules[name] = None``
(``importlib.util.find_spec`` then finds nothing, and ``import`` fails).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from pcnn_explore.agents.dqn import DQNAgent
from pcnn_explore.agents.replay import Batch, ReplayBuffer
from pcnn_explore.agents.transitions import check_reward
from pcnn_explore.checks import SettingError
from pcnn_explore.run import TrainConfig, config
from pcnn_explore.run.learners import make_learner

torch.set_num_threads(1)
STEPS = ("numpy", "torch")
SHAPE = (1, 5, 5)  # DeepSea-5's grid, 2 actions

ACTION_2 = ("transition action 2 is not an action index in [0, 2): give the index of the action taken, "
            "an int in [0, 2)")
REWARD_TAIL = (" is not a finite number: the learn step needs finite rewards (one NaN or inf makes every weight "
               "NaN); fix the env's reward, or the bonus added to it, before storing")
# a value finite as given but not in float32 says so before the tail's colon
FLOAT32_TAIL = REWARD_TAIL.replace(":", " in float32, the dtype the replay stores and the learn step reads (up to "
                                        "3.4e38):", 1)
OBS_TAIL = (": the replay stores uint8 frames, pixel values 0..255; pass the frame as uint8 (or as numbers that "
            "are whole and in [0, 255])")


def grid(value=255, dtype=np.uint8, cell=(0, 0)) -> np.ndarray:
    """A (1, 5, 5) DeepSea grid with ``value`` in ``cell``, 0 elsewhere."""
    obs = np.zeros(SHAPE, dtype)
    obs[(0, *cell)] = value
    return obs


def learner(learn_step: str):
    cfg = TrainConfig.preset("smoke", env="DeepSea-5-v0", learn_step=learn_step, tensorboard=False)
    out = make_learner(cfg, SHAPE, 2, 1)
    assert out.agent.learn_step == learn_step and (out.agent._numpy_step is not None) == (learn_step == "numpy")
    return out


# (obs, action, reward, next_obs) -> the message; each case one bad field of an otherwise good transition
STORE_CASES = {
    "action = n_actions": ((grid(), 2, 0.0, grid()), ACTION_2),
    "negative action": ((grid(), -1, 0.0, grid()), ACTION_2.replace("action 2", "action -1")),
    "numpy action out of range": ((grid(), np.int64(7), 0.0, grid()), ACTION_2.replace("action 2", "action 7")),
    "float action": ((grid(), 1.0, 0.0, grid()), ACTION_2.replace("action 2", "action 1.0")),
    "bool action": ((grid(), True, 0.0, grid()), ACTION_2.replace("action 2", "action True")),
    "NaN reward": ((grid(), 1, float("nan"), grid()), "transition reward nan" + REWARD_TAIL),
    "inf reward (float32)": ((grid(), 1, np.float32(-np.inf), grid()), "transition reward -inf" + REWARD_TAIL),
    "reward not a number": ((grid(), 1, "1", grid()), "transition reward '1'" + REWARD_TAIL),
    "reward 1e39 (inf in float32)": ((grid(), 1, 1e39, grid()), "transition reward 1e+39" + FLOAT32_TAIL),
    "numpy reward -1e39": ((grid(), 1, np.float64(-1e39), grid()), "transition reward -1e+39" + FLOAT32_TAIL),
    "int reward 10**400": ((grid(), 1, 10**400, grid()), f"transition reward {10**400!r}" + FLOAT32_TAIL),
    "float obs 0.5": ((grid(0.5, np.float32), 0, 0.0, grid()),
                      "transition obs holds 0.5 (float32), not a whole number" + OBS_TAIL),
    "float next_obs 300": ((grid(), 0, 0.0, grid(300.0, np.float64)),
                           "transition next_obs holds 300.0 (float64), outside [0, 255]" + OBS_TAIL),
    "float obs NaN": ((grid(np.nan, np.float64), 0, 0.0, grid()),
                      "transition obs holds nan (float64), not a whole number" + OBS_TAIL),
    "int obs 300": ((grid(300, np.int64), 0, 0.0, grid()),
                    "transition obs holds 300 (int64), outside [0, 255]" + OBS_TAIL),
    "int obs -1": ((grid(), 0, 0.0, grid(-1, np.int16)),
                   "transition next_obs holds -1 (int16), outside [0, 255]" + OBS_TAIL),
    "complex obs": ((grid(1, np.complex64), 0, 0.0, grid()),
                    "transition obs has dtype complex64, not a number type" + OBS_TAIL),
    "wrong shape": ((np.zeros((1, 4, 4), np.uint8), 0, 0.0, grid()),
                    "observations must have shape (1, 5, 5), got (1, 4, 4) (transition obs): pass (C, H, W) frame "
                    "stacks of the shape the buffer was made for"),
}


@pytest.mark.parametrize("learn_step", STEPS)
@pytest.mark.parametrize("case", list(STORE_CASES))
def test_a_bad_transition_is_refused_where_it_is_stored_with_one_message_for_both_steps(learn_step, case):
    (obs, action, reward, next_obs), message = STORE_CASES[case]
    run = learner(learn_step)
    run.store(0, grid(), 1, None, 0.5, False, grid(255, cell=(1, 0)), False)  # a good transition first
    shard = run.replay.shards[0]
    before = (shard.written, shard.cursor, shard.action.copy(), shard.reward.copy(), shard._frames.copy())
    with pytest.raises(ValueError) as refused:
        run.store(0, obs, action, None, reward, False, next_obs, False)
    assert str(refused.value) == message
    after = (shard.written, shard.cursor, shard.action, shard.reward, shard._frames)
    assert before[:2] == after[:2] and all(np.array_equal(b, a) for b, a in zip(before[2:], after[2:]))


@pytest.mark.parametrize("learn_step", STEPS)
def test_whole_float_and_integer_frames_are_stored_exactly_and_others_refused(learn_step):
    run = learner(learn_step)
    shard = run.replay.shards[0]
    run.store(0, grid(255.0, np.float32), 1, None, np.float32(0.25), False, grid(7, np.int64, cell=(1, 1)), False)
    run.store(0, grid(7, np.int64, cell=(1, 1)), np.int32(0), None, 1, True, grid(0.0, np.float64), True)
    assert shard._frames.dtype == np.uint8
    np.testing.assert_array_equal(shard._frames[:3], np.stack([grid(255), grid(7, cell=(1, 1)), grid(0)]))
    assert shard.action[:2].tolist() == [1, 0] and shard.reward[:2].tolist() == [0.25, 1.0]
    with pytest.raises(ValueError, match=r"^transition obs holds 254.5 \(float32\), not a whole number"):
        run.store(0, grid(254.5, np.float32), 0, None, 0.0, False, grid(), False)
    assert shard.written == 3


def test_a_bare_replay_refuses_a_negative_action_and_bounds_it_with_n_actions():
    with pytest.raises(ValueError, match=r"^transition action -1 is not an action index >= 0: give the index"):
        ReplayBuffer(16, SHAPE).add(grid(), -1, 0.0, False, grid(), False)
    ReplayBuffer(16, SHAPE).add(grid(), 5, 0.0, False, grid(), False)  # no n_actions: no upper bound
    with pytest.raises(ValueError, match=r"^transition action 5 is not an action index in \[0, 4\)"):
        ReplayBuffer(16, SHAPE, n_actions=4).add(grid(), 5, 0.0, False, grid(), False)
    with pytest.raises(ValueError, match=r"^n_actions must be a positive int \(or None\), got 0"):
        ReplayBuffer(16, SHAPE, n_actions=0)


def test_a_reward_is_stored_where_float32_holds_it_finite_and_refused_where_it_rounds_to_inf():
    """The replay stores rewards as float32, which rounds to nearest, ties to even: its largest finite
    value is (2 - 2^-23) 2^127, and a number rounds to inf from half a unit in the last place above
    that, 2^128 - 2^103, on (the tie goes to the even neighbour, 2^128). Each reward is taken exactly
    where numpy's own cast to float32 gives a finite number, and stored as that number."""
    top, edge = (2 - 2.0 ** -23) * 2.0 ** 127, 2.0 ** 128 - 2.0 ** 103
    assert top == float(np.finfo(np.float32).max)
    below, above = float(np.nextafter(edge, 0.0)), float(np.nextafter(edge, np.inf))
    with np.errstate(over="ignore"):
        def f32(x):
            return np.float32(x)

        taken = [top, below, -below, 1e38, -3e38, 5e-324, 0.0]
        refused = [edge, -edge, above, 1e39, -1e39, float("inf"), float("nan")]
        assert all(np.isfinite(f32(r)) for r in taken) and not any(np.isfinite(f32(r)) for r in refused)
    buf = ReplayBuffer(64, SHAPE, n_actions=2)
    for k, r in enumerate(taken):
        buf.add(grid(), 1, r, False, grid(), False)
        assert buf.reward[k] == f32(r) and np.isfinite(buf.reward[k])
    for r in refused:
        with pytest.raises(ValueError) as refused_with:
            buf.add(grid(), 1, r, False, grid(), False)
        tail = FLOAT32_TAIL if np.isfinite(r) else REWARD_TAIL
        assert str(refused_with.value) == f"transition reward {r!r}" + tail
    assert buf.written == len(taken) + 1  # nothing of the refused ones
    # a reward clipped before it is stored (the run's loop clips the env's reward plus the bonus to
    # [-1, 1]) need only be finite: a bonus of 1e96 is large, not broken
    assert check_reward(1e96, "reward plus bonus") == 1e96 and check_reward(np.float64(-1e39)) == -1e39
    with pytest.raises(ValueError, match=r"^reward plus bonus 1e\+96 is not a finite number in float32, the dtype"):
        check_reward(1e96, "reward plus bonus", float32=True)


def batch(n: int = 4, **change) -> Batch:
    """A batch of n DeepSea grids (the agent in row i, column 0), all fields good, then ``change``."""
    obs = np.zeros((n, *SHAPE), np.uint8)
    obs[np.arange(n), 0, np.arange(n), 0] = 255
    fields = dict(obs=obs, action=np.arange(n, dtype=np.int64) % 2, reward=np.linspace(-1, 1, n, dtype=np.float32),
                  next_obs=np.roll(obs, 1, axis=2), done=np.zeros(n, np.float32), mc_return=np.zeros(n, np.float32),
                  index=np.arange(n))
    fields.update(change)
    return Batch(**fields)


DONE_TAIL = (" is not 0 or 1: done is 1.0 where the episode terminated and 0.0 otherwise (a time-limit truncation "
             "included)")
BATCH_CASES = {
    "action = n_actions": (dict(action=np.array([0, 1, 2, 1])),
                           "batch action 2 is not an action index in [0, 2): give the index of the action taken, an "
                           "int in [0, 2)"),
    "negative action": (dict(action=np.array([0, -3, 1, 1])),
                        "batch action -3 is not an action index in [0, 2): give the index of the action taken, an "
                        "int in [0, 2)"),
    "float actions": (dict(action=np.array([0.0, 1.0, 1.0, 0.0])),
                      "batch action 0.0 is not an action index in [0, 2): give the index of the action taken, an "
                      "int in [0, 2)"),
    "NaN reward": (dict(reward=np.array([0, 1, np.nan, 0], np.float32)), "batch reward nan" + REWARD_TAIL),
    "inf mc_return": (dict(mc_return=np.array([0, np.inf, 0, 0], np.float32)), "batch mc_return inf" + REWARD_TAIL),
    "reward 1e39, inf in float32": (dict(reward=np.array([0, 1e39, 0, 0])), "batch reward 1e+39" + FLOAT32_TAIL),
    "rewards as text": (dict(reward=np.array(["1", "0", "0", "0"])), "batch reward '1'" + REWARD_TAIL),
    "float frames": (dict(obs=np.full((4, *SHAPE), 0.5, np.float32)),
                     "batch obs has dtype float32, and the learn step reads uint8 frames only" + OBS_TAIL),
    "int64 next frames": (dict(next_obs=np.full((4, *SHAPE), 300, np.int64)),
                          "batch next_obs has dtype int64, and the learn step reads uint8 frames only" + OBS_TAIL),
    "done NaN": (dict(done=np.array([0, np.nan, 0, 1], np.float32)), "batch done nan" + DONE_TAIL),
    "done 2.0": (dict(done=np.array([0, 0, 2, 1], np.float32)), "batch done 2.0" + DONE_TAIL),
    "done -1": (dict(done=np.array([0, -1, 0, 0])), "batch done -1" + DONE_TAIL),
    "done 0.5": (dict(done=np.array([1, 1, 0.5, 0])), "batch done 0.5" + DONE_TAIL),
}

LAYOUT_TAIL = (": a learn step reads B >= 1 observations of the shape the network was built for, (1, 5, 5), and one "
               "action, reward, done and mc_return per observation, as numpy arrays")
FAR_GRID = np.zeros((4, 1, 40, 40), np.uint8)
FAR_GRID[:, 0, 39, 39] = 255  # a lit cell far past the 25 inputs the network reads
# the cases where the old numpy step read or wrote out of bounds, or crashed
LAYOUT_CASES = {
    "1 action, reward and done for 4 observations": (
        dict(action=np.array([1]), reward=np.zeros(1, np.float32), done=np.zeros(1, np.float32)),
        "batch action has shape (1,), not (4,)" + LAYOUT_TAIL),
    "(4, 1, 40, 40) frames for a 25-input network": (
        dict(obs=FAR_GRID, next_obs=FAR_GRID.copy()),
        "batch obs has shape (4, 1, 40, 40), not (B, 1, 5, 5)" + LAYOUT_TAIL),
    "3 next observations for 4": (dict(next_obs=np.zeros((3, *SHAPE), np.uint8)),
                                  "batch next_obs has shape (3, 1, 5, 5), not (4, 1, 5, 5)" + LAYOUT_TAIL),
    "4 actions for 2 observations": (dict(n=2, action=np.array([0, 1, 1, 0])),
                                     "batch action has shape (4,), not (2,)" + LAYOUT_TAIL),
    "mc_return (4, 1)": (dict(mc_return=np.zeros((4, 1), np.float32)),
                         "batch mc_return has shape (4, 1), not (4,)" + LAYOUT_TAIL),
    "done a list": (dict(done=[0.0, 0.0, 1.0, 0.0]), "batch done is a list, not a numpy array" + LAYOUT_TAIL),
    "no observations": (dict(n=0), "batch holds no observations" + LAYOUT_TAIL),
}


def refusal(learn_step: str, change: dict) -> str:
    """The message ``learn`` refuses ``batch(**change)`` with, once it is shown that no weight or Adam
    state moved and that a good batch still learns."""
    torch.manual_seed(0)
    agent = DQNAgent(SHAPE, 2, network="mlp", optimizer="adam", lr=1e-3, learn_step=learn_step)
    weights = [p.detach().clone() for p in agent.q.parameters()]
    with pytest.raises(ValueError) as refused:
        agent.learn(batch(**change))
    assert all(torch.equal(w, p) for w, p in zip(weights, agent.q.parameters()))  # no step taken
    assert agent.optimizer.state == {} or all(float(s["step"]) == 0 for s in agent.optimizer.state.values())
    assert np.isfinite(float(agent.learn(batch())))  # the good batch still learns
    return str(refused.value)


@pytest.mark.parametrize("learn_step", STEPS)
@pytest.mark.parametrize("case", list(BATCH_CASES))
def test_a_bad_batch_given_to_learn_is_refused_before_any_arithmetic_with_one_message_for_both_steps(learn_step, case):
    change, message = BATCH_CASES[case]
    assert refusal(learn_step, change) == message


@pytest.mark.parametrize("case", list(LAYOUT_CASES))
def test_a_batch_laid_out_unlike_the_network_is_refused_by_torchs_step(case):
    change, message = LAYOUT_CASES[case]
    assert refusal("torch", change) == message


GREEDY_FAR = ("the numpy learn step's network reads (B, 1, 5, 5) observations, got (1, 1, 40, 40): pass observations "
              "of the shape it was built for")


def numpy_probe() -> None:
    """Print, one JSON line each, the numpy step's refusal of each layout case and of acting on a
    (1, 40, 40) frame (run in a subprocess by the test below)."""
    for case, (change, _) in LAYOUT_CASES.items():
        print(json.dumps([case, refusal("numpy", change)]), flush=True)
    agent = DQNAgent(SHAPE, 2, network="mlp", optimizer="adam", learn_step="numpy")
    with pytest.raises(ValueError) as refused:
        agent.greedy_actions([FAR_GRID[0]])
    print(json.dumps(["greedy (1, 40, 40)", str(refused.value)]), flush=True)


def test_a_batch_laid_out_unlike_the_network_is_refused_by_the_numpy_step_with_torchs_words():
    """In a subprocess: before, the numpy step died on the first case (its loops ran past the ends of
    the arrays), and read and wrote out of bounds on others."""
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
            "import test_learn_step_inputs as t; t.numpy_probe()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    got = dict(json.loads(line) for line in out.stdout.splitlines())
    assert out.returncode == 0, f"exit {out.returncode} after {list(got)}: {out.stderr[-3000:]}"
    want = {case: message for case, (_, message) in LAYOUT_CASES.items()}
    assert got == {**want, "greedy (1, 40, 40)": GREEDY_FAR}


@pytest.mark.parametrize("learn_step", STEPS)
def test_a_valid_batch_gives_the_steps_own_arithmetic_bit_for_bit(learn_step):
    """The checks add no arithmetic: three steps of ``learn`` on a replay's batches give the loss,
    weights and Adam state that the step's own arithmetic gives on the same arrays with no check
    (numpy: the compiled gradient and Adam kernels; torch: ``_loss``, backward and the optimiser's
    update), bit for bit; and a valid batch of other dtypes (int32 actions, float64 rewards and
    returns, bool done) learns exactly as its replay-dtype twin."""
    from pcnn_explore.agents.mlp_step import _adam_all, _gradients

    rng = np.random.default_rng(5)
    replay = ReplayBuffer(64, SHAPE, n_actions=2)
    for t in range(40):
        replay.add(grid(255, cell=(t % 5, 0)), t % 2, float(rng.normal()), t % 5 == 4, grid(255, cell=((t + 1) % 5, 1)),
                   t % 5 == 4)
    batches = [replay.sample(8, rng) for _ in range(3)]
    agents = []
    for _ in range(3):
        torch.manual_seed(1)
        agents.append(DQNAgent(SHAPE, 2, network="mlp", hidden=6, optimizer="adam", lr=1e-2, mmc_beta=0.1,
                               learn_step=learn_step))
    checked, unchecked, converted = agents
    for b in batches:
        other = Batch(b.obs, b.action.astype(np.int32), b.reward.astype(np.float64), b.next_obs, b.done.astype(bool),
                      b.mc_return.astype(np.float64), b.index)
        losses = [float(checked.learn(b)), float(converted.learn(other))]
        if learn_step == "numpy":
            s = unchecked._numpy_step
            losses.append(float(_gradients(s._inputs(b.obs), s._inputs(b.next_obs), b.action, b.reward, b.done,
                                           b.mc_return, s.gamma, s.mmc_beta, s.double_q, *s.online, *s.target,
                                           *s.grads)))
            _adam_all(*s._flat, s.lr, s.beta1, s.beta2, s.eps)
        else:
            loss = unchecked._loss(*(torch.from_numpy(x) for x in (b.obs, b.next_obs, b.action, b.reward, b.done,
                                                                     b.mc_return)))
            for p in unchecked._params:
                p.grad = None
            loss.backward()
            with torch.no_grad():
                unchecked._step(unchecked.optimizer)
            losses.append(float(loss.detach()))
        assert losses[0] == losses[1] == losses[2]
    for agent in (unchecked, converted):
        assert all(torch.equal(p, q) for p, q in zip(checked.q.parameters(), agent.q.parameters()))
        for p, q in zip(checked.q.parameters(), agent.q.parameters()):
            assert all(torch.equal(checked.optimizer.state[p][k], agent.optimizer.state[q][k])
                       for k in ("step", "exp_avg", "exp_avg_sq"))
    assert not all(torch.equal(p, q) for p, q in zip(checked.q.parameters(), checked.target.parameters()))  # it moved


@pytest.mark.parametrize("learn_step", STEPS)
def test_a_device_batch_is_checked_against_its_frames_with_the_same_words(learn_step):
    """A replay whose frames live in a tensor (here on the CPU) samples :class:`DeviceBatch`es: slots
    outside the frames, or stacks of another shape, are refused before any gather."""
    from pcnn_explore.agents.replay import DeviceBatch

    replay = ReplayBuffer(16, SHAPE, n_actions=2, device="cpu")
    for t in range(10):
        replay.add(grid(255, cell=(t % 5, 0)), t % 2, 0.5, t % 5 == 4, grid(255, cell=((t + 1) % 5, 0)), t % 5 == 4)
    good = replay.sample(4, np.random.default_rng(0))
    assert isinstance(good, DeviceBatch)

    def changed(**change) -> DeviceBatch:
        fields = {f: getattr(good, f) for f in DeviceBatch.__dataclass_fields__}
        return DeviceBatch(**{**fields, **change})

    cases = {
        "batch obs_slots holds slot 16, outside the frames' [0, 16)" + LAYOUT_TAIL: changed(
            obs_slots=np.array([[0], [16], [1], [2]])),
        "batch next_slots has shape (4, 2), not (4, 1) (stacks of 1 frames of 1 channels)" + LAYOUT_TAIL: changed(
            next_slots=np.zeros((4, 2), np.int64)),
        "batch action has shape (1,), not (4,)" + LAYOUT_TAIL: changed(action=np.array([1])),
        "batch done 2.0" + DONE_TAIL: changed(done=np.array([0, 2, 0, 0], np.float32)),
        "batch frames is a torch.float32 tensor of shape (16, 1, 5, 5), not an (N, c, 5, 5) uint8 tensor with c "
        "dividing 1" + LAYOUT_TAIL: changed(frames=good.frames.float()),
    }
    torch.manual_seed(0)
    agent = DQNAgent(SHAPE, 2, network="mlp", optimizer="adam", lr=1e-3, learn_step=learn_step)
    weights = [p.detach().clone() for p in agent.q.parameters()]
    for message, bad in cases.items():
        with pytest.raises(ValueError) as refused:
            agent.learn(bad)
        assert str(refused.value) == message
    assert all(torch.equal(w, p) for w, p in zip(weights, agent.q.parameters()))
    assert np.isfinite(float(agent.learn(good)))


def test_the_cuda_graph_checks_a_batch_given_to_it_from_outside_with_the_same_words():
    """A captured graph copies a batch into its static buffers as it is, where numpy broadcasts one
    action into four slots. Called from outside (not from ``DQNAgent.learn``, which has checked the
    batch), it checks the batch first and then its layout against the captured one, before touching
    any buffer: a graph object without buffers (capturing needs CUDA) shows it on the CPU. The batch
    a graph is captured for, whose sizes become its static buffers', is checked the same way."""
    from pcnn_explore.agents.learn_graph import LearnGraph, batch_layout

    graph = LearnGraph.__new__(LearnGraph)
    graph.agent, graph.layout = DQNAgent(SHAPE, 2, network="mlp", optimizer="adam"), batch_layout(batch())
    for change, message in [*LAYOUT_CASES.values(), *BATCH_CASES.values()]:
        with pytest.raises(ValueError) as refused:
            graph(batch(**change))
        assert str(refused.value) == message
    with pytest.raises(ValueError, match=r"^batch of layout \('host', \(2, 1, 5, 5\), '\|u1'\) given to a graph "
                                         r"captured for \('host', \(4, 1, 5, 5\), '\|u1'\): capture a LearnGraph"):
        graph(batch(n=2))
    short, message = LAYOUT_CASES["1 action, reward and done for 4 observations"]
    with pytest.raises(ValueError) as refused:  # the batch that sizes the static buffers, before any CUDA call
        LearnGraph(graph.agent, batch(**short))
    assert str(refused.value) == message


def test_the_numpy_step_called_without_the_agent_checks_the_batch_itself():
    from pcnn_explore.agents.mlp_step import NumpyMLPStep

    torch.manual_seed(0)
    step = NumpyMLPStep(DQNAgent(SHAPE, 2, network="mlp", optimizer="adam", lr=1e-3))
    with pytest.raises(ValueError, match=r"^batch action 9 is not an action index in \[0, 2\)"):
        step.gradients(batch(action=np.array([0, 1, 9, 0])))
    with pytest.raises(ValueError, match=r"^the numpy learn step reads uint8 frames, got float64: pass the frames"):
        step.greedy_actions(np.full((1, *SHAPE), 300.0))
    loss, grads = step.gradients(batch())
    assert np.isfinite(loss) and all(np.isfinite(g).all() for g in grads)


def test_acting_on_float_frames_gives_torchs_actions_with_either_step():
    """The numpy step's forward reads uint8 only: frames of another dtype take the forward torch's
    step uses (x / 255 as floats), so the two steps act alike on them."""
    frames = [np.full(SHAPE, v) for v in (0.5, 10.5, 266.0)]  # a uint8 cast: 0, 10, 10
    actions = {}
    for step in STEPS:
        torch.manual_seed(3)
        agent = DQNAgent(SHAPE, 2, network="mlp", optimizer="adam", learn_step=step)
        with torch.no_grad():  # q = (1, s) with s = sum(x) = 25 v / 255: action 1 where v > 10.2
            for p in agent.q.parameters():
                p.zero_()
            agent.q._dense[0].weight[0].fill_(1.0)
            agent.q._dense[1].weight[0, 0] = 1.0
            agent.q._dense[2].weight[1, 0] = 1.0
            agent.q._dense[2].bias[0] = 1.0
        actions[step] = agent.greedy_actions(frames)
    assert actions["torch"] == [0, 1, 1]  # 25 v / 255: 0.05, 1.03, 26.1 (cast to uint8: 0, 0.98, 0.98)
    assert actions["numpy"] == actions["torch"]


# ---------------------------------------------------------------------------------- learn_step auto
LINE = ("pcnn-explore: warning: numba is not installed, so DQN learns with the torch step (learn_step auto); "
        "pip install numba gives the numpy step, several times faster on DeepSea's MLP\n")


def test_auto_falls_back_to_torch_in_one_line_when_numba_is_missing(monkeypatch, capsys):
    monkeypatch.setattr(config, "_FALLBACK_SAID", [])
    monkeypatch.setitem(sys.modules, "numba", None)
    cfg = TrainConfig.preset("smoke", env="DeepSea-5-v0", tensorboard=False)
    assert cfg.learn_step == "torch"
    assert capsys.readouterr().err == LINE
    assert TrainConfig.preset("study", env="DeepSea-10-v0").learn_step == "torch"
    assert capsys.readouterr().err == ""  # once per process
    run = make_learner(cfg, SHAPE, 2, 1)
    assert run.agent.learn_step == "torch" and run.agent._numpy_step is None
    run.store(0, grid(), 1, None, 1.0, True, grid(255, cell=(1, 1)), True)
    assert np.isfinite(float(run.learn(2, np.random.default_rng(0))))
    monkeypatch.delitem(sys.modules, "numba")  # installed again: auto is numpy
    assert TrainConfig.preset("smoke", env="DeepSea-5-v0").learn_step == "numpy"


def test_auto_names_scipy_when_it_is_the_one_missing(monkeypatch, capsys):
    monkeypatch.setattr(config, "_FALLBACK_SAID", [])
    monkeypatch.setitem(sys.modules, "scipy", None)
    assert TrainConfig.preset("smoke", env="DeepSea-5-v0").learn_step == "torch"
    assert capsys.readouterr().err == LINE.replace("numba", "scipy")
    monkeypatch.setattr(config, "_FALLBACK_SAID", [])
    monkeypatch.setitem(sys.modules, "numba", None)
    TrainConfig.preset("smoke", env="DeepSea-5-v0")
    assert capsys.readouterr().err == LINE.replace("numba is", "numba and scipy are").replace(
        "install numba", "install numba scipy")


def test_auto_is_silent_where_numpy_does_not_apply_or_numba_is_there(monkeypatch, capsys):
    monkeypatch.setattr(config, "_FALLBACK_SAID", [])
    assert TrainConfig.preset("smoke", env="DeepSea-5-v0").learn_step == "numpy"
    monkeypatch.setitem(sys.modules, "numba", None)
    assert TrainConfig.preset("smoke", env="DeepSea-5-v0", optimizer="rmsprop").learn_step == "torch"
    assert capsys.readouterr().err == ""


def test_numpy_asked_for_without_numba_or_scipy_names_the_fix(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)
    with pytest.raises(SettingError, match=r"learn.step.? numpy needs numba, not installed here: pip install numba, "
                                           r"or set .?.?learn.step.? torch \(or auto\)"):
        TrainConfig.preset("smoke", env="DeepSea-5-v0", learn_step="numpy")
    monkeypatch.delitem(sys.modules, "pcnn_explore.agents.mlp_step", raising=False)  # imported afresh: no numba
    with pytest.raises(ImportError, match=r"^learn_step='numpy' needs numba, which does not import \(.*\): "
                                          r"pip install numba, or use learn_step='torch'$"):
        DQNAgent(SHAPE, 2, network="mlp", optimizer="adam", learn_step="numpy")
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ImportError, match=r"^the numpy learn step needs scipy \(numba's matrix products call its "
                                          r"BLAS\), which is not installed: pip install scipy, or use "
                                          r"learn_step='torch'$"):
        DQNAgent(SHAPE, 2, network="mlp", optimizer="adam", learn_step="numpy")
