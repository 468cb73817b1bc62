"""Notebook 00: pseudo-counts from density models (sections 2.1, 3.3, 5 and 7 of the paper).

Three studies on one real Atari frame stream (random policy on Montezuma's Revenge):

1. ``tabular``: the empirical model rho_n(x) = N_n(x) / n, whose pseudo-count is the real count.
2. ``stream``: CTS and PixelCNN trained online on the stream through
   :class:`pcnn_explore.bonus.PseudoCountBonus`: log rho, log rho', PG, pseudo-count, bonus.
3. ``repeats``: one frame shown again every ``repeat_every`` steps between stream frames; its
   pseudo-count at each visit against its real visit count so far: the model's own (unscaled)
   pseudo-count 1 / (e^PG - 1), and the one the agent's bonus uses, scaled by the PG decay,
   1 / (e^{c n^-1/2 PG+} - 1) (section 3.3; n the model updates so far, c = ``scale``).
4. ``schedules``: the bonus the PixelCNN's PG would give under each PG decay schedule.

All PG values are in nats; steps are agent steps (one density-model update each).

The verdict takes the paper's statement of Sec. 5 ("Another distinguishing feature of PixelCNN is its
non-decaying step-size. The per-step PG never completely vanishes, as the model tracks the most recent
data") and Sec. 7 ("because of the non-decaying step-size the PG does not vanish"). Measured per seed on
the repeated frame: the exponent b of PG ~ k^b over its visits k = 1, 2, ... (the least-squares slope
of ln PG against ln k, :func:`~pcnn_explore.experiments.density.density_stats.pg_decay_exponent`). A
count's PG, ln(1 + 1/k), has b about -1 and CTS's comes near it; a PG that levels off has b = 0. The
claim is b > -1/2 (:data:`~pcnn_explore.study.preregistered.pseudo_counts.PG_EXPONENT_FLOOR`),
decided over ``n_seeds`` independent runs (a fresh stream and models per seed) by the exact sign-flip
test of b - (-1/2) (:func:`decisions`, the claims of :mod:`pcnn_explore.study.preregistered.pseudo_counts`):
a PixelCNN whose PG decays like a count's makes it differ. CTS's exponents are shown beside it. The pseudo-count's slope against
the real count is kept as a figure only: below 1 for any model whose pseudo-count grows slower than a
count, CTS's included, so it cannot tell a PG that vanishes slowly from one that does not vanish.
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from pcnn_explore.bonus import SCHEDULES, PseudoCountBonus, exploration_bonus, pseudo_count
from pcnn_explore.density import EmpiricalDensity, make_density
from pcnn_explore.experiments.density.density_stats import pg_decay_exponent
from pcnn_explore.experiments.density.density_training import check_reading, seed_list
from pcnn_explore.envs.frames import DENSITY_LEVELS
from pcnn_explore.profiles import ExperimentSettings
from pcnn_explore.streams import FrameStream, load_stream
from pcnn_explore.study import Decision, decide
from pcnn_explore.study.preregistered import density as prereg
from pcnn_explore.study.preregistered import pseudo_counts as plan


@dataclasses.dataclass
class PseudoCountSettings(ExperimentSettings):
    profile: str = "study"
    seed: int = 0
    game: str = "MontezumaRevenge"
    n_frames: int = 3000  # agent steps of the random-policy stream
    models: tuple[str, ...] = ("cts", "pixelcnn")
    scale: float = 0.1  # c of the bonus
    repeat_every: int = 20  # the repeated frame comes back every this many steps
    n_repeats: int = 60  # visits of the repeated frame
    pixelcnn_lr: float = 1e-3
    n_seeds: int = 3  # independent runs the verdict is decided over, seeds seed, seed + 2, ...
    rmsprop: str = "tf1"  # the PixelCNN's optimizer reading: tf1 (the paper's) or torch (sensitivity)

    PRESETS: ClassVar[dict] = {
        "smoke": dict(n_frames=120, repeat_every=5, n_repeats=8, n_seeds=2),
        "study": dict(n_frames=3000, repeat_every=20, n_repeats=60, **prereg.preset_fields("00")),
        "paper": dict(n_frames=20000, repeat_every=50, n_repeats=300, **prereg.preset_fields("00")),
    }


    def seeds(self) -> tuple[int, ...]:
        """The runs' seeds (:func:`~pcnn_explore.experiments.density.density_training.seed_list`)."""
        return seed_list(self.seed, self.n_seeds)

    def check(self) -> None:
        """Raise ValueError naming a bad seed setting or optimizer reading (before any run)."""
        self.seeds()
        check_reading(self.rmsprop)


@dataclasses.dataclass
class ModelTrace:
    """Per-step records of one model over a frame sequence, arrays of shape (steps,)."""

    model: str
    log_rho: np.ndarray
    log_rho_prime: np.ndarray
    prediction_gain: np.ndarray
    pseudo_count: np.ndarray
    bonus: np.ndarray
    scaled_pseudo_count: np.ndarray  # 1 / (e^{c n^-1/2 PG+} - 1), what the bonus uses (bonus = its ^-1/2)


