"""One way to write a file so that a crash never leaves half of it: ``atomic_write``.

The content goes to a temporary file in the target's folder, is flushed to disk, gets the mode a
plainly created file would have (``0666 & ~umask``, not ``mkstemp``'s 0600) and is renamed over the
target with ``os.replace``. On any error the temporary file is removed and the target is untouched.
Checkpoints, the training log, recorded episodes, cached streams, metrics and reports all use it.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator

__all__ = ["atomic_write", "write_text_atomic"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "wb", encoding: str | None = None) -> Iterator[IO]:
    """``with atomic_write(path) as f: f.write(...)``: ``path`` appears complete or not at all.

    ``mode`` is ``"wb"`` or ``"w"`` (text, ``encoding`` default UTF-8). The parent folder must exist.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; return the path."""
    with atomic_write(path, "w") as f:
        f.write(text)
    return Path(path)
