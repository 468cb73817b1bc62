"""Notebook 13's pieces on hand-made values: each verdict rule (agrees, differs, inconclusive), the
overall word, one run's values from a hand-made log, the trace summary from a hand-made traces.csv,
and the settings' checks."""
from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from pcnn_explore.experiments.agents import reactor_study as rs
from pcnn_explore.run.log import LOG_COLUMNS
from pcnn_explore.run.trace_log import TRACE_COLUMNS

V = ("reactor", "reactor_pixelcnn_pos", "pixelcnn_pos_mmc")
SEEDS = (1, 2, 3, 4, 5)
T_975_4 = 2.7764451  # Student's t, 97.5% quantile, 4 degrees of freedom


def _study(base, bonus, dqn, products, beta=0.1):
    per = {v: {"auc": list(a), "late": list(a), "solved": [0.0] * len(a), "solve_episode": [401.0] * len(a)}
           for v, a in zip(V, (base, bonus, dqn))}
    return {"per_seed": per, "dqn_mmc_beta": beta, "runs": [],
            "traces": {"reactor": {"from_start_product": [math.nan] * 5},
                       "reactor_pixelcnn_pos": {"from_start_product": list(products)}}}


def _paired(a, b):
    d = np.asarray(a) - np.asarray(b)
    half = T_975_4 * d.std(ddof=1) / math.sqrt(len(d))
    return d.mean() - half, d.mean() + half


def test_roles_follow_the_variant_rule():
    assert rs.roles(V + ("cts_mmc", "dqn")) == {"reactor": "reactor", "reactor_bonus": "reactor_pixelcnn_pos",
                                               "dqn_mmc": ["pixelcnn_pos_mmc", "cts_mmc"]}
    assert rs.roles(("reactor", "cts")) == {"reactor": "reactor", "reactor_bonus": None, "dqn_mmc": []}


def test_every_claim_agrees_with_the_intervals_by_hand():
    base, bonus, dqn = [0.0, 0.01, 0.0, 0.02, 0.01], [0.2, 0.25, 0.3, 0.22, 0.28], [0.5, 0.6, 0.55, 0.52, 0.58]
    c = rs.decide(_study(base, bonus, dqn, [0.01, 0.02, 0.03, 0.02, 0.01]), SEEDS, V)
    assert [c[k]["word"] for k in ("bonus_helps_reactor", "dqn_mmc_above_reactor_bonus")] == ["agrees"] * 2
    assert c["bonus_helps_reactor"]["interval"] == pytest.approx(_paired(bonus, base), abs=1e-9)
    assert c["dqn_mmc_above_reactor_bonus"]["interval"] == pytest.approx(_paired(dqn, bonus), abs=1e-9)
    assert c["bonus_helps_reactor"]["values"] == bonus and c["bonus_helps_reactor"]["values_b"] == base
    # beta - product over 5 seeds replaying a +1: the exact sign flip cannot go below 2^-5 = 0.031 > 0.025
    assert c["traces_cut"]["word"] == "not testable at this profile"
    assert c["traces_cut"]["interval"] == [-math.inf, math.inf]
    assert c["traces_cut"]["seeds_with_replays"] == 5 and c["traces_cut"]["mmc_beta"] == 0.1
    assert rs.overall("study", c) == "partly" and rs.overall("smoke", c) == "not testable at this profile"
    # six seeds replaying a +1, every gap beta - product above 0: p = 2^-6; at 6 seeds the interval is
    # [min gap, max gap] = [0.1 - 0.03, 0.1 - 0.01]
    six = rs.decide(_study(base, bonus, dqn, [0.01, 0.02, 0.03, 0.02, 0.01, 0.02]), SEEDS, V)
    assert six["traces_cut"]["word"] == "agrees"
    assert six["traces_cut"]["interval"] == pytest.approx([0.07, 0.09], abs=1e-8)
    assert rs.overall("study", six) == "agrees"


def test_claims_that_go_the_other_way_differ():
    base, bonus = [0.3, 0.35, 0.32, 0.31, 0.36], [0.1, 0.12, 0.11, 0.09, 0.1]  # the bonus Reactor worse
    dqn = [0.0, 0.01, 0.0, 0.0, 0.02]  # DQN below the bonus Reactor
    c = rs.decide(_study(base, bonus, dqn, [0.5, 0.6, 0.7, 0.55, 0.65]), SEEDS, V)
    assert {k: x["word"] for k, x in c.items()} == {"bonus_helps_reactor": "differs", "dqn_mmc_above_reactor_bonus":
                                                     "differs", "traces_cut": "not testable at this profile"}
    six = rs.decide(_study(base, bonus, dqn, [0.5, 0.6, 0.7, 0.55, 0.65, 0.6]), SEEDS, V)
    assert six["traces_cut"]["word"] == "differs"  # every product above beta: p below = 2^-6
    assert c["bonus_helps_reactor"]["interval"][1] < 0
    assert rs.overall("study", c) == "differs"


