"""Retrace(lambda) (Munos et al. 2016) targets for replayed sequences, as Reactor uses them.

For a replayed sequence x_0, a_0, r_0, x_1, a_1, r_1, ..., x_T (T transitions; a_T is the action
taken in x_T, if any)::

    Q^ret_t = r_t + gamma_t [ c_{t+1} (Q^ret_{t+1} - Q(x_{t+1}, a_{t+1})) + V(x_{t+1}) ],   Q^ret_T = Q(x_T, a_T)
    V(x) = sum_a pi(a|x) Q(x, a)
    c_s = lambda min(1, pi(a_s|x_s) / mu(a_s|x_s))

with gamma_t the discount of step t (0 where the episode terminated at step t). The last target is
therefore ``r_{T-1} + gamma V(x_T)`` whatever c_T is. Unrolled, with Q^ret_T = Q(x_T, a_T)::

    Q^ret_t = Q(x_t, a_t) + sum_{k=t}^{T-1} (gamma_t ... gamma_{k-1}) (c_{t+1} ... c_k) delta_k,
    delta_k = r_k + gamma_k V(x_{k+1}) - Q(x_k, a_k)

(empty products are 1: the k = t term is delta_t itself).

``c = 0`` gives the one-step expected-SARSA target ``r_t + gamma_t V(x_{t+1})`` at every step;
``c = 1`` with Q(x, a) = V(x) along the sequence gives the n-step return bootstrapped with V(x_T).

A sequence cut by a time limit (or by the end of the stored data) simply ends there: its last
step bootstraps from V of its last observation. Only a true terminal sets gamma_t = 0.

Arrays may be numpy arrays or torch tensors of shape (T,) or (B, T) (time last); the arithmetic
follows their dtype, so float64 inputs give float64 targets.
"""
from __future__ import annotations

import numpy as np
import torch

__all__ = ["retrace_targets", "trace_coefficients", "reward_trace_products"]


def trace_coefficients(pi_taken, mu_taken, lam: float = 1.0):
    """c = lam * min(1, pi_taken / mu_taken), elementwise (numpy arrays, torch tensors or floats).

    pi_taken: probability of the taken action under the target policy pi; mu_taken: under the
    behaviour policy mu (> 0, as the action was drawn from mu). lam in [0, 1].
    Example: pi 0.2, mu 0.4, lam 1 -> 0.5; pi 0.6, mu 0.3 -> 1 (truncated).
    """
    lam = float(lam)
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lambda must be in [0, 1], got {lam}")
    ratio = pi_taken / mu_taken
    if isinstance(ratio, torch.Tensor):
        return lam * torch.clamp(ratio, max=1.0)
    return lam * np.minimum(1.0, ratio)


def retrace_targets(rewards, discounts, q_next, v_next, c_next):
    """Q^ret_t for t = 0 ... T-1 along the last axis (see the module docstring).

    Args (all the same shape, (T,) or (B, T); numpy arrays or torch tensors, not mixed):
        rewards: r_t. discounts: gamma_t (0 where the episode terminated at step t).
        q_next: Q(x_{t+1}, a_{t+1}). v_next: V(x_{t+1}) = sum_a pi(a|x_{t+1}) Q(x_{t+1}, a).
        c_next: c_{t+1} = lam min(1, pi(a_{t+1}|x_{t+1}) / mu(a_{t+1}|x_{t+1})). Its last entry
            does not matter (Q^ret_T = Q(x_T, a_T) cancels it); set it to 0 where x_{t+1} is the
            last observation of a shorter, padded sequence.

    Returns Q^ret, same shape and type (torch: no gradient flows if the inputs carry none).
    """
    arrays = (rewards, discounts, q_next, v_next, c_next)
    is_torch = isinstance(rewards, torch.Tensor)
    if is_torch:
        if not all(isinstance(a, torch.Tensor) for a in arrays):
            raise TypeError("retrace_targets: pass all numpy arrays or all torch tensors")
    else:
        arrays = tuple(np.asarray(a, dtype=np.result_type(*[np.asarray(x) for x in arrays], np.float64))
                       for a in arrays)
    r, g, q, v, c = arrays
    shape = r.shape
    if any(a.shape != shape for a in arrays) or len(shape) not in (1, 2):
        raise ValueError(f"retrace_targets: all inputs must share a (T,) or (B, T) shape, got "
                         f"{[tuple(a.shape) for a in arrays]}")
    T = shape[-1]
    if T == 0:
        return r.clone() if is_torch else r.copy()
    out = [None] * T
    carry = q[..., T - 1]  # Q^ret_T = Q(x_T, a_T)
    for t in range(T - 1, -1, -1):
        carry = r[..., t] + g[..., t] * (c[..., t] * (carry - q[..., t]) + v[..., t])
        out[t] = carry
    return torch.stack(out, dim=-1) if is_torch else np.stack(out, axis=-1)


def reward_trace_products(c_next, reward, mask, reward_threshold: float = 0.5):
    """The Retrace trace product that carries each sequence's rewarded step back to its start.

    For a sequence with rewarded step k (the last stored step t with r_t > ``reward_threshold``),
    Q^ret_0 holds delta_k, and so r_k, with weight gamma^k prod_{s=1}^{k} c_s (module docstring);
    this returns P = prod_{s=1}^{k} c_s (1 when k = 0: no trace is needed). The MMC target of DQN
    carries r_k to x_0 with weight beta gamma^k instead, whatever the policy.

    Args (torch tensors, (B, L)): c_next[b, t] = c_{t+1}, as passed to :func:`retrace_targets`
    (the c's the learner used: the policy pi of that update against the stored mu); reward: r_t;
    mask: 1 on stored transitions, 0 on padding.

    Returns (products (B,) float64, NaN where the sequence holds no rewarded step; spans (B,) int64,
    k, -1 where none). Example: c_next [[0.5, 0.2, 0]], reward [[0, 0, 1]], mask all 1 -> P = 0.1, k = 2.
    """
    if not (c_next.shape == reward.shape == mask.shape and c_next.dim() == 2):
        raise ValueError(f"reward_trace_products: c_next, reward and mask must share a (B, L) shape, got "
                         f"{tuple(c_next.shape)}, {tuple(reward.shape)}, {tuple(mask.shape)}")
    B, L = c_next.shape
    hit = (reward > reward_threshold) & (mask > 0)
    positions = torch.arange(L, device=c_next.device).expand(B, L)
    span = torch.where(hit, positions, torch.full_like(positions, -1)).max(dim=1).values  # (B,) k or -1
    cum = torch.cumprod(torch.cat([torch.ones_like(c_next[:, :1]), c_next[:, :-1]], dim=1).double(), dim=1)
    # cum[b, k] = c_next[b, 0] ... c_next[b, k-1] = c_1 ... c_k
    product = cum.gather(1, span.clamp(min=0).unsqueeze(1)).squeeze(1)
    return torch.where(span >= 0, product, torch.full_like(product, float("nan"))), span
