"""Prediction gain -> pseudo-count -> exploration bonus (section 2.1 and 3.4 of the paper).

All log-probabilities are natural logarithms (nats). With rho = rho_n(x) and rho' = rho'_n(x):

- prediction gain        PG = log rho' - log rho
- pseudo-count (exact)   N  = rho (1 - rho') / (rho' - rho)
- its approximation      N ~ 1 / (e^PG - 1)
- the paper's bonus      r+ = N^-1/2 with N = 1 / (e^{c_n PG+} - 1), i.e.
                         r+ = sqrt(expm1(c_n * max(PG, 0))),  c_n = c * n^-1/2 (default c = 0.1)

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
from typing import Any, Callable

import numpy as np

SCHEDULES = ("inverse_sqrt", "inverse", "constant")


# --------------------------------------------------------------------------------------------
# Pure functions (scalars or numpy arrays)
# --------------------------------------------------------------------------------------------


def prediction_gain(log_rho, log_rho_prime):
    """PG_n(x) = log rho'_n(x) - log rho_n(x), in nats."""
    return np.subtract(log_rho_prime, log_rho)


def pseudo_count(log_rho, log_rho_prime):
    """Exact pseudo-count rho (1 - rho') / (rho' - rho), from log-probabilities in nats.

    Computed as exp(log rho - log rho' + log(1 - rho') - log(1 - e^-PG)), which cannot overflow
    in the intermediate steps. +inf where PG <= 0 (the model is not learning-positive there),
    0 where rho = 0 or rho' = 1.
    """
    log_rho = np.asarray(log_rho, dtype=np.float64)
    log_rho_prime = np.asarray(log_rho_prime, dtype=np.float64)
    if np.isnan(log_rho).any() or np.isnan(log_rho_prime).any():
        raise ValueError("log-probabilities must not be NaN")
    if (log_rho_prime > 1e-6).any() or (log_rho > 1e-6).any():
        raise ValueError("log-probabilities must be <= 0 (probabilities <= 1)")
    # float32 models can land a hair above 0 for near-certain frames
    log_rho, log_rho_prime = np.minimum(log_rho, 0.0), np.minimum(log_rho_prime, 0.0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pg = log_rho_prime - log_rho
        log_n = log_rho - log_rho_prime + np.log(-np.expm1(log_rho_prime)) - np.log(-np.expm1(-pg))
        n = np.exp(log_n)
        n = np.where(pg <= 0, np.inf, n)
        n = np.where(np.isneginf(log_rho), 0.0, n)
    return n[()] if n.ndim == 0 else n


def pseudo_count_from_pg(pg):
    """The approximation N ~ 1 / (e^PG - 1); +inf for PG <= 0, 0 for PG = +inf."""
    pg = np.asarray(pg, dtype=np.float64)
    if np.isnan(pg).any():
        raise ValueError("prediction gain must not be NaN")
    with np.errstate(divide="ignore", over="ignore"):
        n = np.where(pg > 0, 1.0 / np.expm1(np.maximum(pg, 0.0)), np.inf)
    return n[()] if n.ndim == 0 else n


def _check_n(n) -> None:
    if np.any(np.asarray(n) < 1):
        raise ValueError(f"n counts density-model updates starting at 1, got {n!r}")


def pg_decay(n, schedule: str = "inverse_sqrt"):
    """PG decay factor at model update n >= 1: n^-1/2 ("inverse_sqrt"), n^-1 ("inverse") or 1."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown PG schedule {schedule!r}: choose one of {', '.join(SCHEDULES)}")
    _check_n(n)
    n = np.asarray(n, dtype=np.float64)
    if schedule == "inverse_sqrt":
        out = 1.0 / np.sqrt(n)
    elif schedule == "inverse":
        out = 1.0 / n
    else:
        out = np.ones_like(n)
    return out[()] if out.ndim == 0 else out


def exploration_bonus(pg, n, scale: float = 0.1, schedule: str = "inverse_sqrt"):
    """The paper's bonus r+ = sqrt(expm1(scale * decay(n) * max(PG, 0))) (reward units).

    ``pg`` in nats, ``n`` the number of model updates so far (>= 1). No overflow warnings: a
    scaled PG beyond ~1419 nats gives +inf, the true value beyond the float range.
    """
    pg = np.asarray(pg, dtype=np.float64)
    if np.isnan(pg).any():
        raise ValueError("prediction gain must not be NaN")
    if not (math.isfinite(scale) and scale >= 0):
        raise ValueError(f"scale must be a finite number >= 0, got {scale!r}")
    scaled = scale * pg_decay(n, schedule) * np.maximum(pg, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        # sqrt(expm1(z)) = exp(z / 2) * sqrt(-expm1(-z)) stays finite up to z ~ 1419.
        bonus = np.where(
            scaled < 700.0,
            np.sqrt(np.expm1(np.minimum(scaled, 700.0))),
            np.exp(scaled / 2.0) * np.sqrt(-np.expm1(-scaled)),
        )
    bonus = np.where(np.isposinf(scaled), np.inf, bonus)
    return bonus[()] if bonus.ndim == 0 else bonus


# --------------------------------------------------------------------------------------------
# The bonus as a stateful object: one density model, its update count, one record per step
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class BonusRecord:
    """What one ``PseudoCountBonus.step`` computed. Log-probabilities and PG in nats.

    ``pseudo_count`` is the exact pseudo-count of the (unscaled) model; ``scaled_pseudo_count``
    is the count the bonus uses, 1 / (e^{c_n PG+} - 1), so ``bonus == scaled_pseudo_count ** -0.5``.
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

    ``scale`` is c, ``schedule`` the PG decay ("inverse_sqrt": c n^-1/2, the paper's; "inverse";
    "constant"). ``step(frame)`` trains the model exactly once on a density frame (H, W) uint8.
    """

    def __init__(self, model, scale: float = 0.1, schedule: str = "inverse_sqrt"):
        if schedule not in SCHEDULES:
            raise ValueError(f"unknown PG schedule {schedule!r}: choose one of {', '.join(SCHEDULES)}")
        if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale >= 0):
            raise ValueError(f"scale must be a finite number >= 0, got {scale!r}")
        self.model = model
        self.scale = float(scale)
        self.schedule = schedule
        self.n = 0  # model updates made through this object

    def step(self, frame: np.ndarray) -> BonusRecord:
        log_rho, log_rho_prime = self.model.update(frame)
        self.n += 1
        pg = log_rho_prime - log_rho
        scaled = self.scale * float(pg_decay(self.n, self.schedule)) * max(pg, 0.0)
        return BonusRecord(
            n=self.n,
            log_rho=log_rho,
            log_rho_prime=log_rho_prime,
            prediction_gain=pg,
            pseudo_count=float(pseudo_count(log_rho, log_rho_prime)),
            scaled_pseudo_count=float(pseudo_count_from_pg(scaled)),
            bonus=float(exploration_bonus(pg, self.n, self.scale, self.schedule)),
        )

    def state_dict(self) -> dict:
        return {"model": self.model.state_dict(), "n": self.n, "scale": self.scale, "schedule": self.schedule}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.n = int(state["n"])
        self.scale = float(state["scale"])
        self.schedule = str(state["schedule"])


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
    turned into (42, 42) 8-level density frames with :func:`pcnn_explore.frames.to_density_frame`.
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
        from pcnn_explore.frames import to_density_frame

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
