"""Figures. Every function returns a matplotlib Figure; nothing here selects a backend.

- :mod:`.counts`: pseudo-count figures (notebook 00).
- :mod:`.density`: density-model figures (losses, PG traces, samples, pseudo-counts).
- :mod:`.episode`: recorded-episode figures used by the widget viewer and headless runs.
- :mod:`.agents`: training curves of the agent experiments.
- :mod:`.evaluation`: the paper's evaluation: curves per 1M frames, AUC improvements (sweeps).
"""
from pcnn_explore.plots.agents import *  # noqa: F401,F403
from pcnn_explore.plots.counts import *  # noqa: F401,F403
from pcnn_explore.plots.density import *  # noqa: F401,F403
from pcnn_explore.plots.episode import *  # noqa: F401,F403
from pcnn_explore.plots.evaluation import *  # noqa: F401,F403
