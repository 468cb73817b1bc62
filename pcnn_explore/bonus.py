"""Prediction gain -> pseudo-count -> exploration bonus (sections 2.1 and 3.3 of the paper).

All log-probabilities are natural logarithms (nats). With rho = rho_n(x) and rho' = rho'_n(x):

- prediction gain        PG = log rho' - log rho
- pseudo-count (exact)   N  = rho (1 - rho') / (rho' - rho)
- its approximation      N ~ 1 / (e^PG - 1)
- the paper's bonus      r+ = beta N^-1/2 with N = 1 / (e^{c_n PG+} - 1), i.e.
                         r+ = beta sqrt(expm1(c_n * max(PG, 0))),  c_n = c * n^-1/2
                         (reward units; PixelCNN: c = 0.1, beta = 1, the paper's; each density
                         model's form: :data:`PAPER_BONUS_FORM`)

``n`` counts density-model updates, starting at 1 with the first update (never 0). Everything is
computed in log space or with expm1/log1p, so no PG, however large or small, overflows or
divides by zero: a non-positive PG gives pseudo-count +inf and bonus 0; a PG so large that the
bonus exceeds the float range gives bonus +inf (which reward clipping turns into 1).

Which frame is scored: by default the state in which the action was taken (the paper, after
Bellemare et al. 2016): the transition (x_t, a_t, r_t, x_{t+1}) gets r_t + r+(x_t).
"""
from __future__ import annotations

import dataclasses
import math
import sys
from typing import Any, Callable

import numpy as np

from pcnn_explore.names import SCHEDULES

#: the bonus form of each density model, as the paper (or its source) uses it: ``scale`` is c and
#: ``schedule`` its decay over density-model updates n (c_n = c * decay(n)), ``beta`` the factor of
#: the bonus r+ = beta * PC^-1/2 (reward units), PC = 1 / (exp(c_n PG+) - 1). ``TrainConfig``'s
#: auto ``pg_scale``, ``pg_schedule`` and ``bonus_scale`` resolve to the entry of its ``bonus``.
PAPER_BONUS_FORM: dict[str, dict[str, Any]] = {
    # PixelCNN: "PG decay c_n = c * n^-1/2 obtains the best exploration results ... c = 0.1" (paper
    # Sec. 3.3, Computing the Pseudo-Count, and appendix A: "0.1 n^-1/2"); the reward is
    # r + PC^-1/2 (paper Sec. 4, Exploration in Atari 2600 Games): beta = 1
    "pixelcnn": {"scale": 0.1, "schedule": "inverse_sqrt", "beta": 1.0},
    # the same PixelCNN with a per-position bias (the kit's variant of the paper's model): its form
    "pixelcnn_pos": {"scale": 0.1, "schedule": "inverse_sqrt", "beta": 1.0},
    # CTS (and the kit's ConvCTS, a CTS of the same count-based family): the paper applies c_n to
    # PixelCNN only, whose learning rate schedule cannot give PG decay (b); CTS meets (b), PG
    # decaying as n^-1, on its own (an inference: the paper says c_n replaces PG "instead" of a
    # learning-rate schedule for PixelCNN), so no c_n: c = 1, constant. beta = 0.05 is a declared
    # assumption: the paper states no scale for its CTS agents; Bellemare et al. (2016) used
    # beta = 0.05 with r+ = beta (N + 0.01)^-1/2 (the kit keeps the paper's PC^-1/2, without 0.01)
    "cts": {"scale": 1.0, "schedule": "constant", "beta": 0.05},
    "convcts": {"scale": 1.0, "schedule": "constant", "beta": 0.05},
    # the tabular model (exact counts, learning-positive): CTS's form, for the same reasons
    "empirical": {"scale": 1.0, "schedule": "constant", "beta": 0.05},
    # no bonus: the PixelCNN form (unused)
    "none": {"scale": 0.1, "schedule": "inverse_sqrt", "beta": 1.0},
}


def paper_bonus_form(model: str) -> dict[str, Any]:
    """A copy of :data:`PAPER_BONUS_FORM`'s entry of ``model`` (ValueError naming the choices)."""
    if model not in PAPER_BONUS_FORM:
        raise ValueError(f"no bonus form for density model {model!r}: choose one of {', '.join(PAPER_BONUS_FORM)}")
    return dict(PAPER_BONUS_FORM[model])


