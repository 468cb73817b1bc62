"""Where the replay's frames live (host array or device tensor), and compact replay checkpoints.

:class:`DeviceFrames` keeps the frames of :class:`~pcnn_explore.agents.replay.ReplayBuffer` in a
torch tensor on a device (on CUDA: 1M Atari slots of 84x84 uint8 = 7 GB of GPU memory), so that a
sampled batch is gathered on the device and never crosses PCIe. Written frames are collected in a
pinned host buffer and copied to the device in one asynchronous copy per run of consecutive
slots, when a batch is sampled (or the buffer fills); two staging buffers alternate, and a buffer
is refilled only once the copy that read it has run (a CUDA event).

:func:`pack` / :func:`unpack` compress a numpy array for a checkpoint with the standard
library's zlib (level 1: fast), in chunks compressed on several threads (zlib releases the GIL).
Frames are first XOR-ed with the frame of the slot before (``delta=True``, within a chunk):
consecutive Atari frames differ in few pixels, so the delta is mostly zero bytes. The result is a
dict of numpy arrays, numbers and strings that ``torch.load(weights_only=True)`` reads back
(:mod:`pcnn_explore.checkpoint` stores numpy arrays as tensors).
"""
from __future__ import annotations

import math
import os
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

__all__ = ["DeviceFrames", "pack", "unpack", "replay_device"]

CODEC = "zlib1"
CHUNK_BYTES = 8 << 20  # 8 MiB of raw data per compressed chunk


