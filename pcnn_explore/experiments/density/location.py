"""Which stream, and where the loss goes: the measurements behind the density notebooks' verdicts.

Random-policy streams of Montezuma's Revenge stay in one nearly static room; the paper's models
saw learning agents' frames, which move through rooms. The density experiments therefore run on
an exploring stream (``policy="explorer"``, :mod:`pcnn_explore.streams.policies`) and keep the
random-policy stream as a second row. Two effects explain why the paper's PixelCNN can look
worse than CTS here, and both are measured:

- *location dependence*: CTS has one model per pixel position, so a pixel that never changes
  costs it almost nothing; the paper's PixelCNN is translation-invariant with a 24-pixel causal
  field and pays for every static background pixel. :func:`static_positions` finds the pixel
  positions holding one value in more than ``threshold`` of the training frames, and
  :func:`location_stats` gives the share of the held-out loss spent there.
- *recency*: trained online, batch 1, a model predicts the next frame (near-identical to the one
  it just trained on) better than frames from elsewhere in the game. ``recency_gap_nats`` is the
  held-out loss minus the incoming-frame loss of the last quarter of training.

Units: losses in nats per frame; shares and fractions in [0, 1].
"""
from __future__ import annotations

import numpy as np

from pcnn_explore.experiments.density.density_stats import tail_mean

__all__ = ["STREAM_POLICIES", "stream_policies_for", "check_policies", "static_positions", "location_stats", "explain",
           "policy_label"]

#: the streams the density notebooks compare, main first
STREAM_POLICIES = ("explorer", "random")


def check_policies(policies) -> None:
    """Raise ValueError unless ``policies`` is a non-empty tuple of known stream policies."""
    if not isinstance(policies, (tuple, list)) or not policies or any(
            not isinstance(p, str) or (p not in ("explorer", "random") and not p.startswith("checkpoint:"))
            for p in policies):
        raise ValueError(f"policies must be a non-empty tuple of 'explorer', 'random' or 'checkpoint:PATH', "
                         f"got {policies!r}")


def stream_policies_for(game: str, policies) -> tuple[str, ...]:
    """``policies`` without 'explorer' where ``game`` has no explorer route (at least 'random')."""
    from pcnn_explore.streams.policies import EXPLORER_GAMES

    kept = tuple(p for p in policies if p != "explorer" or game in EXPLORER_GAMES)
    return kept or ("random",)


def policy_label(policy: str) -> str:
    """How a stream is named in tables and figures."""
    return {"explorer": "exploring stream", "random": "random-policy stream"}.get(policy, policy)


def static_positions(frames: np.ndarray, threshold: float = 0.99) -> np.ndarray:
    """(H, W) bool: pixel positions whose most frequent value fills more than ``threshold`` of
    ``frames`` ((N, H, W) uint8 levels)."""
    frames = np.asarray(frames)
    if frames.ndim != 3 or len(frames) == 0:
        raise ValueError(f"frames must be (N, H, W) with N >= 1, got shape {frames.shape}")
    n, h, w = frames.shape
    flat = frames.reshape(n, h * w).astype(np.int64)
    levels = int(flat.max()) + 1
    counts = np.zeros((levels, h * w), np.int64)
    for v in range(levels):
        counts[v] = (flat == v).sum(axis=0)
    return (counts.max(axis=0) / n > threshold).reshape(h, w)


def location_stats(model, trace, static: np.ndarray, eval_frames: np.ndarray, heldout_loss: float) -> dict[str, float]:
    """static_loss_share: share of the held-out loss (per-pixel -log rho summed over the frames)
    on the ``static`` positions; static_loss_nats: that loss per frame; incoming_loss_late_nats:
    incoming-frame loss averaged over the last quarter of ``trace``; recency_gap_nats: held-out
    loss minus that."""
    pixel = -np.concatenate([np.asarray(model.pixel_log_prob(eval_frames[i:i + 64]), dtype=np.float64)
                             for i in range(0, len(eval_frames), 64)])  # (B, H, W) nats
    total = float(pixel.sum())
    on_static = float(pixel[:, static].sum())
    late = tail_mean(trace.loss, max(1, len(trace.loss) // 4))
    return {"static_loss_share": on_static / total if total > 0 else float("nan"),
            "static_loss_nats": on_static / len(eval_frames),
            "incoming_loss_late_nats": late, "recency_gap_nats": float(heldout_loss) - late}


def explain(location: dict, static_fraction: dict) -> str:
    """The measured location-dependence and recency effects in words, one paragraph per stream.

    ``location[stream][model]``: :func:`location_stats`; ``static_fraction[stream]``: share of
    static positions. Streams are policy names or table rows (``Montezuma_random``)."""
    from pcnn_explore.density import label

    lines = []
    for stream, models in location.items():
        name = policy_label(stream) if stream in STREAM_POLICIES else stream
        share = ", ".join(f"{label(m)} {100 * v['static_loss_share']:.0f}% ({v['static_loss_nats']:.1f} nats)"
                          for m, v in models.items())
        gap = ", ".join(f"{label(m)} {v['recency_gap_nats']:+.1f}" for m, v in models.items())
        lines.append(f"{name}: {100 * static_fraction[stream]:.0f}% of pixel positions are static (one value in "
                     f"more than 99% of the training frames). Share of the held-out loss spent on them: {share}. "
                     f"Recency gap (held-out loss minus the incoming-frame loss of the last quarter, nats per "
                     f"frame): {gap}.")
    return "\n\n".join(lines)
