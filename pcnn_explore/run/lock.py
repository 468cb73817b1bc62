"""One writer per run folder: an exclusive lock for the whole run, and the attempt that owns the folder.

On one machine, :class:`RunLock` holds ``fcntl.flock(LOCK_EX)`` on ``out_dir/run.lock`` from the
run's first write to its end; the kernel releases it when the process ends, even by SIGKILL. A
second writer is refused with one line naming the folder, the host and the holder's PID, which the
holder writes into the lock file once it has the lock.

Across machines a file lock on a shared file system cannot be trusted, so the lock file also holds
a fresh attempt id (``{"attempt", "host", "pid", "started"}``, JSON). Before each checkpoint the run
reads it back (:meth:`RunLock.check_owner`): once another attempt has written its own id there,
this one stops without writing (:class:`~pcnn_explore.checks.RunError`).

The lock is per process and re-entrant: code that already holds a folder (a sweep trial clearing
what a dead attempt left) can call ``train`` on it, which then holds it as well.

``flock`` is POSIX: on Windows (no ``fcntl``) a run is refused before anything is written, in one
line that names WSL 2 (:func:`check_platform`).
"""
from __future__ import annotations

import errno
import json
import os
import socket
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Callable

from pcnn_explore.checks import RunError

__all__ = ["LOCK", "RunLock", "holder", "probe", "check_platform", "PLATFORM_REFUSAL"]

#: why a run cannot start on Windows, and what to do instead
PLATFORM_REFUSAL = ("pcnn-explore runs on Linux and macOS; on Windows use WSL 2 (in PowerShell: wsl --install, "
                    "then install and run pcnn-explore inside the Linux it gives)")

LOCK = "run.lock"
_HELD: dict[str, "_Hold"] = {}  # real path of a folder -> this process's hold on it
_GUARD = threading.Lock()


class _Hold:
    def __init__(self, fd: int, attempt: str):
        self.fd, self.attempt, self.depth = fd, attempt, 1


def check_platform() -> None:
    """Raise :class:`~pcnn_explore.checks.RunError` (:data:`PLATFORM_REFUSAL`) on Windows, where the
    run lock (``fcntl.flock``) does not exist; elsewhere nothing."""
    if sys.platform == "win32":
        raise RunError(PLATFORM_REFUSAL)


def holder(out_dir: str | os.PathLike) -> dict:
    """What the lock file of ``out_dir`` says about its holder (``attempt``, ``host``, ``pid``); {} if nothing."""
    try:
        info = json.loads((Path(out_dir) / LOCK).read_text())
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _busy(out: Path) -> RunError:
    info = holder(out)
    return RunError(f"{{out_dir}} {out} is in use by another run (PID {info.get('pid', '?')} on host "
                  f"{info.get('host', '?')}): wait for it to end, or choose another {{out_dir}}")


def _key(out: Path) -> str:
    return os.path.realpath(out)


def probe(out_dir: str | os.PathLike) -> None:
    """Raise RunError when another process holds ``out_dir``; write nothing (a check before heavy work)."""
    check_platform()
    out = Path(out_dir)
    with _GUARD:
        if _key(out) in _HELD:
            return
    try:
        fd = os.open(out / LOCK, os.O_RDONLY)
    except OSError:
        return  # no lock file: nobody holds the folder
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _busy(out) from None
    except OSError:
        pass
    finally:
        os.close(fd)  # (closing releases a lock this probe took)


class RunLock:
    """``with RunLock(out_dir) as lock: ... lock.acquire(check) ...``: the folder is this process's
    from :meth:`acquire` (which creates it if needed) until :meth:`release` or the end of the block."""

    def __init__(self, out_dir: str | os.PathLike):
        self.out = Path(out_dir)
        self.attempt: str | None = None
        self._held = False
        self._until = None  # a write in another thread that keeps the folder locked (hold_until)

    def __enter__(self) -> "RunLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def acquire(self, check: Callable[[], None] | None = None) -> "RunLock":
        """Create the folder, lock it, run ``check()`` (under the lock, before anything is written),
        then write this attempt's id, host and PID into the lock file. Raises RunError when another
        process holds the folder or the folder cannot be created. A second call does nothing."""
        if self._held:
            return self
        key = _key(self.out)
        with _GUARD:
            hold = _HELD.get(key)
            if hold is not None:  # this process holds it already (re-entrant)
                if check is not None:
                    check()
                hold.depth += 1
                self.attempt, self._held = hold.attempt, True
                return self
            fd = self._lock()
            try:
                if check is not None:
                    check()
                attempt = uuid.uuid4().hex
                info = json.dumps({"attempt": attempt, "host": socket.gethostname(), "pid": os.getpid(),
                                   "started": time.time()}).encode() + b"\n"
                os.ftruncate(fd, 0)
                os.pwrite(fd, info, 0)
                os.fsync(fd)
            except BaseException:
                os.close(fd)
                raise
            _HELD[key] = _Hold(fd, attempt)
            self.attempt, self._held = attempt, True
        return self

    def _lock(self) -> int:
        check_platform()
        import fcntl

        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RunError(f"{{out_dir}} {self.out}: cannot create the folder ({e.strerror or e})") from None
        path = self.out / LOCK
        while True:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
            except OSError as e:
                raise RunError(f"{{out_dir}} {self.out}: cannot write there ({e.strerror or e})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                os.close(fd)
                if e.errno in (errno.EAGAIN, errno.EACCES):
                    raise _busy(self.out) from None
                raise RunError(f"{{out_dir}} {self.out}: cannot lock {path} ({e.strerror or e})") from None
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(path))
            except FileNotFoundError:
                same = False
            if same:  # (not a lock file someone removed and made anew meanwhile)
                return fd
            os.close(fd)

    def check_owner(self) -> None:
        """Raise RunError when another attempt has taken the folder over since :meth:`acquire`
        (its id is in the lock file now): this attempt must stop without writing."""
        if not self._held:
            return
        info = holder(self.out)
        if info.get("attempt") != self.attempt:
            raise RunError(f"{{out_dir}} {self.out} was taken over by another attempt (PID {info.get('pid', '?')} "
                         f"on host {info.get('host', '?')}): this attempt stops without writing")

    def hold_until(self, future) -> None:
        """Keep the folder until ``future`` (a checkpoint still being written, in another thread)
        is done, however early :meth:`release` is called: no write ever runs without the lock."""
        self._until = future

    def release(self) -> None:
        """Give the folder up (the lock file stays, with the last holder's id, host and PID); while
        a write passed to :meth:`hold_until` still runs, once it is done."""
        until = self._until
        if until is not None and not until.done():
            until.add_done_callback(lambda _: self._drop())  # (runs at once if it has finished meanwhile)
            return
        self._drop()

    def _drop(self) -> None:
        key = _key(self.out)
        with _GUARD:
            if not self._held:
                return
            self._held = False
            hold = _HELD.get(key)
            if hold is None:
                return
            hold.depth -= 1
            if hold.depth == 0:
                del _HELD[key]
                os.close(hold.fd)  # (closing the descriptor releases the flock)

    close = release
