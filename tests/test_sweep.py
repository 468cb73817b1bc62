"""Sweeps on a local Ray (2 CPUs, started once for this module: conftest's ray_cluster): a 4-trial MiniGrid grid finishes
although one trial's worker is SIGKILLed mid-run, that trial's log covering every step exactly
once; the same sweep again starts nothing and touches no log."""
from __future__ import annotations

import dataclasses
import json
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from pcnn_explore.run.log import read_log
from pcnn_explore.sweep import folders, ray_cluster as ray_module, records as sweep_records, runner
from pcnn_explore.sweep.grid import Grid

ENV = "MiniGrid-Serpentine-7x7-v0"
STEPS = 800


def _files(folder: Path) -> dict[str, tuple[int, bytes]]:
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.read_bytes())
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != sweep_records.SWEEP_FILE}


def _covers_each_step_once(out_dir: str, steps: int) -> None:
    log = read_log(out_dir)
    assert log["episode"].tolist() == list(range(len(log["episode"])))  # no episode logged twice or lost
    assert np.array_equal(np.cumsum(log["length"]), log["step"])  # each row starts where the last ended
    assert int(log["step"][-1]) == steps and int(log["length"].sum()) == steps


@pytest.mark.slow
def test_grid_survives_a_killed_worker_and_a_second_run_starts_nothing(ray_cluster, tmp_path, monkeypatch):
    grid = Grid(envs=(ENV,), variants=("dqn", "pixelcnn_mmc"), seeds=(0, 1), profile="smoke", out=str(tmp_path),
                set={"steps": (STEPS,), "checkpoint_every": (100,), "tensorboard": (False,)})
    trials = grid.trials()
    assert [t.name for t in trials] == [f"{ENV}/{v}/seed{s}" for v in ("dqn", "pixelcnn_mmc") for s in (0, 1)]
    victim = Path(trials[2].out_dir)  # pixelcnn_mmc, seed 0 (the slower variant)
    outcome: dict = {}

    def sweep():
        try:
            outcome["records"] = runner.run_trials(trials, sweep_dir=tmp_path, max_retries=2, refresh_s=0.2)
        except BaseException as e:  # noqa: BLE001  (reported by the assertions below)
            outcome["error"] = e

    worker = threading.Thread(target=sweep)
    t0 = time.monotonic()
    worker.start()
    killed = None
    while worker.is_alive() and killed is None and time.monotonic() - t0 < 240:
        attempt = folders.read_json(victim / folders.ATTEMPT_FILE) or {}
        if attempt.get("attempt") == 1 and (victim / "checkpoint.pt").is_file() and folders.tail_step(victim / "log.csv") < STEPS:
            killed = attempt["pid"]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.05)
    worker.join(300)
    assert "error" not in outcome, outcome.get("error")
    assert killed is not None, "the victim trial finished before its worker could be killed"
    records = outcome["records"]
    assert [r["status"] for r in records] == ["done"] * 4
    saved = json.loads((tmp_path / sweep_records.SWEEP_FILE).read_text())
    assert [r["status"] for r in saved["trials"]] == ["done"] * 4
    assert {r["name"]: r["attempts"] for r in saved["trials"]}[trials[2].name] == 2
    result = json.loads((victim / folders.RESULT_FILE).read_text())
    assert result["resumed"] is True and result["steps"] == STEPS  # the retry continued from the checkpoint
    for t in trials:
        _covers_each_step_once(t.out_dir, STEPS)
        stored = json.loads((Path(t.out_dir) / folders.TRIAL_FILE).read_text())
        assert stored["settings"]["steps"] == STEPS and stored["variant"] == t.variant and stored["seed"] == t.seed

    # The same sweep again: nothing starts (not even Ray), no file of any trial changes.
    before = _files(tmp_path)
    monkeypatch.setattr(ray_module, "connect", lambda *a, **k: pytest.fail("a finished sweep started Ray"))
    again = runner.run_trials(trials, sweep_dir=tmp_path)
    assert [r["status"] for r in again] == ["done"] * 4
    assert _files(tmp_path) == before


@pytest.mark.slow
def test_the_same_sweep_again_resumes_an_interrupted_trial(ray_cluster, tmp_path):
    """A trial killed mid-run outside any retry (the whole sweep stopped) resumes from its checkpoint
    when the sweep runs again, and ends with the log a run without the interruption writes."""
    import subprocess
    import sys

    from pcnn_explore.run import TrainConfig, train

    steps = 800
    grid = Grid(envs=(ENV,), variants=("dqn",), seeds=(3,), profile="smoke", out=str(tmp_path),
                set={"steps": (steps,), "checkpoint_every": (100,), "tensorboard": (False,)})
    (trial,) = grid.trials()
    settings = trial.config().to_dict()
    folders.prepare(trial, settings)
    code = f"from pcnn_explore.sweep.trial import train_trial; train_trial({settings!r})"
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path)
    folder = Path(trial.out_dir)
    while proc.poll() is None and not (folder / "checkpoint.pt").is_file():
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert folders.tail_step(folder / "log.csv") < steps, "the run finished before it could be stopped"
    (record,) = runner.run_trials([trial], sweep_dir=tmp_path)
    assert record["status"] == "done" and record["attempts"] == 2
    assert json.loads((folder / folders.RESULT_FILE).read_text())["resumed"] is True
    _covers_each_step_once(trial.out_dir, steps)
    fresh = tmp_path / "fresh"
    train(TrainConfig(**{**settings, "out_dir": str(fresh)}), progress=False)
    assert read_log(fresh)["return"].tolist() == read_log(folder)["return"].tolist()


@pytest.mark.slow
def test_parallel_runs_match_sequential_runs(ray_cluster, tmp_path):
    """The agent experiments' runner (agent_runs, on Ray) changes nothing: the same specs give the
    same episodes one or two at a time, and the same as a run in this process."""
    kw = dict(env="MiniGrid-Serpentine-7x7-v0", variants=["dqn", "pixelcnn_mmc"], seeds=[0], steps=250,
              profile="smoke", extra={"tensorboard": False})
    from pcnn_explore.experiments.agents.agent_runs import run_grid, run_one

    seq = run_grid(out_root=tmp_path / "seq", workers=1, **kw)
    par = run_grid(out_root=tmp_path / "par", workers=2, **kw)
    for a, b in zip(seq, par):
        assert a.spec.variant == b.spec.variant
        assert a.episode_end_step.tolist() == b.episode_end_step.tolist()
        assert a.episode_return.tolist() == b.episode_return.tolist()
        assert a.episode_intrinsic.tolist() == b.episode_intrinsic.tolist()
    assert seq[1].episode_intrinsic.sum() > 0  # the bonus run did score frames
    here = run_one(dataclasses.replace(seq[1].spec, out_dir=str(tmp_path / "here")))
    assert here.episode_return.tolist() == seq[1].episode_return.tolist()
    assert here.episode_intrinsic.tolist() == seq[1].episode_intrinsic.tolist()
    # the same specs again: read back, nothing retrained (the logs are untouched)
    logs = {p: p.stat().st_mtime_ns for p in (tmp_path / "seq").rglob("log.csv")}
    again = run_grid(out_root=tmp_path / "seq", workers=2, **kw)
    assert [a.episode_return.tolist() for a in again] == [a.episode_return.tolist() for a in seq]
    assert {p: p.stat().st_mtime_ns for p in logs} == logs
