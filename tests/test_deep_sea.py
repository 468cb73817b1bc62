"""DeepSea (bsuite's rules): dynamics and rewards by hand on N = 3, the action mapping, the views."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from pcnn_explore.envs.deep_sea import (DEEP_SEA_SIZES, DEFAULT_MAPPING_SEED, DeepSeaEnv, deep_sea_id, deep_sea_size,
                                   optimal_return, right_action)
from pcnn_explore.envs import check_env_id, density_shape, env_defaults, make_env, make_raw_env

C3 = 0.01 / 3  # the cost of one "right" on N = 3

# Every sequence of moves on N = 3, by hand: the cells entered (row, column) and the rewards.
# Right from column 2 stays in column 2 (the wall) and pays +1 there: only RRR gets there.
BY_HAND = {
    "LLL": ([(1, 0), (2, 0), (3, 0)], [0, 0, 0]),
    "LLR": ([(1, 0), (2, 0), (3, 1)], [0, 0, -C3]),
    "LRL": ([(1, 0), (2, 1), (3, 0)], [0, -C3, 0]),
    "LRR": ([(1, 0), (2, 1), (3, 2)], [0, -C3, -C3]),
    "RLL": ([(1, 1), (2, 0), (3, 0)], [-C3, 0, 0]),
    "RLR": ([(1, 1), (2, 0), (3, 1)], [-C3, 0, -C3]),
    "RRL": ([(1, 1), (2, 2), (3, 1)], [-C3, -C3, 0]),
    "RRR": ([(1, 1), (2, 2), (3, 2)], [-C3, -C3, 1 - C3]),
}


def _actions(env: DeepSeaEnv, moves: str) -> list[int]:
    """The action indices that make ``moves`` from the start, read from the env's mapping."""
    row, col, out = 0, 0, []
    for m in moves:
        right = int(env.right[row, col])
        out.append(right if m == "R" else 1 - right)
        col = min(col + 1, env.size - 1) if m == "R" else max(col - 1, 0)
        row += 1
    return out


def test_all_eight_action_sequences_on_n3_by_hand():
    assert sorted(BY_HAND) == sorted("".join(p) for p in itertools.product("LR", repeat=3))
    env = make_env("DeepSea-3-v0")
    for moves, (cells, rewards) in BY_HAND.items():
        obs, info = env.reset()
        assert info["cell"] == (0, 0) and not info["success"]
        assert obs.shape == (1, 3, 3) and obs.dtype == np.uint8 and obs[0, 0, 0] == 255 and obs.sum() == 255
        for t, a in enumerate(_actions(env.unwrapped, moves)):
            obs, r, term, trunc, info = env.step(a)
            assert info["cell"] == cells[t], moves
            assert r == pytest.approx(rewards[t], abs=1e-15), moves
            assert info["success"] == (moves == "RRR" and t == 2)
            assert term == (t == 2) and trunc is False
            row, col = cells[t]
            if row < 3:  # the agent is shown in its cell, one pixel, in both views
                assert obs[0, row, col] == 255 and obs.sum() == 255
                assert info["density_frame"][row, col] == 7 and info["density_frame"].sum() == 7
            else:  # it has left the grid: both views are empty, as bsuite's last observation
                assert obs.sum() == 0 and info["density_frame"].sum() == 0
    assert sum(rewards) == pytest.approx(0.99) and optimal_return(3) == pytest.approx(0.99)


def test_the_episode_ends_after_n_steps_and_a_step_after_it_is_refused():
    env = DeepSeaEnv(4)
    env.reset()
    for t in range(4):
        *_, term, _, _ = env.step(0)
        assert term == (t == 3)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    with pytest.raises(ValueError, match="0 or 1"):
        DeepSeaEnv(4).step(2)


