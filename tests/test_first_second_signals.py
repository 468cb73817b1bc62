"""A command stopped by SIGTERM or SIGINT at any moment, from its first line on, ends in one line and
exit status 143 or 130 (the first signal to arrive setting it), whatever it is importing; a second
signal gives no traceback; a stop during a checkpoint write leaves no temporary file, and a resume
removes those a killed process left, saying so (:class:`pcnn_explore.run.interrupt.CommandStop`).

Each case is a real ``python -m pcnn_explore`` process and real signals. The moments are random
(seeded) but every assertion holds at any of them: a moment is counted from when the command's
handlers are in place (read from ``/proc/PID/status``), and the second signal of a pair is sent only
once the kernel has delivered the first.
"""
from __future__ import annotations

import random
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pcnn_explore.checkpoint import read_meta
from test_run_interrupt import CHILD_ENV, ROOT, _logged_step, _sigint_as_at_a_terminal

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/status")

ENV = "DeepSea-10-v0"
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
VERB = {signal.SIGINT: "interrupted", signal.SIGTERM: "stopped by SIGTERM"}


def _mask(pid: int, field: str) -> int | None:
    """A signal mask of ``/proc/PID/status`` (``SigCgt``: caught; ``SigPnd``, ``ShdPnd``: pending)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1], 16)
    except OSError:
        return None
    return None


def _bit(signum: int) -> int:
    return 1 << (signum - 1)


def _until(condition, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while proc.poll() is None and not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.001)


def _handlers_in_place(proc: subprocess.Popen) -> None:
    """Wait until the command catches SIGINT and SIGTERM (its stop is in place: its first line ran)."""
    both = _bit(signal.SIGINT) | _bit(signal.SIGTERM)
    _until(lambda: ((_mask(proc.pid, "SigCgt") or 0) & both) == both, proc)


def _delivered(proc: subprocess.Popen, signum: int) -> None:
    """Wait until the kernel has handed ``signum`` to the process (pending no more)."""
    _until(lambda: not ((_mask(proc.pid, "SigPnd") or 0) | (_mask(proc.pid, "ShdPnd") or 0)) & _bit(signum), proc)


def _start(argv: list[str], script: str | None = None) -> subprocess.Popen:
    head = [sys.executable, "-c", script] if script else [sys.executable, "-m", "pcnn_explore"]
    return subprocess.Popen([*head, *argv], env=CHILD_ENV, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_sigint_as_at_a_terminal)


def _send(proc: subprocess.Popen, *signals_after: tuple[int, float]) -> tuple[int, str]:
    """Send each (signal, seconds after the previous one was delivered); (exit status, stderr)."""
    try:
        for signum, after in signals_after:
            time.sleep(after)
            if proc.poll() is not None:
                break
            proc.send_signal(signum)
            _delivered(proc, signum)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err.decode(errors="replace")


def _one_line(rc: int, err: str, want: int) -> str:
    lines = [line for line in err.split("\n") if line.strip()]
    assert rc == want and len(lines) == 1 and "Traceback" not in err, (rc, err)
    return lines[0][lines[0].find("pcnn-explore "):]  # (after a progress bar, where one was drawn on the same line)


def _temporaries(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.tmp")) if folder.exists() else []


def _commands(tmp: Path, name: str) -> list[str]:
    return {
        "train": ["train", "--env", ENV, "--profile", "smoke", "--steps", "1000000", "--no-progress", "--out",
                  str(tmp / "run")],
        "record": ["record", "--env", ENV, "--density", "cts", "--max-steps", "100000", "--episodes", "1000",
                   "--out", str(tmp / "episode.npz")],
        "sweep": ["sweep", "--envs", ENV, "--variants", "dqn", "--seeds", "0", "--profile", "smoke", "--set",
                  "steps=100000", "--executor", "local", "--max-concurrent", "1", "--no-progress", "--out",
                  str(tmp / "sweep")],
        "reproduce": ["reproduce", "--only", "00", "--out", str(tmp / "notebooks")],
    }[name]


def _check_stop(name: str, tmp: Path, rc: int, err: str, first: int) -> None:
    """One line, the first signal's status and words, and no file but those the line names."""
    line = _one_line(rc, err, STATUS[first])
    said = (VERB[first], "interrupted; the same command resumes") if name == "sweep" else (VERB[first],)  # (its own)
    assert line.startswith(tuple(f"pcnn-explore {name}: {words}" for words in said)), line
    assert _temporaries(tmp) == [], _temporaries(tmp)
    if "nothing was written" in line:
        assert sorted(p.name for p in tmp.iterdir()) == [], line
    if name == "train" and "checkpoint saved in" in line:
        step = int(re.search(r"at step (\d+)", line).group(1))
        assert read_meta(tmp / "run" / "checkpoint.pt")["step"] == step


