"""Run folders that are never resumed corrupt, never written by two runs, and survive a power cut.

Checksums of checkpoints, the one-writer lock and the attempt id, fsync of folders and of the log,
reading the umask without changing it, ``train --resume --out DIR`` and errors that name ``--out``.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from pcnn_explore import atomic
from pcnn_explore.atomic import write_text_atomic
from pcnn_explore.checkpoint import CorruptFile, load, read_meta, save_atomic
from pcnn_explore.cli import main
from pcnn_explore.run import RunError, TrainConfig, load_policy, read_log, train
from test_run_cli import snapshot  # every file's bytes and mtime under a folder

torch.set_num_threads(1)
ENV = "MiniGrid-Empty-5x5-v0"
ROOT = Path(__file__).resolve().parents[1]


def smoke(out: Path, **kw) -> TrainConfig:
    return TrainConfig.preset("smoke", **{"env": ENV, "out_dir": str(out), "steps": 150, **kw})


def cli(*argv: str, capsys) -> tuple[int, str, str]:
    try:
        status = main(["train", "--no-progress", *argv])
    except SystemExit as e:  # argparse errors
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "cts"
    train(smoke(out, bonus="cts"), progress=False)
    return out


@pytest.fixture
def run_copy(tmp_path, finished_run) -> Path:
    out = tmp_path / "run"
    shutil.copytree(finished_run, out)
    return out


def _one_line_exit_2(status: int, err: str) -> None:
    assert status == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


# ------------------------------------------------------------------------------------------ checksums
def test_every_flipped_byte_of_a_saved_file_is_refused(tmp_path):
    path = save_atomic({"w": torch.arange(64, dtype=torch.float32), "x": np.arange(5), "s": "a"}, tmp_path / "f.pt",
                       meta={"step": 7})
    assert read_meta(path) == {"step": 7}
    good = path.read_bytes()
    assert load(path)["s"] == "a"
    for i in range(len(good)):
        bad = bytearray(good)
        bad[i] ^= 0x01 if i % 2 else 0xFF
        path.write_bytes(bytes(bad))
        with pytest.raises(CorruptFile):
            load(path)
    path.write_bytes(good + b"\0")
    with pytest.raises(CorruptFile, match="truncated or corrupt"):
        load(path)


@pytest.mark.parametrize("fraction", [0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95])
def test_a_flipped_byte_in_the_checkpoint_stops_the_resume_and_touches_nothing(run_copy, capsys, fraction):
    ckpt = run_copy / "checkpoint.pt"
    data = bytearray(ckpt.read_bytes())
    data[int(fraction * len(data))] ^= 0x10
    ckpt.write_bytes(bytes(data))
    before = snapshot(run_copy)
    status, _, err = cli("--env", ENV, "--profile", "smoke", "--bonus", "cts", "--out", str(run_copy), "--steps", "300",
                         "--resume", capsys=capsys)
    _one_line_exit_2(status, err)
    assert "not a readable pcnn-explore checkpoint" in err and str(ckpt) in err
    assert snapshot(run_copy) == before


def _packed(obj):
    """The first compressed replay array (a dict from replay_storage.pack) inside a checkpoint."""
    if isinstance(obj, dict):
        if obj.get("codec") == "zlib1":
            return obj
        for v in obj.values():
            if (found := _packed(v)) is not None:
                return found
    if isinstance(obj, (list, tuple)):
        for v in obj:
            if (found := _packed(v)) is not None:
                return found
    return None


def test_a_corrupt_compressed_replay_is_one_line_and_touches_nothing(run_copy, capsys):
    from pcnn_explore.agents.replay_storage import pack, unpack

    packed = pack(np.arange(10_000, dtype=np.uint8).reshape(100, 100), delta=True)
    packed["data"] = packed["data"].copy()
    packed["data"][len(packed["data"]) // 2] ^= 0xFF
    with pytest.raises(ValueError, match="corrupt replay checkpoint"):
        unpack(packed)
    # a checkpoint whose checksum matches (it was written so) but whose replay is damaged
    ckpt = run_copy / "checkpoint.pt"
    saved = load(ckpt)
    frames = _packed(saved["replay"])
    frames["data"] = frames["data"].copy()
    frames["data"][len(frames["data"]) // 2] ^= 0xFF
    save_atomic(saved, ckpt, meta=read_meta(ckpt))
    before = snapshot(run_copy)
    status, _, err = cli("--resume", "--out", str(run_copy), "--steps", "300", capsys=capsys)
    _one_line_exit_2(status, err)
    assert "corrupt replay checkpoint" in err and str(ckpt) in err
    assert snapshot(run_copy) == before


def test_policy_is_written_before_the_checkpoint_and_says_its_step(tmp_path, monkeypatch):
    from pcnn_explore.run import checkpoints

    written, real = [], checkpoints.save_atomic

    def crash_on_the_second_checkpoint(obj, path, meta=None):
        written.append((Path(path).name, meta["step"]))
        if len(written) == 4:
            raise OSError("killed between policy.pt and checkpoint.pt")
        return real(obj, path, meta=meta)

    monkeypatch.setattr(checkpoints, "save_atomic", crash_on_the_second_checkpoint)
    with pytest.raises(OSError, match="killed between"):
        train(smoke(tmp_path / "r", steps=200, checkpoint_every=100), progress=False)
    assert written == [("policy.pt", 100), ("checkpoint.pt", 100), ("policy.pt", 200), ("checkpoint.pt", 200)]
    assert read_meta(tmp_path / "r" / "checkpoint.pt")["step"] == 100
    with pytest.warns(UserWarning, match="policy at agent step 200.*at step 100"):
        _, policy = load_policy(tmp_path / "r")
    assert policy.step == 200 and not policy.recurrent


# ---------------------------------------------------------------------------------- one writer
def _cli_process(*args: str) -> subprocess.Popen:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "pcnn_explore", "train", "--no-progress", *args], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_for(condition, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline and proc.poll() is None:
        if condition():
            return
        time.sleep(0.02)
    err = proc.stderr.read().decode() if proc.poll() is not None else ""
    raise AssertionError(f"timed out (rc {proc.poll()}): {err}")


@pytest.mark.slow
def test_a_second_writer_is_refused_and_the_lock_dies_with_its_holder(tmp_path, capsys):
    out = tmp_path / "run"
    holder = _cli_process("--env", ENV, "--profile", "smoke", "--steps", "1000000", "--checkpoint-every", "100",
                          "--out", str(out))
    try:
        _wait_for(lambda: (read_meta(out / "checkpoint.pt") or {}).get("step", 0) >= 100, holder)
        os.kill(holder.pid, signal.SIGSTOP)  # (frozen: the folder holds still while the second writer tries)
        time.sleep(0.2)
        before = snapshot(out)
        status, _, err = cli("--resume", "--out", str(out), "--steps", "2000000", capsys=capsys)
        _one_line_exit_2(status, err)
        assert f"--out {out} is in use" in err and f"PID {holder.pid}" in err and socket.gethostname() in err
        with pytest.raises(RunError, match=f"PID {holder.pid} on host"):
            train(TrainConfig(**{**load(out / "checkpoint.pt")["config"], "steps": 2_000_000}), resume=True,
                  progress=False)
        assert snapshot(out) == before
    finally:
        os.kill(holder.pid, signal.SIGKILL)  # the kernel releases the lock of a killed process
        holder.wait()
    step = read_meta(out / "checkpoint.pt")["step"]
    status, printed, err = cli("--resume", "--out", str(out), "--steps", str(step + 20), capsys=capsys)
    assert status == 0, err
    assert f"resuming {out} at step {step} of {step + 20}" in printed
    assert json.loads((out / "run.lock").read_text())["pid"] == os.getpid()


def test_an_attempt_that_lost_the_folder_stops_at_its_next_checkpoint_without_writing(tmp_path, monkeypatch):
    from pcnn_explore.run import logger

    out, seen = tmp_path / "r", {}

    class TakenOver(logger.CsvLog):
        def write(self, row):
            super().write(row)
            if row["step"] > 100 and not seen:  # another machine's attempt takes the folder over
                deadline = time.time() + 60
                while (read_meta(out / "checkpoint.pt") or {}).get("step") != 100 and time.time() < deadline:
                    time.sleep(0.01)  # (the checkpoint at step 100 is written in the background)
                time.sleep(0.05)
                seen.update(snapshot(out))
                (out / "run.lock").write_text(json.dumps({"attempt": "other", "host": "node-7", "pid": 4242}))

    monkeypatch.setattr(logger, "CsvLog", TakenOver)
    with pytest.raises(RunError, match="taken over by another attempt \\(PID 4242 on host node-7\\)"):
        train(smoke(out, steps=300, checkpoint_every=100), progress=False)
    after = snapshot(out)
    for name in ("checkpoint.pt", "policy.pt", "settings.json"):
        assert after[Path(name)] == seen[Path(name)], name
    assert read_meta(out / "checkpoint.pt")["step"] == 100
    assert json.loads((out / "run.lock").read_text())["attempt"] == "other"


def test_a_sweep_trial_leaves_a_folder_held_by_another_process_alone(tmp_path):
    from pcnn_explore.sweep.trial import train_trial

    out = tmp_path / "trial"
    out.mkdir()
    (out / "log.csv").write_text("step\n")  # what an attempt that died before its first checkpoint would leave
    code = ("import fcntl, json, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
            "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, json.dumps({'pid': os.getpid(), 'host': 'h1'}).encode()); "
            "print('locked', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(out / "run.lock")], stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"locked\n"
        before = snapshot(out)
        with pytest.raises(RunError, match=f"in use by another run \\(PID {proc.pid} on host h1\\)"):
            train_trial(smoke(out).to_dict())
        assert snapshot(out) == before
    finally:
        proc.kill()
        proc.wait()


# ---------------------------------------------------------------------------------- durability
def test_atomic_write_syncs_the_folder_after_the_rename(tmp_path, monkeypatch):
    events, real_fsync, real_replace = [], os.fsync, os.replace

    def fsync(fd):
        st = os.fstat(fd)
        events.append(("fsync-dir" if stat.S_ISDIR(st.st_mode) else "fsync-file", st.st_ino))
        real_fsync(fd)

    def replace(src, dst):
        events.append(("replace", Path(dst).name))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    write_text_atomic(tmp_path / "a.txt", "x")
    assert [e[0] for e in events] == ["fsync-file", "replace", "fsync-dir"]
    assert events[1] == ("replace", "a.txt") and events[2][1] == tmp_path.stat().st_ino


def test_a_folder_that_cannot_be_synced_still_takes_atomic_writes(tmp_path, monkeypatch):
    import errno

    real = os.fsync

    def fsync(fd):
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "Invalid argument")  # (some network and FUSE file systems)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    write_text_atomic(tmp_path / "a.txt", "x")
    assert (tmp_path / "a.txt").read_text() == "x"


def test_the_log_is_on_disk_before_each_checkpoint_commits(tmp_path, monkeypatch):
    events, real_fsync, real_replace = [], os.fsync, os.replace

    def fsync(fd):
        events.append(("fsync", os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))))
        real_fsync(fd)

    def replace(src, dst):
        events.append(("replace", Path(dst).name))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    cfg = smoke(tmp_path / "r", steps=300, checkpoint_every=100)
    train(cfg, progress=False)
    commits = [i for i, e in enumerate(events) if e == ("replace", "checkpoint.pt")]
    assert len(commits) == 3
    for previous, i in zip([0, *commits], commits):
        assert ("fsync", "log.csv") in events[previous:i]  # the rows up to the checkpoint's step are synced
        assert events[i + 1] == ("fsync", "r")  # the folder, after the rename
    assert read_log(cfg.out_dir)["length"].sum() == 300


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_the_umask_is_read_without_being_changed(tmp_path, monkeypatch, mask):
    old = os.umask(mask)
    try:
        def no_umask(_):
            raise AssertionError("os.umask changes the mask of every thread")

        monkeypatch.setattr(os, "umask", no_umask)
        assert atomic._umask() == mask
        write_text_atomic(tmp_path / "a.txt", "x")
        assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o666 & ~mask
        # without /proc/self/status: a probe file shows the mask
        monkeypatch.setattr(atomic, "open", lambda *a, **k: (_ for _ in ()).throw(OSError("no /proc")), raising=False)
        assert atomic._umask() == mask
    finally:
        monkeypatch.undo()
        os.umask(old)


# --------------------------------------------------------------------------------------- resume
def test_resume_needs_only_the_folder_and_continues_with_its_settings(run_copy, capsys):
    status, printed, err = cli("--resume", "--out", str(run_copy), "--steps", "200", capsys=capsys)
    assert status == 0, err
    assert f"resuming {run_copy} at step 150 of 200" in printed
    stored = json.loads((run_copy / "settings.json").read_text())
    assert stored["bonus"] == "cts" and stored["profile"] == "smoke" and stored["steps"] == 200
    assert read_log(run_copy)["length"].sum() == 200
    # a flag that differs from the checkpoint's settings is refused as before
    before = snapshot(run_copy)
    status, _, err = cli("--resume", "--out", str(run_copy), "--steps", "300", "--profile", "study", capsys=capsys)
    _one_line_exit_2(status, err)
    assert "--profile: checkpoint 'smoke' vs now 'study'" in err and snapshot(run_copy) == before
    # without --resume, --env is still needed
    status, _, err = cli("--out", str(run_copy.parent / "new"), capsys=capsys)
    _one_line_exit_2(status, err)
    assert "required: --env" in err and not (run_copy.parent / "new").exists()


@pytest.mark.parametrize("resume", [False, True])
def test_a_log_without_checkpoint_gets_advice_that_works(tmp_path, capsys, resume):
    out = tmp_path / "run"
    out.mkdir()
    (out / "log.csv").write_text("step,episode\n1,0\n")
    before = snapshot(out)
    status, _, err = cli("--env", ENV, "--out", str(out), *(["--resume"] if resume else []), capsys=capsys)
    _one_line_exit_2(status, err)
    assert "holds a log but no checkpoint" in err and "remove the folder or choose another --out" in err
    assert "add --resume" not in err and "without --resume" not in err
    assert snapshot(out) == before


def test_an_impossible_out_names_the_flag(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    status, _, err = cli("--env", ENV, "--out", str(tmp_path / "afile" / "run"), capsys=capsys)
    _one_line_exit_2(status, err)
    assert err.split("error: ", 1)[1].startswith(f"--out {tmp_path / 'afile' / 'run'}: cannot write there")
    assert sorted(os.listdir(tmp_path)) == ["afile"]


@pytest.mark.parametrize("resume", [False, True])
def test_a_read_only_out_is_one_line_naming_the_flag(run_copy, capsys, monkeypatch, resume):
    real = os.statvfs

    class ReadOnly:
        def __init__(self, st):
            self.st = st

        def __getattr__(self, name):
            return self.st.f_flag | os.ST_RDONLY if name == "f_flag" else getattr(self.st, name)

    root = str(run_copy.parent)
    monkeypatch.setattr(os, "statvfs", lambda p: ReadOnly(real(p)) if str(p).startswith(root) else real(p))
    out = run_copy if resume else run_copy.parent / "fresh"
    before = snapshot(run_copy.parent)
    args = ["--resume", "--steps", "300"] if resume else ["--env", ENV, "--profile", "smoke"]
    status, _, err = cli("--out", str(out), *args, capsys=capsys)
    _one_line_exit_2(status, err)
    assert f"--out {out}: cannot write there (read-only file system)" in err
    assert snapshot(run_copy.parent) == before and not (run_copy.parent / "fresh").exists()


# ----------------------------------------------------------------------------------- policy
def test_policy_tells_reactor_from_dqn_by_its_settings():
    from pcnn_explore.run.policy import Policy

    class Agent:  # answers both ways: the policy must not guess from the agent's methods
        def __init__(self):
            self.calls = []

        def act(self, obs, *args):
            self.calls.append(("act", len(args)))
            return np.array([1]) if len(args) == 1 else 2

        def greedy_action(self, obs):
            self.calls.append(("greedy", 0))
            return 3

        def reset_state(self, i):
            self.calls.append(("reset", i))

    obs = np.zeros((1, 7, 7), np.uint8)
    dqn, reactor = Policy(Agent(), {"agent": "dqn"}, 0.0, 0), Policy(Agent(), {"agent": "reactor"}, 0.0, 0)
    dqn.reset()
    assert dqn(obs) == 3 and dqn.agent.calls == [("greedy", 0)] and not dqn.recurrent
    reactor.reset()
    assert reactor(obs) == 1 and reactor.agent.calls == [("reset", 0), ("act", 1)] and reactor.recurrent
