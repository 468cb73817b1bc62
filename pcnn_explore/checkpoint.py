"""Saving and loading state safely: atomic writes, a checksum, and loading without pickle.

``save_atomic(obj, path)`` writes with ``torch.save`` to a temporary file in the same folder and
renames it over ``path`` (:func:`pcnn_explore.atomic.atomic_write`), so a crash never leaves a half-written file.
The file starts with a header that holds the SHA-256 of everything after it:

- line 1: :data:`MAGIC`;
- line 2: ``sha256 <64 hex digits> <meta bytes, 20 digits> <payload bytes, 20 digits>``;
- ``meta``: a small JSON object (e.g. a checkpoint's step and settings) readable without the payload
  (:func:`read_meta`);
- the payload: what ``torch.save`` writes.

``load(path)`` checks the header, the sizes and the checksum (one flipped byte anywhere is refused
with :class:`CorruptFile`), then reads with ``torch.load(weights_only=True)``: only tensors, numbers,
strings and containers can come back, never arbitrary objects. Numpy arrays inside ``obj`` are
stored as tensors with a marker and come back as numpy arrays. Files without the header (written
before checksums) load unchecked unless ``checksum=True``.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pcnn_explore.atomic import atomic_write

__all__ = ["save_atomic", "load", "read_meta", "Deferred", "CorruptFile", "MAGIC"]

_NDARRAY = "__ndarray__"
MAGIC = b"pcnn-explore checksummed torch file 1\n"
_LINE = "sha256 {digest} {meta:020d} {payload:020d}\n"
_LINE_BYTES = len(_LINE.format(digest="0" * 64, meta=0, payload=0))
_CHUNK = 8 << 20


class CorruptFile(ValueError):
    """A file that is not what :func:`save_atomic` wrote: ``reason`` says how (checksum, size, header)."""

    def __init__(self, path: Path, reason: str):
        self.path, self.reason = Path(path), reason
        super().__init__(f"cannot read {path}: {reason}")


class Deferred:
    """Work to do when the state is saved, not when it is taken: ``Deferred(fn, *args)`` is saved
    as ``fn(*args)``. A checkpoint written in the background compresses its replay there, while the
    loop trains on (the arguments must be copies that training does not change)."""

    def __init__(self, fn, *args, **kwargs):
        self.fn, self.args, self.kwargs = fn, args, kwargs

    def resolve(self) -> Any:
        return self.fn(*self.args, **self.kwargs)


def _encode(obj: Any) -> Any:
    if isinstance(obj, Deferred):
        return _encode(obj.resolve())
    if isinstance(obj, np.ndarray):
        return {_NDARRAY: torch.from_numpy(np.ascontiguousarray(obj))}
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {k: _encode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_encode(v) for v in obj)
    return obj


def _decode(obj: Any) -> Any:
    if isinstance(obj, dict):
        if set(obj) == {_NDARRAY}:
            return obj[_NDARRAY].numpy()
        return {k: _decode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_decode(v) for v in obj)
    return obj


class _Hashing:
    """A write-only file that passes bytes on to ``f`` and into ``digest``."""

    def __init__(self, f, digest):
        self.f, self.digest, self.n = f, digest, 0

    def write(self, b) -> int:
        self.digest.update(b)
        self.n += len(b)
        return self.f.write(b)

    def flush(self) -> None:
        self.f.flush()


class _Window(io.RawIOBase):
    """The bytes ``[offset, offset + size)`` of the open binary file ``f``, as a seekable file."""

    def __init__(self, f, offset: int, size: int):
        super().__init__()
        self.f, self.offset, self.size, self.pos = f, offset, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, pos: int, whence: int = 0) -> int:
        self.pos = {0: 0, 1: self.pos, 2: self.size}[whence] + pos
        return self.pos

    def readinto(self, b) -> int:
        n = max(0, min(len(b), self.size - self.pos))
        self.f.seek(self.offset + self.pos)
        got = self.f.readinto(memoryview(b)[:n])
        self.pos += got
        return got


def save_atomic(obj: Any, path: str | os.PathLike, meta: dict | None = None) -> Path:
    """Write ``obj`` to ``path`` atomically (temp file + rename) with its checksum; return the path.

    ``meta``: a small JSON-able dict stored in the header (:func:`read_meta`), covered by the checksum.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta_bytes = json.dumps(meta or {}, sort_keys=True, separators=(",", ":")).encode()
    with atomic_write(path) as f:
        f.write(MAGIC + b" " * _LINE_BYTES + meta_bytes)
        out = _Hashing(f, hashlib.sha256(meta_bytes))
        torch.save(_encode(obj), out)
        f.flush()
        f.seek(len(MAGIC))
        f.write(_LINE.format(digest=out.digest.hexdigest(), meta=len(meta_bytes), payload=out.n).encode())
        f.seek(0, os.SEEK_END)
    return path


