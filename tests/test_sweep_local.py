"""Sweeps on this machine without Ray (pcnn_explore.sweep.local): reused worker processes give the
logs a run of ``train`` gives, a SIGKILLed worker's trial resumes in a new worker, a failed trial
leaves the others alone, Ctrl-C ends the workers; the executor is chosen by the cluster asked for;
the planner writes a trial folder only under its run lock."""
from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from pcnn_explore.cli import main
from pcnn_explore.run.log import read_log
from pcnn_explore.sweep import executors, folders, plan, records as sweep_records, runner
from pcnn_explore.sweep.grid import Grid, SweepError
from pcnn_explore.sweep.local import LocalExecutor, worker_count

ROOT = Path(__file__).resolve().parents[1]
ENV = "DeepSea-5-v0"


def _rows(folder) -> list[dict]:
    """log.csv's rows, the wall-clock column left out."""
    with open(Path(folder) / "log.csv") as f:
        return [{k: v for k, v in r.items() if k != "wall_seconds"} for r in csv.DictReader(f)]


def _direct(settings: dict, out: Path) -> list[dict]:
    """The same trial run by ``train`` in this process."""
    from pcnn_explore.run import TrainConfig, train

    train(TrainConfig(**{**settings, "out_dir": str(out)}), progress=False)
    return _rows(out)


def _grid(tmp_path, variants=("dqn",), seeds=(0,), **settings) -> Grid:
    return Grid(envs=(ENV,), variants=variants, seeds=seeds, profile="smoke", out=str(tmp_path / "sweep"),
                set={k: (v,) for k, v in {"tensorboard": False, **settings}.items()})


