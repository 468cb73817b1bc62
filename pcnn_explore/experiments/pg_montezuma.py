"""Fig. 9: prediction gain of CTS and PixelCNN on Montezuma's Revenge, over 5K steps.

Paper: "PixelCNN consistently produces PGs lower than CTS. More importantly, its PGs are
smoother, exhibiting less variance between successive states, while showing more pronounced
peaks at certain infrequent events."

Here: both models train online on the same uniform-random-policy stream. The first
``warmup`` frames are trained on but not analysed (an untrained model's PGs are large for every
frame); the next ``n_steps`` frames give the PG traces, PG_n = log rho'_n(x) - log rho_n(x) in
nats. Statistics per model (:mod:`pcnn_explore.experiments.density_stats`): mean PG; the
step-to-step variability, median |PG_{t+1} - PG_t| / median PG; the peak-to-median ratio,
max PG / median PG; the share of negative PGs (PixelCNN is not learning-positive).
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from pcnn_explore.density import REGISTRY, make_density
from pcnn_explore.experiments.density_stats import pg_summary
from pcnn_explore.experiments.density_training import (
    DensityExperimentSettings, TrainTrace, check_positive_int, train_stream)
from pcnn_explore.streams import check_game, load_stream

__all__ = ["PgSettings", "PgResults", "run", "PAPER_CLAIM", "PAPER", "summary", "verdict", "checks"]

PAPER_CLAIM = "PixelCNN PG lower than CTS PG, smoother between successive states, sharper peaks at rare events (Fig. 9)"


@dataclasses.dataclass
class PgSettings(DensityExperimentSettings):
    """game; n_steps: frames whose PG is analysed (paper: 5K); warmup: frames trained on before
    them; models: density models to compare."""

    game: str = "MontezumaRevenge"
    n_steps: int = 5_000
    warmup: int = 2_000
    models: tuple[str, ...] = ("cts", "pixelcnn")

    PRESETS: ClassVar[dict] = {
        "smoke": dict(n_steps=40, warmup=10),
        "study": dict(n_steps=5_000, warmup=2_000),
        "paper": dict(n_steps=5_000, warmup=2_000),
    }

    def check(self) -> None:
        super().check()
        check_game(self.game)
        check_positive_int("n_steps", self.n_steps)
        if isinstance(self.warmup, bool) or not isinstance(self.warmup, int) or self.warmup < 0:
            raise ValueError(f"warmup must be a non-negative int (frames), got {self.warmup!r}")
        known = tuple(REGISTRY)
        if not self.models or any(m not in known for m in self.models):
            raise ValueError(f"models must be a non-empty subset of {known}, got {self.models!r}")


@dataclasses.dataclass
class PgResults:
    """pg: model -> (n_steps,) PG in nats of the analysed frames; stats: model -> pg_summary;
    traces: model -> the full online TrainTrace (warm-up included); episode_starts: (n_steps,)
    bool of the analysed frames; steps: (n_steps,) their stream indices."""

    settings: PgSettings
    pg: dict[str, np.ndarray]
    stats: dict[str, dict[str, float]]
    traces: dict[str, TrainTrace]
    episode_starts: np.ndarray
    steps: np.ndarray


def run(settings: PgSettings) -> PgResults:
    settings.check()
    n = settings.warmup + settings.n_steps
    stream = load_stream(settings.game, n, seed=settings.seed, **settings.stream_options())
    window = slice(settings.warmup, n)
    pg, stats, traces = {}, {}, {}
    for name in settings.models:
        model = make_density(name, **settings.model_kwargs(name))
        traces[name] = train_stream(model, stream.frames, progress=settings.progress, desc=name)
        pg[name] = traces[name].pg[window]
        stats[name] = pg_summary(pg[name])
    return PgResults(settings=settings, pg=pg, stats=stats, traces=traces,
                     episode_starts=stream.episode_starts[window], steps=np.arange(n)[window])


PAPER = {
    "pixelcnn_mean_pg_nats": "lower than CTS",
    "pixelcnn_pg_variability": "lower than CTS (smoother)",
    "pixelcnn_peak_to_median": "higher than CTS (sharper peaks at rare events)",
    "verdict": PAPER_CLAIM,
}


def checks(results: PgResults, a: str = "pixelcnn", b: str = "cts") -> dict[str, bool]:
    """The paper's three claims for model ``a`` against ``b``: lower mean PG, smoother (lower
    variability), sharper peaks (higher peak-to-median)."""
    sa, sb = results.stats[a], results.stats[b]
    return {"lower": sa["mean"] < sb["mean"], "smoother": sa["variability"] < sb["variability"],
            "sharper_peaks": sa["peak_to_median"] > sb["peak_to_median"]}


def verdict(results: PgResults) -> str:
    if not {"pixelcnn", "cts"} <= set(results.stats):
        return "needs both cts and pixelcnn in models"
    c = checks(results)
    words = {"lower": "lower mean PG", "smoother": "smoother", "sharper_peaks": "sharper peaks"}
    held = [w for k, w in words.items() if c[k]]
    failed = [w for k, w in words.items() if not c[k]]
    return (f"PixelCNN vs CTS: {len(held)} of 3 claims hold"
            + (f" ({', '.join(held)})" if held else "") + (f"; not: {', '.join(failed)}" if failed else ""))


def summary(results: PgResults) -> dict:
    out: dict = {}
    for m, s in results.stats.items():
        out[f"{m}_mean_pg_nats"] = s["mean"]
        out[f"{m}_pg_variability"] = s["variability"]
        out[f"{m}_peak_to_median"] = s["peak_to_median"]
        out[f"{m}_negative_pg_fraction"] = s["negative_fraction"]
    out["verdict"] = verdict(results)
    return out