def _moments(seed: int, n: int, top: float = 1.5) -> list[float]:
    rng = random.Random(seed)
    return [rng.uniform(0.0, top) for _ in range(n)]


def _one_stop(name: str, tmp: Path, signals_after: list[tuple[int, float]]) -> None:
    tmp.mkdir()
    proc = _start(_commands(tmp, name))
    _handlers_in_place(proc)
    rc, err = _send(proc, *signals_after)
    try:
        _check_stop(name, tmp, rc, err, signals_after[0][0])
    except AssertionError as e:
        raise AssertionError(f"{name}, signals {signals_after}: {e}") from None


# (command, moments per signal): 20 each for train and record; the others a few, for every sub-command
CASES = [("train", 20), ("record", 20), ("sweep", 5), ("reproduce", 3)]


def _stops_at_moments(tmp_path, cases) -> None:
    jobs = []
    for k, (name, n) in cases:
        for signum in (signal.SIGTERM, signal.SIGINT):
            for i, at in enumerate(_moments(1000 * k + signum, n)):
                jobs.append((name, tmp_path / f"{name}-{signum}-{i}", [(signum, at)]))
    with ThreadPoolExecutor(3) as pool:  # (each waits for its moment most of the time)
        for done in [pool.submit(_one_stop, *job) for job in jobs]:
            done.result()


@pytest.mark.slow
def test_one_signal_at_any_moment_of_the_first_second_and_a_half_gives_one_line_and_its_status(tmp_path):
    _stops_at_moments(tmp_path, [(k, case) for k, case in enumerate(CASES) if case[0] != "sweep"])


@pytest.mark.slow
def test_one_signal_at_any_moment_of_a_sweeps_first_second_and_a_half(tmp_path):
    _stops_at_moments(tmp_path, [(k, case) for k, case in enumerate(CASES) if case[0] == "sweep"])


# A KeyboardInterrupt raised in code that exec() runs from a string (dataclasses do it as torch is imported) is
# marked unhandled by CPython even when the command catches it, and python -m then ended the process by SIGINT
# (-2) after the sweep's own line: the random moments above met it about 1 in 8 times, in torch's import.
# (Run as python -m <a driver package>: the driver patches, then runs pcnn_explore as __main__.)
IN_EXEC = """
import runpy, sys
from pcnn_explore.sweep import runner

def run_trials(*args, **kwargs):  # the signal arrives while code exec() runs from a string is running
    exec("import os, signal, time\\nos.kill(os.getpid(), signal.SIGINT)\\ntime.sleep(30)", {})
    raise AssertionError("not interrupted")

runner.run_trials = run_trials
sys.argv[0] = "pcnn-explore"
runpy.run_module("pcnn_explore", run_name="__main__", alter_sys=True)
"""


def test_a_sweep_interrupted_inside_code_run_by_exec_exits_130_under_python_m(tmp_path):
    (tmp_path / "drive").mkdir()
    (tmp_path / "drive" / "__main__.py").write_text(IN_EXEC)
    done = subprocess.run([sys.executable, "-m", "drive", *_commands(tmp_path, "sweep")],
                          env={**CHILD_ENV, "PYTHONPATH": f"{tmp_path}:{ROOT}"}, cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, preexec_fn=_sigint_as_at_a_terminal)
    line = _one_line(done.returncode, done.stderr, 130)
    assert line.startswith("pcnn-explore sweep: interrupted; the same command resumes"), line


