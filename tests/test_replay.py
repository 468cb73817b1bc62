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


def _long_episode(buf: ReplayBuffer, start: int, stop: int, end_at: int | None = None) -> None:
    """Transitions t = start ... stop - 1 of one episode: state frames t (stacks t-k+1 ... t, clamped
    at 0), reward t + 1; the episode ends at transition ``end_at``."""
    k = buf.stack
    as_obs = lambda t: np.stack([np.full((2, 2), max(t - m, 0), np.uint8) for m in range(k - 1, -1, -1)])  # noqa: E731
    for t in range(start, stop):
        buf.add(as_obs(t), t % 3, float(t + 1), t == end_at, as_obs(t + 1), t == end_at)


def test_episode_three_times_the_capacity_keeps_exact_returns_of_its_stored_transitions():
    for policy in ("paper", "finished_only"):
        buf = ReplayBuffer(6, (1, 2, 2), gamma=0.5, running_episode=policy)
        fill_episode(buf, [100, 101, 102], [5.0, 5.0])  # an older, finished episode, overwritten below
        _long_episode(buf, 0, 18, end_at=17)  # 18 transitions (rewards 1 ... 18), 19 frames in 6 slots
        assert buf.written == 3 + 19 and len(buf._episode_slots) == 0
        frame = buf.frames[:, 0, 0, 0].astype(int)
        # the newest six frames are stored: states 13 ... 17 with their transitions, and the final state 18
        assert sorted(frame.tolist()) == [13, 14, 15, 16, 17, 18]
        stored = np.flatnonzero(buf.has_transition)
        np.testing.assert_array_equal(np.sort(frame[stored]), [13, 14, 15, 16, 17])
        assert buf.mc_ready[stored].all() and buf.mc_ready.sum() == 5
        # by hand, gamma 0.5: G_17 = 18, G_16 = 17 + 9, G_15 = 16 + 13, G_14 = 15 + 14.5, G_13 = 14 + 14.75
        expected = {17: 18.0, 16: 26.0, 15: 29.0, 14: 29.5, 13: 28.75}
        for slot in stored:
            assert buf.mc_return[slot] == expected[frame[slot]], (policy, frame[slot])
        b = buf.sample(200, np.random.default_rng(0))
        assert set(frame[b.index].tolist()) == set(expected)
        np.testing.assert_array_equal(b.mc_return, [expected[v] for v in frame[b.index]])
        np.testing.assert_array_equal(b.reward, frame[b.index] + 1)


def test_running_episode_longer_than_the_ring_keeps_only_its_stored_slots():
    buf = ReplayBuffer(5, (1, 2, 2), gamma=0.5)
    for t in range(16):
        _long_episode(buf, t, t + 1)
        slots = list(buf._episode_slots)
        # the running episode's newest min(t + 2, 5) frames, oldest first, and nothing overwritten
        assert len(slots) == min(t + 2, 5)
        np.testing.assert_array_equal(buf.frames[slots, 0, 0, 0], np.arange(t + 2 - len(slots), t + 2))
    assert len(buf.state_dict()["episode_slots"]) == 5


def test_stacks_of_an_episode_longer_than_the_ring_never_read_overwritten_frames():
    cap, stack = 10, 3
    buf = ReplayBuffer(cap, (stack, 2, 2), stack=stack, gamma=0.9)
    rng = np.random.default_rng(0)
    for t in range(3 * cap):
        _long_episode(buf, t, t + 1)
        if t < 2:
            continue
        b = buf.sample(64, rng)
        o, n = b.obs[:, :, 0, 0].astype(int), b.next_obs[:, :, 0, 0].astype(int)
        # state t is frames (t-2, t-1, t) clamped at 0; a frame overwritten by a newer one would break this
        np.testing.assert_array_equal(o, np.maximum(o[:, -1:] + np.arange(-2, 1), 0))
        np.testing.assert_array_equal(n, np.maximum(o[:, -1:] + np.arange(-1, 2), 0))
        if t + 2 > cap:  # wrapped: the oldest stack - 1 stored states, t + 2 - cap ..., are not sampled
            assert (o[:, -1] >= t + 2 - cap + stack - 1).all()
    frame = buf.frames[:, 0, 0, 0].astype(int)
    ok = buf._sampleable()
    # stored states 21 ... 30; 21 and 22 need overwritten frames, 30 is the newest (no transition yet)
    assert sorted(frame[ok].tolist()) == list(range(23, 30))


