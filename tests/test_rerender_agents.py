"""Re-rendering an agent notebook made under the current rules changes none of its words: a claim
decided under both readings of the CTS bonus scale keeps both (and "depends on the bonus scale"
where they differ), and a claim the run's design could not power stays "too few seeds", never "not
on this task"."""
from __future__ import annotations

from pcnn_explore.experiments.agents.deep_sea_claims import DEPENDS_ON_SCALE, combine_readings, verdict_dict
from pcnn_explore.report.rerender import redecide
from pcnn_explore.verdicts import TOO_FEW_SEEDS, not_testable, paired_verdict


def _paired(a, b, labels):
    v = paired_verdict(dict(enumerate(a)), dict(enumerate(b)), "greater", claim=f"score {' - '.join(labels)}")
    return {"kind": "paper", "claim": "the CTS bonus makes DQN explore", "lines": ["paper_cts", "dqn"],
            "labels": labels, "quantity": "score", **verdict_dict(v), "reason": v.reason}


def test_a_claim_under_both_readings_keeps_them_and_its_word():
    moves = [1.0] * 8 + [0.0] * 2
    first = _paired(moves, [0.0] * 10, ["DQN-CTS", "DQN"])  # 8 of 10 seeds up: agrees
    second = _paired([0.0] * 10, [0.0] * 10, ["DQN-CTS, horizon reading", "DQN"])  # never moves: undecided
    assert first["verdict"] == "agrees" and second["verdict"] != "agrees"
    claim = combine_readings(first, second)
    assert claim["verdict"] == DEPENDS_ON_SCALE
    metrics = {"profile": "study", "summary": {"verdict": f"{DEPENDS_ON_SCALE}: ..."},
               "claims": {"cts_bonus_explores": claim}}
    again = redecide("07_dqn_pixelcnn", metrics)["claims"]["cts_bonus_explores"]
    assert again["verdict"] == DEPENDS_ON_SCALE and again["sentence"] == claim["sentence"]
    assert list(again["readings"]) == ["bonus scale 0.05", "horizon bonus scale"]
    assert [r["verdict"] for r in again["readings"].values()] == [first["verdict"], second["verdict"]]
    # the two readings agreeing: the word of both, with the horizon reading's sentence beside
    both = combine_readings(first, _paired(moves, [0.0] * 10, ["DQN-CTS, horizon reading", "DQN"]))
    metrics["claims"]["cts_bonus_explores"] = both
    again = redecide("07_dqn_pixelcnn", metrics)["claims"]["cts_bonus_explores"]
    assert again["verdict"] == "agrees" and "the horizon reading of the bonus scale too" in again["sentence"]


def test_a_claim_its_design_cannot_power_stays_too_few_seeds():
    sentence = not_testable(TOO_FEW_SEEDS, "needs 88 per line, power 0.17 with 40")
    record = {"kind": "paper", "claim": "c = 1 does as well as c = 0.1 (fairly robust)", "verdict": "not testable",
              "reason": TOO_FEW_SEEDS, "test": "not_testable", "sentence": sentence, "n": 40}
    metrics = {"profile": "study", "summary": {"verdict": "agrees: ..."}, "claims": {"robust_c1": record}}
    again = redecide("09_pg_scale", metrics)["claims"]["robust_c1"]
    assert (again["verdict"], again["reason"], again["sentence"]) == ("not testable", TOO_FEW_SEEDS, sentence)


def test_a_reactor_run_re_rendered_keeps_every_word_it_wrote():
    import math

    from pcnn_explore.experiments.agents import reactor_study as rs

    seeds = tuple(range(701, 711))
    lines = ("reactor", "reactor_cts", "cts_mmc")
    per = {v: {"auc": list(a), "late": list(a), "solved": [0.0] * 10, "solve_episode": [401.0] * 10,
               "bsuite_solve_episode": [401.0] * 10}
           for v, a in zip(lines, ([0.0] * 10, [0.5] * 5 + [0.7] * 5, [0.4] * 3 + [0.9] * 7))}
    study = {"per_seed": per, "dqn_mmc_beta": 0.1, "runs": [],
             "traces": {"reactor": {"from_start_product": [math.nan] * 10},
                        "reactor_cts": {"from_start_product": [0.8] * 10}}}
    claims = rs.decide(study, seeds, lines)
    metrics = {"profile": "study", "summary": {"verdict": rs.overall("study", claims), "claims": claims}}
    once = redecide("13_reactor", metrics)
    again = redecide("13_reactor", once)["summary"]["claims"]  # a re-render of a re-render: the same words
    for key, c in claims.items():
        assert (again[key]["word"], again[key]["sentence"]) == (c["word"], c["sentence"]), key
    assert again["traces_cut"]["mmc_beta"] == 0.1 and again["traces_cut"]["products"] == [0.8] * 10
    # a record that lost its mix (re-rendered by an earlier kit) is decided again all the same
    lost = {k: v for k, v in claims["traces_cut"].items() if k != "mmc_beta"}
    metrics["summary"]["claims"] = {"traces_cut": lost}
    assert redecide("13_reactor", metrics)["summary"]["claims"]["traces_cut"]["sentence"].startswith(
        "differs: MMC mix - prod c from x_0 (Reactor-CTS)")
    assert again["traces_cut"]["sentence"].startswith("differs: MMC mix 0.1 - prod c from x_0 (Reactor-CTS) = -0.7")


def test_a_share_against_chance_stays_a_share_against_chance():
    from pcnn_explore.verdicts import share_verdict

    # 10's "finds the reward more often than dithering would": 20 of 40 seeds against chance 0.471
    v = share_verdict(20, 40, 0.4714, claim="seeds of DQN-CTS, intrinsic reward only that found the +1")
    record = {"kind": "paper", "claim": "the intrinsic-only agent finds the reward more often than dithering would",
              "labels": ["DQN-CTS, intrinsic reward only"], "quantity": "found", "chance": 0.4714,
              **verdict_dict(v), "values": [1.0] * 20 + [0.0] * 20}
    assert record["test"] == "binomial" and record["verdict"] == "inconclusive"
    metrics = {"profile": "study", "summary": {"verdict": "inconclusive: ..."}, "claims": {"intrinsic_finds_reward": record}}
    again = redecide("10_intrinsic_only", metrics)["claims"]["intrinsic_finds_reward"]
    assert (again["verdict"], again["sentence"], again["p_value"]) == (record["verdict"], record["sentence"], record["p_value"])
