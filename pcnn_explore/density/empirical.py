"""The tabular (empirical) density over whole frames: the kit's teaching baseline.

rho_n(x) = N_n(x) / n, with N_n(x) the number of times frame x occurred among the first n
frames. Its pseudo-count equals the real count exactly: with rho = N/n and rho' = (N+1)/(n+1),
rho (1 - rho') / (rho' - rho) = N.

Rule for frames never seen: rho_n(x) = 0 (log_prob = -inf) once n >= 1, which gives
pseudo-count 0, the true count. Before the first update (n = 0) the model is uniform over all
levels^(H*W) frames, so it is a normalised distribution at every n.
"""
from __future__ import annotations

import math

import numpy as np

from pcnn_explore.density.base import check_frames, check_sample_args, check_shape_args


class EmpiricalDensity:
    """rho_n(x) = N_n(x) / n over whole frames (exact counts, keyed by the frame's bytes)."""

    def __init__(self, height: int = 42, width: int = 42, levels: int = 8):
        check_shape_args(height, width, levels)
        self.height, self.width, self.levels = int(height), int(width), int(levels)
        self._counts: dict[bytes, int] = {}
        self._frames: dict[bytes, np.ndarray] = {}
        self._n_updates = 0

    @property
    def n_updates(self) -> int:
        return self._n_updates

    def count(self, frame: np.ndarray) -> int:
        """The real visit count N_n(x)."""
        frame = check_frames(frame, self.height, self.width, self.levels, single=True)
        return self._counts.get(frame.tobytes(), 0)

    def _log_prob_one(self, key: bytes, n: int, extra: int = 0) -> float:
        if n == 0:
            return -self.height * self.width * math.log(self.levels)
        c = self._counts.get(key, 0) + extra
        return math.log(c / n) if c else -math.inf

    def log_prob(self, frames: np.ndarray) -> np.ndarray:
        """log rho_n(x) in nats, float64 (B,); -inf for frames never seen (n >= 1)."""
        frames = check_frames(frames, self.height, self.width, self.levels)
        return np.array([self._log_prob_one(f.tobytes(), self._n_updates) for f in frames], np.float64)

    def pixel_log_prob(self, frames: np.ndarray) -> np.ndarray:
        """A whole-frame model has no per-pixel factorisation; raises NotImplementedError."""
        raise NotImplementedError("EmpiricalDensity models whole frames; it has no per-pixel log-probabilities")

    def update(self, frame: np.ndarray) -> tuple[float, float]:
        """Count ``frame`` once; return (log rho_n(x), log rho_{n+1}(x)) in nats."""
        frame = check_frames(frame, self.height, self.width, self.levels, single=True)
        key = frame.tobytes()
        log_rho = self._log_prob_one(key, self._n_updates)
        self._counts[key] = self._counts.get(key, 0) + 1
        self._frames.setdefault(key, frame.copy())
        self._n_updates += 1
        return log_rho, self._log_prob_one(key, self._n_updates)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Frames drawn in proportion to their counts (uniform random frames before any update)."""
        check_sample_args(n, rng)
        if self._n_updates == 0:
            return rng.integers(0, self.levels, (n, self.height, self.width)).astype(np.uint8)
        keys = list(self._counts)
        p = np.array([self._counts[k] for k in keys], np.float64) / self._n_updates
        idx = rng.choice(len(keys), size=n, p=p)
        return np.stack([self._frames[keys[i]] for i in idx]) if n else np.zeros((0, self.height, self.width), np.uint8)

    def state_dict(self) -> dict:
        keys = list(self._counts)
        frames = np.stack([self._frames[k] for k in keys]) if keys else np.zeros((0, self.height, self.width), np.uint8)
        return {
            "kind": "EmpiricalDensity",
            "shape": np.array([self.height, self.width, self.levels], np.int64),
            "frames": frames,
            "counts": np.array([self._counts[k] for k in keys], np.int64),
            "n_updates": self._n_updates,
        }

    def load_state_dict(self, state: dict) -> None:
        if state.get("kind") != "EmpiricalDensity":
            raise ValueError(f"state is for {state.get('kind')!r}, not EmpiricalDensity")
        frames = check_frames(np.asarray(state["frames"]), self.height, self.width, self.levels)
        counts = np.asarray(state["counts"], np.int64)
        if len(counts) != len(frames) or (counts < 1).any() or counts.sum() != int(state["n_updates"]):
            raise ValueError("state['counts'] must hold one positive count per frame, summing to n_updates")
        self._counts = {f.tobytes(): int(c) for f, c in zip(frames, counts)}
        self._frames = {f.tobytes(): f.copy() for f in frames}
        self._n_updates = int(state["n_updates"])