# --------------------------------------------------------------------------------------------
# Pure functions. Each formula is written once, for Python floats (the per-step hot path uses
# these directly); the public functions also take numpy arrays, element by element.
# --------------------------------------------------------------------------------------------

_LOG_MAX = math.log(sys.float_info.max)  # ~709.78: exp of anything larger overflows


def _elementwise(scalar_fn: Callable[..., float], *args):
    """Apply ``scalar_fn`` to Python/numpy scalars directly, or element-wise over arrays."""
    if all(np.ndim(a) == 0 for a in args):
        return scalar_fn(*(float(a) for a in args))
    return np.vectorize(scalar_fn, otypes=[np.float64])(*args)


def _check_not_nan(*values: float) -> None:
    if any(v != v for v in values):
        raise ValueError("log-probabilities and prediction gains must not be NaN")


def _pseudo_count(log_rho: float, log_rho_prime: float) -> float:
    _check_not_nan(log_rho, log_rho_prime)
    if log_rho > 1e-6 or log_rho_prime > 1e-6:
        raise ValueError(f"log-probabilities must be <= 0 (probabilities <= 1), got {log_rho}, {log_rho_prime}")
    # float32 models can land a hair above 0 for near-certain frames
    log_rho, log_rho_prime = min(log_rho, 0.0), min(log_rho_prime, 0.0)
    if log_rho == -math.inf or log_rho_prime == 0.0:
        return 0.0  # rho = 0, or rho' = 1
    pg = log_rho_prime - log_rho
    if pg <= 0.0:
        return math.inf  # not learning-positive here
    log_n = log_rho - log_rho_prime + math.log(-math.expm1(log_rho_prime)) - math.log(-math.expm1(-pg))
    return math.exp(log_n) if log_n < _LOG_MAX else math.inf


def _pseudo_count_from_pg(pg: float) -> float:
    _check_not_nan(pg)
    if pg <= 0.0:
        return math.inf
    return 1.0 / math.expm1(pg) if pg < _LOG_MAX else math.exp(-pg)


def _pg_decay(n: float, schedule: str) -> float:
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown PG schedule {schedule!r}: choose one of {', '.join(SCHEDULES)}")
    if not n >= 1:
        raise ValueError(f"n counts density-model updates starting at 1, got {n!r}")
    if schedule == "inverse_sqrt":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if schedule == "inverse" else 1.0


def _bonus_from_scaled_pg(scaled: float) -> float:
    """sqrt(expm1(z)) for a scaled, thresholded PG z >= 0, without overflow."""
    if scaled < 700.0:
        return math.sqrt(math.expm1(scaled))
    # sqrt(e^z - 1) = e^(z/2) sqrt(1 - e^-z), finite up to z ~ 1419.6
    return math.exp(scaled / 2.0) * math.sqrt(-math.expm1(-scaled)) if scaled / 2.0 < _LOG_MAX else math.inf


def _scaled_pg(pg: float, n: float, scale: float, schedule: str) -> float:
    """c * decay(n) * max(PG, 0), checking its inputs."""
    _check_not_nan(pg)
    if not (math.isfinite(scale) and scale >= 0):
        raise ValueError(f"scale must be a finite number >= 0, got {scale!r}")
    decay = _pg_decay(n, schedule)
    if pg <= 0.0 or scale == 0.0:
        return 0.0
    return scale * decay * pg


def _exploration_bonus(pg: float, n: float, scale: float, schedule: str) -> float:
    return _bonus_from_scaled_pg(_scaled_pg(pg, n, scale, schedule))


def prediction_gain(log_rho, log_rho_prime):
    """PG_n(x) = log rho'_n(x) - log rho_n(x), in nats."""
    return np.subtract(log_rho_prime, log_rho)


def pseudo_count(log_rho, log_rho_prime):
    """Exact pseudo-count rho (1 - rho') / (rho' - rho), from log-probabilities in nats.

    Computed as exp(log rho - log rho' + log(1 - rho') - log(1 - e^-PG)), which neither
    overflows nor divides by zero however small the probabilities of whole frames are.
    +inf where PG <= 0 (the model is not learning-positive there), 0 where rho = 0 or rho' = 1.
    """
    return _elementwise(_pseudo_count, log_rho, log_rho_prime)


def pseudo_count_from_pg(pg):
    """The approximation N ~ 1 / (e^PG - 1); +inf for PG <= 0, 0 for PG = +inf."""
    return _elementwise(_pseudo_count_from_pg, pg)


