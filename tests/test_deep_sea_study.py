"""The deep-sea agent study (pcnn_explore.experiments.agents.deep_sea_study) and the claims' verdict rules
(deep_sea_claims) on hand-made logs and per-seed values, each checked against numbers worked by hand."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from pcnn_explore.experiments.agents import deep_sea_claims as claims
from pcnn_explore.experiments.agents import deep_sea_study as study
from pcnn_explore.run.log import LOG_COLUMNS


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
    assert rows[1] == {"size": 4, "variant": "cts_mmc", "seed": 12, "episodes_run": 8, "solved": 1, "solve_episode": 7}
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
    s = study.settings_of("study")
    assert len(s.seeds) >= 5 and s.seeds == study.STUDY_SEEDS and s.sizes == (10,)
    assert study.settings_of("smoke", seed=5, n_seeds=2).seeds == (5, 6)
    assert study.settings_of("study", sizes=(10, 14), episodes=(1000, 800)).episode_cap(14) == 800
    assert study.random_finds_within(10, 1) == 2 ** -10
    assert study.random_finds_within(14, 1000) == pytest.approx(1 - (1 - 2 ** -14) ** 1000)


# ----------------------------------------------------------------------------- the claims' rules
SEEDS = (1, 2, 3, 4, 5)
# t_{0.975, 4} = 2.7764451


def test_fig5_bonus_explores_agrees_differs_and_inconclusive():
    # differences 0.5, 0.6, 0.4, 0.5, 0.5: mean 0.5, sd 0.0707, half 2.776 * 0.0707 / sqrt 5 = 0.0878
    v = claims.bonus_explores([0.5, 0.6, 0.4, 0.5, 0.5], [0.0] * 5, SEEDS)
    assert v.word == "agrees" and v.interval == pytest.approx((0.5 - 0.08779, 0.5 + 0.08779), abs=1e-4)
    assert claims.bonus_explores([0.0] * 5, [0.5, 0.6, 0.4, 0.5, 0.5], SEEDS).word == "differs"
    # one seed of five solves: differences 1, 0, 0, 0, 0: mean 0.2, interval [-0.355, 0.755]
    v = claims.bonus_explores([1, 0, 0, 0, 0], [0] * 5, SEEDS)
    assert v.word == "inconclusive" and v.interval[0] == pytest.approx(0.2 - 2.7764451 * math.sqrt(0.2) / math.sqrt(5))


def test_fig5_pixelcnn_against_cts_is_never_decided_on_deep_sea():
    out = claims.pixelcnn_against_cts([1.0, 0.9, 0.95, 1.0, 0.9], [0.0] * 5, SEEDS)
    assert out["verdict"] == "not testable at this profile" and "same pseudo-count" in out["sentence"]
    assert out["measured"]["verdict"] == "agrees"  # measured, reported, not counted


def test_fig11_only_the_combination_progresses():
    t = 2 ** -10
    none = [0.0] * 5
    combo = [0.8, 0.9, 0.7, 0.95, 0.85]
    out = claims.only_combination_progresses({"dqn": none, "dqn_mmc": none, "cts": none, "cts_mmc": combo}, "cts_mmc", t)
    assert out["verdict"] == "agrees" and out["parts"]["dqn"]["verdict"] == "differs"
    # the bonus alone progresses too: differs
    out = claims.only_combination_progresses({"dqn": none, "cts": combo, "cts_mmc": combo}, "cts_mmc", t)
    assert out["verdict"] == "differs"
    # the combination does not progress: differs
    assert claims.only_combination_progresses({"dqn": none, "cts_mmc": none}, "cts_mmc", t)["verdict"] == "differs"
    # one seed of the bonus alone succeeds now and then: its interval straddles 2^-10: inconclusive
    out = claims.only_combination_progresses({"dqn": none, "cts": [0.3, 0, 0, 0, 0], "cts_mmc": combo}, "cts_mmc", t)
    assert out["parts"]["cts"]["verdict"] == "inconclusive" and out["verdict"] == "inconclusive"
    with pytest.raises(ValueError, match="the combination"):
        claims.only_combination_progresses({"dqn": none}, "cts_mmc", t)


def test_fig12_robust_across_c_with_its_margin():
    ref = [0.9, 0.8, 0.85, 0.9, 0.95]
    close = [0.85, 0.85, 0.9, 0.9, 0.9]  # differences -0.05 .. 0.05: inside +-0.2
    far = [0.1, 0.0, 0.05, 0.1, 0.0]
    assert claims.robust_across_c({"c0.1": ref, "c1": close, "c10": close}, "c0.1", SEEDS)["verdict"] == "agrees"
    out = claims.robust_across_c({"c0.1": ref, "c1": close, "c10": far}, "c0.1", SEEDS)
    assert out["verdict"] == "differs" and out["parts"]["c10"]["verdict"] == "differs" and out["margin"] == 0.2
    # one seed of five collapses: the interval reaches past the margin without lying outside: inconclusive
    assert claims.robust_across_c({"c0.1": ref, "c10": [0.9, 0.8, 0.85, 0.9, 0.0]}, "c0.1", SEEDS)["verdict"] == "inconclusive"


def test_fig12_larger_c_finds_the_plus_one_sooner():
    v = claims.larger_c_sooner([100, 120, 90, 110, 100], [400, 500, 450, 1001, 300], SEEDS)
    assert v.word == "agrees" and v.interval[1] < 0
    assert claims.larger_c_sooner([400, 500, 450, 1001, 300], [100, 120, 90, 110, 100], SEEDS).word == "differs"
    assert claims.larger_c_sooner([100, 500, 90, 1001, 300], [400, 120, 450, 110, 100], SEEDS).word == "inconclusive"


def test_fig13_coverage_and_finding_the_plus_one():
    assert claims.intrinsic_covers_more([0.9, 0.95, 0.92, 0.9, 0.93], [0.5, 0.6, 0.55, 0.5, 0.52], SEEDS).word == "agrees"
    assert claims.intrinsic_covers_more([0.5, 0.95, 0.5, 0.9, 0.5], [0.6, 0.6, 0.55, 0.6, 0.52], SEEDS).word == "inconclusive"
    chance = study.random_finds_within(14, 1000)  # 0.059
    # 5 of 5: exact lower bound 0.478 > 0.059
    v = claims.finds_reward([True] * 5, chance)
    assert v.word == "agrees" and v.interval[0] == pytest.approx(0.4782, abs=1e-4)
    # 1 of 5: [0.005, 0.716] straddles the chance
    assert claims.finds_reward([True, False, False, False, False], chance).word == "inconclusive"
    # 0 of 5 against a chance of 0.62 (DeepSea-10, 1,000 episodes): the top 0.522 lies below it
    assert claims.finds_reward([False] * 5, study.random_finds_within(10, 1000)).word == "differs"


# ------------------------------------------------------------------ each figure's verdict on a study
def _figure_study(tmp_path, figure, found_by_key, size=4, cap=8, profile="study"):
    """A study of ``figure``'s lines from hand-made logs: per key, per seed, the episodes' +1s."""
    from pcnn_explore.experiments.agents import deep_sea_figures as dsf

    seeds = tuple(range(21, 21 + len(next(iter(found_by_key.values())))))
    settings = study.DeepSeaStudySettings(profile=profile, sizes=(size,), episodes=(cap,), seeds=seeds, workers=1)
    lines = dsf.variants(figure)
    runs = []
    for v in lines:
        for seed, found in zip(seeds, found_by_key[v.key]):
            folder = tmp_path / v.key / str(seed)
            _log(folder, size, found, [min(e + (5 if v.key == "intrinsic_only" else 0), 10) for e in range(1, len(found) + 1)])
            runs.append(study.read_run(folder, v.key, size, seed, cap))
    return study.DeepSeaStudy(settings, lines, runs, wall_s=60.0)


def test_fig11_decided_on_a_hand_made_study(tmp_path):
    from pcnn_explore.experiments.agents import deep_sea_figures as dsf

    never, learnt = [False] * 8, [False] * 4 + [True] * 4
    s = _figure_study(tmp_path, "fig11", {"dqn": [never] * 5, "dqn_mmc": [never] * 5, "bonus": [never] * 5,
                                          "bonus_mmc": [learnt] * 5})
    d = dsf.decide("fig11", s)
    assert d["verdict"] == "agrees" and d["claims"]["only_combination_progresses"]["threshold"] == 2 ** -4
    m = dsf.metrics("fig11", s, d)
    assert m["summary"]["verdict"].startswith("agrees: progress") and m["summary"]["bonus_mmc_success_rate_mean"] == 1.0
    assert m["intervals"]["bonus_mmc"]["solved_seeds"] == 5 and m["summary"]["dqn_solved_runs"] == "0 of 5"
    # the paper's rows carry the summary's names: each line's claim beside its success rate
    assert set(m["paper"]) == {"verdict", "dqn_success_rate_mean", "dqn_mmc_success_rate_mean",
                               "bonus_success_rate_mean", "bonus_mmc_success_rate_mean"} and set(m["paper"]) <= set(m["summary"])
    assert m["paper"]["bonus_mmc_success_rate_mean"] == "rapid training progress, high score"
    note = dsf.closing_note("fig11", s, d)
    assert "Verdict: agrees." in note and "took 1.0 min" in note
    # the same logs at the smoke profile: not testable, the rule's outcome kept
    smoke = _figure_study(tmp_path / "smoke", "fig11", {"dqn": [never] * 2, "dqn_mmc": [never] * 2,
                                                        "bonus": [never] * 2, "bonus_mmc": [learnt] * 2}, profile="smoke")
    d = dsf.decide("fig11", smoke)
    assert d["verdict"] == "not testable at this profile" and d["claims"]["only_combination_progresses"]["decided"] == "agrees"


def test_fig12_and_fig13_decided_on_hand_made_studies(tmp_path):
    from pcnn_explore.experiments.agents import deep_sea_figures as dsf

    early, late = [True] * 8, [False] * 6 + [True] * 2
    s = _figure_study(tmp_path / "12", "fig12", {"c0.1": [late] * 5, "c1": [late] * 5, "c10": [early] * 5})
    d = dsf.decide("fig12", s)
    # every seed's last quarter succeeds: the success rates tie (robust), c = 10 finds the +1 at 1 against 7
    assert d["claims"]["robust_across_c"]["verdict"] == "agrees" and d["verdict"] == "agrees"
    assert d["claims"]["larger_c_sooner"]["verdict"] == "agrees" and d["claims"]["larger_c_sooner"]["estimate"] == -6
    assert d["claims"]["schedule"]["verdict"] == "not testable at this profile" and d["claims"]["schedule"]["kit"]
    never = [False] * 8
    s = _figure_study(tmp_path / "13", "fig13", {"intrinsic_only": [late] * 5, "dqn": [never] * 5})
    d = dsf.decide("fig13", s)
    # coverage curves: intrinsic 6..10 of 10 cells, DQN 1..8: the paired difference is the same on every seed
    assert d["claims"]["intrinsic_covers_more"]["verdict"] == "agrees"
    # 5 of 5: exact lower bound 0.478 above a random policy's chance of 0.40 in 8 episodes
    assert d["claims"]["finds_reward_N4"]["verdict"] == "agrees"
    assert d["claims"]["finds_reward_N4"]["chance"] == pytest.approx(1 - (15 / 16) ** 8)


def test_fig5_counts_only_the_papers_cts_as_agreement(tmp_path):
    from pcnn_explore.experiments.agents import deep_sea_figures as dsf

    never, learnt = [False] * 8, [False] * 4 + [True] * 4
    s = _figure_study(tmp_path, "fig5", {"dqn": [never] * 5, "cts_mmc": [never] * 5, "pixelcnn_mmc": [never] * 5,
                                         "pixelcnn_pos_mmc": [learnt] * 5})
    d = dsf.decide("fig5", s)
    # the kit's position-biased PixelCNN explores, the paper's CTS ties DQN on every seed (a zero
    # difference decides nothing): the figure's verdict is CTS's, inconclusive, never the kit's agreement
    assert d["verdict"] == "inconclusive" and d["claims"]["kit_position_pixelcnn_explores"]["verdict"] == "agrees"
    assert d["claims"]["pixelcnn_against_cts"]["verdict"] == "not testable at this profile"
    assert d["claims"]["pixelcnn_explores"]["verdict"] == "not testable at this profile"