def test_noise_is_inconclusive_never_agrees():
    base = [0.2, 0.2, 0.2, 0.2, 0.2]
    bonus = [0.3, 0.1, 0.25, 0.15, 0.2]  # differences +-: the interval holds 0
    dqn = [0.4, 0.0, 0.3, 0.2, 0.1]
    # products from 2 seeds straddling beta, the others replayed no +1 from an episode's start
    c = rs.decide(_study(base, bonus, dqn, [0.05, math.nan, 0.2, math.nan, math.nan]), SEEDS, V)
    assert {k: x["word"] for k, x in c.items()} == {"bonus_helps_reactor": "inconclusive", "dqn_mmc_above_reactor_bonus":
                                                     "inconclusive", "traces_cut": "not testable at this profile"}
    lo, hi = c["bonus_helps_reactor"]["interval"]
    assert lo < 0 < hi and (lo, hi) == pytest.approx(_paired(bonus, base), abs=1e-9)
    assert c["traces_cut"]["seeds_with_replays"] == 2 and c["traces_cut"]["products"] == [0.05, 0.2]
    assert rs.overall("study", c) == "inconclusive"
    one = rs.decide(_study(base, bonus, dqn, [0.01, math.nan, math.nan, math.nan, math.nan]), SEEDS, V)
    assert one["traces_cut"]["word"] == "inconclusive" and "1 seed(s)" in one["traces_cut"]["sentence"]
    mixed = {**c, "bonus_helps_reactor": {"word": "agrees"}}
    assert rs.overall("study", mixed) == "partly"


def test_claims_not_run_are_left_out():
    c = rs.decide(_study([0.1] * 5, [0.2] * 5, [0.3] * 5, []), SEEDS, ("reactor",))
    assert c == {} and rs.overall("study", c) == "not testable at this profile"


def _log(path, returns, complete=None):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=LOG_COLUMNS)
        w.writeheader()
        for i, r in enumerate(returns):
            w.writerow({k: 0 for k in LOG_COLUMNS} | {"step": 4 * (i + 1), "episode": i, "return": r, "length": 4,
                                                       "complete": 1 if complete is None else complete[i]})


def test_run_values_from_a_hand_made_log(tmp_path):
    # 12 complete episodes and one cut: wins at episodes 3, 4 (1-based) -> 2 bad of 4 at e = 4 < 0.9
    _log(tmp_path / "log.csv", [0, 0, 0.99, 0.99, 0, 0, 0, 0, 0, 0, 0, 0.99, 0.99], [1] * 12 + [0])
    got = rs.run_values(tmp_path, 4)
    assert got["episodes"] == 12 and got["success"] == [0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1]
    assert got["auc"] == pytest.approx(3 / 12) and got["late"] == pytest.approx(1 / 3)  # episodes 10-12
    assert got["solve_episode"] == 3 and got["solved"] and got["first_success"] == 3  # 2 bad of 3: 0.67 < 0.9
    _log(tmp_path / "log.csv", [0] * 20)
    got = rs.run_values(tmp_path, 4)
    assert got["solve_episode"] is None and not got["solved"] and got["first_success"] is None and got["auc"] == 0


def test_run_traces_weights_each_learn_call_by_its_replays(tmp_path):
    rows = [  # step, from_start, from_start_product_mean, rewarded, product_mean, c_mean, from_start_span_mean
        (10, 0, "", 0, "", 0.9, ""), (20, 2, 0.5, 3, 0.6, 0.8, 9), (30, 1, 0.2, 1, 0.2, 0.7, 6), (40, 0, "", 2, 0.9, 0.6, "")]
    with open(tmp_path / "traces.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=TRACE_COLUMNS)
        w.writeheader()
        for step, fs, fsp, rw, p, c, span in rows:
            w.writerow({k: "" for k in TRACE_COLUMNS} | {"step": step, "sequences": 8, "from_start": fs,
                                                         "from_start_product_mean": fsp, "rewarded": rw,
                                                         "product_mean": p, "c_mean": c, "from_start_span_mean": span})
    got = rs.run_traces(tmp_path, bins=2)
    assert got["learn_calls"] == 4 and got["from_start"] == 3 and got["rewarded"] == 6
    assert got["from_start_product"] == pytest.approx((2 * 0.5 + 0.2) / 3)
    assert got["from_start_span"] == pytest.approx((2 * 9 + 6) / 3)
    assert got["rewarded_product"] == pytest.approx((3 * 0.6 + 0.2 + 2 * 0.9) / 6)
    assert got["c_mean"] == pytest.approx(0.75)
    steps, curve = got["curve"]  # bins (0, 20] and (20, 40]
    assert steps == [20.0, 40.0] and curve == pytest.approx([0.5, 0.2])


@pytest.mark.parametrize("given, match", [
    (dict(sizes=(40,)), "one 33-step Reactor sequence"), (dict(variants=("reactor_mmc",)), "unknown variant"),
    (dict(variants=("reactor", "reactor")), "repeat"), (dict(episodes=0), "episodes"), (dict(seeds="0"), "tuple"),
    (dict(variants=("cts_mmc",)), "at least one Reactor variant"), (dict(seeds=(1, 1)), "repeat"),
])
def test_bad_settings_fail_before_any_run(tmp_path, given, match):
    with pytest.raises((ValueError, TypeError), match=match):
        rs.run(rs.ReactorStudySettings.preset("smoke", **given), tmp_path)
    assert not any(tmp_path.iterdir())


def test_presets():
    s = rs.settings_for("study")
    assert s.seeds == rs.STUDY_SEEDS and len(s.seeds) >= 5 and s.sizes == (10,) and s.steps(10) == 10 * s.episodes
    assert rs.roles(s.variants)["dqn_mmc"] == ["pixelcnn_pos_mmc", "cts_mmc"]
    assert max(rs.settings_for("paper").sizes) <= 33
    assert rs.settings_for("smoke", seed=3, n_seeds=2).seeds == (3, 4)
    specs = rs.specs(s, "/x")
    assert len(specs) == 4 * 5 and specs[0].env == "DeepSea-10-v0" and specs[0].steps == 10 * s.episodes


def test_the_papers_claim_is_the_reports_claim():
    """The report index shows ``paper.verdict`` as the notebook's claim: 13 states both of its claims."""
    assert "Fig. 7, 8" in rs.PAPER["verdict"] and "Sec. 4.2" in rs.PAPER["verdict"]