def _wait_for(condition, thread: threading.Thread, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert thread.is_alive() and time.monotonic() < deadline, "the sweep ended (or hung) before the condition"
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_worker_count_follows_the_machine_and_the_shares():
    assert worker_count(20, None, 1.0, cpus=2) == 2  # the CPU count
    assert worker_count(20, None, 0.5, cpus=2) == 4
    assert worker_count(20, None, 3.0, cpus=2) == 1  # at least one
    assert worker_count(3, None, 1.0, cpus=16) == 3  # never more than the trials
    assert worker_count(20, 5, 1.0, cpus=2) == 5  # max_concurrent wins
    assert worker_count(20, None, 1.0, 0.25, cpus=16, gpus=1) == 4  # four trials share the GPU


def test_the_executor_is_ray_only_where_a_cluster_is_asked_for(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delitem(sys.modules, "ray", raising=False)
    assert executors.choose_executor() == "local"
    assert executors.choose_executor("auto", "auto") == "ray"
    assert executors.choose_executor("ray") == "ray" and executors.choose_executor("local") == "local"
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert executors.choose_executor() == "ray"
    assert executors.choose_executor("local") == "local"  # forced: $RAY_ADDRESS ignored
    monkeypatch.delenv("RAY_ADDRESS")

    class Ray:  # a Ray this process joined
        initialised = True

        def is_initialized(self):
            return self.initialised

    monkeypatch.setitem(sys.modules, "ray", Ray())
    assert executors.choose_executor() == "ray"
    sys.modules["ray"].initialised = False
    assert executors.choose_executor() == "local"
    with pytest.raises(SweepError, match="executor must be one of auto, local, ray, got 'dask'"):
        executors.choose_executor("dask")
    with pytest.raises(SweepError, match="--address auto joins a Ray cluster"):
        executors.choose_executor("local", "auto")


def test_a_bad_executor_is_one_line_before_anything_is_written(tmp_path, capsys):
    from pcnn_explore.experiments.agents.agent_runs import RunSpec, run_specs

    out = tmp_path / "s"
    args = ["sweep", "--envs", ENV, "--variants", "dqn", "--profile", "smoke", "--out", str(out)]
    assert main([*args, "--executor", "local", "--address", "auto"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--address auto joins a Ray cluster" in err
    with pytest.raises(SystemExit) as e:
        main([*args, "--executor", "dask"])
    assert e.value.code == 2 and "invalid choice: 'dask'" in capsys.readouterr().err
    assert not out.exists()
    spec = RunSpec("dqn", ENV, 0, 10, "smoke", str(out / "r"))
    with pytest.raises(ValueError, match="executor must be auto, local or ray, got 'dask'"):
        run_specs([spec], executor="dask")
    assert not out.exists()


@pytest.mark.slow
def test_a_local_sweep_imports_no_ray_and_logs_what_train_logs(tmp_path):
    """Three trials on two reused workers (sweep CLI, no flag: the default executor), in a process
    where importing Ray fails and says so: the same log rows as ``train`` in this process."""
    fake = tmp_path / "fake"
    (fake / "ray").mkdir(parents=True)
    marker = tmp_path / "ray_imported"
    (fake / "ray" / "__init__.py").write_text(f"open({str(marker)!r}, 'a').write('x')\n"
                                              "raise ImportError('ray imported')\n")
    out = tmp_path / "sweep"
    code = ("import sys\nfrom pcnn_explore.cli import main\n"
            f"rc = main(['sweep', '--envs', '{ENV}', '--variants', 'cts_mmc', '--seeds', '0,1,2', '--profile', "
            f"'smoke', '--set', 'steps=250', '--set', 'tensorboard=false', '--max-concurrent', '2', '--no-progress', "
            f"'--out', {str(out)!r}])\nprint('ray' in sys.modules)\nsys.exit(rc)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "PYTHONPATH")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                       env={**env, "PYTHONPATH": f"{fake}{os.pathsep}{ROOT}"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "False" and "3 of 3 trials done" in r.stdout
    assert not marker.exists()  # no worker imported Ray either
    trials = json.loads((out / sweep_records.SWEEP_FILE).read_text())["trials"]
    assert [t["status"] for t in trials] == ["done"] * 3
    pids = [json.loads((Path(t["out_dir"]) / folders.ATTEMPT_FILE).read_text())["pid"] for t in trials]
    assert len(set(pids)) == 2  # two workers, each reused
    for t in trials:
        settings = json.loads((Path(t["out_dir"]) / folders.TRIAL_FILE).read_text())["settings"]
        rows = _rows(t["out_dir"])
        assert len(rows) == 50 and rows == _direct(settings, tmp_path / "direct" / t["folder"])


@pytest.mark.slow
def test_a_killed_worker_is_replaced_and_its_trial_resumes(tmp_path):
    steps = 3000
    trials = _grid(tmp_path, variants=("cts_mmc", "dqn"), steps=steps, checkpoint_every=100).trials()
    victim = Path(trials[0].out_dir)
    outcome: dict = {}

    def sweep():
        try:
            outcome["records"] = runner.run_trials(trials, executor="local", max_concurrent=2, max_retries=1,
                                                   sweep_dir=tmp_path / "sweep", refresh_s=0.2)
        except BaseException as e:  # noqa: BLE001  (reported by the assertions below)
            outcome["error"] = e

    thread = threading.Thread(target=sweep)
    thread.start()
    _wait_for(lambda: (victim / "checkpoint.pt").is_file() and folders.tail_step(victim / "log.csv") > 100, thread)
    killed = json.loads((victim / folders.ATTEMPT_FILE).read_text())["pid"]
    assert folders.tail_step(victim / "log.csv") < steps, "the trial finished before its worker could be killed"
    os.kill(killed, signal.SIGKILL)
    thread.join(600)
    assert "error" not in outcome, outcome.get("error")
    assert [r["status"] for r in outcome["records"]] == ["done", "done"]
    attempt = json.loads((victim / folders.ATTEMPT_FILE).read_text())
    assert attempt["attempt"] == 2 and attempt["pid"] != killed  # a new worker ran it again
    assert json.loads((victim / folders.RESULT_FILE).read_text())["resumed"] is True
    saved = json.loads((tmp_path / "sweep" / sweep_records.SWEEP_FILE).read_text())["trials"]
    assert [(r["status"], r["attempts"]) for r in saved] == [("done", 2), ("done", 1)]
    log = read_log(victim)
    assert np.array_equal(np.cumsum(log["length"]), log["step"]) and int(log["step"][-1]) == steps
    settings = json.loads((victim / folders.TRIAL_FILE).read_text())["settings"]
    assert _rows(victim) == _direct(settings, tmp_path / "direct")  # the resumed log: as a run never killed


@pytest.mark.slow
def test_a_failed_trial_leaves_the_others_and_its_worker_goes_on(tmp_path):
    """One worker: the first trial's checkpoint is corrupt (it fails, one line), the second runs on
    the same worker; a worker that dies on every attempt fails its trial once retries are spent."""
    trials = _grid(tmp_path, seeds=(0, 1), steps=100).trials()
    planned = plan.plan(trials)
    folders.prepare(trials[0], planned[0][1])
    (Path(trials[0].out_dir) / "checkpoint.pt").write_bytes(b"not a checkpoint")
    records = runner.run_trials(trials, executor="local", max_concurrent=1, sweep_dir=tmp_path / "sweep")
    assert [r["status"] for r in records] == ["failed", "done"]
    assert "checkpoint.pt" in records[0]["error"] and "\n" not in records[0]["error"]
    pids = [json.loads((Path(t.out_dir) / folders.ATTEMPT_FILE).read_text())["pid"] for t in trials]
    assert pids[0] == pids[1]

    pool = LocalExecutor(1, max_retries=2, task=signal.raise_signal)  # (a task that kills its worker)
    try:
        pool.submit(7, int(signal.SIGKILL))
        ended = []
        while not ended:
            ended = pool.wait(5.0)
    finally:
        pool.close()
    assert ended == [(7, None, "the worker running this trial died (killed by SIGKILL) on each of its 3 attempts")]


class _Interrupt:
    """A live view that presses Ctrl-C once every trial runs and has logged a row (on a loaded
    machine the second worker can start seconds after the first)."""

    def update(self, records, force=False):
        if all(r["status"] == "running" and r["steps"] > 0 for r in records):
            raise KeyboardInterrupt


@pytest.mark.slow
def test_ctrl_c_ends_the_workers_and_requeues_their_trials(tmp_path):
    trials = _grid(tmp_path, seeds=(0, 1), steps=20_000).trials()
    with pytest.raises(KeyboardInterrupt):
        runner.run_trials(trials, executor="local", max_concurrent=2, sweep_dir=tmp_path / "sweep",
                          view=_Interrupt(), refresh_s=0.1)
    saved = json.loads((tmp_path / "sweep" / sweep_records.SWEEP_FILE).read_text())["trials"]
    assert [r["status"] for r in saved] == ["queued", "queued"]
    for t in trials:
        pid = json.loads((Path(t.out_dir) / folders.ATTEMPT_FILE).read_text())["pid"]
        assert not _alive(pid) and folders.tail_step(Path(t.out_dir) / "log.csv") < 20_000
    plan.check_trials(trials)  # no folder is held any more


def test_the_planner_writes_a_trial_folder_only_under_its_lock(tmp_path, capsys):
    """Another process runs in a trial's folder: the sweep (and its dry run) is one line, exit 2,
    before anything is written; the planner's own write is refused the same way."""
    out = tmp_path / "sweep"
    folder = out / ENV / "dqn" / "seed0"
    folder.mkdir(parents=True)
    code = ("import sys, time\nfrom pcnn_explore.run.lock import RunLock\nRunLock(sys.argv[1]).acquire()\n"
            "print('locked', flush=True)\ntime.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(folder)], stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"locked\n"
        before = sorted(p.name for p in out.rglob("*"))
        for extra in ([], ["--dry-run"]):
            status = main(["sweep", "--envs", ENV, "--variants", "dqn", "--profile", "smoke", "--set", "steps=50",
                           "--no-progress", "--out", str(out), *extra])
            err = capsys.readouterr().err.strip()
            assert status == 2 and len(err.splitlines()) == 1, err
            assert f"trial folder {folder.resolve()} is in use by another run (PID {proc.pid} on host" in err
            assert err.endswith("choose another --out")
            assert sorted(p.name for p in out.rglob("*")) == before  # no trial.json, no sweep.json
        (trial,) = _grid(tmp_path, steps=50).trials()
        with pytest.raises(SweepError, match=f"PID {proc.pid}"):
            folders.prepare(trial, trial.config().to_dict())
        assert not (folder / folders.TRIAL_FILE).exists()
    finally:
        proc.kill()
        proc.wait()
    folders.prepare(trial, trial.config().to_dict())  # once the holder is gone
    assert json.loads((folder / folders.TRIAL_FILE).read_text())["settings"]["steps"] == 50
