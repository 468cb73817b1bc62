"""Environment factories: shapes, the density frame, seeding, settings, bad ids."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

from pcnn_explore.envs import check_env_id, make_env, make_raw_env
from pcnn_explore.envs.frames import to_density_frame


def test_atari_nature_pipeline_and_density_frame():
    env = make_env("ALE/Pong-v5", seed=0, keep_rgb=True)
    obs, info = env.reset()
    assert obs.shape == (4, 84, 84) and obs.dtype == np.uint8
    assert env.observation_space.shape == (4, 84, 84)
    # reset padding: the stack holds four copies of the first frame
    assert all(np.array_equal(obs[0], obs[k]) for k in range(4))
    df = info["density_frame"]
    assert df.shape == (42, 42) and df.dtype == np.uint8 and df.max() <= 7
    assert info["rgb"].shape == (210, 160, 3)
    np.testing.assert_array_equal(df, to_density_frame(info["rgb"]))
    prev = obs
    for _ in range(3):
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        np.testing.assert_array_equal(obs[:3], prev[1:])  # the stack shifts by one processed frame
        np.testing.assert_array_equal(info["density_frame"], to_density_frame(info["rgb"]))
        prev = obs
    env.close()


def test_atari_settings_defaults_and_overrides():
    env = make_env("ALE/Pong-v5", seed=0)
    ale_env = env.unwrapped
    assert ale_env._frameskip == 1  # frame skipping happens in AtariPreprocessing (with max-pooling)
    assert ale_env.ale.getFloat("repeat_action_probability") == pytest.approx(0.25)
    pre = env.get_wrapper_attr("terminal_on_life_loss")
    assert pre is False
    assert env.get_wrapper_attr("frame_skip") == 4 and env.get_wrapper_attr("noop_max") == 30
    env.close()
    env = make_env("ALE/Pong-v5", seed=0, sticky_actions=0.0, terminal_on_life_loss=True)
    assert env.unwrapped.ale.getFloat("repeat_action_probability") == 0.0
    assert env.get_wrapper_attr("terminal_on_life_loss") is True
    env.close()


def test_same_seed_same_trajectory_and_reseeding():
    def run(seed):
        env = make_env("ALE/Pong-v5", seed=seed)
        obs, _ = env.reset()
        frames = [obs]
        for a in [1, 2, 3, 2, 1, 0, 2, 3] * 4:
            frames.append(env.step(a)[0])
        env.close()
        return np.stack(frames)

    np.testing.assert_array_equal(run(5), run(5))
    env = make_env("MiniGrid-DoorKey-8x8-v0", seed=1)
    first = env.reset()[0]
    other = env.reset()[0]  # later resets continue the seeded RNG: a new layout
    again = env.reset(seed=1)[0]
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_minigrid_pixels_density_frame_and_options():
    env = make_env("MiniGrid-DoorKey-8x8-v0", seed=0, keep_rgb=True)
    obs, info = env.reset()
    assert obs.shape == (3, 32, 32) and obs.dtype == np.uint8  # 8x8 cells, 4 pixels each
    np.testing.assert_array_equal(obs, info["rgb"].transpose(2, 0, 1))
    ref = env.unwrapped.get_frame(highlight=False, tile_size=4)  # MiniGrid's own full render
    np.testing.assert_array_equal(info["rgb"], ref)
    np.testing.assert_array_equal(info["density_frame"], to_density_frame(ref))
    obs2, *_, info2 = env.step(2)
    np.testing.assert_array_equal(info2["density_frame"],
                                  to_density_frame(env.unwrapped.get_frame(highlight=False, tile_size=4)))
    assert env.action_space.n == 7
    env = make_env("MiniGrid-DoorKey-8x8-v0", seed=0, frame_stack=2, n_actions=3, tile_size=2)
    obs, _ = env.reset()
    assert obs.shape == (6, 16, 16) and env.action_space.n == 3
    np.testing.assert_array_equal(obs[:3], obs[3:])
    env = make_env("MiniGrid-DoorKey-8x8-v0", seed=0, view="partial")
    assert env.reset()[0].shape == (3, 28, 28)  # 7x7 egocentric view


@pytest.mark.parametrize("env_id", ["MiniGrid-DoorKey-8x8-v0", "MiniGrid-MultiRoom-N4-S5-v1"])
def test_minigrid_render_matches_minigrid_own_render_along_a_rollout(env_id):
    env = make_env(env_id, seed=3, tile_size=5, keep_rgb=True)
    obs, info = env.reset()
    rng = np.random.default_rng(0)
    for t in range(60):
        ref = env.unwrapped.get_frame(highlight=False, tile_size=5)
        np.testing.assert_array_equal(info["rgb"], ref, err_msg=f"step {t}")
        np.testing.assert_array_equal(obs, ref.transpose(2, 0, 1))
        obs, _, term, trunc, info = env.step(int(rng.integers(6)))  # includes pickup and toggle
        if term or trunc:
            obs, info = env.reset()


def test_raw_env_observations_are_rgb():
    env = make_raw_env("ALE/Pong-v5", seed=0)
    obs, info = env.reset()
    assert obs.shape == (210, 160, 3)
    np.testing.assert_array_equal(info["density_frame"], to_density_frame(obs))
    obs, *_, info = env.step(0)
    np.testing.assert_array_equal(info["density_frame"], to_density_frame(obs))
    env = make_raw_env("MiniGrid-Empty-8x8-v0", seed=0)
    obs, info = env.reset()
    assert obs.shape == (64, 64, 3) and env.observation_space.shape == (64, 64, 3)
    np.testing.assert_array_equal(info["density_frame"], to_density_frame(obs))


@pytest.mark.parametrize("env_id, message", [
    ("ALE/Pongg-v5", "unknown env id 'ALE/Pongg-v5'.*did you mean ALE/Pong-v5"),
    ("ALE/Pong-v4", "unknown env id"),
    ("CartPole-v1", "unsupported env id.*ALE/Pong-v5"),
    ("MiniGrid-DoorKey-9x9-v0", "did you mean MiniGrid-DoorKey-8x8-v0"),
])
def test_bad_env_ids_are_rejected_with_the_fix(env_id, message):
    with pytest.raises(ValueError, match=message):
        make_env(env_id)
    with pytest.raises(ValueError, match=message):
        make_raw_env(env_id)


def test_bad_arguments():
    with pytest.raises(TypeError, match="env id must be a string"):
        check_env_id(3)
    with pytest.raises(ValueError, match="seed"):
        make_env("MiniGrid-Empty-5x5-v0", seed=-1)
    with pytest.raises(ValueError, match="sticky_actions"):
        make_env("ALE/Pong-v5", sticky_actions=1.5)
    with pytest.raises(ValueError, match="frame_stack"):
        make_env("MiniGrid-Empty-5x5-v0", frame_stack=0)
    with pytest.raises(ValueError, match="view"):
        make_env("MiniGrid-Empty-5x5-v0", view="top")
    with pytest.raises(ValueError, match="n_actions"):
        make_env("MiniGrid-Empty-5x5-v0", n_actions=9)


def test_serpentine_task_is_known_to_make_env_and_the_cli():
    from pcnn_explore.envs import check_env_id, make_env

    check_env_id("MiniGrid-Serpentine-7x7-v0")  # registered with the other MiniGrid ids
    env = make_env("MiniGrid-Serpentine-7x7-v0", seed=0)
    _, info = env.reset(seed=0)
    assert info["density_frame"].shape == (42, 42)
    env.close()


def test_a_deep_sea_env_imports_neither_ale_py_nor_minigrid():
    """Start-up of a DeepSea run: checking, making and stepping its env loads no Atari or MiniGrid
    package (each costs seconds of imports); a MiniGrid id then registers MiniGrid's ids."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from pcnn_explore.envs import check_env_id, make_env\n"
            "env = make_env('DeepSea-8-v0', seed=0); env.reset(seed=0); env.step(0)\n"
            "print(sorted(m for m in ('ale_py', 'minigrid', 'pygame') if m in sys.modules))\n"
            "check_env_id('MiniGrid-Serpentine-7x7-v0')\n"
            "print(sorted(m for m in ('ale_py', 'minigrid') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "['minigrid']"]


