"""Runs that are interrupted, or still running, say the right thing.

A live run is told from a dead one (its lock) before any advice about its folder; Ctrl-C takes a
checkpoint at the step reached and ends with one line naming the command that resumes it (status
130), a second Ctrl-C stops at once; ``--out`` refuses a folder of unrelated files; the CLI names
only flags and the Python API only Python names; closing a run finishes the checkpoint writer while
the folder is still locked, whatever fails on the way.
"""
from __future__ import annotations

import errno
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from pcnn_explore.checkpoint import load, read_meta
from pcnn_explore.cli import main
from pcnn_explore.run import LOG_COLUMNS, RunError, TrainConfig, read_log, train
from test_run_cli import snapshot  # every file's bytes and mtime under a folder
from test_train import assert_same, check_log_covers_every_step

torch.set_num_threads(1)
ENV = "MiniGrid-Empty-5x5-v0"
ROOT = Path(__file__).resolve().parents[1]
CHILD_ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def smoke(out: Path, **kw) -> TrainConfig:
    return TrainConfig.preset("smoke", **{"env": ENV, "out_dir": str(out), "steps": 150, **kw})


def cli(*argv: str, capsys) -> tuple[int, str, str]:
    try:
        status = main(["train", "--no-progress", *argv])
    except SystemExit as e:  # argparse errors
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def one_line(status: int, err: str, want: int = 2) -> str:
    assert status == want and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (status, err)
    return err.strip()


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "cts"
    train(smoke(out, bonus="cts"), progress=False)
    return out


