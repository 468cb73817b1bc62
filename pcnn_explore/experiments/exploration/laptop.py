"""Exploration you can see on a laptop (notebook 12): does the bonus make the agent explore, and
why does the paper's PixelCNN need to know *where* a pixel is?

Three parts, each a function of :class:`ExplorationSettings`:

- :func:`run_deep_sea`: DeepSea-N (:mod:`pcnn_explore.envs.deep_sea`) for each N of ``deep_sea_sizes``
  and each line of :data:`DEEP_SEA_LINES` (the named lines of
  :mod:`pcnn_explore.experiments.agents.lines`, every setting stated: the baselines DQN and DQN + MMC;
  the paper's DQN-CTS, DQN-PixelCNN and CTS intrinsic reward only, each with its paper bonus form,
  the state acted in scored, MMC 0.1, epsilon-greedy; the kit's DQN-PixelCNN with the position
  bias), ``seeds`` runs each of ``deep_sea_episodes`` episodes (N agent steps per episode). A run
  *reaches the goal late in training* when an episode ending in the last ``late_fraction`` of its
  steps pays the +1 (return > 0.5; every other return is <= 0).
- :func:`run_rooms`: coverage (distinct cells visited against agent steps, ``log.csv``'s
  ``distinct_cells``) on the egocentric MiniGrid-RoomChain task (agent's 7x7 view; the density
  model sees that view) for DQN and intrinsic-reward-only agents.
- :func:`pseudo_count_maps`: each density model trained on the DeepSea frames of a random walk,
  then asked for the pseudo-count of the agent in every cell, beside the true visit counts.

The paper's claim is decided on the paper's lines alone, per seed whether the run reached the goal
late, by Fisher's exact test (:func:`reach_decisions`, through :func:`pcnn_explore.study.decide`);
at fewer than 6 seeds per line it is "not testable: too few seeds at this profile" (the smoke
profile's one). The study profile runs the 20 verdict seeds 801-820 of the PixelCNN readings' re-run
(:data:`~pcnn_explore.experiments.exploration.laptop_settings.STUDY_SEEDS`,
:mod:`pcnn_explore.study.preregistered.pixelcnn_readings`), none of which chose a setting, under the settings'
``density_optimizer`` (tf1, the paper's reading, by default); it refuses any other seed.
The kit's line gets the same test as a kit claim; the claims are declared in
:mod:`pcnn_explore.study.preregistered.exploration_on_a_laptop`.

Every training run is one :func:`pcnn_explore.run.train` run (TrainConfig presets, DeepSea's
:func:`pcnn_explore.envs.env_defaults`, the line's settings on top), run through
:func:`pcnn_explore.experiments.agents.agent_runs.run_specs`. Steps are agent steps throughout.

Where each part lives (every name stays importable from here, as before):

- settings and run specs: :mod:`~pcnn_explore.experiments.exploration.laptop_settings`
  (:data:`DEEP_SEA_LINES`, :class:`ExplorationSettings`, :func:`deep_sea_specs`, :func:`room_specs`);
- the runs and their tables: :mod:`~pcnn_explore.experiments.exploration.laptop_runs`
  (:data:`SUCCESS_RETURN`, :class:`DeepSeaRun`, :func:`read_deep_sea_run`, :func:`run_deep_sea`,
  :func:`coverage_curve`, :func:`run_rooms`, :func:`map_cells`, :func:`success_table`,
  :func:`deep_sea_lines`, :func:`coverage_table`);
- the pseudo-count maps: :mod:`~pcnn_explore.experiments.exploration.count_maps`
  (:class:`CountMaps`, :func:`pseudo_count_maps`, :func:`random_walk_frames`);
- goals: :mod:`~pcnn_explore.experiments.exploration.laptop_goals` (:data:`PAPER_AGENTS`,
  :data:`KIT_AGENTS`, :data:`BONUS_AGENTS`, :data:`GOAL_N`, :data:`PAPER`, :func:`hard_sizes`,
  :func:`reached`, :func:`reach_decisions`, :func:`strict_goal`, :func:`coverage_goal`, :func:`location_goal`);
- claims, summary and metrics: :mod:`~pcnn_explore.experiments.exploration.laptop_summary` (:func:`decisions`,
  :func:`summary`, :func:`settings_text`, :func:`lines_text`, :func:`run_cost_line`, :func:`budget_words`,
  :func:`metrics`).
"""
from __future__ import annotations

from pcnn_explore.run.variants import variant_label as label  # the paper's name of a variant
from pcnn_explore.experiments.exploration.count_maps import CountMaps, pseudo_count_maps, random_walk_frames
from pcnn_explore.experiments.exploration.laptop_settings import (
    DEEP_SEA_LINES,
    ExplorationSettings,
    deep_sea_specs,
    room_specs,
)
from pcnn_explore.experiments.exploration.laptop_runs import (
    SUCCESS_RETURN,
    DeepSeaRun,
    coverage_curve,
    coverage_table,
    deep_sea_lines,
    map_cells,
    read_deep_sea_run,
    run_deep_sea,
    run_rooms,
    success_table,
)
from pcnn_explore.experiments.exploration.laptop_goals import (
    BASELINES,
    BONUS_AGENTS,
    GOAL_N,
    KIT_AGENTS,
    PAPER,
    PAPER_AGENTS,
    coverage_goal,
    hard_sizes,
    location_goal,
    reach_decisions,
    reached,
    strict_goal,
)
from pcnn_explore.experiments.exploration.laptop_summary import (
    budget_words,
    decisions,
    lines_text,
    metrics,
    run_cost_line,
    settings_text,
    summary,
)

__all__ = ["ExplorationSettings", "DeepSeaRun", "label", "deep_sea_specs", "room_specs", "run_deep_sea", "run_rooms",
           "read_deep_sea_run", "coverage_curve", "random_walk_frames", "pseudo_count_maps", "CountMaps",
           "success_table", "deep_sea_lines", "coverage_table", "map_cells", "hard_sizes", "reached", "reach_decisions",
           "strict_goal", "coverage_goal", "DEEP_SEA_LINES", "PAPER_AGENTS", "KIT_AGENTS", "BONUS_AGENTS",
           "location_goal", "decisions", "summary", "metrics", "settings_text", "lines_text", "run_cost_line",
           "budget_words", "SUCCESS_RETURN", "GOAL_N", "PAPER", "BASELINES"]
