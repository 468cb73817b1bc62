"""Re-rendering an agent notebook made under the current rules changes none of its words: a claim
decided under both readings of the CTS bonus scale keeps both (and "depends on the bonus scale"
where they differ), a claim the run's design could not power stays "too few seeds", never "not
on this task", 13's trace product stays against its MMC mix, and 10's share stays against its chance.
Each record is decided again by the one function that decided it (:func:`pcnn_explore.study.decide_again`)."""
from __future__ import annotations

import dataclasses
import math

from pcnn_explore.experiments.agents import deep_sea_claims as dc
from pcnn_explore.report.rerender import redecide
from pcnn_explore.study import DEPENDS_ON_SCALE, decisions_of, metrics_record
from pcnn_explore.study.preregistered import deep_sea as pre
from pcnn_explore.verdicts import TOO_FEW_SEEDS, not_testable

SEEDS = tuple(range(701, 711))
LABELS = {"paper_cts": "DQN-CTS", "paper_cts_horizon": "DQN-CTS, horizon reading", "dqn": "DQN"}


def _again(name, decided):
    """The decisions of ``decided``'s metrics after one re-render, and after a re-render of that."""
    metrics = {"profile": "study", **metrics_record(decided)}
    once = redecide(name, metrics)
    twice = redecide(name, once)
    assert once["claims"] == twice["claims"] == metrics["claims"] and "rerendered" not in once
    return decisions_of(once)


def _cts_claim(horizon):
    """07's CTS claim decided on DQN-CTS scoring 1 on 8 of 10 seeds, DQN 0, and the horizon reading's line
    scoring ``horizon``."""
    plan = dataclasses.replace(pre.plan("07"), claims=(pre.plan("07").claim("cts_bonus_explores"),))
    scores = {"paper_cts": [1.0] * 8 + [0.0] * 2, "paper_cts_horizon": horizon, "dqn": [0.0] * 10}
    return dc.decisions(plan, lambda k, q: dict(zip(SEEDS, scores[k])), LABELS, 0.0)


def test_a_claim_under_both_readings_keeps_them_and_its_word():
    (first,) = _cts_claim([0.0] * 10)  # 8 of 10 seeds up at 0.05: agrees; never moves at the horizon: undecided
    assert first.word == DEPENDS_ON_SCALE
    assert [(k, r.word) for k, r in first.readings] == [("bonus scale 0.05", "agrees"),
                                                        ("horizon bonus scale", "inconclusive")]
    (again,) = _again("07_dqn_pixelcnn", [first])
    assert again == first and again.sentence.startswith(f"{DEPENDS_ON_SCALE}: at 0.05, agrees")
    # the two readings agreeing: the word of both, with the horizon reading's sentence beside
    (both,) = _cts_claim([1.0] * 8 + [0.0] * 2)
    (again,) = _again("07_dqn_pixelcnn", [both])
    assert again.word == "agrees" and "the horizon reading of the bonus scale too" in again.sentence


def test_a_claim_its_design_cannot_power_stays_too_few_seeds():
    plan = dataclasses.replace(pre.plan("09"), claims=(pre.plan("09").claim("robust_c1"),))
    (d,) = dc.decisions(plan, lambda k, q: dict(zip(SEEDS, [0.0] * 10)), {"c1": "c = 1", "c0.1": "c = 0.1"}, 0.0)
    sentence = not_testable(TOO_FEW_SEEDS, "needs 88 per line, power 0.17 with 40; " + pre.RUN_WITH_CTS)
    assert (d.word, d.reason, d.sentence, d.n) == ("not testable", TOO_FEW_SEEDS, sentence, None)
    (again,) = _again("09_pg_scale", [d])
    assert (again.word, again.reason, again.sentence, again.values) == ("not testable", TOO_FEW_SEEDS, sentence,
                                                                        (0.0,) * 10)


def test_a_reactor_run_re_rendered_keeps_every_word_it_wrote():
    from pcnn_explore.experiments.agents import reactor_study as rs

    lines = ("reactor", "reactor_cts", "cts_mmc")
    per = {v: {"auc": list(a), "late": list(a), "solved": [0.0] * 10, "solve_episode": [401.0] * 10,
               "bsuite_solve_episode": [401.0] * 10}
           for v, a in zip(lines, ([0.0] * 10, [0.5] * 5 + [0.7] * 5, [0.4] * 3 + [0.9] * 7))}
    study = {"per_seed": per, "dqn_mmc_beta": 0.1, "runs": [],
             "traces": {"reactor": {"from_start_product": [math.nan] * 10},
                        "reactor_cts": {"from_start_product": [0.8] * 9 + [math.nan]}}}
    decided = rs.decisions(study, SEEDS, lines)
    again = {d.name: d for d in _again("13_reactor", decided)}
    for d in decided:
        assert again[d.name] == d, d.name
    cut = again["traces_cut"]  # the 9 seeds that replayed a large reward, against the mix 0.1
    assert cut.seeds == SEEDS[:9] and cut.values == tuple(0.1 - 0.8 for _ in range(9))
    assert cut.sentence.startswith("differs: MMC mix 0.1 - prod c from x_0 (Reactor-CTS) = -0.7")


def test_a_share_against_chance_stays_a_share_against_chance():
    # 10's "finds the reward more often than dithering would": 20 of 40 seeds against chance 0.471
    plan = dataclasses.replace(pre.plan("10"), claims=(pre.plan("10").claim("intrinsic_finds_reward"),))
    found = dict(zip(range(701, 741), [1.0, 0.0] * 20))
    (d,) = dc.decisions(plan, lambda k, q: found, {"paper_cts_intrinsic": "DQN-CTS, intrinsic reward only"}, 0.4714)
    assert (d.test, d.word, d.claim.threshold, d.estimate) == ("binomial", "inconclusive", 0.4714, 0.5)
    (again,) = _again("10_intrinsic_only", [d])
    assert again == d and again.claim.threshold == 0.4714
