"""Stopping a command or a run by a signal: Ctrl-C (SIGINT) or SIGTERM (what Slurm, most
schedulers, ``docker stop`` and ``systemd`` send before SIGKILL).

A command (:class:`CommandStop`, in place from the first line of the CLI on) ends with one line and
exit status 128 + the first signal's number (130 for SIGINT, 143 for SIGTERM), whatever it is doing:
before it writes anything (while it imports torch, say) the process ends at once; once it writes,
the first signal unwinds it (raised as KeyboardInterrupt, SIGTERM as :class:`Terminated`) so that it
closes what it opened, a second Ctrl-C ends it at once, and a second SIGTERM changes nothing.

In a run's loop (:class:`CtrlC`) the first signal asks for a checkpoint at the end of the vector
step; a second Ctrl-C stops at once (:class:`Abort`); either way the run ends with
:class:`RunInterrupted`, which says how to go on and which exit status a command gives.

The first signal is the first to arrive, not the first Python runs a handler for (Python runs the
handlers of signals that came during one long call in the order of their numbers, SIGINT before
SIGTERM): a command notes each signal's number as it arrives (:func:`watch_arrivals`).
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from typing import Callable

__all__ = ["CtrlC", "Abort", "RunInterrupted", "Terminated", "CommandStop", "active_stop", "raise_terminated",
           "watch_arrivals", "arrivals", "clear_interrupt_mark"]

_STOPS = (signal.SIGINT, signal.SIGTERM)


class Abort(KeyboardInterrupt):
    """Ctrl-C a second time: stop at once."""


class Terminated(KeyboardInterrupt):
    """SIGTERM raised as Python raises KeyboardInterrupt for SIGINT (:class:`CommandStop`, a sweep's
    workers). ``signum``: the signal (SIGTERM)."""

    signum = signal.SIGTERM


def raise_terminated(signum, frame) -> None:
    """A SIGTERM handler that raises :class:`Terminated`."""
    raise Terminated()


# ----------------------------------------------------------------------- the order signals arrive in
_PIPE: list = [None]  # (read end, write end) of the pipe Python's own C-level handler writes each signal's number to


def watch_arrivals() -> bool:
    """Have Python note the number of each signal that has a Python handler, in the order they arrive,
    in a pipe of this module's (``signal.set_wakeup_fd``), read by :func:`arrivals`. Main thread only;
    False (nothing changed) where another wakeup fd is in place or this is not the main thread."""
    if _PIPE[0] is not None:
        return True
    if threading.current_thread() is not threading.main_thread():
        return False
    r, w = os.pipe()
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    previous = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    if previous != -1:  # (someone else's: theirs stays)
        signal.set_wakeup_fd(previous)
        os.close(r)
        os.close(w)
        return False
    _PIPE[0] = (r, w)
    return True


def unwatch_arrivals() -> None:
    """Undo :func:`watch_arrivals` (where its pipe is still the wakeup fd)."""
    pipe, _PIPE[0] = _PIPE[0], None
    if pipe is None:
        return
    current = signal.set_wakeup_fd(-1)
    if current != pipe[1]:
        signal.set_wakeup_fd(current)
    for fd in pipe:
        os.close(fd)


def _forget_pipe_in_child() -> None:  # (a forked child notes its own signals, or none)
    pipe, _PIPE[0] = _PIPE[0], None
    if pipe is not None:
        try:
            signal.set_wakeup_fd(-1)
        except ValueError:  # (forked from another thread)
            pass
        for fd in pipe:
            os.close(fd)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pipe_in_child)


def arrivals(signum: int) -> list[int]:
    """For a Python handler called for ``signum``: SIGINT and SIGTERM as they arrived since the last
    call, in order; ``[signum]`` where :func:`watch_arrivals` is not in place, and where the pipe
    holds nothing (the signal came to another thread, which has not written its number yet; or an
    earlier call read it, Python calling a handler late for signals that came together: the
    handlers here take such a repeat as a second signal of its kind, which changes nothing then)."""
    pipe = _PIPE[0]
    if pipe is None:
        return [signum]
    try:
        current = signal.set_wakeup_fd(pipe[1], warn_on_full_buffer=False)  # (tells whether ours is still in place)
        if current != pipe[1]:  # (replaced meanwhile, by an event loop say: theirs stays)
            signal.set_wakeup_fd(current)
            return [signum]
        got = b""
        while True:
            try:
                chunk = os.read(pipe[0], 256)
            except BlockingIOError:
                break
            if not chunk:
                break
            got += chunk
    except (OSError, ValueError):  # (never raised into the command: the signal as Python gave it)
        return [signum]
    return [s for s in got if s in _STOPS] or [signum]


def _verb(signum: int) -> str:
    return "interrupted" if signum == signal.SIGINT else f"stopped by {_signal_name(signum)}"


def _twice(first: int) -> str:
    return "interrupted twice" if first == signal.SIGINT else f"{_verb(first)}, then interrupted"


# ------------------------------------------------------------------------------------ a command
_ACTIVE: list = [None]  # the CommandStop in place, if any


def active_stop() -> "CommandStop | None":
    """The :class:`CommandStop` of the command running in this process (None: none)."""
    return _ACTIVE[0]


class CommandStop:
    """SIGINT and SIGTERM for one command, ``prog`` (``pcnn-explore train``), from its first line
    on: one line on stderr, ``prog: <what> <tail>``, and exit status 128 + the first signal's number
    (:attr:`status`). Each is taken only where Python's own handler (SIGINT) or the default action
    (SIGTERM) is in place, in the main thread; :meth:`restore` gives the previous handlers back.

    - Until :meth:`unwind`: a signal ends the process at once (nothing was written yet, and
      nothing is left to close), with the tail :attr:`quiet` (set as the command learns more).
    - After it: the first signal raises KeyboardInterrupt (SIGTERM: :class:`Terminated`) once, for
      the command to close what it opened and print its own line (then :meth:`said`); a second
      Ctrl-C ends the process at once with the tail :attr:`at_once` (a string, or a function that
      returns one), a second SIGTERM changes nothing. A run's loop takes both over (:class:`CtrlC`).

    Ending at once removes the temporary files of atomic writes under way
    (:func:`pcnn_explore.atomic.abandon_temporaries`): no half-written file is left.

    ``ends_process=False`` (the command called by another program, whose process it is not): it
    unwinds from the start, and a second Ctrl-C is raised again, as Python's own handler does."""

    def __init__(self, prog: str, quiet: str = " before it started: nothing was written",
                 at_once: str | Callable[[], str] = ": stopped at once", ends_process: bool = True):
        self.prog, self.quiet, self.at_once, self.ends_process = prog, quiet, at_once, ends_process
        self.first: int | None = None
        self.unwinding, self.done = not ends_process, False
        self.previous: dict[int, object] = {}
        self._own_pipe = False

    @property
    def status(self) -> int | None:
        """128 + the first signal's number (None: no signal yet)."""
        return None if self.first is None else 128 + self.first

    def install(self) -> "CommandStop":
        if threading.current_thread() is not threading.main_thread():
            return self
        wanted = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
        takes = [s for s in _STOPS if signal.getsignal(s) is wanted[s]]
        if takes:
            self._own_pipe = _PIPE[0] is None and watch_arrivals()
            for s in takes:
                self.previous[s] = signal.signal(s, self._handle)
        _ACTIVE[0] = self
        return self

    def restore(self) -> None:
        """The handlers in place before :meth:`install`, back."""
        previous, self.previous = self.previous, {}
        for s, handler in previous.items():
            signal.signal(s, handler)
        if self._own_pipe:
            unwatch_arrivals()
            self._own_pipe = False
        if _ACTIVE[0] is self:
            _ACTIVE[0] = None

    def unwind(self) -> None:
        """From here on the command writes, and closes what it opened when a signal is raised in it."""
        self.unwinding = True

    def said(self) -> None:
        """The command printed its line: a later signal changes nothing."""
        self.done = True

    def note(self, signals: list[int]) -> None:
        """Signals taken by another handler (a run's :class:`CtrlC`): the first sets the status."""
        if self.first is None and signals:
            self.first = signals[0]

    def line(self, twice: bool = False) -> str:
        """The one line of a stop at once: by a first signal (before the command writes), or by a
        second Ctrl-C (``twice``)."""
        if not twice:
            return f"{self.prog}: {_verb(self.first)}{self.quiet}"
        tail = self.at_once() if callable(self.at_once) else self.at_once
        return f"{self.prog}: {_twice(self.first)}{tail}"

    def _handle(self, signum, frame) -> None:
        raise_now = False
        for s in arrivals(signum):
            stopping = self.first is not None  # (a signal came before: this one is the second)
            self.note([s])
            if self.done:
                continue
            if not self.unwinding or (stopping and s == signal.SIGINT):
                if self.ends_process:
                    self.end_now(twice=stopping)
                raise_now = True  # (called by another program: raised again, as Python's own handler does)
            elif not stopping:
                raise_now = True
        if raise_now:
            raise Terminated() if self.first == signal.SIGTERM else KeyboardInterrupt()

    def end_now(self, twice: bool = False) -> None:
        """Print :meth:`line` on stderr, remove the temporary files of atomic writes under way, and
        end the process with :attr:`status` (130 without a signal)."""
        self.done = True
        try:
            line = self.line(twice)
        except Exception:  # noqa: BLE001 - (the folder could not be read: the line without its detail)
            line = f"{self.prog}: {_twice(self.first) if twice else _verb(self.first)}: stopped at once"
        end_now(line, self.status or 130)


