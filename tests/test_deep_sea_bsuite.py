"""DeepSea is bsuite's deep_sea step for step (checked against the bsuite package itself, installed by
the test extra), the kit's old mapping draw stays selectable (``mapping_rule="kit_v1"``), and a run
saved before the mapping rule existed resumes on its own (kit_v1) task."""
from __future__ import annotations

import json

import numpy as np
import pytest
from bsuite.environments.deep_sea import DeepSea as BsuiteDeepSea  # the package's own code

from pcnn_explore.checks import SettingError
from pcnn_explore.envs import make_env
from pcnn_explore.envs.deep_sea import MAPPING_RULES, DeepSeaEnv, deep_sea_id, right_action
from pcnn_explore.run.config import SETTINGS_SINCE, TrainConfig, backfill

SIZES = (3, 5, 10, 21)
MAPPING_SEEDS = (0, 1, 42, 1001)

# DeepSea-5, mapping seed 42: bsuite's draw (printed by bsuite 0.3.6's DeepSea(5, mapping_seed=42)
# ._action_mapping) and the kit's draw before 0.2.0 (printed by right_action(5, 42) of the kit at
# commit 0741ac3, before the rule existed).
BSUITE_5_42 = [[0, 1, 1, 1, 0], [0, 0, 1, 1, 1], [0, 1, 1, 0, 0], [0, 0, 1, 0, 0], [1, 0, 0, 0, 0]]
KIT_V1_5_42 = [[0, 1, 1, 0, 0], [1, 0, 1, 0, 0], [1, 1, 1, 1, 1], [1, 1, 0, 1, 0], [1, 0, 0, 1, 1]]


def _episodes(size: int, mapping_seed: int, n: int = 40):
    """``n`` action sequences: a third uniform at random, the rest taking bsuite's "right" with
    probability 0.5, 0.9 or 1 per step (so the +1, the diagonal and the bad episodes all occur)."""
    rng = np.random.default_rng([size, mapping_seed])
    mapping = BsuiteDeepSea(size, mapping_seed=mapping_seed, seed=0)._action_mapping
    out = []
    for e in range(n):
        p = (None, 0.5, 0.9, 1.0)[e % 4]
        row, col, actions = 0, 0, []
        for _ in range(size):
            go_right = rng.random() < p if p is not None else None
            a = int(rng.integers(0, 2)) if go_right is None else int(mapping[row, col] if go_right
                                                                          else 1 - mapping[row, col])
            right = a == mapping[row, col]
            col = min(col + 1, size - 1) if right else max(col - 1, 0)
            row += 1
            actions.append(a)
        out.append(actions)
    return out


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("mapping_seed", MAPPING_SEEDS)
def test_the_env_is_bsuites_deep_sea_step_for_step(size, mapping_seed):
    ours = make_env(deep_sea_id(size), seed=0, mapping_seed=mapping_seed)
    theirs = BsuiteDeepSea(size, mapping_seed=mapping_seed, seed=0)
    np.testing.assert_array_equal(ours.unwrapped.right, theirs._action_mapping)
    wins = bad = 0
    for actions in _episodes(size, mapping_seed):
        obs, info = ours.reset()
        ts = theirs.reset()
        assert ts.first() and info["cell"] == (theirs._row, theirs._column) == (0, 0)
        np.testing.assert_array_equal(obs[0], (ts.observation * 255).astype(np.uint8))
        for t, a in enumerate(actions):
            obs, reward, terminated, truncated, info = ours.step(a)
            ts = theirs.step(a)
            assert info["cell"] == (int(theirs._row), int(theirs._column)), (actions, t)
            assert reward == ts.reward, (actions, t)  # exactly: the same float operations
            assert terminated == ts.last() and truncated is False
            np.testing.assert_array_equal(obs[0], (ts.observation * 255).astype(np.uint8))
        assert terminated  # N steps end every episode, in both
        wins += info["success"]
        bad += info["bad_episode"]
        assert ours.unwrapped.total_bad_episodes == theirs.bsuite_info()["total_bad_episodes"] == bad
    assert 0 < wins and 0 < bad < 40  # the +1, a bad episode and a good one each occurred
    assert bad == 40 - wins  # every episode that misses the +1 left the diagonal (see the test below)


