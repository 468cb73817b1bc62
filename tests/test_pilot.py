"""The deep-sea pilot and power analysis (pcnn_explore.study.power; the pilot's runs in
pcnn_explore.experiments.agents.pilot), the verdict seeds and their mappings
(pcnn_explore.study.preregistered.deep_sea), the CTS bonus scale's horizon reading (run.lines, train
--line) and a claim that depends on the bonus scale: each checked against numbers worked by hand."""
from __future__ import annotations


import numpy as np
import pytest

from pcnn_explore.experiments.agents import pilot
from pcnn_explore.study import power, power_model
from pcnn_explore.study.preregistered import deep_sea as pre


# ------------------------------------------------------------------------------------ power
def test_fisher_power_on_hand_checkable_cases():
    assert power_model.fisher_power(1.0, 0.0, 6) == 1.0  # 6 of 6 against 0 of 6: p = 1 / C(12, 6) = 0.0011
    for p in (0.0, 0.1, 0.3, 0.5, 0.9, 1.0):  # no effect: the test's size, at most its level
        assert power_model.fisher_power(p, p, 10) <= 0.025
    # against 0 of 10, a solved count k gives p = C(10, k) / C(20, k): k = 5 -> 0.016, k = 4 -> 0.043, so the
    # power is P(Bin(10, p1) >= 5): at p1 = 0.5, 638 / 1024
    assert power_model.fisher_power(0.5, 0.0, 10) == pytest.approx(638 / 1024, abs=1e-12)
    # the numbers at 30 seeds: about 0.07 if the truth is 1 in 10, 0.92 if 3 in 10
    assert power_model.fisher_power(0.1, 0.0, 30) == pytest.approx(0.0732, abs=5e-4)
    assert power_model.fisher_power(0.3, 0.0, 30) == pytest.approx(0.9234, abs=5e-4)
    with pytest.raises(ValueError, match="p_a must be a probability"):
        power_model.fisher_power(1.5, 0.0, 6)


def test_sign_flip_on_the_lattice_is_the_kits_exact_test():
    from pcnn_explore.verdicts.statistics import sign_flip_p

    assert power_model.sign_flip_p_lattice([1, 1, 1]) == 0.125
    assert power_model.sign_flip_p_lattice([2, -1]) == 0.5  # sums 1, 3, -3, -1
    assert power_model.sign_flip_p_lattice([0, 0, 3]) == 0.5  # ties flip to themselves: as if one seed
    assert power_model.sign_flip_p_lattice([1] * 6) == 2 ** -6
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.integers(-3, 4, size=int(rng.integers(1, 13)))
        for direction in ("greater", "less"):
            assert power_model.sign_flip_p_lattice(x, direction) == pytest.approx(sign_flip_p(x, direction), abs=1e-12)
    with pytest.raises(ValueError, match="integers"):
        power_model.sign_flip_p_lattice([0.5, 1])


def test_score_power_by_hand():
    # a solves every size, b none: each seed's difference is +3 sizes, p = 2^-n: 6 seeds reach 0.025, 5 never
    assert power_model.score_power([1.0] * 3, [0.0] * 3, 6) == 1.0
    assert power_model.score_power([1.0] * 3, [0.0] * 3, 5) == 0.0
    # no effect: the test's size, within the simulation's error (4,000 draws: 0.0025 at 0.025)
    assert power_model.score_power([0.4, 0.2, 0.1], [0.4, 0.2, 0.1], 20) <= 0.025 + 3 * 0.0025
    # equivalence: both lines at 0 on every seed, the two one-sided p are 2^-n each
    assert power_model.score_power([0.0] * 3, [0.0] * 3, 6, margin=0.2) == 1.0
    assert power_model.score_power([0.0] * 3, [0.0] * 3, 5, margin=0.2) == 0.0
    # a sure difference of one size in three (1/3) lies beyond the margin 0.2: never equivalent
    assert power_model.score_power([1.0, 0.0, 0.0], [0.0] * 3, 20, margin=0.2) == 0.0


def test_share_power_by_hand():
    # 2 of 2 against chance 0.1: p = 0.01 <= 0.025, 1 of 2: p = 0.19; a sure finder always reaches 2
    assert power_model.share_power(1.0, 0.1, 2) == 1.0
    assert power_model.share_power(0.5, 0.1, 2) == pytest.approx(0.25)
    assert power_model.share_power(0.1, 0.1, 20) <= 0.025