@dataclasses.dataclass
class RepeatTrace:
    """Visits of one repeated frame: real count before each visit, the model's (unscaled)
    pseudo-count and the agent's scaled one, 1 / (e^{c n^-1/2 PG+} - 1)."""

    model: str
    real_count: np.ndarray
    pseudo_count: np.ndarray
    prediction_gain: np.ndarray
    scaled_pseudo_count: np.ndarray


@dataclasses.dataclass
class PseudoCountResults:
    settings: PseudoCountSettings
    stream: FrameStream
    tabular_real_count: np.ndarray  # (steps,) N_n(x_n) before the update; -1 where undefined
    tabular_pseudo_count: np.ndarray  # (steps,)
    traces: dict[str, ModelTrace]
    repeats: dict[str, RepeatTrace]
    schedule_bonus: dict[str, np.ndarray]  # schedule -> (steps,) bonus from PixelCNN's (or first model's) PG


def run_bonus(model, frames: np.ndarray, scale: float, name: str) -> ModelTrace:
    """Train ``model`` online on ``frames`` (N, H, W) through PseudoCountBonus; one record per frame."""
    bonus = PseudoCountBonus(model, scale=scale)
    records = [bonus.step(f) for f in frames]
    column = lambda key: np.array([getattr(r, key) for r in records], np.float64)  # noqa: E731
    return ModelTrace(name, column("log_rho"), column("log_rho_prime"), column("prediction_gain"), column("pseudo_count"),
                      column("bonus"), column("scaled_pseudo_count"))


