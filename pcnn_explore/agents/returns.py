"""Monte Carlo returns and the mixed Monte Carlo (MMC) target (Bellemare et al. 2016; Ostrovski et al. 2017).

Pure maths on numpy arrays, torch tensors or floats; the DQN agent and the replay memory both use it.
"""
from __future__ import annotations

import numpy as np

__all__ = ["check_unit", "discounted_returns", "mixed_mc_target"]


def check_unit(name: str, value: float) -> float:
    """``value`` as a float after checking it lies in [0, 1] (a discount or a mixing weight); ValueError naming ``name`` otherwise."""
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return value


def discounted_returns(rewards, gamma: float) -> np.ndarray:
    """Monte Carlo returns of one episode: ``G_t = r_t + gamma * G_{t+1}``, ``G_T = 0`` after the last reward.

    rewards: 1-D array-like of the episode's rewards in time order. Returns float64 (len(rewards),).
    Example: rewards [1, 0, 2], gamma 0.5 -> [1 + 0.5 * (0 + 0.5 * 2), 0 + 0.5 * 2, 2] = [1.5, 1, 2].
    """
    gamma = check_unit("gamma", gamma)
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 1:
        raise ValueError(f"rewards must be a 1-D sequence (one episode), got shape {r.shape}")
    out = np.empty_like(r)
    g = 0.0
    for t in range(len(r) - 1, -1, -1):
        g = r[t] + gamma * g
        out[t] = g
    return out


def mixed_mc_target(reward, next_q_max, done, mc_return, gamma: float, beta: float):
    """The MMC target ``(1 - beta) * (reward + gamma * (1 - done) * next_q_max) + beta * mc_return``.

    Works elementwise on numpy arrays, torch tensors or floats. ``done`` is 1 where the episode
    terminated at this transition (no bootstrap), 0 otherwise. ``beta = 0``: Q-learning target;
    ``beta = 1``: pure Monte Carlo.
    """
    gamma = check_unit("gamma", gamma)
    beta = check_unit("beta", beta)
    one_step = reward + gamma * (1 - done) * next_q_max
    return (1 - beta) * one_step + beta * mc_return
