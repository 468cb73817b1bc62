"""Reactor and the bonus (notebook 13; the paper's Sec. 4.2, Fig. 7, 8) on bsuite's deep-sea protocol.

The lines (:data:`LINES`, each a :class:`~pcnn_explore.experiments.agents.deep_sea_study.StudyVariant`
whose overrides state every setting of its method, with a ``kind``):

- ``reactor`` (baseline): Reactor without a bonus; it samples its actions from its policy (no epsilon);
- ``reactor_cts`` (paper): Reactor with the paper's CTS form of the bonus (c = 1 constant, beta 0.05:
  :func:`pcnn_explore.experiments.agents.lines.paper_bonus`), the state acted in scored, the bonus and
  the density model's update on a seeded random 25% of steps (as in the paper), no MMC (Reactor
  evaluates its policy with Retrace);
- ``cts_mmc`` (paper): the paper's DQN-CTS line (:data:`pcnn_explore.experiments.agents.lines.LINES`
  ``paper_cts``): the same CTS form on every step, MMC beta 0.1, epsilon-greedy;
- ``reactor_pixelcnn_pos``, ``pixelcnn_pos_mmc`` (kit): the same two agents with the kit's
  position-biased PixelCNN in the paper's PixelCNN form (c = 0.1 n^-1/2, beta 1).

Why CTS. The paper's headline model is PixelCNN, but its translation-invariant PixelCNN reads the
same context around the agent's one pixel in every DeepSea cell and cannot count cells (notebook
12). CTS is a model the paper uses and counts DeepSea's cells, so every paper claim compares the CTS
form with the CTS form; the kit's PixelCNN lines get kit findings only.

The runs: each line x seed on DeepSea-N for the sizes and episode cap of the profile (a subset of
bsuite's protocol, :mod:`pcnn_explore.envs.deep_sea_protocol`: sizes up to N = 33, one Reactor
sequence, so a replayed sequence from an episode's start holds the whole episode). The seed is the
unit.

Per run (:func:`run_values`), over its complete episodes: ``auc``, the share of episodes that found
DeepSea's +1 (the mean of the success curve: the paper's area-under-the-curve measure, as a share);
``late``, the same over the last quarter; ``solve_episode`` (bsuite's rule checked at every episode),
``bsuite_solve_episode`` (the first of bsuite's logged episodes at which it holds, as bsuite finds
it) and ``solved`` (that logged episode in time for the deep-sea score). Per seed: the mean over the
sizes.

The claims (:data:`pcnn_explore.study.preregistered.reactor.CLAIMS`, decided by
:func:`pcnn_explore.study.decide` in :func:`decisions`); each records its kind, the lines it compares,
its test, the one-sided p and n:

- ``bonus_helps_reactor`` (paper, Fig. 7/8): Reactor-CTS above Reactor in ``auc``;
- ``dqn_mmc_above_reactor_bonus`` (paper, Sec. 4.2: Reactor "seems unable to make full use of" the
  bonus on sparse games): DQN-CTS + MMC above Reactor-CTS in ``auc``;
- ``traces_cut`` (kit: the paper states the hypothesis, the kit measures it): Retrace carries a
  reward r_k back to a sequence's first state x_0 with weight gamma^k prod_{s=1}^{k} c_s,
  c_s = lambda min(1, pi(a_s|x_s) / mu(a_s|x_s)); the MMC target carries it with beta gamma^k whatever
  the policy. Measured on Reactor-CTS with the policy that was learning when the sequence was
  replayed: each run's ``traces.csv`` (:mod:`pcnn_explore.run.trace_log`), over the replayed
  sequences that start at an episode's first step and hold a large reward: a clipped reward above
  0.5 as the learner saw it, DeepSea's +1 or a bonus that large (the sequence replay keeps the sum
  only), with k its last such step. Per seed: the mean product over all such replays of the run.
  Claim: below the beta of the DQN-CTS runs (the exact sign flip of beta - product,
  :func:`pcnn_explore.verdicts.progress_verdict`);
- ``position_bias_helps_reactor``, ``kit_dqn_above_reactor_bonus`` (kit): the two paper comparisons
  with the kit's position-biased PixelCNN on both sides.

Per-seed AUC values are near all-or-nothing on a size where an agent fails, so the paired claims are
decided by the exact sign-flip test paired by seed id (no claim's quantity is the solved flag). The
notebook's word combines the paper claims (:func:`pcnn_explore.study.notebook_words`); the kit word,
beside it, the kit claims; a kit claim never enters the notebook's word.

Seeds: the study profile runs the declared verdict seeds 801-820 of the PixelCNN readings' re-run
(:data:`~pcnn_explore.experiments.agents.reactor_settings.STUDY_SEEDS`,
:mod:`pcnn_explore.study.preregistered.pixelcnn_readings`), each on its own DeepSea map
(mapping seed = seed + 10,000, bsuite's rule), under the settings' ``density_optimizer`` (tf1 by default), and
refuses, before any training, a tuning seed, a seen seed (401-410, 701-740, 7, 8, 11, 13) or any other seed than
those, or fewer seeds than the sign-flip test needs to reach its level
(:func:`pcnn_explore.verdicts.seeds_needed`, 6 at 0.95). The smoke profile's 2 seeds are "not
testable at this profile" by the tests' own arithmetic.

Where each part lives (every name stays importable from here, as before):

- the lines: :mod:`~pcnn_explore.experiments.agents.reactor_lines` (:data:`LINES`, :func:`line_labels`);
- the settings: :mod:`~pcnn_explore.experiments.agents.reactor_settings` (:data:`STUDY_SEEDS`,
  :class:`ReactorStudySettings`, :func:`settings_for`);
- the runs, their values and traces: :mod:`~pcnn_explore.experiments.agents.reactor_runs` (:func:`specs`,
  :func:`run`, :func:`run_values`, :func:`run_traces`, :func:`collect`);
- the claims: :mod:`pcnn_explore.study.preregistered.reactor` (:data:`CLAIMS`);
- decisions, summary and metrics: :mod:`~pcnn_explore.experiments.agents.reactor_summary` (:data:`PAPER`,
  :func:`decisions`, :func:`summary`, :func:`paper_rows`, :func:`metrics`).
"""
from __future__ import annotations

from pcnn_explore.experiments.agents.reactor_lines import LINES, line_labels
from pcnn_explore.experiments.agents.reactor_settings import (
    STUDY_SEEDS,
    ReactorStudySettings,
    settings_for,
)
from pcnn_explore.experiments.agents.reactor_runs import collect, run, run_traces, run_values, specs
from pcnn_explore.experiments.agents.reactor_summary import PAPER, decisions, metrics, paper_rows, summary
from pcnn_explore.study.preregistered.reactor import CLAIMS

__all__ = ["ReactorStudySettings", "PAPER", "STUDY_SEEDS", "LINES", "CLAIMS", "settings_for", "specs", "run",
           "line_labels", "run_values", "run_traces", "collect", "decisions", "summary", "paper_rows", "metrics"]