def test_price_of_a_design_by_hand():
    runs = [{"line": "dqn", "size": 10, "seed": 0, "episodes_run": 1000, "wall_s": 10.0, "bsuite_solve_episode": None},
            {"line": "cts", "size": 10, "seed": 0, "episodes_run": 100, "wall_s": 1.0, "bsuite_solve_episode": 100}]
    fake = {"runs": runs, "seeds": [0], "seed_wall_s": [7.0], "workers": 2, "probe": []}
    assert power.agent_rates(fake) == {"dqn": 1000.0, "cts": 1000.0}  # agent steps / s
    assert power.run_overhead(fake) == pytest.approx((7.0 * 2 - 11.0) / 2)  # 1.5 s a run
    # 4 seeds: dqn 4 x (10,000 steps / 1000 + 1.5) = 46 s, cts 4 x (1,000 / 1000 + 1.5) = 10 s, on 2 workers
    assert power.design_minutes(fake, ["dqn", "cts"], [10], [1000], 4) == pytest.approx(56 / 2 / 60)
    with pytest.raises(ValueError, match="no measured rate"):
        power.design_minutes(fake, ["kit"], [10], [1000], 4)


def test_the_pilot_refuses_a_verdict_or_seen_seed_before_any_run(tmp_path):
    with pytest.raises(ValueError, match="tuning seeds only"):
        pilot.run_pilot(tmp_path, seeds=(0, 701), path=tmp_path / "p.json")
    with pytest.raises(ValueError, match="tuning seeds only"):
        pilot.run_pilot(tmp_path, seeds=(401,), path=tmp_path / "p.json")
    assert not any(tmp_path.iterdir())


def test_the_seen_seeds_read_from_the_first_studys_report():
    seen = power.seen_values()  # frozen from docs/study-report at 3ab3e3d, before the re-run replaced it
    assert seen["paper_cts"]["seeds"] == list(range(401, 411)) and seen["paper_cts"]["size"] == 14
    assert sum(seen["paper_cts"]["solved"]) == 1 and sum(seen["dqn"]["solved"]) == 0  # 1 of 10 against 0
    assert sum(seen["paper_cts_scale"]["solved"]) == 7  # the sensitivity line: 7 of 10


# ------------------------------------------------------------------- seeds and mappings
def test_verdict_seeds_are_new_and_each_has_its_declared_mapping():
    assert pre.VERDICT_SEED_POOL[0] == 701 and pre.VERDICT_SEEDS == pre.VERDICT_SEED_POOL[:20]
    assert not set(pre.VERDICT_SEED_POOL) & (set(pre.TUNING_SEEDS) | set(pre.PILOT_SEEDS))
    assert pre.mapping_for(701) == 10_701 and pre.VERDICT_MAPPINGS[720] == 10_720
    maps = list(pre.VERDICT_MAPPINGS.values())
    assert len(set(maps)) == len(maps) and 42 not in maps
    assert not set(maps) & {m for m, _ in pre.TUNING_MAPPINGS}
    with pytest.raises(ValueError, match="non-negative integer"):
        pre.mapping_for(True)
    for p in pre.PLANS.values():
        assert p.seeds == pre.VERDICT_SEED_POOL[:len(p.seeds)] and len(p.seeds) >= 20 and len(p.episodes) == len(p.sizes)


def test_study_specs_give_each_seed_its_mapping_and_each_size_its_bonus_scale(tmp_path):
    from pcnn_explore.experiments.agents.deep_sea_study import DeepSeaStudySettings, study_specs
    from pcnn_explore.run.lines import horizon_bonus_scale, line

    s = DeepSeaStudySettings(profile="study", sizes=(10, 14), episodes=(5,), seeds=(701, 702), workers=1,
                             mapping_seed="per_seed")
    specs = study_specs(s, [line("paper_cts_horizon")], tmp_path)
    got = [(sp.env, sp.seed, dict(sp.overrides)["mapping_seed"], dict(sp.overrides)["bonus_scale"]) for sp in specs]
    assert got == [("DeepSea-10-v0", 701, 10_701, horizon_bonus_scale(10)), ("DeepSea-10-v0", 702, 10_702, horizon_bonus_scale(10)),
                   ("DeepSea-14-v0", 701, 10_701, horizon_bonus_scale(14)), ("DeepSea-14-v0", 702, 10_702, horizon_bonus_scale(14))]
    with pytest.raises(ValueError, match="mapping_seed must be"):
        DeepSeaStudySettings(profile="study", mapping_seed="each").check()


