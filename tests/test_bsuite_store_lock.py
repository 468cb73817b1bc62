"""One writer per bsuite store: two processes recording at once keep every record (the read-modify-write of
store.json is under the store's lock); a second sweep on a store another one holds is refused at once,
in one line naming the holder's PID, before any trial; notebook 14's runs into a store take the same
lock; a lock left by a process that is gone (killed) is taken over, said in one line."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pcnn_explore.sweep import bsuite_store as bs

_ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def _python(code: str, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_ENV, **kw)


def _sweep_args(store: Path, out: Path, episodes: int) -> list[str]:
    return [sys.executable, "-m", "pcnn_explore", "sweep", "--envs", "DeepSea-10-v0", "--lines", "dqn", "--seeds",
            "701", "--episodes", str(episodes), "--set", "tensorboard=false", "--executor", "local", "--no-progress",
            "--out", str(out), "--bsuite-store", str(store)]


def _lock_pid(store: Path) -> int | None:
    try:
        return json.loads((store / "run.lock").read_text()).get("pid")
    except (OSError, ValueError):
        return None


def _wait_for(what, timeout: float = 120.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = what()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError("timed out")


_RECORD = """
import sys, time
from pathlib import Path
from pcnn_explore.sweep import bsuite_store as bs
store, first, go = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
print("ready", flush=True)
while not go.exists():
    time.sleep(0.001)
for i in range(first, first + 40):
    bs._record(store, {f"dqn,hidden={i}": "study"}, 100)
"""


def test_two_processes_recording_at_once_keep_every_record(tmp_path):
    """Each of two processes records 40 lines of its own in store.json at the same moment: all 80 are there
    (without a lock, a read-modify-write of one kept 44 of 80)."""
    store, go = tmp_path / "store", tmp_path / "go"
    procs = [_python(_RECORD, str(store), str(first), str(go)) for first in (1, 41)]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    go.touch()
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    lines = json.loads((store / "store.json").read_text())["lines"]
    assert sorted(lines) == sorted(f"dqn,hidden={i}" for i in range(1, 81))
    assert lines["dqn,hidden=7"]["settings"]["hidden"] == 7
    assert sorted(p.name for p in store.iterdir()) == ["store.json"]  # no lock file, no temporary file left


def test_a_second_sweep_on_a_store_in_use_is_refused_at_once_naming_the_holders_pid(tmp_path):
    """A real sweep holds the store while its trial runs; a second one is refused in one line, exit 2,
    naming the first's PID, before any trial of its own; the first, stopped by SIGINT, lets the store go."""
    store = tmp_path / "protocol"
    first = subprocess.Popen(_sweep_args(store, tmp_path / "a", 100_000), cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=_ENV, start_new_session=True)
    try:  # the first's trial has started
        _wait_for(lambda: (tmp_path / "a" / "DeepSea-10-v0" / "dqn" / "seed701" / "settings.json").is_file())
        second = subprocess.run(_sweep_args(store, tmp_path / "b", 10), cwd=tmp_path, capture_output=True, text=True,
                                env=_ENV, timeout=300)
        assert first.poll() is None  # the first still runs
        assert second.returncode == 2, second.stderr
        assert _lock_pid(store) == first.pid
        (line,) = second.stderr.splitlines()
        assert line == (f"pcnn-explore sweep: error: the store {store} is in use by another sweep (PID {first.pid} "
                        f"on host {os.uname().nodename}): wait for it to end, or give another store folder")
        assert not (tmp_path / "b").exists()
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGINT)
        _, err = first.communicate(timeout=120)
    assert first.returncode == 130, err
    assert not (store / "run.lock").exists()  # released as it ended


_HOLD = """
import os, signal, sys, time
from pcnn_explore.run.lock import RunLock
lock = RunLock(sys.argv[1]).acquire()  # the store's lock (a StoreLock is a RunLock on the store folder)
print("held", flush=True)
if sys.argv[2] == "die":
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(300)
"""


def test_notebook_14s_runs_into_a_store_in_use_are_refused_naming_the_holders_pid(tmp_path, monkeypatch):
    from pcnn_explore.checks import RunError
    from pcnn_explore.experiments.agents import deep_sea_scaling as dss
    from pcnn_explore.run.lines import LINES

    monkeypatch.setenv("PCNN_EXPLORE_EXECUTOR", "local")
    store = tmp_path / "protocol"
    holder = _python(_HOLD, str(store), "hold")
    try:
        assert holder.stdout.readline().strip() == "held"
        s = dss.settings("paper", sizes=(10,), episodes=(10,), n_seeds=1)
        with pytest.raises(RunError, match=rf"the store {store} is in use by another sweep \(PID {holder.pid} on"):
            dss.run_into_store(s, [LINES["dqn"]], tmp_path / "nb", store)
        assert not (tmp_path / "nb").exists()
    finally:
        holder.kill()
        holder.communicate(timeout=60)


@pytest.mark.slow
def test_a_lock_left_by_a_killed_process_is_taken_over_in_one_line(tmp_path):
    store = tmp_path / "protocol"
    dead = _python(_HOLD, str(store), "die")
    assert dead.stdout.readline().strip() == "held"
    dead.communicate(timeout=60)
    assert dead.returncode == -signal.SIGKILL and _lock_pid(store) == dead.pid  # its lock file stays
    done = subprocess.run(_sweep_args(store, tmp_path / "a", 10), cwd=tmp_path, capture_output=True, text=True,
                          env=_ENV, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"{store}: took over the store's lock left by PID {dead.pid} on host {os.uname().nodename}, which is gone "
        "(it ended without releasing the store)",
        f"1 finished trial logs added to {store} (0 were there before)"]
    assert len(bs.stored(store, 10)) == 1 and not (store / "run.lock").exists()
