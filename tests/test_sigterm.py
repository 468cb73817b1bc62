"""SIGTERM (what Slurm, most schedulers, ``docker stop`` and systemd send before SIGKILL) ends a
run as Ctrl-C does: a checkpoint at the step reached, one line naming the command that resumes it,
exit status 143 (128 + 15), no partial file left; the resume continues to the same log as a run
never stopped. A sweep stopped by SIGTERM (sent to its whole process group, as a scheduler does)
has each running trial checkpoint where it is, and the same command resumes it from there.

Unlike the Ctrl-C tests, these need no foreground shell: SIGTERM's default action is in place in a
background job too.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from pcnn_explore.checkpoint import load, read_meta
from pcnn_explore.run import LOG_COLUMNS, TrainConfig, read_log, train
from test_run_interrupt import CHILD_ENV, ROOT, _child, _logged_step, _resume_command, _wait_for, one_line
from test_train import assert_same, check_log_covers_every_step

torch.set_num_threads(1)
SIZE = 10  # DeepSea-10: every episode lasts exactly 10 agent steps
ENV = f"DeepSea-{SIZE}-v0"


def _partial_files(folder: Path) -> list[Path]:
    """Files an atomic write left behind (``.NAME.XXXX.tmp``), anywhere under ``folder``."""
    return sorted(folder.rglob("*.tmp"))


def _checkpoint_within_the_running_episode(out: Path, step: int) -> None:
    """The checkpoint is at ``step``, in the episode that follows the log's last row: no row the log
    holds lies past it (a resume redoes none), and no whole episode was run after the last row."""
    last = int(read_log(out)["step"][-1])
    assert read_meta(out / "checkpoint.pt")["step"] == step
    assert last <= step < last + SIZE, (last, step)


# --------------------------------------------------------------------------------- 1. the command
@pytest.mark.slow
def test_sigterm_checkpoints_at_the_step_reached_and_the_resume_equals_an_uninterrupted_run(tmp_path):
    steps = 1200
    common = ["train", "--env", ENV, "--bonus", "cts", "--mmc", "0.1", "--profile", "smoke", "--seed", "3",
              "--steps", str(steps), "--checkpoint-every", "100000", "--no-progress"]
    cut, ref = tmp_path / "cut", tmp_path / "ref"
    proc = _child(*common, "--out", str(cut))
    _wait_for(lambda: _logged_step(cut) > 150, proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    err = one_line(proc.returncode, err.decode(), 143)
    m = re.fullmatch(rf"pcnn-explore train: stopped by SIGTERM at step (\d+) of {steps}: checkpoint saved in "
                     rf"{re.escape(str(cut))}; resume with: pcnn-explore train --resume --out {re.escape(str(cut))}",
                     err)
    assert m, err
    step = int(m.group(1))
    assert 150 < step < steps
    _checkpoint_within_the_running_episode(cut, step)
    assert _partial_files(cut) == []  # every file whole
    done = subprocess.run(_resume_command(err, cut), env=CHILD_ENV, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"resuming {cut} at step {step} of {steps}" in done.stdout
    subprocess.run([sys.executable, "-m", "pcnn_explore", *common, "--out", str(ref)], env=CHILD_ENV, cwd=ROOT,
                   capture_output=True, text=True, check=True)
    got, want = read_log(cut), read_log(ref)
    check_log_covers_every_step(got, steps)
    for col in LOG_COLUMNS:
        if col != "wall_seconds":
            np.testing.assert_array_equal(got[col], want[col], err_msg=col)
    a, b = load(cut / "checkpoint.pt"), load(ref / "checkpoint.pt")
    a["config"].pop("out_dir"), b["config"].pop("out_dir")
    assert_same(a, b)  # networks, optimisers, density model, replay, RNG states, counters


# ------------------------------------------------------------------------------ 2. the Python API
def _sigterm_once(log_module, after: int, times: int, sent: list):
    """A CsvLog that sends this process SIGTERM ``times`` times once a row past step ``after`` is
    written (only while a handler of the run's is in place: the default action would end pytest)."""

    class Term(log_module.CsvLog):
        def write(self, row):
            super().write(row)
            if row["step"] > after and not sent:
                assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN), "no run handler"
                sent.append(row["step"])
                for _ in range(times):
                    os.kill(os.getpid(), signal.SIGTERM)

    return Term


