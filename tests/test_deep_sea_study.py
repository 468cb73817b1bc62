"""The deep-sea agent study (pcnn_explore.experiments.agents.deep_sea_study) and its claims decided by the
study layer (deep_sea_claims.decisions, pcnn_explore.study.decide) on hand-made logs and per-seed values,
each checked against numbers worked by hand."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from pcnn_explore.experiments.agents import deep_sea_claims as claims
from pcnn_explore.experiments.agents import deep_sea_study as study
from pcnn_explore.run.log import LOG_COLUMNS
from pcnn_explore.study import Claim, notebook_words
from pcnn_explore.study.preregistered import deep_sea as preregistered


def _log(folder: Path, size: int, found: list[bool], cells: list[int], cut: bool = False) -> None:
    """A DeepSea-``size`` log.csv: one complete episode per entry of ``found`` (+1 or not), the
    distinct cells after it; ``cut`` adds an incomplete last row (which must be ignored)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [",".join(LOG_COLUMNS)]
    for e, (f, c) in enumerate(zip(found, cells), 1):
        values = dict(step=e * size, episode=e - 1, length=size, complete=1, distinct_cells=c,
                      wall_seconds=0.5 * e, first_success_step="nan", density_updates=0)
        values["return"] = 0.99 if f else -0.004
        rows.append(",".join(str(values.get(k, "nan")) for k in LOG_COLUMNS))
    if cut:
        rows.append(",".join(str(dict(step=len(found) * size + 2, episode=len(found), length=2, complete=0,
                                      distinct_cells=99, wall_seconds=99, density_updates=0,
                                      **{"return": 0.99}).get(k, "nan")) for k in LOG_COLUMNS))
    (folder / "log.csv").write_text("\n".join(rows) + "\n")


def test_read_run_by_hand(tmp_path):
    # DeepSea-4: 10 occupiable cells; 8 episodes: +1 in episodes 3, 6, 7, 8
    found = [False, False, True, False, False, True, True, True]
    _log(tmp_path, 4, found, [3, 5, 6, 6, 7, 8, 9, 10], cut=True)
    r = study.read_run(tmp_path, "cts_mmc", 4, 7, cap=8)
    assert r.episodes_run == 8
    assert r.first_success_episode == 3
    # bad so far / e: e=3: 2/3 = 0.67 < 0.9 -> solved at 3 (checked every episode)
    assert r.solve_episode == 3 and r.solved is True
    assert r.success_rate == 1.0  # last quarter: episodes 7, 8
    assert r.coverage == 1.0
    np.testing.assert_allclose(r.coverage_curve, [0.3, 0.5, 0.6, 0.6, 0.7, 0.8, 0.9, 1.0])
    assert r.wall_s == 4.0
    # the cap keeps the first episodes only
    r5 = study.read_run(tmp_path, "cts_mmc", 4, 7, cap=5)
    assert (r5.episodes_run, r5.success_rate, r5.coverage) == (5, 0.0, 0.7)  # last quarter of 5: episode 5
    assert study.censored_first_success(r5) == 3


def test_an_unsolved_run_is_censored_at_the_cap(tmp_path):
    # 10 episodes, one +1 in episode 10: 9/10 bad = 0.9 is not below 0.9 -> never solved
    _log(tmp_path, 10, [False] * 9 + [True], list(range(10, 20)))
    r = study.read_run(tmp_path, "dqn", 10, 1, cap=10)
    assert r.solve_episode is None and r.solved is False and r.first_success_episode == 10
    _log(tmp_path / "none", 10, [False] * 10, [10] * 10)
    never = study.read_run(tmp_path / "none", "dqn", 10, 1, cap=10)
    assert study.censored_first_success(never) == 11 and never.coverage == 10 / 55


def _study(tmp_path, success: dict[str, list[list[bool]]], size=4, cap=8) -> study.DeepSeaStudy:
    """A study of hand-made runs: per key, per seed, the episodes' +1s."""
    settings = study.DeepSeaStudySettings(sizes=(size,), episodes=(cap,), seeds=(11, 12), workers=1)
    variants = [study.study_variant(k, mmc_beta=0.0) for k in success]
    runs = []
    for v in variants:
        for seed, found in zip(settings.seeds, success[v.key]):
            folder = tmp_path / v.key / str(seed)
            _log(folder, size, found, list(range(1, len(found) + 1)))
            runs.append(study.read_run(folder, v.key, size, seed, cap))
    return study.DeepSeaStudy(settings, variants, runs)


