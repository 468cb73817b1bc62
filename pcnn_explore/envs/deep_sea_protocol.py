"""bsuite's deep-sea protocol (Osband et al. 2019, ``experiments/deep_sea``) as pure functions.

The protocol: sizes N = 10, 12, ..., 50 (21 sizes), :data:`PROTOCOL_EPISODES` (10K) episodes each,
one action mapping for every run (mapping seed 42, :data:`pcnn_explore.envs.deep_sea.DEFAULT_MAPPING_SEED`).

- An episode is **bad** when the agent leaves the diagonal it started on; on the deterministic task
  that is exactly an episode without the +1 (the +1 needs "right" at every step). A logged episode
  is a success when its return is above :data:`SUCCESS_RETURN` (0.5): the +1 episode returns 0.99,
  every other at most 0.
- A size is **solved** at the first episode e (1-based) at which (bad episodes so far) / e < 0.9,
  that is, at which more than a tenth of the episodes so far found the +1. bsuite checks this only at
  the episodes its logger writes (:func:`bsuite_logged_episodes`: 1, 2, ..., 10, 12, 14, 17, 20, 25,
  30, 40, ..., 100, 120, ...; ``bsuite/utils/wrappers.py::_logarithmic_logging``), so its solve
  episode (:func:`bsuite_solve_episode`) is the first *logged* episode where the rule holds
  (``bsuite/experiments/deep_sea/analysis.py::find_solution``). :func:`solve_episode` checks the rule
  at **every** episode: it is never later than bsuite's on the same run, and a run can meet the rule
  between two logged episodes and no longer at the next one (solved in the run, not by bsuite).
- The **deep-sea score** is, as bsuite counts it (``analysis.py::score``), the share of sizes whose
  bsuite solve episode is below 2^N + 100 (an agent that beats dithering, which needs about 2^N
  episodes) within the 10K episodes (:func:`solved_in_time`, :func:`deep_sea_score`).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

__all__ = ["PROTOCOL_SIZES", "PROTOCOL_EPISODES", "BAD_RATIO", "FORGIVE_EPISODES", "SUCCESS_RETURN", "below_bad_ratio",
           "successes_from_log", "solve_episode", "bsuite_logged_episodes", "is_bsuite_logged", "bsuite_solve_episode", "solved_in_time",
           "deep_sea_score", "score_bounds", "BSUITE_LOG_RATIOS"]

#: bsuite's sizes
PROTOCOL_SIZES = tuple(range(10, 51, 2))
#: episodes per size
PROTOCOL_EPISODES = 10_000
#: a size is solved once (bad episodes so far) / episodes so far falls below this
BAD_RATIO = 0.9
#: a size counts for the score when solved at an episode below 2^N + FORGIVE_EPISODES
FORGIVE_EPISODES = 100
#: a DeepSea episode with a return above this found the +1 (it returns 0.99; every other at most 0)
SUCCESS_RETURN = 0.5
#: bsuite's logger writes at episodes 10^k x these (``bsuite/utils/wrappers.py::_logarithmic_logging``:
#: 1, 1.2, 1.4, 1.7, 2, 2.5, 3, 4, ..., 10), in tenths so that the schedule is exact in integers
BSUITE_LOG_RATIOS = (10, 12, 14, 17, 20, 25, 30, 40, 50, 60, 70, 80, 90, 100)


def successes_from_log(log: Mapping[str, np.ndarray]) -> np.ndarray:
    """(E,) bool: per complete episode of a run's log (``read_log``'s columns ``return`` and
    ``complete``), in the order they ended, whether it found the +1 (return > :data:`SUCCESS_RETURN`).
    The last row of a run cut mid-episode (``complete = 0``) is left out."""
    returns = np.asarray(log["return"], dtype=np.float64).reshape(-1)
    complete = np.asarray(log["complete"], dtype=np.float64).reshape(-1)
    if returns.shape != complete.shape:
        raise ValueError(f"the log's return and complete columns differ in length: {returns.shape} vs {complete.shape}")
    return returns[complete == 1] > SUCCESS_RETURN


def below_bad_ratio(bad, episodes):
    """bad / episodes < 0.9 (:data:`BAD_RATIO`), as 10 bad < 9 episodes in integers (no rounding at the
    tie); numbers or arrays of them."""
    return 10 * bad < 9 * episodes


def solve_episode(successes: Sequence[bool]) -> int | None:
    """The episode (1-based) at which a size is solved by bsuite's rule, or None.

    ``successes``: (E,) bool, per episode in order, whether it found the +1 (episodes without it are
    bad). Solved at the first e with (bad episodes among the first e) / e < 0.9; a ratio of exactly
    0.9 does not count. Checked at every episode (bsuite checks only at its logged episodes:
    :func:`bsuite_solve_episode`, which the score uses).
    Example: [False] * 9 + [True] -> None (9/10 = 0.9); [False] * 9 + [True, True] -> 11 (9/11).
    """
    s = np.asarray(successes)
    if s.ndim != 1 or (s.size and s.dtype != bool):
        raise ValueError(f"successes must be a 1-D sequence of bools (one per episode), got dtype {s.dtype}, "
                         f"shape {s.shape}")
    if not s.size:
        return None
    e = np.arange(1, s.size + 1)
    bad = np.cumsum(~s)
    hit = np.flatnonzero(below_bad_ratio(bad, e))
    return int(hit[0]) + 1 if hit.size else None


def bsuite_logged_episodes(last: int) -> np.ndarray:
    """(K,) int64, increasing: the episodes (1-based) up to ``last`` at which bsuite's logger writes a row,
    derived as bsuite derives them (``bsuite/utils/wrappers.py::_logarithmic_logging``): episode e is
    logged when e == 10^k x r for k = floor(log10(e)) and a ratio r of 1, 1.2, 1.4, 1.7, 2, 2.5, 3, 4,
    ..., 10 (:data:`BSUITE_LOG_RATIOS`, here in integers). Example: 30 -> [1, ..., 10, 12, 14, 17, 20, 25, 30]."""
    if isinstance(last, bool) or not isinstance(last, (int, np.integer)) or last < 0:
        raise ValueError(f"last must be a non-negative integer (an episode count), got {last!r}")
    out, k = set(), 0
    while 10 ** k <= last:
        out.update(10 ** k * t // 10 for t in BSUITE_LOG_RATIOS if (10 ** k * t) % 10 == 0)
        k += 1
    return np.array(sorted(e for e in out if e <= last), dtype=np.int64)


def is_bsuite_logged(episode: int) -> bool:
    """Whether bsuite's logger writes a row at ``episode`` (1-based), the test behind
    :func:`bsuite_logged_episodes` for one episode: episode = 10^k x r / 10 for k = floor(log10(episode))
    and r in :data:`BSUITE_LOG_RATIOS`. Example: 12 -> True, 13 -> False, 250 -> True."""
    if episode < 1:
        return False
    power = 10 ** (len(str(int(episode))) - 1)
    return (10 * episode) % power == 0 and (10 * episode) // power in BSUITE_LOG_RATIOS


def bsuite_solve_episode(successes: Sequence[bool]) -> int | None:
    """The episode at which bsuite finds a size solved: the first of its logged episodes
    (:func:`bsuite_logged_episodes`) among the episodes run at which (bad episodes so far) / e < 0.9;
    None if none. ``successes`` as for :func:`solve_episode`. Example: [False] * 9 + [True, True] -> None
    (11 is not logged); with one more episode of either kind -> 12 (at most 10 bad of 12)."""
    s = np.asarray(successes)
    if s.ndim != 1 or (s.size and s.dtype != bool):
        raise ValueError(f"successes must be a 1-D sequence of bools (one per episode), got dtype {s.dtype}, "
                         f"shape {s.shape}")
    logged = bsuite_logged_episodes(s.size)
    bad = np.cumsum(~s)[logged - 1] if s.size else np.zeros(0, np.int64)
    hit = np.flatnonzero(below_bad_ratio(bad, logged))
    return int(logged[hit[0]]) if hit.size else None


def _is_logged(episode: int) -> bool:
    e = bsuite_logged_episodes(max(int(episode), 0))
    return bool(e.size) and int(e[-1]) == int(episode)


def solved_in_time(size: int, episode: int | None, episodes: int = PROTOCOL_EPISODES) -> bool:
    """Whether a size counts for the deep-sea score as bsuite counts it: ``episode``, its bsuite solve
    episode (:func:`bsuite_solve_episode`; None: not solved), is below 2^size + 100 and within the first
    ``episodes`` (10K). ValueError for an episode bsuite never logs (an every-episode
    :func:`solve_episode` such as 11 is not one)."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"size must be a positive integer (the N of DeepSea-N), got {size!r}")
    if episode is None:
        return False
    if isinstance(episode, bool) or not isinstance(episode, (int, np.integer)) or not _is_logged(episode):
        raise ValueError(f"episode {episode!r} is not one of bsuite's logged episodes: pass bsuite_solve_episode(...), "
                         "not the every-episode solve_episode")
    return episode < 2 ** int(size) + FORGIVE_EPISODES and episode <= episodes


