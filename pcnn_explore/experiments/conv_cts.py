"""Appendix C at the density level: CTS, convolutional CTS and PixelCNN on the same streams.

Paper (agent level, Fig. 14): convolutional CTS behaves like PixelCNN on dense-reward games
(it leaves the agent unharmed where CTS slows it), but is as poor as CTS on sparse-reward games:
"the convolutional aspect plays a role in the 'softer' nature of the PixelCNN model compared to
its CTS counterpart", but "it alone is insufficient to explain" PixelCNN's advantage.

Here, per game (uniform-random-policy stream) and model, all trained online on the same frames:
the incoming-frame loss -log rho_n(x_n) (nats per frame) averaged over the last quarter of the
stream; the held-out loss at the end on frames of an independent stream (seed + 1); and the PG
statistics of the second half of the stream (mean, variability, peak-to-median).
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from pcnn_explore.density import make_density
from pcnn_explore.experiments.density_stats import pg_summary, tail_mean
from pcnn_explore.experiments.density_training import (
    MODEL_NAMES, DensityExperimentSettings, TrainTrace, check_models, check_positive_int, heldout_frames,
    heldout_loss, train_stream)
from pcnn_explore.streams import check_game, load_stream

__all__ = ["ConvCTSSettings", "ConvCTSResults", "run", "PAPER_CLAIM", "MODEL_NAMES", "PAPER", "summary", "verdict"]

PAPER_CLAIM = "the convolutional structure explains part, but not all, of PixelCNN's advantage over CTS (App. C)"


@dataclasses.dataclass
class ConvCTSSettings(DensityExperimentSettings):
    """games; n_frames: frames trained on per game; models; n_heldout, heldout_source: held-out set."""

    games: tuple[str, ...] = ("Freeway", "MontezumaRevenge")
    n_frames: int = 10_000
    models: tuple[str, ...] = MODEL_NAMES
    n_heldout: int = 256
    heldout_source: int = 5_000

    PRESETS: ClassVar[dict] = {
        "smoke": dict(games=("Freeway",), n_frames=40, n_heldout=8, heldout_source=40),
        "study": dict(n_frames=10_000),
        "paper": dict(games=("Freeway", "MontezumaRevenge", "Gravitar", "PrivateEye", "Venture"),
                      n_frames=100_000, n_heldout=1_000, heldout_source=20_000),
    }

    def check(self) -> None:
        super().check()
        if not self.games:
            raise ValueError("games is empty: give at least one ALE game, e.g. ('Freeway',)")
        for g in self.games:
            check_game(g)
        for name in ("n_frames", "n_heldout", "heldout_source"):
            check_positive_int(name, getattr(self, name))
        if self.n_frames < 4:
            raise ValueError(f"n_frames must be at least 4 (the statistics use the last quarter), got {self.n_frames}")
        if self.n_heldout > self.heldout_source:
            raise ValueError(f"n_heldout ({self.n_heldout}) cannot exceed heldout_source ({self.heldout_source})")
        check_models(self.models)


@dataclasses.dataclass
class ConvCTSResults:
    """traces[game][model]: online TrainTrace; table[game][model]: dict with late_loss (nats per
    frame, last quarter), heldout_loss (nats per frame) and the PG summary of the second half."""

    settings: ConvCTSSettings
    traces: dict[str, dict[str, TrainTrace]]
    table: dict[str, dict[str, dict[str, float]]]

    def rank(self, game: str, key: str = "heldout_loss") -> list[str]:
        """Models of ``game`` from lowest to highest ``key``."""
        return sorted(self.table[game], key=lambda m: self.table[game][m][key])


def run(settings: ConvCTSSettings) -> ConvCTSResults:
    settings.check()
    traces, table = {}, {}
    n = settings.n_frames
    for game in settings.games:
        stream = load_stream(game, n, seed=settings.seed, **settings.stream_options())
        eval_frames = heldout_frames(game, settings.n_heldout, settings.seed + 1, settings.heldout_source,
                                     **settings.stream_options(progress=False))
        traces[game], table[game] = {}, {}
        for name in settings.models:
            model = make_density(name, **settings.model_kwargs(name))
            trace = train_stream(model, stream.frames, progress=settings.progress, desc=f"{game} {name}")
            traces[game][name] = trace
            row = {"late_loss": tail_mean(trace.loss, max(1, n // 4)), "heldout_loss": heldout_loss(model, eval_frames)}
            row.update({f"pg_{k}": v for k, v in pg_summary(trace.pg[n // 2:]).items()})
            table[game][name] = row
    return ConvCTSResults(settings=settings, traces=traces, table=table)


PAPER = {
    "verdict": PAPER_CLAIM + " (agent-level evidence; the paper gives no density-level numbers)",
}


def verdict(results: ConvCTSResults) -> str:
    parts = []
    for game in results.table:
        ranked = results.rank(game)
        parts.append(f"{game}: held-out loss {' < '.join(ranked)}")
    return "; ".join(parts)


def summary(results: ConvCTSResults) -> dict:
    out: dict = {}
    for game, rows in results.table.items():
        for m, row in rows.items():
            out[f"{game}_{m}_heldout_loss_nats"] = row["heldout_loss"]
            out[f"{game}_{m}_late_loss_nats"] = row["late_loss"]
            out[f"{game}_{m}_pg_variability"] = row["pg_variability"]
            out[f"{game}_{m}_mean_pg_nats"] = row["pg_mean"]
    out["verdict"] = verdict(results)
    return out
