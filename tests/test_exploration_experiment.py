"""Notebook 12's experiment module: run summaries from hand-written logs, the goals and the claims
decided on hand-made tables, the random walk's frames and counts, and bad settings."""
from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from pcnn_explore.experiments.exploration import laptop as exp
from pcnn_explore.run import LOG_COLUMNS
from pcnn_explore.study import notebook_words


def _write_log(path, rows):
    """rows: (step, return, complete, distinct_cells) per episode; the other columns are filler."""
    path.mkdir(parents=True, exist_ok=True)
    with open(path / "log.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=LOG_COLUMNS)
        w.writeheader()
        for k, (step, ret, complete, cells) in enumerate(rows):
            w.writerow({**{c: 0 for c in LOG_COLUMNS}, "step": step, "episode": k, "return": ret, "length": 5,
                        "complete": complete, "distinct_cells": cells, "first_success_step": "nan"})
    return path


def test_a_deep_sea_run_summarised_from_its_log_by_hand(tmp_path):
    # DeepSea-5, 40 steps: 8 episodes; +1 (return 0.99) at steps 15 and 35; the last quarter is steps > 30
    rows = [(5, 0.0, 1, 6), (10, -0.002, 1, 9), (15, 0.99, 1, 11), (20, 0.0, 1, 11), (25, -0.004, 1, 12),
            (30, 0.992, 1, 13), (35, 0.99, 1, 13), (40, 0.0, 1, "nan")]
    run = exp.read_deep_sea_run(_write_log(tmp_path / "r", rows), "cts_mmc", 5, 3, 40)
    assert (run.episodes, run.successes, run.late_successes, run.first_success_step) == (8, 3, 1, 15.0)
    assert run.reached_late and run.distinct_cells == 13 and run.reachable_cells == 15 and run.steps == 40
    early_only = exp.read_deep_sea_run(tmp_path / "r", "cts_mmc", 5, 3, 40, late_fraction=0.1)  # steps > 36
    assert early_only.late_successes == 0 and not early_only.reached_late


def test_coverage_curve_steps_between_episode_ends(tmp_path):
    log = _write_log(tmp_path / "c", [(150, 0.0, 1, 15), (300, 0.0, 1, 20), (450, 0.0, 1, 31)])
    grid = np.array([100, 150, 200, 300, 449, 450, 500])
    np.testing.assert_array_equal(exp.coverage_curve(log, grid), [0, 15, 15, 20, 20, 31, np.nan])


def _row(seeds, reached, cells=(10,), reachable=20, late=None, first_seed=401):
    """A success_table row over seeds ``first_seed, first_seed + 1, ...``; ``late``: late +1 episodes per
    seed (default: 5 for each of the first ``reached`` seeds, 0 for the others)."""
    late = list(late) if late is not None else [5] * reached + [0] * (seeds - reached)
    return {"seeds": seeds, "seed_ids": list(range(first_seed, first_seed + seeds)), "reached_late": reached,
            "late_successes": late, "first_success_steps": [], "distinct_cells": list(cells),
            "reachable_cells": reachable}


def _by_name(ds):
    return {d.name: d for d in ds}


def _summary(table, coverage=None, located=None, seeds=(), budget=""):
    return exp.summary("study", table, _COVERAGE if coverage is None else coverage,
                       _LOCATED if located is None else located, seeds, budget)


def test_strict_goal_and_the_notebook_word_on_hand_made_tables():
    table = {"dqn": {10: _row(3, 0), 20: _row(3, 0)}, "dqn_mmc": {10: _row(3, 0), 20: _row(3, 1)},
             "cts_mmc": {10: _row(3, 3), 20: _row(3, 3)}, "pixelcnn_pos_mmc": {10: _row(3, 3), 20: _row(3, 2)},
             "pixelcnn_mmc": {10: _row(3, 0), 20: _row(3, 0)}}
    g = exp.strict_goal(table)
    assert g["sizes"] == [20] and g["holds"] is False and g["largest_separated"] == 10
    assert exp.reached(table)[20]["pixelcnn_pos_mmc"] == "2 of 3 seeds"
    table["pixelcnn_pos_mmc"][20] = _row(3, 3)
    table["dqn_mmc"][20] = _row(3, 0)
    assert exp.strict_goal(table)["holds"] is True and exp.strict_goal(table)["largest_separated"] == 20
    small = {v: {10: rows[10]} for v, rows in table.items()}
    assert exp.strict_goal(small)["holds"] is None  # no N >= 20 was run
    # run at N = 20, the strict goal is a reading with its line; not run, it is not testable with its reason
    s = _by_name(_summary(table)["decisions"])
    assert (s["strict_goal"].word, s["strict_goal"].test) == ("no verdict", "reading")
    assert s["strict_goal"].sentence == (
        "a reading with no test: kit, the strict goal: at N >= 20 DQN-CTS and DQN-PixelCNN (position bias) reach the "
        "goal late in every seed, DQN and DQN + MMC in none: holds")
    s = _by_name(_summary(small)["decisions"])
    assert s["strict_goal"].word == "not testable" and s["strict_goal"].sentence == (
        "not testable: too few seeds at this profile (the sizes it needs are not run at this profile)")
    # neither run: the egocentric runs and the maps, each not testable with its own reason
    s = _by_name(_summary(small, coverage={}, located={})["decisions"])
    assert s["coverage"].sentence == ("not testable: too few seeds at this profile (the egocentric runs it needs are "
                                      "not run at this profile)")
    assert s["location"].reason == "too few seeds at this profile" and "maps" in s["location"].why


def test_deep_sea_paper_claim_decided_by_fishers_exact_test_by_hand():
    # 10 seeds (401-410): DQN-CTS reaches the +1 late on 6, DQN on none. Fisher one-sided p = P(all 6 of the
    # 20 seeds' successes fall on DQN-CTS) = C(10, 6) C(10, 0) / C(20, 6) = 210 / 38760 = 0.005418 <= 0.025
    table = {"dqn": {10: _row(10, 0)}, "cts_mmc": {10: _row(10, 6)}, "pixelcnn_mmc": {10: _row(10, 0)}}
    assert exp.hard_sizes(table) == [10]
    s = _summary(table)
    d = _by_name(s["decisions"])
    assert [x.name for x in s["decisions"]] == ["cts_mmc N10", "pixelcnn_mmc N10", "strict_goal", "coverage", "location"]
    cts = d["cts_mmc N10"]
    assert (cts.kind, cts.word, cts.test, cts.n) == ("paper", "agrees", "fisher", 20)
    assert cts.p == pytest.approx(210 / 38760, rel=1e-12) and cts.sentence.startswith("agrees: ")
    assert "6/10" in cts.sentence and "0/10" in cts.sentence
    assert cts.values == (1.0,) * 6 + (0.0,) * 4 and cts.values_b == (0.0,) * 10
    assert cts.seeds == tuple(range(401, 411)) and cts.claim.design.sizes == (10,)
    # the paper's PixelCNN 0 of 10 against 0 of 10: p = 1 both ways: inconclusive
    pix = d["pixelcnn_mmc N10"]
    assert pix.word == "inconclusive" and pix.p == 1.0
    assert notebook_words(s["decisions"])[0] == "partly"
    # 6 seeds, 6 of 6 against 0 of 6: p = 1 / C(12, 6) = 1/924: agrees (a decided claim needs 6 per line;
    # 4 of 4 against 0 of 4, p = 1/70, would pass Fisher's arithmetic but is too few seeds)
    six = {"dqn": {10: _row(6, 0)}, "cts_mmc": {10: _row(6, 6)}}
    (d6,) = exp.reach_decisions(six, exp.PAPER_AGENTS)
    assert d6.p == pytest.approx(1 / 924, rel=1e-12) and d6.word == "agrees"
    four = {"dqn": {10: _row(4, 0)}, "cts_mmc": {10: _row(4, 4)}}
    assert exp.reach_decisions(four, exp.PAPER_AGENTS)[0].word == "not testable"
    # the study profile's 3 seeds: 3 of 3 against 0 of 3 could reach only 1 / C(6, 3) = 0.05: not testable,
    # never a t verdict
    three = {"dqn": {10: _row(3, 0, late=[0, 0, 0])}, "cts_mmc": {10: _row(3, 3, late=[5, 7, 9])}}
    (t3,) = exp.reach_decisions(three, exp.PAPER_AGENTS)
    assert t3.word == "not testable" and t3.sentence.startswith(
        "not testable: too few seeds at this profile (needs 6 per line, has 3)")
    assert _summary(three)["lines"][0].endswith("(N = 10): not testable: too few seeds at this profile")
    assert notebook_words(_summary(three)["decisions"])[0] == "not testable: too few seeds at this profile"
    # a size DQN solves too is reported but is no claim (no difference is expected there)
    table["dqn"][6] = _row(10, 10)
    table["cts_mmc"][6] = _row(10, 10)
    s6 = _summary(table)
    assert [x.name for x in s6["decisions"]][:2] == ["cts_mmc N10", "pixelcnn_mmc N10"]
    assert notebook_words(s6["decisions"])[0] == "partly"
    assert any(x.startswith("  N = 6: inconclusive: seeds reaching the +1 late at N = 6, DQN-CTS - DQN")
               for x in s6["lines"])
    # no size where DQN missed the +1 in every seed: each paper line's claim is not testable, saying so
    easy = {"dqn": {6: _row(10, 10)}, "cts_mmc": {6: _row(10, 10)}}
    (c,) = [x for x in _summary(easy)["decisions"] if x.kind == "paper"]
    assert (c.name, c.word) == ("cts_mmc", "not testable") and c.sentence == (
        "not testable: too few seeds at this profile (no size run where DQN reached the +1 late in no seed)")


def test_the_seeds_are_keyed_by_their_ids():
    # DQN ran seeds 401-410, DQN-CTS seeds 401-410 listed in another order: the same counts, the same test
    rows = {"dqn": {10: _row(10, 0)}, "cts_mmc": {10: _row(10, 6)}}
    turned = dict(rows["cts_mmc"][10], seed_ids=list(range(410, 400, -1)), late_successes=[0] * 4 + [5] * 6)
    (a,) = exp.reach_decisions(rows, exp.PAPER_AGENTS)
    (b,) = exp.reach_decisions({"dqn": rows["dqn"], "cts_mmc": {10: turned}}, exp.PAPER_AGENTS)
    assert a.p == b.p and a.word == b.word == "agrees" and b.seeds == tuple(range(410, 400, -1))
    runs = [exp.DeepSeaRun("dqn", 5, s, 200, 40, 0, 0, float("nan"), 5, 15) for s in (403, 401)]
    assert exp.success_table(runs)["dqn"][5]["seed_ids"] == [403, 401]


def test_a_kit_model_is_absent_from_the_paper_verdict():
    # the kit's position-biased PixelCNN reaches the +1 late on every seed, the paper's lines on none
    table = {"dqn": {10: _row(10, 0)}, "cts_mmc": {10: _row(10, 0)}, "pixelcnn_pos_mmc": {10: _row(10, 10)}}
    s = _summary(table)
    d = _by_name(s["decisions"])
    assert d["cts_mmc N10"].word == "inconclusive"  # 0 of 10 against 0 of 10
    # 10 of 10 against 0 of 10: p = 1 / C(20, 10) = 1 / 184756
    kit = d["pixelcnn_pos_mmc N10"]
    assert kit.kind == "kit" and kit.p == pytest.approx(1 / 184756) and kit.word == "agrees"
    assert notebook_words(s["decisions"]) == ("inconclusive", "agrees")  # the kit's agreement never enters the first
    assert s["lines"][s["lines"].index(next(x for x in s["lines"] if x.startswith("kit: the kit's"))
                                       )].endswith("the same test: agrees")


class _Maps:
    """Stands in for CountMaps: the notebook reads only ``summary()``."""

    def __init__(self, summ):
        self.summ = summ

    def summary(self):
        return self.summ


_LOCATED = {"pixelcnn": {"row_spread_nats": 0.05, "spearman_log_rho_vs_visits": 0.07},
            "cts": {"row_spread_nats": 3.0, "spearman_log_rho_vs_visits": 1.0},
            "pixelcnn_pos": {"row_spread_nats": 2.0, "spearman_log_rho_vs_visits": 0.97}}
_ROOMS = {"steps": np.array([10]), "cells": {"dqn": np.array([[10], [10]]), "cts_mmc_intrinsic": np.array([[40], [40]])}}
_COVERAGE = exp.coverage_table(_ROOMS)


def test_a_kit_finding_never_counts_as_agreement_with_the_paper():
    from pcnn_explore.study import decisions_of

    # every kit question holds; the paper's claim shows no difference from DQN on the seeds
    # 6 seeds, 0 of 6 against 0 of 6: Fisher's p = 1 both ways, and 6 seeds could reach 1 / C(12, 6): inconclusive
    table = {"dqn": {10: _row(6, 0, late=[0] * 6)}, "cts_mmc": {10: _row(6, 0, late=[0] * 6)}}
    s = _summary(table)
    kinds = {d.name: (d.kind, d.word) for d in s["decisions"]}
    assert kinds == {"cts_mmc N10": ("paper", "inconclusive"), "strict_goal": ("kit", "not testable"),
                     "coverage": ("kit", "no verdict"), "location": ("kit", "no verdict")}
    assert notebook_words(s["decisions"]) == ("inconclusive", "not testable")  # not "agrees": the kit's hold
    assert _by_name(s["decisions"])["coverage"].sentence.endswith("visit >= 2x the distinct cells of DQN: holds "
                                                                 "(ratios DQN-CTS, intrinsic reward only 4.00)")
    assert [line.split(":")[0] for line in s["lines"] if not line.startswith("  ")] == [
        "paper", "kit", "kit, the strict goal", "kit", "kit"]
    # sentences in words, for the report: no Python list or None in them
    assert "late in no seed (N = 10): inconclusive" in s["lines"][0]
    assert any(x.endswith("baselines in none: none") for x in s["lines"])
    assert not any("[]" in x or "None" in x for x in s["lines"])
    # no paper claim decided (one seed): kit findings that hold still give no verdict on the paper
    one = {"dqn": {10: _row(1, 0)}, "cts_mmc": {10: _row(1, 1)}}
    assert notebook_words(_summary(one)["decisions"])[0] == "not testable: too few seeds at this profile"
    # metrics.json as the report index reads it: the claims record, its word the paper claim's, not the kit's
    from pcnn_explore.report.index import verdict_word

    m = exp.metrics(exp.ExplorationSettings(), table, _ROOMS, _Maps(_LOCATED), s)
    assert verdict_word(m) == "inconclusive" and m["paper"] == exp.PAPER and m["schema"] == 1
    assert [d.kind for d in decisions_of(m)] == ["paper", "kit", "kit", "kit"]
    assert "verdict" not in m["summary"] and "findings" not in m["summary"]
    assert m["deep_sea_lines"]["pixelcnn_pos_mmc"]["kind"] == "kit" and m["deep_sea_lines"]["cts_mmc"]["kind"] == "paper"
    assert m["deep_sea_lines"]["cts_mmc"]["settings"] == {"bonus_scale": 0.05, "intrinsic_only": False, "mmc_beta": 0.1,
                                                          "novelty_epsilon": 0.0, "pg_scale": 1.0,
                                                          "pg_schedule": "constant", "scored_frame": "state"}
    assert m["summary"]["goals"]["location"] == {"holds": True}


def test_coverage_goal_compares_final_means():
    rooms = {"steps": np.array([10, 20]), "cells": {"dqn": np.array([[5, 20], [5, 24]]),
                                                    "cts_mmc_intrinsic": np.array([[9, 40], [9, 50]])}}
    g = exp.coverage_goal(exp.coverage_table(rooms))
    assert g["ratios"] == {"cts_mmc_intrinsic": pytest.approx(45 / 22)} and g["holds"] is True
    rooms["cells"]["cts_mmc_intrinsic"] = np.array([[9, 40], [9, 40]])
    assert exp.coverage_goal(exp.coverage_table(rooms))["holds"] is False  # 40 / 22 < 2
    assert exp.coverage_table(rooms)["dqn"] == {"final_cells_mean": 22.0, "final_cells_min": 20.0,
                                                "final_cells_max": 24.0}


def test_random_walk_frames_and_counts():
    frames, counts = exp.random_walk_frames(6, 50, seed=1)
    assert frames.shape == (300, 6, 6) and frames.dtype == np.uint8
    assert all((f == 7).sum() == 1 and (f == 0).sum() == 35 for f in frames)  # one agent pixel per frame
    assert counts.sum() == 300 and counts[0, 0] == 50 and (counts[np.triu_indices(6, 1)] == 0).all()
    rebuilt = np.zeros((6, 6), np.int64)
    for f in frames:
        rebuilt[np.unravel_index(np.argmax(f), f.shape)] += 1
    np.testing.assert_array_equal(rebuilt, counts)
    again, _ = exp.random_walk_frames(6, 50, seed=1)
    np.testing.assert_array_equal(frames, again)


def test_count_maps_summary_on_hand_made_maps():
    true = np.array([[4, 0, 0], [2, 1, 0], [1, 0, 0]])
    flat = np.where(np.tril(np.ones((3, 3), bool)), -5.0, np.nan)
    counted = np.where(np.tril(np.ones((3, 3), bool)), np.log1p(true.astype(float)), np.nan)
    pg = np.where(np.tril(np.ones((3, 3), bool)), 1.0 / (1.0 + true), np.nan)
    maps = exp.CountMaps(3, true, {"flat": flat, "counted": counted}, {"flat": pg, "counted": pg},
                         {"flat": pg, "counted": pg})
    s = maps.summary()
    assert s["flat"]["spearman_log_rho_vs_visits"] == 0.0 and s["flat"]["row_spread_nats"] == 0.0
    assert s["counted"]["spearman_log_rho_vs_visits"] == pytest.approx(1.0)
    assert s["counted"]["row_spread_nats"] == pytest.approx((math.log(3 / 2) + math.log(2)) / 2)  # rows [2, 1], [1, 0, 0]
    assert s["counted"]["median_pg_unvisited"] == 1.0 and s["counted"]["median_pg_visited"] == pytest.approx((1 / 3 + 1 / 2) / 2)  # visits 4, 2, 1, 1


@pytest.mark.parametrize("field, value, error", [
    ("deep_sea_sizes", (2,), ValueError), ("deep_sea_sizes", (51,), ValueError), ("seeds", (), TypeError),
    ("deep_sea_variants", ("dqn_intrinsic",), ValueError), ("deep_sea_variants", ("convcts_mmc",), ValueError),
    ("late_fraction", 0.0, ValueError),
    ("room_steps", 0, ValueError), ("room_env", "MiniGrid-Nowhere-v0", ValueError), ("counts_size", 2, ValueError),
])
def test_bad_settings_are_rejected(field, value, error):
    with pytest.raises(error):
        exp.ExplorationSettings.preset("smoke", **{field: value}).check()


def test_the_study_runs_each_verdict_seed_on_its_own_map_and_refuses_seen_seeds(tmp_path):
    s = exp.ExplorationSettings.preset("study")
    assert s.seeds == tuple(range(801, 821))  # the PixelCNN readings' re-run's new verdict seeds
    specs = exp.deep_sea_specs(s, tmp_path)
    assert len(specs) == 3 * 6 * 20 and not any(tmp_path.iterdir())
    # each seed's map is seed + 10,000 (bsuite's rule), on every size and line alike
    assert {(x.seed, dict(x.overrides)["mapping_seed"]) for x in specs} == {(k, k + 10_000) for k in range(801, 821)}
    # the smoke profile and the room runs keep their own (the room has no map)
    assert all("mapping_seed" not in dict(x.overrides) for x in exp.deep_sea_specs(exp.ExplorationSettings.preset("smoke"), tmp_path))
    assert all("mapping_seed" not in dict(x.overrides) for x in exp.room_specs(s, tmp_path))
    for seeds, match in ((tuple(range(405, 415)), r"seeds \[405, 406, 407, 408, 409, 410\] are seen seeds"),
                         ((0, 801), r"seeds \[0\] are tuning seeds"),
                         (tuple(range(701, 721)), r"notebook 12: verdict seeds must be the declared new seeds 801-840; "
                                                  r"got seen \[701, "),
                         ((801, 841), r"notebook 12: .* got undeclared \[841\]")):
        with pytest.raises(ValueError, match=match):
            exp.ExplorationSettings.preset("study", seeds=seeds).check()
    with pytest.raises(ValueError, match="mapping_seed must be a non-negative integer"):
        exp.ExplorationSettings.preset("smoke", mapping_seed="all").check()