def tabular_counts(frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(real count before each update, pseudo-count of the empirical model) for each frame.

    Where only one distinct frame has been seen, rho = rho' = 1 and the pseudo-count is 0/0; those
    steps are marked -1 in both arrays.
    """
    model = EmpiricalDensity(*frames.shape[1:], levels=DENSITY_LEVELS)
    real, pseudo = [], []
    for f in frames:
        n_before = model.count(f)
        log_rho, log_rho_prime = model.update(f)
        defined = not (log_rho == 0.0 and log_rho_prime == 0.0)
        real.append(n_before if defined else -1)
        pseudo.append(float(pseudo_count(log_rho, log_rho_prime)) if defined else -1.0)
    return np.array(real), np.array(pseudo)


def repeated_frame_sequence(frames: np.ndarray, every: int, n_repeats: int) -> tuple[np.ndarray, np.ndarray]:
    """Interleave the stream's first frame ``n_repeats`` times, once every ``every`` steps.

    Returns (sequence (M, H, W), indices of the repeated frame's visits in the sequence).
    """
    target, others = frames[0], frames[1:]
    seq, visits, k = [], [], 0
    for r in range(n_repeats):
        visits.append(len(seq))
        seq.append(target)
        for _ in range(every - 1):
            seq.append(others[k % len(others)])
            k += 1
    return np.stack(seq), np.array(visits)


def run(settings: PseudoCountSettings) -> PseudoCountResults:
    """Run the three studies; the stream is cached (see :mod:`pcnn_explore.streams`)."""
    import torch

    settings.check()

    torch.set_num_threads(1)  # batch-1 PixelCNN steps are fastest single-threaded
    stream = load_stream(settings.game, settings.n_frames, seed=settings.seed)
    frames = stream.frames
    real, pseudo = tabular_counts(frames)

    def new_model(name: str):
        # each model takes what it uses (the PixelCNN its optimizer reading)
        return make_density(name, seed=settings.seed, lr=settings.pixelcnn_lr, rmsprop=settings.rmsprop)

    traces = {name: run_bonus(new_model(name), frames, settings.scale, name) for name in settings.models}
    seq, visits = repeated_frame_sequence(frames, settings.repeat_every, settings.n_repeats)
    repeats = {}
    for name in settings.models:
        trace = run_bonus(new_model(name), seq, settings.scale, name)
        repeats[name] = RepeatTrace(name, np.arange(len(visits)), trace.pseudo_count[visits], trace.prediction_gain[visits],
                                    trace.scaled_pseudo_count[visits])
    reference = traces.get("pixelcnn") or next(iter(traces.values()))
    n = np.arange(1, len(frames) + 1)
    schedule_bonus = {s: exploration_bonus(reference.prediction_gain, n, settings.scale, s) for s in SCHEDULES}
    return PseudoCountResults(settings, stream, real, pseudo, traces, repeats, schedule_bonus)


def count_slope(real_count: np.ndarray, pseudo: np.ndarray) -> float:
    """Least-squares slope of pseudo-count against real count over finite points (1 = a real count)."""
    ok = np.isfinite(pseudo)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(real_count[ok], pseudo[ok], 1)[0])


def summarise(results: PseudoCountResults) -> dict:
    """Key figures for metrics.json (``summary``/``paper`` sub-dicts follow the reproduce convention)."""
    defined = results.tabular_real_count >= 0
    tab_err = float(np.max(np.abs(results.tabular_pseudo_count[defined] - results.tabular_real_count[defined]))) if defined.any() else 0.0
    summary = {"n_frames": len(results.stream), "tabular_max_abs_count_error": tab_err}
    for name, t in results.traces.items():
        summary[f"{name}_mean_pg_nats"] = float(np.mean(t.prediction_gain))
        summary[f"{name}_median_pseudo_count"] = float(np.median(t.pseudo_count))
        summary[f"{name}_median_bonus"] = float(np.median(t.bonus))
        r = results.repeats[name]
        summary[f"{name}_repeat_count_slope"] = count_slope(r.real_count, r.pseudo_count)
        summary[f"{name}_repeat_pg_exponent"] = pg_decay_exponent(r.real_count, r.prediction_gain)
        summary[f"{name}_repeat_final_pseudo_count"] = float(r.pseudo_count[-1])
        summary[f"{name}_repeat_final_scaled_pseudo_count"] = float(r.scaled_pseudo_count[-1])
    half = len(results.stream) // 2
    for s, b in results.schedule_bonus.items():
        summary[f"bonus_{s}_second_half_mean"] = float(np.mean(b[half:]))
    paper = {
        "tabular_max_abs_count_error": "0: the empirical model's pseudo-count is the real count (Sec. 2.1)",
        "cts_repeat_count_slope": "above 0: CTS's pseudo-count grows with the real count (Sec. 2.1; Bellemare et al. "
                                  "2016); the verdict's first claim, over seeds",
        "pixelcnn_repeat_count_slope": "no number given; PixelCNN's own pseudo-count stays small while its PG does not "
                                       "vanish, so it is not held to this claim",
        "cts_repeat_pg_exponent": "no number given; a count's PG ln(1 + 1/k) has about -1",
        "pixelcnn_repeat_pg_exponent": "above -1/2: with its non-decaying step size the per-step PG never completely "
                                       "vanishes (Sec. 5, Sec. 7)",
        "bonus_inverse_sqrt_second_half_mean": "c n^-1/2 PG with c = 0.1 is the paper's choice (Sec. 3.3)",
        "pixelcnn_repeat_final_scaled_pseudo_count": "the count the agent's bonus uses, 1 / (e^{c n^-1/2 PG+} - 1) "
                                                     "(Sec. 3.3): the PG decay makes it grow (no number given)",
    }
    return {"summary": summary, "paper": paper}


def run_all(settings: PseudoCountSettings) -> list[PseudoCountResults]:
    """:func:`run` once per seed of ``settings.seeds()`` (the seeds and the reading are checked first)."""
    settings.check()
    return [run(dataclasses.replace(settings, seed=s)) for s in settings.seeds()]


PAPER_CLAIM = ("pseudo-counts grow with real counts (Sec. 2.1; CTS, as in Bellemare et al. 2016), and PixelCNN's "
               "non-decaying step size: \"the per-step PG never completely vanishes, as the model tracks the most recent "
               "data\" (Sec. 5; Sec. 7: \"the PG does not vanish\")")


def summarise_all(runs: list[PseudoCountResults]) -> dict:
    """:func:`summarise` of the first seed's run (the one plotted), and the repeat-count slopes and PG
    exponents per seed (``..._per_seed``), the claims' quantities (:func:`decisions`)."""
    out = summarise(runs[0])
    summary = out["summary"]
    summary["seeds"] = [r.settings.seed for r in runs]
    for name in runs[0].repeats:
        summary[f"{name}_repeat_count_slope_per_seed"] = [
            count_slope(r.repeats[name].real_count, r.repeats[name].pseudo_count) for r in runs]
        summary[f"{name}_repeat_pg_exponent_per_seed"] = [
            pg_decay_exponent(r.repeats[name].real_count, r.repeats[name].prediction_gain) for r in runs]
    out["paper"]["verdict"] = PAPER_CLAIM
    return out


def decisions(summary: dict) -> list[Decision]:
    """The claims of :mod:`pcnn_explore.study.preregistered.pseudo_counts` decided on the per-seed values
    of :func:`summarise_all`'s summary: CTS's repeat-count slopes against 0
    (``cts_repeat_count_slope_per_seed``), PixelCNN's PG exponents against the floor
    (``pixelcnn_repeat_pg_exponent_per_seed``); each where its model ran."""
    seeds = list(summary["seeds"])
    out = []
    if "cts_repeat_count_slope_per_seed" in summary:
        out.append(decide(plan.counts_claim(seeds), summary["cts_repeat_count_slope_per_seed"]))
    if "pixelcnn_repeat_pg_exponent_per_seed" in summary:
        out.append(decide(plan.pg_claim(seeds), summary["pixelcnn_repeat_pg_exponent_per_seed"]))
    return out
