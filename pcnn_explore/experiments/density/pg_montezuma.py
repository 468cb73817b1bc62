"""Fig. 9: prediction gain of CTS and PixelCNN on Montezuma's Revenge, over 5K steps.

Paper: "PixelCNN consistently produces PGs lower than CTS. More importantly, its PGs are
smoother, exhibiting less variance between successive states, while showing more pronounced
peaks at certain infrequent events."

Here: the models (CTS, the paper's PixelCNN, the position-biased PixelCNN) train online on the same
stream, an exploring one (the main verdict) and a uniform-random-policy one
(:mod:`pcnn_explore.experiments.density.location`). The first
``warmup`` frames are trained on but not analysed (an untrained model's PGs are large for every
frame); the next ``n_steps`` frames give the PG traces, PG_n = log rho'_n(x) - log rho_n(x) in
nats. Statistics per model (:mod:`pcnn_explore.experiments.density.density_stats`): mean PG; the
step-to-step variability, median |PG_{t+1} - PG_t| / median PG; the peak-to-median ratio,
max PG / median PG; the peak measure of the verdict, the 0.99 quantile of PG / median PG (robust
to a single maximum); the share of negative PGs (PixelCNN is not learning-positive).

Each of the paper's three claims is decided on its own, PixelCNN against CTS on the main stream, over
``n_seeds`` independent runs (a fresh stream and models per seed), paired over seeds (:func:`decisions`,
the claims of :mod:`pcnn_explore.study.preregistered.pg_montezuma`): lower mean PG; smoother (lower
variability); sharper peaks (higher quantile-to-median ratio). The kit's position-biased PixelCNN is
shown, never counted.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from pcnn_explore.density import REGISTRY, make_density
from pcnn_explore.experiments.density.density_stats import pg_summary
from pcnn_explore.experiments.density.density_training import (
    DensityExperimentSettings, TrainTrace, check_positive_int, heldout_frames, heldout_loss, run_seeds, train_stream)
from pcnn_explore.experiments.density.location import (
    STREAM_POLICIES, check_policies, location_stats, static_positions, stream_policies_for)
from pcnn_explore.streams import check_game, load_stream
from pcnn_explore.study import Decision, decide
from pcnn_explore.study.preregistered import density as prereg
from pcnn_explore.study.preregistered import pg_montezuma as plan

__all__ = ["PgSettings", "PgResults", "run", "run_all", "PAPER_CLAIM", "PAPER", "summary", "decisions"]

PAPER_CLAIM = "PixelCNN PG lower than CTS PG, smoother between successive states, sharper peaks at rare events (Fig. 9)"


@dataclasses.dataclass
class PgSettings(DensityExperimentSettings):
    """game; n_steps: frames whose PG is analysed (paper: 5K); warmup: frames trained on before
    them; models: density models to compare; policies: the streams (the first is the main one;
    see :mod:`pcnn_explore.experiments.density.location`); n_heldout: held-out frames for the loss shares,
    drawn from an independent stream (seed + 1) of 4 n_heldout agent steps."""

    game: str = "MontezumaRevenge"
    n_steps: int = 5_000
    warmup: int = 2_000
    models: tuple[str, ...] = ("cts", "pixelcnn", "pixelcnn_pos")
    policies: tuple[str, ...] = STREAM_POLICIES
    n_heldout: int = 256

    PRESETS: ClassVar[dict] = {
        "smoke": dict(n_steps=40, warmup=10, n_heldout=8, n_seeds=2, workers=1),
        "study": dict(n_steps=5_000, warmup=2_000, n_heldout=256, **prereg.preset_fields("05")),
        "paper": dict(n_steps=5_000, warmup=2_000, n_heldout=1_000, **prereg.preset_fields("05")),
    }

    def check(self) -> None:
        super().check()
        check_game(self.game)
        check_positive_int("n_steps", self.n_steps)
        check_positive_int("n_heldout", self.n_heldout)
        check_policies(self.policies)
        if isinstance(self.warmup, bool) or not isinstance(self.warmup, int) or self.warmup < 0:
            raise ValueError(f"warmup must be a non-negative int (frames), got {self.warmup!r}")
        known = tuple(REGISTRY)
        if not self.models or any(m not in known for m in self.models):
            raise ValueError(f"models must be a non-empty subset of {known}, got {self.models!r}")


@dataclasses.dataclass
class PgResults:
    """Per stream policy (the game's of ``settings.policies``; the first is the main one):
    pg[policy][model]: (n_steps,) PG in nats of the analysed frames; stats[policy][model]:
    pg_summary; traces[policy][model]: the full online TrainTrace (warm-up included);
    episode_starts[policy]: (n_steps,) bool of the analysed frames; steps: (n_steps,) their stream
    indices; rooms[policy]: (n_steps,) room of each analysed frame, or None; location[policy][model]:
    :func:`~pcnn_explore.experiments.density.location.location_stats` on held-out frames of an independent
    stream (seed + 1); static_fraction[policy]: share of static pixel positions."""

    settings: PgSettings
    pg: dict[str, dict[str, np.ndarray]]
    stats: dict[str, dict[str, dict[str, float]]]
    traces: dict[str, dict[str, TrainTrace]]
    episode_starts: dict[str, np.ndarray]
    steps: np.ndarray
    rooms: dict[str, np.ndarray | None]
    location: dict[str, dict[str, dict[str, float]]]
    static_fraction: dict[str, float]

    @property
    def policies(self) -> list[str]:
        return list(self.stats)


def run(settings: PgSettings) -> PgResults:
    settings.check()
    n = settings.warmup + settings.n_steps
    window = slice(settings.warmup, n)
    out: dict = {k: {} for k in ("pg", "stats", "traces", "episode_starts", "rooms", "location", "static_fraction")}
    for policy in stream_policies_for(settings.game, settings.policies):
        stream = load_stream(settings.game, n, seed=settings.seed, **settings.stream_options(policy=policy))
        eval_frames = heldout_frames(settings.game, settings.n_heldout, settings.seed + 1, settings.n_heldout * 4,
                                     **settings.stream_options(progress=False, policy=policy))
        static = static_positions(stream.frames)
        for key in ("pg", "stats", "traces", "location"):
            out[key][policy] = {}
        for name in settings.models:
            model = make_density(name, **settings.model_kwargs(name))
            trace = train_stream(model, stream.frames, progress=settings.progress, desc=f"{policy} {name}")
            out["traces"][policy][name] = trace
            out["pg"][policy][name] = trace.pg[window]
            out["stats"][policy][name] = pg_summary(trace.pg[window], plan.PEAK_QUANTILE)
            out["location"][policy][name] = location_stats(model, trace, static, eval_frames,
                                                           heldout_loss(model, eval_frames))
        out["episode_starts"][policy] = stream.episode_starts[window]
        out["rooms"][policy] = None if stream.rooms is None else stream.rooms[window]
        out["static_fraction"][policy] = float(static.mean())
    return PgResults(settings=settings, steps=np.arange(n)[window], **out)


def run_all(settings: PgSettings) -> list[PgResults]:
    """:func:`run` once per seed of ``settings.seeds()``."""
    return run_seeds(run, settings)


PAPER = {
    "pixelcnn_mean_pg_nats": "lower than CTS",
    "pixelcnn_pg_variability": "lower than CTS (smoother)",
    "pixelcnn_peak_quantile": "higher than CTS (sharper peaks at rare events)",
    "verdict": PAPER_CLAIM,
}


def summary(runs: list[PgResults]) -> dict:
    """The first seed's run (the one plotted): keys of the main stream unprefixed, the others prefixed
    by their policy (``random_...``); and each claim's quantity per seed on the main stream (:func:`decisions`)."""
    results = runs[0]
    out: dict = {}
    for i, policy in enumerate(results.policies):
        p = "" if i == 0 else f"{policy.split(':')[0]}_"
        out[f"{p}stream"] = policy
        out[f"{p}static_positions_fraction"] = results.static_fraction[policy]
        if results.rooms[policy] is not None:
            out[f"{p}rooms_visited"] = ", ".join(str(int(r)) for r in np.unique(results.rooms[policy]))
        for m, s in results.stats[policy].items():
            out[f"{p}{m}_mean_pg_nats"] = s["mean"]
            out[f"{p}{m}_pg_variability"] = s["variability"]
            out[f"{p}{m}_peak_to_median"] = s["peak_to_median"]
            out[f"{p}{m}_peak_quantile"] = s["peak_quantile"]
            out[f"{p}{m}_negative_pg_fraction"] = s["negative_fraction"]
            out[f"{p}{m}_static_loss_share"] = results.location[policy][m]["static_loss_share"]
            out[f"{p}{m}_recency_gap_nats"] = results.location[policy][m]["recency_gap_nats"]
    out["seeds"] = [r.settings.seed for r in runs]
    main = results.policies[0]
    for m in results.stats[main]:
        for key, name in (("mean", "mean_pg_nats"), ("variability", "pg_variability"), ("peak_quantile", "peak_quantile")):
            out[f"{m}_{name}_per_seed"] = [r.stats[main][m][key] for r in runs]
    return out


def decisions(summary: dict, a: str = "pixelcnn", b: str = "cts") -> list[Decision]:
    """The three claims of :mod:`pcnn_explore.study.preregistered.pg_montezuma`, model ``a`` against
    ``b``, decided on the per-seed values of :func:`summary` (``<model>_mean_pg_nats_per_seed``,
    ``<model>_pg_variability_per_seed``, ``<model>_peak_quantile_per_seed``), paired by seed; none
    without both models."""
    keys = ("mean_pg_nats", "pg_variability", "peak_quantile")
    if not all(f"{m}_{k}_per_seed" in summary for m in (a, b) for k in keys):
        return []
    seeds = list(summary["seeds"])
    return [decide(c, summary[f"{a}_{k}_per_seed"], summary[f"{b}_{k}_per_seed"], seeds=seeds)
            for c, k in zip(plan.claims(seeds, a, b), keys)]