def pg_decay(n, schedule: str = "inverse_sqrt"):
    """PG decay factor at model update n >= 1: n^-1/2 ("inverse_sqrt"), n^-1 ("inverse") or 1."""
    return _elementwise(lambda v: _pg_decay(v, schedule), n)


def _check_beta(beta) -> float:
    if isinstance(beta, bool) or not (isinstance(beta, (int, float, np.floating)) and math.isfinite(beta)
                                      and beta >= 0):
        raise ValueError(f"beta (bonus_scale) must be a finite number >= 0, got {beta!r}")
    return float(beta)


def _times(beta: float, bonus: float) -> float:
    """beta * bonus, with beta = 0 giving 0 even where the bonus is +inf."""
    return 0.0 if beta == 0.0 else beta * bonus


def exploration_bonus(pg, n, scale: float = 0.1, schedule: str = "inverse_sqrt", beta: float = 1.0):
    """The paper's bonus r+ = beta * sqrt(expm1(scale * decay(n) * max(PG, 0))) (reward units).

    ``pg`` in nats, ``n`` the number of model updates so far (>= 1); ``beta`` >= 0 (1: the paper's
    PixelCNN form; 0: no bonus). No overflow: a scaled PG beyond ~1419 nats gives +inf (times a
    positive beta), the true value beyond the float range.
    """
    beta = _check_beta(beta)
    return _elementwise(lambda p, m: _times(beta, _exploration_bonus(p, m, float(scale), schedule)), pg, n)


# --------------------------------------------------------------------------------------------
# The bonus as a stateful object: one density model, its update count, one record per step
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class BonusRecord:
    """What one ``PseudoCountBonus.step`` computed. Log-probabilities and PG in nats.

    ``pseudo_count`` is the exact pseudo-count of the (unscaled) model; ``scaled_pseudo_count``
    is the count the bonus uses, 1 / (e^{c_n PG+} - 1); ``bonus`` is the reward actually added,
    beta * scaled_pseudo_count ** -0.5 (reward units; beta = 1: ``scaled_pseudo_count ** -0.5``).
    """

    n: int
    log_rho: float
    log_rho_prime: float
    prediction_gain: float
    pseudo_count: float
    scaled_pseudo_count: float
    bonus: float


class PseudoCountBonus:
    """Trains ``model`` on each scored frame and turns its prediction gain into a bonus.

    ``scale`` is c, ``schedule`` the PG decay ("inverse_sqrt": c n^-1/2, the paper's PixelCNN form;
    "inverse"; "constant"), ``beta`` the factor of the bonus, r+ = beta PC^-1/2 (reward units; 0: the
    model still trains and gives pseudo-counts, no bonus). Each model's form in the paper:
    :data:`PAPER_BONUS_FORM`. ``step(frame)`` trains the model exactly once on a density frame (H, W) uint8.
    """

    def __init__(self, model, scale: float = 0.1, schedule: str = "inverse_sqrt", beta: float = 1.0):
        if schedule not in SCHEDULES:
            raise ValueError(f"unknown PG schedule {schedule!r}: choose one of {', '.join(SCHEDULES)}")
        if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale >= 0):
            raise ValueError(f"scale must be a finite number >= 0, got {scale!r}")
        self.model = model
        self.scale = float(scale)
        self.schedule = schedule
        self.beta = _check_beta(beta)
        self.n = 0  # model updates made through this object

    def step(self, frame: np.ndarray) -> BonusRecord:
        log_rho, log_rho_prime = self.model.update(frame)
        self.n += 1
        pg = log_rho_prime - log_rho
        scaled = _scaled_pg(pg, self.n, self.scale, self.schedule)
        return BonusRecord(
            n=self.n,
            log_rho=log_rho,
            log_rho_prime=log_rho_prime,
            prediction_gain=pg,
            pseudo_count=_pseudo_count(log_rho, log_rho_prime),
            scaled_pseudo_count=_pseudo_count_from_pg(scaled),
            bonus=_times(self.beta, _bonus_from_scaled_pg(scaled)),
        )

    def state_dict(self) -> dict:
        return {"model": self.model.state_dict(), "n": self.n, "scale": self.scale, "schedule": self.schedule,
                "beta": self.beta}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.n = int(state["n"])
        self.scale = float(state["scale"])
        self.schedule = str(state["schedule"])
        self.beta = float(state.get("beta", 1.0))  # states saved before beta existed: r+ = PC^-1/2