# ---------------------------------------------------------------- the horizon reading
def test_the_horizon_bonus_scale_is_the_declared_formula():
    from pcnn_explore.run.lines import horizon_bonus_scale, line

    for n in (1, 10, 14, 20, 50):  # 0.05 x 100 / sum_{t<N} 0.99^t = 0.05 x 100 x 0.01 / (1 - 0.99^N)
        assert horizon_bonus_scale(n) == pytest.approx(0.05 / (1 - 0.99 ** n), rel=1e-12)
    assert horizon_bonus_scale(1) == pytest.approx(5.0)  # one step: the whole Atari horizon's bonus
    assert [round(horizon_bonus_scale(n), 2) for n in (10, 14, 20)] == [0.52, 0.38, 0.27]
    with pytest.raises(ValueError, match="positive integer"):
        horizon_bonus_scale(0)
    v = line("paper_cts_horizon")
    assert v.kind == "paper" and "bonus_scale" not in dict(v.overrides)
    assert v.fields_for("DeepSea-14-v0") == {**dict(line("paper_cts").overrides), "bonus_scale": horizon_bonus_scale(14)}
    assert line("paper_cts_no_mmc_horizon").fields_for("DeepSea-10-v0")["mmc_beta"] == 0.0
    with pytest.raises(ValueError, match="per DeepSea size"):
        v.fields_for("MiniGrid-Empty-5x5-v0")


def test_train_line_paper_cts_horizon_resolves_per_size(tmp_path):
    from pcnn_explore.run.cli import add_arguments, config_from_args
    from pcnn_explore.run.config import SettingError
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)

    def cfg(*argv):
        return config_from_args(parser.parse_args(["--out", str(tmp_path / "r"), *argv]))

    assert cfg("--line", "paper_cts_horizon", "--env", "DeepSea-14-v0").bonus_scale == pytest.approx(0.38094, abs=1e-5)
    assert cfg("--line", "paper_cts_horizon", "--env", "DeepSea-10-v0").bonus_scale == pytest.approx(0.05 / (1 - 0.99 ** 10))
    assert cfg("--line", "paper_cts_horizon", "--env", "DeepSea-14-v0", "--bonus-scale", "0.5").bonus_scale == 0.5
    with pytest.raises(SettingError, match="DeepSea-N-v0"):
        cfg("--line", "paper_cts_horizon", "--env", "MiniGrid-Empty-5x5-v0")


def test_a_claim_that_differs_between_the_readings_depends_on_the_bonus_scale(tmp_path):
    import dataclasses

    from pcnn_explore.experiments.agents import deep_sea_claims as dc
    from pcnn_explore.experiments.agents import deep_sea_figures as dsf
    from pcnn_explore.experiments.agents.deep_sea_study import DeepSeaStudy, DeepSeaStudySettings, RunValues
    from pcnn_explore.report.first_screen import notebook_row
    from pcnn_explore.report.index import notebook_verdict
    from pcnn_explore.run.lines import line
    from pcnn_explore.study import DEPENDS_ON_SCALE, decide_again, metrics_record

    seeds = tuple(range(701, 707))
    settings = DeepSeaStudySettings(profile="study", sizes=(10,), episodes=(100,), seeds=seeds, workers=1)
    lines = [line(k) for k in ("paper_cts", "paper_cts_horizon", "dqn")]

    def run(key, seed, solved):
        return RunValues(key, 10, seed, 100, 100, 5 if solved else None, solved, 5 if solved else None, solved,
                         1.0 if solved else 0.0, 1 if solved else None, 1.0, np.ones(100))

    runs = [run(k, s, k == "paper_cts") for k in ("paper_cts", "paper_cts_horizon", "dqn") for s in seeds]
    study = DeepSeaStudy(settings, lines, runs)
    claim = pre.plan("07").claim("cts_bonus_explores")  # decided under the horizon reading too (SECOND_READINGS)
    plan = pre.Plan("07", "Fig. 5", "x", ("paper_cts", "paper_cts_horizon", "dqn"), (10,), (100,), seeds, (claim,))
    values = lambda k, q: dc.claim_values(study, k, q)  # noqa: E731
    (d,) = dc.decisions(plan, values, study.labels, dsf.chance(study))
    # at 0.05: 6 of 6 seeds score 1 against 0, p = 2^-6 (agrees); at the horizon reading 0 against 0 (inconclusive)
    readings = dict(d.readings)
    assert d.word == DEPENDS_ON_SCALE
    assert readings["bonus scale 0.05"].word == "agrees"
    assert readings["bonus scale 0.05"].p == pytest.approx(2 ** -6)
    assert readings["horizon bonus scale"].word == "inconclusive"
    assert d.sentence.startswith("depends on the bonus scale: at 0.05, agrees")
    assert decide_again(d) == d  # a re-render decides both readings again, to the same
    metrics = {"profile": "study", **metrics_record([d])}
    word, sentence = notebook_verdict(metrics)
    assert word == "partly"  # the two readings: one agrees, one undecided
    row = notebook_row("07_dqn_pixelcnn", metrics, word, sentence)
    assert "depends on the bonus scale" in row.number
    assert "bonus scale 0.05, score difference 1" in row.number and "horizon bonus scale, score difference 0" in row.number
    # the same verdict under both readings: the claim's own word, the second reading named in its sentence
    both = dataclasses.replace(plan, lines=("paper_cts", "dqn"))
    same = dc.decisions(both, lambda k, q: values("paper_cts" if k == "paper_cts_horizon" else k, q),
                        study.labels, dsf.chance(study))[0]
    assert same.word == "agrees" and "the horizon reading of the bonus scale too: agrees" in same.sentence