def test_study_per_seed_values_scaling_rows_and_metrics(tmp_path):
    s = _study(tmp_path, {"cts_mmc": [[True] * 8, [False] * 6 + [True, True]],
                          "dqn": [[False] * 8, [False] * 7 + [True]]})
    assert s.per_seed("cts_mmc", "success_rate") == [1.0, 1.0]
    assert s.per_seed("dqn", "success_rate") == [0.0, 0.5]
    assert s.per_seed("cts_mmc", "first_success_episode") == [1.0, 7.0]
    assert s.per_seed("dqn", "first_success_episode") == [9.0, 8.0]  # never: cap + 1
    # seed 12 of cts_mmc: bad 6 of 7 at e=7 = 0.857 < 0.9 -> solved at 7 < 2^4 + 100; of dqn:
    # 7 of 8 bad at e=8 = 0.875 < 0.9 -> solved at 8 (one +1 in eight episodes meets the rule)
    assert s.per_seed_score("cts_mmc") == [1.0, 1.0] and s.per_seed_score("dqn") == [0.0, 1.0]
    rows = s.scaling_rows()
    assert rows[1] == {"size": 4, "variant": "cts_mmc", "seed": 12, "episodes_run": 8, "solved": 1, "solve_episode": 7,
                       "bsuite_solve_episode": 7, "counts_for_score": 1}
    m = s.metrics()
    assert m["dqn"]["seeds"] == [11, 12] and m["dqn"]["success_rate"] == [0.0, 0.5]
    assert [r["solve_episode"] for r in m["cts_mmc"]["runs"]] == [1, 7]
    at, cov = s.coverage_curves("dqn", 4, points=3)
    np.testing.assert_array_equal(at, [1, 4, 8])  # linspace(1, 8, 3) rounded: 1, 4.5 -> 4 (half to even), 8
    np.testing.assert_allclose(cov[0], [0.1, 0.4, 0.8])
    assert s.mean_coverage("dqn", 4, points=3) == pytest.approx([13 / 30, 13 / 30])
    with pytest.raises(ValueError, match="field must be one of"):
        s.per_seed("dqn", "max")
    with pytest.raises(KeyError, match="no variant 'pixelcnn'"):
        s.per_seed("pixelcnn", "coverage")


def test_specs_steps_are_episodes_times_n_and_mmc_is_explicit(tmp_path):
    settings = study.DeepSeaStudySettings(sizes=(10, 14), episodes=(100, 50), seeds=(301, 302), workers=2,
                                          mapping_seed=7, train_overrides=(("tensorboard", False),))
    specs = study.study_specs(settings, [study.study_variant("cts", "bonus", mmc_beta=0.0),
                                         study.study_variant("cts_mmc", mmc_beta=0.5)], tmp_path)
    assert [(s.env, s.key, s.seed, s.steps) for s in specs[:4]] == [
        ("DeepSea-10-v0", "bonus", 301, 1000), ("DeepSea-10-v0", "bonus", 302, 1000),
        ("DeepSea-10-v0", "cts_mmc", 301, 1000), ("DeepSea-10-v0", "cts_mmc", 302, 1000)]
    assert specs[-1].steps == 14 * 50 and specs[-1].out_dir == str(tmp_path / "DeepSea-14-v0" / "cts_mmc_s302")
    assert specs[0].config_fields()["mmc_beta"] == 0.0 and specs[2].config_fields()["mmc_beta"] == 0.5
    assert dict(specs[0].overrides) == {"mapping_seed": 7, "mmc_beta": 0.0, "tensorboard": False}


