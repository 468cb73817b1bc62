"""DQN's two learn steps (torch's autograd and the numpy one) refuse the same bad inputs with the same message.

A transition is checked where it is stored (the run's learner -> its replay shards -> ``ReplayBuffer.add``):
an action outside [0, n_actions) or not an integer, a reward that is not a finite number, an observation
whose values are not uint8 pixels (a float or wider integer frame is taken only where every value is a
whole number in [0, 255], and then stored exactly). A batch given to ``learn`` directly is checked at the
entry of either step, with the same words. Before, the numpy step read and wrote out of bounds for an
action out of range (loss ~1e26), learned finite weights from a NaN reward where torch's became NaN,
and cast float frames to uint8 (0.5 -> 0, 300 -> 44).

``learn_step`` auto picks the numpy step only where numba and scipy are installed; where not, it says so
in one line and the run uses torch's step. Missing packages are simulated with ``sys.modules[name] = None``
(``importlib.util.find_spec`` then finds nothing, and ``import`` fails).
"""
from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from pcnn_explore.agents.dqn import DQNAgent
from pcnn_explore.agents.replay import Batch, ReplayBuffer
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


def batch(n: int = 4, **change) -> Batch:
    """A batch of n DeepSea grids (the agent in row i, column 0), all fields good, then ``change``."""
    obs = np.zeros((n, *SHAPE), np.uint8)
    obs[np.arange(n), 0, np.arange(n), 0] = 255
    fields = dict(obs=obs, action=np.arange(n, dtype=np.int64) % 2, reward=np.linspace(-1, 1, n, dtype=np.float32),
                  next_obs=np.roll(obs, 1, axis=2), done=np.zeros(n, np.float32), mc_return=np.zeros(n, np.float32),
                  index=np.arange(n))
    fields.update(change)
    return Batch(**fields)


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
    "float frames": (dict(obs=np.full((4, *SHAPE), 0.5, np.float32)),
                     "batch obs has dtype float32, and the learn step reads uint8 frames only" + OBS_TAIL),
    "int64 next frames": (dict(next_obs=np.full((4, *SHAPE), 300, np.int64)),
                          "batch next_obs has dtype int64, and the learn step reads uint8 frames only" + OBS_TAIL),
}


@pytest.mark.parametrize("learn_step", STEPS)
@pytest.mark.parametrize("case", list(BATCH_CASES))
def test_a_bad_batch_given_to_learn_is_refused_before_any_arithmetic_with_one_message_for_both_steps(learn_step, case):
    change, message = BATCH_CASES[case]
    torch.manual_seed(0)
    agent = DQNAgent(SHAPE, 2, network="mlp", optimizer="adam", lr=1e-3, learn_step=learn_step)
    weights = [p.detach().clone() for p in agent.q.parameters()]
    with pytest.raises(ValueError) as refused:
        agent.learn(batch(**change))
    assert str(refused.value) == message
    assert all(torch.equal(w, p) for w, p in zip(weights, agent.q.parameters()))  # no step taken
    assert agent.optimizer.state == {} or all(float(s["step"]) == 0 for s in agent.optimizer.state.values())
    assert np.isfinite(float(agent.learn(batch())))  # the good batch still learns


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
