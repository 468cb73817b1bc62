"""Recorded episodes: recording, the file format and its validation, the CLI."""
from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from pcnn_explore.bonus import PseudoCountBonus
from pcnn_explore.cli import main
from pcnn_explore.density import make_density
from pcnn_explore.record import (FIELDS, FORMAT_VERSION, Episode, episode_checksum, load_episode,
                                 record_episode, save_episode, shipped_episode)

torch.set_num_threads(1)
MZ = "ALE/MontezumaRevenge-v5"


@pytest.fixture(scope="module")
def short_episode():
    """20 steps of random Pong with a CTS model, after 5 warm-up frames."""
    return record_episode("ALE/Pong-v5", "random", "cts", warmup_frames=5, seed=3, max_steps=20)


def test_record_short_episode_shapes_and_bonus_from_pseudo_count_bonus(short_episode):
    ep = short_episode
    assert len(ep) == 20
    assert ep.rgb.shape == (20, 210, 160, 3) and ep.rgb.dtype == np.uint8
    assert ep.density.shape == (20, 42, 42) and ep.density.max() <= 7
    assert ep.surprise.shape == (20, 42, 42) and ep.surprise.dtype == np.float16
    assert ep.episode_start.tolist() == [True] + [False] * 19
    assert (ep.room == -1).all()  # Pong has no rooms
    # n counts the warm-up updates too: 5 warm-up frames, then updates 6..25.
    np.testing.assert_array_equal(ep.n, np.arange(6, 26))
    np.testing.assert_array_equal(ep.prediction_gain, ep.log_rho_prime - ep.log_rho)
    # The surprise map sums to -log rho_n(x) (float16 rounding per pixel only).
    np.testing.assert_allclose(ep.surprise.astype(np.float64).sum(axis=(1, 2)), -ep.log_rho, rtol=2e-3)


def test_bonus_numbers_are_those_of_pseudo_count_bonus():
    ep = record_episode("ALE/Pong-v5", "random", "pixelcnn", warmup_frames=0, seed=5, max_steps=8)
    np.testing.assert_array_equal(ep.n, np.arange(1, 9))
    # Replaying the density frames through PseudoCountBonus with a fresh, same-seed model gives the
    # same numbers exactly; the surprise map is the model's per-pixel log-loss before each update.
    model = make_density("pixelcnn", seed=5)
    bonus = PseudoCountBonus(model, scale=0.1, schedule="inverse_sqrt")
    for t, frame in enumerate(ep.density):
        surprise = -model.pixel_log_prob(frame[None])[0]
        np.testing.assert_array_equal(ep.surprise[t], surprise.astype(np.float16))
        rec = bonus.step(frame)
        assert (rec.n, rec.log_rho, rec.log_rho_prime, rec.prediction_gain, rec.bonus, rec.pseudo_count) == (
            ep.n[t], ep.log_rho[t], ep.log_rho_prime[t], ep.prediction_gain[t], ep.bonus[t], ep.pseudo_count[t])