@pytest.mark.parametrize("bad, match", [
    (dict(sizes=(2,)), "sizes must be DeepSea sizes"),
    (dict(sizes=(10, 10)), "sizes repeat"),
    (dict(sizes=(10, 12), episodes=(5, 5, 5)), "episodes must be one positive episode cap"),
    (dict(episodes=(0,)), "episodes must be one positive"),
    (dict(seeds=(1, 1)), "seeds must be distinct"),
    (dict(workers=0), "workers must be a positive integer"),
])
def test_bad_settings_are_rejected_before_any_run(tmp_path, bad, match):
    with pytest.raises(ValueError, match=match):
        study.study_specs(study.DeepSeaStudySettings(**bad), [study.study_variant("dqn")], tmp_path)
    assert not any(tmp_path.iterdir())


def test_study_presets():
    pre = preregistered

    # the study preset is the pilot's design (07's): verdict seeds 701 and up, each its own mapping, runs ending
    # once solved; STUDY_SEEDS are the seen seeds 401-410 that notebook 14's bsuite score keeps (no verdict)
    s = study.settings_of("study")
    assert s.seeds == pre.STUDY_DESIGN["seeds"] and s.seeds[0] == 701 and len(s.seeds) >= 20
    assert s.sizes == pre.STUDY_DESIGN["sizes"] and s.mapping_seed == "per_seed" and s.mapping_of(703) == 10_703
    assert dict(s.train_overrides)["stop_when_solved"] is True
    assert study.STUDY_SEEDS == pre.PILOT_SEEDS == tuple(range(401, 411))
    assert study.settings_of("smoke", seed=5, n_seeds=2).seeds == (5, 6)
    assert study.settings_of("study", sizes=(10, 14), episodes=(1000, 800)).episode_cap(14) == 800
    assert pre.random_finds_within(10, 1) == 2 ** -10
    assert pre.random_finds_within(14, 1000) == pytest.approx(1 - (1 - 2 ** -14) ** 1000)


# ----------------------------------------------------------------- lines, the fixed plan, the claims
def test_the_papers_lines_state_the_papers_method():
    from pcnn_explore.experiments.agents import lines

    cts = dict(lines.line("paper_cts").overrides)
    assert cts == {"mmc_beta": 0.1, "scored_frame": "state", "novelty_epsilon": 0.0, "intrinsic_only": False,
                   "pg_scale": 1.0, "pg_schedule": "constant", "bonus_scale": 0.05}
    pcnn = dict(lines.line("paper_pixelcnn").overrides)
    assert (pcnn["pg_scale"], pcnn["pg_schedule"], pcnn["bonus_scale"], pcnn["mmc_beta"]) == (0.1, "inverse_sqrt", 1.0, 0.1)
    assert dict(lines.line("dqn").overrides) == {"mmc_beta": 0.0, "novelty_epsilon": 0.0}
    assert {lines.line(k).kind for k in ("dqn", "dqn_mmc")} == {"baseline"}
    # each kit addition changes the paper's CTS line in the settings it names, and nothing else
    for key, changed in lines.KIT_ADDITIONS.items():
        kit = dict(lines.line(key).overrides)
        assert lines.line(key).kind == "kit" and kit == {**cts, **changed}
    assert dict(lines.line("novelty_only").overrides)["bonus_scale"] == 0.0
    assert lines.exploration_rule(lines.line("kit_novelty")) == "novelty-scaled epsilon"
    assert lines.exploration_rule(lines.line("paper_cts")) == "epsilon-greedy"
    # every setting resolved on DeepSea: the line's own, and the DeepSea adaptations every line shares
    settings = lines.resolved_settings(lines.line("paper_cts"), "DeepSea-14-v0", "study")
    assert (settings["bonus"], settings["bonus_scale"], settings["novelty_epsilon"], settings["mapping_rule"]) == (
        "cts", 0.05, 0.0, "bsuite")
    dqn = lines.resolved_settings(lines.line("dqn"), "DeepSea-14-v0", "study")
    for k in ("train_every", "target_update_every", "lr", "optimizer", "epsilon_end", "epsilon_decay_steps", "network"):
        assert settings[k] == dqn[k]
    with pytest.raises(ValueError, match="unknown line"):
        lines.line("paper_cts_tuned")