def test_the_action_mapping_is_fixed_by_its_seed():
    a, b = DeepSeaEnv(20, mapping_seed=7), DeepSeaEnv(20, mapping_seed=7)
    np.testing.assert_array_equal(a.right, b.right)
    np.testing.assert_array_equal(a.right, right_action(20, 7))
    assert not np.array_equal(a.right, DeepSeaEnv(20, mapping_seed=8).right)
    assert set(np.unique(a.right)) == {0, 1} and 100 < a.right.sum() < 300  # per cell, both ways
    # the registered ids use mapping seed 42 (bsuite's sweep), whatever the env's episode seed
    assert DEFAULT_MAPPING_SEED == 42 and DeepSeaEnv(20).mapping_seed == 42
    env = make_env("DeepSea-20-v0", seed=5)
    np.testing.assert_array_equal(env.unwrapped.right, right_action(20, 42))
    env.reset(seed=123)
    np.testing.assert_array_equal(env.unwrapped.right, right_action(20, 42))
    assert not np.array_equal(right_action(20, 42), right_action(20, 0))
    # a fixed action index is "right" in some cells and "left" in others: always 1 never succeeds
    env.reset()
    rets = [env.step(1)[1] for _ in range(20)]
    assert max(rets) < 0.5


def test_only_going_right_every_step_pays_and_the_best_return_is_099():
    env = make_env("DeepSea-12-v0")
    env.reset()
    moves = _actions(env.unwrapped, "R" * 12)
    total, successes = 0.0, 0
    for a in moves:
        _, r, term, _, info = env.step(a)
        total, successes = total + r, successes + info["success"]
    assert term and successes == 1 and total == pytest.approx(0.99) == optimal_return(12)


def test_ids_shapes_and_defaults():
    assert DEEP_SEA_SIZES == tuple(range(3, 51))
    for n in (3, 20, 40, 50):
        assert check_env_id(deep_sea_id(n)) == f"DeepSea-{n}-v0"
        assert density_shape(deep_sea_id(n)) == (n, n)
    assert deep_sea_size("DeepSea-20-v0") == 20 and deep_sea_size("DeepSea-020-v0") is None
    assert deep_sea_size("MiniGrid-Empty-5x5-v0") is None
    assert density_shape("MiniGrid-Empty-5x5-v0") == (42, 42)
    with pytest.raises(ValueError, match="unknown env id 'DeepSea-51-v0'.*did you mean"):
        check_env_id("DeepSea-51-v0")
    with pytest.raises(ValueError, match="unknown env id"):
        density_shape("DeepSea-2-v0")
    defaults = env_defaults("DeepSea-20-v0")
    assert defaults["epsilon_decay_steps"] == 2_000 and env_defaults("DeepSea-20-v0", "smoke") == {}
    assert env_defaults("MiniGrid-Empty-5x5-v0") == {}
    from pcnn_explore.run import TrainConfig

    TrainConfig.preset("study", env="DeepSea-20-v0", **defaults)  # every field is a valid setting


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="at least 2"):
        DeepSeaEnv(1)
    with pytest.raises(TypeError, match="int"):
        DeepSeaEnv(3.0)
    with pytest.raises(ValueError, match="mapping_seed"):
        DeepSeaEnv(3, mapping_seed=-1)
    with pytest.raises(ValueError, match="n_actions"):
        make_env("DeepSea-5-v0", n_actions=2)
    with pytest.raises(ValueError, match="view"):
        make_env("DeepSea-5-v0", view="partial")
    with pytest.raises(ValueError, match="no RGB screen"):
        make_raw_env("DeepSea-5-v0")


def test_views_without_the_density_frame_and_with_the_picture():
    env = make_env("DeepSea-4-v0", density_frame=False)
    _, info = env.reset()
    assert "density_frame" not in info and info["cell"] == (0, 0)
    env = make_env("DeepSea-4-v0", keep_rgb=True, frame_stack=2)
    obs, info = env.reset()
    assert obs.shape == (2, 4, 4) and info["rgb"].shape == (4, 4, 3) and info["rgb"][0, 0].tolist() == [255] * 3
    assert info["density_frame"].shape == (4, 4) and info["density_frame"][0, 0] == 7


