"""Replay memory: Monte Carlo returns, both running-episode policies, frame stacks, wrap-around."""
from __future__ import annotations

import numpy as np
import pytest

from pcnn_explore.agents.replay import ReplayBuffer


def obs1(v: int) -> np.ndarray:
    """A (1, 2, 2) single-frame observation filled with v."""
    return np.full((1, 2, 2), v, np.uint8)


def stack_obs(*vals: int) -> np.ndarray:
    """A (k, 2, 2) stacked observation, oldest frame first."""
    return np.stack([np.full((2, 2), v, np.uint8) for v in vals])


def fill_episode(buf, values, rewards, terminated=True, first_stack=None):
    """Add one episode of single-frame states values[0..T] with rewards[0..T-1]."""
    for t, r in enumerate(rewards):
        end = t == len(rewards) - 1
        buf.add(obs1(values[t]), t % 3, r, terminated and end, obs1(values[t + 1]), end)


def test_mc_returns_filled_at_episode_end_hand_computed():
    buf = ReplayBuffer(32, (1, 2, 2), gamma=0.5)
    fill_episode(buf, [10, 11, 12, 13], [1.0, 0.0, 2.0])
    # slots 0, 1, 2 hold transitions; returns [1.5, 1, 2] (see test_dqn); slot 3 holds the final state
    np.testing.assert_array_equal(buf.mc_return[:3], [1.5, 1.0, 2.0])
    assert buf.mc_ready[:3].all() and not buf.has_transition[3]
    np.testing.assert_array_equal(buf.done[:3], [0, 0, 1])
    b = buf.sample(200, np.random.default_rng(0))
    assert set(b.index.tolist()) == {0, 1, 2}
    for i, o, no, mc, a in zip(b.index, b.obs, b.next_obs, b.mc_return, b.action):
        assert o[0, 0, 0] == 10 + i and no[0, 0, 0] == 11 + i  # next_obs is the following state
        assert mc == [1.5, 1.0, 2.0][i] and a == i % 3


def test_running_episode_paper_policy_samples_it_with_zero_return():
    buf = ReplayBuffer(32, (1, 2, 2), gamma=0.5, running_episode="paper")
    fill_episode(buf, [0, 1, 2], [1.0, 1.0])  # finished: returns [1.5, 1]
    buf.add(obs1(100), 0, 1.0, False, obs1(101), False)  # running episode, one transition
    buf.add(obs1(101), 0, 1.0, False, obs1(102), False)
    b = buf.sample(500, np.random.default_rng(1))
    running = b.obs[:, 0, 0, 0] >= 100
    assert running.any() and (~running).any()
    assert (b.mc_return[running] == 0).all()
    np.testing.assert_array_equal(np.unique(b.mc_return[~running]), [1.0, 1.5])
    assert len(buf) == 4
    buf.end_episode()  # e.g. the run's step budget ended: partial returns [1 + 0.5, 1]
    ends = buf.sample(500, np.random.default_rng(2))
    assert set(np.unique(ends.mc_return[ends.obs[:, 0, 0, 0] >= 100]).tolist()) == {1.5, 1.0}


def test_running_episode_finished_only_policy_excludes_it():
    buf = ReplayBuffer(32, (1, 2, 2), gamma=0.5, running_episode="finished_only")
    buf.add(obs1(100), 0, 1.0, False, obs1(101), False)
    assert not buf.can_sample() and len(buf) == 0
    with pytest.raises(ValueError, match="no sampleable transition"):
        buf.sample(4, np.random.default_rng(0))
    buf.add(obs1(101), 0, 0.0, True, obs1(102), True)
    buf.add(obs1(200), 0, 1.0, False, obs1(201), False)  # next episode, running
    assert buf.can_sample() and len(buf) == 2
    b = buf.sample(300, np.random.default_rng(0))
    assert set(b.obs[:, 0, 0, 0].tolist()) == {100, 101}
    np.testing.assert_array_equal(np.unique(b.mc_return), [0.0, 1.0])  # [1 + 0.5 * 0, 0]


def test_frame_stacks_are_not_duplicated_and_pad_with_the_first_frame():
    buf = ReplayBuffer(64, (4, 2, 2), stack=4, gamma=0.9)
    assert buf.frames.shape == (64, 1, 2, 2)  # one frame per slot
    # episode 1: states s0 = [1,1,1,1] (reset padding), s1 = [1,1,1,2], s2 = [1,1,2,3]
    buf.add(stack_obs(1, 1, 1, 1), 0, 0.0, False, stack_obs(1, 1, 1, 2), False)
    buf.add(stack_obs(1, 1, 1, 2), 1, 0.0, True, stack_obs(1, 1, 2, 3), True)
    # episode 2 must not see episode 1's frames
    buf.add(stack_obs(7, 7, 7, 7), 2, 1.0, False, stack_obs(7, 7, 7, 8), False)
    buf.add(stack_obs(7, 7, 7, 8), 2, 1.0, False, stack_obs(7, 7, 8, 9), False)
    got = buf.stacked(np.arange(6))[:, :, 0, 0]
    np.testing.assert_array_equal(got, [[1, 1, 1, 1], [1, 1, 1, 2], [1, 1, 2, 3],
                                        [7, 7, 7, 7], [7, 7, 7, 8], [7, 7, 8, 9]])
    b = buf.sample(100, np.random.default_rng(0))
    assert set(b.index.tolist()) == {0, 1, 3, 4}  # slot 2 is episode 1's final state, 5 the current one


