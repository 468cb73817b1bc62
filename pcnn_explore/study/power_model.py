"""The power model of the agent claims (:mod:`pcnn_explore.study.power`): the chance that a claim's exact
test, at one-sided :data:`ALPHA`, decides it on ``n`` seeds per line when the lines' true solve rates, scores
or paired values are the pilot's. Pure functions of the rates; the Monte Carlo ones take a seeded generator.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["ALPHA", "POWER_DRAWS", "POWER_SEED", "sign_flip_p_lattice", "fisher_power", "score_power",
           "paired_resample_power", "share_power"]

#: one-sided level of every claim
ALPHA = 0.025
POWER_DRAWS = 2_000
POWER_SEED = 35


def sign_flip_p_lattice(x: Sequence[int], direction: str = "greater") -> float:
    """Exact one-sided p of the paired sign-flip test of integer per-seed values x_i (differences on a
    lattice, e.g. a score difference times the number of sizes): the share of the 2^n sign patterns
    whose sum is >= the observed sum (``"less"``: <=), ties counted in, by dynamic programming over the
    sums (n up to hundreds). Zeros flip to themselves: a tie drops out.

    >>> sign_flip_p_lattice([1, 1, 1])
    0.125
    >>> sign_flip_p_lattice([2, -1])
    0.5
    """
    v = np.asarray(x)
    if v.ndim != 1 or v.size == 0 or not np.all(np.equal(np.mod(v, 1), 0)):
        raise ValueError(f"x must be a non-empty 1-D sequence of integers, got {x!r}")
    if direction not in ("greater", "less"):
        raise ValueError(f"direction must be greater or less, got {direction!r}")
    a = np.abs(v.astype(np.int64))
    total = int(a.sum())
    dist = np.zeros(2 * total + 1)
    dist[total] = 1.0
    for m in a[a > 0]:
        m = int(m)
        new = np.zeros_like(dist)
        new[m:] += dist[:dist.size - m]
        new[:dist.size - m] += dist[m:]
        dist = new * 0.5
    observed = int(v.astype(np.int64).sum())
    idx = observed + total
    p = dist[idx:].sum() if direction == "greater" else dist[:idx + 1].sum()
    return float(min(1.0, p))


def _fisher_p_table(n_a: int, n_b: int) -> np.ndarray:
    from pcnn_explore.verdicts.statistics import fisher_exact_p

    return np.array([[fisher_exact_p(ka, n_a, kb, n_b, "greater") for kb in range(n_b + 1)] for ka in range(n_a + 1)])


def fisher_power(p_a: float, p_b: float, n: int, alpha: float = ALPHA, n_b: int | None = None) -> float:
    """Exact power of Fisher's one-sided test (a solves more often than b) at ``alpha`` with ``n`` seeds of
    line a (and ``n_b``, default ``n``, of line b), each seed solving with probability ``p_a`` (``p_b``)
    independently: the sum over both binomials of the outcomes whose p <= alpha.

    >>> fisher_power(1.0, 0.0, 6)
    1.0
    """
    n_b = n if n_b is None else n_b
    for name, p in (("p_a", p_a), ("p_b", p_b)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name} must be a probability in [0, 1], got {p!r}")
    if n < 1 or n_b < 1:
        raise ValueError(f"n must be a positive number of seeds, got {n!r}, {n_b!r}")
    from math import comb

    pa = np.array([comb(n, k) * p_a ** k * (1 - p_a) ** (n - k) for k in range(n + 1)])
    pb = np.array([comb(n_b, k) * p_b ** k * (1 - p_b) ** (n_b - k) for k in range(n_b + 1)])
    reject = _fisher_p_table(n, n_b) <= alpha + 1e-12
    return float(min(1.0, (pa[:, None] * pb[None, :] * reject).sum()))


def _sizes_solved(rng, probs: Sequence[float], n: int, draws: int) -> np.ndarray:
    """(draws, n) integer count of sizes solved per seed, each size with its probability."""
    return sum((rng.random((draws, n)) < p).astype(np.int64) for p in probs)


def score_power(p_a: Sequence[float], p_b: Sequence[float], n: int, alpha: float = ALPHA, draws: int = POWER_DRAWS,
                seed: int = POWER_SEED, margin: float | None = None) -> float:
    """Power of the paired sign-flip test on per-seed deep-sea scores (share of S sizes solved) with ``n``
    seeds per line: line a solves size j with probability ``p_a[j]``, line b with ``p_b[j]``, every size
    and seed independent; a seeded simulation of ``draws`` draws, each decided exactly
    (:func:`sign_flip_p_lattice` on S x the score differences). ``margin`` None: the claim a > b at
    one-sided ``alpha``; a margin m: the equivalence claim |a - b| < m by two one-sided tests (TOST),
    both at ``alpha``, the differences on the lattice of 1 / (S x 100)."""
    if len(p_a) != len(p_b) or not p_a:
        raise ValueError(f"p_a and p_b need one probability per size, got {p_a!r} and {p_b!r}")
    if n < 1:
        raise ValueError(f"n must be a positive number of seeds, got {n!r}")
    rng = np.random.default_rng(seed)
    d = _sizes_solved(rng, p_a, n, draws) - _sizes_solved(rng, p_b, n, draws)
    cache: dict = {}
    hits = 0
    for row in d:
        if margin is None:
            key = tuple(sorted(row))
            if key not in cache:
                cache[key] = sign_flip_p_lattice(row, "greater")
            hits += cache[key] <= alpha + 1e-12
            continue
        s = len(p_a)
        m = int(round(margin * s * 100))  # the margin on the lattice of 1 / (S x 100)
        key = tuple(sorted(row))
        if key not in cache:
            x = np.asarray(row, dtype=np.int64) * 100
            cache[key] = max(sign_flip_p_lattice(x - m, "less"), sign_flip_p_lattice(x + m, "greater"))
        hits += cache[key] <= alpha + 1e-12
    return hits / draws


def paired_resample_power(pairs: Sequence[tuple[float, float]], n: int, direction: str = "greater",
                          resolution: float = 1.0, alpha: float = ALPHA, draws: int = POWER_DRAWS,
                          seed: int = POWER_SEED) -> float:
    """Power of the paired sign-flip test with ``n`` seeds drawn with replacement from ``pairs`` (per-seed
    (a, b) values of a pilot, already moved to the effect of interest), the differences on a lattice of
    ``resolution`` (rounded to it in this model only), by a seeded simulation of ``draws`` draws."""
    d = np.array([a - b for a, b in pairs], dtype=np.float64)
    if d.size == 0:
        raise ValueError("pairs is empty: the power model needs the pilot's per-seed values")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, d.size, size=(draws, n))
    lattice = np.rint(d / resolution).astype(np.int64)
    cache: dict = {}
    hits = 0
    for row in lattice[picks]:
        key = tuple(sorted(row))
        if key not in cache:
            cache[key] = sign_flip_p_lattice(row, direction)
        hits += cache[key] <= alpha + 1e-12
    return hits / draws


def share_power(p_found: float, chance: float, n: int, alpha: float = ALPHA) -> float:
    """Exact power of the one-sided binomial test of k of n seeds against ``chance`` at ``alpha`` when each
    seed finds the +1 with probability ``p_found``."""
    from math import comb

    tail = [sum(comb(n, j) * chance ** j * (1 - chance) ** (n - j) for j in range(k, n + 1)) for k in range(n + 2)]
    k_crit = next((k for k in range(n + 1) if tail[k] <= alpha + 1e-12), n + 1)
    return float(sum(comb(n, j) * p_found ** j * (1 - p_found) ** (n - j) for j in range(k_crit, n + 1)))
