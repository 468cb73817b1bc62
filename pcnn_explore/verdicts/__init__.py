"""Verdicts decided by statistics: the seed is the unit, and an exact test decides where it can.

Every agent claim is decided on per-seed values (one number per independent run: a success rate,
a deep-sea score, an episode count), never on episodes pooled across seeds as if independent.

Decision rule (every verdict function). The one-sided p of the test decides, at
``alpha = (1 - level) / 2`` in each direction (0.025 each way at ``level = 0.95``):

- ``agrees`` when the claimed direction's p <= alpha;
- ``differs`` when the opposite direction's p <= alpha;
- ``inconclusive`` otherwise;
- ``not testable at this profile`` when the smallest p the test can give with these sample sizes
  (:func:`min_p`) is above alpha: too few seeds for the test ever to reach the level.

The interval printed is the two-sided ``level`` interval from the same test (the shifts it does not
reject at alpha in either direction), so p and interval never disagree. Per-seed values that differ
by float noise (within ``1e-9`` of the largest |value|, or ``1e-12`` absolute) count as equal.

Exact tests (pure functions):

- :func:`sign_flip_p`, :func:`sign_flip_interval`: the paired sign-flip permutation test of a mean
  difference and its inversion (all 2^n sign patterns, n <= 20);
- :func:`permutation_p`: the exact two-sample permutation test (all splits, at most 200,000);
- :func:`fisher_exact_p`: Fisher's exact test of two shares "k of n seeds";
- :func:`min_p`, :func:`seeds_needed`: the smallest p a test can give, and the fewest seeds per line
  for which it can reach a level.

Verdicts (each returns a :class:`Verdict`: word, estimate, interval, p, test, n, per-seed values, a
one-line sentence):

- :func:`paired_verdict`: a difference a - b paired by seed id, by the sign-flip test;
- :func:`solved_verdict`: solved seeds a against b by Fisher's exact test, each line with its
  Clopper-Pearson interval;
- :func:`difference_verdict`: a difference of continuous quantities (losses in nats): Student's t
  (paired by seed id when both sides ran the same seeds, in any order; else Welch), except where
  the values have no spread: then the exact test decides (sign flip when paired, permutation else);
- :func:`progress_verdict`: progress against a stated threshold (e.g. the random policy's success
  rate 2^-N), by the sign-flip test of values - threshold;
- :func:`share_verdict`: "k of n seeds" against a threshold on the exact Clopper-Pearson interval
  (with its exact binomial p);
- :func:`equivalence_verdict`: a claim of no effect within +-margin, two one-sided tests (TOST) at
  alpha each, which is the ``level`` interval lying inside (-margin, margin).

:func:`combine_verdicts` is the one rule that combines claim verdicts into a notebook's word.
The statistics themselves (distributions, intervals of one line, the exact tests) are pure
functions in :mod:`pcnn_explore.verdicts.statistics`, importable from here too.
:data:`VERDICTS` is the report's vocabulary and :func:`word_of` its one reading, used by
:mod:`pcnn_explore.report.index`.

Where each part lives (every name stays importable from here, as before):

- the words, :class:`Verdict`, :func:`word_of`, :func:`combine_verdicts` and the decision rule:
  :mod:`pcnn_explore.verdicts.words`;
- the exact-test verdicts :func:`paired_verdict`, :func:`solved_verdict`, :func:`progress_verdict`,
  :func:`share_verdict`: :mod:`pcnn_explore.verdicts.exact`;
- the verdicts on continuous differences :func:`difference_verdict`, :func:`equivalence_verdict`:
  :mod:`pcnn_explore.verdicts.difference`;
- the statistics (distributions, intervals, exact tests): :mod:`pcnn_explore.verdicts.statistics`.
"""
from __future__ import annotations

from pcnn_explore.verdicts.statistics import (  # (the statistics stay importable from here, as before)
    DIRECTIONS,
    MAX_SIGN_FLIP_N,
    MAX_SPLITS,
    TESTS,
    beta_quantile,
    binomial_interval,
    fisher_exact_p,
    incomplete_beta,
    min_p,
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
    NOT_TESTABLE,
    VERDICT_COLOURS,
    VERDICTS,
    Verdict,
    combine_verdicts,
    word_of,
)
from pcnn_explore.verdicts.exact import (
    paired_verdict,
    progress_verdict,
    share_verdict,
    solved_verdict,
)
from pcnn_explore.verdicts.difference import (
    difference_verdict,
    equivalence_verdict,
)

__all__ = ["VERDICTS", "VERDICT_COLOURS", "NOT_TESTABLE", "DIRECTIONS", "TESTS", "MAX_SIGN_FLIP_N", "MAX_SPLITS", "word_of", "Verdict",
           "incomplete_beta", "t_cdf", "t_quantile", "beta_quantile", "t_interval", "shown_interval", "binomial_interval",
           "sign_flip_p", "sign_flip_interval", "permutation_p", "fisher_exact_p", "min_p", "seeds_needed",
           "combine_verdicts", "paired_verdict", "solved_verdict", "difference_verdict", "progress_verdict",
           "share_verdict", "equivalence_verdict"]
