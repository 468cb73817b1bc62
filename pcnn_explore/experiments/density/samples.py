"""Fig. 4: samples from density models after 25K online training steps.

Paper: samples from PixelCNN after 25K steps "are somehow higher quality" than CTS samples
(section 5, "Quality of the density model"), while noting that a better generative model need
not give better probability estimates.

Here: CTS, ConvCTS, PixelCNN and the position-biased PixelCNN are trained online on the same stream
for ``n_train`` frames, on an exploring stream (the main one) and on a uniform-random-policy stream
(:mod:`pcnn_explore.experiments.density.location`); each then draws ``n_samples`` images (pixel by pixel in raster order), and
its held-out loss (mean -log rho(x), nats per frame) is measured on ``n_heldout`` frames drawn
from an independent stream (seed + 1) of ``heldout_source`` agent steps.

The paper judges sample quality by eye. The claim uses a stated measure instead
(:func:`~pcnn_explore.experiments.density.density_stats.nearest_frame_distance`): the share of a sample's
pixels that differ from the nearest *held-out* frame (the ``n_heldout`` frames of the independent
stream, never trained on), averaged over the samples; lower means the samples lie nearer real
frames of the game. A sample that copies a training frame scores what that real frame scores, no
better than a new realistic frame, so the measure does not reward copying (the distance to the
nearest *training* frame, which does, is kept beside it as the copying check: a sample much nearer
the training frames than the held-out ones is a copy). The training frames' own held-out distance
is what a real frame scores. It is decided over ``n_seeds`` independent runs (a fresh stream and
models per seed) on the main stream, PixelCNN against CTS, paired over seeds
(:func:`decisions`, the claim of :mod:`pcnn_explore.study.preregistered.samples`). Pixel agreement is one stated
reading of "higher quality", not the paper's eye; look at the samples too. The held-out losses are
context: the paper warns that a better generative model need not give better probabilities. The
kit's position-biased PixelCNN is shown, never counted.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from pcnn_explore.density import make_density
from pcnn_explore.experiments.density.density_stats import nearest_frame_distance
from pcnn_explore.experiments.density.density_training import (
    MODEL_NAMES, DensityExperimentSettings, TrainTrace, check_models, check_positive_int, heldout_frames,
    heldout_loss, run_seeds, train_stream)
from pcnn_explore.experiments.density.location import (
    STREAM_POLICIES, check_policies, location_stats, static_positions, stream_policies_for)
from pcnn_explore.streams import check_game, load_stream
from pcnn_explore.study import Decision, decide
from pcnn_explore.study.preregistered import density as prereg
from pcnn_explore.study.preregistered import samples as plan

__all__ = ["SamplesSettings", "SamplesResults", "run", "run_all", "PAPER_CLAIM", "MODEL_NAMES", "PAPER", "summary",
           "decisions"]

PAPER_CLAIM = "after 25K steps PixelCNN samples look better than CTS samples (Fig. 4)"


@dataclasses.dataclass
class SamplesSettings(DensityExperimentSettings):
    """game; n_train: online training steps (paper: 25K); n_samples: images per model;
    models: subset of ("cts", "convcts", "pixelcnn", "pixelcnn_pos"); n_heldout, heldout_source: the
    held-out set (from an independent stream, seed + 1, of the same policy); policies: the streams
    ("explorer", "random", "checkpoint:PATH"; the first is the main one, the explorer is dropped
    for games without a route)."""

    game: str = "MontezumaRevenge"
    n_train: int = 25_000
    n_samples: int = 8
    models: tuple[str, ...] = MODEL_NAMES
    n_heldout: int = 256
    heldout_source: int = 5_000
    policies: tuple[str, ...] = STREAM_POLICIES

    PRESETS: ClassVar[dict] = {
        "smoke": dict(n_train=40, n_samples=1, n_heldout=8, heldout_source=40, n_seeds=2, workers=1),
        "study": dict(n_train=25_000, n_samples=8, n_heldout=256, heldout_source=5_000, **prereg.preset_fields("04")),
        "paper": dict(n_train=25_000, n_samples=16, n_heldout=1_000, heldout_source=20_000, **prereg.preset_fields("04")),
    }

    def check(self) -> None:
        super().check()
        check_game(self.game)
        for name in ("n_train", "n_samples", "n_heldout", "heldout_source"):
            check_positive_int(name, getattr(self, name))
        if self.n_heldout > self.heldout_source:
            raise ValueError(f"n_heldout ({self.n_heldout}) cannot exceed heldout_source ({self.heldout_source})")
        check_models(self.models)
        check_policies(self.policies)


@dataclasses.dataclass
class SamplesResults:
    """Per stream policy (``settings.policies`` that the game has; the first is the main one):
    samples[policy][model]: (n_samples, 42, 42) uint8; heldout_loss[policy][model]: nats per
    frame; traces[policy][model]: online TrainTrace; real[policy]: (n_samples, 42, 42) training
    frames; location[policy][model]: :func:`~pcnn_explore.experiments.density.location.location_stats`;
    static_fraction[policy]: share of pixel positions static (> 99%) in the training frames;
    rooms[policy]: distinct rooms the training frames visit (empty where unknown);
    sample_distance[policy][model]: mean over the samples of the share of pixels that differ from
    the nearest held-out frame (0..1, lower: nearer real frames; the verdict's measure);
    train_distance[policy][model]: the same to the nearest training frame (0 for a copy);
    real_distance[policy]: the ``real`` training frames' mean distance to the nearest held-out frame,
    what a real frame (or a copy of one) scores."""

    settings: SamplesSettings
    samples: dict[str, dict[str, np.ndarray]]
    heldout_loss: dict[str, dict[str, float]]
    traces: dict[str, dict[str, TrainTrace]]
    real: dict[str, np.ndarray]
    location: dict[str, dict[str, dict[str, float]]]
    static_fraction: dict[str, float]
    rooms: dict[str, list[int]]
    sample_distance: dict[str, dict[str, float]]
    train_distance: dict[str, dict[str, float]]
    real_distance: dict[str, float]

    @property
    def policies(self) -> list[str]:
        return list(self.heldout_loss)


def run(settings: SamplesSettings) -> SamplesResults:
    settings.check()
    out: dict = {k: {} for k in ("samples", "heldout_loss", "traces", "real", "location", "static_fraction", "rooms",
                                 "sample_distance", "train_distance", "real_distance")}
    for policy in stream_policies_for(settings.game, settings.policies):
        stream = load_stream(settings.game, settings.n_train, seed=settings.seed,
                             **settings.stream_options(policy=policy))
        eval_frames = heldout_frames(settings.game, settings.n_heldout, settings.seed + 1, settings.heldout_source,
                                     **settings.stream_options(progress=False, policy=policy))
        static = static_positions(stream.frames)
        for key in ("samples", "heldout_loss", "traces", "location", "sample_distance", "train_distance"):
            out[key][policy] = {}
        for name in settings.models:
            model = make_density(name, **settings.model_kwargs(name))
            trace = train_stream(model, stream.frames, progress=settings.progress, desc=f"{policy} {name}")
            loss = heldout_loss(model, eval_frames)
            out["traces"][policy][name], out["heldout_loss"][policy][name] = trace, loss
            out["location"][policy][name] = location_stats(model, trace, static, eval_frames, loss)
            out["samples"][policy][name] = model.sample(settings.n_samples, np.random.default_rng(settings.seed))
            drawn = out["samples"][policy][name]
            out["sample_distance"][policy][name] = float(nearest_frame_distance(drawn, eval_frames).mean())
            out["train_distance"][policy][name] = float(nearest_frame_distance(drawn, stream.frames).mean())
        pick = np.linspace(0, settings.n_train - 1, settings.n_samples).round().astype(int)
        out["real"][policy] = stream.frames[pick]
        out["real_distance"][policy] = float(nearest_frame_distance(out["real"][policy], eval_frames).mean())
        out["static_fraction"][policy] = float(static.mean())
        out["rooms"][policy] = [] if stream.rooms is None else sorted(int(r) for r in np.unique(stream.rooms))
    return SamplesResults(settings=settings, **out)


def run_all(settings: SamplesSettings) -> list[SamplesResults]:
    """:func:`run` once per seed of ``settings.seeds()``."""
    return run_seeds(run, settings)


PAPER = {
    "verdict": PAPER_CLAIM + "; judged by eye in the paper, no numbers given",
    "sample_distance_pixelcnn": "no number given; here: below CTS's (nearest held-out frame, copying not rewarded)",
    "static_positions_fraction": "the paper's agents move through rooms; no number given",
}


def summary(runs: list[SamplesResults]) -> dict:
    """The first seed's run (the one plotted): keys of the main stream unprefixed, the others prefixed
    by their policy (``random_...``); the per-seed sample distances on the main stream, the claim's values
    (:func:`decisions`)."""
    results = runs[0]
    out: dict = {}
    for i, policy in enumerate(results.policies):
        p = "" if i == 0 else f"{policy.split(':')[0]}_"
        out[f"{p}stream"] = policy
        out[f"{p}static_positions_fraction"] = results.static_fraction[policy]
        if results.rooms[policy]:
            out[f"{p}rooms_visited"] = ", ".join(map(str, results.rooms[policy]))
        out.update({f"{p}heldout_loss_{m}_nats": v for m, v in results.heldout_loss[policy].items()})
        out.update({f"{p}sample_distance_{m}": v for m, v in results.sample_distance[policy].items()})
        out.update({f"{p}train_distance_{m}": v for m, v in results.train_distance[policy].items()})
        out[f"{p}real_frame_distance"] = results.real_distance[policy]
        for m, row in results.location[policy].items():
            out[f"{p}{m}_static_loss_share"] = row["static_loss_share"]
            out[f"{p}{m}_recency_gap_nats"] = row["recency_gap_nats"]
    out.update({f"train_seconds_{m}": t.seconds for m, t in results.traces[results.policies[0]].items()})
    out["seeds"] = [r.settings.seed for r in runs]
    main = results.policies[0]
    out.update({f"sample_distance_{m}_per_seed": [r.sample_distance[main][m] for r in runs]
                for m in results.sample_distance[main]})
    out.update({f"train_distance_{m}_per_seed": [r.train_distance[main][m] for r in runs]
                for m in results.train_distance[main]})
    return out


def decisions(summary: dict) -> list[Decision]:
    """The claim of :mod:`pcnn_explore.study.preregistered.samples` decided on the per-seed distances of
    :func:`summary` (``sample_distance_<model>_per_seed``, main stream): PixelCNN's against CTS's,
    paired by seed; none without both models."""
    if not {"sample_distance_pixelcnn_per_seed", "sample_distance_cts_per_seed"} <= set(summary):
        return []
    seeds = list(summary["seeds"])
    return [decide(plan.claim(seeds), summary["sample_distance_pixelcnn_per_seed"],
                   summary["sample_distance_cts_per_seed"], seeds=seeds)]
