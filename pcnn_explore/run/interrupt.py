"""Ctrl-C during a run: the first asks for a checkpoint at the end of the vector step
(:class:`CtrlC`), a second stops at once (:class:`Abort`); either way the run ends with
:class:`RunInterrupted`, which says how to go on."""
from __future__ import annotations

import signal
import threading
from pathlib import Path

__all__ = ["CtrlC", "Abort", "RunInterrupted"]


class Abort(KeyboardInterrupt):
    """Ctrl-C a second time: stop at once."""


class CtrlC:
    """SIGINT during a run (only where Python's own handler is in place, in the main thread): the
    first asks for a checkpoint at the end of the vector step (``asked``); a second stops at once
    (:class:`Abort`, ``aborted``, and Python's handler is back for a third)."""

    def __init__(self):
        self.asked = self.aborted = False
        self.previous = None

    def install(self) -> "CtrlC":
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if not self.asked:
            self.asked = True
            return
        self.aborted = True
        self.restore()
        raise Abort()

    def restore(self) -> None:
        if self.previous is not None:
            previous, self.previous = self.previous, None
            signal.signal(signal.SIGINT, previous)


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped a run. Once: a checkpoint was taken at ``step``, the agent step it
    reached (``checkpoint == step``). Twice (``at_once``): it stopped without finishing that
    checkpoint; ``checkpoint`` is the step of the last one in ``out_dir`` (None: none yet), and
    ``writing`` says a checkpoint write that could not be cut short still runs in the background
    (the folder stays locked until it ends)."""

    def __init__(self, out_dir: str, step: int, steps: int, checkpoint: int | None, at_once: bool = False,
                 writing: bool = False):
        super().__init__(out_dir, step, steps, checkpoint, at_once, writing)
        self.out_dir, self.step, self.steps, self.checkpoint = out_dir, step, steps, checkpoint
        self.at_once, self.writing = at_once, writing

    @classmethod
    def of_run(cls, out: Path, step: int, steps: int, at_once: bool, writer) -> "RunInterrupted":
        """The interruption of the run in ``out`` at ``step`` of ``steps``; ``writer``: its
        :class:`~pcnn_explore.run.checkpoints.CheckpointWriter` (closed or cancelled)."""
        from pcnn_explore.checkpoint import read_meta
        from pcnn_explore.run.checkpoints import CHECKPOINT

        last = (read_meta(out / CHECKPOINT) or {}).get("step")
        return cls(str(out), step, steps, None if last is None else int(last), at_once,
                   at_once and writer.in_flight() is not None)

    def text(self, resume: str, fresh: str) -> str:
        """The one line: ``resume`` is how to continue, ``fresh`` how to start afresh elsewhere."""
        if not self.at_once:
            return (f"interrupted at step {self.step} of {self.steps}: checkpoint saved in {self.out_dir}; "
                    f"resume with: {resume}")
        if self.writing:
            return (f"interrupted twice at step {self.step}: stopped at once while a checkpoint was being written; "
                    f"it ends in the background ({self.out_dir} stays locked until then), then resume with: {resume}")
        if self.checkpoint is None:
            return (f"interrupted twice at step {self.step}: stopped at once, before the run's first checkpoint, so "
                    f"{self.out_dir} cannot resume: {fresh}")
        return (f"interrupted twice at step {self.step}: stopped at once; the last checkpoint in {self.out_dir} is "
                f"at step {self.checkpoint}: resume with: {resume}")

    def __str__(self) -> str:
        return self.text("train(cfg, resume=True)", "start afresh with another out_dir")
