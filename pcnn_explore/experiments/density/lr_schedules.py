"""Fig. 3: PixelCNN loss after long online training, for three learning-rate schedules.

Paper: trained on 1M frames of a random-policy agent, the loss averaged over 10K frames is
lowest for a constant learning rate of 1e-3 or a decaying 0.1 n^-1/2; n^-1 is worst. The paper
chose the constant rate because it was more robust to the choice of initial rate.

Here: for every (schedule, initial rate) of the grid, a fresh PixelCNN (same initial weights) is
trained online on the same uniform-random-policy stream. The rate of update n is ``lr``
("constant"), ``lr / n`` ("inverse") or ``lr / sqrt(n)`` ("inverse_sqrt"). The figure of merit is
the incoming-frame loss -log rho_n(x_n), in nats per frame, averaged over the last
``average_last`` frames. A run whose loss becomes non-finite stops and counts as diverged (NaN).

The claims (:mod:`pcnn_explore.study.preregistered.lr_schedules`, decided by :func:`decisions`) are
decided over ``n_seeds`` independent runs (a fresh stream and PixelCNN weights per seed), paired over seeds:

- the caption: constant 1e-3 has a lower final loss than the best of every other run of the grid;
- the text: the better of constant 1e-3 and 0.1 n^-1/2 has a lower final loss than the best of every
  other run of the grid (each named rate alone against the best unnamed run is its detail);
- n^-1 is worst: n^-1's best run is above the better of the other two schedules' best runs;
- robustness (Sec. 3.2, why the paper kept the constant rate): the spread of final loss across the
  initial rates, ln(worst / best) over the grid's rates (each schedule spans the same factor 100),
  is smaller for the constant schedule than for each decaying one.
Every final loss is capped at a uniform model's, 42 x 42 ln 8 = 3668 nats per frame
(:data:`~pcnn_explore.experiments.density.density_stats.DIVERGED_LOSS`), and a diverged run (NaN)
counts as that cap: a run at or above it has learned nothing a uniform guess does not give, so a NaN
and a finite blow-up (9.2e7 nats) are the same failed run. On the log scale a failed run adds at
most ln(3668 / best) to a spread (about 3.6 for a best of 100 nats), so no single blow-up swamps the
interval over seeds by its size; with 3 seeds one failed run still widens it, which is the honest
answer (inconclusive) for a failure seen on one seed only.

What 10K frames cannot show of the paper's 1M: with n^-1 the rate of update 10K is lr / 10^4, so
n^-1's model has almost stopped learning long before the end and comes last nearly by
construction; the decaying schedules have not reached the small rates they have at 1M frames, so
whether 0.1 n^-1/2 catches up with the constant rate, and whether the constant rate's loss keeps
falling or levels off, is out of reach; and the robustness measured is that of the early loss.
"""
from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

import numpy as np

from pcnn_explore.density import PixelCNNDensity
from pcnn_explore.density.pixelcnn import LR_SCHEDULES
from pcnn_explore.experiments.density.density_stats import DIVERGED_LOSS, capped_log_spread, tail_mean
from pcnn_explore.experiments.density.density_training import (
    DensityExperimentSettings, TrainTrace, check_positive_int, run_seeds, train_stream)
from pcnn_explore.streams import check_game, load_stream
from pcnn_explore.study import Decision, decide
from pcnn_explore.study.preregistered import density as prereg
from pcnn_explore.study.preregistered import lr_schedules as plan

__all__ = ["LrScheduleSettings", "LrScheduleResults", "run", "run_all", "early_curves", "PAPER_CLAIM", "PAPER", "summary", "decisions", "rate_details"]

PAPER_CLAIM = "lowest loss: constant 1e-3 or 0.1 n^-1/2; n^-1 worst (Fig. 3, after 1M frames)"

_GRID = {"constant": (1e-4, 1e-3, 1e-2), "inverse_sqrt": (1e-2, 0.1, 1.0), "inverse": (0.1, 1.0, 10.0)}


