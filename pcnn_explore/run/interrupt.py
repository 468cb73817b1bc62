"""Stopping a run by a signal: Ctrl-C (SIGINT) or SIGTERM (what Slurm, most schedulers, ``docker
stop`` and ``systemd`` send before SIGKILL). The first asks for a checkpoint at the end of the
vector step (:class:`CtrlC`); a second Ctrl-C stops at once (:class:`Abort`); either way the run
ends with :class:`RunInterrupted`, which says how to go on and which exit status a command gives
(128 + the signal's number: 130 for SIGINT, 143 for SIGTERM).

Outside a run's loop a command can take SIGTERM the way Python takes SIGINT
(:func:`sigterm_as_interrupt`: it raises :class:`Terminated`, a KeyboardInterrupt), so that a
SIGTERM at any moment unwinds the command and closes what it opened.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from pathlib import Path
from typing import Iterator

__all__ = ["CtrlC", "Abort", "RunInterrupted", "Terminated", "SigtermWatch", "sigterm_as_interrupt",
           "raise_terminated"]

class Abort(KeyboardInterrupt):
    """Ctrl-C a second time: stop at once."""


class Terminated(KeyboardInterrupt):
    """SIGTERM outside a run's loop (:func:`sigterm_as_interrupt`), raised as Python raises
    KeyboardInterrupt for SIGINT. ``signum``: the signal (SIGTERM)."""

    signum = signal.SIGTERM


_SIGTERMS = [0]  # SIGTERMs this process's handlers (raise_terminated, a run's CtrlC) have received


def raise_terminated(signum, frame) -> None:
    """The SIGTERM handler of :func:`sigterm_as_interrupt`: raise :class:`Terminated`."""
    _SIGTERMS[0] += 1
    raise Terminated()


def _python_default(signum: int, handler) -> bool:
    """Whether ``handler`` is what Python or the command put in place for ``signum`` (not a handler
    of the caller's own, nor an ignored signal): then a run may take it over while it runs."""
    if signum == signal.SIGINT:
        return handler is signal.default_int_handler
    return handler in (signal.SIG_DFL, raise_terminated)


class CtrlC:
    """SIGINT or SIGTERM during a run (each only where Python's own handler, or for SIGTERM the
    default action or :func:`raise_terminated`, is in place, and in the main thread).

    The first asks for a checkpoint at the end of the vector step (``asked``; ``signum`` says which
    signal). A second Ctrl-C stops at once (:class:`Abort`, ``aborted``, and the previous handlers
    are back for a third). A second SIGTERM asks nothing more: a scheduler that sends SIGTERM to
    every process of a job, and a sweep that passes its own on to its workers, would otherwise
    stop a run before the checkpoint it asked for (the scheduler's SIGKILL ends it if it must)."""

    def __init__(self):
        self.asked = self.aborted = False
        self.signum: int | None = None
        self.previous: dict[int, object] = {}

    def install(self) -> "CtrlC":
        if threading.current_thread() is not threading.main_thread():
            return self
        for signum in (signal.SIGINT, signal.SIGTERM):
            if _python_default(signum, signal.getsignal(signum)):
                self.previous[signum] = signal.signal(signum, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if signum == signal.SIGTERM:
            _SIGTERMS[0] += 1
        if not self.asked:
            self.asked, self.signum = True, signum
            return
        if signum != signal.SIGINT:  # (SIGTERM again: the checkpoint asked for is under way)
            return
        self.aborted = True
        self.restore()
        raise Abort()

    def restore(self) -> None:
        """The handlers in place before :meth:`install`, back (a no-op when none was installed)."""
        previous, self.previous = self.previous, {}
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class SigtermWatch:
    """What :func:`sigterm_as_interrupt` yields: ``received`` is True once a SIGTERM reached this
    process's handlers while the block ran (raised as :class:`Terminated`, or taken by a run)."""

    def __init__(self):
        self._start = _SIGTERMS[0]

    @property
    def received(self) -> bool:
        return _SIGTERMS[0] > self._start


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[SigtermWatch]:
    """While the block runs (in the main thread, where SIGTERM has its default action), SIGTERM
    raises :class:`Terminated` (a KeyboardInterrupt), as SIGINT raises KeyboardInterrupt: a command
    stopped by a scheduler unwinds, closes its files and removes its partial writes. A run's loop
    takes SIGTERM over meanwhile (:class:`CtrlC`). Elsewhere the handlers stay as they are. Yields
    a :class:`SigtermWatch`."""
    watch = SigtermWatch()
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield watch
        return
    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield watch
    finally:
        signal.signal(signal.SIGTERM, previous)


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
        what = "interrupted" if self.signum == signal.SIGINT else f"stopped by {_signal_name(self.signum)}"
        if not self.at_once:
            return (f"{what} at step {self.step} of {self.steps}: checkpoint saved in {self.out_dir}; "
                    f"resume with: {resume}")
        twice = "interrupted twice" if self.signum == signal.SIGINT else f"{what}, then interrupted"
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
