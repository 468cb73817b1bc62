"""Fig. 4: samples from density models after 25K online training steps.

Paper: samples from PixelCNN after 25K steps "are somehow higher quality" than CTS samples
(section 5, "Quality of the density model"), while noting that a better generative model need
not give better probability estimates.

Here: CTS, ConvCTS and PixelCNN are trained online on the same uniform-random-policy stream for
``n_train`` frames; each then draws ``n_samples`` images (pixel by pixel in raster order), and
its held-out loss (mean -log rho(x), nats per frame) is measured on ``n_heldout`` frames drawn
from an independent stream (seed + 1) of ``heldout_source`` agent steps.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from pcnn_explore.density import make_density
from pcnn_explore.experiments.density_training import (
    MODEL_NAMES, DensityExperimentSettings, TrainTrace, check_models, check_positive_int, heldout_frames,
    heldout_loss, train_stream)
from pcnn_explore.streams import check_game, load_stream

__all__ = ["SamplesSettings", "SamplesResults", "run", "PAPER_CLAIM", "MODEL_NAMES", "PAPER", "summary", "verdict"]

PAPER_CLAIM = "after 25K steps PixelCNN samples look better than CTS samples (Fig. 4)"


@dataclasses.dataclass
class SamplesSettings(DensityExperimentSettings):
    """game; n_train: online training steps (paper: 25K); n_samples: images per model;
    models: subset of ("cts", "convcts", "pixelcnn"); n_heldout, heldout_source: the held-out set."""

    game: str = "MontezumaRevenge"
    n_train: int = 25_000
    n_samples: int = 8
    models: tuple[str, ...] = MODEL_NAMES
    n_heldout: int = 256
    heldout_source: int = 5_000

    PRESETS: ClassVar[dict] = {
        "smoke": dict(n_train=40, n_samples=1, n_heldout=8, heldout_source=40),
        "study": dict(n_train=25_000, n_samples=8, n_heldout=256, heldout_source=5_000),
        "paper": dict(n_train=25_000, n_samples=16, n_heldout=1_000, heldout_source=20_000),
    }

    def check(self) -> None:
        super().check()
        check_game(self.game)
        for name in ("n_train", "n_samples", "n_heldout", "heldout_source"):
            check_positive_int(name, getattr(self, name))
        if self.n_heldout > self.heldout_source:
            raise ValueError(f"n_heldout ({self.n_heldout}) cannot exceed heldout_source ({self.heldout_source})")
        check_models(self.models)


@dataclasses.dataclass
class SamplesResults:
    """samples: model -> (n_samples, 42, 42) uint8; heldout_loss: model -> nats per frame;
    traces: model -> online TrainTrace; real: (n_samples, 42, 42) training frames for comparison."""

    settings: SamplesSettings
    samples: dict[str, np.ndarray]
    heldout_loss: dict[str, float]
    traces: dict[str, TrainTrace]
    real: np.ndarray


def run(settings: SamplesSettings) -> SamplesResults:
    settings.check()
    stream = load_stream(settings.game, settings.n_train, seed=settings.seed, **settings.stream_options())
    eval_frames = heldout_frames(settings.game, settings.n_heldout, settings.seed + 1, settings.heldout_source,
                                 **settings.stream_options(progress=False))
    samples, losses, traces = {}, {}, {}
    for name in settings.models:
        model = make_density(name, **settings.model_kwargs(name))
        traces[name] = train_stream(model, stream.frames, progress=settings.progress, desc=name)
        losses[name] = heldout_loss(model, eval_frames)
        samples[name] = model.sample(settings.n_samples, np.random.default_rng(settings.seed))
    pick = np.linspace(0, settings.n_train - 1, settings.n_samples).round().astype(int)
    return SamplesResults(settings=settings, samples=samples, heldout_loss=losses, traces=traces,
                          real=stream.frames[pick])


PAPER = {
    "verdict": PAPER_CLAIM + "; qualitative, no held-out numbers given",
}


def verdict(results: SamplesResults) -> str:
    ranked = sorted(results.heldout_loss, key=results.heldout_loss.get)
    return "held-out loss ranks " + " < ".join(ranked) + " (lower is better); judge the samples by eye"


def summary(results: SamplesResults) -> dict:
    out: dict = {f"heldout_loss_{m}_nats": v for m, v in results.heldout_loss.items()}
    out.update({f"train_seconds_{m}": t.seconds for m, t in results.traces.items()})
    out["verdict"] = verdict(results)
    return out