def test_round_trip_is_exact(short_episode, tmp_path):
    path = save_episode(short_episode, tmp_path / "pong.npz")
    back = load_episode(path)
    for name in FIELDS:
        a, b = getattr(short_episode, name), getattr(back, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    assert back.metadata == short_episode.metadata
    meta = back.metadata
    assert meta["format_version"] == FORMAT_VERSION and meta["env_id"] == "ALE/Pong-v5"
    assert meta["density_model"] == "cts" and meta["settings"]["warmup_frames"] == 5
    assert meta["checksum"] == episode_checksum(back.arrays(), meta)
    assert list(tmp_path.iterdir()) == [path]  # no temp file left behind


def test_same_seed_same_actions_across_density_models():
    a = record_episode("ALE/Pong-v5", "random", "cts", seed=1, max_steps=15)
    b = record_episode("ALE/Pong-v5", "random", "convcts", seed=1, max_steps=15)
    np.testing.assert_array_equal(a.actions, b.actions)
    np.testing.assert_array_equal(a.density, b.density)
    assert not np.array_equal(a.log_rho, b.log_rho)


def test_scripted_montezuma_gets_key_and_changes_rooms():
    ep = record_episode(MZ, "scripted", "cts", seed=0, max_steps=250)
    assert ep.metadata["settings"]["sticky_actions"] == 0.0
    assert ep.rewards.sum() == 400  # key (100) and door (300)
    np.testing.assert_array_equal(ep.reward_steps, np.flatnonzero(ep.rewards))
    # the shipped recording of the same route (same emulator settings) holds the same first 250 steps
    shipped = load_episode(shipped_episode("montezuma_cts"))
    assert shipped.metadata["settings"]["policy"] == "scripted" and shipped.metadata["settings"]["seed"] == 0
    np.testing.assert_array_equal(ep.actions, shipped.actions[:250])
    np.testing.assert_array_equal(ep.room, shipped.room[:250])
    np.testing.assert_array_equal(ep.rewards, shipped.rewards[:250])
    changes = ep.room_change_steps
    assert len(changes) >= 2 and ep.room[changes[0] - 1] == 1 and ep.room[changes[0]] == 2  # room 1 -> room 2
    assert not ep.life_loss.any()


def _tiny_episode(**overrides) -> Episode:
    t = 5
    arrays = dict(
        rgb=np.zeros((t, 4, 4, 3), np.uint8), density=np.zeros((t, 2, 2), np.uint8),
        actions=np.zeros(t, np.int64), rewards=np.zeros(t, np.float32), life_loss=np.zeros(t, bool),
        episode_start=np.array([1, 0, 0, 0, 0], bool), room=np.array([1, 1, 2, 2, 1], np.int16),
        n=np.arange(1, t + 1), log_rho=np.full(t, -3.0), log_rho_prime=np.full(t, -2.0),
        prediction_gain=np.ones(t), pseudo_count=np.full(t, 1 / np.expm1(1)), bonus=np.full(t, 0.3),
        surprise=np.ones((t, 2, 2), np.float16))
    arrays.update(overrides)
    meta = dict(format_version=FORMAT_VERSION, env_id="ALE/MontezumaRevenge-v5", density_model="cts",
                height=2, width=2, levels=8)
    return Episode(**arrays, metadata=meta)


def test_events_by_hand():
    ep = _tiny_episode()
    np.testing.assert_array_equal(ep.room_change_steps, [2, 4])
    ep2 = _tiny_episode(episode_start=np.array([1, 0, 0, 0, 1], bool))
    np.testing.assert_array_equal(ep2.room_change_steps, [2])  # a new episode is not a room change
    np.testing.assert_array_equal(ep2.episode_start_steps, [0, 4])
    ep3 = _tiny_episode(room=np.full(5, -1, np.int16), rewards=np.array([0, 1, 0, -1, 0], np.float32))
    assert ep3.room_change_steps.size == 0
    np.testing.assert_array_equal(ep3.reward_steps, [1, 3])


def test_truncated_file_is_refused(short_episode, tmp_path):
    path = save_episode(short_episode, tmp_path / "ep.npz")
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 10, 100):
        bad = tmp_path / f"cut{cut}.npz"
        bad.write_bytes(data[:cut])
        with pytest.raises(ValueError, match=r"cut\d+\.npz.*(corrupt or truncated|not a valid)"):
            load_episode(bad)


def _rewrite(path: Path, out: Path, edit) -> None:
    """Copy the npz at ``path`` to ``out`` with ``edit(arrays)`` applied (metadata kept as stored)."""
    with np.load(path, allow_pickle=False) as d:
        arrays = {k: d[k] for k in d.files}
    edit(arrays)
    with open(out, "wb") as f:
        np.savez_compressed(f, **arrays)


def test_tampered_file_is_refused(short_episode, tmp_path):
    path = save_episode(short_episode, tmp_path / "ep.npz")

    def bump_bonus(a):
        a["bonus"] = a["bonus"].copy()
        a["bonus"][3] += 0.5

    def swap_env(a):
        meta = json.loads(str(a["metadata"]))
        meta["env_id"] = "ALE/Freeway-v5"
        a["metadata"] = np.array(json.dumps(meta))

    def one_pixel(a):
        a["rgb"] = a["rgb"].copy()
        a["rgb"][7, 100, 80, 0] ^= 1

    for i, edit in enumerate((bump_bonus, swap_env, one_pixel)):
        bad = tmp_path / f"tampered{i}.npz"
        _rewrite(path, bad, edit)
        with pytest.raises(ValueError, match=rf"tampered{i}\.npz.*checksum mismatch"):
            load_episode(bad)


