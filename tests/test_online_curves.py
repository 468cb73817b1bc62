"""Notebook 01 compares learning curves (area, largest rise), on hand-made curves; its verdict over seeds
is tested in test_density_verdicts.py and test_density_stats.py."""
from __future__ import annotations

import numpy as np
import pytest

from pcnn_explore.experiments.density.online_training import (
    compare_curves, curve_area, largest_increase)

STEPS = np.array([0, 10, 20, 40])


def test_area_is_the_trapezoidal_mean_over_the_span():
    # segments: (100+80)/2*10 + (80+60)/2*10 + (60+50)/2*20 = 900 + 700 + 1100 = 2700 over 40 updates
    assert curve_area(STEPS, [100, 80, 60, 50]) == pytest.approx(2700 / 40)
    assert curve_area([0, 5], [3, 3]) == 3.0
    with pytest.raises(ValueError, match="increase"):
        curve_area([0, 0, 1], [1, 2, 3])
    with pytest.raises(ValueError, match="at least 2"):
        curve_area([0], [1])


def test_largest_increase_is_the_worst_rise_or_zero():
    assert largest_increase([100, 80, 95, 60, 70]) == 15
    assert largest_increase([3, 2, 1]) == 0.0


def test_same_end_point_different_curves_is_not_similar():
    """Two curves that end at the same loss but learn at different speeds: end points agree, areas do not."""
    fast, slow = [100, 50, 50, 50], [100, 95, 90, 50]
    c = compare_curves({"online": (STEPS, fast), "permutation": (STEPS, slow)})
    assert c["area"]["online"] == pytest.approx(curve_area(STEPS, fast))
    assert c["area_spread"] == pytest.approx(curve_area(STEPS, slow) / curve_area(STEPS, fast) - 1)
    assert not c["similar"] and c["stable"] and c["ranking"] == ["online", "permutation"]


def test_similar_stable_curves_and_a_spike():
    a, b = [100, 80, 60, 50], [101, 81, 61, 50]
    c = compare_curves({"online": (STEPS, a), "replacement": (STEPS, b)})
    assert c["similar"] and c["stable"]
    spiky = compare_curves({"online": (STEPS, [100, 60, 75, 50]), "replacement": (STEPS, [100, 70, 60, 55])})
    assert spiky["increase"]["online"] == 15 and not spiky["stable"]  # 15 > 10% of its mean level (~67)
    assert spiky["similar"]
