"""A run's log.csv is part of its state: a torn last row is dropped with one warning, an unreadable
line is one error naming the file and the line, a log short of the checkpoint is refused; the
counts a resume needs come from the checkpoint, and the log and the checkpoint agree after it.
Also: a checkpoint written by the kit at 0741ac3 resumes on its own task; ``record`` refuses a
checkpoint it cannot read and says what its bonus numbers are; the sweep report is replaced so
that a kill at any moment leaves a whole ``report/``; the log's ``epsilon_used``."""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from pcnn_explore.checkpoint import load
from pcnn_explore.cli import main
from pcnn_explore.run.config import TrainConfig
from pcnn_explore.run.log import LOG_COLUMNS, read_log
from pcnn_explore.run.loop import train
from golden_logs import assert_logs_agree

DATA = Path(__file__).parent / "data"
TORN = "405,80,0.99"


def _cfg(out, steps, **kw):
    return TrainConfig.preset("smoke", env="DeepSea-4-v0", bonus="cts", seed=3, steps=steps, checkpoint_every=100,
                              tensorboard=False, out_dir=str(out), **kw)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A DeepSea-4 run of 400 steps (checkpoints every 100), and the same run to 600 steps in one go."""
    root = tmp_path_factory.mktemp("made")
    train(_cfg(root / "run", 400), progress=False)
    train(_cfg(root / "once", 600), progress=False)
    return root


@pytest.fixture
def run(made, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(made / "run", out)
    (out / "run.lock").unlink(missing_ok=True)
    return out


def _rows(path):
    return list(csv.reader(open(path)))


def _agree(out):
    """The log and the checkpoint of a run agree: one row per episode ended, the solve rule's counts."""
    saved = load(out / "checkpoint.pt")
    log = read_log(out)
    ended = int(saved["episodes"]) - sum(r is not None for r in saved["running"])
    assert len(log["step"]) == ended and int(log["step"][-1]) <= int(saved["step"])
    wins = log["return"][log["complete"] == 1] > 0.5
    assert saved["solve"]["episodes"] == wins.size and saved["solve"]["bad"] == int((~wins).sum())


def _same_log(a, b):
    for name in LOG_COLUMNS:
        if name != "wall_seconds":
            np.testing.assert_array_equal(read_log(a)[name], read_log(b)[name], err_msg=name)