def replay_device(device, capacity: int, obs_shape, stack: int = 1, fraction: float = 0.5) -> str | None:
    """Where a replay's frames should live: ``device`` if it is a CUDA device whose free memory
    holds them within ``fraction`` of it, else None (host memory). Frames take ``capacity * C / stack
    * H * W`` bytes (one uint8 frame per slot)."""
    dev = torch.device(device)
    if dev.type != "cuda" or not torch.cuda.is_available():
        return None
    c, h, w = obs_shape
    need = capacity * (c // stack) * h * w
    free, _ = torch.cuda.mem_get_info(dev)
    return str(dev) if need <= fraction * free else None


class DeviceFrames:
    """``capacity`` frames of shape ``frame_shape`` (uint8) in a tensor on ``device``.

    ``write(slot, frame)`` stages a frame on the host; ``flush()`` sends the staged frames (call it
    before reading ``tensor`` on the device: :meth:`ReplayBuffer.sample` does). ``stage`` frames per
    staging buffer (pinned on CUDA).
    """

    def __init__(self, capacity: int, frame_shape: tuple[int, ...], device, stage: int = 256,
                 tensor: torch.Tensor | None = None):
        self.device = torch.device(device)
        self.capacity = int(capacity)
        if tensor is not None and (tuple(tensor.shape) != (self.capacity, *frame_shape) or tensor.dtype != torch.uint8
                                   or tensor.device.type != self.device.type):
            raise ValueError(f"tensor must be uint8 of shape {(self.capacity, *frame_shape)} on {self.device}")
        # ``tensor``: storage to use (e.g. one env's part of a multi-env replay), else a new one
        self.tensor = tensor if tensor is not None else torch.zeros((self.capacity, *frame_shape), dtype=torch.uint8,
                                                                    device=self.device)
        cuda = self.device.type == "cuda"
        self._stage_size = max(1, min(int(stage), self.capacity))
        self._stages = [torch.zeros((self._stage_size, *frame_shape), dtype=torch.uint8, pin_memory=cuda)
                        for _ in range(2)]
        self._stage_np = [s.numpy() for s in self._stages]
        self._events: list = [None, None]
        self._current, self._start, self._count = 0, 0, 0

    def write(self, slot: int, frame: np.ndarray) -> None:
        """Stage ``frame`` for ``slot``; slots written in a row (mod capacity) go in one copy."""
        if self._count and (self._count == self._stage_size or slot != (self._start + self._count) % self.capacity):
            self.flush()
        if self._count == 0:
            self._start = slot
            event = self._events[self._current]
            if event is not None:
                event.synchronize()  # the copy that last read this staging buffer has run
        self._stage_np[self._current][self._count] = frame
        self._count += 1

    def flush(self) -> None:
        """Copy the staged frames into the device tensor (asynchronously on CUDA)."""
        if not self._count:
            return
        src = self._stages[self._current][: self._count]
        first = min(self._count, self.capacity - self._start)
        self.tensor[self._start : self._start + first].copy_(src[:first], non_blocking=True)
        if first < self._count:
            self.tensor[: self._count - first].copy_(src[first:], non_blocking=True)
        if self.device.type == "cuda":
            event = torch.cuda.Event()
            event.record(torch.cuda.current_stream(self.device))
            self._events[self._current] = event
        self._current ^= 1
        self._count = 0

    def read(self, start: int, stop: int) -> np.ndarray:
        """Frames of slots [start, stop) as a host numpy array (synchronises)."""
        self.flush()
        return self.tensor[start:stop].cpu().numpy()

    def assign(self, start: int, frames: np.ndarray) -> None:
        """Overwrite slots [start, start + len(frames)) with ``frames`` (a checkpoint being loaded)."""
        self.flush()
        self.tensor[start : start + len(frames)].copy_(torch.from_numpy(np.ascontiguousarray(frames)))

    def clear(self, start: int, stop: int) -> None:
        self.flush()
        self.tensor[start:stop].zero_()


# ------------------------------------------------------------------------------------ compression
def _threads() -> int:
    return max(1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def _rows(array: np.ndarray) -> tuple[int, int]:
    """(rows, elements per row) of ``array`` seen as a 2-D table (a 0-d array is one row)."""
    if array.ndim == 0:
        return 1, 1
    return array.shape[0], int(np.prod(array.shape[1:], dtype=np.int64))


def pack(array: np.ndarray, delta: bool = False) -> dict:
    """Compress ``array`` losslessly: {"data": uint8 (compressed chunks, concatenated), "sizes":
    int64 (bytes of each chunk), "shape", "dtype", "codec", "delta", "rows": rows per chunk}.

    ``delta`` (integer arrays): XOR each row (frame) with the row before it, within each chunk,
    before compressing.
    """
    array = np.ascontiguousarray(array).reshape(np.shape(array))  # (ascontiguousarray makes 0-d arrays 1-d)
    if delta and array.dtype.kind not in "ui":
        raise ValueError(f"delta coding needs an integer array, got {array.dtype}")
    n, per_row = _rows(array)
    flat = array.reshape(n, per_row)
    rows = max(1, CHUNK_BYTES // max(1, per_row * array.itemsize))

    def one(i: int) -> bytes:
        block = flat[i * rows : (i + 1) * rows]
        if delta and len(block) > 1:
            block = block.copy()
            block[1:] ^= flat[i * rows : i * rows + len(block) - 1]
        return zlib.compress(block.tobytes(), 1)

    with ThreadPoolExecutor(_threads()) as pool:
        parts = list(pool.map(one, range(max(1, math.ceil(n / rows)))))
    return {
        "data": np.frombuffer(bytearray(b"".join(parts)), dtype=np.uint8),
        "sizes": np.array([len(p) for p in parts], np.int64),
        "shape": [int(s) for s in array.shape], "dtype": str(array.dtype), "codec": CODEC,
        "delta": bool(delta), "rows": int(rows),
    }


def unpack(packed: dict, out: np.ndarray | None = None) -> np.ndarray:
    """The array :func:`pack` compressed, bit for bit (into ``out`` when given: a C-contiguous
    array of the same shape and dtype). Damaged data raises ValueError ("corrupt replay checkpoint")."""
    if packed.get("codec") != CODEC:
        raise ValueError(f"unknown replay compression {packed.get('codec')!r}, expected {CODEC!r}")
    shape, dtype = tuple(int(s) for s in packed["shape"]), np.dtype(str(packed["dtype"]))
    if out is None:
        out = np.empty(shape, dtype)
    if out.shape != shape or out.dtype != dtype or not out.flags.c_contiguous:
        raise ValueError(f"replay checkpoint array is {shape} {dtype}, expected {out.shape} {out.dtype} (contiguous)")
    n, per_row = _rows(out)
    flat = out.reshape(n, per_row)
    data = np.ascontiguousarray(packed["data"], np.uint8)
    ends = np.cumsum(np.asarray(packed["sizes"], np.int64))
    rows, delta = int(packed["rows"]), bool(packed["delta"])

    def one(i: int) -> None:
        try:
            raw = zlib.decompress(memoryview(data[(ends[i - 1] if i else 0) : ends[i]]))
        except zlib.error as e:
            raise ValueError(f"corrupt replay checkpoint: chunk {i} does not decompress ({e})") from None
        block = flat[i * rows : (i + 1) * rows]
        if len(raw) != block.nbytes:
            raise ValueError("corrupt replay checkpoint: a chunk decompresses to the wrong size")
        block[...] = np.frombuffer(raw, dtype).reshape(block.shape)

    with ThreadPoolExecutor(_threads()) as pool:  # zlib releases the GIL
        list(pool.map(one, range(len(ends))))
    if delta:  # undo the XOR, row after row, in one thread (small ufunc calls would fight over the GIL)
        words = flat.view(np.uint64) if (per_row * out.itemsize) % 8 == 0 and per_row else flat
        for i in range(len(ends)):
            for k in range(i * rows + 1, min((i + 1) * rows, n)):
                np.bitwise_xor(words[k], words[k - 1], out=words[k])
    return out