# --------------------------------------------------------------------------------------------
# The bonus for any gymnasium environment
# --------------------------------------------------------------------------------------------


def default_frame(observation: Any, env) -> np.ndarray:
    """The RGB frame the density model scores: the observation itself if it is an (H, W, 3)
    uint8 image (ALE ``obs_type="rgb"``), ``observation["image"]`` for dict observations
    (MiniGrid's pixel wrappers), else ``env.render()`` when the env renders ``rgb_array``."""
    for candidate in (observation, observation.get("image") if isinstance(observation, dict) else None):
        if isinstance(candidate, np.ndarray) and candidate.ndim == 3 and candidate.shape[2] == 3 and candidate.dtype == np.uint8:
            return candidate
    if getattr(env, "render_mode", None) == "rgb_array":
        return env.render()
    raise ValueError(
        "cannot find an RGB frame to score: the observation is not an (H, W, 3) uint8 image and the "
        "env does not render rgb_array. Make the env with render_mode='rgb_array' or pass "
        "frame_fn=lambda obs, env: <an (H, W, 3) uint8 image>"
    )


try:  # the wrapper needs gymnasium; the maths above does not
    import gymnasium as gym
except ImportError:  # pragma: no cover
    gym = None


class PseudoCountReward(gym.Wrapper if gym else object):
    """Adds the pseudo-count bonus to any gymnasium env's reward.

    ``density``: "pixelcnn" | "cts" | "convcts" (| "empirical"), or a model instance. Frames are
    turned into (42, 42) 8-level density frames with :func:`pcnn_explore.envs.frames.to_density_frame`.
    ``score``: "state" (default; the state in which the action was taken) or "next_state".
    ``clip``: the total reward r + r+ is clipped to this interval, (-1, 1) by default; None turns
    clipping off. ``info`` gains ``intrinsic_reward``, ``prediction_gain``, ``pseudo_count`` and
    ``extrinsic_reward``.
    """

    def __init__(
        self,
        env,
        density: str | Any = "pixelcnn",
        scale: float = 0.1,
        schedule: str = "inverse_sqrt",
        clip: tuple[float, float] | None = (-1.0, 1.0),
        score: str = "state",
        frame_fn: Callable[[Any, Any], np.ndarray] | None = None,
        height: int = 42,
        width: int = 42,
        levels: int = 8,
        **model_kwargs,
    ):
        if gym is None:  # pragma: no cover
            raise ImportError("PseudoCountReward needs gymnasium: pip install gymnasium")
        super().__init__(env)
        from pcnn_explore.density import make_density

        if score not in ("state", "next_state"):
            raise ValueError(f"score must be 'state' or 'next_state', got {score!r}")
        if clip is not None and not (len(clip) == 2 and clip[0] < clip[1]):
            raise ValueError(f"clip must be None or (low, high) with low < high, got {clip!r}")
        model = make_density(density, height, width, levels, **model_kwargs) if isinstance(density, str) else density
        self.bonus = PseudoCountBonus(model, scale=scale, schedule=schedule)
        self.clip, self.score = clip, score
        self.frame_fn = frame_fn or default_frame
        self.shape = (height, width, levels)
        self._last_frame: np.ndarray | None = None

    def _density_frame(self, observation) -> np.ndarray:
        from pcnn_explore.envs.frames import to_density_frame

        h, w, levels = self.shape
        return to_density_frame(self.frame_fn(observation, self.env), h, w, levels)

    def reset(self, **kwargs):
        observation, info = self.env.reset(**kwargs)
        self._last_frame = self._density_frame(observation) if self.score == "state" else None
        return observation, info

    def step(self, action):
        if self.score == "state" and self._last_frame is None:
            raise RuntimeError("call reset() before step()")
        observation, reward, terminated, truncated, info = self.env.step(action)
        if self.score == "state":
            scored, self._last_frame = self._last_frame, self._density_frame(observation)
        else:
            scored = self._density_frame(observation)
        record = self.bonus.step(scored)
        total = float(reward) + record.bonus
        if self.clip is not None:
            total = min(max(total, self.clip[0]), self.clip[1])
        info = dict(info)
        info.update(
            extrinsic_reward=float(reward),
            intrinsic_reward=record.bonus,
            prediction_gain=record.prediction_gain,
            pseudo_count=record.pseudo_count,
        )
        return observation, total, terminated, truncated, info