def _claim(kind, lines, name="x"):
    return Claim("07_dqn_pixelcnn", name, kind, "", "fisher", quantity="solved", lines=lines)


def test_a_paper_claim_never_compares_a_kit_line_or_two_exploration_rules():
    from pcnn_explore.experiments.agents import lines

    by_key = lines.LINES
    claims.check_claim(_claim("paper", ("paper_cts", "dqn")), by_key)
    with pytest.raises(ValueError, match="kit verdict"):
        claims.check_claim(_claim("paper", ("kit", "dqn")), by_key)
    # a baseline given the kit's novelty-scaled epsilon is no longer the paper's comparison
    novelty_dqn = study.study_variant("dqn", "dqn", kind="baseline", novelty_epsilon=1.0)
    with pytest.raises(ValueError, match="different exploration rules"):
        claims.check_claim(_claim("paper", ("paper_cts", "dqn")), {**by_key, "dqn": novelty_dqn})
    # the same comparison as a kit claim is allowed
    claims.check_claim(_claim("kit", ("kit", "dqn")), by_key)
    with pytest.raises(ValueError, match="does not run"):
        claims.check_claim(_claim("kit", ("kit", "none")), by_key)
    # a claim decided under the second reading of the bonus scale too: its horizon line must run as well
    with pytest.raises(ValueError, match="paper_cts_horizon"):
        claims.check_claim(_claim("paper", ("paper_cts", "dqn"), "cts_bonus_explores"),
                           {k: v for k, v in by_key.items() if k != "paper_cts_horizon"})


def test_the_fixed_plans_hold_together():
    from pcnn_explore.experiments.agents import deep_sea_figures as dsf
    from pcnn_explore.experiments.agents import lines

    assert not set(preregistered.VERDICT_SEEDS) & set(preregistered.TUNING_SEEDS)
    assert preregistered.VERDICT_MAPPING not in preregistered.TUNING_MAPPINGS
    assert len(preregistered.VERDICT_SEEDS) >= 10
    for figure in dsf.FIGURES:
        p = dsf.plan(figure)
        keys = [v.key for v in dsf.variants(figure)]  # checks every claim against the lines
        assert keys == list(p.lines)
        assert any(c.kind == "paper" for c in p.claims)
        for c in p.claims:  # a claim the budget cannot run is declared not testable, its lines left out
            assert set(c.lines) <= set(keys) or c.test == "not_testable"
            # each claim carries its notebook, the paper's sentence, its figure and the plan's design
            assert c.notebook == preregistered.NOTEBOOKS[p.notebook] and (c.paper, c.where) == (p.paper, p.figure)
            assert (c.design.seeds, c.design.sizes) == (p.seeds, p.sizes)
            # the claims the pilot sized declare their smallest effect of interest; no other claim has one
            power = preregistered.POWER.get(c.name)
            assert c.design.smallest_effect == (power["effect_of_interest"] if power else None)
            if c.kind == "paper":
                assert all(lines.line(k).kind != "kit" for k in c.lines)
        assert "Claims:" in dsf.describe_plan(figure)
    # Fig. 12's scales are c n^-1/2, the paper's form, and c held constant is a kit line
    assert dict(lines.line("c10").overrides)["pg_schedule"] == "inverse_sqrt"
    assert dsf.plan("fig12").claim("constant_c_helps").kind == "kit"
    with pytest.raises(ValueError, match="an equivalence test needs a positive margin"):
        preregistered._claim("x", "paper", "", ("a", "b"), "score", "sign_flip_tost")
    with pytest.raises(ValueError, match="quantity must be one of"):
        preregistered._claim("x", "paper", "", ("a", "b"), "bsuite score", "sign_flip")