def test_wrap_around_never_mixes_old_and_new_frames():
    cap, stack = 20, 4
    buf = ReplayBuffer(cap, (stack, 2, 2), stack=stack, gamma=0.9)
    rng = np.random.default_rng(0)
    value = 0
    as_obs = lambda vals: np.stack([np.full((2, 2), v, np.uint8) for v in vals])  # noqa: E731
    for ep in range(12):  # 12 episodes of 5 transitions (6 slots each): the buffer wraps three times
        first = value
        frames = [value] * stack
        for t in range(5):
            nxt = frames[1:] + [value + 1]
            buf.add(as_obs(frames), 0, 0.0, t == 4, as_obs(nxt), t == 4)
            frames, value = nxt, value + 1
        value += 15  # episode e uses values 20e .. 20e + 5
        b = buf.sample(64, rng)
        o, n = b.obs[:, :, 0, 0].astype(int), b.next_obs[:, :, 0, 0].astype(int)
        d = np.diff(o, axis=1)
        # a state is its episode's first frame repeated, then consecutive frames of the same episode
        assert ((d == 0) | (d == 1)).all()
        assert (np.diff(d, axis=1) >= 0).all()  # padding only at the front
        assert (o // 20 == o[:, :1] // 20).all()
        # the next state is the state shifted by one frame
        np.testing.assert_array_equal(n[:, :-1], o[:, 1:])
        np.testing.assert_array_equal(n[:, -1], o[:, -1] + 1)
        assert first // 20 == ep
    assert buf.written > 2 * cap


def test_wrap_around_excludes_slots_whose_stack_was_overwritten():
    buf = ReplayBuffer(10, (2, 1, 1), stack=2, gamma=1.0)
    # episode A: 8 transitions, states with newest frame t + 1, in slots 0..8 (slot 8: final state)
    for t in range(8):
        buf.add(np.full((2, 1, 1), t + 1, np.uint8), 0, 1.0, t == 7, np.full((2, 1, 1), t + 2, np.uint8), t == 7)
    # episode B starts in slot 9 and its next frame overwrites slot 0
    buf.add(np.full((2, 1, 1), 50, np.uint8), 0, 0.0, False, np.full((2, 1, 1), 51, np.uint8), False)
    assert buf.cursor == 1
    # slot 1 (A's frame 2) is the oldest: its stack would read slot 0, now B's frame 51
    ok = buf._sampleable()
    assert not ok[1] and ok[2] and ok[9]
    np.testing.assert_array_equal(np.flatnonzero(ok), [2, 3, 4, 5, 6, 7, 9])
    b = buf.sample(500, np.random.default_rng(0))
    assert set(b.index.tolist()) == {2, 3, 4, 5, 6, 7, 9}
    np.testing.assert_array_equal(buf.stacked(np.array([2]))[0, :, 0, 0], [2, 3])
    np.testing.assert_array_equal(buf.stacked(np.array([9]))[0, :, 0, 0], [50, 50])
    # A's Monte Carlo returns survive: gamma 1, eight rewards of 1 -> slot 2 (t = 2) has 6
    assert buf.mc_return[2] == 6.0
    assert len(buf) == 7


def test_episode_longer_than_capacity_is_rejected():
    buf = ReplayBuffer(6, (1, 2, 2))
    for t in range(5):
        buf.add(obs1(t), 0, 0.0, False, obs1(t + 1), False)
    with pytest.raises(ValueError, match="raise replay_capacity"):
        buf.add(obs1(5), 0, 0.0, False, obs1(6), False)


def test_state_dict_round_trip_and_bad_arguments():
    buf = ReplayBuffer(16, (1, 2, 2), gamma=0.5)
    fill_episode(buf, [1, 2, 3], [1.0, 0.0])
    buf.add(obs1(9), 1, 0.5, False, obs1(10), False)
    other = ReplayBuffer(16, (1, 2, 2), gamma=0.5)
    other.load_state_dict(buf.state_dict())
    a, b = buf.sample(8, np.random.default_rng(3)), other.sample(8, np.random.default_rng(3))
    for name in ("obs", "action", "reward", "next_obs", "done", "mc_return", "index"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    other.add(obs1(10), 0, 1.0, True, obs1(11), True)  # the open episode continues after loading
    assert other.mc_return[3] == pytest.approx(0.5 + 0.5 * 1.0)
    with pytest.raises(ValueError, match="running_episode"):
        ReplayBuffer(16, (1, 2, 2), running_episode="zero")
    with pytest.raises(ValueError, match="capacity"):
        ReplayBuffer(4, (4, 2, 2), stack=4)
    with pytest.raises(ValueError, match="divisible"):
        ReplayBuffer(16, (3, 2, 2), stack=2)
    with pytest.raises(ValueError, match="shape"):
        buf.add(np.zeros((3, 2, 2), np.uint8), 0, 0.0, False, obs1(0), False)
    with pytest.raises(ValueError, match="capacity"):
        ReplayBuffer(16, (1, 2, 2)).load_state_dict(ReplayBuffer(32, (1, 2, 2)).state_dict())
