"""The end of a run, however it ends: :class:`RunClosing` is the one place that closes what the run
opened, last first, then gives its folder up, whatever failed on the way, from the first thing the
run opens (its envs) to the end of its loop."""
from __future__ import annotations

import contextlib
from typing import TypeVar

from pcnn_explore.run.checkpoints import CheckpointWriter
from pcnn_explore.run.interrupt import Abort, CtrlC
from pcnn_explore.run.lock import RunLock

__all__ = ["RunClosing"]

T = TypeVar("T")


class RunClosing:
    """Everything a run opens, closed in the reverse order of opening (each even if another failed:
    a full disk), by :meth:`close`; then ``ctrl_c``'s handlers are restored (so Ctrl-C while a
    checkpoint is still being finished stops at once).

    :meth:`add` takes an object with ``close()`` (None skipped); :meth:`hold` gives the folder's
    ``lock`` up at that point of the order (it must come before the lock is taken: a failure
    while taking it, or right after, leaves nothing held); :meth:`writer` finishes the checkpoint
    writer (after Ctrl-C twice: cancels it) while the lock is still held, and a write it cannot stop
    at once keeps the folder locked until it ends."""

    def __init__(self, ctrl_c: CtrlC):
        self.ctrl_c = ctrl_c
        self._writer: CheckpointWriter | None = None
        self._stack = contextlib.ExitStack()  # (callbacks run last first, each even if one raised)
        self._stack.callback(ctrl_c.restore)

    def add(self, closable: T) -> T:
        if closable is not None:
            self._stack.callback(closable.close)
        return closable

    def hold(self, lock: RunLock) -> RunLock:
        def release() -> None:
            running = self._writer.in_flight() if self._writer is not None else None  # (only after a cancel)
            if running is not None:
                lock.hold_until(running)
            lock.release()

        self._stack.callback(release)
        return lock

    def writer(self, writer: CheckpointWriter) -> CheckpointWriter:
        self._writer = writer
        self._stack.callback(lambda: writer.cancel() if self.ctrl_c.aborted else writer.close())
        return writer

    def close(self) -> bool:
        """Close everything (see the class); returns True when Ctrl-C came a second time meanwhile
        (stop at once). Any other error while closing is raised once all is closed."""
        try:
            self._stack.close()
        except Abort:
            return True
        return False