def test_bad_episodes_by_hand_on_n3():
    """bsuite's rule: an episode is bad when it takes "left" in a diagonal cell (row == column). Until
    its first "left" the agent is on the diagonal, so every episode but "right" at every step is bad."""
    env = DeepSeaEnv(3, mapping_seed=42)
    counted = []
    for moves, bad in (("RRR", False), ("RRL", True), ("LLL", True), ("RLR", True), ("RRR", False),
                       ("LRR", True)):
        env.reset()
        row, col = 0, 0
        for m in moves:
            a = int(env.right[row, col]) if m == "R" else 1 - int(env.right[row, col])
            _, _, terminated, _, info = env.step(a)
            assert ("bad_episode" in info) == terminated  # on the last step only
            col = min(col + 1, 2) if m == "R" else max(col - 1, 0)
            row += 1
        assert info["bad_episode"] is bad, moves
        counted.append(env.total_bad_episodes)
    assert counted == [0, 1, 2, 3, 3, 4]
    env.reset()
    env.step(0)
    env.reset()  # an episode cut by a reset is not counted (bsuite counts at the episode's end)
    assert env.total_bad_episodes == 4


def test_kit_v1_is_the_old_draw_and_bsuite_the_new_default():
    from pcnn_explore.run.config import MAPPING_RULE_NAMES

    assert tuple(MAPPING_RULES) == MAPPING_RULE_NAMES == ("bsuite", "kit_v1")
    np.testing.assert_array_equal(right_action(5, 42, "bsuite"), BSUITE_5_42)
    np.testing.assert_array_equal(right_action(5, 42), BSUITE_5_42)  # the default rule
    np.testing.assert_array_equal(right_action(5, 42, "kit_v1"), KIT_V1_5_42)
    for size in SIZES:
        for seed in MAPPING_SEEDS:
            old = np.random.default_rng(seed).integers(0, 2, (size, size))  # the kit's draw before 0.2.0
            got = right_action(size, seed, "kit_v1")
            assert got.dtype == old.dtype == np.int64
            np.testing.assert_array_equal(got, old)
            assert right_action(size, seed).dtype == np.int64
    assert DeepSeaEnv(5).mapping_rule == "bsuite" and make_env("DeepSea-5-v0").unwrapped.mapping_rule == "bsuite"
    env = make_env("DeepSea-5-v0", mapping_rule="kit_v1")
    np.testing.assert_array_equal(env.unwrapped.right, KIT_V1_5_42)


def test_an_unknown_rule_is_refused_in_one_line():
    with pytest.raises(ValueError, match="unknown mapping rule 'bsuit': choose bsuite .* or kit_v1") as e:
        DeepSeaEnv(5, mapping_rule="bsuit")
    assert len(str(e.value).splitlines()) == 1
    with pytest.raises(ValueError, match="mapping_rule draws DeepSea's action mapping"):
        make_env("MiniGrid-Empty-5x5-v0", mapping_rule="bsuite")


def test_the_run_setting_resolves_to_bsuite_on_deep_sea_only():
    assert TrainConfig.preset("study", env="DeepSea-10-v0").mapping_rule == "bsuite"
    assert TrainConfig.preset("smoke", env="DeepSea-10-v0", mapping_rule="kit_v1").mapping_rule == "kit_v1"
    assert TrainConfig.preset("study", env="MiniGrid-Empty-5x5-v0").mapping_rule is None
    with pytest.raises(SettingError, match=r"mapping_rule \(bsuite\) draws DeepSea's action mapping") as e:
        TrainConfig.preset("study", env="MiniGrid-Empty-5x5-v0", mapping_rule="bsuite")
    assert len(str(e.value).splitlines()) == 1
    with pytest.raises(SettingError, match="unknown mapping_rule 'old': choose one of bsuite, kit_v1"):
        TrainConfig.preset("study", env="DeepSea-10-v0", mapping_rule="old")


def test_the_back_fill_table_gives_each_later_setting_its_old_value():
    deep = {"env": "DeepSea-5-v0", "bonus": "cts"}
    filled, named = backfill(deep)
    assert named == {"pg_scale": 0.1, "pg_schedule": "inverse_sqrt", "bonus_scale": 1.0, "novelty_epsilon": 0.0,
                     "mapping_seed": 0, "mapping_rule": "kit_v1", "learn_step": "torch", "density_optimizer": "torch",
                     "rmsprop": "torch"}
    assert filled == {**deep, **named} and deep == {"env": "DeepSea-5-v0", "bonus": "cts"}  # not changed
    assert backfill({"env": "MiniGrid-Empty-5x5-v0"})[1]["mapping_rule"] is None
    assert backfill({"env": "ALE/Pong-v5"})[1]["mapping_seed"] is None
    assert backfill({"env": "DeepSea-5-v0", "mapping_rule": "bsuite", "bonus_scale": 0.05})[1] == {
        "pg_scale": 0.1, "pg_schedule": "inverse_sqrt", "novelty_epsilon": 0.0, "mapping_seed": 0, "learn_step": "torch",
        "density_optimizer": "torch", "rmsprop": "torch"}
    assert set(SETTINGS_SINCE) <= set(TrainConfig.__dataclass_fields__)


