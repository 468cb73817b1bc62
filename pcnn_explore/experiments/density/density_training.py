"""Training a density model on a frame stream, and measuring it, for the density experiments.

Orders of presenting a stream of N frames to a model (Fig. 2 left):

- ``"online"``: each frame once, in the order experienced (what the paper's agents do);
- ``"permutation"``: each frame once, in a random order;
- ``"replacement"``: N uniform draws with replacement (some frames twice, some never).

Losses are -log rho in nats per frame. The *incoming-frame loss* of update t is -log rho_t(x)
of the frame about to be trained on (before training on it: prequential). The *held-out loss*
is the mean -log rho(x) over a fixed set of frames from an independent stream, measured without
training.
"""
from __future__ import annotations

import dataclasses
import math
import os
import time

import numpy as np

from pcnn_explore.bonus import prediction_gain
from pcnn_explore.density import DensityModel
from pcnn_explore.profiles import ExperimentSettings, check_profile
from pcnn_explore.streams import load_stream

__all__ = ["TRAINING_ORDERS", "MODEL_NAMES", "seed_list", "check_models", "training_order", "heldout_loss", "heldout_frames",
           "TrainTrace", "train_stream",
           "DensityExperimentSettings", "run_seeds", "seed_workers", "check_positive_int", "check_reading", "resolve_device", "format_value", "paper_rows"]

TRAINING_ORDERS = ("online", "permutation", "replacement")
#: the density models the experiments compare
MODEL_NAMES = ("cts", "convcts", "pixelcnn", "pixelcnn_pos")


