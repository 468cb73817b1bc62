"""What the notebooks leave behind and what ``pcnn-explore reproduce`` makes of it.

- :mod:`pcnn_explore.report.metrics`: a notebook's ``metrics.json`` (:func:`write_metrics`,
  :func:`read_metrics`) and its printed paper-versus-this-run table (:func:`paper_vs_run`).
- :mod:`pcnn_explore.report.reproduce`: ``pcnn-explore reproduce`` runs every notebook headlessly
  (:func:`reproduce`, ``add_arguments``, ``run_cli``); the metrics.json convention is in its docstring.
- :mod:`pcnn_explore.report.index`: ``OUT/index.html``, the scope first, one row per notebook (its
  verdict and claim), then per notebook one row per claim (:mod:`pcnn_explore.report.claims`).

``from pcnn_explore.report import write_metrics, paper_vs_run`` is the notebooks' import.
"""
from pcnn_explore.report.metrics import _plain, paper_vs_run, read_metrics, write_metrics  # noqa: F401

__all__ = ["write_metrics", "read_metrics", "paper_vs_run"]
