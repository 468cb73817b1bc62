"""The density model's view of a frame: 42x42 pixels, 8 grey levels (3 bits).

Pipeline (the CTS paper's and this paper's, Fig. 1): RGB frame -> greyscale luma
(0.299 R + 0.587 G + 0.114 B) -> area resize to 42x42 (each output pixel is the exact mean of the
input area it covers, fractional pixels weighted by their overlap) -> integer division by 32
-> levels 0..7, uint8.

:func:`to_density_frame` computes this in exact integer arithmetic, so a grey value on a bin
edge (32, 64, ...) lands in its bin: the luma is ``299 R + 587 G + 114 B`` (the grey value times
1000); along an axis of ``n_in`` input pixels resized to ``n_out``, output i covers the input
interval [i n_in / n_out, (i + 1) n_in / n_out) and input pixel j gets the weight
``overlap / n_in`` with ``overlap`` the integer :func:`area_overlaps` (the interval lengths
measured in units of 1 / n_out). The grey value of an output pixel is therefore
``S / (1000 H W)`` with ``S`` an integer sum, and its level is ``S // (1000 H W (256 // levels))``,
one floor division at the end. (Floating point gets this wrong: 0.299 + 0.587 + 0.114 is
0.9999999999999999 in float64, so a uniform grey 32 came out as 31.99... -> level 0.) The mean of
values in [0, 255] is at most 255 and 255 // 32 = 7, so the quantiser cannot produce 8; the kernel
also clips to ``levels - 1``.

:func:`greyscale`, :func:`area_resize` and :func:`quantise` are the same steps in float64, for
figures and explanations; they may differ from :func:`to_density_frame` by one level where a
value lies exactly on a bin edge.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from pcnn_explore.jit import njit

DENSITY_HEIGHT = 42
DENSITY_WIDTH = 42
DENSITY_LEVELS = 8

_LUMA = np.array([0.299, 0.587, 0.114])
#: The luma weights times 1000, as integers: they sum to exactly 1000.
LUMA_X1000 = (299, 587, 114)


@lru_cache(maxsize=32)
def area_overlaps(n_in: int, n_out: int) -> np.ndarray:
    """(n_out, n_in) int64 matrix O of the area resize along one axis, in exact integers.

    Measured in units of 1 / n_out input pixels, output i covers [i n_in, (i + 1) n_in) and input
    pixel j covers [j n_out, (j + 1) n_out); ``O[i, j]`` is the length of their overlap. Every row
    sums to ``n_in`` and every column to ``n_out``; the area weights are ``O / n_in``. Read-only,
    cached per shape.
    """
    i = np.arange(n_out, dtype=np.int64)[:, None]
    j = np.arange(n_in, dtype=np.int64)[None, :]
    overlap = np.minimum((i + 1) * n_in, (j + 1) * n_out) - np.maximum(i * n_in, j * n_out)
    o = np.maximum(overlap, 0)
    o.flags.writeable = False
    return o


@lru_cache(maxsize=32)
def area_weights(n_in: int, n_out: int) -> np.ndarray:
    """(n_out, n_in) float matrix W with ``out = W @ in`` the area (box) average along one axis.

    Row i averages the input interval [i * n_in / n_out, (i + 1) * n_in / n_out); every row sums
    to 1 (up to float round-off). ``area_overlaps(n_in, n_out) / n_in``. Read-only, cached per shape.
    """
    w = area_overlaps(n_in, n_out) / n_in
    w.flags.writeable = False
    return w


@lru_cache(maxsize=32)
def _area_taps(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """The non-zero entries of :func:`area_overlaps` as (indices, integer weights), each (n_out, K).

    Each output covers at most ceil(n_in / n_out) + 1 inputs; unused taps have weight 0. The
    compiled resize below loops over these taps: no BLAS call (whose thread start-up costs far
    more than the arithmetic on images this small) and no temporary arrays beyond one row buffer.
    """
    o = area_overlaps(n_in, n_out)
    k = int((o > 0).sum(axis=1).max())
    idx = np.zeros((n_out, k), np.intp)
    wts = np.zeros((n_out, k), np.int64)
    for i, row in enumerate(o):
        nz = np.flatnonzero(row)
        idx[i, : len(nz)], wts[i, : len(nz)] = nz, row[nz]
    return idx, wts


@njit()
def _density_levels(rgb, row_idx, row_w, col_idx, col_w, divisor, top):
    """Exact integer luma + area resize + quantisation in one compiled pass.

    ``sums[o, p] = sum_k sum_l row_w[o,k] col_w[p,l] (299 R + 587 G + 114 B)[row_idx[o,k], col_idx[p,l]]``
    and the level is ``min(sums // divisor, top)``. Separable: each input row is resized along the
    columns once, then the rows are combined. All int64 (at most 255000 H W, far from overflow).
    """
    height, width = rgb.shape[0], rgb.shape[1]
    n_rows, n_cols = row_idx.shape[0], col_idx.shape[0]
    luma = np.empty(width, np.int64)
    cols = np.empty((height, n_cols), np.int64)
    for r in range(height):
        for c in range(width):
            luma[c] = (np.int64(299) * rgb[r, c, 0] + np.int64(587) * rgb[r, c, 1]
                       + np.int64(114) * rgb[r, c, 2])
        for p in range(n_cols):
            acc = np.int64(0)
            for m in range(col_idx.shape[1]):
                acc += col_w[p, m] * luma[col_idx[p, m]]
            cols[r, p] = acc
    out = np.empty((n_rows, n_cols), np.uint8)
    sums = np.empty(n_cols, np.int64)
    for o in range(n_rows):
        sums[:] = 0
        for k in range(row_idx.shape[1]):
            wr = row_w[o, k]
            if wr == 0:
                continue
            r = row_idx[o, k]
            for p in range(n_cols):
                sums[p] += wr * cols[r, p]
        for p in range(n_cols):
            out[o, p] = min(sums[p] // divisor, top)
    return out


def greyscale(rgb: np.ndarray) -> np.ndarray:
    """Luma of an (H, W, 3) uint8 image as float64 in [0, 255] (float; see the module docstring)."""
    return rgb.astype(np.float64) @ _LUMA


def area_resize(grey: np.ndarray, height: int, width: int) -> np.ndarray:
    """Area-average an (H, W) float image to (height, width) (float; see the module docstring)."""
    return area_weights(grey.shape[0], height) @ grey @ area_weights(grey.shape[1], width).T


def quantise(grey: np.ndarray, levels: int = DENSITY_LEVELS) -> np.ndarray:
    """Map grey values in [0, 255] to ``levels`` equal bins (``levels`` = 8: integer division by 32)."""
    bin_width = 256 // levels
    return np.clip(np.floor(grey / bin_width), 0, levels - 1).astype(np.uint8)


def _dtype_advice(img: np.ndarray) -> str:
    """How to turn an image of another dtype into uint8 0..255, judged from its values."""
    if img.dtype == np.bool_:
        return "a boolean mask: convert with img.astype(np.uint8) * 255"
    if img.dtype.kind not in "iuf" or img.size == 0:
        return "convert it to uint8 values 0..255"
    lo, hi = img.min(), img.max()
    if img.dtype.kind == "f" and not (np.isfinite(lo) and np.isfinite(hi)):
        return "it holds NaN or infinite values; fix them, then convert to uint8 values 0..255"
    if img.dtype.kind == "f" and 0 <= lo and hi <= 1:
        return "its values lie in [0, 1]: convert with (img * 255).round().astype(np.uint8)"
    if 0 <= lo and hi <= 255:
        if img.dtype.kind == "f":
            return "its values lie in [0, 255]: convert with img.round().astype(np.uint8)"
        return "its values lie in 0..255: convert with img.astype(np.uint8)"
    if img.dtype.kind in "iu" and 0 <= lo and hi <= 65535:
        return "it looks like a 16-bit image (values up to 65535): convert with (img // 257).astype(np.uint8)"
    return f"its values span {lo}..{hi}, outside 0..255: rescale them to 0..255, then convert to uint8"


def check_rgb(rgb: object) -> np.ndarray:
    """Return ``rgb`` as an (H, W, 3) uint8 array, or raise a TypeError/ValueError saying why not.

    An (H, W, 4) RGBA image is accepted: its alpha channel is dropped (a view, no copy).
    """
    if not isinstance(rgb, np.ndarray):
        raise TypeError(f"expected an RGB image as a numpy array of shape (H, W, 3), got {type(rgb).__name__}")
    if rgb.dtype != np.uint8:
        raise TypeError(
            f"expected an RGB image of dtype uint8 (values 0..255), got dtype {rgb.dtype}; {_dtype_advice(rgb)}"
        )
    if rgb.ndim != 3 or rgb.shape[2] not in (3, 4) or rgb.shape[0] < 1 or rgb.shape[1] < 1:
        raise ValueError(
            f"expected an RGB image of shape (H, W, 3) (or RGBA, (H, W, 4)), got shape {rgb.shape}; "
            "for a greyscale or stacked observation pass the environment's RGB render instead"
        )
    return rgb[:, :, :3] if rgb.shape[2] == 4 else rgb


def to_density_frame(
    rgb: np.ndarray,
    height: int = DENSITY_HEIGHT,
    width: int = DENSITY_WIDTH,
    levels: int = DENSITY_LEVELS,
) -> np.ndarray:
    """Convert an (H, W, 3) uint8 RGB frame (Atari 210x160x3, a MiniGrid render, any image; RGBA
    has its alpha dropped) to the density model's input: a (height, width) uint8 array with values
    in 0..levels-1, computed exactly (see the module docstring).

    ``levels`` must divide 256 (8 levels: integer division of the grey value by 32).
    """
    rgb = check_rgb(rgb)
    if isinstance(levels, bool) or not isinstance(levels, (int, np.integer)) or levels < 2 or 256 % levels:
        raise ValueError(f"levels must be a power of two between 2 and 256, got {levels}")
    if height < 1 or width < 1:
        raise ValueError(f"height and width must be positive, got {height}x{width}")
    row_idx, row_w = _area_taps(rgb.shape[0], int(height))
    col_idx, col_w = _area_taps(rgb.shape[1], int(width))
    # grey = S / (1000 H W); level = grey // (256 // levels) = S // divisor
    divisor = 1000 * (256 // int(levels)) * rgb.shape[0] * rgb.shape[1]
    return _density_levels(rgb, row_idx, row_w, col_idx, col_w, np.int64(divisor), np.int64(levels - 1))