def test_the_study_profile_refuses_tuning_seeds_and_too_few_seeds_before_training(tmp_path):
    from pcnn_explore.experiments.agents import deep_sea_figures as dsf

    p = dsf.plan("fig5")
    s = dsf.settings("fig5", "study")
    # Fig. 5 runs under the PixelCNN's optimizer readings on their re-run's new verdict seeds, 801-840
    assert s.seeds == p.seeds and s.seeds[0] == 801 and s.sizes == p.sizes and s.episodes == p.episodes
    assert s.mapping_seed == "per_seed" and s.density_optimizer == "tf1"
    with pytest.raises(ValueError, match=r"verdict seeds must be the declared new seeds 801-840; got seen \[701, "):
        dsf.settings("fig5", "study", seed=701, n_seeds=10)
    with pytest.raises(ValueError, match="tuning seeds"):
        dsf.settings("fig5", "study", seed=301, n_seeds=10)
    # the seen seeds 401-410 are the pilot's now: never a verdict's again
    with pytest.raises(ValueError, match="seen seeds 401-410"):
        dsf.settings("fig5", "study", seed=401, n_seeds=10)
    with pytest.raises(ValueError, match="cannot decide claim"):
        dsf.settings("fig11", "study", n_seeds=3)
    bad = study.DeepSeaStudySettings(profile="study", sizes=(4,), episodes=(5,), seeds=(801, 802), workers=1,
                                     density_optimizer="tf1")
    with pytest.raises(ValueError, match="cannot decide claim"):
        dsf.run("fig5", bad, dsf.variants("fig5"), tmp_path)
    assert not any(tmp_path.iterdir())
    # smoke keeps its 2 seeds: its tests say "not testable at this profile"
    assert dsf.settings("fig5", "smoke").seeds == (0, 1)


# ------------------------------------------------------------------ each figure's verdict on a study
def _figure_study(tmp_path, figure, found_by_key, size=4, cap=8, profile="study"):
    """A study of ``figure``'s lines from hand-made logs: per key, per seed, the episodes' +1s (a key
    missing from ``found_by_key`` never finds the +1)."""
    from pcnn_explore.experiments.agents import deep_sea_figures as dsf

    n = len(next(iter(found_by_key.values())))
    seeds = tuple(range(401, 401 + n))
    settings = study.DeepSeaStudySettings(profile=profile, sizes=(size,), episodes=(cap,), seeds=seeds, workers=1)
    lines = dsf.variants(figure)
    runs = []
    for v in lines:
        for seed, found in zip(seeds, found_by_key.get(v.key, [[False] * cap] * n)):
            folder = tmp_path / v.key / str(seed)
            cells = [min(e + (5 if "intrinsic" in v.key else 0), 10) for e in range(1, len(found) + 1)]
            _log(folder, size, found, cells)
            runs.append(study.read_run(folder, v.key, size, seed, cap))
    return study.DeepSeaStudy(settings, lines, runs, wall_s=60.0)


NEVER, LEARNT = [False] * 8, [False] * 4 + [True] * 4


