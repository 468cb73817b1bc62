"""Windows: ``train`` and ``sweep`` refuse at once, in one line that names WSL 2, before anything
is written (the run lock is POSIX's ``flock``; ``fcntl`` does not exist there), and nothing the
kit calls on its way ends the process or fails with a stray error: the report's folder exchange
(``ctypes.CDLL(None)`` raises TypeError on Windows), its liveness probe (``os.kill(pid, 0)``
terminates the process there) and the local workers' ``prctl``.

Windows is played here by ``sys.platform == "win32"`` with ``fcntl`` missing, once the modules
are imported (the standard library picks its Windows parts at import time).
"""
from __future__ import annotations

import ctypes
import os
import sys

import pytest

import pcnn_explore.run.cli  # noqa: F401  (imported before the platform is played: see above)
import pcnn_explore.sweep.cli  # noqa: F401
import pcnn_explore.sweep.runner  # noqa: F401
from pcnn_explore.checks import RunError
from pcnn_explore.cli import main
from pcnn_explore.run import TrainConfig, train
from pcnn_explore.run import lock as lock_module
from pcnn_explore.sweep import local, report

ENV = "DeepSea-5-v0"
REFUSAL = ("pcnn-explore runs on Linux and macOS; on Windows use WSL 2 (in PowerShell: wsl --install, then install "
           "and run pcnn-explore inside the Linux it gives)")


@pytest.fixture
def windows(monkeypatch):
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setitem(sys.modules, "fcntl", None)  # (import fcntl raises ImportError)


def _run(argv, capsys) -> tuple[int, str]:
    try:
        status = main(argv)
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    return status, err


@pytest.mark.parametrize("argv", [["train", "--env", ENV, "--profile", "smoke", "--out", "{out}"],
                                  ["train", "--resume", "--out", "{out}"],
                                  ["train", "--env", ENV, "--out", "{out}", "--check"],
                                  ["sweep", "--envs", ENV, "--variants", "dqn", "--out", "{out}"],
                                  ["sweep", "--envs", ENV, "--variants", "dqn", "--out", "{out}", "--dry-run"]])
def test_train_and_sweep_refuse_at_once_in_one_line_naming_wsl(tmp_path, capsys, windows, argv):
    out = tmp_path / "runs"
    status, err = _run([a.replace("{out}", str(out)) for a in argv], capsys)
    assert status == 2 and err == f"pcnn-explore {argv[0]}: error: {REFUSAL}\n", err
    assert os.listdir(tmp_path) == []  # nothing written


def test_the_python_api_refuses_before_anything_too_but_a_sweep_report_is_not_refused(tmp_path, capsys, windows):
    out = tmp_path / "run"
    with pytest.raises(RunError) as caught:
        train(TrainConfig.preset("smoke", env=ENV, out_dir=str(out)), progress=False)
    assert str(caught.value) == REFUSAL
    for call in (lambda: lock_module.probe(out), lambda: lock_module.RunLock(out).acquire()):
        with pytest.raises(RunError, match="use WSL 2"):  # (not ModuleNotFoundError: fcntl)
            call()
    assert os.listdir(tmp_path) == [] and lock_module._HELD == {}
    # sweep --report only reads logs and writes files (its Windows-unsafe calls are guarded, below)
    status, err = _run(["sweep", "--report", str(tmp_path / "none")], capsys)
    assert status == 2 and "WSL" not in err and "none" in err, err


def test_the_report_does_not_ask_windows_for_renameat2(tmp_path, monkeypatch, windows):
    def no_null_library(name, *a, **kw):  # what ctypes.CDLL(None) does on Windows
        raise TypeError("expected str, bytes or os.PathLike object, not NoneType")

    monkeypatch.setattr(ctypes, "CDLL", no_null_library)
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "new").write_text("")
    assert report._swap(a, b) is False  # (the two-rename fallback then)
    assert os.listdir(a) == ["new"] and os.listdir(b) == []


def test_the_report_never_probes_a_process_on_windows(tmp_path, monkeypatch, windows):
    def ends_the_process(pid, sig):  # what os.kill(pid, 0) does on Windows
        raise AssertionError(f"os.kill({pid}, {sig}) would terminate process {pid}")

    monkeypatch.setattr(os, "kill", ends_the_process)
    root, final = tmp_path, tmp_path / "report"
    other = root / ".report-new-1-5"  # another process's (it may still be writing it): left alone
    mine = root / f".report-new-{os.getpid()}-5"  # this process's own, left by an earlier error: removed
    aside = root / ".report-old-1-4"  # an earlier report set aside by another process: left alone
    for folder in (other, mine, aside):
        folder.mkdir()
    report._clear_leftovers(root, final)
    assert sorted(p.name for p in root.iterdir()) == sorted([other.name, aside.name])


def test_a_local_worker_does_not_call_prctl_off_linux(monkeypatch, windows):
    calls = []
    monkeypatch.setattr(ctypes, "CDLL", lambda *a, **kw: calls.append(a))
    local._end_with_parent(os.getppid())
    assert calls == []
