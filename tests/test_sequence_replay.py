"""Sequence replay: hand-checked windows, episode boundaries under ring wrap, bit-exact state."""
from __future__ import annotations

import numpy as np
import pytest

from pcnn_explore.agents.sequence_replay import SequenceReplay, SequenceShard
from pcnn_explore.checkpoint import load, save_atomic


def _o(v: int) -> np.ndarray:
    return np.full((1, 1, 1), v, np.uint8)


def _filled_shard() -> SequenceShard:
    """Episode 0: x = 10 ... 15, 5 transitions, terminal; episode 1: x = 20, 21, 22, time limit;
    episode 2 running: x = 30, 31. Action t % 2, mu 0.5, reward t (t: the step in the episode)."""
    s = SequenceShard(20, (1, 1, 1), stack=1, seq_len=3, burn_in=2)
    for base, n, terminal, end in ((10, 5, True, True), (20, 2, False, True), (30, 1, False, False)):
        for t in range(n):
            last = t == n - 1
            s.add(_o(base + t), t % 2, 0.5, float(t), terminal and last, _o(base + t + 1), end and last)
    return s


def test_windows_hand_checked():
    b = _filled_shard().gather(np.array([0, 3, 6, 7, 9]))
    # window positions hold offsets -2 ... 3 from the start (burn_in 2, seq_len 3)
    np.testing.assert_array_equal(b.obs[:, :, 0, 0, 0], [
        [10, 10, 10, 11, 12, 13],  # episode start: no burn-in, padding repeats x_0
        [11, 12, 13, 14, 15, 15],  # 2 burn-in steps; ends at the terminal, then repeats x_5
        [20, 20, 20, 21, 22, 22],  # ends at the time limit: bootstraps from x = 22
        [20, 20, 21, 22, 22, 22],  # one burn-in step (the episode start)
        [30, 30, 30, 31, 31, 31],  # running episode: ends at its newest observation
    ])
    np.testing.assert_array_equal(b.first, [[1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0],
                                            [1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0]])
    np.testing.assert_array_equal(b.length, [3, 2, 2, 1, 1])
    np.testing.assert_array_equal(b.mask, [[1, 1, 1], [1, 1, 0], [1, 1, 0], [1, 0, 0], [1, 0, 0]])
    np.testing.assert_array_equal(b.action, [[0, 1, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(b.reward, [[0, 1, 2], [3, 4, 0], [0, 1, 0], [1, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(b.terminated, [[0, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(b.mu, [[.5, .5, .5], [.5, .5, 1], [.5, .5, 1], [.5, 1, 1], [.5, 1, 1]])
    assert b.burn_in == 2 and b.obs.dtype == np.uint8


def test_only_transitions_start_sequences():
    s = _filled_shard()
    starts = s.starts(500, np.random.default_rng(0))
    assert set(starts.tolist()) == {0, 1, 2, 3, 4, 6, 7, 9}  # not the final slots 5, 8 nor the newest 10


def _frame(env: int, episode: int, t: int) -> np.ndarray:
    return np.array([env * 40 + episode % 40, t], np.uint8).reshape(2, 1, 1)


def _obs(env: int, episode: int, t: int) -> np.ndarray:  # a stack of 2 frames, the oldest first
    return np.concatenate([_frame(env, episode, max(t - 1, 0)), _frame(env, episode, t)])


def _fill(replay: SequenceReplay, steps: int, seed: int) -> None:
    """Episodes of random length per env; action (t + env) % 3, reward t / 10, mu 1 / (1 + t % 4)."""
    rng = np.random.default_rng(seed)
    n = len(replay.shards)
    episode, t, length = [0] * n, [0] * n, [int(rng.integers(1, 12)) for _ in range(n)]
    for _ in range(steps):
        for e in range(n):
            k, end = t[e], t[e] + 1 == length[e]
            terminal = end and bool(rng.random() < 0.5)
            replay.add(e, _obs(e, episode[e], k), (k + e) % 3, 1 / (1 + k % 4), k / 10, terminal,
                       _obs(e, episode[e], k + 1), end)
            t[e] += 1
            if end:
                episode[e], t[e], length[e] = episode[e] + 1, 0, int(rng.integers(1, 12))


def test_sequences_stay_in_their_episode_after_the_ring_wraps():
    replay = SequenceReplay(2, 60, (4, 1, 1), stack=2, seq_len=5, burn_in=3)
    _fill(replay, 97, seed=1)  # 97 transitions per env in 30 slots: wrapped several times
    rng = np.random.default_rng(2)
    for _ in range(20):
        b = replay.sample(16, rng)
        ids, steps = b.obs[:, :, 0::2, 0, 0].astype(int), b.obs[:, :, 1::2, 0, 0].astype(int)  # (B, W, 2 frames)
        for i in range(len(b.index)):
            real = np.flatnonzero(b.first[i])[-1]  # the burn-in's first observation
            last = b.burn_in + b.length[i]  # the bootstrap observation
            assert (ids[i, real:] == ids[i, real, 1]).all()  # one episode (and one env) throughout
            # consecutive steps from the burn-in's start to x_n, each stack = (max(t - 1, 0), t)
            np.testing.assert_array_equal(steps[i, real:last + 1, 1], steps[i, real, 1] + np.arange(last + 1 - real))
            np.testing.assert_array_equal(steps[i, real:, 0], np.maximum(steps[i, real:, 1] - 1, 0))
            t0 = steps[i, real, 1]
            if real > 0 and t0 > 0:  # a burn-in cut short before its episode's start: x_{t0-1} or its stack is gone
                stored = {tuple(f) for f in replay.shards[ids[i, real, 1] // 40].frames[:, :, 0, 0].tolist()}
                assert not {(ids[i, real, 1], t0 - 1), (ids[i, real, 1], max(t0 - 2, 0))} <= stored
            t = steps[i, b.burn_in:b.burn_in + b.length[i], 1]
            env = ids[i, real, 1] // 40
            np.testing.assert_array_equal(b.action[i, :b.length[i]], (t + env) % 3)
            np.testing.assert_allclose(b.reward[i, :b.length[i]], t / 10, rtol=1e-6)
            np.testing.assert_allclose(b.mu[i, :b.length[i]], 1 / (1 + t % 4), rtol=1e-6)
            assert b.terminated[i, :b.length[i] - 1].sum() == 0  # a terminal can only end a sequence


def test_stack_reaching_into_overwritten_slots_is_not_sampled():
    s = SequenceShard(10, (4, 1, 1), stack=2, seq_len=2, burn_in=1)
    for episode, n in ((0, 7), (1, 4)):  # episode 0 in slots 0 ... 7, episode 1 in 8, 9, 0, 1, 2
        for t in range(n):
            s.add(_obs(0, episode, t), 0, 1.0, 0.0, False, _obs(0, episode, t + 1), t == n - 1)
    valid = s._valid(np.arange(10))
    # episode 0's x_3 (slot 3) needs x_2, overwritten by episode 1's final x_4: not a start;
    # its x_4 ... x_6 are; slots 2 and 7 hold final observations
    np.testing.assert_array_equal(valid, [True, True, False, False, True, True, True, False, True, True])
    b = s.gather(np.array([4]))
    # window offsets -1 ... 2; no burn-in (x_3 cannot be stacked), so x_4 is repeated before the start
    np.testing.assert_array_equal(b.obs[0, :, 1::2, 0, 0], [[3, 4], [3, 4], [4, 5], [5, 6]])
    np.testing.assert_array_equal(b.first[0], [1, 1, 0, 0])


def test_state_round_trips_bit_for_bit(tmp_path):
    a = SequenceReplay(2, 60, (4, 1, 1), stack=2, seq_len=5, burn_in=3)
    _fill(a, 41, seed=3)
    save_atomic({"replay": a.state_dict(defer=True)}, tmp_path / "r.pt")
    b = SequenceReplay(2, 60, (4, 1, 1), stack=2, seq_len=5, burn_in=3)
    _fill(b, 7, seed=9)  # different contents, overwritten by the load
    b.load_state_dict(load(tmp_path / "r.pt")["replay"])
    for sa, sb in zip(a.shards, b.shards):
        for name in ("frames",) + SequenceShard._ARRAYS:
            np.testing.assert_array_equal(getattr(sa, name), getattr(sb, name), err_msg=name)
        assert (sa.cursor, sa.written, sa.n_episodes, sa._open, sa._last) == \
               (sb.cursor, sb.written, sb.n_episodes, sb._open, sb._last)
    _fill(a, 13, seed=4)
    _fill(b, 13, seed=4)
    ra, rb = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(3):
        x, y = a.sample(8, ra), b.sample(8, rb)
        for f in ("obs", "first", "action", "mu", "reward", "terminated", "mask", "length", "index"):
            np.testing.assert_array_equal(getattr(x, f), getattr(y, f), err_msg=f)


def test_rejects_mismatched_state_and_bad_mu():
    a = SequenceReplay(1, 30, (1, 1, 1), seq_len=3, burn_in=2)
    with pytest.raises(ValueError, match="mu"):
        a.add(0, _o(1), 0, 0.0, 0.0, False, _o(2), False)
    b = SequenceReplay(1, 30, (1, 1, 1), seq_len=4, burn_in=2)
    with pytest.raises(ValueError, match="seq_len"):
        b.load_state_dict(a.state_dict())
    assert not a.can_sample()
    with pytest.raises(ValueError, match="no transition"):
        a.sample(2, np.random.default_rng(0))


def _long(shard: SequenceShard, start: int, stop: int, end_at: int | None = None) -> None:
    """Transitions t = start ... stop - 1 of episode 0 of env 0: action t % 3, reward t, mu 1 / (1 + t % 4)."""
    for t in range(start, stop):
        shard.add(_obs(0, 0, t), t % 3, 1 / (1 + t % 4), float(t), False, _obs(0, 0, t + 1), t == end_at)


def test_episode_three_times_the_capacity_is_stored_and_never_read_across_its_overwritten_slots():
    s = SequenceShard(10, (4, 1, 1), stack=2, seq_len=2, burn_in=1)
    _long(s, 0, 30)  # x_0 ... x_30 in 10 slots: x_t in slot t % 10, x_21 ... x_30 stored
    assert s._open and s.cursor == 1 and s.written == 31
    # x_21 needs x_20 (overwritten by x_30) for its stack; x_30 is the newest, without a transition
    np.testing.assert_array_equal(s._valid(np.arange(10)), [False, False] + [True] * 8)
    b = s.gather(np.array([2, 9]))
    # window offsets -1 ... 2. x_22: no burn-in (x_21 stored, but not its stack). x_29: one burn-in step, and
    # its sequence stops at the newest observation x_30 (the slot after it, x_21's, is not read)
    np.testing.assert_array_equal(b.obs[:, :, 1::2, 0, 0], [[[21, 22], [21, 22], [22, 23], [23, 24]],
                                                            [[27, 28], [28, 29], [29, 30], [29, 30]]])
    np.testing.assert_array_equal(b.first, [[1, 1, 0, 0], [1, 0, 0, 0]])
    np.testing.assert_array_equal(b.length, [2, 1])
    np.testing.assert_array_equal(b.reward, [[22, 23], [29, 0]])
    rng = np.random.default_rng(0)
    for t in range(30, 45):  # every sampled window holds consecutive steps of the episode, stacks included
        _long(s, t, t + 1, end_at=44)
        b = s.gather(s.starts(32, rng))
        steps = b.obs[:, :, 1::2, 0, 0].astype(int)  # (B, W, 2): the stack's steps (t - 1, t)
        for i in range(len(b.index)):
            real = np.flatnonzero(b.first[i])[-1]
            last = b.burn_in + b.length[i]
            np.testing.assert_array_equal(steps[i, real:last + 1, 1], steps[i, real, 1] + np.arange(last + 1 - real))
            np.testing.assert_array_equal(steps[i, :, 0], steps[i, :, 1] - 1)
            assert steps[i, real, 0] > t + 1 - 10  # never the overwritten step before the oldest stored one
    assert not s._open


def test_state_in_the_middle_of_an_episode_longer_than_the_ring_round_trips_bit_for_bit(tmp_path):
    a = SequenceShard(10, (4, 1, 1), stack=2, seq_len=2, burn_in=1)
    _long(a, 0, 17)
    save_atomic({"replay": a.state_dict()}, tmp_path / "r.pt")
    b = SequenceShard(10, (4, 1, 1), stack=2, seq_len=2, burn_in=1)
    _long(b, 0, 3, end_at=2)
    b.load_state_dict(load(tmp_path / "r.pt")["replay"])
    for shard in (a, b):
        _long(shard, 17, 33, end_at=32)
    for name in ("frames",) + SequenceShard._ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert (a.cursor, a.written, a.n_episodes, a._open, a._last) == (b.cursor, b.written, b.n_episodes, b._open, b._last)
    x, y = a.gather(a.starts(16, np.random.default_rng(1))), b.gather(b.starts(16, np.random.default_rng(1)))
    for f in ("obs", "first", "action", "mu", "reward", "terminated", "mask", "length", "index"):
        np.testing.assert_array_equal(getattr(x, f), getattr(y, f), err_msg=f)
