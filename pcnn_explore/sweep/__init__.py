"""Sweeps: the paper's grid of training runs (on this machine, or a Ray cluster), and their evaluation.

- :mod:`~pcnn_explore.sweep.grid`: a grid (envs x variants x settings x seeds) from flags or a TOML
  file, its trials and their folders;
- :mod:`~pcnn_explore.sweep.runner`: the trials (retried when a worker dies, resumed from their
  checkpoints), ``sweep.json``; run by :mod:`~pcnn_explore.sweep.local` (worker processes on this
  machine, no Ray) or :mod:`~pcnn_explore.sweep.ray_cluster` (Ray tasks, for clusters);
- :mod:`~pcnn_explore.sweep.view`: the live table of the trials;
- :mod:`~pcnn_explore.sweep.report`: ``--report``: curves, maximum scores and AUC improvements
  (:mod:`pcnn_explore.evaluation`);
- :mod:`~pcnn_explore.sweep.cli`: ``pcnn-explore sweep``.

Ray is imported only when trials run on it.
"""
from pcnn_explore.sweep.grid import Grid, SweepError, Trial, load_grid, shipped_grids
from pcnn_explore.sweep.runner import read_sweep, run_trials

__all__ = ["Grid", "Trial", "SweepError", "load_grid", "shipped_grids", "run_trials", "read_sweep"]
