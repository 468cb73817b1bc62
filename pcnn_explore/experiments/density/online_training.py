"""Fig. 2 (left): PixelCNN trained online, on a random permutation, or with replacement.

Paper: on Freeway, with the agent's policy changing every 4K updates to simulate
non-stationarity, "all training methods show qualitatively similar learning progress and
stability". This is why the paper can train its density model completely online (requirement
(a)), so that rho'_n = rho_{n+1} and no update has to be reverted.

Here: a Freeway stream from a "biased" random policy whose action probabilities are redrawn
every ``switch_every`` agent steps (:mod:`pcnn_explore.streams`). ``n_heldout`` held-out frames
are drawn from an independent stream of the same policy (seed + 1); every method trains on all
frames of the stream, in its own order (:func:`~pcnn_explore.experiments.density.density_training.training_order`), each with a fresh
PixelCNN of the same initial weights. Two loss curves, in nats per frame:

- held-out loss: mean -log rho(x) over the held-out frames (from every policy phase), measured
  every ``eval_every`` updates without training; the same measurement for all three methods;
- incoming-frame loss: -log rho_n(x_n) of each frame just before training on it.

The paper compares learning curves, not end points, so the verdict compares the held-out curves
(:func:`compare_curves`): their area (the mean held-out loss over training, trapezoidal in updates)
and their largest rise between successive evaluations (instability). It is decided over
``n_seeds`` independent runs (a fresh stream, held-out set and PixelCNN per seed) with a stated
equivalence margin (:func:`decisions`, the claims of :mod:`pcnn_explore.study.preregistered.online_vs_shuffled`): for each
other order, the relative area difference to online training, area_m / area_online - 1, and the
difference of the largest rise's share of the area, each within +-10% at 95%.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from pcnn_explore.density import PixelCNNDensity
from pcnn_explore.experiments.density.density_training import (
    TRAINING_ORDERS, DensityExperimentSettings, TrainTrace, check_positive_int, run_seeds, train_stream,
    training_order)
from pcnn_explore.streams import check_game, load_stream
from pcnn_explore.study import Decision, decide
from pcnn_explore.study.preregistered import density as prereg
from pcnn_explore.study.preregistered import online_vs_shuffled as plan

__all__ = ["OnlineTrainingSettings", "OnlineTrainingResults", "run", "run_all", "PAPER_CLAIM", "PAPER", "summary",
           "decisions", "curve_area", "largest_increase", "compare_curves", "comparison"]

PAPER_CLAIM = "online, random-permutation and with-replacement training: qualitatively similar learning progress and stability (Fig. 2 left)"


@dataclasses.dataclass
class OnlineTrainingSettings(DensityExperimentSettings):
    """game: ALE game; n_frames: stream length (agent steps); switch_every: agent steps per policy
    phase (paper: 4K); methods: subset of ("online", "permutation", "replacement"); lr: PixelCNN
    learning rate (constant); n_heldout: frames held out for the held-out loss; eval_every: updates
    between held-out evaluations."""

    game: str = "Freeway"
    n_frames: int = 16_000
    switch_every: int = 4_000
    methods: tuple[str, ...] = TRAINING_ORDERS
    lr: float = 1e-3
    n_heldout: int = 128
    eval_every: int = 1_000

    PRESETS: ClassVar[dict] = {
        "smoke": dict(n_frames=90, switch_every=30, n_heldout=10, eval_every=20, n_seeds=2, workers=1),
        "study": dict(n_frames=16_000, switch_every=4_000, n_heldout=128, eval_every=1_000, **prereg.preset_fields("01")),
        "paper": dict(n_frames=100_000, switch_every=4_000, n_heldout=1_000, eval_every=2_000, **prereg.preset_fields("01")),
    }

    def check(self) -> None:
        super().check()
        check_game(self.game)
        for name in ("n_frames", "switch_every", "n_heldout", "eval_every"):
            check_positive_int(name, getattr(self, name))
        if self.n_heldout > self.n_frames:
            raise ValueError(f"n_heldout ({self.n_heldout}) cannot exceed n_frames ({self.n_frames}), the length "
                             "of the independent stream it is drawn from")
        if not self.methods or any(m not in TRAINING_ORDERS for m in self.methods):
            raise ValueError(f"methods must be a non-empty subset of {TRAINING_ORDERS}, got {self.methods!r}")
        if not (isinstance(self.lr, (int, float)) and self.lr > 0):
            raise ValueError(f"lr must be a positive number, got {self.lr!r}")


@dataclasses.dataclass
class OnlineTrainingResults:
    """traces: method -> TrainTrace (indices of ``order`` refer to ``train_index``);
    train_index: (N,) stream indices trained on; heldout_index: (n_heldout,) indices of the held-out
    frames in the independent stream (seed + 1); phases: (N,) policy phase of every stream frame."""

    settings: OnlineTrainingSettings
    traces: dict[str, TrainTrace]
    train_index: np.ndarray
    heldout_index: np.ndarray
    phases: np.ndarray

    def final_heldout_loss(self) -> dict[str, float]:
        """method -> held-out loss after the last update, nats per frame."""
        return {m: float(t.eval_loss[-1]) for m, t in self.traces.items()}

    def relative_spread(self) -> float:
        """(max - min) / min of the final held-out losses: 0 when all methods end equal."""
        final = np.array(list(self.final_heldout_loss().values()))
        return float((final.max() - final.min()) / final.min())

    def worst_increase(self) -> dict[str, float]:
        """method -> largest rise of the held-out loss between successive evaluations, nats
        (a measure of instability, e.g. after a policy switch); 0 if it never rises."""
        return {m: float(max(0.0, np.diff(t.eval_loss).max(initial=0.0))) for m, t in self.traces.items()}


def run(settings: OnlineTrainingSettings) -> OnlineTrainingResults:
    """Train one PixelCNN per method on the same frames; see the module docstring."""
    settings.check()
    stream = load_stream(settings.game, settings.n_frames, seed=settings.seed,
                         switch_every=settings.switch_every, **settings.stream_options(policy="biased"))
    heldout_stream = load_stream(settings.game, settings.n_frames, seed=settings.seed + 1,
                                 switch_every=settings.switch_every,
                                 **settings.stream_options(progress=False, policy="biased"))
    rng = np.random.default_rng(settings.seed)
    heldout_index = np.sort(rng.choice(settings.n_frames, size=settings.n_heldout, replace=False))
    train_index = np.arange(settings.n_frames)
    train_frames, eval_frames = stream.frames, heldout_stream.frames[heldout_index]
    traces = {}
    for method in settings.methods:
        order = training_order(len(train_frames), method, np.random.default_rng([settings.seed, TRAINING_ORDERS.index(method)]))
        model = PixelCNNDensity(lr=settings.lr, **settings.model_kwargs("pixelcnn"))
        traces[method] = train_stream(model, train_frames, order, eval_frames=eval_frames,
                                      eval_every=settings.eval_every, progress=settings.progress, desc=method)
    return OnlineTrainingResults(settings=settings, traces=traces, train_index=train_index,
                                 heldout_index=heldout_index, phases=stream.phases)


def run_all(settings: OnlineTrainingSettings) -> list[OnlineTrainingResults]:
    """:func:`run` once per seed of ``settings.seeds()``."""
    return run_seeds(run, settings)


#: tolerance on the relative spread of the curves' areas (and of final losses) for "similar"
SIMILAR_SPREAD = plan.ORDER_MARGIN
#: a curve is "stable" when its largest rise is at most this share of its area (mean level)
STABLE_RISE = 0.10


def curve_area(steps, loss) -> float:
    """Mean of a held-out loss curve over training, nats per frame: the trapezoidal area under
    ``loss`` ((E,) nats) against ``steps`` ((E,) updates, increasing) divided by the span."""
    steps, loss = np.asarray(steps, dtype=np.float64), np.asarray(loss, dtype=np.float64)
    if steps.shape != loss.shape or steps.ndim != 1 or len(steps) < 2:
        raise ValueError(f"a curve needs matching 1-D steps and losses with at least 2 points, got {steps.shape}, {loss.shape}")
    if not np.all(np.diff(steps) > 0):
        raise ValueError("curve steps must increase")
    return float(np.sum((loss[1:] + loss[:-1]) / 2 * np.diff(steps)) / (steps[-1] - steps[0]))


def largest_increase(loss) -> float:
    """Largest rise of a curve between successive evaluations, nats (0 if it never rises)."""
    return float(max(0.0, np.diff(np.asarray(loss, dtype=np.float64)).max(initial=0.0)))


def compare_curves(curves: dict) -> dict:
    """``curves``: method -> (steps, loss). Returns area[method], increase[method] (nats),
    area_spread ((max - min) / min of the areas), similar (spread <= SIMILAR_SPREAD), stable
    (every largest rise <= STABLE_RISE of that curve's area) and the methods ranked by area."""
    area = {m: curve_area(*c) for m, c in curves.items()}
    rise = {m: largest_increase(c[1]) for m, c in curves.items()}
    values = np.array(list(area.values()))
    spread = float((values.max() - values.min()) / values.min())
    return {"area": area, "increase": rise, "area_spread": spread, "similar": spread <= SIMILAR_SPREAD,
            "stable": all(rise[m] <= STABLE_RISE * area[m] for m in curves),
            "ranking": sorted(area, key=area.get)}


PAPER = {
    "relative_spread": "small: 'qualitatively similar learning progress' (Fig. 2 left; no number given)",
    "heldout_area_spread": "small: similar learning curves (Fig. 2 left; no number given)",
    "verdict": PAPER_CLAIM,
}


def comparison(results: OnlineTrainingResults) -> dict:
    """:func:`compare_curves` of the held-out curves of ``results``."""
    return compare_curves({m: (t.eval_steps, t.eval_loss) for m, t in results.traces.items()})


def decisions(summary: dict) -> list[Decision]:
    """The claims of :mod:`pcnn_explore.study.preregistered.online_vs_shuffled` decided on the per-seed
    values of :func:`summary` (``heldout_area_<order>_nats_per_seed``, ``worst_heldout_increase_<order>_
    nats_per_seed``, ``seeds``): per order other than online, its relative area and its rise share
    against online's, online's area the positive control. What metrics.json's claims record holds
    (:func:`pcnn_explore.study.metrics_record`), at the first render and for a report migrated to it."""
    seeds = list(summary["seeds"])
    orders = sorted(k[len("heldout_area_"):-len("_nats_per_seed")] for k in summary
                    if k.startswith("heldout_area_") and k.endswith("_nats_per_seed"))
    if "online" not in orders or len(orders) < 2:
        raise ValueError("01's claims compare every order with online training: the summary needs the per-seed "
                         "areas of online training and of at least one other order")
    per_seed = lambda key: np.asarray([np.nan if v is None else v for v in summary[key]], dtype=np.float64)  # noqa: E731
    base = per_seed("heldout_area_online_nats_per_seed")
    base_share = per_seed("worst_heldout_increase_online_nats_per_seed") / base
    out = []
    for m in (o for o in orders if o != "online"):
        area, rise = per_seed(f"heldout_area_{m}_nats_per_seed"), per_seed(f"worst_heldout_increase_{m}_nats_per_seed")
        progress, stability = plan.claims(m, seeds)
        out.append(decide(progress, list(area / base - 1.0), [0.0] * len(seeds), seeds=seeds, control=list(base)))
        out.append(decide(stability, list(rise / area), list(base_share), seeds=seeds, control=list(base)))
    return out


def summary(runs: list[OnlineTrainingResults]) -> dict:
    """Key figures for metrics.json (losses in nats per frame): the first seed's run (the one plotted)
    unprefixed, and each order's area and largest rise per seed (``..._per_seed``), the claims' quantities
    (:func:`decisions`)."""
    results = runs[0]
    c = comparison(results)
    out: dict = {f"final_heldout_loss_{m}_nats": v for m, v in results.final_heldout_loss().items()}
    out.update({f"worst_heldout_increase_{m}_nats": v for m, v in results.worst_increase().items()})
    out.update({f"heldout_area_{m}_nats": v for m, v in c["area"].items()})
    out["heldout_area_spread"] = c["area_spread"]
    out["relative_spread"] = results.relative_spread()
    out["seeds"] = [r.settings.seed for r in runs]
    cs = [comparison(r) for r in runs]
    for m in c["area"]:
        out[f"heldout_area_{m}_nats_per_seed"] = [x["area"][m] for x in cs]
        out[f"worst_heldout_increase_{m}_nats_per_seed"] = [x["increase"][m] for x in cs]
    return out