def seed_list(seed: int, n_seeds: int) -> tuple[int, ...]:
    """The runs' seeds: ``seed, seed + 2, ..., seed + 2 (n_seeds - 1)``. Every run draws its held-out
    frames from the stream of its seed + 1, so no run's held-out frame is another run's training frame."""
    for name, v, least in (("seed", seed, 0), ("n_seeds", n_seeds, 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < least:
            raise ValueError(f"setting {name} must be an int >= {least}, got {v!r}")
    return tuple(int(seed) + 2 * k for k in range(int(n_seeds)))


def check_models(models) -> None:
    """Raise ValueError unless ``models`` is a non-empty subset of MODEL_NAMES."""
    if not models or any(m not in MODEL_NAMES for m in models):
        raise ValueError(f"models must be a non-empty subset of {MODEL_NAMES}, got {models!r}")


def training_order(n: int, method: str, rng: np.random.Generator) -> np.ndarray:
    """(n,) int64 frame indices in the order ``method`` presents them (see the module docstring)."""
    if method not in TRAINING_ORDERS:
        raise ValueError(f"unknown training order {method!r}: choose one of {', '.join(TRAINING_ORDERS)}")
    if method == "online":
        return np.arange(n, dtype=np.int64)
    if method == "permutation":
        return rng.permutation(n).astype(np.int64)
    return rng.integers(0, n, size=n, dtype=np.int64)


def heldout_loss(model: DensityModel, frames: np.ndarray, batch: int = 64) -> float:
    """Mean -log rho(x) over ``frames`` (B, H, W), in nats per frame; the model is not trained."""
    total = 0.0
    for i in range(0, len(frames), batch):
        total -= float(model.log_prob(frames[i:i + batch]).sum())
    return total / len(frames)


def heldout_frames(game: str, n: int, seed: int, source_frames: int, cache_dir=None, **stream_kw) -> np.ndarray:
    """``n`` frames drawn uniformly without replacement (kept in stream order) from an
    independent stream of ``source_frames`` agent steps of ``game`` generated with ``seed``."""
    if n > source_frames:
        raise ValueError(f"cannot draw {n} held-out frames from a stream of {source_frames}")
    stream = load_stream(game, source_frames, seed=seed, cache_dir=cache_dir, **stream_kw)
    idx = np.sort(np.random.default_rng(seed).choice(source_frames, size=n, replace=False))
    return stream.frames[idx]


@dataclasses.dataclass
class TrainTrace:
    """One model trained on one sequence of frames.

    order: (N,) indices of the stream frames in training order; log_rho, log_rho_prime: (N,)
    nats, from ``model.update`` at each step; eval_steps: (E,) number of updates done when the
    held-out loss was measured (0 = untrained); eval_loss: (E,) held-out loss, nats per frame;
    seconds: wall-clock training time (evaluation included).
    """

    order: np.ndarray
    log_rho: np.ndarray
    log_rho_prime: np.ndarray
    eval_steps: np.ndarray
    eval_loss: np.ndarray
    seconds: float

    @property
    def loss(self) -> np.ndarray:
        """(N,) incoming-frame loss -log rho_n(x_n), nats per frame."""
        return -self.log_rho

    @property
    def pg(self) -> np.ndarray:
        """(N,) prediction gain log rho'_n(x_n) - log rho_n(x_n), nats."""
        return prediction_gain(self.log_rho, self.log_rho_prime)


def train_stream(model: DensityModel, frames: np.ndarray, order: np.ndarray | None = None,
                 eval_frames: np.ndarray | None = None, eval_every: int | None = None,
                 progress: bool = False, desc: str = "training", stop_if_diverged: bool = False) -> TrainTrace:
    """Train ``model`` once on ``frames[order[t]]`` for t = 0..N-1 (``order`` default: online),
    recording log rho and log rho' of each update; with ``eval_frames``, measure the held-out
    loss before training, every ``eval_every`` updates and after the last one.

    With ``stop_if_diverged``, training stops at the first non-finite log rho or log rho' (a
    learning rate too large for the model); the remaining entries are NaN."""
    frames = np.asarray(frames)
    order = np.arange(len(frames), dtype=np.int64) if order is None else np.asarray(order, dtype=np.int64)
    if eval_frames is not None and (eval_every is None or eval_every < 1):
        raise ValueError("eval_every (updates between held-out evaluations) must be a positive int "
                         "when eval_frames is given")
    n = len(order)
    log_rho, log_rho_prime = np.full(n, np.nan), np.full(n, np.nan)
    eval_steps, eval_loss = [], []

    def evaluate(step: int) -> None:
        if eval_frames is not None:
            eval_steps.append(step)
            eval_loss.append(heldout_loss(model, eval_frames))

    start = time.perf_counter()
    evaluate(0)
    steps = range(n)
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc=desc, unit="update", mininterval=2.0)
    for t in steps:
        log_rho[t], log_rho_prime[t] = model.update(frames[order[t]])
        if stop_if_diverged and not (np.isfinite(log_rho[t]) and np.isfinite(log_rho_prime[t])):
            break
        if eval_frames is not None and ((t + 1) % eval_every == 0 or t + 1 == n):
            evaluate(t + 1)
    return TrainTrace(order=order, log_rho=log_rho, log_rho_prime=log_rho_prime,
                      eval_steps=np.asarray(eval_steps, dtype=np.int64), eval_loss=np.asarray(eval_loss),
                      seconds=time.perf_counter() - start)


def check_positive_int(name: str, value: object) -> int:
    """``value`` if it is a positive int, else a ValueError/TypeError naming the setting."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"setting {name} must be an int, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"setting {name} must be a positive int, got {value}")
    return int(value)


@dataclasses.dataclass
class DensityExperimentSettings(ExperimentSettings):
    """Fields every density experiment shares.

    profile: "smoke" | "study" | "paper"; seed: seeds the stream, the model weights and any
    shuffling; cache_dir: where frame streams are cached (None: $PCNN_EXPLORE_CACHE or
    ~/.cache/pcnn-explore); progress: show tqdm bars while training; device: the torch device of
    PixelCNN ("auto": a CUDA GPU when there is one, else the CPU); sticky_actions: the streams'
    repeat-action probability (None: see :meth:`stream_options`); n_seeds: independent runs (a fresh
    stream and model each) the verdict is decided over, with the seeds of :meth:`seeds`; workers:
    processes that run those seeds at once, one torch thread each (0: :func:`seed_workers` chooses,
    one per CPU core up to the seeds on the CPU, 1 with a GPU; 1: one seed after another in this
    process). Every seed's run is the same whichever number runs it. rmsprop: the PixelCNN's optimizer
    reading (:data:`pcnn_explore.names.DENSITY_OPTIMIZERS`), "tf1" the paper's (TensorFlow 1's RMSProp on
    the per-pixel mean cross-entropy) and the default, "torch" the sensitivity reading (torch's form on the
    summed cross-entropy); every PixelCNN of the experiment trains under it, the CTS models ignore it.
    """

    profile: str = "study"
    seed: int = 0
    n_seeds: int = 3
    cache_dir: str | None = None
    progress: bool = False
    device: str = "auto"
    sticky_actions: float | None = None
    workers: int = 0
    rmsprop: str = "tf1"

    def seeds(self) -> tuple[int, ...]:
        """The runs' seeds: ``seed, seed + 2, ...`` (:func:`seed_list`)."""
        return seed_list(self.seed, self.n_seeds)

    def stream_options(self, progress: bool | None = None, policy: str = "random") -> dict:
        """Keyword arguments of :func:`pcnn_explore.streams.load_stream` these settings ask for
        (``policy`` included).

        Sticky actions: ``sticky_actions`` if set, else 0 at the ``paper`` profile (the paper's
        deterministic ALE, as in Mnih et al. 2015) and the ALE v5 default 0.25 otherwise; always 0
        for the explorer (an open-loop route) and the checkpoint's own for a checkpoint.
        """
        sticky = self.sticky_actions if self.sticky_actions is not None else (0.0 if self.profile == "paper" else 0.25)
        if policy == "explorer":
            sticky = 0.0
        elif policy.startswith("checkpoint:"):
            sticky = None
        return {"cache_dir": self.cache_dir, "progress": self.progress if progress is None else progress,
                "sticky_actions": sticky, "policy": policy}

    def check(self) -> None:
        """Raise ValueError/TypeError naming any bad setting (before any heavy work)."""
        check_profile(self.profile)
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ValueError(f"setting seed must be a non-negative int, got {self.seed!r}")
        check_positive_int("n_seeds", self.n_seeds)
        if isinstance(self.workers, bool) or not isinstance(self.workers, (int, np.integer)) or self.workers < 0:
            raise ValueError(f"setting workers must be an int >= 0 (0: one per CPU core), got {self.workers!r}")
        resolve_device(self.device)
        check_reading(self.rmsprop)
        if self.sticky_actions is not None and not (isinstance(self.sticky_actions, (int, float))
                                                    and 0.0 <= self.sticky_actions <= 1.0):
            raise ValueError(f"setting sticky_actions must be a probability in [0, 1] or None, got {self.sticky_actions!r}")

    def model_kwargs(self, name: str) -> dict:
        """Constructor arguments of density model ``name``: the seed (initial weights), the torch device
        and the optimizer reading (``rmsprop``), for the models whose registry entry takes them (PixelCNN)."""
        from pcnn_explore.density import density_spec

        common = {"seed": self.seed, "device": resolve_device(self.device), "rmsprop": self.rmsprop}
        return {k: v for k, v in common.items() if k in density_spec(name).options}


