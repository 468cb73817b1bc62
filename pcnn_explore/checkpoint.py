"""Saving and loading state safely: atomic writes, and loading without pickle.

``save_atomic(obj, path)`` writes with ``torch.save`` to a temporary file in the same folder and
renames it over ``path`` (:func:`pcnn_explore.atomic.atomic_write`), so a crash never leaves a half-written file.
``load(path)`` reads with ``torch.load(weights_only=True)``: only tensors, numbers, strings and
containers can come back, never arbitrary objects. Numpy arrays inside ``obj`` are stored as
tensors with a marker and come back as numpy arrays.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pcnn_explore.atomic import atomic_write

_NDARRAY = "__ndarray__"


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


def save_atomic(obj: Any, path: str | os.PathLike) -> Path:
    """Write ``obj`` to ``path`` atomically (temp file + rename); return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as f:
        torch.save(_encode(obj), f)
    return path


def load(path: str | os.PathLike, map_location: str | torch.device | None = "cpu") -> Any:
    """Load what :func:`save_atomic` wrote (``weights_only=True``: no pickle of objects)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    try:
        obj = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # corrupt, truncated, or not a torch file
        # torch's own text may advise weights_only=False, which would unpickle arbitrary code: never pass it on
        raise ValueError(f"cannot read {path}: not a file saved by pcnn-explore, or truncated or corrupt "
                         f"({type(exc).__name__})") from None
    return _decode(obj)