def test_inconsistent_files_are_refused_with_the_reason(short_episode, tmp_path):
    path = save_episode(short_episode, tmp_path / "ep.npz")

    def resign(a):  # recompute the checksum so that only the structural check can catch it
        meta = json.loads(str(a["metadata"]))
        meta["checksum"] = episode_checksum({k: v for k, v in a.items() if k != "metadata"}, meta)
        a["metadata"] = np.array(json.dumps(meta))

    cases = {
        "short_rewards": (lambda a: (a.update(rewards=a["rewards"][:-1]), resign(a)), r"'rewards' has shape"),
        "float_actions": (lambda a: (a.update(actions=a["actions"].astype(np.float64)), resign(a)),
                          r"'actions' has dtype float64"),
        "level8": (lambda a: (a.update(density=np.full_like(a["density"], 8)), resign(a)), r"level 8"),
        "missing": (lambda a: a.pop("surprise"), r"missing arrays \['surprise'\]"),
        "extra": (lambda a: a.update(notes=np.zeros(3)), r"unexpected arrays \['notes'\]"),
        "version": (lambda a: a.update(metadata=np.array(json.dumps(
            {**json.loads(str(a["metadata"])), "format_version": 99}))), r"format version 99"),
        "meta_not_json": (lambda a: a.update(metadata=np.array("{oops")), r"not valid JSON"),
        "nan_bonus": (lambda a: (a["bonus"].__setitem__(0, np.nan), resign(a)), r"non-finite"),
        "nan_count": (lambda a: (a["pseudo_count"].__setitem__(1, np.nan), resign(a)), r"'pseudo_count' holds NaN"),
    }
    for name, (edit, message) in cases.items():
        bad = tmp_path / f"{name}.npz"
        _rewrite(path, bad, edit)
        with pytest.raises(ValueError, match=rf"{name}\.npz: .*{message}"):
            load_episode(bad)


def test_pickled_arrays_are_never_loaded(short_episode, tmp_path):
    path = save_episode(short_episode, tmp_path / "ep.npz")
    bad = tmp_path / "pickled.npz"
    with np.load(path, allow_pickle=False) as d:
        arrays = {k: d[k] for k in d.files}
    arrays["actions"] = np.array([object()] * len(arrays["actions"]), dtype=object)
    with open(bad, "wb") as f:
        np.savez_compressed(f, **arrays)
    with pytest.raises(ValueError, match=r"pickled\.npz: .*'actions'.*(Python objects|pickle)") as info:
        load_episode(bad)
    assert "allow_pickle" not in str(info.value)  # numpy's advice to unpickle is not passed on


def test_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"absent\.npz"):
        load_episode(tmp_path / "absent.npz")


