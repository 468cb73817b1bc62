"""Sweeps: the paper's grid of training runs (on this machine, or a Ray cluster), and their evaluation.

- :mod:`~pcnn_explore.sweep.grid`: a grid (envs x variants x settings x seeds) from flags or a TOML
  file, its trials and their folders;
- :mod:`~pcnn_explore.sweep.runner`: the event loop that runs the trials (:func:`run_trials`), by job:
  :mod:`~pcnn_explore.sweep.trial` (one trial's task: retried when a worker dies, resumed from its
  checkpoint), :mod:`~pcnn_explore.sweep.plan` (the checks before anything is written),
  :mod:`~pcnn_explore.sweep.folders` (a trial's folder), :mod:`~pcnn_explore.sweep.records`
  (``sweep.json``), :mod:`~pcnn_explore.sweep.executors` (where they run: worker processes on this
  machine, :mod:`~pcnn_explore.sweep.local`, no Ray; or Ray tasks, :mod:`~pcnn_explore.sweep.ray_cluster`,
  for clusters);
- :mod:`~pcnn_explore.sweep.view`: the live table of the trials;
- :mod:`~pcnn_explore.sweep.report`: ``--report``: curves, maximum scores and AUC improvements
  (:mod:`pcnn_explore.evaluation`);
- :mod:`~pcnn_explore.sweep.cli`: ``pcnn-explore sweep``.

Ray is imported only when trials run on it.
"""
from pcnn_explore.sweep.grid import Grid, SweepError, Trial, load_grid, shipped_grids
from pcnn_explore.sweep.records import read_sweep
from pcnn_explore.sweep.runner import run_trials

__all__ = ["Grid", "Trial", "SweepError", "load_grid", "shipped_grids", "run_trials", "read_sweep"]