def test_a_sweep_resolves_a_line_set_per_size_on_each_deep_sea_size(capsys, tmp_path):
    from pcnn_explore.cli import main
    from pcnn_explore.run.lines import horizon_bonus_scale
    from pcnn_explore.sweep.grid import Grid

    out = str(tmp_path / "s")
    g = Grid(envs=("DeepSea-10-v0", "DeepSea-14-v0"), lines=("paper_cts_horizon",), seeds=(701,), out=out)
    assert [dict(t.overrides)["bonus_scale"] for t in g.trials()] == [horizon_bonus_scale(10), horizon_bonus_scale(14)]
    assert [t.name for t in g.trials()] == ["DeepSea-10-v0/paper_cts_horizon/seed701",
                                            "DeepSea-14-v0/paper_cts_horizon/seed701"]
    # an env without a size: refused, before anything is written
    assert main(["sweep", "--envs", "DeepSea-10-v0,MiniGrid-Empty-5x5-v0", "--lines", "paper_cts_horizon", "--out", out,
                 "--dry-run"]) == 2
    assert ("line 'paper_cts_horizon' sets bonus_scale per DeepSea size N and MiniGrid-Empty-5x5-v0 is no "
            "DeepSea-N-v0") in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_rerender_keeps_a_stored_study_decided_where_the_new_plan_lacks_the_seeds():
    # 09's "c = 1 does as well as c = 0.1" is declared not testable for the new design (too few seeds at
    # DeepSea-10); runs of an earlier design that decided it (401-410) are decided again on their own
    # claim and values, never "on this task"; a run of the new design keeps its "too few seeds"
    import dataclasses
    import json
    from pathlib import Path

    from pcnn_explore.study import Decision, decide, decide_again, decisions_of
    from pcnn_explore.verdicts import TOO_FEW_SEEDS

    declared = pre.PLANS["09"].claim("robust_c1")
    assert (declared.test, declared.reason) == ("not_testable", TOO_FEW_SEEDS)
    earlier = dataclasses.replace(declared, test="sign_flip_tost", reason="", note="",
                                  labels=("c = 1", "c = 0.1"), measure="score c = 1 - c = 0.1")
    d = decide(earlier, [1.0] * 10, [1.0] * 10, seeds=range(401, 411))
    again = decide_again(Decision.from_record(json.loads(json.dumps(d.to_record()))))
    assert again == d and again.test == "sign_flip_tost" and again.word == "agrees" and again.reason == ""
    shipped = json.loads((Path(__file__).resolve().parents[1] / "docs" / "study-report" / "09_pg_scale" /
                          "metrics.json").read_text())
    robust = next(x for x in decisions_of(shipped) if x.name == "robust_c1")
    assert robust.reason == TOO_FEW_SEEDS and robust.sentence.startswith(
        "not testable: too few seeds at this profile (needs 88 per line")
    assert decide_again(robust) == robust


def test_the_power_analysis_gives_the_preregistered_record_exactly():
    # the pilot's file and the frozen seen values give back DESIGNS and POWER as recorded before the
    # verdict runs, the claims declared underpowered included (their power is the plan's reason)
    import json

    from pcnn_explore.study.preregistered.deep_sea_power import DESIGNS, POWER

    got = power.analyse()
    plain = lambda x: json.loads(json.dumps(x, sort_keys=True, default=list))  # noqa: E731 (tuples as lists)
    assert plain(got["designs"]) == plain(DESIGNS)
    assert plain(got["claims"]) == plain(POWER)
    assert got["claims"]["robust_c1"]["needs"] == 88 and got["claims"]["kit_mmc_helps"]["needs"] == 104