def _not_episodes(tmp_path: Path) -> dict[str, Path]:
    files = {}
    files["text"] = tmp_path / "text.npz"
    files["text"].write_text("hello")
    files["other_arrays"] = tmp_path / "other_arrays.npz"
    np.savez(files["other_arrays"], weights=np.zeros(3))
    files["npy"] = tmp_path / "npy.npz"  # a single .npy array under an .npz name
    with open(files["npy"], "wb") as f:
        np.save(f, np.zeros(3))
    files["pickle"] = tmp_path / "pickle.npz"  # a pickled object
    with open(files["pickle"], "wb") as f:
        np.save(f, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    files["folder"] = tmp_path / "folder.npz"
    files["folder"].mkdir()
    return files


def test_files_that_are_no_episode_are_refused_naming_the_file(tmp_path):
    for name, path in _not_episodes(tmp_path).items():
        with pytest.raises(ValueError) as info:
            load_episode(path)
        message = str(info.value)
        assert type(info.value) is ValueError and f"{name}.npz" in message, message
        assert "allow_pickle" not in message and "pickle=True" not in message, message


def test_plus_infinite_bonuses_are_stored_nan_never(tmp_path):
    # c = 1 or 10 and a huge first PG give a bonus beyond the float range: +inf, by design (bonus.py)
    ep = _tiny_episode(bonus=np.array([np.inf, 0.3, 0.0, np.inf, 1e300]))
    back = load_episode(save_episode(ep, tmp_path / "inf.npz"))
    np.testing.assert_array_equal(back.bonus, ep.bonus)
    for bad_value, words in ((np.nan, "NaN"), (-np.inf, "negative"), (-0.5, "negative")):
        bad = _tiny_episode(bonus=np.array([bad_value, 0.3, 0.0, 0.1, 0.2]))
        with pytest.raises(ValueError, match=words) as info:
            save_episode(bad, tmp_path / "bad.npz")
        assert type(info.value) is ValueError and "bonus" in str(info.value)
    assert not (tmp_path / "bad.npz").exists()


def test_save_raises_value_error_for_an_invalid_episode(tmp_path):
    for bad in (_tiny_episode(actions=np.zeros(5)),  # float actions
                _tiny_episode(density=np.full((5, 2, 2), 8, np.uint8)),
                _tiny_episode(log_rho=np.full(5, np.nan))):
        with pytest.raises(ValueError, match="episode to save|not a valid") as info:
            save_episode(bad, tmp_path / "bad.npz")
        assert type(info.value) is ValueError
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("c", ["1", "10"])
def test_cli_keeps_a_recording_with_the_papers_large_bonus_scales(tmp_path, capsys, c):
    out = tmp_path / "x.npz"
    status = main(["record", "--env", "ALE/Pong-v5", "--density", "cts", "--pg-scale", c, "--max-steps", "4",
                   "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    ep = load_episode(out)
    assert len(ep) == 4 and ep.metadata["settings"]["pg_scale"] == float(c)
    assert np.isposinf(ep.bonus[0]) and not np.isnan(ep.bonus).any()  # the first PG, thousands of nats
    assert "wrote" in captured.out


def test_save_is_atomic_and_checks_its_target(short_episode, tmp_path, monkeypatch):
    path = save_episode(short_episode, tmp_path / "ep.npz")
    before = path.read_bytes()
    with pytest.raises(ValueError, match="end in .npz"):
        save_episode(short_episode, tmp_path / "ep.bin")
    with pytest.raises(ValueError, match="does not exist"):
        save_episode(short_episode, tmp_path / "nowhere" / "ep.npz")
    with pytest.raises(TypeError, match="expects an Episode"):
        save_episode({"rgb": 1}, tmp_path / "x.npz")

    def explode(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", explode)
    with pytest.raises(OSError, match="disk full"):
        save_episode(short_episode, path)
    assert path.read_bytes() == before  # the old file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ep.npz"]  # and no temp file is left


def test_saved_files_get_the_mode_of_a_plain_file(tmp_path):
    import os

    old = os.umask(0o022)
    try:
        path = save_episode(_tiny_episode(), tmp_path / "ep.npz")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


def test_record_rejects_bad_arguments_before_work():
    with pytest.raises(ValueError, match="unknown density model 'gauss'"):
        record_episode("ALE/Pong-v5", "random", "gauss")
    with pytest.raises(ValueError, match="no scripted policy for 'ALE/Pong-v5'"):
        record_episode("ALE/Pong-v5", "scripted", "cts")
    with pytest.raises(ValueError, match="needs sticky_actions=0"):
        record_episode(MZ, "scripted", "cts", sticky_actions=0.25)
    with pytest.raises(ValueError, match="warmup_frames must be an integer >= 0"):
        record_episode("ALE/Pong-v5", "random", "cts", warmup_frames=-1)
    with pytest.raises(ValueError, match="max_steps must be an integer >= 1"):
        record_episode("ALE/Pong-v5", "random", "cts", max_steps=0)
    with pytest.raises(ValueError, match="neither 'random', 'scripted' nor an existing checkpoint"):
        record_episode("ALE/Pong-v5", "/no/such/checkpoint.pt", "cts")
    with pytest.raises(ValueError, match="unknown env id"):
        record_episode("ALE/Pongg-v5", "random", "cts")
    with pytest.raises(ValueError, match="unknown pg_schedule"):
        record_episode("ALE/Pong-v5", "random", "cts", max_steps=2, pg_schedule="linear")


def test_cli_records_a_loadable_episode(tmp_path, capsys):
    out = tmp_path / "mz.npz"
    status = main(["record", "--env", MZ, "--policy", "scripted", "--density", "convcts", "--warmup-frames", "3",
                   "--max-steps", "12", "--seed", "0", "--out", str(out)])
    assert status == 0
    ep = load_episode(out)
    assert len(ep) == 12 and ep.n[0] == 4 and ep.density_model == "convcts"
    assert ep.metadata["settings"]["policy"] == "scripted"
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--env", "ALE/Nope-v5"], "unknown env id"),
    (["--env", "ALE/Pong-v5", "--policy", "scripted"], "no scripted policy"),
    (["--env", "ALE/Pong-v5", "--warmup-frames", "-5"], "warmup_frames must be an integer >= 0"),
    (["--env", "ALE/Pong-v5", "--max-steps", "0"], "max_steps must be an integer >= 1"),
    (["--env", "ALE/Pong-v5", "--policy", "missing.pt"], "neither 'random', 'scripted' nor an existing"),
    (["--env", "ALE/Pong-v5", "--pg-schedule", "linear"], "unknown --pg-schedule"),
    (["--env", "ALE/Pong-v5", "--pg-scale", "-1"], "pg_scale must be a positive number"),
])
def test_cli_rejects_bad_inputs(tmp_path, capsys, argv, message):
    out = tmp_path / "ep.npz"
    assert main(["record", *argv, "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_cli_rejects_bad_out_and_unknown_density(tmp_path, capsys):
    assert main(["record", "--env", "ALE/Pong-v5", "--out", str(tmp_path / "ep.h5")]) == 2
    assert "--out must end in .npz" in capsys.readouterr().err
    assert main(["record", "--env", "ALE/Pong-v5", "--out", str(tmp_path / "no" / "ep.npz")]) == 2
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:  # argparse choices
        main(["record", "--env", "ALE/Pong-v5", "--density", "gauss", "--out", str(tmp_path / "ep.npz")])
    assert exit_info.value.code == 2
    assert "invalid choice: 'gauss'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pcnn-explore record: error: "), err
    assert "Traceback" not in err and "weights_only" not in err and "allow_pickle" not in err, err
    return lines[0]


@pytest.mark.parametrize("argv, words", [
    (["--env", "ALE/Pong-v5", "--density", "gauss"], "invalid choice: 'gauss'"),
    (["--env", "ALE/Pong-v5", "--max-steps", "many"], "--max-steps"),
    (["--density", "cts"], "--env"),  # a required flag missing
    (["--env", "ALE/Pong-v5", "--bogus", "1"], "unrecognized arguments: --bogus"),
])
def test_cli_bad_flags_are_one_line(tmp_path, capsys, argv, words):
    with pytest.raises(SystemExit) as exit_info:
        main(["record", *argv, "--out", str(tmp_path / "ep.npz")])
    assert exit_info.value.code == 2
    assert words in _one_error_line(capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == []


class _Unsafe:  # torch.load(weights_only=True) refuses to unpickle this
    pass


def test_cli_bad_checkpoints_are_one_line(tmp_path, capsys):
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint at all")
    pickled = tmp_path / "pickled.pt"
    torch.save({"q": _Unsafe(), "config": {}}, pickled)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(3)}, foreign)
    for path in (garbage, pickled, foreign):
        out = tmp_path / "ep.npz"
        assert main(["record", "--env", "ALE/Pong-v5", "--density", "cts", "--max-steps", "2", "--policy", str(path),
                     "--out", str(out)]) == 2
        assert path.name in _one_error_line(capsys.readouterr().err)
        assert not out.exists()


def test_cli_errors_while_recording_or_saving_are_one_line_and_leave_no_file(tmp_path, capsys, monkeypatch):
    base = ["record", "--env", "ALE/Pong-v5", "--max-steps", "2"]
    # a device torch does not know (the PixelCNN takes the device; CTS does not)
    assert main([*base, "--density", "pixelcnn", "--device", "bogus", "--out", str(tmp_path / "a.npz")]) == 2
    assert "bogus" in _one_error_line(capsys.readouterr().err)
    # --out is an existing folder
    (tmp_path / "folder.npz").mkdir()
    assert main([*base, "--density", "cts", "--out", str(tmp_path / "folder.npz")]) == 2
    assert "folder.npz" in _one_error_line(capsys.readouterr().err)

    # the disk fills up while the file is written
    def explode(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez_compressed", explode)
    assert main([*base, "--density", "cts", "--out", str(tmp_path / "b.npz")]) == 2
    assert "No space left" in _one_error_line(capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder.npz"]  # no partial or temp file


def test_density_choices_and_options_come_from_the_registry(monkeypatch):
    import argparse

    from pcnn_explore import density
    from pcnn_explore.density import BONUS_MODELS, CTSDensity, DensitySpec
    from pcnn_explore.record import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert next(a for a in parser._actions if a.dest == "density").choices == BONUS_MODELS

    made = []

    class SeededCTS(CTSDensity):  # a new model that takes a seed (and nothing else of lr, device, seed)
        def __init__(self, seed=None, **kwargs):
            made.append(seed)
            super().__init__(**kwargs)

    monkeypatch.setitem(density.REGISTRY, "seeded_cts", DensitySpec("seeded_cts", SeededCTS, "seeded CTS", "k",
                                                                       options=("seed",)))
    monkeypatch.setattr(density, "BONUS_MODELS", (*BONUS_MODELS, "seeded_cts"))
    ep = record_episode("ALE/Pong-v5", "random", "seeded_cts", seed=7, max_steps=2, device="cpu")
    assert made == [7] and ep.density_model == "seeded_cts"


def test_summarize_episode_by_hand():
    from pcnn_explore.record import summarize_episode

    ep = _tiny_episode(bonus=np.array([0.1, 0.2, 0.9, 0.3, 0.5]))  # room changes at steps 2 and 4
    s = summarize_episode(ep)
    assert s["room_change_steps"] == [2, 4]
    assert s["median_bonus"] == 0.3 and s["max_bonus"] == 0.9 and s["max_bonus_step"] == 2
    assert np.isclose(s["bonus_at_room_changes"], 0.7) and np.isclose(s["room_change_to_median"], 0.7 / 0.3)
    assert s["first_room_change_step"] == 2 and s["first_room_change_rank"] == 1
    s = summarize_episode(_tiny_episode(room=np.full(5, -1, np.int16)))
    assert s["room_change_steps"] == [] and s["first_room_change_rank"] is None
    assert np.isnan(s["bonus_at_room_changes"])


def test_shipped_episodes_load_and_unknown_name_is_refused():
    from pcnn_explore.record import shipped_episode

    for name in ("montezuma_pixelcnn", "montezuma_cts", "pong_pixelcnn"):
        ep = load_episode(shipped_episode(name))
        assert ep.rgb.shape[1:] == (210, 160, 3) and ep.metadata["package_version"]
    with pytest.raises(ValueError, match="no shipped episode 'tetris'.*available: .*montezuma_cts"):
        shipped_episode("tetris")


def test_life_losses_match_the_emulator_lives_counter():
    from pcnn_explore.envs import make_env

    ep = record_episode(MZ, "random", "cts", seed=0, max_steps=60)
    assert ep.metadata["settings"]["sticky_actions"] == 0.25
    env = make_env(MZ, 0, sticky_actions=0.25, noop_max=0, keep_rgb=True)
    obs, info = env.reset()
    lives = []
    for t, action in enumerate(ep.actions):
        np.testing.assert_array_equal(info["rgb"], ep.rgb[t])  # the same frames: replay is faithful
        before = info["lives"]
        obs, _, _, _, info = env.step(int(action))
        lives.append(info["lives"] < before)
    np.testing.assert_array_equal(ep.life_loss, lives)
    assert ep.life_loss.sum() >= 1  # a random Montezuma player falls early (step 15 with this seed)


def test_checkpoint_policy_drives_the_recording(tmp_path):
    from pcnn_explore.run import load_policy

    run = tmp_path / "run"
    assert main(["train", "--env", "MiniGrid-Empty-5x5-v0", "--bonus", "none", "--profile", "smoke",
                 "--steps", "120", "--out", str(run), "--no-progress"]) == 0
    ep = record_episode("MiniGrid-Empty-5x5-v0", run, "cts", warmup_frames=4, seed=0, max_steps=250,
                        n_episodes=2)
    assert ep.metadata["settings"]["policy"] == "checkpoint:run"
    assert ep.metadata["settings"]["sticky_actions"] is None  # not an Atari game
    starts = ep.episode_start_steps
    assert starts[0] == 0 and len(starts) == 2 and len(ep) <= 250
    # The greedy policy of the checkpoint, replayed in the env it was trained on, takes the same actions.
    env_id, policy = load_policy(run)
    env = policy.make_env(0)
    obs, _ = env.reset()
    for t in range(starts[1]):
        assert policy(obs) == ep.actions[t]
        obs, *_ = env.step(int(ep.actions[t]))
    with pytest.raises(ValueError, match="trained on 'MiniGrid-Empty-5x5-v0'"):
        record_episode("MiniGrid-Empty-8x8-v0", run, "cts", max_steps=5)


def test_cli_checks_that_out_is_writable_before_recording(tmp_path, capsys, monkeypatch):
    import os

    import pcnn_explore.record.cli as record_cli

    def never(*args, **kwargs):
        raise AssertionError("recorded although --out cannot be written")

    monkeypatch.setattr(record_cli, "record_episode", never)
    unwritable = tmp_path / "ro"
    unwritable.mkdir()
    real_mkstemp = record_cli.tempfile.mkstemp

    def refuse(*args, dir=None, **kwargs):  # root ignores chmod: refuse writes into ``unwritable`` instead
        if dir is not None and os.path.samefile(dir, unwritable):
            raise PermissionError(13, "Permission denied")
        return real_mkstemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(record_cli.tempfile, "mkstemp", refuse)
    assert main(["record", "--env", "ALE/Pong-v5", "--density", "cts", "--out", str(unwritable / "ep.npz")]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "Permission denied" in line and str(unwritable) in line and "OSError" not in line
    assert list(unwritable.iterdir()) == []


# ----------------------------------------------------------------------------------------------
# Envs whose density frame is not 42x42; the summary line; Reactor checkpoints as policies
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("density", ["cts", "pixelcnn"])
def test_cli_records_deep_sea_with_its_own_frame_shape(tmp_path, capsys, density):
    """DeepSea-6's density frames are 6x6: the model is built for them (density_shape), as in training."""
    out = tmp_path / "x.npz"
    status = main(["record", "--env", "DeepSea-6-v0", "--policy", "random", "--density", density,
                   "--max-steps", "20", "--episodes", "3", "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    ep = load_episode(out)
    assert len(ep) == 18 and ep.episode_start_steps.tolist() == [0, 6, 12]  # three episodes of N = 6 steps
    assert ep.density.shape == ep.surprise.shape == (18, 6, 6)
    assert (ep.metadata["height"], ep.metadata["width"]) == (6, 6) and "height=6, width=6" in ep.metadata["model"]
    # one pixel per cell, 7 in the agent's cell: row t of each episode holds it
    for t in range(18):
        assert ep.density[t].sum() == 7 and ep.density[t][t % 6].max() == 7
    # the numbers are those of a model of 6x6 frames trained on these frames
    bonus = PseudoCountBonus(make_density(density, 6, 6, seed=0), scale=0.1)
    records = [bonus.step(frame) for frame in ep.density]
    np.testing.assert_array_equal(ep.log_rho, [r.log_rho for r in records])


def test_summary_line_prints_huge_bonuses_in_scientific_notation(tmp_path, capsys):
    """A fresh CTS model's first Pong frame has a PG of ~2,600 nats: bonus sqrt(expm1(0.1 * PG)) ~ 1e57."""
    out = tmp_path / "x.npz"
    assert main(["record", "--env", "ALE/Pong-v5", "--density", "cts", "--max-steps", "3", "--out", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    ep = load_episode(out)
    assert 1e50 < ep.bonus.max() < np.inf
    assert line.endswith(f"; mean bonus {ep.bonus.mean():.6g}, max bonus {ep.bonus.max():.6g}")
    assert "e+57" in line and max(len(run) for run in re.findall(r"\d+", line)) < 10  # never 58 digits


@pytest.fixture(scope="module")
def reactor_run(tmp_path_factory):
    """A tiny Reactor checkpoint (DeepSea-6, smoke profile, 100 steps): a recurrent policy."""
    run = tmp_path_factory.mktemp("reactor") / "run"
    assert main(["train", "--env", "DeepSea-6-v0", "--agent", "reactor", "--bonus", "none", "--profile", "smoke",
                 "--steps", "100", "--out", str(run), "--no-progress"]) == 0
    return run


def _spy_on_reactor(monkeypatch):
    """Log (h, c, probabilities) of every ReactorAgent.policy call: the LSTM state each step starts from."""
    from pcnn_explore.agents.reactor import ReactorAgent

    calls, real = [], ReactorAgent.policy

    def policy(self, observations, env_indices):
        h, c = self.h[list(env_indices)].clone(), self.c[list(env_indices)].clone()
        probs = real(self, observations, env_indices)
        calls.append((h, c, probs.copy()))
        return probs

    monkeypatch.setattr(ReactorAgent, "policy", policy)
    return calls


def _replay_episode(run, seed: int, draws_before: int, n_steps: int) -> list[int]:
    """The actions of a freshly loaded (zero-state) Reactor policy in one fresh DeepSea episode, its
    generator first advanced past ``draws_before`` uniforms (one per action, ReactorAgent.act)."""
    from pcnn_explore.run import load_policy

    _, policy = load_policy(run, seed=seed)
    policy.rng.random(draws_before)
    env = policy.make_env(seed)
    obs, _ = env.reset(seed=seed)
    policy.reset()
    actions = []
    for _ in range(n_steps):
        actions.append(int(policy(obs)))
        obs, *_ = env.step(actions[-1])
    return actions


def test_reactor_checkpoint_starts_every_recorded_episode_from_a_zero_lstm_state(reactor_run, monkeypatch):
    calls = _spy_on_reactor(monkeypatch)
    ep = record_episode("DeepSea-6-v0", reactor_run, "cts", seed=0, max_steps=18, n_episodes=3)
    starts = ep.episode_start_steps.tolist()
    assert starts == [0, 6, 12] and len(calls) == 18
    for t in starts:
        h, c, probs = calls[t]
        assert not h.any() and not c.any(), f"episode at step {t} starts from the last episode's LSTM state"
        np.testing.assert_array_equal(probs, calls[0][2])  # the same first observation, the same pi
    assert calls[1][0].any()  # within an episode the state carries on
    # each episode's actions are those of a fresh policy (the same uniforms) in a fresh episode
    for t in starts:
        assert ep.actions[t:t + 6].tolist() == _replay_episode(reactor_run, 0, t, 6)


def test_warm_up_does_not_change_a_reactor_checkpoints_recorded_actions(reactor_run):
    """Warm-up episodes are played by a policy of their own (its own generator, seed + 1), reset at
    each of their starts, so the recorded episodes are those recorded without a warm-up."""
    plain = record_episode("DeepSea-6-v0", reactor_run, "cts", seed=2, max_steps=12, n_episodes=2)
    warmed = record_episode("DeepSea-6-v0", reactor_run, "cts", warmup_frames=15, seed=2, max_steps=12,
                            n_episodes=2)
    assert warmed.n[0] == 16 and plain.n[0] == 1
    np.testing.assert_array_equal(warmed.actions, plain.actions)
    np.testing.assert_array_equal(warmed.density, plain.density)
    assert plain.actions.tolist() == _replay_episode(reactor_run, 2, 0, 6) + _replay_episode(reactor_run, 2, 6, 6)