def test_make_env_draws_the_mapping_from_a_given_mapping_seed():
    for m in (0, 7, 42):
        env = make_env("DeepSea-12-v0", seed=3, mapping_seed=m)
        assert env.unwrapped.mapping_seed == m
        np.testing.assert_array_equal(env.unwrapped.right, right_action(12, m))
    np.testing.assert_array_equal(make_env("DeepSea-12-v0").unwrapped.right, right_action(12, 42))
    with pytest.raises(ValueError, match="mapping_seed draws DeepSea's action mapping"):
        make_env("MiniGrid-Empty-5x5-v0", mapping_seed=0)
    with pytest.raises(ValueError, match="mapping_seed"):
        make_env("DeepSea-12-v0", mapping_seed=-1)


def test_the_run_setting_mapping_seed_defaults_to_42_on_deep_sea_only():
    from pcnn_explore.checks import SettingError
    from pcnn_explore.run.config import RESUMABLE_CHANGES
    from pcnn_explore.run import TrainConfig

    assert TrainConfig.preset("study", env="DeepSea-14-v0").mapping_seed == 42
    assert TrainConfig.preset("study", env="DeepSea-14-v0", mapping_seed=3).mapping_seed == 3
    assert TrainConfig.preset("study", env="DeepSea-14-v0").to_dict()["mapping_seed"] == 42  # recorded
    assert TrainConfig.preset("study", env="MiniGrid-Empty-5x5-v0").mapping_seed is None
    assert "mapping_seed" not in RESUMABLE_CHANGES  # part of the resume check
    with pytest.raises(SettingError, match="mapping_seed .0. draws DeepSea's action mapping"):
        TrainConfig.preset("study", env="MiniGrid-Empty-5x5-v0", mapping_seed=0)
    with pytest.raises(SettingError, match="mapping_seed"):
        TrainConfig.preset("study", env="DeepSea-14-v0", mapping_seed=-2)


def test_a_run_records_its_mapping_seed_and_resume_checks_it(tmp_path, capsys):
    import json

    from pcnn_explore.cli import main
    from pcnn_explore.run import load_policy

    out = tmp_path / "run"
    base = ["train", "--env", "DeepSea-5-v0", "--profile", "smoke", "--no-progress", "--out", str(out),
            "--steps", "50", "--checkpoint-every", "0", "--no-tensorboard"]
    assert main([*base, "--mapping-seed", "7"]) == 0
    assert json.loads((out / "settings.json").read_text())["mapping_seed"] == 7
    _, policy = load_policy(out)
    assert policy.env_kwargs["mapping_seed"] == 7
    np.testing.assert_array_equal(policy.make_env().unwrapped.right, right_action(5, 7))
    capsys.readouterr()
    assert main([*base, "--steps", "100", "--resume", "--mapping-seed", "42"]) == 2  # the checkpoint's is 7
    err = capsys.readouterr().err
    assert "--mapping-seed: checkpoint 7 vs now 42" in err and len(err.strip().splitlines()) == 1
    assert main([*base, "--steps", "100", "--resume"]) == 0  # unset on resume: the checkpoint's mapping seed
    assert json.loads((out / "settings.json").read_text())["mapping_seed"] == 7
    capsys.readouterr()
    assert main(["train", "--env", "MiniGrid-Empty-5x5-v0", "--profile", "smoke", "--no-progress",
                 "--out", str(tmp_path / "other"), "--mapping-seed", "3"]) == 2
    err = capsys.readouterr().err
    assert "--mapping-seed (3) draws DeepSea's action mapping" in err and not (tmp_path / "other").exists()


def test_settings_saved_before_the_mapping_seed_existed_resume_on_mapping_seed_0():
    from pcnn_explore.run.resume import RunError, _check_resumable
    from pcnn_explore.run import TrainConfig

    old = TrainConfig.preset("smoke", env="DeepSea-5-v0", mapping_seed=0).to_dict()
    del old["mapping_seed"]
    _check_resumable(old, TrainConfig.preset("smoke", env="DeepSea-5-v0", mapping_seed=0))
    with pytest.raises(RunError, match="mapping_seed.*checkpoint 0 vs now 42"):
        _check_resumable(old, TrainConfig.preset("smoke", env="DeepSea-5-v0"))