MODULES_AT_UNWIND = """
import runpy, sys
from pcnn_explore.run.interrupt import CommandStop

at_unwind = []
real_unwind = CommandStop.unwind
def unwind(self):
    at_unwind.append(set(sys.modules))
    real_unwind(self)
CommandStop.unwind = unwind

import atexit
def later():
    ours = lambda m: m.split(".")[0] in ("pcnn_explore", "torch", "numpy")
    print("AFTER", sorted(m for m in set(sys.modules) - at_unwind[0] if ours(m)), file=sys.stderr)
atexit.register(later)
sys.argv[0] = "pcnn-explore"
runpy.run_module("pcnn_explore", run_name="__main__", alter_sys=True)
"""


def test_a_sweep_imports_what_its_trials_need_before_a_signal_unwinds_it(tmp_path):
    """Until it unwinds, a signal ends the sweep at once; after, it is raised where the sweep is, and one raised
    inside an import (torch's takes a second) would stop it half done: the sweep's process imports none of
    its own modules, torch's or numpy's once it unwinds."""
    (tmp_path / "drive").mkdir()
    (tmp_path / "drive" / "__main__.py").write_text(MODULES_AT_UNWIND)
    argv = ["sweep", "--envs", ENV, "--variants", "dqn", "--seeds", "0", "--profile", "smoke", "--set", "steps=60",
            "--executor", "local", "--max-concurrent", "1", "--no-progress", "--out", str(tmp_path / "sweep")]
    done = subprocess.run([sys.executable, "-m", "drive", *argv], env={**CHILD_ENV, "PYTHONPATH": f"{tmp_path}:{ROOT}"},
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "1 of 1 trials done" in done.stdout, done.stdout
    after = [line for line in done.stderr.splitlines() if line.startswith("AFTER")]
    assert after == ["AFTER []"], done.stderr


@pytest.mark.slow
def test_sigterm_then_sigint_exits_143_and_two_sigterms_1_ms_apart_give_no_traceback(tmp_path):
    jobs = []
    for i, at in enumerate(_moments(7, 10)):
        jobs.append(("train", tmp_path / f"term-int-{i}", [(signal.SIGTERM, at), (signal.SIGINT, 0.003)]))
    for i, at in enumerate(_moments(8, 10)):
        jobs.append(("train", tmp_path / f"term-term-{i}", [(signal.SIGTERM, at), (signal.SIGTERM, 0.001)]))
    for i, at in enumerate(_moments(9, 4)):
        jobs.append(("record", tmp_path / f"record-term-int-{i}", [(signal.SIGTERM, at), (signal.SIGINT, 0.003)]))
    with ThreadPoolExecutor(3) as pool:
        for done in [pool.submit(_one_stop, *job) for job in jobs]:
            done.result()


def test_a_program_that_imports_the_cli_keeps_its_own_handlers():
    """The stop takes the handlers over only in the CLI's own process (the random moments above
    show it does there); in a program that imports the CLI, or calls ``main``, they stay its own."""
    code = ("import signal, sys; sys.argv[1:] = ['train']; import runpy; "
            "runpy.run_module('pcnn_explore.cli', run_name='not_main'); "
            "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, "
            "signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)")
    done = subprocess.run([sys.executable, "-c", code], env=CHILD_ENV, cwd=ROOT, capture_output=True, text=True,
                          preexec_fn=_sigint_as_at_a_terminal)
    assert done.stdout.split() == ["True", "True"], done.stderr
    from pcnn_explore.cli import main

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


# --------------------------------------------------------------------- a stop during a checkpoint write
SLOW_WRITE = """
import os, runpy, sys, time
from pathlib import Path
from pcnn_explore import checkpoint
real = checkpoint._Hashing.write
def write(self, b):  # once asked: the checkpoint's file, half written, takes a minute more
    out = Path(sys.argv[sys.argv.index("--out") + 1])
    if (out / "slow").exists() and not (out / "writing").exists():
        n = real(self, b)
        self.f.flush()
        (out / "writing").write_text("")
        time.sleep(60)
        return n
    return real(self, b)
checkpoint._Hashing.write = write
sys.argv[0] = "pcnn-explore"
runpy.run_module("pcnn_explore", run_name="__main__", alter_sys=True)
"""


@pytest.mark.slow
def test_sigterm_then_sigint_during_a_checkpoint_write_leaves_no_temporary_file_and_exits_143(tmp_path):
    """The write is cut mid-file (its temporary file is on disk); the line names the last whole
    checkpoint; the resume removes the temporaries a killed process left (only the run's own), says
    so in one line, and goes on from that checkpoint."""
    out = tmp_path / "run"
    proc = _start(["train", "--env", ENV, "--profile", "smoke", "--bonus", "cts", "--steps", "1000000",
                   "--checkpoint-every", "50", "--no-progress", "--out", str(out)], script=SLOW_WRITE)
    _until(lambda: (read_meta(out / "checkpoint.pt") or {}).get("step", 0) >= 50, proc)
    (out / "slow").write_text("")
    _until(lambda: (out / "writing").exists(), proc)
    assert _temporaries(out), "the checkpoint is not being written"
    last = read_meta(out / "checkpoint.pt")["step"]
    rc, err = _send(proc, (signal.SIGTERM, 0.0), (signal.SIGINT, 0.005))
    line = _one_line(rc, err, 143)
    assert re.fullmatch(rf"pcnn-explore train: stopped by SIGTERM, then interrupted at step \d+: stopped at once; the "
                        rf"last checkpoint in {re.escape(str(out))} is at step {last}: resume with: pcnn-explore train "
                        rf"--resume --out {re.escape(str(out))}", line), line
    assert _temporaries(out) == []
    assert read_meta(out / "checkpoint.pt")["step"] == last
    (out / "slow").unlink()
    (out / "writing").unlink()
    # a killed process's leftovers: the run's own are removed, another name is kept
    planted = [".checkpoint.pt.k1l2l3.tmp", ".policy.pt.abcdef.tmp", ".log.csv.x9.tmp"]
    for name in (*planted, ".notes.txt.q1.tmp"):
        (out / name).write_bytes(b"partial")
    done = subprocess.run([sys.executable, "-m", "pcnn_explore", "train", "--resume", "--out", str(out), "--steps",
                           str(last + 30), "--no-progress"], env=CHILD_ENV, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stdout.splitlines() if "temporary" in line]
    assert said == [f"removed 3 temporary file(s) that a write cut short left in {out}: "
                    f"{', '.join(sorted(planted))}"], done.stdout
    assert sorted(p.name for p in out.glob(".*.tmp")) == [".notes.txt.q1.tmp"]
    assert read_meta(out / "checkpoint.pt")["step"] == last + 30


JUST_AFTER = """
import runpy, sys, time
from pathlib import Path
from pcnn_explore.run import interrupt
real = interrupt.RunInterrupted.text
def text(self, *a):  # the checkpoint is saved and the handlers given back: the line takes a while
    out = Path(sys.argv[sys.argv.index("--out") + 1])
    (out / "after").write_text("")
    time.sleep(5)
    return real(self, *a)
interrupt.RunInterrupted.text = text
sys.argv[0] = "pcnn-explore"
runpy.run_module("pcnn_explore", run_name="__main__", alter_sys=True)
"""


@pytest.mark.slow
def test_a_second_sigint_just_after_the_checkpoint_exits_130_in_one_line(tmp_path):
    out = tmp_path / "run"
    proc = _start(["train", "--env", ENV, "--profile", "smoke", "--steps", "1000000", "--no-progress", "--out",
                   str(out)], script=JUST_AFTER)
    _until(lambda: _logged_step(out) > 0, proc)  # (the loop runs: the first Ctrl-C asks for a checkpoint)
    proc.send_signal(signal.SIGINT)
    _until(lambda: (out / "after").exists(), proc)
    step = read_meta(out / "checkpoint.pt")["step"]
    rc, err = _send(proc, (signal.SIGINT, 0.0))
    line = _one_line(rc, err, 130)
    assert line == (f"pcnn-explore train: interrupted twice: stopped at once; the last checkpoint in {out} is at "
                    f"step {step}: resume with: pcnn-explore train --resume --out {out}"), line
    assert _temporaries(out) == []


def test_a_repeated_line_is_refused_in_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "pcnn_explore", "train", "--env", ENV, "--line", "kit", "--line",
                           "dqn", "--out", str(tmp_path / "run"), "--check"], env=CHILD_ENV, cwd=ROOT,
                          capture_output=True, text=True)
    line = _one_line(done.returncode, done.stderr, 2)
    assert line == ("pcnn-explore train: error: --line given twice (kit, then dqn): give it once "
                    "(see pcnn-explore train --help)"), line
    assert done.stdout == "" and not (tmp_path / "run").exists()