def deep_sea_score(solve_episodes: Mapping[int, int | None], episodes: int = PROTOCOL_EPISODES) -> float:
    """The deep-sea score of one agent and seed, as bsuite counts it: the share of sizes run
    (``{N: bsuite solve episode or None}``, :func:`bsuite_solve_episode`) solved in time
    (:func:`solved_in_time`). Example: {10: 500, 12: None, 14: 20_000} -> 1/3."""
    if not solve_episodes:
        raise ValueError("deep_sea_score needs at least one size run")
    return sum(solved_in_time(n, e, episodes) for n, e in solve_episodes.items()) / len(solve_episodes)


def score_bounds(counted: Mapping[int, bool], sizes: Sequence[int] = PROTOCOL_SIZES) -> tuple[float, float]:
    """bsuite's deep-sea score of one seed over all ``sizes`` (the protocol's 21) when only the sizes in
    ``counted`` (``{N: whether it counts for the score}``, :func:`solved_in_time`) have a finished run:
    ``(lower, upper)``, each size without a run counted as not solved and as solved. The two are equal,
    and the score, once every size is in. Example: {10: True, 12: False} over (10, 12, 14) -> (1/3, 2/3)."""
    sizes = [int(n) for n in sizes]
    extra = sorted(set(int(n) for n in counted) - set(sizes))
    if not sizes or extra:
        raise ValueError(f"score_bounds needs sizes that include every size counted; {extra} are not among {sizes}")
    solved = sum(bool(counted[n]) for n in sizes if n in counted)
    missing = sum(n not in counted for n in sizes)
    return solved / len(sizes), (solved + missing) / len(sizes)