def _wait_for(condition, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline and proc.poll() is None:
        if condition():
            return
        time.sleep(0.02)
    err = proc.stderr.read().decode() if proc.poll() is not None else ""
    raise AssertionError(f"timed out (rc {proc.poll()}): {err}")


def _logged_step(out: Path) -> int:
    try:
        lines = (out / "log.csv").read_text().splitlines()
    except OSError:
        return 0
    return int(lines[-1].split(",")[0]) if len(lines) > 1 and lines[-1].endswith(tuple("0123456789")) else 0


def _holder(out: Path) -> subprocess.Popen:
    """Another process that holds ``out``'s run lock (a live run, frozen)."""
    code = ("import fcntl, json, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
            "fcntl.flock(fd, fcntl.LOCK_EX); os.ftruncate(fd, 0); os.write(fd, json.dumps({'pid': os.getpid(), 'host': 'h1'}).encode()); "
            "print('locked', flush=True); time.sleep(120)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(out / "run.lock")], stdout=subprocess.PIPE)
    assert proc.stdout.readline() == b"locked\n"
    return proc


def _sigint_as_at_a_terminal() -> None:
    """In the child, before Python starts: SIGINT's default action, as a run started at a terminal has. A
    parent that ignores SIGINT (a job a non-interactive shell started with ``&``) passes the ignore on, and
    Python then leaves Ctrl-C ignored, so the tests' SIGINT would reach nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# ------------------------------------------------------------------ 1. a live run is never called dead
@pytest.mark.parametrize("holds", ["log", "checkpoint"])
@pytest.mark.parametrize("resume", [False, True])
def test_a_folder_a_live_run_holds_gets_no_other_advice(tmp_path, capsys, finished_run, holds, resume):
    out = tmp_path / "run"
    if holds == "log":  # a live run before its first checkpoint
        out.mkdir()
        (out / "log.csv").write_text("step,episode\n1,0\n")
    else:
        shutil.copytree(finished_run, out)
    proc = _holder(out)
    try:
        before = snapshot(out)
        flags = ["--resume", "--steps", "300"] if resume else []
        for argv in (["--env", ENV, "--profile", "smoke", "--out", str(out), *flags],
                     *([["--out", str(out), *flags]] if resume else [])):
            err = one_line(*cli(*argv, capsys=capsys)[::2])
            assert f"--out {out} is in use by another run (PID {proc.pid} on host h1)" in err, err
            assert "remove" not in err and "add --resume" not in err and "--check" not in err
        with pytest.raises(RunError) as caught:
            train(smoke(out, bonus="cts", steps=300), resume=resume, progress=False)
        assert f"out_dir {out} is in use by another run (PID {proc.pid} on host h1)" in str(caught.value)
        assert "remove" not in str(caught.value)
        assert snapshot(out) == before
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_a_live_run_before_its_first_checkpoint_is_not_called_dead(tmp_path, capsys):
    out = tmp_path / "x"
    argv = ["--env", ENV, "--profile", "smoke", "--bonus", "cts", "--steps", "1000000", "--checkpoint-every",
            "1000000", "--out", str(out)]
    run = subprocess.Popen([sys.executable, "-m", "pcnn_explore", "train", "--no-progress", *argv], env=CHILD_ENV,
                           cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=_sigint_as_at_a_terminal)
    try:
        _wait_for(lambda: _logged_step(out) > 0, run)
        assert not (out / "checkpoint.pt").exists()
        for extra in ([], ["--resume"]):  # the same command again, with and without --resume
            err = one_line(*cli(*argv, *extra, capsys=capsys)[::2])
            assert f"--out {out} is in use by another run (PID {run.pid} on host" in err, err
            assert "remove the folder" not in err and "no checkpoint" not in err
        assert run.poll() is None and (out / "log.csv").is_file()
    finally:
        run.send_signal(signal.SIGINT)
        rc = run.wait(60)
    assert rc == 130 and read_meta(out / "checkpoint.pt")["step"] > 0


# ------------------------------------------------------------------------------------ 2. Ctrl-C
def _child(*argv: str, script: str | None = None) -> subprocess.Popen:
    head = [sys.executable, "-c", script] if script else [sys.executable, "-m", "pcnn_explore"]
    return subprocess.Popen([*head, *argv], env=CHILD_ENV, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_sigint_as_at_a_terminal)


def _resume_command(err: str, out: Path) -> list[str]:
    """The command the one line names, run as ``python -m pcnn_explore`` (no progress bar)."""
    command = err.rsplit("resume with: ", 1)[1]
    words = shlex.split(command)
    assert words == ["pcnn-explore", "train", "--resume", "--out", str(out)], command
    return [sys.executable, "-m", "pcnn_explore", *words[1:], "--no-progress"]


@pytest.mark.slow
def test_ctrl_c_checkpoints_at_the_step_reached_and_the_resume_equals_an_uninterrupted_run(tmp_path):
    steps = 1200
    common = ["train", "--env", ENV, "--bonus", "cts", "--mmc", "0.1", "--profile", "smoke", "--seed", "3",
              "--steps", str(steps), "--checkpoint-every", "100000", "--no-progress"]
    cut, ref = tmp_path / "cut", tmp_path / "ref"
    proc = _child(*common, "--out", str(cut))
    _wait_for(lambda: _logged_step(cut) > 150, proc)
    proc.send_signal(signal.SIGINT)
    printed, err = proc.communicate(timeout=120)
    err = one_line(proc.returncode, err.decode(), 130)
    m = re.fullmatch(rf"pcnn-explore train: interrupted at step (\d+) of {steps}: checkpoint saved in {re.escape(str(cut))}; "
                     rf"resume with: pcnn-explore train --resume --out {re.escape(str(cut))}", err)
    assert m, err
    step = int(m.group(1))
    assert 150 < step < steps and read_meta(cut / "checkpoint.pt")["step"] == step
    assert not list(cut.glob(".*.tmp"))  # every file whole
    done = subprocess.run(_resume_command(err, cut), env=CHILD_ENV, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"resuming {cut} at step {step} of {steps}" in done.stdout
    whole = subprocess.run([sys.executable, "-m", "pcnn_explore", *common, "--out", str(ref)], env=CHILD_ENV,
                           cwd=ROOT, capture_output=True, text=True, check=True)
    got, want = read_log(cut), read_log(ref)
    check_log_covers_every_step(got, steps)
    for col in LOG_COLUMNS:
        if col != "wall_seconds":
            np.testing.assert_array_equal(got[col], want[col], err_msg=col)
    # the result line: agent steps, episodes and mean return (not the speed) are the uninterrupted run's
    summary = [re.sub(r", [\d.]+ steps/s; logs in .*", "", line) for line in (done.stdout, whole.stdout)
               for line in line.splitlines() if "agent steps," in line]
    assert len(summary) == 2 and summary[0] == summary[1], summary
    a, b = load(cut / "checkpoint.pt"), load(ref / "checkpoint.pt")
    a["config"].pop("out_dir"), b["config"].pop("out_dir")
    assert_same(a, b)  # networks, optimisers, density model, replay, RNG states, counters


SLOW_CHECKPOINT = """
import os, sys, time
from pathlib import Path
from pcnn_explore.run import checkpoints
real = checkpoints.save_atomic
def slow(obj, path, **kw):  # once asked: the checkpoint's big file takes a minute
    if Path(path).name == "checkpoint.pt" and (Path(path).parent / "slow").exists():
        (Path(path).parent / "writing").write_text("")
        time.sleep(60)
    return real(obj, path, **kw)
checkpoints.save_atomic = slow
from pcnn_explore.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_a_second_ctrl_c_during_the_checkpoint_stops_at_once_and_names_the_last_checkpoint(tmp_path):
    out = tmp_path / "run"
    proc = _child("train", "--env", ENV, "--profile", "smoke", "--steps", "1000000", "--checkpoint-every", "100",
                  "--no-progress", "--out", str(out), script=SLOW_CHECKPOINT)
    _wait_for(lambda: (read_meta(out / "checkpoint.pt") or {}).get("step", 0) >= 100, proc)
    (out / "slow").write_text("")
    proc.send_signal(signal.SIGINT)
    _wait_for(lambda: (out / "writing").exists(), proc, 60)
    last = read_meta(out / "checkpoint.pt")["step"]
    t0 = time.time()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=50)
    assert time.time() - t0 < 20  # not after the minute the write takes
    err = one_line(proc.returncode, err.decode(), 130)
    m = re.fullmatch(rf"pcnn-explore train: interrupted twice at step (\d+): stopped at once; the last checkpoint in "
                     rf"{re.escape(str(out))} is at step {last}: resume with: pcnn-explore train --resume --out "
                     rf"{re.escape(str(out))}", err)
    assert m, err
    assert int(m.group(1)) > last and read_meta(out / "checkpoint.pt")["step"] == last
    (out / "slow").unlink()
    resumed = subprocess.run([*_resume_command(err, out), "--steps", str(last + 50)], env=CHILD_ENV, cwd=ROOT,
                             capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming {out} at step {last} of {last + 50}" in resumed.stdout
    check_log_covers_every_step(read_log(out), last + 50)


def _with_python_sigint(fn):
    """Run ``fn`` with Python's own SIGINT handler in place (as in a script or a notebook)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return fn()
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_in_python_raises_keyboard_interrupt_naming_python_and_the_resume_is_exact(tmp_path, monkeypatch):
    from pcnn_explore.run import logger

    sent = []

    class CtrlC(logger.CsvLog):
        def write(self, row):
            super().write(row)
            if row["step"] > 120 and not sent:
                sent.append(row["step"])
                os.kill(os.getpid(), signal.SIGINT)

    cut, ref = smoke(tmp_path / "cut", bonus="cts", steps=400), smoke(tmp_path / "ref", bonus="cts", steps=400)
    monkeypatch.setattr(logger, "CsvLog", CtrlC)
    with pytest.raises(KeyboardInterrupt) as caught:
        _with_python_sigint(lambda: train(cut, progress=False))
    monkeypatch.undo()
    e = caught.value
    assert type(e).__name__ == "RunInterrupted" and e.step >= sent[0] and e.checkpoint == e.step and not e.at_once
    assert str(e) == (f"interrupted at step {e.step} of 400: checkpoint saved in {cut.out_dir}; "
                      "resume with: train(cfg, resume=True)")
    assert read_meta(Path(cut.out_dir) / "checkpoint.pt")["step"] == e.step
    got = train(cut, resume=True, progress=False)
    want = train(ref, progress=False)
    assert (got.steps, got.episodes) == (want.steps, want.episodes)
    np.testing.assert_array_equal(got.episode_returns, want.episode_returns)
    np.testing.assert_array_equal(got.episode_end_steps, want.episode_end_steps)
    la, lb = read_log(cut.out_dir), read_log(ref.out_dir)
    for col in LOG_COLUMNS:
        if col != "wall_seconds":
            np.testing.assert_array_equal(la[col], lb[col], err_msg=col)


# ------------------------------------------------------------------------------- 3. the --out folder
def test_out_into_a_folder_of_unrelated_files_is_refused(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes\n")
    before = snapshot(tmp_path)
    for check in ([], ["--check"]):
        err = one_line(*cli("--env", ENV, "--profile", "smoke", "--out", str(out), *check, capsys=capsys)[::2])
        assert err.endswith(f"error: --out {out} holds files that are not a training run's (notes.txt): choose a new "
                            "or empty folder for --out, or move them away"), err
    assert snapshot(tmp_path) == before and os.listdir(out) == ["notes.txt"]
    # what a run that died before writing anything leaves (its lock) is a run's own: still accepted
    (out / "notes.txt").unlink()
    (out / "run.lock").write_text("{}\n")
    status, printed, err = cli("--env", ENV, "--profile", "smoke", "--out", str(out), "--check", capsys=capsys)
    assert status == 0 and "check passed: a run would start afresh" in printed, err


def _messages(tmp_path: Path, finished_run: Path, case: str, capsys) -> tuple[str, str]:
    """(the CLI's line, the Python API's message) for one refusal."""
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    out, argv, cfg, resume = run, [], smoke(run, bonus="cts"), False
    if case == "existing run":
        argv = ["--env", ENV, "--profile", "smoke", "--bonus", "cts"]
    elif case == "nothing to resume":
        out = tmp_path / "none"
        argv, cfg, resume = ["--env", ENV, "--profile", "smoke", "--resume"], smoke(out), True
    elif case == "other settings":
        argv, cfg, resume = ["--resume", "--steps", "300", "--seed", "9"], smoke(run, bonus="cts", steps=300, seed=9), True
    elif case == "log without checkpoint":
        (run / "checkpoint.pt").unlink()
        argv = ["--env", ENV, "--profile", "smoke", "--bonus", "cts"]
    elif case == "a file":
        out = tmp_path / "afile"
        out.write_text("x")
        argv, cfg = ["--env", ENV, "--profile", "smoke"], smoke(out)
    err = one_line(*cli(*argv, "--out", str(out), capsys=capsys)[::2])
    with pytest.raises(RunError) as caught:
        train(dataclasses_replace(cfg, out_dir=str(out)), resume=resume, progress=False)
    return err.split("error: ", 1)[1], str(caught.value)


def dataclasses_replace(cfg, **kw):
    import dataclasses

    return dataclasses.replace(cfg, **kw)


@pytest.mark.parametrize("case", ["existing run", "nothing to resume", "other settings", "log without checkpoint",
                                  "a file"])
def test_the_cli_names_only_flags_and_python_only_python_names(tmp_path, finished_run, capsys, case):
    line, message = _messages(tmp_path, finished_run, case, capsys)
    assert "--out" in line and not re.search(r"\bout_dir\b|=True|=False", line), line
    assert "out_dir" in message and "--" not in message, message
    if case == "existing run":
        assert "add --resume to continue it" in line and "pass resume=True to continue it" in message
    if case == "nothing to resume":
        assert "(or without --resume)" in line and "(or with resume=False)" in message


# ------------------------------------------------------------------------------- 4. closing order
def test_a_failure_while_closing_still_finishes_the_checkpoint_under_the_lock(tmp_path, monkeypatch):
    from pcnn_explore.run import checkpoints, lock as lock_module, log as log_module

    out, events, held = tmp_path / "r", [], []
    real_save, real_close, real_release = (checkpoints.save_atomic, checkpoints.CheckpointWriter.close,
                                           lock_module.RunLock.release)

    def slow_save(obj, path, **kw):  # the final checkpoint is still being written when the log fails to close
        time.sleep(0.3)
        held.append(os.path.realpath(out) in lock_module._HELD)
        return real_save(obj, path, **kw)

    def full_disk(self):
        raise OSError(errno.ENOSPC, "No space left on device")

    def writer_close(self):
        events.append("writer closed")
        return real_close(self)

    def release(self):
        events.append("lock released")
        return real_release(self)

    monkeypatch.setattr(checkpoints, "save_atomic", slow_save)
    monkeypatch.setattr(log_module.CsvLog, "close", full_disk)
    monkeypatch.setattr(checkpoints.CheckpointWriter, "close", writer_close)
    monkeypatch.setattr(lock_module.RunLock, "release", release)
    with pytest.raises(OSError, match="No space left"):
        train(smoke(out, steps=100), progress=False)
    assert events and events[0] == "writer closed" and "lock released" in events, events
    assert held and all(held), held  # every file of the checkpoint written while the folder was locked
    assert read_meta(out / "checkpoint.pt")["step"] == 100
    assert os.path.realpath(out) not in lock_module._HELD  # and the folder given up after


def test_a_cancelled_checkpoint_keeps_the_folder_locked_until_its_write_ends(tmp_path, monkeypatch):
    from pcnn_explore.run import checkpoints, lock as lock_module, logger

    out, held, sent = tmp_path / "r", [], []
    real_save = checkpoints.save_atomic

    def slow_save(obj, path, **kw):
        if Path(path).name == "checkpoint.pt" and sent:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C again while the checkpoint is being written
            time.sleep(1.0)
            held.append(os.path.realpath(out) in lock_module._HELD)
        return real_save(obj, path, **kw)

    class CtrlC(logger.CsvLog):
        def write(self, row):
            super().write(row)
            if row["step"] > 60 and not sent:
                sent.append(row["step"])
                os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(checkpoints, "save_atomic", slow_save)
    monkeypatch.setattr(logger, "CsvLog", CtrlC)
    t0 = time.time()
    with pytest.raises(KeyboardInterrupt) as caught:
        _with_python_sigint(lambda: train(smoke(out, steps=1000, checkpoint_every=100000), progress=False))
    e = caught.value
    assert time.time() - t0 < 60 and e.at_once and e.writing
    assert str(e) == (f"interrupted twice at step {e.step}: stopped at once while a checkpoint was being written; it "
                      f"ends in the background ({out} stays locked until then), then resume with: "
                      "train(cfg, resume=True)")
    assert os.path.realpath(out) in lock_module._HELD  # the write still runs: the folder stays locked
    deadline = time.time() + 30
    while os.path.realpath(out) in lock_module._HELD and time.time() < deadline:
        time.sleep(0.05)
    assert held == [True] and os.path.realpath(out) not in lock_module._HELD