def test_checkpoint_in_the_middle_of_an_episode_longer_than_the_ring_resumes_bit_for_bit(tmp_path):
    from pcnn_explore.checkpoint import load, save_atomic

    a = ReplayBuffer(8, (2, 2, 2), stack=2, gamma=0.5)
    _long_episode(a, 0, 13)  # wrapped: the episode's first five frames are overwritten
    path = save_atomic({"replay": a.state_dict()}, tmp_path / "ckpt.pt")
    b = ReplayBuffer(8, (2, 2, 2), stack=2, gamma=0.5)
    other = np.full((2, 2, 2), 7, np.uint8)
    b.add(other, 0, 0.0, True, other, True)  # other data, replaced by the load
    b.load_state_dict(load(path)["replay"])
    assert len(b._episode_slots) == 8
    _same_state(a, b)
    for buf in (a, b):
        _long_episode(buf, 13, 24, end_at=23)
    _same_state(a, b)
    _samples_equal(a, b, 5)
    frame = a.frames[:, -1, 0, 0].astype(int)
    returns = {t: sum(0.5 ** (k - t) * (k + 1) for k in range(t, 24)) for t in range(17, 24)}
    for slot in np.flatnonzero(a.has_transition):
        assert a.mc_return[slot] == pytest.approx(returns[frame[slot]], rel=1e-6)


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


# ----------------------------------------------------------------------------------- checkpoints
def _wrapped_replay(device=None, cap=40, stack=4, seed=0) -> ReplayBuffer:
    """A replay that wrapped around more than once and ends inside a running episode."""
    rng = np.random.default_rng(seed)
    buf = ReplayBuffer(cap, (stack, 3, 5), stack=stack, gamma=0.9, device=device)
    frames = [rng.integers(0, 256, (3, 5), dtype=np.uint8) for _ in range(stack)]
    for t in range(3 * cap + 7):
        nxt = frames[1:] + [rng.integers(0, 256, (3, 5), dtype=np.uint8)]
        end = t % 9 == 8 and t < 3 * cap
        buf.add(np.stack(frames), int(rng.integers(4)), float(rng.normal()), end and t % 2 == 0,
                np.stack(nxt), end)
        frames = nxt
    assert buf.written > 3 * cap and buf._open
    return buf


