"""Fig. 2 (middle): PixelCNN loss over the first 6K training frames of Pong, episode ends marked.

Paper: the loss spikes coincide with episode ends/starts: "the density model's 'surprise' upon
observing the distinctive green frame that sometimes occurs at the episode start".

Here: a fresh PixelCNN is trained online on a uniform-random-policy Pong stream; the loss of
each frame is -log rho_n(x_n) in nats, measured just before training on it. Spikes are ranked by
their height above the trailing median of the previous ``baseline`` frames, at least
``min_separation`` frames apart; we count how many of the k largest (k = the number of episode
starts after the first ``baseline`` frames) lie within ``window`` frames after an episode start,
and compare with chance (the share of frames that lie that close to a start). The claim is decided
over ``n_seeds`` independent runs (a fresh stream and PixelCNN each): the near-start share minus
chance's share, paired over seeds, must exceed 0 (:func:`decisions`, the claim of
:mod:`pcnn_explore.study.preregistered.episode_start_spikes`).
"""
from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

import numpy as np

from pcnn_explore.density import PixelCNNDensity
from pcnn_explore.experiments.density.density_stats import SpikeAlignment, spike_alignment
from pcnn_explore.experiments.density.density_training import (
    DensityExperimentSettings, TrainTrace, check_positive_int, run_seeds, train_stream)
from pcnn_explore.streams import check_game, load_stream
from pcnn_explore.study import Decision, decide
from pcnn_explore.study.preregistered import density as prereg
from pcnn_explore.study.preregistered import episode_start_spikes as plan

__all__ = ["EpisodeSpikesSettings", "EpisodeSpikesResults", "run", "run_all", "PAPER_CLAIM", "PAPER", "summary",
           "decisions"]

PAPER_CLAIM = "loss spikes coincide with episode starts over the first 6K frames of Pong (Fig. 2 middle)"


@dataclasses.dataclass
class EpisodeSpikesSettings(DensityExperimentSettings):
    """game; n_frames: frames trained on (paper: 6K); lr: PixelCNN learning rate; window: frames
    after an episode start that count as "at the start"; baseline: frames of the trailing median a
    spike is measured against (and the first frames excluded); min_separation: frames between
    two counted spikes."""

    game: str = "Pong"
    n_frames: int = 6_000
    lr: float = 1e-3
    window: int = 5
    baseline: int = 100
    min_separation: int = 50

    PRESETS: ClassVar[dict] = {
        "smoke": dict(n_frames=150, baseline=20, min_separation=10, n_seeds=2, workers=1),
        "study": dict(n_frames=6_000, **prereg.preset_fields("02")),
        "paper": dict(n_frames=6_000, **prereg.preset_fields("02")),
    }

    def check(self) -> None:
        super().check()
        check_game(self.game)
        for name in ("n_frames", "baseline", "min_separation"):
            check_positive_int(name, getattr(self, name))
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < 0:
            raise ValueError(f"window must be a non-negative int (frames), got {self.window!r}")
        if self.baseline >= self.n_frames:
            raise ValueError(f"baseline ({self.baseline}) must be smaller than n_frames ({self.n_frames})")
        if not (isinstance(self.lr, (int, float)) and self.lr > 0):
            raise ValueError(f"lr must be a positive number, got {self.lr!r}")


@dataclasses.dataclass
class EpisodeSpikesResults:
    """trace: the online training trace; episode_starts: (N,) bool; alignment: the spike statistics."""

    settings: EpisodeSpikesSettings
    trace: TrainTrace
    episode_starts: np.ndarray
    alignment: SpikeAlignment

    @property
    def episode_ends(self) -> np.ndarray:
        """Indices of the last frame of each finished episode (the frame before each later start)."""
        return np.flatnonzero(self.episode_starts)[1:] - 1


def run(settings: EpisodeSpikesSettings) -> EpisodeSpikesResults:
    settings.check()
    stream = load_stream(settings.game, settings.n_frames, seed=settings.seed, **settings.stream_options())
    model = PixelCNNDensity(lr=settings.lr, **settings.model_kwargs("pixelcnn"))
    trace = train_stream(model, stream.frames, progress=settings.progress, desc=settings.game)
    alignment = spike_alignment(trace.loss, stream.episode_starts, window=settings.window,
                                baseline=settings.baseline, min_separation=settings.min_separation)
    return EpisodeSpikesResults(settings=settings, trace=trace, episode_starts=stream.episode_starts,
                                alignment=alignment)


PAPER = {
    "spikes_near_start_fraction": "spikes coincide with episode ends (Fig. 2 middle; no number given)",
    "verdict": PAPER_CLAIM,
}


def run_all(settings: EpisodeSpikesSettings) -> list[EpisodeSpikesResults]:
    """:func:`run` once per seed of ``settings.seeds()``."""
    return run_seeds(run, settings)


def summary(runs: list[EpisodeSpikesResults]) -> dict:
    """The first seed's run (the one plotted) unprefixed, and the per-seed shares, the claim's values
    (:func:`decisions`)."""
    results = runs[0]
    a = results.alignment
    return {
        "n_episode_starts": int(results.episode_starts.sum()),
        "n_spikes": int(len(a.spikes)),
        "spikes_near_start_fraction": a.fraction,
        "chance_fraction": a.chance,
        "mean_loss_last_1000_nats": float(results.trace.loss[-1000:].mean()),
        "seeds": [r.settings.seed for r in runs],
        "spikes_near_start_fraction_per_seed": [r.alignment.fraction for r in runs],
        "chance_fraction_per_seed": [r.alignment.chance for r in runs],
    }


def decisions(summary: dict) -> list[Decision]:
    """The claim of :mod:`pcnn_explore.study.preregistered.episode_start_spikes` decided on the per-seed
    values of :func:`summary`: the near-start share of the largest spikes against chance's, paired by
    seed; not testable (:func:`~pcnn_explore.study.preregistered.episode_start_spikes.too_short`) when
    no seed's run has a spike to rank (its share None)."""
    seeds = list(summary["seeds"])
    fraction, chance = summary["spikes_near_start_fraction_per_seed"], summary["chance_fraction_per_seed"]
    ranked = any(v is not None and math.isfinite(v) for v in fraction)
    claim = plan.claim(seeds) if ranked else plan.too_short(seeds)
    return [decide(claim, fraction, chance, seeds=seeds)]