def test_a_torn_last_row_is_dropped_with_one_warning_and_the_resume_goes_on(run, made, capsys):
    with open(run / "log.csv", "a") as f:
        f.write(TORN)
    code = main(["train", "--resume", "--out", str(run), "--steps", "600", "--stop-when-solved", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err
    assert err.count("\n") == 1 and "log.csv: its last line (" in err and "is a torn row" in err
    _agree(run)


def test_a_resume_continues_the_log_the_checkpoint_counts(run, made):
    with open(run / "log.csv", "a") as f:
        f.write(TORN)
    train(_cfg(run, 600), resume=True, progress=False)
    _same_log(run, made / "once")  # as the run made in one go
    _agree(run)


def test_read_log_drops_a_torn_row_and_names_an_unreadable_line(run, capsys):
    n = len(read_log(run)["step"])
    with open(run / "log.csv", "a") as f:
        f.write(TORN)
    assert len(read_log(run)["step"]) == n
    assert "is a torn row" in capsys.readouterr().err
    lines = (run / "log.csv").read_text().splitlines()
    lines[4] = "garbage"
    (run / "log.csv").write_text("\n".join(lines) + "\n")
    from pcnn_explore.run.log import LogError

    with pytest.raises(LogError, match=r"log.csv, line 5: cannot read this row") as e:
        read_log(run)
    assert len(str(e.value).splitlines()) == 1


def test_an_unreadable_line_is_refused_in_one_line_naming_it(run, capsys):
    lines = (run / "log.csv").read_text().splitlines()
    lines[7] = lines[7].replace(",", ";", 3)
    (run / "log.csv").write_text("\n".join(lines) + "\n")
    before = (run / "log.csv").read_bytes()
    assert main(["train", "--resume", "--out", str(run), "--steps", "600", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{run / 'log.csv'}, line 8: cannot read this row" in err
    assert (run / "log.csv").read_bytes() == before  # nothing lost


@pytest.mark.parametrize("damage", ["empty", "cut", "lost"])
def test_a_log_that_ends_before_the_checkpoint_is_refused(run, capsys, damage):
    path = run / "log.csv"
    if damage == "empty":
        path.write_bytes(b"")
    elif damage == "cut":
        path.write_text("".join(open(path).readlines()[:41]))
    else:
        path.unlink()
    before = path.read_bytes() if path.exists() else None
    assert main(["train", "--resume", "--out", str(run), "--steps", "600", "--stop-when-solved",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"cannot resume {run}: its log" in err and "where its checkpoint (step 400) counts 100" in err
    assert "restore log.csv from a copy, or start a fresh run with another --out" in err
    assert (path.read_bytes() if path.exists() else None) == before
    assert load(run / "checkpoint.pt")["step"] == 400


def test_the_solve_counts_come_from_the_checkpoint(run):
    saved = load(run / "checkpoint.pt")
    assert saved["solve"]["episodes"] == 100
    # a resume with stop_when_solved past the solve point: says it trained on past it
    result = train(_cfg(run, 600, stop_when_solved=True), resume=True, progress=False)
    assert result.solved_episode is not None and result.ran_past and result.steps == 400
    note = result.solved_note(600)
    assert f"at episode {result.solved_episode} (step {result.solved_step})" in note
    assert "had trained on past it to step 400 with --stop-when-solved off: nothing more was run" in note
    assert "stopped at step" not in note and len(note.splitlines()) == 1


def test_the_command_line_says_a_resume_past_the_solve_point_ran_nothing(run, capsys):
    assert main(["train", "--resume", "--out", str(run), "--steps", "600", "--stop-when-solved", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "had trained on past it to step 400 with --stop-when-solved off: nothing more was run" in out
    assert "stopped at step" not in out


def _sweep(tmp_path, made):
    trials = []
    for seed in (0, 1):
        folder = f"DeepSea-4-v0/cts/seed{seed}"
        shutil.copytree(made / "run", tmp_path / folder)
        trials.append({"name": folder, "env": "DeepSea-4-v0", "variant": "cts", "seed": seed, "line": "cts",
                       "status": "done", "folder": folder, "out_dir": str(tmp_path / folder)})
    (tmp_path / "sweep.json").write_text(json.dumps({"trials": trials}))
    return tmp_path


def test_sweep_report_with_a_torn_row_goes_on_and_an_unreadable_line_is_refused(made, tmp_path, capsys):
    from pcnn_explore.sweep.folders import tail_step as _tail_step

    sweep = _sweep(tmp_path, made)
    log = sweep / "DeepSea-4-v0/cts/seed1/log.csv"
    with open(log, "a") as f:
        f.write(TORN)
    assert _tail_step(log) == 400  # the sweep's progress reads the last whole row
    assert main(["sweep", "--report", str(sweep)]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a torn row" in err
    assert (sweep / "report" / "deep_sea_scaling.csv").is_file()
    log.write_text(log.read_text().replace("\n4,0,", "\ngarbage\n4,0,", 1))
    assert main(["sweep", "--report", str(sweep)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{log}, line 2: cannot read this row" in err and "Traceback" not in err


@pytest.mark.cpu_kernels
def test_a_checkpoint_of_0741ac3_resumes_on_its_own_task(tmp_path, capsys):
    # tests/data/deep_sea4_cts_0741ac3: `pcnn-explore train --env DeepSea-4-v0 --bonus cts --steps 200 --profile
    # smoke --checkpoint-every 100 --no-tensorboard --replay-capacity 64` run by the kit at commit 0741ac3
    # (before mapping_rule and bonus_scale existed: the kit_v1 mapping, r+ = PC^-1/2, c = 0.1 n^-1/2);
    # log_deep_sea4_cts_0741ac3_300.csv: the same run to 300 steps, by that kit
    old = tmp_path / "old"
    shutil.copytree(DATA / "deep_sea4_cts_0741ac3", old)
    assert main(["train", "--resume", "--out", str(old), "--steps", "300", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.count("the checkpoint was saved before these settings existed") == 1
    assert ("resuming with the values its version used: bonus_scale=1.0, mapping_rule=kit_v1, learn_step=torch\n") in out
    settings = json.loads((old / "settings.json").read_text())
    assert (settings["mapping_rule"], settings["bonus_scale"], settings["pg_scale"], settings["pg_schedule"]) == (
        "kit_v1", 1.0, 0.1, "inverse_sqrt")
    got, want = _rows(old / "log.csv"), _rows(DATA / "log_deep_sea4_cts_0741ac3_300.csv")
    assert got[0] == want[0] + ["epsilon_used"] and len(got) == len(want) == 76
    # every column as written but td_loss (float32 losses of torch's kernels after the resume, whose last
    # digit follows the CPU: '0.000823202' here, '0.000823201' on another) and wall time: tests/golden_logs.py
    assert_logs_agree(got, want, skip=("wall_seconds",))
    assert all(r[-1] == "" for r in got[1:51]) and all(float(r[-1]) == float(r[8]) for r in got[51:])
    _agree_rows = read_log(old)
    assert len(_agree_rows["step"]) == 75


def test_record_refuses_a_checkpoint_it_cannot_read(run, tmp_path, capsys):
    ckpt = run / "checkpoint.pt"
    ckpt.write_bytes(ckpt.read_bytes()[:1000])
    out = tmp_path / "e.npz"
    assert main(["record", "--env", "DeepSea-4-v0", "--policy", str(ckpt), "--density", "cts", "--out", str(out),
                 "--max-steps", "8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cannot read {ckpt}: it holds 1000 bytes" in err and not out.exists()
    ckpt.unlink()
    assert main(["record", "--env", "DeepSea-4-v0", "--policy", str(ckpt), "--density", "cts", "--out", str(out),
                 "--max-steps", "8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"policy '{ckpt}' is neither" in err and not out.exists()
    # the run's folder and its policy.pt still give the policy
    assert main(["record", "--env", "DeepSea-4-v0", "--policy", str(run), "--density", "cts", "--out", str(out),
                 "--max-steps", "8"]) == 0


def test_record_says_what_its_bonus_numbers_are(run, tmp_path, capsys):
    out = tmp_path / "e.npz"
    assert main(["record", "--env", "DeepSea-4-v0", "--policy", str(run), "--density", "cts", "--out", str(out),
                 "--max-steps", "8"]) == 0
    text = capsys.readouterr().out
    assert text.count("\n") == 1 and "mean bonus " in text
    # the run trained with the CTS bonus in the paper's form: record takes that form from its checkpoint
    assert ("; the bonus is r+ = beta PC^-1/2 per recorded frame, in reward units, unclipped (training clips "
            "r + r+ to [-1, 1]); bonus form: cts, c = 1 constant, beta = 0.05 (the checkpoint's: its run trained "
            "with this form); mean bonus ") in text


def test_pg_scale_help_gives_each_models_auto_form(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "auto: the paper's form of the density model (pixelcnn 0.1; cts, convcts 1)" in text


def test_epsilon_used_is_the_rate_novelty_scaled_exploration_acted_with(tmp_path):
    cfg = _cfg(tmp_path / "n", 400, scored_frame="next_state", novelty_epsilon=1.0)
    train(cfg, progress=False)
    log = read_log(cfg.out_dir)
    assert LOG_COLUMNS[-1] == "epsilon_used"
    assert np.all(log["epsilon_used"] >= log["epsilon"] - 1e-6) and np.all(log["epsilon_used"] <= 1.0)
    assert np.any(log["epsilon_used"] > log["epsilon"] + 0.01)  # novel states are acted in at random more often
    plain = _cfg(tmp_path / "p", 400)
    train(plain, progress=False)
    log = read_log(plain.out_dir)
    # without it, each step's rate is the schedule's: an episode's mean over its steps
    for end, length, used in zip(log["step"], log["length"], log["epsilon_used"]):
        from pcnn_explore.run.loop import epsilon_at

        assert used == pytest.approx(np.mean([epsilon_at(plain, s) for s in range(end - length, end)]), rel=1e-5)


def test_a_kill_at_any_moment_of_a_report_leaves_a_whole_report(made, tmp_path, monkeypatch):
    import os

    from pcnn_explore.sweep import report

    sweep = _sweep(tmp_path, made)
    assert main(["sweep", "--report", str(sweep)]) == 0
    final = sweep / "report"
    old = {p.name: p.read_bytes() for p in final.iterdir()}
    # the sweep changes: one trial more, so that the new report differs
    data = json.loads((sweep / "sweep.json").read_text())
    shutil.copytree(made / "once", sweep / "DeepSea-4-v0/cts/seed2")
    data["trials"].append({**data["trials"][0], "name": "DeepSea-4-v0/cts/seed2", "seed": 2,
                           "folder": "DeepSea-4-v0/cts/seed2", "out_dir": str(sweep / "DeepSea-4-v0/cts/seed2")})
    (sweep / "sweep.json").write_text(json.dumps(data))
    seen = []

    def whole():  # what a kill at this moment leaves: the earlier report or the new one, every file of it
        assert final.is_dir(), "no report/ at this moment"
        files = {p.name: p.read_bytes() for p in final.iterdir()}
        assert set(files) == set(old)
        seen.append("old" if files == old else "new")

    def watched(fn):
        def call(*args, **kwargs):
            whole()
            try:
                return fn(*args, **kwargs)
            finally:
                whole()
        return call

    for name in ("rename", "replace"):
        monkeypatch.setattr(os, name, watched(getattr(os, name)))
    monkeypatch.setattr(shutil, "rmtree", watched(shutil.rmtree))
    if hasattr(report, "_swap"):
        monkeypatch.setattr(report, "_swap", watched(report._swap))
    assert main(["sweep", "--report", str(sweep)]) == 0
    monkeypatch.undo()
    assert seen[0] == "old" and seen[-1] == "new" and set(seen) == {"old", "new"}
    assert sorted(p.name for p in sweep.iterdir()) == ["DeepSea-4-v0", "report", "sweep.json"]


def test_a_failure_between_the_steps_of_a_report_leaves_the_earlier_one(made, tmp_path, monkeypatch):
    from pcnn_explore.sweep import report

    sweep = _sweep(tmp_path, made)
    assert main(["sweep", "--report", str(sweep)]) == 0
    old = {p.name: p.read_bytes() for p in (sweep / "report").iterdir()}

    class Killed(BaseException):
        pass

    def fail(*args, **kwargs):
        raise Killed()

    monkeypatch.setattr(report, "_swap", fail, raising=False)
    with pytest.raises(Killed):
        report.write_report(sweep)
    assert {p.name: p.read_bytes() for p in (sweep / "report").iterdir()} == old
    assert sorted(p.name for p in sweep.iterdir()) == ["DeepSea-4-v0", "report", "sweep.json"]
    # where the folders cannot be exchanged: two renames; a kill between them is put right by the next report
    monkeypatch.setattr(report, "_swap", lambda a, b: False)
    (sweep / "report").rename(sweep / ".report-old-999999999-1")
    assert main(["sweep", "--report", str(sweep)]) == 0
    assert sorted(p.name for p in sweep.iterdir()) == ["DeepSea-4-v0", "report", "sweep.json"]
