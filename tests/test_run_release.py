"""A run that fails after it has taken its folder gives everything back: the run lock (this
process's hold, ``_HELD``, and the ``flock`` another process would wait on), the envs, and every
file it opened (``log.csv``, ``traces.csv``, TensorBoard's events), whichever step fails: TensorBoard
that cannot be imported (before the loop's own ``try``), the settings file that cannot be written
(right after the lock is taken), the learner that cannot be built (right after the envs), a log
that cannot be opened. Checked through :func:`run_loop` with no lock of the caller's (the case
that leaked) and through :func:`train`.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from pcnn_explore.run import TrainConfig, train
from pcnn_explore.run import lock as lock_module
from pcnn_explore.run.loop import run_loop
from pcnn_explore.run.resume import open_run

torch.set_num_threads(1)
ENV = "DeepSea-5-v0"


def smoke(out: Path, agent: str) -> TrainConfig:
    return TrainConfig.preset("smoke", env=ENV, agent=agent, bonus="cts", steps=60, out_dir=str(out))


def _open_under(folder: Path) -> list[str]:
    """The files under ``folder`` this process holds open (Linux: /proc/self/fd)."""
    root, found = os.path.realpath(folder), []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(root + os.sep):
            found.append(target)
    return found


def _another_process_can_lock(out: Path) -> bool:
    code = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR)\n"
            "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept OSError:\n    sys.exit(3)\n")
    return subprocess.run([sys.executable, "-c", code, str(out / lock_module.LOCK)]).returncode == 0


class _Envs:
    """Records every env pool the run builds, and whether each was closed."""

    def __init__(self, monkeypatch):
        from pcnn_explore.run import envs as envs_module

        self.pools, real = [], envs_module.EnvPool.close
        pools = self.pools

        def close(pool):
            pool.closed_by_test = True
            return real(pool)

        real_init = envs_module.EnvPool.__init__

        def init(pool, *a, **kw):
            real_init(pool, *a, **kw)
            pool.closed_by_test = False
            pools.append(pool)

        monkeypatch.setattr(envs_module.EnvPool, "close", close)
        monkeypatch.setattr(envs_module.EnvPool, "__init__", init)

    def all_closed(self) -> bool:
        return bool(self.pools) and all(p.closed_by_test for p in self.pools)


def _no_tensorboard(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # (import raises ImportError)
    return ImportError, "torch.utils.tensorboard"


def _settings_fail(monkeypatch):
    from pcnn_explore.run import settings

    def full(cfg):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(settings, "write_settings", full)
    return OSError, "No space left"


def _learner_fails(monkeypatch):
    from pcnn_explore.run import loop

    def refuse(*a, **kw):
        raise RuntimeError("the learner cannot be built")

    monkeypatch.setattr(loop, "make_learner", refuse)
    return RuntimeError, "cannot be built"


def _log_fails(monkeypatch):
    from pcnn_explore.run import logger

    class Refused(logger.CsvLog):
        def __init__(self, path):
            raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(logger, "CsvLog", Refused)
    return PermissionError, "Permission denied"


FAILURES = {"tensorboard missing": _no_tensorboard, "settings unwritable": _settings_fail,
            "learner fails": _learner_fails, "log.csv unopenable": _log_fails}


@pytest.mark.parametrize("entry", ["run_loop", "train"])
@pytest.mark.parametrize("agent", ["dqn", "reactor"])  # (Reactor's run opens traces.csv before log.csv)
@pytest.mark.parametrize("failure", list(FAILURES))
def test_a_failure_after_the_lock_is_taken_releases_the_lock_the_envs_and_every_file(tmp_path, monkeypatch, failure,
                                                                                     agent, entry):
    out = tmp_path / "run"
    cfg = smoke(out, agent)
    envs = _Envs(monkeypatch)
    error, words = FAILURES[failure](monkeypatch)
    with pytest.raises(error, match=words):
        if entry == "run_loop":
            run_loop(cfg, open_run(cfg, False), progress=False)
        else:
            train(cfg, progress=False)
    monkeypatch.undo()
    assert envs.all_closed(), failure
    assert lock_module._HELD == {}
    assert _open_under(tmp_path) == []
    if (out / lock_module.LOCK).exists():  # (the learner fails before the folder is taken: no lock file)
        assert _another_process_can_lock(out)
        with lock_module.RunLock(out) as again:  # and this process takes it afresh
            again.acquire()
            assert lock_module.holder(out)["attempt"] == again.attempt
        assert lock_module._HELD == {}


def test_the_folder_is_taken_again_by_a_run_once_tensorboard_is_back(tmp_path, monkeypatch):
    """After the failed start (a log's header, no checkpoint), a fresh run into another folder and
    one into the same folder once cleared both start: nothing of the first holds on."""
    out = tmp_path / "run"
    cfg = smoke(out, "dqn")
    _no_tensorboard(monkeypatch)
    with pytest.raises(ImportError):
        run_loop(cfg, open_run(cfg, False), progress=False)
    monkeypatch.undo()
    for name in os.listdir(out):
        path = out / name
        if path.is_dir():
            for sub in path.iterdir():
                sub.unlink()
            path.rmdir()
        else:
            path.unlink()
    result = run_loop(cfg, open_run(cfg, False), progress=False)
    assert result.steps == 60 and lock_module._HELD == {} and _open_under(tmp_path) == []
