"""Appendix C at the density level: CTS, convolutional CTS and PixelCNN on the same streams.

Paper (agent level, Fig. 14): convolutional CTS behaves like PixelCNN on dense-reward games
(it leaves the agent unharmed where CTS slows it), but is as poor as CTS on sparse-reward games:
"the convolutional aspect plays a role in the 'softer' nature of the PixelCNN model compared to
its CTS counterpart", but "it alone is insufficient to explain" PixelCNN's advantage.

Here, per game and stream (the exploring stream where the game has one, and the
uniform-random-policy stream; :mod:`pcnn_explore.experiments.density.location`) and model, all trained online on the same frames:
the incoming-frame loss -log rho_n(x_n) (nats per frame) averaged over the last quarter of the
stream; the held-out loss at the end on frames of an independent stream (seed + 1); and the PG
statistics of the second half of the stream (mean, variability, peak-to-median).

What held-out loss can say: App. C explains the agents' gap by "the more advanced model's accuracy
advantage", so it implies an accuracy ordering, tested per game's main stream, directionally:
PixelCNN below CTS (an accuracy advantage exists), ConvCTS below CTS (the convolution gives part of
it) and ConvCTS above PixelCNN (not all of it), each over ``n_seeds`` independent runs, paired over
seeds: the kit's reading (:func:`decisions`, the claims of :mod:`pcnn_explore.study.preregistered.conv_cts`).
What it cannot say: App. C's claim itself rests on agent scores (Fig. 14), and a lower held-out loss need
not give a better exploration bonus. That claim is the notebook's one paper claim, ``App. C agent
scores``, always ``not testable on this task`` here (no density-level run measures agent scores), so
the notebook's word is ``not testable``: the held-out ordering can support or contradict App. C's
explanation, never confirm App. C.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

from pcnn_explore.density import make_density
from pcnn_explore.experiments.density.density_stats import pg_summary, tail_mean
from pcnn_explore.experiments.density.density_training import (
    MODEL_NAMES, DensityExperimentSettings, TrainTrace, check_models, check_positive_int, heldout_frames,
    heldout_loss, run_seeds, train_stream)
from pcnn_explore.experiments.density.location import (
    STREAM_POLICIES, check_policies, location_stats, static_positions, stream_policies_for)
from pcnn_explore.streams import check_game, load_stream
from pcnn_explore.study import Decision, decide
from pcnn_explore.study.preregistered import conv_cts as plan
from pcnn_explore.study.preregistered import density as prereg

__all__ = ["ConvCTSSettings", "ConvCTSResults", "run", "run_all", "PAPER_CLAIM", "MODEL_NAMES", "PAPER", "summary",
           "decisions"]

PAPER_CLAIM = "the convolutional structure explains part, but not all, of PixelCNN's advantage over CTS (App. C)"


@dataclasses.dataclass
class ConvCTSSettings(DensityExperimentSettings):
    """games; n_frames: frames trained on per game; models; n_heldout, heldout_source: held-out set;
    policies: the streams of each game (the first the game has is its main one; the explorer only
    exists for Montezuma's Revenge)."""

    games: tuple[str, ...] = ("Freeway", "MontezumaRevenge")
    n_frames: int = 10_000
    models: tuple[str, ...] = MODEL_NAMES
    n_heldout: int = 256
    heldout_source: int = 5_000
    policies: tuple[str, ...] = STREAM_POLICIES

    PRESETS: ClassVar[dict] = {
        "smoke": dict(games=("Freeway",), n_frames=40, n_heldout=8, heldout_source=40, n_seeds=2, workers=1),
        "study": dict(n_frames=10_000, **prereg.preset_fields("06")),
        "paper": dict(games=("Freeway", "MontezumaRevenge", "Gravitar", "PrivateEye", "Venture"),
                      n_frames=100_000, n_heldout=1_000, heldout_source=20_000, **prereg.preset_fields("06")),
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
        check_policies(self.policies)


@dataclasses.dataclass
class ConvCTSResults:
    """One row per (game, stream policy): ``rows[row] = (game, policy)``, the row named after the
    game for its main stream and ``<game>_<policy>`` for the others. traces[row][model]: online
    TrainTrace; table[row][model]: dict with late_loss (nats per frame, last quarter),
    heldout_loss (nats per frame), the location stats (static_loss_share, recency_gap_nats, ...)
    and the PG summary of the second half (pg_mean, pg_variability, ...); static_fraction[row]:
    share of static pixel positions of the training frames."""

    settings: ConvCTSSettings
    traces: dict[str, dict[str, TrainTrace]]
    table: dict[str, dict[str, dict[str, float]]]
    rows: dict[str, tuple[str, str]]
    static_fraction: dict[str, float]

    def main_rows(self) -> list[str]:
        """The rows of each game's main stream."""
        return [r for r, (game, _) in self.rows.items() if r == game]


def run(settings: ConvCTSSettings) -> ConvCTSResults:
    settings.check()
    traces, table, rows, static_fraction = {}, {}, {}, {}
    n = settings.n_frames
    for game in settings.games:
        for i, policy in enumerate(stream_policies_for(game, settings.policies)):
            row = game if i == 0 else f"{game}_{policy.split(':')[0]}"
            rows[row] = (game, policy)
            stream = load_stream(game, n, seed=settings.seed, **settings.stream_options(policy=policy))
            eval_frames = heldout_frames(game, settings.n_heldout, settings.seed + 1, settings.heldout_source,
                                         **settings.stream_options(progress=False, policy=policy))
            static = static_positions(stream.frames)
            static_fraction[row] = float(static.mean())
            traces[row], table[row] = {}, {}
            for name in settings.models:
                model = make_density(name, **settings.model_kwargs(name))
                trace = train_stream(model, stream.frames, progress=settings.progress, desc=f"{row} {name}")
                traces[row][name] = trace
                held = heldout_loss(model, eval_frames)
                entry = {"late_loss": tail_mean(trace.loss, max(1, n // 4)), "heldout_loss": held}
                entry.update(location_stats(model, trace, static, eval_frames, held))
                entry.update({f"pg_{k}": v for k, v in pg_summary(trace.pg[n // 2:]).items()})
                table[row][name] = entry
    return ConvCTSResults(settings=settings, traces=traces, table=table, rows=rows, static_fraction=static_fraction)


def run_all(settings: ConvCTSSettings) -> list[ConvCTSResults]:
    """:func:`run` once per seed of ``settings.seeds()``."""
    return run_seeds(run, settings)


PAPER = {
    "verdict": PAPER_CLAIM + " (agent-level evidence; the paper gives no density-level numbers)",
}

def summary(runs: list[ConvCTSResults]) -> dict:
    """The first seed's run (the one plotted), and the main streams' held-out losses per seed
    (``<game>_<model>_heldout_loss_nats_per_seed``), the kit's claims' values (:func:`decisions`)."""
    results = runs[0]
    out: dict = {}
    for row, entries in results.table.items():
        out[f"{row}_stream"] = results.rows[row][1]
        out[f"{row}_static_positions_fraction"] = results.static_fraction[row]
        for m, e in entries.items():
            out[f"{row}_{m}_heldout_loss_nats"] = e["heldout_loss"]
            out[f"{row}_{m}_late_loss_nats"] = e["late_loss"]
            out[f"{row}_{m}_pg_variability"] = e["pg_variability"]
            out[f"{row}_{m}_mean_pg_nats"] = e["pg_mean"]
            out[f"{row}_{m}_static_loss_share"] = e["static_loss_share"]
            out[f"{row}_{m}_recency_gap_nats"] = e["recency_gap_nats"]
    out["seeds"] = [r.settings.seed for r in runs]
    for row in results.main_rows():
        for m in results.table[row]:
            out[f"{row}_{m}_heldout_loss_nats_per_seed"] = [r.table[row][m]["heldout_loss"] for r in runs]
    return out


def decisions(summary: dict) -> list[Decision]:
    """The claims of :mod:`pcnn_explore.study.preregistered.conv_cts` decided on the per-seed held-out
    losses of :func:`summary`: App. C's agent-score claim first (not testable on this task), then per
    game's main stream with CTS, ConvCTS and PixelCNN, in the summary's order, the kit's three
    orderings, paired by seed."""
    seeds = list(summary["seeds"])
    tail = "_heldout_loss_nats_per_seed"
    games = [k[: -len("_cts" + tail)] for k in summary if k.endswith("_cts" + tail)]
    out = [decide(plan.agents_claim(seeds))]
    for game in games:
        held = {m: summary.get(f"{game}_{m}{tail}") for m in ("cts", "convcts", "pixelcnn")}
        if all(v is not None for v in held.values()):
            out += [decide(c, held[a], held[b], seeds=seeds) for c, a, b in plan.kit_claims(game, seeds)]
    return out
