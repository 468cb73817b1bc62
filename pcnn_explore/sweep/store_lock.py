"""One writer at a time for a bsuite store (:mod:`pcnn_explore.sweep.bsuite_store`): a sweep, notebook 14's
``run_into_store`` and a single record each hold :class:`StoreLock` while they write. It is
:class:`pcnn_explore.run.lock.RunLock` (``fcntl.flock`` on ``STORE/run.lock``, with the holder's PID and
host) made re-entrant within a process; another process's hold is refused naming its PID, and a lock file
left by a process that is gone is taken over, said in one line.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

__all__ = ["StoreLock", "probe"]

_DEPTH: dict[str, int] = {}  # real path of a store -> how many StoreLocks of this process hold it
_GUARD = threading.Lock()


def _busy(store: Path):
    from pcnn_explore.checks import RunError
    from pcnn_explore.run.lock import holder

    info = holder(store)
    if "pid" not in info:  # (the holder has the lock and is writing its PID)
        time.sleep(0.05)
        info = holder(store)
    return RunError(f"the store {store} is in use by another sweep (PID {info.get('pid', '?')} on host "
                    f"{info.get('host', '?')}): wait for it to end, or give another store folder")


def probe(store: str | os.PathLike) -> None:
    """Raise RunError (naming the holder's PID) where another process holds the store; write nothing."""
    from pcnn_explore.checks import RunError
    from pcnn_explore.run import lock

    try:
        lock.probe(store)
    except RunError:
        raise _busy(Path(store)) from None


class StoreLock:
    """``with StoreLock(store): ...``: the store is this process's alone (re-entrant) until the block ends.

    :class:`pcnn_explore.run.lock.RunLock` on the store folder (``STORE/run.lock``, with the holder's PID
    and host); another process's hold is waited for up to ``wait_s`` seconds, then refused (RunError
    naming its PID). The lock file is removed on release, so one found at :meth:`acquire` was left by a
    process that is gone (the kernel released its ``flock``): taken over, said in one line."""

    def __init__(self, store: str | os.PathLike, wait_s: float = 0.0):
        self.store, self.wait_s = Path(store), float(wait_s)
        self._lock = None

    def __enter__(self) -> "StoreLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()

    def acquire(self) -> "StoreLock":
        from pcnn_explore.checks import RunError
        from pcnn_explore.run.lock import RunLock, holder

        if self._lock is not None:
            return self
        key = os.path.realpath(self.store)
        left: dict = {}
        deadline, free_failures = time.monotonic() + self.wait_s, 0
        while True:
            lock = RunLock(self.store)
            try:
                lock.acquire(lambda: left.update(holder(self.store)))
                break
            except RunError as e:
                try:
                    probe(self.store)
                except RunError:  # another process holds it
                    if time.monotonic() >= deadline:
                        raise _busy(self.store) from None
                    free_failures = 0
                    time.sleep(0.02)
                    continue
                free_failures += 1  # not held: the folder cannot be made or locked (or was just let go)
                if free_failures > 1:
                    raise RunError(e.template.replace("{out_dir}", "the store")) from None
        with _GUARD:
            first = _DEPTH.get(key, 0) == 0
            _DEPTH[key] = _DEPTH.get(key, 0) + 1
        self._lock = lock
        if first and left.get("pid") not in (None, os.getpid()):
            print(f"{self.store}: took over the store's lock left by PID {left['pid']} on host {left.get('host', '?')}, "
                 "which is gone (it ended without releasing the store)", file=sys.stderr, flush=True)
        return self

    def release(self) -> None:
        """Give the store up; the last hold of this process removes the lock file, then lets it go."""
        from pcnn_explore.run.lock import LOCK

        lock, self._lock = self._lock, None
        if lock is None:
            return
        key = os.path.realpath(self.store)
        with _GUARD:
            _DEPTH[key] -= 1
            last = _DEPTH[key] == 0
            if last:
                del _DEPTH[key]
                try:
                    os.unlink(self.store / LOCK)  # (still held: a process waiting makes a new one)
                except FileNotFoundError:
                    pass
            lock.release()
