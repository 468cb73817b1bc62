"""``pcnn-explore record`` with a checkpoint policy runs the checkpoint's density model and bonus form
(c, its decay, beta) unless a flag says otherwise, and says which form ran and whence; without a
checkpoint it says it ran record's own form."""
from __future__ import annotations

import numpy as np
import pytest

from pcnn_explore.bonus import PseudoCountBonus
from pcnn_explore.cli import main
from pcnn_explore.density import make_density
from pcnn_explore.record import load_episode, record_episode

ENV = "DeepSea-6-v0"


@pytest.fixture(scope="module")
def cts_run(tmp_path_factory):
    """A DeepSea-6 run with the CTS bonus in the paper's form (c = 1 constant, beta = 0.05)."""
    run = tmp_path_factory.mktemp("form") / "cts"
    assert main(["train", "--env", ENV, "--bonus", "cts", "--profile", "smoke", "--steps", "60", "--no-tensorboard",
                 "--no-progress", "--out", str(run)]) == 0
    return run


def _bonuses(density: str, frames: np.ndarray, scale: float, schedule: str, beta: float) -> np.ndarray:
    """The bonus of each frame, from a fresh model (seed 0, as record builds it) stepped on them in order."""
    bonus = PseudoCountBonus(make_density(density, 6, 6, seed=0), scale=scale, schedule=schedule, beta=beta)
    return np.array([bonus.step(frame).bonus for frame in frames])


def _record(tmp_path, capsys, *flags: str) -> tuple[int, str, str]:
    code = main(["record", "--env", ENV, "--max-steps", "12", "--out", str(tmp_path / "ep.npz"), *flags])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_checkpoint_records_with_its_runs_form(cts_run, tmp_path, capsys):
    code, out, err = _record(tmp_path, capsys, "--policy", str(cts_run))
    assert code == 0 and err == ""
    assert "bonus form: cts, c = 1 constant, beta = 0.05 (the checkpoint's: its run trained with this form); " in out
    assert "train --bonus" not in out  # the form is training's own: no note that it differs
    ep = load_episode(tmp_path / "ep.npz")
    assert ep.density_model == "cts"
    s = ep.metadata["settings"]
    assert (s["pg_scale"], s["pg_schedule"], s["bonus_scale"]) == (1.0, "constant", 0.05)
    np.testing.assert_array_equal(ep.bonus, _bonuses("cts", ep.density, 1.0, "constant", 0.05))


def test_a_flag_overrides_one_part_of_the_checkpoints_form(cts_run, tmp_path, capsys):
    code, out, _ = _record(tmp_path, capsys, "--policy", str(cts_run), "--bonus-scale", "2")
    assert code == 0
    assert ("bonus form: cts, c = 1 constant, beta = 2 (the checkpoint's: its run trained with this form; "
            "bonus_scale given)") in out
    ep = load_episode(tmp_path / "ep.npz")
    np.testing.assert_array_equal(ep.bonus, _bonuses("cts", ep.density, 1.0, "constant", 2.0))
    # another density model than the run's: record's own form, and why
    code, out, _ = _record(tmp_path, capsys, "--policy", str(cts_run), "--density", "pixelcnn")
    assert code == 0
    assert ("bonus form: pixelcnn, c = 0.1 n^-1/2, beta = 1 (record's own form: the checkpoint's run trained cts, "
            "not pixelcnn)") in out
    ep = load_episode(tmp_path / "ep.npz")
    assert ep.density_model == "pixelcnn" and "bonus_scale" not in ep.metadata["settings"]


def test_the_python_api_takes_the_checkpoints_form_too(cts_run):
    ep = record_episode(ENV, cts_run, max_steps=12)
    assert ep.density_model == "cts"
    assert ep.metadata["bonus_form"] == "cts, c = 1 constant, beta = 0.05 (the checkpoint's: its run trained with this form)"
    np.testing.assert_array_equal(ep.bonus, _bonuses("cts", ep.density, 1.0, "constant", 0.05))


def test_check_prints_the_checkpoints_form(cts_run, tmp_path, capsys):
    code, out, _ = _record(tmp_path, capsys, "--policy", str(cts_run), "--check")
    assert code == 0 and not (tmp_path / "ep.npz").exists()
    lines = out.splitlines()
    assert " density=cts " in lines[0] and " pg_scale=1.0 pg_schedule=constant bonus_scale=0.05 " in lines[0]
    assert lines[1] == "bonus form: cts, c = 1 constant, beta = 0.05 (the checkpoint's: its run trained with this form)"


def test_without_a_checkpoint_it_says_it_ran_records_own_form(tmp_path, capsys):
    code, out, _ = _record(tmp_path, capsys, "--density", "cts")
    assert code == 0
    assert ("bonus form: cts, c = 0.1 n^-1/2, beta = 1 (record's own form); train --bonus cts runs the paper's "
            "form by default, cts, c = 1 constant, beta = 0.05; mean bonus") in out
    ep = load_episode(tmp_path / "ep.npz")
    assert "bonus_scale" not in ep.metadata["settings"]  # beta 1, as every shipped recording
    np.testing.assert_array_equal(ep.bonus, _bonuses("cts", ep.density, 0.1, "inverse_sqrt", 1.0))


def test_a_checkpoint_trained_without_a_bonus_gets_records_own_form(tmp_path, capsys):
    run = tmp_path / "plain"
    assert main(["train", "--env", ENV, "--bonus", "none", "--profile", "smoke", "--steps", "30", "--no-tensorboard",
                 "--no-progress", "--out", str(run)]) == 0
    capsys.readouterr()
    code, out, _ = _record(tmp_path, capsys, "--policy", str(run))
    assert code == 0
    assert ("bonus form: pixelcnn, c = 0.1 n^-1/2, beta = 1 (record's own form: the checkpoint's run trained "
            "without a bonus)") in out


def test_a_bad_bonus_scale_is_refused(tmp_path, capsys):
    code, out, err = _record(tmp_path, capsys, "--bonus-scale", "-1")
    assert code == 2 and out == ""
    assert err == ("pcnn-explore record: error: bonus_scale must be a non-negative number (beta of r+ = beta "
                   "PC^-1/2), got -1.0\n")