@dataclasses.dataclass
class LrScheduleSettings(DensityExperimentSettings):
    """game; n_frames: frames trained on (paper: 1M); average_last: frames the final loss is
    averaged over (paper: 10K); grid: schedule -> initial learning rates; early_updates, early_bin:
    each seed's early curve (:func:`early_curves`) covers the first ``early_updates`` updates, one
    point the mean loss of ``early_bin`` of them."""

    game: str = "Freeway"
    n_frames: int = 10_000
    average_last: int = 2_500
    grid: dict[str, tuple[float, ...]] = dataclasses.field(default_factory=lambda: dict(_GRID))
    early_updates: int = 1_000
    early_bin: int = 10

    PRESETS: ClassVar[dict] = {
        "smoke": dict(n_frames=40, average_last=10, early_updates=20, early_bin=5,
                      grid={"constant": (1e-3,), "inverse_sqrt": (0.1,), "inverse": (1.0,)}, n_seeds=2, workers=1),
        "study": dict(**prereg.preset_fields("03"), **prereg.study_fields("03")),
        "paper": dict(n_frames=1_000_000, average_last=10_000, early_updates=10_000, early_bin=100,
                      grid={"constant": (1e-4, 3e-4, 1e-3, 3e-3, 1e-2), "inverse_sqrt": (1e-2, 3e-2, 0.1, 0.3, 1.0),
                            "inverse": (0.1, 0.3, 1.0, 3.0, 10.0)}, **prereg.preset_fields("03")),
    }

    def check(self) -> None:
        super().check()
        check_game(self.game)
        check_positive_int("n_frames", self.n_frames)
        check_positive_int("average_last", self.average_last)
        if self.average_last > self.n_frames:
            raise ValueError(f"average_last ({self.average_last}) cannot exceed n_frames ({self.n_frames})")
        check_positive_int("early_updates", self.early_updates)
        check_positive_int("early_bin", self.early_bin)
        if self.early_updates > self.n_frames or self.early_updates % self.early_bin:
            raise ValueError(f"early_updates ({self.early_updates}) must be a multiple of early_bin ({self.early_bin}) "
                             f"and at most n_frames ({self.n_frames})")
        if not self.grid:
            raise ValueError("grid is empty: give schedule -> initial rates, e.g. {'constant': (1e-3,)}")
        for schedule, rates in self.grid.items():
            if schedule not in LR_SCHEDULES:
                raise ValueError(f"unknown schedule {schedule!r} in grid: choose from {LR_SCHEDULES}")
            if not rates or any(not (isinstance(r, (int, float)) and math.isfinite(r) and r > 0) for r in rates):
                raise ValueError(f"grid[{schedule!r}] must hold positive initial rates, got {rates!r}")


@dataclasses.dataclass
class LrScheduleResults:
    """traces: (schedule, lr) -> online TrainTrace; final_loss: (schedule, lr) -> mean loss over the
    last ``average_last`` frames, nats per frame (NaN if the run diverged)."""

    settings: LrScheduleSettings
    traces: dict[tuple[str, float], TrainTrace]
    final_loss: dict[tuple[str, float], float]

    def best(self) -> tuple[str, float]:
        """The (schedule, lr) with the lowest final loss."""
        finite = {k: v for k, v in self.final_loss.items() if math.isfinite(v)}
        if not finite:
            raise ValueError("every run diverged")
        return min(finite, key=finite.get)

    def best_per_schedule(self) -> dict[str, tuple[float, float]]:
        """schedule -> (best initial rate, its final loss); NaN loss when all of its runs diverged."""
        out = {}
        for schedule in self.settings.grid:
            runs = {lr: v for (s, lr), v in self.final_loss.items() if s == schedule and math.isfinite(v)}
            out[schedule] = min(runs.items(), key=lambda kv: kv[1]) if runs else (float("nan"), float("nan"))
        return out

    def ranking(self) -> list[str]:
        """Schedules from lowest to highest best final loss (diverged schedules last)."""
        best = self.best_per_schedule()
        return sorted(best, key=lambda s: (not math.isfinite(best[s][1]), best[s][1]))


def run(settings: LrScheduleSettings) -> LrScheduleResults:
    settings.check()
    stream = load_stream(settings.game, settings.n_frames, seed=settings.seed, **settings.stream_options())
    traces, final = {}, {}
    for schedule, rates in settings.grid.items():
        for lr in rates:
            model = PixelCNNDensity(lr=float(lr), lr_schedule=schedule, **settings.model_kwargs("pixelcnn"))
            trace = train_stream(model, stream.frames, progress=settings.progress, desc=f"{schedule} {lr:g}",
                                 stop_if_diverged=True)
            traces[(schedule, float(lr))] = trace
            loss = trace.loss
            final[(schedule, float(lr))] = (tail_mean(loss, settings.average_last) if np.isfinite(loss).all()
                                            else float("nan"))
    return LrScheduleResults(settings=settings, traces=traces, final_loss=final)


