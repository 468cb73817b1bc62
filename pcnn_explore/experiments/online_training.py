"""Fig. 2 (left): PixelCNN trained online, on a random permutation, or with replacement.

Paper: on Freeway, with the agent's policy changing every 4K updates to simulate
non-stationarity, "all training methods show qualitatively similar learning progress and
stability". This is why the paper can train its density model completely online (requirement
(a)), so that rho'_n = rho_{n+1} and no update has to be reverted.

Here: a Freeway stream from a "biased" random policy whose action probabilities are redrawn
every ``switch_every`` agent steps (:mod:`pcnn_explore.streams`). ``n_heldout`` frames chosen at
random from the stream are held out; every method trains on the same remaining frames, in its
own order (:func:`~pcnn_explore.experiments.density_training.training_order`), each with a fresh
PixelCNN of the same initial weights. Two loss curves, in nats per frame:

- held-out loss: mean -log rho(x) over the held-out frames (from every policy phase), measured
  every ``eval_every`` updates without training; the same measurement for all three methods;
- incoming-frame loss: -log rho_n(x_n) of each frame just before training on it.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from pcnn_explore.density import PixelCNNDensity
from pcnn_explore.experiments.density_training import (
    TRAINING_ORDERS, DensityExperimentSettings, TrainTrace, check_positive_int, train_stream, training_order)
from pcnn_explore.streams import check_game, load_stream

__all__ = ["OnlineTrainingSettings", "OnlineTrainingResults", "run", "PAPER_CLAIM", "PAPER", "summary", "verdict"]

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
        "smoke": dict(n_frames=90, switch_every=30, n_heldout=10, eval_every=20),
        "study": dict(n_frames=16_000, switch_every=4_000, n_heldout=128, eval_every=1_000),
        "paper": dict(n_frames=100_000, switch_every=4_000, n_heldout=1_000, eval_every=2_000),
    }

    def check(self) -> None:
        super().check()
        check_game(self.game)
        for name in ("n_frames", "switch_every", "n_heldout", "eval_every"):
            check_positive_int(name, getattr(self, name))
        if self.n_heldout >= self.n_frames:
            raise ValueError(f"n_heldout ({self.n_heldout}) must be smaller than n_frames ({self.n_frames})")
        if not self.methods or any(m not in TRAINING_ORDERS for m in self.methods):
            raise ValueError(f"methods must be a non-empty subset of {TRAINING_ORDERS}, got {self.methods!r}")
        if not (isinstance(self.lr, (int, float)) and self.lr > 0):
            raise ValueError(f"lr must be a positive number, got {self.lr!r}")


@dataclasses.dataclass
class OnlineTrainingResults:
    """traces: method -> TrainTrace (indices of ``order`` refer to ``train_index``);
    train_index: (N - n_heldout,) stream indices trained on; heldout_index: (n_heldout,);
    phases: (N,) policy phase of every stream frame."""

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
    rng = np.random.default_rng(settings.seed)
    heldout_index = np.sort(rng.choice(settings.n_frames, size=settings.n_heldout, replace=False))
    train_index = np.setdiff1d(np.arange(settings.n_frames), heldout_index)
    train_frames, eval_frames = stream.frames[train_index], stream.frames[heldout_index]
    traces = {}
    for method in settings.methods:
        order = training_order(len(train_frames), method, np.random.default_rng([settings.seed, TRAINING_ORDERS.index(method)]))
        model = PixelCNNDensity(lr=settings.lr, **settings.model_kwargs("pixelcnn"))
        traces[method] = train_stream(model, train_frames, order, eval_frames=eval_frames,
                                      eval_every=settings.eval_every, progress=settings.progress, desc=method)
    return OnlineTrainingResults(settings=settings, traces=traces, train_index=train_index,
                                 heldout_index=heldout_index, phases=stream.phases)


#: tolerance on the relative spread of final held-out losses for "similar"
SIMILAR_SPREAD = 0.10

PAPER = {
    "relative_spread": "small: 'qualitatively similar learning progress' (Fig. 2 left; no number given)",
    "verdict": PAPER_CLAIM,
}


def verdict(results: OnlineTrainingResults) -> str:
    """One sentence: do the methods end within ``SIMILAR_SPREAD`` of each other?"""
    spread = results.relative_spread()
    final = results.final_heldout_loss()
    order = " < ".join(sorted(final, key=final.get))
    if spread <= SIMILAR_SPREAD:
        return f"similar: final held-out losses within {100 * spread:.1f}% of each other ({order})"
    return f"different: final held-out losses differ by {100 * spread:.1f}% ({order})"


def summary(results: OnlineTrainingResults) -> dict:
    """Key figures for metrics.json (losses in nats per frame)."""
    out: dict = {f"final_heldout_loss_{m}_nats": v for m, v in results.final_heldout_loss().items()}
    out.update({f"worst_heldout_increase_{m}_nats": v for m, v in results.worst_increase().items()})
    out["relative_spread"] = results.relative_spread()
    out["verdict"] = verdict(results)
    return out
