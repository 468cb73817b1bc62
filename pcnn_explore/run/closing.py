"""The end of a run, however it ends: :func:`close_run` closes what the run opened, then gives its
folder up."""
from __future__ import annotations

import contextlib

from pcnn_explore.run.checkpoints import CheckpointWriter
from pcnn_explore.run.interrupt import Abort, CtrlC
from pcnn_explore.run.lock import RunLock

__all__ = ["close_run"]


def close_run(lock: RunLock, writer: CheckpointWriter, ctrl_c: CtrlC, closables) -> bool:
    """Close ``closables`` (last first; None skipped), each even if another failed (a full disk),
    then give the folder up: the checkpoint writer is finished (or, after Ctrl-C twice, cancelled)
    while the lock is still held, and a write it cannot stop at once keeps the folder locked until it
    ends. Python's Ctrl-C handler is back afterwards. Returns True when Ctrl-C came a second time
    meanwhile (stop at once)."""
    try:
        _close(lock, writer, ctrl_c, closables)
    except Abort:
        return True
    finally:
        ctrl_c.restore()
    return False


def _close(lock: RunLock, writer: CheckpointWriter, ctrl_c: CtrlC, closables) -> None:
    def release() -> None:
        running = writer.in_flight()  # (only after a cancel: close() waits for it)
        if running is not None:
            lock.hold_until(running)
        lock.release()

    with contextlib.ExitStack() as stack:  # (callbacks run last first, each even if one raised)
        stack.callback(release)
        stack.callback(lambda: writer.cancel() if ctrl_c.aborted else writer.close())
        for closable in reversed(closables):
            if closable is not None:
                stack.callback(closable.close)
