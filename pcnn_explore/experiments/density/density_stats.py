"""Statistics of density-model traces (loss, prediction gain), as pure functions.

Units: a *loss* is -log rho(x) in nats per frame; a *PG* (prediction gain) is
log rho'_n(x) - log rho_n(x) in nats. Indices count frames of a stream (agent steps).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from pcnn_explore.envs.frames import DENSITY_HEIGHT, DENSITY_LEVELS, DENSITY_WIDTH

__all__ = ["DIVERGED_LOSS", "as_trace", "pg_variability", "peak_to_median", "pg_summary", "trailing_median",
           "top_spikes", "near_episode_start", "spike_alignment", "SpikeAlignment",
           "moving_average", "tail_mean", "peak_quantile_ratio", "nearest_frame_distance", "pg_decay_exponent",
           "capped_log_spread"]

#: the cap on a final loss, a uniform model's, 42 x 42 ln 8 = 3668 nats per frame. A run at or above
#: it (a NaN or a finite blow-up such as 9.2e7 nats) has learned nothing a uniform guess does not give;
#: how far above it lies says nothing about the schedule, so every such run counts as this one value (03)
DIVERGED_LOSS = DENSITY_HEIGHT * DENSITY_WIDTH * math.log(DENSITY_LEVELS)


def as_trace(x: object, name: str = "trace", min_length: int = 1) -> np.ndarray:
    """``x`` as a 1-D float64 array of finite values with at least ``min_length`` entries."""
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence (one value per frame), got shape {a.shape}")
    if len(a) < min_length:
        raise ValueError(f"{name} needs at least {min_length} values, got {len(a)}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or infinite values (at index {int(np.flatnonzero(~np.isfinite(a))[0])}); "
                         "a diverged model has no meaningful statistics")
    return a


def pg_variability(pg: object) -> float:
    """Step-to-step variability: median |PG_{t+1} - PG_t| divided by median PG_t.

    Scale-free, so models whose PGs differ in size compare fairly; smaller is smoother.
    NaN when the median PG is not positive (the ratio has no meaning then).
    """
    pg = as_trace(pg, "pg", min_length=2)
    median = float(np.median(pg))
    if median <= 0:
        return float("nan")
    return float(np.median(np.abs(np.diff(pg)))) / median


def peak_to_median(pg: object) -> float:
    """max PG / median PG: how far the sharpest peak stands out. NaN when the median is not positive."""
    pg = as_trace(pg, "pg")
    median = float(np.median(pg))
    return float(pg.max()) / median if median > 0 else float("nan")


def peak_quantile_ratio(pg: object, q: float = 0.99) -> float:
    """The ``q`` quantile of PG over its median: how far the highest steps stand out, robust to a
    single outlier (the 0.99 quantile of 5K steps sits among the 50 highest). NaN when the median is
    not positive."""
    pg = as_trace(pg, "pg")
    if not 0.5 < q < 1.0:
        raise ValueError(f"q must be a high quantile in (0.5, 1), got {q}")
    median = float(np.median(pg))
    return float(np.quantile(pg, q)) / median if median > 0 else float("nan")


def pg_summary(pg: object, q: float = 0.99) -> dict[str, float]:
    """mean, median, variability, peak_to_median, peak_quantile (:func:`peak_quantile_ratio` at ``q``)
    and negative_fraction (share of PG < 0) of a PG trace."""
    pg = as_trace(pg, "pg", min_length=2)
    return {"mean": float(pg.mean()), "median": float(np.median(pg)), "variability": pg_variability(pg),
            "peak_to_median": peak_to_median(pg), "peak_quantile": peak_quantile_ratio(pg, q),
            "negative_fraction": float((pg < 0).mean())}


def trailing_median(x: object, window: int) -> np.ndarray:
    """out[t] = median of x[t-window : t] (the ``window`` values *before* t); NaN for t < window."""
    x = as_trace(x, "x")
    if not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be a positive int, got {window!r}")
    out = np.full(len(x), np.nan)
    if len(x) > window:
        views = np.lib.stride_tricks.sliding_window_view(x[:-1], window)
        out[window:] = np.median(views, axis=1)
    return out


def top_spikes(height: object, k: int, min_separation: int) -> np.ndarray:
    """Indices of the ``k`` highest entries of ``height`` (NaN ignored), greedily, each at least
    ``min_separation`` indices from every one already chosen (so one spike counts once).
    Ordered from highest; fewer than ``k`` when too few entries qualify."""
    h = np.asarray(height, dtype=np.float64)
    if h.ndim != 1:
        raise ValueError(f"height must be 1-D, got shape {h.shape}")
    if not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"k must be a non-negative int, got {k!r}")
    if not isinstance(min_separation, (int, np.integer)) or min_separation < 0:
        raise ValueError(f"min_separation must be a non-negative int, got {min_separation!r}")
    chosen: list[int] = []
    valid = np.flatnonzero(~np.isnan(h))
    for i in valid[np.argsort(-h[valid], kind="stable")]:
        if len(chosen) == k:
            break
        if all(abs(int(i) - c) >= min_separation for c in chosen):
            chosen.append(int(i))
    return np.array(chosen, dtype=np.int64)


def near_episode_start(indices: object, episode_starts: object, window: int) -> np.ndarray:
    """For each index t: is there an episode start s with s <= t <= s + window? (bool array)."""
    starts = np.flatnonzero(np.asarray(episode_starts, dtype=bool))
    idx = np.asarray(indices, dtype=np.int64)
    if window < 0:
        raise ValueError(f"window must be >= 0 frames, got {window}")
    if len(starts) == 0:
        return np.zeros(idx.shape, bool)
    pos = np.searchsorted(starts, idx, side="right") - 1  # last start at or before t
    return (pos >= 0) & (idx - starts[np.maximum(pos, 0)] <= window)


@dataclasses.dataclass(frozen=True)
class SpikeAlignment:
    """How many of the largest loss spikes fall within ``window`` frames after an episode start.

    spikes: frame indices of the k largest spikes (highest first); near_start: bool per spike;
    fraction: share of spikes near a start; chance: the share of eligible frames that lie near a
    start (what randomly placed spikes would score); height: loss minus its trailing median.
    """

    spikes: np.ndarray
    near_start: np.ndarray
    fraction: float
    chance: float
    height: np.ndarray


def spike_alignment(loss: object, episode_starts: object, k: int | None = None, window: int = 5,
                    baseline: int = 100, min_separation: int = 50) -> SpikeAlignment:
    """Locate loss spikes and test whether they line up with episode starts (Fig. 2 middle).

    A spike's height is ``loss[t] - median(loss[t-baseline:t])`` (the loss falls as the model
    learns, so raw loss would favour early frames); the first ``baseline`` frames are not
    eligible. ``k`` defaults to the number of episode starts among the eligible frames, so a
    perfect alignment scores 1. Returns NaN fraction when there are no spikes to rank.
    """
    loss = as_trace(loss, "loss")
    starts = np.asarray(episode_starts, dtype=bool)
    if starts.shape != loss.shape:
        raise ValueError(f"episode_starts must have one flag per loss value: {starts.shape} vs {loss.shape}")
    height = loss - trailing_median(loss, baseline)
    if k is None:
        k = int(starts[baseline:].sum())
    spikes = top_spikes(height, k, min_separation)
    near = near_episode_start(spikes, starts, window)
    eligible = np.arange(baseline, len(loss))
    chance = float(near_episode_start(eligible, starts, window).mean()) if len(eligible) else float("nan")
    fraction = float(near.mean()) if len(spikes) else float("nan")
    return SpikeAlignment(spikes=spikes, near_start=near, fraction=fraction, chance=chance, height=height)


def moving_average(x: object, window: int) -> np.ndarray:
    """Trailing mean over up to ``window`` values: out[t] = mean(x[max(0, t-window+1) : t+1])."""
    x = np.asarray(x, dtype=np.float64)
    if not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be a positive int, got {window!r}")
    c = np.concatenate([[0.0], np.cumsum(x)])
    t = np.arange(1, len(x) + 1)
    lo = np.maximum(0, t - window)
    return (c[t] - c[lo]) / (t - lo)


def tail_mean(x: object, last: int) -> float:
    """Mean of the last ``last`` values (all of them if there are fewer)."""
    x = np.asarray(x, dtype=np.float64)
    if not isinstance(last, (int, np.integer)) or last < 1:
        raise ValueError(f"last must be a positive int, got {last!r}")
    if len(x) == 0:
        raise ValueError("tail_mean of an empty trace")
    return float(x[-last:].mean())


def nearest_frame_distance(samples: object, frames: object, chunk: int = 2048) -> np.ndarray:
    """(S,) for each sample of ``samples`` (S, H, W), the share of its pixels that differ from the
    nearest frame of ``frames`` (N, H, W), both in grey levels: 0 when the sample is a real frame,
    about 1 - 1/levels for noise. A stated measure of sample quality (lower: nearer real frames)."""
    s, f = np.asarray(samples), np.asarray(frames)
    if s.ndim != 3 or f.ndim != 3 or s.shape[1:] != f.shape[1:] or not len(s) or not len(f):
        raise ValueError(f"samples (S, H, W) and frames (N, H, W) must share H, W and be non-empty, "
                         f"got {s.shape} and {f.shape}")
    flat_s, flat_f = s.reshape(len(s), -1), f.reshape(len(f), -1)
    best = np.full(len(s), flat_s.shape[1], dtype=np.int64)
    for i in range(0, len(flat_f), chunk):
        block = flat_f[i:i + chunk]
        diff = (flat_s[:, None, :] != block[None, :, :]).sum(axis=2)
        best = np.minimum(best, diff.min(axis=1))
    return best / flat_s.shape[1]


def pg_decay_exponent(real_count: object, pg: object) -> float:
    """The exponent b of PG ~ k^b over the visits of one repeated frame: the least-squares slope of
    ln PG against ln k over the visits with real count k >= 1 (the first sight, k = 0, has no count to
    decay from) and PG > 0 (a PixelCNN is not learning-positive; ln needs PG > 0, the paper thresholds
    the PG at 0). A count's PG, ln(1 + 1/k), gives about -1 (-0.95 over k = 1..59); a PG that levels
    off, 0. NaN with fewer than 3 such visits."""
    k = np.asarray(real_count, dtype=np.float64)
    g = np.asarray(pg, dtype=np.float64)
    if k.ndim != 1 or k.shape != g.shape:
        raise ValueError(f"real_count and pg must be 1-D with one value per visit, got shapes {k.shape} and {g.shape}")
    ok = (k >= 1) & np.isfinite(g) & (g > 0)
    if ok.sum() < 3 or np.unique(k[ok]).size < 2:
        return float("nan")
    return float(np.polyfit(np.log(k[ok]), np.log(g[ok]), 1)[0])


def capped_log_spread(losses: object, cap: float) -> float:
    """ln(worst / best) of final losses (nats per frame, > 0) with every loss above ``cap`` or not
    finite counted as ``cap``: how many times the worst run's loss is the best's, on a scale where
    a NaN and a finite blow-up are the same failed run and at most ln(cap / best)."""
    x = np.asarray(losses, dtype=np.float64)
    if x.ndim != 1 or not len(x):
        raise ValueError(f"losses must be a non-empty 1-D sequence, got shape {x.shape}")
    if not (math.isfinite(cap) and cap > 0):
        raise ValueError(f"cap must be a positive number of nats, got {cap}")
    x = np.where(np.isfinite(x), np.minimum(x, cap), cap)
    if (x <= 0).any():
        raise ValueError(f"final losses must be positive (nats per frame), got {x.min()}")
    return float(math.log(x.max() / x.min()))
