"""Frame streams: alignment of frames/actions/rewards/episode starts, caching, validation."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pcnn_explore.streams import frame_stream as streams
from pcnn_explore.streams import load_stream, stream_path, stream_settings

torch.set_num_threads(1)

N = 24  # agent steps: enough to exercise everything, quick to generate


class _EpisodicFakeEnv:
    """A 3-action env whose RGB observation has every value equal to 32 * (steps since reset) + 16;
    episodes end after 3 steps, reward = the action index."""

    def __init__(self):
        import gymnasium

        self.action_space = gymnasium.spaces.Discrete(3)
        self.t = 0
        self.reset_seeds = []

    def reset(self, seed=None):
        self.reset_seeds.append(seed)
        self.t = 0
        return self._obs(), {}

    def _obs(self):
        return np.full((210, 160, 3), 32 * self.t + 16, np.uint8)

    def step(self, action):
        self.t += 1
        return self._obs(), float(action), self.t == 3, False, {}

    def close(self):
        pass


def test_frames_actions_rewards_and_episode_starts_are_aligned(monkeypatch, tmp_path):
    import gymnasium

    fake = _EpisodicFakeEnv()
    monkeypatch.setattr(gymnasium, "make", lambda *a, **k: fake)
    s = load_stream("Freeway", 7, seed=5, cache_dir=tmp_path)
    # frames[i] is the state in which actions[i] is taken: levels 0,1,2 then reset
    assert s.frames[:, 0, 0].tolist() == [0, 1, 2, 0, 1, 2, 0]
    assert (s.frames == s.frames[:, :1, :1]).all()
    assert s.episode_starts.tolist() == [True, False, False, True, False, False, True]
    assert s.episode_start_indices.tolist() == [0, 3, 6]
    assert s.rewards.tolist() == s.actions.astype(float).tolist()
    assert fake.reset_seeds == [5, None, None]  # seeded once, then the env's own generator
    assert s.n_episodes == 3


def test_cache_hit_returns_the_same_stream(tmp_path):
    first = load_stream("Freeway", N, seed=0, cache_dir=tmp_path)
    assert not first.from_cache and first.path.is_file()
    assert first.frames.shape == (N, 42, 42) and first.frames.dtype == np.uint8
    assert first.frames.max() <= 7 and first.episode_starts[0]
    second = load_stream("Freeway", N, seed=0, cache_dir=tmp_path)
    assert second.from_cache and second.path == first.path
    for name in ("frames", "episode_starts", "actions", "rewards", "phases", "action_probs"):
        np.testing.assert_array_equal(getattr(second, name), getattr(first, name))
    assert second.settings == first.settings


def test_generation_is_deterministic_and_seed_dependent(tmp_path):
    a = load_stream("Freeway", N, seed=0, cache_dir=tmp_path / "a")
    b = load_stream("Freeway", N, seed=0, cache_dir=tmp_path / "b")
    c = load_stream("Freeway", N, seed=1, cache_dir=tmp_path / "a")
    np.testing.assert_array_equal(a.frames, b.frames)
    np.testing.assert_array_equal(a.actions, b.actions)
    assert not np.array_equal(a.actions, c.actions)


def test_cache_file_name_holds_the_settings(tmp_path):
    s = stream_settings("Pong", 6000, seed=3, policy="biased", switch_every=4000, frameskip=4,
                        sticky_actions=0.0)
    assert stream_path(s, tmp_path).name == "Pong_n6000_seed3_biased4000_fs4_sticky0_v3.npz"
    assert stream_path(s, tmp_path).parent == tmp_path / "streams"


def test_default_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PCNN_EXPLORE_CACHE", str(tmp_path / "c"))
    assert streams.default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("PCNN_EXPLORE_CACHE")
    assert str(streams.default_cache_dir()).endswith(".cache/pcnn-explore")


def test_settings_mismatch_regenerates(tmp_path):
    truth = load_stream("Freeway", N, seed=0, cache_dir=tmp_path / "truth")
    other = load_stream("Freeway", N, seed=1, cache_dir=tmp_path)
    # plant the seed-1 file where the seed-0 stream belongs: it must not be trusted
    target = stream_path(truth.settings, tmp_path)
    target.write_bytes(other.path.read_bytes())
    again = load_stream("Freeway", N, seed=0, cache_dir=tmp_path)
    assert not again.from_cache
    assert again.settings["seed"] == 0
    np.testing.assert_array_equal(again.actions, truth.actions)
    np.testing.assert_array_equal(again.frames, truth.frames)
    assert load_stream("Freeway", N, seed=0, cache_dir=tmp_path).from_cache  # rewritten correctly


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_corrupt_cache_file_regenerates(tmp_path, damage):
    truth = load_stream("Freeway", N, seed=0, cache_dir=tmp_path)
    data = truth.path.read_bytes()
    damaged = {"garbage": b"not an npz file", "truncated": data[: len(data) // 2], "empty": b""}[damage]
    truth.path.write_bytes(damaged)
    again = load_stream("Freeway", N, seed=0, cache_dir=tmp_path)
    assert not again.from_cache
    np.testing.assert_array_equal(again.frames, truth.frames)
    assert load_stream("Freeway", N, seed=0, cache_dir=tmp_path).from_cache


def test_biased_policy_switches_every_phase(tmp_path):
    s = load_stream("Freeway", 10, seed=2, policy="biased", switch_every=4, cache_dir=tmp_path)
    assert s.phases.tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
    assert s.action_probs.shape == (3, 3)
    np.testing.assert_allclose(s.action_probs.sum(axis=1), 1.0)
    assert not np.allclose(s.action_probs[0], s.action_probs[1])  # phases differ
    r = load_stream("Freeway", 10, seed=2, cache_dir=tmp_path)
    np.testing.assert_allclose(r.action_probs, [[1 / 3, 1 / 3, 1 / 3]])
    assert (r.phases == 0).all()


def test_draw_actions_inverts_each_phases_cdf():
    probs = np.array([[0.25, 0.5, 0.25], [0.0, 0.0, 1.0]])
    phases = np.array([0, 0, 0, 0, 0, 1, 1])
    uniforms = np.array([0.1, 0.25, 0.6, 0.75, 0.99, 0.0, 0.999])
    assert streams.draw_actions(probs, phases, uniforms).tolist() == [0, 1, 1, 2, 2, 2, 2]


def test_biased_phase_probabilities_are_dirichlet_draws():
    probs = streams._phase_probabilities(np.random.default_rng(0), "biased", 500, 4)
    assert probs.shape == (500, 4)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    # symmetric Dirichlet(0.5): each coordinate has mean 1/4 and variance (1/4)(3/4)/(4*0.5+1)
    np.testing.assert_allclose(probs.mean(axis=0), 0.25, atol=0.03)
    np.testing.assert_allclose(probs.var(axis=0), 0.25 * 0.75 / 3.0, rtol=0.2)


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(game="Freewy", n_frames=10), ValueError, "Freeway"),
    (dict(game=3, n_frames=10), TypeError, "game"),
    (dict(game="Freeway", n_frames=0), ValueError, "n_frames"),
    (dict(game="Freeway", n_frames=2.5), TypeError, "n_frames"),
    (dict(game="Freeway", n_frames=True), TypeError, "n_frames"),
    (dict(game="Freeway", n_frames=10, seed=-1), ValueError, "seed"),
    (dict(game="Freeway", n_frames=10, policy="greedy"), ValueError, "biased"),
    (dict(game="Freeway", n_frames=10, policy="biased"), ValueError, "switch_every"),
    (dict(game="Freeway", n_frames=10, switch_every=5), ValueError, "switch_every"),
    (dict(game="Freeway", n_frames=10, policy="biased", switch_every=0), ValueError, "switch_every"),
    (dict(game="Freeway", n_frames=10, frameskip=0), ValueError, "frameskip"),
    (dict(game="Freeway", n_frames=10, sticky_actions=1.5), ValueError, "sticky_actions"),
    (dict(game="Freeway", n_frames=10, sticky_actions="0.25"), TypeError, "sticky_actions"),
])
def test_bad_settings_are_rejected_before_any_work(tmp_path, kwargs, error, words):
    with pytest.raises(error, match=words):
        load_stream(**kwargs, cache_dir=tmp_path)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("policy, switch_every", [("random", None), ("biased", 7)])
def test_shorter_request_is_the_prefix_of_a_cached_longer_stream(tmp_path, policy, switch_every):
    direct = load_stream("Freeway", 15, seed=4, policy=policy, switch_every=switch_every,
                         cache_dir=tmp_path / "direct")
    load_stream("Freeway", N, seed=4, policy=policy, switch_every=switch_every, cache_dir=tmp_path)
    short = load_stream("Freeway", 15, seed=4, policy=policy, switch_every=switch_every, cache_dir=tmp_path)
    assert short.from_cache and len(short) == 15 and short.settings["n_frames"] == 15
    for name in ("frames", "episode_starts", "actions", "rewards", "phases", "action_probs"):
        np.testing.assert_array_equal(getattr(short, name), getattr(direct, name))
    assert not stream_path(short.settings, tmp_path).exists()  # served from the longer file
    # a longer file with other settings (another seed) is not used
    other = load_stream("Freeway", 15, seed=5, policy=policy, switch_every=switch_every, cache_dir=tmp_path)
    assert not other.from_cache


def test_a_changed_frame_conversion_regenerates_the_cache(monkeypatch, tmp_path):
    first = load_stream("Freeway", N, seed=0, cache_dir=tmp_path)
    assert len(first.settings["frames"]) == 12
    assert load_stream("Freeway", N, seed=0, cache_dir=tmp_path).from_cache
    # a conversion that differs (here: every level one higher, capped) must not reuse the file
    original = streams.to_density_frame
    monkeypatch.setattr(streams, "to_density_frame", lambda *a: np.minimum(original(*a) + 1, 7).astype(np.uint8))
    again = load_stream("Freeway", N, seed=0, cache_dir=tmp_path)
    assert not again.from_cache
    assert again.settings["frames"] != first.settings["frames"]
    np.testing.assert_array_equal(again.frames, np.minimum(first.frames + 1, 7))


#: frames_fingerprint() of the float conversion that put uniform greys 32, 64, ... one level low
OLD_FLOAT_FINGERPRINT = "63e80bfd6e0e"


def test_the_fingerprint_sees_bin_edge_errors(monkeypatch):
    # the old float pipeline differs from the exact one only on bin edges: the fingerprint must notice
    from pcnn_explore.envs.frames import area_resize, greyscale, quantise

    exact = streams.frames_fingerprint()
    monkeypatch.setattr(streams, "to_density_frame",
                        lambda x, h, w, levels: quantise(area_resize(greyscale(x), h, w), levels))
    assert streams.frames_fingerprint() != exact


def test_a_stream_cached_with_the_old_fingerprint_is_regenerated(monkeypatch, tmp_path):
    import gymnasium

    monkeypatch.setattr(gymnasium, "make", lambda *a, **k: _EpisodicFakeEnv())
    first = load_stream("Freeway", 7, seed=5, cache_dir=tmp_path)
    assert first.settings["frames"] != OLD_FLOAT_FINGERPRINT
    # rewrite the cached file as the float conversion would have: its fingerprint and a frame one level low
    old = dict(first.settings, frames=OLD_FLOAT_FINGERPRINT)
    frames = first.frames.copy()
    frames[1] -= 1
    streams._save(streams.FrameStream(frames=frames, episode_starts=first.episode_starts, actions=first.actions,
                                      rewards=first.rewards, phases=first.phases, action_probs=first.action_probs,
                                      settings=old), first.path)
    again = load_stream("Freeway", 7, seed=5, cache_dir=tmp_path)
    assert not again.from_cache
    np.testing.assert_array_equal(again.frames, first.frames)
    assert load_stream("Freeway", 7, seed=5, cache_dir=tmp_path).from_cache  # rewritten with the new fingerprint


def test_cache_files_get_the_mode_of_a_plain_file(monkeypatch, tmp_path):
    import os

    import gymnasium

    monkeypatch.setattr(gymnasium, "make", lambda *a, **k: _EpisodicFakeEnv())
    old = os.umask(0o022)
    try:
        s = load_stream("Freeway", 7, seed=5, cache_dir=tmp_path)
    finally:
        os.umask(old)
    assert s.path.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in s.path.parent.iterdir()) == [s.path.name]  # no temp file left
