"""Verdicts decided by statistics: the seed is the unit, and an exact test decides.

Every claim is decided on per-seed values (one number per independent run: a success rate, a
deep-sea score, a loss in nats), never on episodes pooled across seeds as if independent. No t or
Welch test decides a claim.

Decision rule (every verdict function). Each claim is tested at one-sided
``alpha = (1 - level) / 2`` (0.025 at ``level = 0.95``):

- ``agrees`` when the claimed direction's p <= alpha;
- ``differs`` when the opposite direction's p <= alpha;
- ``inconclusive`` otherwise;
- ``not testable`` with its reason (:data:`REASONS`): ``too few seeds at this profile`` (fewer than
  :data:`MIN_SEEDS` = 6 seeds per line, since 2^-6 < 0.025 < 2^-5, or a test that could never reach
  alpha); ``not testable on this task`` (with the why); ``the lines do not move`` (an equivalence
  claim whose positive control does not leave the floor: :func:`leaves_floor`).

The tests: Fisher's exact test for solved counts; the sign-flip test for paired values and the
permutation test for unpaired ones, exact up to about 20 seeds (:data:`MAX_SIGN_FLIP_N`,
:data:`MAX_SPLITS`) and beyond a seeded Monte Carlo of :data:`MC_DRAWS` draws whose standard error
the sentence states; TOST built from them for "no effect". The interval printed is the two-sided
``level`` interval from the same test, so p and interval never disagree. Float noise is relative to
the claim's own scale (values, threshold, margin): 1e-9 of the largest.

Verdicts (each returns a :class:`Verdict`: word, reason, estimate, interval, p, test, n, per-seed
values, Monte Carlo draws and error, a one-line sentence):

- :func:`paired_verdict`: a difference a - b paired by seed id, by the sign-flip test;
- :func:`solved_verdict`: solved seeds a against b by Fisher's exact test, each line with its
  Clopper-Pearson interval;
- :func:`difference_verdict`: a difference, by the sign flip (paired by seed id) or the permutation
  test (unpaired);
- :func:`progress_verdict`: progress against a stated threshold (e.g. the random policy's success
  rate 2^-N), by the sign-flip test of values - threshold;
- :func:`share_verdict`: "k of n seeds" against a threshold in [0, 1] on the exact Clopper-Pearson
  interval (with its exact binomial p);
- :func:`equivalence_verdict`: a claim of no effect within +-margin, two one-sided tests (TOST),
  testable only when a positive control (``control``, or the lines themselves) leaves the ``floor``.

The words: :data:`CLAIM_WORDS` (a claim's), :data:`VERDICTS` (the report's, a notebook's
``agrees``, ``partly``, ``mixed``, ``differs``, ``inconclusive``, ``not testable``),
:func:`combine_verdicts` (the one rule for a notebook's word), :func:`notebook_verdict` (the same,
with the reason where nothing is testable), :func:`not_testable` and :func:`reason_of` (the reason's
sentence and its reading), :func:`word_of` (the one reading of a verdict sentence).

Where each part lives (every name importable from here):

- the words, :class:`Verdict`, :func:`word_of`, :func:`combine_verdicts` and the decision rule:
  :mod:`pcnn_explore.verdicts.words`;
- the exact-test verdicts :func:`paired_verdict`, :func:`solved_verdict`, :func:`progress_verdict`,
  :func:`share_verdict`, :func:`leaves_floor`: :mod:`pcnn_explore.verdicts.exact`;
- the verdicts on differences :func:`difference_verdict`, :func:`equivalence_verdict`:
  :mod:`pcnn_explore.verdicts.difference`;
- the statistics (distributions, intervals, exact and Monte Carlo tests):
  :mod:`pcnn_explore.verdicts.statistics`.
"""
from __future__ import annotations

from pcnn_explore.verdicts.statistics import (  # (the statistics stay importable from here, as before)
    DIRECTIONS,
    MAX_SIGN_FLIP_N,
    MAX_SPLITS,
    MC_DRAWS,
    MC_SEED,
    MIN_SEEDS,
    TESTS,
    beta_quantile,
    binomial_interval,
    fisher_exact_p,
    incomplete_beta,
    min_p,
    monte_carlo_draws,
    monte_carlo_error,
    permutation_p,
    seeds_needed,
    shown_interval,
    sign_flip_interval,
    sign_flip_p,
    t_cdf,
    t_interval,
    t_quantile,
)
from pcnn_explore.verdicts.words import (
    CLAIM_WORDS,
    LINES_DO_NOT_MOVE,
    NOT_ON_THIS_TASK,
    NOT_TESTABLE,
    REASONS,
    TOO_FEW_SEEDS,
    VERDICT_COLOURS,
    VERDICTS,
    Verdict,
    combine_verdicts,
    not_testable,
    notebook_verdict,
    reason_of,
    word_of,
)
from pcnn_explore.verdicts.exact import (
    leaves_floor,
    paired_verdict,
    progress_verdict,
    share_verdict,
    solved_verdict,
)
from pcnn_explore.verdicts.difference import (
    difference_verdict,
    equivalence_verdict,
)

__all__ = ["VERDICTS", "CLAIM_WORDS", "VERDICT_COLOURS", "NOT_TESTABLE", "REASONS", "TOO_FEW_SEEDS",
           "NOT_ON_THIS_TASK", "LINES_DO_NOT_MOVE", "MIN_SEEDS", "DIRECTIONS", "TESTS", "MAX_SIGN_FLIP_N",
           "MAX_SPLITS", "MC_DRAWS", "MC_SEED", "word_of", "reason_of", "not_testable", "Verdict",
           "incomplete_beta", "t_cdf", "t_quantile", "beta_quantile", "t_interval", "shown_interval", "binomial_interval",
           "sign_flip_p", "sign_flip_interval", "permutation_p", "fisher_exact_p", "min_p", "seeds_needed",
           "monte_carlo_draws", "monte_carlo_error", "combine_verdicts", "notebook_verdict", "paired_verdict",
           "solved_verdict", "difference_verdict", "progress_verdict", "share_verdict", "equivalence_verdict",
           "leaves_floor"]