def test_fig5_the_paper_verdict_is_the_papers_lines_only(tmp_path):
    from pcnn_explore.experiments.agents import deep_sea_figures as dsf

    # the paper's CTS line solves on 10 of 10 seeds under both bonus-scale readings, DQN on none; the kit's line always
    s = _figure_study(tmp_path, "fig5", {"paper_cts": [LEARNT] * 10, "paper_cts_horizon": [LEARNT] * 10,
                                         "kit": [LEARNT] * 10})
    decided = dsf.decide("fig5", s)
    d = {x.name: x for x in decided}
    c = d["cts_bonus_explores"]
    # the deep-sea score 1 against 0 on every seed, paired: the sign-flip p is 2^-10, under either reading
    assert c.word == "agrees" and c.p == pytest.approx(2 ** -10)
    assert c.kind == "paper" and c.claim.lines == ("paper_cts", "dqn") and c.test == "sign_flip"
    assert c.values == (1.0,) * 10 and c.values_b == (0.0,) * 10 and c.seeds == tuple(range(401, 411))
    assert [(k, r.word) for k, r in c.readings] == [("bonus scale 0.05", "agrees"), ("horizon bonus scale", "agrees")]
    assert dict(c.readings)["horizon bonus scale"].claim.lines == ("paper_cts_horizon", "dqn")
    # under the PixelCNN's optimizer readings the PixelCNN claim is decided (40 seeds fit the budget): here the
    # paper's PixelCNN line and DQN both score 0 on every seed, every pair a tie: inconclusive
    px = d["pixelcnn_bonus_explores"]
    assert px.word == "inconclusive" and px.test == "sign_flip" and px.claim.lines == ("paper_pixelcnn", "dqn")
    assert px.values == px.values_b == (0.0,) * 10
    # "DQN-PixelCNN beats DQN-CTS" is not testable on DeepSea whatever the seeds show (here 0 of 10 against
    # 10 of 10): the paper's PixelCNN cannot count DeepSea's cells; the per-seed values are kept, deciding nothing
    beats = d["pixelcnn_beats_cts"]
    assert beats.word == "not testable" and beats.reason == "not testable on this task"
    assert beats.sentence.startswith("not testable on this task: the paper's PixelCNN is translation-invariant")
    assert beats.values == (0.0,) * 10 and beats.values_b == (1.0,) * 10 and beats.p is None
    # a kit claim the design cannot power keeps its lines' values for the reader; they decide nothing
    mmc = d["kit_mmc_helps"]
    assert mmc.word == "not testable" and mmc.values == (0.0,) * 10 and mmc.values_b == (1.0,) * 10
    assert mmc.estimate is None and mmc.why.startswith("needs 104 per line")
    word, kit = notebook_words(decided)
    assert word == "partly"  # the CTS claim agrees, the PixelCNN claim is inconclusive, none differs
    # the kit's line ties the paper's CTS line (10 of 10 each): inconclusive, and never in the paper verdict
    assert d["kit_helps"].word == "inconclusive" and d["kit_helps"].kind == "kit"
    # the kit's other additions (never finding the +1 here) solve less than the paper's CTS line: differs,
    # and a differs is never lost among undecided claims
    assert d["kit_novelty_helps"].word == "differs" and kit == "differs"
    m = dsf.metrics("fig5", s, decided)
    assert (m["schema"], m["word"], m["kit_word"]) == (1, "partly", "differs")
    assert [r["name"] for r in m["claims"]] == [c.name for c in dsf.plan("fig5").claims]
    assert "verdict" not in m and "kit_verdict" not in m and "verdict" not in m["summary"]
    assert m["lines"]["paper_cts"]["settings"]["bonus_scale"] == 0.05 and m["lines"]["kit"]["kind"] == "kit"
    assert m["lines"]["kit_novelty"]["exploration"] == "novelty-scaled epsilon"
    assert m["lines"]["paper_cts_horizon"]["settings"]["bonus_scale"] == pytest.approx(0.05 / (1 - 0.99 ** 4))
    assert list(m["plan"]["seeds"]) == list(dsf.plan("fig5").seeds) and m["plan"]["seeds"][0] == 801
    note = dsf.closing_note("fig5", s, decided)
    assert "Paper verdict: partly" in note and "[kit]" in note


