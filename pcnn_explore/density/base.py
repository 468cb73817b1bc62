"""The density-model protocol and the input checks every model shares.

A density model is built for a fixed image shape ``(height, width)`` with ``levels`` symbols
per pixel (the paper: 42 x 42, 8 levels) and follows this protocol:

- ``log_prob(frames) -> float64 (B,)``: log rho_n(x) in nats for each frame; no training.
- ``pixel_log_prob(frames) -> float64 (B, H, W)``: the per-pixel terms whose sum is log_prob.
- ``update(frame) -> (log_rho, log_rho_prime)``: train once on one frame; return log rho_n(x)
  (before any change caused by x) and log rho'_n(x) (the same frame after the full update).
- ``sample(n, rng) -> uint8 (n, H, W)``; ``state_dict()`` / ``load_state_dict(state)``.
- ``n_updates``: how many frames the model has been trained on.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class DensityModel(Protocol):
    height: int
    width: int
    levels: int

    @property
    def n_updates(self) -> int: ...

    def log_prob(self, frames: np.ndarray) -> np.ndarray: ...

    def pixel_log_prob(self, frames: np.ndarray) -> np.ndarray: ...

    def update(self, frame: np.ndarray) -> tuple[float, float]: ...

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray: ...

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> None: ...


def check_shape_args(height: int, width: int, levels: int) -> None:
    """Validate a model's constructor arguments."""
    for name, value in (("height", height), ("width", width), ("levels", levels)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if height < 1 or width < 1:
        raise ValueError(f"height and width must be at least 1, got {height}x{width}")
    if not 2 <= levels <= 256:
        raise ValueError(f"levels must be between 2 and 256, got {levels}")


def check_frames(frames: object, height: int, width: int, levels: int, *, single: bool = False) -> np.ndarray:
    """Return ``frames`` as a C-contiguous uint8 array of shape (B, H, W) (or (H, W) if ``single``).

    Accepts any integer dtype with values in ``0..levels-1``. A (H, W) frame is accepted where a
    batch is expected and returned as a batch of one. Raises TypeError for non-arrays and
    non-integer dtypes (NaN is named explicitly), ValueError for wrong shapes or values out of
    range, always saying how to fix the input.
    """
    if not isinstance(frames, np.ndarray):
        raise TypeError(
            f"frames must be a numpy array, got {type(frames).__name__}; "
            "build density frames with pcnn_explore.envs.frames.to_density_frame"
        )
    if frames.dtype.kind == "f":
        if np.isnan(frames).any():
            raise ValueError(
                "frames contain NaN; density frames are integer levels 0..levels-1 "
                "(use pcnn_explore.envs.frames.to_density_frame)"
            )
        raise TypeError(
            f"frames must have an integer dtype (uint8 levels 0..{levels - 1}), got {frames.dtype}; "
            "quantise with pcnn_explore.envs.frames.to_density_frame"
        )
    if frames.dtype.kind not in "iub" or frames.dtype.kind == "b":
        raise TypeError(f"frames must have an integer dtype (uint8 levels 0..{levels - 1}), got {frames.dtype}")
    expected = (height, width) if single else f"(B, {height}, {width}) or ({height}, {width})"
    if single:
        if frames.shape != (height, width):
            raise ValueError(f"expected one frame of shape {expected}, got shape {frames.shape}")
    else:
        if frames.shape == (height, width):
            frames = frames[None]
        if frames.ndim != 3 or frames.shape[1:] != (height, width):
            raise ValueError(f"expected frames of shape {expected}, got shape {frames.shape}")
    if frames.size and (frames.min() < 0 or frames.max() >= levels):
        raise ValueError(
            f"frame values must lie in 0..{levels - 1} for a model with {levels} levels, "
            f"got values in {int(frames.min())}..{int(frames.max())}"
        )
    return np.ascontiguousarray(frames, dtype=np.uint8)


def check_sample_args(n: int, rng: object) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")


def all_images(height: int, width: int, levels: int) -> np.ndarray:
    """Every image of a tiny shape, as uint8 (levels ** (height * width), height, width).

    For normalisation checks: the probabilities a model gives these must sum to 1.
    """
    n_pixels = height * width
    if levels**n_pixels > 2**20:
        raise ValueError(f"{levels}^{n_pixels} images is too many to enumerate; use a tinier shape")
    idx = np.arange(levels**n_pixels)
    digits = (idx[:, None] // levels ** np.arange(n_pixels - 1, -1, -1)[None, :]) % levels
    return digits.reshape(-1, height, width).astype(np.uint8)
