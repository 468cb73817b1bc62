"""Figures say what they hold: titles from the run's real episodes, steps and seeds, and reference
lines drawn within the axes (notebooks 12, 13 and the deep-sea studies)."""
from __future__ import annotations

import numpy as np

from pcnn_explore.plots.deep_sea_study import plot_coverage as plot_study_coverage
from pcnn_explore.plots.exploration import plot_coverage
from pcnn_explore.plots.reactor import plot_reactor_study


def _reactor_study(beta: float, episodes: int = 30) -> dict:
    runs = []
    for v in ("reactor", "cts_mmc"):
        for seed in (0, 1, 2):
            run = {"variant": v, "size": 4, "seed": seed, "success": [0, 1] * (episodes // 2)}
            if v == "reactor":
                run["traces"] = {"curve": ([10, 20, 30], [0.5, 0.2, 0.1])}
            runs.append(run)
    return {"per_seed": {"reactor": {"auc": [0.1, 0.2, 0.0]}, "cts_mmc": {"auc": [0.5, 0.6, 0.4]}},
            "traces": {"reactor": True}, "runs": runs, "dqn_mmc_beta": beta}


def test_reactor_success_title_states_the_runs_episodes_and_seeds():
    fig = plot_reactor_study(_reactor_study(0.1, episodes=30), [0, 1, 2], {}, window=5, size=4)
    assert fig.axes[1].get_title() == "DeepSea-4: success, 30 episodes, 3 seeds"


def test_reactor_mmc_beta_line_lies_within_the_axes_whatever_beta():
    for beta in (0.1, 5.0, 1e-8):
        ax = plot_reactor_study(_reactor_study(beta), [0, 1, 2], {}, window=5, size=4).axes[2]
        low, high = ax.get_ylim()
        assert low <= beta <= high, (beta, low, high)
        assert any(f"MMC mix of the DQN runs = {beta:g}" == t.get_text() for t in ax.get_legend().get_texts())


def test_room_coverage_title_states_the_runs_steps_and_seeds():
    rooms = {"env": "MiniGrid-RoomChain-R3-v0", "steps": [50, 100, 200],
             "cells": {"dqn": [[1, 2, 3], [1, 3, 4]], "cts_mmc_intrinsic": [[1, 4, 6], [2, 4, 7]]}}
    ax = plot_coverage(rooms, {}).axes[0]
    assert ax.get_title() == "MiniGrid-RoomChain-R3-v0: coverage over 200 agent steps, 2 seeds"
    reach = plot_coverage(rooms, {}, reachable=40).axes[0]
    assert reach.get_ylim()[1] >= 40  # the map's cells within the axes


def test_study_coverage_title_states_the_runs_episodes():
    at = np.array([10, 500, 1200])
    fig = plot_study_coverage({"DQN": (at, np.array([[0.1, 0.2, 0.3], [0.1, 0.3, 0.4]]))})
    assert fig.axes[0].get_title() == "Coverage over 1,200 episodes (thin: seeds; thick: mean)"
    assert plot_study_coverage({"DQN": (at, np.ones((1, 3)))}, title="mine").axes[0].get_title() == "mine"
