"""The paper's evaluation (its Appendix B, "Methodology"), as pure functions on episode arrays.

- **Training curve**: each point is the mean undiscounted (extrinsic) return of the episodes that
  end in one window [kW, (k+1)W) of W = 1M environment frames, which is 250K agent steps on Atari
  (4 frames per agent step) and 1M agent steps elsewhere; W is a setting for small runs. A partial
  last window is dropped; a window in which no episode ends is missing (NaN), never filled in.
- **Maximum score** (the appendix table): each seed's highest curve point, averaged over seeds.
- **AUC** (Fig. 6 and 8): the mean of a curve over the windows that all compared runs have (a
  common horizon), empty windows left out. The improvement of A over B in % is
  100 (AUC_A - AUC_B) / |AUC_B|; the paper does not say what it does when AUC_B is near 0, so where
  |AUC_B| < 1e-3 max(|AUC_A|, |AUC_B|) the symmetric 200 (AUC_A - AUC_B) / (|AUC_A| + |AUC_B|)
  is used instead (within [-200, 200]) and the result says so (:class:`Improvement`).

Units: ``end_steps`` and windows are agent steps; an episode's end step is the number of agent
steps the run had done when the episode ended (1, 2, ...), so an episode ending at step s ends in
window (s - 1) // W (an episode ending exactly at step W belongs to the first window).
"""
from __future__ import annotations

import math
from typing import Mapping, NamedTuple, Sequence

import numpy as np

__all__ = ["PAPER_WINDOW_FRAMES", "SYMMETRIC_BELOW", "frames_per_step", "paper_window", "Curve", "training_curve",
           "curve_from_log", "mean_curve", "max_score", "common_horizon", "auc", "Improvement", "improvement",
           "format_improvement", "SYMMETRIC_NOTE", "compare"]

#: environment frames per curve point in the paper
PAPER_WINDOW_FRAMES = 1_000_000
#: |AUC_B| below this fraction of max(|AUC_A|, |AUC_B|) switches to the symmetric improvement
SYMMETRIC_BELOW = 1e-3
#: the footnote that goes with a marked (symmetric) improvement in tables and plots
SYMMETRIC_NOTE = "* symmetric: 200 (AUC_A - AUC_B) / (|AUC_A| + |AUC_B|), used where |AUC_B| is near 0"


def frames_per_step(env_id: str) -> int:
    """Environment frames per agent step: 4 on Atari (``ALE/...``, frame skip 4), else 1."""
    return 4 if isinstance(env_id, str) and env_id.startswith("ALE/") else 1


def paper_window(env_id: str) -> int:
    """The paper's curve window (1M frames) in agent steps: 250,000 on Atari, 1,000,000 elsewhere."""
    return PAPER_WINDOW_FRAMES // frames_per_step(env_id)


def _positive_int(name: str, value) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer (agent steps), got {value!r}")
    return int(value)


class Curve(NamedTuple):
    """A training curve of one run.

    ends: (K,) agent step at the end of each window ((k + 1) W). means: (K,) mean return of the
    episodes that ended in the window, NaN where none did. counts: (K,) how many ended there.
    window: W in agent steps.
    """

    ends: np.ndarray
    means: np.ndarray
    counts: np.ndarray
    window: int