@pytest.mark.parametrize("times", [1, 2])
def test_sigterm_in_python_raises_run_interrupted_and_the_resume_is_exact(tmp_path, monkeypatch, times):
    """Once or twice (a scheduler's SIGTERM to every process, and a sweep passing its own on): a
    checkpoint at the step reached either way, never a stop without it; the default action is back
    afterwards."""
    from pcnn_explore.run import logger

    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    sent: list = []
    cut = TrainConfig.preset("smoke", env=ENV, bonus="cts", steps=400, out_dir=str(tmp_path / "cut"))
    ref = TrainConfig.preset("smoke", env=ENV, bonus="cts", steps=400, out_dir=str(tmp_path / "ref"))
    monkeypatch.setattr(logger, "CsvLog", _sigterm_once(logger, 120, times, sent))
    with pytest.raises(KeyboardInterrupt) as caught:
        train(cut, progress=False)
    monkeypatch.undo()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    e = caught.value
    assert type(e).__name__ == "RunInterrupted" and e.signum == signal.SIGTERM and e.exit_status == 143
    assert not e.at_once and e.checkpoint == e.step and sent[0] <= e.step < sent[0] + SIZE
    assert str(e) == (f"stopped by SIGTERM at step {e.step} of 400: checkpoint saved in {cut.out_dir}; "
                      "resume with: train(cfg, resume=True)")
    _checkpoint_within_the_running_episode(Path(cut.out_dir), e.step)
    assert _partial_files(tmp_path) == []
    got, want = train(cut, resume=True, progress=False), train(ref, progress=False)
    assert (got.steps, got.episodes) == (want.steps, want.episodes)
    la, lb = read_log(cut.out_dir), read_log(ref.out_dir)
    for col in LOG_COLUMNS:
        if col != "wall_seconds":
            np.testing.assert_array_equal(la[col], lb[col], err_msg=col)


def test_sigterm_is_taken_over_only_where_its_default_action_is_in_place(tmp_path, monkeypatch):
    """The run takes SIGTERM over while it trains and gives the default back; a program that handles
    SIGTERM itself keeps its handler throughout."""
    from pcnn_explore.run import logger

    seen = []

    class Look(logger.CsvLog):
        def write(self, row):
            super().write(row)
            seen.append(signal.getsignal(signal.SIGTERM))

    monkeypatch.setattr(logger, "CsvLog", Look)
    cfg = TrainConfig.preset("smoke", env=ENV, steps=40, out_dir=str(tmp_path / "a"))
    train(cfg, progress=False)
    assert seen and all(getattr(h, "__qualname__", "") == "CtrlC._handle" for h in seen), seen
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    mine = lambda signum, frame: None  # noqa: E731
    previous, seen[:] = signal.signal(signal.SIGTERM, mine), []
    try:
        train(TrainConfig.preset("smoke", env=ENV, steps=40, out_dir=str(tmp_path / "b")), progress=False)
        assert seen and all(h is mine for h in seen), seen
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)


# ------------------------------------------------------------------------------------ 3. a sweep
@pytest.mark.slow
def test_a_sweep_stopped_by_sigterm_checkpoints_its_trial_where_it_is_and_the_same_command_resumes_it(tmp_path):
    steps = 8000
    out = tmp_path / "sweep"
    argv = [sys.executable, "-m", "pcnn_explore", "sweep", "--envs", ENV, "--variants", "dqn", "--seeds", "0",
            "--profile", "smoke", "--set", f"steps={steps}", "--set", "checkpoint_every=1000000",
            "--executor", "local", "--max-concurrent", "1", "--no-progress", "--out", str(out)]
    proc = subprocess.Popen(argv, env=CHILD_ENV, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)  # (its own process group, as a job's)
    trial = None
    try:
        def started() -> bool:
            nonlocal trial
            logs = list(out.rglob("log.csv"))
            trial = logs[0].parent if logs else None
            return trial is not None and _logged_step(trial) > 150

        _wait_for(started, proc, 240)
        os.killpg(proc.pid, signal.SIGTERM)  # every process of the job: the sweep and its worker
        _, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    err = one_line(proc.returncode, err.decode(), 143)
    assert err == ("pcnn-explore sweep: interrupted; the same command resumes the unfinished trials from their "
                   "checkpoints"), err
    step = read_meta(trial / "checkpoint.pt")["step"]
    assert 150 < step < steps  # the step reached, not a periodic checkpoint (every 1,000,000 steps: none before)
    _checkpoint_within_the_running_episode(trial, step)
    assert _partial_files(out) == []
    assert [t["status"] for t in json.loads((out / "sweep.json").read_text())["trials"]] == ["queued"]
    assert not (trial / "result.json").exists()
    kept = read_log(trial)
    again = subprocess.run(argv, env=CHILD_ENV, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    result = json.loads((trial / "result.json").read_text())
    assert result["resumed"] is True and result["steps"] == steps, result
    assert json.loads((trial / "attempt.json").read_text())["attempt"] == 2
    log = read_log(trial)
    check_log_covers_every_step(log, steps)
    for col in LOG_COLUMNS:  # the rows before the stop are kept as they were
        if col != "wall_seconds":
            np.testing.assert_array_equal(log[col][:len(kept[col])], kept[col], err_msg=col)
