"""The density model's view of a frame: 42x42 pixels, 8 grey levels (3 bits).

Pipeline (the CTS paper's and this paper's, Fig. 1): RGB frame -> greyscale luma
(0.299 R + 0.587 G + 0.114 B) -> area resize to 42x42 (each output pixel is the exact mean of the
input area it covers, fractional pixels weighted by their overlap) -> integer division by 32
-> levels 0..7, uint8. The mean of values in [0, 255] is at most 255 and 255 // 32 = 7, so the
quantiser cannot produce 8; the code also clips, which guards float round-off.
"""
from __future__ import annotations

from functools import lru_cache

import numba
import numpy as np

DENSITY_HEIGHT = 42
DENSITY_WIDTH = 42
DENSITY_LEVELS = 8

_LUMA = np.array([0.299, 0.587, 0.114])


@lru_cache(maxsize=32)
def area_weights(n_in: int, n_out: int) -> np.ndarray:
    """(n_out, n_in) matrix W with ``out = W @ in`` the area (box) average along one axis.

    Row i averages the input interval [i * n_in / n_out, (i + 1) * n_in / n_out); every row sums
    to 1. Read-only, cached per shape.
    """
    edges = np.arange(n_out + 1) * (n_in / n_out)
    lo, hi = edges[:-1, None], edges[1:, None]
    j = np.arange(n_in)[None, :]
    overlap = np.clip(np.minimum(hi, j + 1) - np.maximum(lo, j), 0.0, None)
    w = overlap / (n_in / n_out)
    w.flags.writeable = False
    return w


@lru_cache(maxsize=32)
def _area_taps(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """The non-zero entries of :func:`area_weights` as (indices, weights), each (n_out, K).

    Each output covers at most ceil(n_in / n_out) + 1 inputs. The compiled resize below loops over
    these taps: no BLAS call (whose thread start-up costs far more than the arithmetic on images
    this small) and no temporary arrays.
    """
    w = area_weights(n_in, n_out)
    k = int((w > 0).sum(axis=1).max())
    idx = np.zeros((n_out, k), np.intp)
    wts = np.zeros((n_out, k))
    for i, row in enumerate(w):
        nz = np.flatnonzero(row)
        idx[i, : len(nz)], wts[i, : len(nz)] = nz, row[nz]
    return idx, wts


@numba.njit(cache=True)
def _grey_area_resize(rgb, row_idx, row_w, col_idx, col_w, luma):
    """Luma of the area average: out[o, p] = sum_k sum_l row_w[o,k] col_w[p,l] luma . rgb[r, c]."""
    n_rows, n_cols = row_idx.shape[0], col_idx.shape[0]
    out = np.zeros((n_rows, n_cols))
    for o in range(n_rows):
        for k in range(row_idx.shape[1]):
            wr = row_w[o, k]
            if wr == 0.0:
                continue
            r = row_idx[o, k]
            for p in range(n_cols):
                acc = 0.0
                for m in range(col_idx.shape[1]):
                    c = col_idx[p, m]
                    acc += col_w[p, m] * (luma[0] * rgb[r, c, 0] + luma[1] * rgb[r, c, 1] + luma[2] * rgb[r, c, 2])
                out[o, p] += wr * acc
    return out


def greyscale(rgb: np.ndarray) -> np.ndarray:
    """Luma of an (H, W, 3) uint8 image as float64 in [0, 255]."""
    return rgb.astype(np.float64) @ _LUMA


def area_resize(grey: np.ndarray, height: int, width: int) -> np.ndarray:
    """Area-average an (H, W) float image to (height, width)."""
    return area_weights(grey.shape[0], height) @ grey @ area_weights(grey.shape[1], width).T


def quantise(grey: np.ndarray, levels: int = DENSITY_LEVELS) -> np.ndarray:
    """Map grey values in [0, 255] to ``levels`` equal bins (``levels`` = 8: integer division by 32)."""
    bin_width = 256 // levels
    return np.clip(np.floor(grey / bin_width), 0, levels - 1).astype(np.uint8)


def check_rgb(rgb: object) -> np.ndarray:
    """Return ``rgb`` as an (H, W, 3) uint8 array, or raise a TypeError/ValueError saying why not."""
    if not isinstance(rgb, np.ndarray):
        raise TypeError(f"expected an RGB image as a numpy array of shape (H, W, 3), got {type(rgb).__name__}")
    if rgb.dtype != np.uint8:
        raise TypeError(
            f"expected an RGB image of dtype uint8 (values 0..255), got dtype {rgb.dtype}; "
            "convert with (img * 255).round().astype(np.uint8) if it is in [0, 1]"
        )
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.shape[0] < 1 or rgb.shape[1] < 1:
        raise ValueError(
            f"expected an RGB image of shape (H, W, 3), got shape {rgb.shape}; "
            "for a greyscale or stacked observation pass the environment's RGB render instead"
        )
    return rgb


def to_density_frame(
    rgb: np.ndarray,
    height: int = DENSITY_HEIGHT,
    width: int = DENSITY_WIDTH,
    levels: int = DENSITY_LEVELS,
) -> np.ndarray:
    """Convert an (H, W, 3) uint8 RGB frame (Atari 210x160x3, a MiniGrid render, any image) to the
    density model's input: a (height, width) uint8 array with values in 0..levels-1.

    ``levels`` must divide 256 (8 levels: integer division of the grey value by 32).
    """
    rgb = check_rgb(rgb)
    if levels < 2 or 256 % levels:
        raise ValueError(f"levels must be a power of two between 2 and 256, got {levels}")
    if height < 1 or width < 1:
        raise ValueError(f"height and width must be positive, got {height}x{width}")
    # One compiled pass: luma and the area average are both linear, so they can be fused.
    row_idx, row_w = _area_taps(rgb.shape[0], height)
    col_idx, col_w = _area_taps(rgb.shape[1], width)
    return quantise(_grey_area_resize(rgb, row_idx, row_w, col_idx, col_w, _LUMA), levels)