def training_curve(end_steps: Sequence[int], returns: Sequence[float], steps_done: int, window: int) -> Curve:
    """The paper's training curve of one run (see the module docstring).

    ``end_steps``: (E,) agent step at which each complete episode ended; ``returns``: (E,) their
    undiscounted returns; ``steps_done``: agent steps the run has done (the curve has
    ``steps_done // window`` points; the partial last window and the episodes in it are dropped).
    Example: ends [10, 20, 60], returns [0, 1, 1], steps_done 120, window 50 -> means [0.5, 1.0].
    """
    window = _positive_int("window", window)
    if isinstance(steps_done, (bool, np.bool_)) or not isinstance(steps_done, (int, np.integer)) or steps_done < 0:
        raise ValueError(f"steps_done must be a non-negative integer (agent steps), got {steps_done!r}")
    ends = np.asarray(end_steps, dtype=np.int64).reshape(-1)
    rets = np.asarray(returns, dtype=np.float64).reshape(-1)
    if ends.shape != rets.shape:
        raise ValueError(f"end_steps and returns differ in length ({ends.size} vs {rets.size}): one return per episode")
    if ends.size and (ends.min() < 1 or ends.max() > steps_done):
        raise ValueError(f"episode end steps must lie in [1, steps_done={steps_done}], got "
                         f"[{ends.min()}, {ends.max()}]")
    k = int(steps_done) // window
    idx = (ends - 1) // window
    keep = idx < k
    counts = np.bincount(idx[keep], minlength=k).astype(np.int64)
    sums = np.bincount(idx[keep], weights=rets[keep], minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return Curve(np.arange(1, k + 1, dtype=np.int64) * window, means, counts, window)


def curve_from_log(log: Mapping[str, np.ndarray], window: int) -> Curve:
    """:func:`training_curve` of a training log (:func:`pcnn_explore.run.read_log`'s columns).

    Complete episodes (``complete == 1``) count by their ``step`` and ``return``; the run's steps
    done are the last row's ``step`` (a run cut mid-episode logs that episode with complete 0).
    """
    step = np.asarray(log["step"], dtype=np.int64)
    done = np.asarray(log["complete"]).astype(bool)
    steps_done = int(step[-1]) if step.size else 0
    return training_curve(step[done], np.asarray(log["return"], dtype=np.float64)[done], steps_done, window)


def _stack(curves: Sequence[np.ndarray], horizon: int | None = None) -> np.ndarray:
    if not len(curves):
        raise ValueError("no curves given: pass one curve per seed")
    arrays = [np.asarray(c.means if isinstance(c, Curve) else c, dtype=np.float64) for c in curves]
    n = min(a.size for a in arrays) if horizon is None else horizon
    return np.vstack([a[:n] for a in arrays]) if n else np.empty((len(arrays), 0))


def mean_curve(curves: Sequence[np.ndarray | Curve]) -> np.ndarray:
    """Mean over seeds per window, over the windows every seed has; a window empty in some seeds is
    the mean of the others, NaN where every seed's is empty."""
    m = _stack(curves)
    out = np.full(m.shape[1], np.nan)
    have = ~np.isnan(m)
    n = have.sum(0)
    np.divide(np.where(have, m, 0.0).sum(0), n, out=out, where=n > 0)
    return out


def max_score(curves: Sequence[np.ndarray | Curve]) -> float:
    """The appendix table's maximum score: each seed's highest curve point, averaged over seeds.

    A seed whose curve has no point (no episode ended in any full window) is left out; NaN if no
    seed has one.
    """
    if not len(curves):
        raise ValueError("no curves given: pass one curve per seed")
    peaks = []
    for c in curves:
        a = np.asarray(c.means if isinstance(c, Curve) else c, dtype=np.float64)
        if a.size and not np.isnan(a).all():
            peaks.append(float(np.nanmax(a)))
    return float(np.mean(peaks)) if peaks else math.nan


def common_horizon(*runs: Sequence[np.ndarray | Curve]) -> int:
    """The number of windows every curve of every compared run has (each run: a list of seed curves)."""
    lengths = [np.asarray(c.means if isinstance(c, Curve) else c).size for run in runs for c in run]
    if not lengths:
        raise ValueError("no curves given")
    return int(min(lengths))


def auc(curves: Sequence[np.ndarray | Curve], horizon: int | None = None) -> float:
    """Area under the curve: the mean of the seeds' mean curve over its first ``horizon`` windows
    (default: all windows every seed has), empty windows left out; NaN if none has a value."""
    if horizon is not None and (isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 0):
        raise ValueError(f"horizon must be a non-negative number of windows, got {horizon!r}")
    m = mean_curve(curves)
    m = m[: len(m) if horizon is None else int(horizon)]
    m = m[~np.isnan(m)]
    return float(m.mean()) if m.size else math.nan


class Improvement(NamedTuple):
    """Improvement of A over B in %; ``symmetric`` marks 200 (A - B) / (|A| + |B|) (|B| near 0)."""

    percent: float
    symmetric: bool


def improvement(auc_a: float, auc_b: float) -> Improvement:
    """100 (A - B) / |B|, or the symmetric 200 (A - B) / (|A| + |B|) where |B| < 1e-3 max(|A|, |B|).

    Equal AUCs give 0 (also both 0); a NaN AUC gives NaN. Examples: (150, 100) -> 50%;
    (-50, -100) -> 50%; (10, 0) -> 200% symmetric; (1e-4, 1) -> -99.99%.
    """
    a, b = float(auc_a), float(auc_b)
    if math.isnan(a) or math.isnan(b):
        return Improvement(math.nan, False)
    if a == b:
        return Improvement(0.0, False)
    if abs(b) < SYMMETRIC_BELOW * max(abs(a), abs(b)):
        return Improvement(200.0 * (a - b) / (abs(a) + abs(b)), True)
    return Improvement(100.0 * (a - b) / abs(b), False)


def format_improvement(imp: Improvement, digits: int = 0) -> str:
    """``+50%``, ``-12%``, ``+200%*`` (symmetric, see :data:`SYMMETRIC_NOTE`), ``n/a`` for NaN."""
    if math.isnan(imp.percent):
        return "n/a"
    return f"{imp.percent:+.{digits}f}%" + ("*" if imp.symmetric else "")


def compare(lines: Mapping[str, Sequence[np.ndarray | Curve]], baseline: str | None = None) -> dict[str, dict]:
    """The evaluation of the lines of one env (each a list of seed curves), over their common horizon.

    Returns {line: {"seeds", "max_score" (mean of the seeds' peaks), "best_peak" (highest seed's
    peak), "auc", "horizon" (windows), "improvement" (% over ``baseline``, None without one),
    "symmetric"}}. ``baseline`` must be one of ``lines`` when given.
    """
    if not lines:
        raise ValueError("no lines to compare")
    if baseline is not None and baseline not in lines:
        raise ValueError(f"baseline {baseline!r} is not among the lines {', '.join(lines)}")
    h = common_horizon(*lines.values())
    out: dict[str, dict] = {}
    for name, curves in lines.items():
        peaks = [float(np.nanmax(c)) for c in (np.asarray(x.means if isinstance(x, Curve) else x, float) for x in curves)
                 if c.size and not np.isnan(c).all()]
        out[name] = {"seeds": len(curves), "max_score": max_score(curves), "best_peak": max(peaks) if peaks else math.nan,
                     "auc": auc(curves, h), "horizon": h, "improvement": None, "symmetric": False}
    if baseline is not None:
        for name, d in out.items():
            imp = improvement(d["auc"], out[baseline]["auc"])
            d["improvement"], d["symmetric"] = imp.percent, imp.symmetric
    return out