def _header(f, path: Path) -> tuple[str, bytes, int, int]:
    """(digest, meta bytes, payload offset, payload bytes) of an open checksummed file, its header checked."""
    line = f.read(_LINE_BYTES)
    parts = line.decode("ascii", "replace").split(" ")
    try:
        digest, n_meta, n_payload = parts[1], int(parts[2]), int(parts[3])
        ok = parts[0] == "sha256" and _LINE.format(digest=digest, meta=n_meta, payload=n_payload).encode() == line
    except (IndexError, ValueError):
        ok = False
    if not ok:
        raise CorruptFile(path, "its header is damaged (corrupt)")
    size = os.fstat(f.fileno()).st_size
    offset = len(MAGIC) + _LINE_BYTES + n_meta
    if size != offset + n_payload:
        raise CorruptFile(path, f"it holds {size} bytes where its header says {offset + n_payload} "
                                "(truncated or corrupt)")
    return digest, f.read(n_meta), offset, n_payload


def check_header(path: str | os.PathLike) -> None:
    """Raise :class:`CorruptFile` unless ``path`` is whole as far as can be told without reading it
    all: its header intact and its size the one the header gives (a file written before checksums:
    a torch archive). Cheap (a checkpoint of gigabytes is not hashed): :func:`load` checks the rest."""
    path = Path(path)
    with open(path, "rb") as f:
        start = f.read(len(MAGIC))
        if start != MAGIC:
            if start[:4] == b"PK\x03\x04":  # torch's zip archive, written before checksums
                return
            raise CorruptFile(path, "it is empty, truncated or not a file saved by pcnn-explore")
        _header(f, path)


def read_meta(path: str | os.PathLike) -> dict | None:
    """The ``meta`` dict stored in a file's header, read without the payload and without checking
    the checksum (a hint: :func:`load` checks it); None for a file without a readable header."""
    try:
        with open(path, "rb") as f:
            if f.read(len(MAGIC)) != MAGIC:
                return None
            meta = json.loads(_header(f, Path(path))[1])
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def load(path: str | os.PathLike, map_location: str | torch.device | None = "cpu", checksum: bool = False) -> Any:
    """Load what :func:`save_atomic` wrote (``weights_only=True``: no pickle of objects), after
    checking its checksum. Raises :class:`CorruptFile` (a ValueError) for a damaged file, and for a
    file without the header when ``checksum`` is True."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    try:
        with open(path, "rb") as f:
            if f.read(len(MAGIC)) != MAGIC:
                if checksum:
                    raise CorruptFile(path, "it has no checksum header (corrupt, or written by an earlier version)")
                f.seek(0)
                return _decode(torch.load(f, map_location=map_location, weights_only=True))
            digest, meta, offset, size = _header(f, path)
            h = hashlib.sha256(meta)
            for _ in range(0, size, _CHUNK):
                h.update(f.read(_CHUNK))
            if h.hexdigest() != digest:
                raise CorruptFile(path, "its checksum does not match its content (corrupt)")
            return _decode(torch.load(_Window(f, offset, size), map_location=map_location, weights_only=True))
    except CorruptFile:
        raise
    except Exception as exc:  # corrupt, truncated, or not a torch file
        # torch's own text may advise weights_only=False, which would unpickle arbitrary code: never pass it on
        raise CorruptFile(path, f"not a file saved by pcnn-explore, or truncated or corrupt "
                                f"({type(exc).__name__})") from None