def test_the_envs_package_names_its_modules_objects_and_the_old_paths_are_gone():
    """``pcnn_explore.envs`` keeps the old module's public names; ``pcnn_explore.deep_sea`` and
    ``pcnn_explore.frames`` (the old import paths) are gone: the modules live in the ``envs`` package."""
    import pcnn_explore.envs as envs
    from pcnn_explore.envs import deep_sea, factory, frames, ids, info

    for name in envs.__all__ + ["EXAMPLE_IDS", "DENSITY_SHAPE", "MONTEZUMA_ROOM_RAM", "MiniGridPixels"]:
        assert getattr(envs, name) is not None, name
    assert envs.make_env is factory.make_env and envs.check_env_id is ids.check_env_id
    assert envs.DensityFrameInfo is info.DensityFrameInfo and envs.DEEP_SEA_MMC_BETA == deep_sea.DEEP_SEA_MMC_BETA
    assert deep_sea.deep_sea_size("DeepSea-12-v0") == 12 and frames.DENSITY_LEVELS == 8
    for old in ("pcnn_explore.deep_sea", "pcnn_explore.frames"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
    with pytest.raises(AttributeError, match="make_envs"):
        envs.make_envs  # noqa: B018


def test_importing_the_frames_module_loads_no_env_library():
    """The ``envs`` package imports its names on first use: the density frame's module alone loads
    neither gymnasium nor an emulator."""
    import subprocess
    import sys

    code = ("import sys\nimport pcnn_explore.envs.frames\n"
            "print(sorted(m for m in ('gymnasium', 'ale_py', 'minigrid') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip() == "[]"


def test_montezuma_script_actions_by_hand():
    from pcnn_explore.envs.montezuma import MONTEZUMA_SCRIPT, script_actions
    from pcnn_explore.record import MONTEZUMA_SCRIPT as recorded_script

    np.testing.assert_array_equal(script_actions((("RIGHT", 2), ("LEFTFIRE", 1), ("NOOP", 0), ("DOWN", 1))),
                                  [3, 3, 12, 5])
    assert script_actions(()).dtype == np.int64 and recorded_script is MONTEZUMA_SCRIPT
    assert len(script_actions(MONTEZUMA_SCRIPT)) == sum(repeat for _, repeat in MONTEZUMA_SCRIPT)
    with pytest.raises(KeyError):
        script_actions((("JUMP", 1),))