def _strip(run, keys=("mapping_rule", "bonus_scale")):
    """Rewrite ``run``'s checkpoint, policy and settings as the kit wrote them before ``keys`` existed
    (the bonus state without its beta too), with valid checksums."""
    from pcnn_explore.checkpoint import load, read_meta, save_atomic

    for name in ("checkpoint.pt", "policy.pt"):
        path = run / name
        saved, meta = load(path, checksum=True), read_meta(path)
        for k in keys:
            del saved["config"][k]
            meta.get("config", {}).pop(k, None)  # (the checkpoint's header holds its settings; policy.pt's not)
        if saved.get("bonus") is not None:
            del saved["bonus"]["beta"]
        save_atomic(saved, path, meta=meta)
    settings = json.loads((run / "settings.json").read_text())
    for k in keys:
        del settings[k]
    (run / "settings.json").write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n")


def test_a_checkpoint_from_before_the_rule_resumes_on_kit_v1_and_its_log_continues(tmp_path, capsys):
    from pcnn_explore.checkpoint import read_meta
    from pcnn_explore.cli import main
    from pcnn_explore.run.log import read_log
    from pcnn_explore.run.loop import train

    # the settings of the kit's DeepSea runs before 0.2.0 (CTS, c = 0.1 constant, next state scored)
    then = dict(env="DeepSea-5-v0", bonus="cts", seed=3, learning_starts=60, replay_capacity=1_000,
                checkpoint_every=0, tensorboard=False, scored_frame="next_state", pg_scale=0.1,
                pg_schedule="constant", mmc_beta=0.5, novelty_epsilon=1.0, mapping_rule="kit_v1", bonus_scale=1.0)
    train(TrainConfig.preset("study", steps=400, out_dir=str(tmp_path / "once"), **then), progress=False)
    old = tmp_path / "old"
    train(TrainConfig.preset("study", steps=200, out_dir=str(old), **then), progress=False)
    _strip(old)
    assert "mapping_rule" not in read_meta(old / "checkpoint.pt")["config"]
    capsys.readouterr()

    # asking for bsuite's mapping on the older run is refused in one line naming both rules and the fix
    assert main(["train", "--resume", "--out", str(old), "--steps", "400", "--no-progress",
                 "--mapping-rule", "bsuite"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert ("its checkpoint ran DeepSea's kit_v1 action mapping and --mapping-rule bsuite was asked: leave "
            "--mapping-rule unset (the checkpoint's kit_v1) to resume, or choose another --out") in err

    assert main(["train", "--resume", "--out", str(old), "--steps", "400", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert ("the checkpoint was saved before these settings existed; resuming with the values its version used: "
            "bonus_scale=1.0, mapping_rule=kit_v1") in out
    assert json.loads((old / "settings.json").read_text())["mapping_rule"] == "kit_v1"
    once, split = read_log(tmp_path / "once"), read_log(old)
    assert len(once["step"]) == len(split["step"]) > 50
    for name in once:
        if name != "wall_seconds":
            np.testing.assert_array_equal(once[name], split[name], err_msg=name)
    # and the rule matters: the same run on bsuite's map is another run
    train(TrainConfig.preset("study", steps=400, out_dir=str(tmp_path / "new"),
                             **{**then, "mapping_rule": "bsuite"}), progress=False)
    assert not np.array_equal(read_log(tmp_path / "new")["distinct_cells"], once["distinct_cells"]) or \
        not np.array_equal(read_log(tmp_path / "new")["return"], once["return"])


def test_the_python_api_names_the_rule_to_set_on_an_older_run(tmp_path):
    from pcnn_explore.run.loop import train
    from pcnn_explore.run.resume import RunError

    common = dict(env="DeepSea-5-v0", steps=50, checkpoint_every=0, tensorboard=False, out_dir=str(tmp_path / "r"))
    train(TrainConfig.preset("smoke", mapping_rule="kit_v1", **common), progress=False)
    _strip(tmp_path / "r", keys=("mapping_rule",))
    from pcnn_explore.run import load_policy

    _, policy = load_policy(tmp_path / "r")  # its saved settings lack the rule: the env it was trained on
    assert (policy.env_kwargs["mapping_seed"], policy.env_kwargs["mapping_rule"]) == (42, "kit_v1")
    np.testing.assert_array_equal(policy.make_env().unwrapped.right, right_action(5, 42, "kit_v1"))
    with pytest.raises(RunError, match="kit_v1 action mapping and mapping_rule bsuite was asked: set "
                                       "mapping_rule='kit_v1' to resume") as e:
        train(TrainConfig.preset("smoke", **{**common, "steps": 100}), resume=True, progress=False)
    assert len(str(e.value).splitlines()) == 1
    train(TrainConfig.preset("smoke", mapping_rule="kit_v1", **{**common, "steps": 100}), resume=True,
          progress=False)