def end_now(line: str | None, status: int) -> None:
    """Flush stdout, print ``line`` on stderr (None: nothing), remove the temporary files of the atomic
    writes under way in any thread (none is left, and none starts) and end the process with
    ``status``, without unwinding (what runs in other threads ends with it)."""
    try:
        sys.stdout.flush()
    except Exception:  # noqa: BLE001 - (a write to stdout cut short by the signal: what it held is lost)
        pass
    if line is not None:
        data = (line + "\n").encode(errors="replace")
        while data:
            try:
                data = data[os.write(2, data):]
            except InterruptedError:
                continue
            except OSError:
                break
    atomic = sys.modules.get("pcnn_explore.atomic")
    abandon = getattr(atomic, "abandon_temporaries", None)
    if abandon is not None:
        abandon()
    os._exit(status)


def clear_interrupt_mark() -> None:
    """Let the process end with the status its command returned, after a KeyboardInterrupt it caught.

    CPython marks a KeyboardInterrupt that leaves code run by ``exec`` or ``eval`` of a string (which
    ``dataclasses`` and ``collections.namedtuple`` do as a module that defines them is imported: torch,
    say) as unhandled, even where the command catches it further up; ``python -m`` then ends the process
    by SIGINT at exit (status -2, a shell's 130 without the command's line meaning anything), whatever
    status the command returned. A string run to its end clears that mark: call this once the command
    has caught its last KeyboardInterrupt."""
    exec("None", {})