def check_reading(rmsprop: object, setting: str = "rmsprop") -> str:
    """``rmsprop`` if it names a reading of the PixelCNN's RMSProp (:data:`pcnn_explore.names.DENSITY_OPTIMIZERS`),
    else a ValueError naming the choices and the ``setting`` it was given as."""
    from pcnn_explore.names import DENSITY_OPTIMIZERS

    if not isinstance(rmsprop, str) or rmsprop not in DENSITY_OPTIMIZERS:
        raise ValueError(f"setting {setting} must be one of {', '.join(DENSITY_OPTIMIZERS)} (the PixelCNN's optimizer "
                         f"reading: 'tf1' the paper's, 'torch' the sensitivity reading), got {rmsprop!r}")
    return rmsprop


def seed_workers(settings: DensityExperimentSettings, cpus: int | None = None) -> int:
    """Processes that run ``settings``' seeds at once: ``settings.workers`` when above 0 (never more than
    the seeds), else 1 on a GPU device and one per CPU core (``cpus``, default ``os.cpu_count()``) up to
    the number of seeds on the CPU."""
    n = settings.n_seeds
    if settings.workers > 0:
        return max(1, min(settings.workers, n))
    if resolve_device(settings.device) != "cpu":
        return 1
    return max(1, min(cpus or os.cpu_count() or 1, n))


def _one_thread() -> None:
    """A seed worker's start: one torch (and OpenMP/MKL) thread, as batch-1 training runs fastest."""
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    import torch

    torch.set_num_threads(1)


def run_seeds(run, settings: DensityExperimentSettings) -> list:
    """``run(settings)`` once per seed of ``settings.seeds()``: one result per seed, in the seeds' order.

    With :func:`seed_workers` above 1 the seeds run in that many worker processes (multiprocessing's
    ``spawn`` context, a fresh interpreter each, one torch thread; ``run`` must be a module-level
    function), with their progress bars off (a worker's bar would go to the kernel's log, not the
    notebook); a run that raises raises here. Each run depends on its seed alone, so the results are
    those of running the seeds one after another in a one-thread process."""
    settings.check()
    seeds = settings.seeds()
    workers = seed_workers(settings)
    if workers == 1:
        return [run(dataclasses.replace(settings, seed=s)) for s in seeds]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    each = [dataclasses.replace(settings, seed=s, progress=False, workers=1) for s in seeds]
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_one_thread) as pool:
        results = list(pool.map(run, each))
    for r, s in zip(results, seeds):  # (the settings as given, as a run in this process holds them)
        if dataclasses.is_dataclass(r) and hasattr(r, "settings"):
            r.settings = dataclasses.replace(settings, seed=s)
    return results


def resolve_device(device: str) -> str:
    """"auto" -> "cuda" when a GPU is available, else "cpu"; "cpu"/"cuda"/"cuda:N" are checked.

    PixelCNN is the only model that uses it; the CTS models always run on the CPU.
    """
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not isinstance(device, str) or not (device == "cpu" or device.startswith("cuda")):
        raise ValueError(f"setting device must be 'auto', 'cpu' or 'cuda[:N]', got {device!r}")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for but no CUDA GPU is available; use device='auto' or 'cpu'")
    return device


def format_value(value: object) -> str:
    """A figure for a paper-versus-run table: floats to 4 significant digits, NaN as 'n/a'; a list
    (one value per seed) as its values, comma-separated."""
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v) for v in value)
    if isinstance(value, float):
        return "n/a" if not math.isfinite(value) else f"{value:.4g}"
    return str(value)


def paper_rows(summary: dict, paper: dict) -> list[tuple[str, str, str]]:
    """(quantity, paper, this run) rows for :func:`pcnn_explore.report.paper_vs_run`: every
    summary entry, with the paper's entry of the same name (or "-" where the paper gives none)."""
    return [(k, str(paper.get(k, "-")), format_value(v)) for k, v in summary.items()]