_LABELS = {"constant": "constant", "inverse": "n^-1", "inverse_sqrt": "n^-1/2"}

PAPER = {
    "best": "constant 1e-3 (or 0.1 n^-1/2)",
    "ranking": "constant ~ n^-1/2 < n^-1",
    "verdict": PAPER_CLAIM,
}


def run_all(settings: LrScheduleSettings) -> list[LrScheduleResults]:
    """:func:`run` once per seed of ``settings.seeds()``."""
    return run_seeds(run, settings)


def early_curves(runs: list[LrScheduleResults]) -> dict:
    """Each seed's incoming-frame loss over its first updates, per (schedule, initial rate), for
    metrics.json and :func:`pcnn_explore.plots.density.plot_early_curves`.

    Returns ``{"early_updates": U, "early_bin": b, "updates": [b, 2b, ..., U], "seeds": [...],
    "curves": {"<schedule>_<rate:g>": [[point per bin] per seed]}}``: point k of a seed's curve is the
    mean loss (nats per frame, -log rho_n(x_n) before training on x_n) of updates k b + 1 .. (k + 1) b,
    over the finite ones; ``None`` where none is finite (the run diverged before that bin). The runs
    must share their settings but the seed."""
    first = runs[0].settings
    if any(dataclasses.replace(r.settings, seed=first.seed) != first for r in runs):
        raise ValueError("early_curves needs runs of one settings, one per seed: these differ besides the seed")
    u, b = first.early_updates, first.early_bin
    curves = {}
    for key in runs[0].traces:
        per_seed = []
        for r in runs:
            loss = r.traces[key].loss[:u].reshape(u // b, b)
            finite = np.isfinite(loss)
            counts = finite.sum(axis=1)
            sums = np.where(finite, loss, 0.0).sum(axis=1)
            per_seed.append([float(sv / c) if c else None for sv, c in zip(sums, counts)])
        curves[f"{key[0]}_{key[1]:g}"] = per_seed
    return {"early_updates": u, "early_bin": b, "updates": list(range(b, u + 1, b)),
            "seeds": [r.settings.seed for r in runs], "curves": curves}


def summary(runs: list[LrScheduleResults]) -> dict:
    """The first seed's run (the one plotted) unprefixed, and each run's final loss per seed
    (``final_loss_<schedule>_<rate>_nats_per_seed``), the claims' values (:func:`decisions`)."""
    results = runs[0]
    out: dict = {f"final_loss_{s}_{lr:g}_nats": v for (s, lr), v in results.final_loss.items()}
    schedule, lr = results.best()
    out["best"] = f"{_LABELS[schedule]} {lr:g}"
    out["ranking"] = " < ".join(_LABELS[s] for s in results.ranking())
    out["seeds"] = [r.settings.seed for r in runs]
    out.update({f"final_loss_{s}_{lr:g}_nats_per_seed": [r.final_loss[(s, lr)] for r in runs]
                for (s, lr) in results.final_loss})
    return out


def _final_losses(summary: dict) -> dict[tuple[str, float], list[float]]:
    """{(schedule, initial rate): per-seed final loss (nats), capped at :data:`DIVERGED_LOSS`} of
    :func:`summary`, schedules in alphabetical order (constant first), rates increasing. A loss that is
    not finite (None: a diverged run) or lies above the cap counts as the cap: a NaN and a finite
    blow-up are the same failed run."""
    head, tail = "final_loss_", "_nats_per_seed"
    runs = {}
    for key, values in summary.items():
        if key.startswith(head) and key.endswith(tail):
            schedule, lr = key[len(head):-len(tail)].rsplit("_", 1)
            runs[(schedule, float(lr))] = [DIVERGED_LOSS if v is None or not math.isfinite(v) else min(float(v), DIVERGED_LOSS)
                                           for v in values]
    if not runs:
        raise ValueError("03's claims need the per-seed final losses of the summary (final_loss_..._nats_per_seed)")
    return dict(sorted(runs.items()))


def _named_rates(runs: dict[tuple[str, float], list[float]], seeds: list[int]) -> list[Decision]:
    """Each named rate (:data:`~pcnn_explore.study.preregistered.lr_schedules.PAPER_BEST`) in the grid on its
    own against the best unnamed run, paired by seed; none when the grid has no unnamed run."""
    n = len(seeds)
    others = [k for k in runs if k not in plan.PAPER_BEST]
    if not others:
        return []
    best_other = [min(runs[k][i] for k in others) for i in range(n)]
    return [decide(plan.lowest(*k, seeds), runs[k], best_other, seeds=seeds) for k in plan.PAPER_BEST if k in runs]


def rate_details(summary: dict) -> list[Decision]:
    """Each named rate on its own against the best unnamed run (the ``<rate> lowest`` comparisons), decided on
    the per-seed final losses of :func:`summary` (capped, :func:`_final_losses`): the text claim's detail,
    which decides nothing (:data:`~pcnn_explore.study.preregistered.lr_schedules.RERUN_CLAIMS`)."""
    return _named_rates(_final_losses(summary), list(summary["seeds"]))


def _detail(rates: list[Decision]) -> str:
    """The text claim's detail in words: each named rate alone, its estimate, interval and p (deciding nothing)."""
    def one(d: Decision) -> str:
        iv = "" if d.interval is None or None in tuple(d.interval) else \
            f", 95% [{d.interval[0]:.3g}, {d.interval[1]:.3g}]"
        est = "?" if d.estimate is None else f"{d.estimate:.3g}"
        p = "" if d.p is None else f", p = {d.p:.3g}"
        return f"{d.claim.labels[0]} alone - best unnamed rate {est} nats{iv}{p} ({d.word})"
    return ("each named rate alone, deciding nothing: " + "; ".join(one(d) for d in rates)) if rates else ""


def decisions(summary: dict) -> list[Decision]:
    """The claims the re-run decides (:data:`~pcnn_explore.study.preregistered.lr_schedules.RERUN_CLAIMS`),
    on the per-seed final losses of :func:`summary` (capped, :func:`_final_losses`), paired by seed:

    - the caption's ``constant 1e-3 smallest``: constant 1e-3 against the smallest of every other run
      (:func:`~pcnn_explore.study.preregistered.lr_schedules.statement_values`), when the grid has both;
    - the text's ``constant 1e-3 or 0.1 n^-1/2 lowest``: the smaller of the two named runs against the smallest
      of the grid's other runs, when the grid has both named runs and another; each named rate on its own
      against the best unnamed run (:func:`rate_details`) is its ``detail``, deciding nothing;
    - ``n^-1 worst``: n^-1's best against the larger of the other schedules' bests;
    - ``constant more robust than S``: the constant schedule's spread over its rates, ln(worst / best)
      (:func:`~pcnn_explore.experiments.density.density_stats.capped_log_spread`), against each other
      schedule's with more than one rate.

    A grid with one rate per schedule and no unnamed run gives none of the first two and the last."""
    seeds = list(summary["seeds"])
    runs = _final_losses(summary)
    n = len(seeds)
    column = lambda keys: [min(runs[k][i] for k in keys) for i in range(n)]  # noqa: E731
    out = []
    if plan.PAPER_BEST[0] in runs and len(runs) > 1:
        a, b = plan.statement_values(plan.CAPTION, runs)
        out.append(decide(plan.caption_smallest(seeds), a, b, seeds=seeds))
    if all(k in runs for k in plan.PAPER_BEST) and len(runs) > len(plan.PAPER_BEST):
        a, b = plan.statement_values(plan.TEXT, runs)
        out.append(decide(plan.text_lowest(seeds), a, b, seeds=seeds, detail=_detail(_named_rates(runs, seeds))))
    rates = {s: [k for k in runs if k[0] == s] for s in dict.fromkeys(s for s, _ in runs)}
    best = {s: column(keys) for s, keys in rates.items()}
    if "inverse" in best and len(best) > 1:
        rest = [max(best[s][i] for s in best if s != "inverse") for i in range(n)]
        out.append(decide(plan.worst(seeds), best["inverse"], rest, seeds=seeds))
    spread = {s: [capped_log_spread([runs[k][i] for k in keys], DIVERGED_LOSS) for i in range(n)]
              for s, keys in rates.items()}
    if len(rates.get("constant", ())) > 1:
        out += [decide(plan.more_robust(s, seeds), spread["constant"], spread[s], seeds=seeds)
                for s in rates if s != "constant" and len(rates[s]) > 1]  # one rate has no spread to compare
    return out