def _python_default(signum: int, handler) -> bool:
    """Whether ``handler`` is what Python or the command put in place for ``signum`` (not a handler
    of the caller's own, nor an ignored signal): then a run may take it over while it runs."""
    if isinstance(getattr(handler, "__self__", None), CommandStop):
        return True
    if signum == signal.SIGINT:
        return handler is signal.default_int_handler
    return handler in (signal.SIG_DFL, raise_terminated)


class CtrlC:
    """SIGINT or SIGTERM during a run (each only where Python's own handler, or for SIGTERM the
    default action or :func:`raise_terminated`, or a :class:`CommandStop`, is in place, and in the
    main thread).

    The first asks for a checkpoint at the end of the vector step (``asked``; ``signum`` says which
    signal: the first to arrive). A second Ctrl-C stops at once (:class:`Abort`, ``aborted``, and the
    previous handlers are back for a third). A second SIGTERM asks nothing more: a scheduler that
    sends SIGTERM to every process of a job, and a sweep that passes its own on to its workers,
    would otherwise stop a run before the checkpoint it asked for (the scheduler's SIGKILL ends it
    if it must). A signal the command took before the loop began (:class:`CommandStop`) asks at once."""

    def __init__(self):
        self.asked = self.aborted = False
        self.signum: int | None = None
        self.previous: dict[int, object] = {}

    def install(self) -> "CtrlC":
        if threading.current_thread() is not threading.main_thread():
            return self
        for signum in _STOPS:
            if _python_default(signum, signal.getsignal(signum)):
                self.previous[signum] = signal.signal(signum, self._handle)
        command = active_stop()
        if command is not None and command.first is not None and not command.done:
            self.asked, self.signum = True, command.first  # (raised, and lost meanwhile)
        return self

    def _handle(self, signum, frame) -> None:
        got = arrivals(signum)
        command = active_stop()
        if command is not None:
            command.note(got)
        for s in got:
            if not self.asked:
                self.asked, self.signum = True, s
            elif s == signal.SIGINT:  # (SIGTERM again: the checkpoint asked for is under way)
                self.aborted = True
                self.restore()
                raise Abort()

    def restore(self) -> None:
        """The handlers in place before :meth:`install`, back (a no-op when none was installed)."""
        previous, self.previous = self.previous, {}
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) or SIGTERM (``signum``) stopped a run. Once: a checkpoint was taken at
    ``step``, the agent step it reached (``checkpoint == step``). Ctrl-C twice (``at_once``): it
    stopped without finishing that checkpoint; ``checkpoint`` is the step of the last one in
    ``out_dir`` (None: none yet), and ``writing`` says a checkpoint write that could not be cut
    short still runs in the background (the folder stays locked until it ends).
    ``exit_status``: what a command stopped this way returns (128 + ``signum``)."""

    def __init__(self, out_dir: str, step: int, steps: int, checkpoint: int | None, at_once: bool = False,
                 writing: bool = False, signum: int = signal.SIGINT):
        super().__init__(out_dir, step, steps, checkpoint, at_once, writing, signum)
        self.out_dir, self.step, self.steps, self.checkpoint = out_dir, step, steps, checkpoint
        self.at_once, self.writing, self.signum = at_once, writing, int(signum)

    @property
    def exit_status(self) -> int:
        return 128 + self.signum

    @classmethod
    def of_run(cls, out: Path, step: int, steps: int, at_once: bool, writer,
               signum: int | None = None) -> "RunInterrupted":
        """The interruption of the run in ``out`` at ``step`` of ``steps`` by ``signum`` (None:
        SIGINT); ``writer``: its :class:`~pcnn_explore.run.checkpoints.CheckpointWriter` (closed or
        cancelled)."""
        from pcnn_explore.checkpoint import read_meta
        from pcnn_explore.run.checkpoints import CHECKPOINT

        last = (read_meta(out / CHECKPOINT) or {}).get("step")
        return cls(str(out), step, steps, None if last is None else int(last), at_once,
                   at_once and writer.in_flight() is not None, signal.SIGINT if signum is None else signum)

    def text(self, resume: str, fresh: str) -> str:
        """The one line: ``resume`` is how to continue, ``fresh`` how to start afresh elsewhere."""
        if not self.at_once:
            return (f"{_verb(self.signum)} at step {self.step} of {self.steps}: checkpoint saved in {self.out_dir}; "
                    f"resume with: {resume}")
        twice = _twice(self.signum)
        if self.writing:
            return (f"{twice} at step {self.step}: stopped at once while a checkpoint was being written; "
                    f"it ends in the background ({self.out_dir} stays locked until then), then resume with: {resume}")
        if self.checkpoint is None:
            return (f"{twice} at step {self.step}: stopped at once, before the run's first checkpoint, so "
                    f"{self.out_dir} cannot resume: {fresh}")
        return (f"{twice} at step {self.step}: stopped at once; the last checkpoint in {self.out_dir} is "
                f"at step {self.checkpoint}: resume with: {resume}")

    def __str__(self) -> str:
        return self.text("train(cfg, resume=True)", "start afresh with another out_dir")