def test_fig11_each_line_against_dqn_paired(tmp_path):
    from pcnn_explore.experiments.agents import deep_sea_figures as dsf

    s = _figure_study(tmp_path, "fig11", {"paper_cts": [LEARNT] * 10, "paper_cts_horizon": [LEARNT] * 10})
    decided = dsf.decide("fig11", s)
    d = {x.name: x for x in decided}
    # the deep-sea score 1 on every seed against 0: the sign-flip p is 2^-10
    assert d["combination_progresses"].word == "agrees"
    assert d["combination_progresses"].p == pytest.approx(2 ** -10)
    # DQN + MMC and the bonus alone tie DQN at 0 on every seed: equivalent within +-0.2, testable because
    # the positive control of the same runs (the bonus with MMC, 1 on every seed) leaves the floor 0
    assert d["mmc_alone_no_progress"].word == "agrees"
    assert d["mmc_alone_no_progress"].control == (1.0,) * 10 and d["mmc_alone_no_progress"].test == "sign_flip_tost"
    assert d["bonus_alone_no_progress"].word == "agrees"
    assert notebook_words(decided)[0] == "agrees"
    # the bonus alone progresses too: its equivalence with DQN fails
    s = _figure_study(tmp_path / "b", "fig11", {"paper_cts": [LEARNT] * 10, "paper_cts_no_mmc": [LEARNT] * 10,
                                                "paper_cts_horizon": [LEARNT] * 10,
                                                "paper_cts_no_mmc_horizon": [LEARNT] * 10})
    decided = dsf.decide("fig11", s)
    assert decided[2].name == "bonus_alone_no_progress" and decided[2].word == "differs"
    assert notebook_words(decided)[0] == "mixed"
    # under the horizon reading the bonus alone stays at 0: the two readings differ, and the claim says so
    s = _figure_study(tmp_path / "h", "fig11", {"paper_cts": [LEARNT] * 10, "paper_cts_no_mmc": [LEARNT] * 10,
                                                "paper_cts_horizon": [LEARNT] * 10})
    alone = dsf.decide("fig11", s)[2]
    assert alone.word == "depends on the bonus scale"
    readings = dict(alone.readings)
    assert readings["bonus scale 0.05"].word == "differs"
    assert readings["horizon bonus scale"].word == "agrees"
    # the horizon reading's positive control is the paper's CTS line under that reading
    assert readings["horizon bonus scale"].control == (1.0,) * 10
    assert readings["horizon bonus scale"].claim.lines == ("paper_cts_no_mmc_horizon", "dqn")
    # nothing moves (the control at 0 on every seed too): "no progress" is not evidence, the lines do not move
    s = _figure_study(tmp_path / "c", "fig11", {"dqn": [NEVER] * 10})
    decided = dsf.decide("fig11", s)
    nm = decided[1]
    assert nm.word == "not testable" and nm.reason == "the lines do not move"
    assert nm.sentence.startswith("not testable: the lines do not move (the positive control leaves")
    assert decided[0].word == "inconclusive" and notebook_words(decided)[0] == "inconclusive"


def test_fig12_and_fig13_decided_on_hand_made_studies(tmp_path):
    from pcnn_explore.experiments.agents import deep_sea_figures as dsf

    early, late = [True] * 8, [False] * 6 + [True] * 2
    s = _figure_study(tmp_path / "12", "fig12", {"c0.1": [late] * 10, "c1": [late] * 10, "c10": [early] * 10})
    decided = dsf.decide("fig12", s)
    d = {x.name: x for x in decided}
    # "fairly robust" needs 88 seeds per line at DeepSea-10 by the pilot: declared not testable before the runs;
    # c = 10 finds the +1 at 1 against 7 (censored first +1, paired sign flip)
    for name in ("robust_c1", "robust_c10"):
        assert d[name].word == "not testable"
        assert d[name].sentence.startswith("not testable: too few seeds at this profile (needs 88 per line")
    assert d["larger_c_sooner"].word == "agrees"
    assert d["larger_c_sooner"].estimate == -6
    assert notebook_words(decided)[0] == "agrees" and d["constant_c_helps"].kind == "kit"
    s = _figure_study(tmp_path / "13", "fig13", {"paper_cts_intrinsic": [late] * 10, "dqn": [NEVER] * 10})
    decided = dsf.decide("fig13", s)
    d = {x.name: x for x in decided}
    assert d["intrinsic_explores"].word == "agrees"
    # 10 of 10 found the +1 against a random policy's chance of 1 - (15/16)^8 = 0.40 in 8 episodes
    assert d["intrinsic_finds_reward"].word == "agrees" and d["intrinsic_finds_reward"].test == "binomial"
    assert d["intrinsic_finds_reward"].claim.threshold == pytest.approx(1 - (15 / 16) ** 8)
    assert d["intrinsic_scores"].word == "not testable"
    assert d["intrinsic_scores"].sentence.startswith("not testable on this task: DeepSea tests exploring")
    assert notebook_words(decided)[0] == "agrees"  # every testable paper claim agrees


def test_two_seeds_are_not_testable(tmp_path):
    from pcnn_explore.experiments.agents import deep_sea_figures as dsf

    s = _figure_study(tmp_path, "fig5", {"paper_cts": [LEARNT] * 2}, profile="smoke")
    decided = dsf.decide("fig5", s)
    assert {d.word for d in decided} == {"not testable"}
    assert notebook_words(decided)[0].startswith("not testable: too few seeds at this profile")