def _same_state(a: ReplayBuffer, b: ReplayBuffer) -> None:
    for name in ("action", "reward", "done", "mc_return", "has_transition", "mc_ready", "episode_start", "episode_id"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    fa, fb = (np.asarray(x.cpu() if hasattr(x, "cpu") else x) for x in (a.frames, b.frames))
    np.testing.assert_array_equal(fa, fb)
    assert (a.cursor, a.written, a.n_episodes, a._open, a._episode_slots) == (
        b.cursor, b.written, b.n_episodes, b._open, b._episode_slots)


def _samples_equal(a: ReplayBuffer, b: ReplayBuffer, seed: int) -> None:
    x, y = a.sample(64, np.random.default_rng(seed)), b.sample(64, np.random.default_rng(seed))
    for name in ("obs", "action", "reward", "next_obs", "done", "mc_return", "index"):
        u, v = getattr(x, name), getattr(y, name)
        np.testing.assert_array_equal(np.asarray(u.cpu() if hasattr(u, "cpu") else u),
                                      np.asarray(v.cpu() if hasattr(v, "cpu") else v), err_msg=name)


def test_wrapped_replay_saved_and_loaded_samples_identically(tmp_path):
    from pcnn_explore.checkpoint import load, save_atomic

    buf = _wrapped_replay()
    path = save_atomic({"replay": buf.state_dict()}, tmp_path / "ckpt.pt")
    # the target held other data before (more slots filled): loading must empty what it does not restore
    other = _wrapped_replay(seed=1)
    other.load_state_dict(load(path)["replay"])  # torch.load(weights_only=True): no pickle
    _same_state(buf, other)
    _samples_equal(buf, other, 3)
    fresh = ReplayBuffer(40, (4, 3, 5), stack=4, gamma=0.9)
    fresh.load_state_dict(load(path)["replay"])
    _same_state(buf, fresh)
    # both continue identically: the open episode and the ring position carry on
    for r in (buf, other):
        r.add(np.zeros((4, 3, 5), np.uint8), 1, 1.0, True, np.ones((4, 3, 5), np.uint8), True)
    _same_state(buf, other)
    _samples_equal(buf, other, 4)


def test_partly_filled_replay_state_holds_only_the_filled_slots():
    buf = ReplayBuffer(50, (1, 2, 2), gamma=0.5)
    fill_episode(buf, [1, 2, 3, 4], [1.0, 0.0, 2.0])
    d = buf.state_dict()
    assert d["filled"] == 4 and d["frames_z"]["shape"] == [4, 1, 2, 2] and len(d["reward"]) == 4
    small = ReplayBuffer(50, (1, 2, 2), gamma=0.5)
    fill_episode(small, [5] * 9, [1.0] * 8)  # 9 slots, more than the state's 4
    small.load_state_dict(d)
    _same_state(buf, small)
    assert small.episode_id[4:].tolist() == [-1] * 46 and not small.frames[4:].any()


def test_paper_scale_replay_state_grows_with_the_data_not_the_capacity():
    import io

    import torch

    from pcnn_explore.checkpoint import _encode

    # 1M slots of 84x84 frames (a 7 GB array, never touched beyond the filled slots) holding 1K
    # transitions: a noisy static background with a moving block, 7 KB raw per frame
    cap, rng = 1_000_000, np.random.default_rng(0)
    buf = ReplayBuffer(cap, (4, 84, 84), stack=4)
    background = rng.integers(0, 256, (84, 84), dtype=np.uint8)

    def frame(t):
        f = background.copy()
        f[(t * 3) % 76:(t * 3) % 76 + 8, (t * 7) % 76:(t * 7) % 76 + 8] = 255
        return f

    stack = [frame(0)] * 4
    for t in range(1, 1001):
        nxt = stack[1:] + [frame(t)]
        buf.add(np.stack(stack), t % 6, 0.0, False, np.stack(nxt), t % 250 == 0)
        stack = nxt
    state = buf.state_dict()
    out = io.BytesIO()
    torch.save(_encode(state), out)
    size = out.tell()
    assert size < 1_000_000, size  # vs 7 GB for the capacity, 7 MB for the raw frames
    back = ReplayBuffer(cap, (4, 84, 84), stack=4)
    back.load_state_dict(state)
    np.testing.assert_array_equal(back.frames[:1001], buf.frames[:1001])
    _samples_equal(buf, back, 5)


def test_older_uncompressed_replay_state_still_loads():
    buf = _wrapped_replay()
    legacy = {name: getattr(buf, name).copy() for name in ("frames", "action", "reward", "done", "mc_return",
                                                            "has_transition", "mc_ready", "episode_start", "episode_id")}
    legacy.update(cursor=buf.cursor, written=buf.written, n_episodes=buf.n_episodes, open=buf._open,
                  episode_slots=list(buf._episode_slots), capacity=buf.capacity, obs_shape=list(buf.obs_shape),
                  stack=buf.stack, gamma=buf.gamma, running_episode=buf.running_episode)
    other = ReplayBuffer(40, (4, 3, 5), stack=4, gamma=0.9)
    other.load_state_dict(legacy)
    _same_state(buf, other)


# --------------------------------------------------------------------------- device-resident frames
def test_device_resident_replay_samples_what_the_host_replay_samples():
    import torch

    from pcnn_explore.agents.replay import Batch, DeviceBatch

    host, dev = _wrapped_replay(), _wrapped_replay(device="cpu")
    _same_state(host, dev)
    assert isinstance(dev.frames, torch.Tensor) and isinstance(host.frames, np.ndarray)
    a, b = host.sample(32, np.random.default_rng(7)), dev.sample(32, np.random.default_rng(7))
    assert isinstance(a, Batch) and isinstance(b, DeviceBatch)
    assert b.obs_slots.shape == (32, 4) and b.obs.dtype == torch.uint8
    _samples_equal(host, dev, 7)
    np.testing.assert_array_equal(dev.stacked(np.arange(10)).numpy(), host.stacked(np.arange(10)))
    # the two storage modes share one checkpoint format
    other = ReplayBuffer(40, (4, 3, 5), stack=4, gamma=0.9, device="cpu")
    other.load_state_dict(host.state_dict())
    _same_state(host, other)
    host2 = ReplayBuffer(40, (4, 3, 5), stack=4, gamma=0.9)
    host2.load_state_dict(dev.state_dict())
    _same_state(dev, host2)


def test_device_frames_stage_runs_of_slots_and_wrap_around():
    from pcnn_explore.agents.replay_storage import DeviceFrames

    store = DeviceFrames(5, (1, 2), "cpu", stage=3)
    for slot, v in zip([3, 4, 0, 1, 2, 3, 0], range(1, 8)):  # a run wrapping the ring, then a jump
        store.write(slot, np.full((1, 2), v, np.uint8))
    store.flush()
    np.testing.assert_array_equal(store.tensor[:, 0, 0].numpy(), [7, 4, 5, 6, 2])


def test_replay_device_is_none_without_cuda():
    from pcnn_explore.agents.replay import replay_device

    assert replay_device("cpu", 1000, (4, 84, 84), 4) is None


def test_pack_round_trips_any_array():
    from pcnn_explore.agents import replay_storage as rs

    rng = np.random.default_rng(0)
    cases = [(rng.integers(0, 256, (300, 1, 8, 8), dtype=np.uint8), True), (np.zeros((0, 1, 84, 84), np.uint8), True),
             (rng.random(1000).astype(np.float32), False), (rng.integers(-5, 5, 300), True),
             (rng.random(20) > 0.5, False), (np.arange(3, dtype=np.int64), False)]
    for array, delta in cases:
        back = rs.unpack(rs.pack(array, delta))
        assert back.dtype == array.dtype and back.shape == array.shape
        np.testing.assert_array_equal(back, array)
    with pytest.raises(ValueError, match="integer"):
        rs.pack(np.zeros(3, np.float32), delta=True)
