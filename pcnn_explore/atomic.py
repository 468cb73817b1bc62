"""One way to write a file so that a crash never leaves half of it: ``atomic_write``.

The content goes to a temporary file in the target's folder, is flushed to disk, gets the mode a
plainly created file would have (``0666 & ~umask``, not ``mkstemp``'s 0600) and is renamed over the
target with ``os.replace``; then the folder itself is synced (:func:`fsync_dir`), so that the rename
survives a power cut too. On any error the temporary file is removed and the target is untouched.
Checkpoints, the training log, recorded episodes, cached streams, metrics and reports all use it.

The temporary file is ``.<name>.<12 hex digits>.tmp`` beside the target (:func:`temporary_names`
matches them). A process that must end at once, without unwinding (a command stopped twice while a
background thread writes a checkpoint), first calls :func:`abandon_temporaries`: the temporary
files of every write under way are removed and no new one is created, so none is left behind.
"""
from __future__ import annotations

import contextlib
import errno
import os
import tempfile
import threading
from pathlib import Path
from typing import IO, Iterator

__all__ = ["atomic_write", "write_text_atomic", "fsync_dir", "abandon_temporaries", "temporary_names"]

_LIVE: set[str] = set()  # the temporary files of the atomic writes under way, in every thread
_LIVE_LOCK = threading.RLock()  # (held for good by abandon_temporaries: no write starts after it)


def _umask() -> int:
    """The process's file mode creation mask, read without changing it.

    ``os.umask`` can only read the mask by setting another one, and for that moment every file any
    other thread creates gets the wrong mode; so the mask is read from ``/proc/self/status``
    (``Umask:``, Linux 4.7 and later) on every call (it may change while the process runs; the read
    costs microseconds). Where that line is missing (macOS, old kernels), a probe file created with
    mode 0777 in the temporary folder shows the mask as the bits the kernel cleared, again without
    touching the process-wide setting.
    """
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    folder = tempfile.gettempdir()
    while True:
        probe = os.path.join(folder, f".umask-probe-{os.getpid()}-{os.urandom(6).hex()}")
        try:
            fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o777)
        except FileExistsError:
            continue
        try:
            return 0o777 & ~os.fstat(fd).st_mode
        finally:
            os.close(fd)
            os.unlink(probe)


def fsync_dir(folder: str | os.PathLike) -> None:
    """Flush ``folder``'s entries (a rename or a new file in it) to disk; a no-op where folders
    cannot be opened (Windows) or synced (file systems that answer EINVAL or ENOTSUP)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except (PermissionError, IsADirectoryError):
        return
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "wb", encoding: str | None = None) -> Iterator[IO]:
    """``with atomic_write(path) as f: f.write(...)``: ``path`` appears complete or not at all.

    ``mode`` is ``"wb"`` or ``"w"`` (text, ``encoding`` default UTF-8). The parent folder must exist.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    path = Path(path)
    fd, tmp = _temporary(path)
    try:
        with os.fdopen(fd, mode, **({"encoding": encoding or "utf-8"} if mode == "w" else {})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(tmp)
    fsync_dir(path.parent)


def _temporary(path: Path) -> tuple[int, str]:
    """(fd, name) of a new temporary file for an atomic write of ``path``: mode 0600, created only if
    no file or link has its name (as ``mkstemp``), and noted as under way before it exists."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    while True:
        tmp = os.path.join(path.parent, f".{path.name}.{os.urandom(6).hex()}.tmp")
        with _LIVE_LOCK:
            _LIVE.add(tmp)
            try:
                return os.open(tmp, flags, 0o600), tmp
            except FileExistsError:
                _LIVE.discard(tmp)
            except BaseException:
                _LIVE.discard(tmp)
                raise


def temporary_names(name: str) -> str:
    """The glob pattern of the temporary files of atomic writes of a file called ``name`` (a plain
    name, without glob's ``*?[``)."""
    return f".{name}.*.tmp"


def abandon_temporaries() -> None:
    """Remove the temporary files of the atomic writes under way in any thread, and keep any new one
    from being created: for a process about to end without unwinding (``os._exit``), so that no
    half-written file is left. Never undone: a write that starts after it waits for the end."""
    _LIVE_LOCK.acquire(timeout=10)  # (a thread holds it only while it creates or forgets a file)
    for tmp in sorted(_LIVE):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _LIVE.clear()


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; return the path."""
    with atomic_write(path, "w") as f:
        f.write(text)
    return Path(path)
