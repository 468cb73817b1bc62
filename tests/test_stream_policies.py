"""Streams of agents that move through the game: the Montezuma explorer (route with cloned-state
branches) and a trained checkpoint; determinism, rooms visited, cache keys, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pcnn_explore.streams import policies as sp
from pcnn_explore.streams import load_stream, stream_path, stream_settings

torch.set_num_threads(1)

MZ = "MontezumaRevenge"


def test_the_route_alone_visits_rooms_1_2_6_5_and_returns(monkeypatch):
    """Without branches the open-loop route goes 1 -> 2 -> 6 -> 5 -> 6 -> 2 -> 1, losing no life."""
    monkeypatch.setattr(sp, "BRANCH_EVERY", 10**9)
    settings = stream_settings(MZ, len(sp.route_actions()), policy="explorer")
    arrays = sp.play_explorer(settings)
    rooms = arrays["rooms"]
    visits = [int(r) for i, r in enumerate(rooms) if i == 0 or r != rooms[i - 1]]
    assert visits == [1, 2, 1, 2, 6, 5, 6, 2, 1]
    assert not arrays["in_branch"].any() and arrays["episode_starts"].sum() == 1
    assert arrays["rewards"].sum() == 400  # key (100) and door (300)


def test_explorer_stream_is_deterministic_branches_and_restores(tmp_path):
    a = load_stream(MZ, 600, seed=1, policy="explorer", cache_dir=tmp_path / "a")
    b = load_stream(MZ, 600, seed=1, policy="explorer", cache_dir=tmp_path / "b")
    c = load_stream(MZ, 600, seed=2, policy="explorer", cache_dir=tmp_path / "a")
    np.testing.assert_array_equal(a.frames, b.frames)
    np.testing.assert_array_equal(a.actions, b.actions)
    np.testing.assert_array_equal(a.in_branch, b.in_branch)
    assert not np.array_equal(a.actions, c.actions)
    assert 0.1 < a.in_branch.mean() < 0.7  # branches are part of the stream, the route the rest
    # the route frames, with the branches cut out, are the route alone: restoring resynchronises it
    route = sp.route_actions()
    np.testing.assert_array_equal(a.actions[~a.in_branch][:len(route)], route[:(~a.in_branch).sum()])
    assert set(np.unique(a.rooms)) >= {1, 2, 6}
    assert a.settings["sticky_actions"] == 0.0 and a.settings["route"] == sp.route_fingerprint()


def test_explorer_cache_key_and_prefix(tmp_path):
    long = load_stream(MZ, 300, seed=0, policy="explorer", cache_dir=tmp_path)
    assert long.path.name == "MontezumaRevenge_n300_seed0_explorer_fs4_sticky0_v3.npz"
    again = load_stream(MZ, 300, seed=0, policy="explorer", cache_dir=tmp_path)
    assert again.from_cache
    np.testing.assert_array_equal(again.rooms, long.rooms)
    np.testing.assert_array_equal(again.in_branch, long.in_branch)
    short = load_stream(MZ, 120, seed=0, policy="explorer", cache_dir=tmp_path)
    assert short.from_cache and len(short.rooms) == 120
    np.testing.assert_array_equal(short.frames, long.frames[:120])
    # the random stream of the same game is another file, and has no rooms
    rnd = load_stream(MZ, 20, seed=0, cache_dir=tmp_path)
    assert rnd.rooms is None and "random" in rnd.path.name


def test_a_changed_route_regenerates_the_explorer_stream(tmp_path, monkeypatch):
    first = load_stream(MZ, 50, seed=0, policy="explorer", cache_dir=tmp_path)
    monkeypatch.setattr(sp, "MONTEZUMA_EXPLORER_ROUTE", sp.MONTEZUMA_EXPLORER_ROUTE[:-1])
    monkeypatch.setattr(sp, "route_fingerprint", lambda route=None: "other")
    again = load_stream(MZ, 50, seed=0, policy="explorer", cache_dir=tmp_path)
    assert first.path == again.path and not again.from_cache


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(game="Freeway", n_frames=10, policy="explorer"), ValueError, "MontezumaRevenge only"),
    (dict(game=MZ, n_frames=10, policy="explorer", sticky_actions=0.25), ValueError, "sticky_actions=0"),
    (dict(game=MZ, n_frames=10, policy="checkpoint:/no/such/run"), FileNotFoundError, "no policy at"),
    (dict(game=MZ, n_frames=10, policy="greedy"), ValueError, "checkpoint:PATH"),
])
def test_bad_policies_are_rejected_before_any_work(tmp_path, kwargs, error, words):
    with pytest.raises(error, match=words):
        load_stream(**kwargs, cache_dir=tmp_path)
    assert not any(tmp_path.iterdir())


def test_a_file_that_is_no_policy_is_a_clear_error(tmp_path):
    bad = tmp_path / "policy.pt"
    bad.write_bytes(b"not a policy")
    with pytest.raises(ValueError, match="not a policy saved by pcnn-explore train"):
        load_stream(MZ, 10, policy=f"checkpoint:{bad}", cache_dir=tmp_path / "cache")


def test_checkpoint_stream_plays_the_trained_agent(tmp_path):
    from pcnn_explore.cli import main
    from pcnn_explore.run import load_policy

    run = tmp_path / "run"
    assert main(["train", "--env", "ALE/Pong-v5", "--bonus", "none", "--profile", "smoke", "--steps", "40",
                 "--out", str(run), "--no-progress"]) == 0
    s = load_stream("Pong", 30, seed=3, policy=f"checkpoint:{run}", cache_dir=tmp_path / "cache")
    digest = s.settings["checkpoint_sha1"]
    assert s.path.name == f"Pong_n30_seed3_checkpoint-{digest}_fs4_sticky{s.settings['sticky_actions']:g}_v3.npz"
    assert s.frames.shape == (30, 42, 42) and s.episode_starts[0] and (s.rooms == -1).all()
    assert load_stream("Pong", 30, seed=3, policy=f"checkpoint:{run}", cache_dir=tmp_path / "cache").from_cache
    # the recorded actions are the agent's, replayed in its own env
    _, policy = load_policy(run, epsilon=sp.CHECKPOINT_EPSILON, seed=3)
    env = policy.make_env(3)
    obs, info = env.reset(seed=3)
    for t in range(10):
        np.testing.assert_array_equal(info["density_frame"], s.frames[t])
        assert policy(obs) == s.actions[t]
        obs, _, _, _, info = env.step(int(s.actions[t]))
    # another game than the agent's is refused
    with pytest.raises(ValueError, match="trained on 'ALE/Pong-v5'"):
        load_stream("Freeway", 10, policy=f"checkpoint:{run}", cache_dir=tmp_path / "cache")
    assert stream_path(s.settings, tmp_path / "cache") == s.path


def test_checkpoint_stream_resets_a_reactor_lstm_at_every_episode_start(tmp_path, monkeypatch):
    """A recurrent agent's stream: every episode starts from a zero LSTM state, so episode k's actions
    are those of a freshly loaded policy (drawing the same uniforms) in a fresh episode."""
    from pcnn_explore.agents.reactor import ReactorAgent
    from pcnn_explore.cli import main
    from pcnn_explore.run import load_policy

    run = tmp_path / "run"
    assert main(["train", "--env", "DeepSea-6-v0", "--agent", "reactor", "--bonus", "none", "--profile", "smoke",
                 "--steps", "100", "--out", str(run), "--no-progress"]) == 0
    states, real = [], ReactorAgent.policy

    def policy(self, observations, env_indices):  # the LSTM state each step starts from
        states.append((self.h.clone(), self.c.clone()))
        return real(self, observations, env_indices)

    monkeypatch.setattr(ReactorAgent, "policy", policy)
    settings = dict(checkpoint=str(run), epsilon=sp.CHECKPOINT_EPSILON, seed=4, game="DeepSea", n_frames=18,
                    height=6, width=6)
    arrays = sp.play_checkpoint(settings)
    starts = np.flatnonzero(arrays["episode_starts"]).tolist()
    assert starts == [0, 6, 12] and arrays["frames"].shape == (18, 6, 6) and len(states) == 18
    for t in starts:
        assert not states[t][0].any() and not states[t][1].any(), f"step {t} starts from the last episode's state"
    assert states[1][0].any()
    monkeypatch.setattr(ReactorAgent, "policy", real)
    for t in starts:
        _, fresh = load_policy(run, epsilon=sp.CHECKPOINT_EPSILON, seed=4)
        fresh.rng.random(t)  # the uniforms the stream drew before (one per action)
        env = fresh.make_env(4, keep_rgb=False)
        obs, _ = env.reset(seed=4)
        fresh.reset()
        for s in range(t, t + 6):
            assert int(fresh(obs)) == arrays["actions"][s]
            obs, *_ = env.step(int(arrays["actions"][s]))
