"""Notebook 14 (deep sea: does the bonus scale?): the summary by hand on hand-made rows, a sweep report
read from a hand-made folder, and the smoke run, whose metrics.json the runs' own logs confirm by
bsuite's rule recomputed here by hand."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from pcnn_explore.experiments.agents import deep_sea_scaling as dss

NAME = "14_deep_sea_scaling.ipynb"


def _row(variant, size, seed, run, solve, seen):
    counts = int(seen is not None and seen < 2 ** size + 100)
    return {"size": size, "variant": variant, "seed": seed, "episodes_run": run, "solved": int(solve is not None),
            "solve_episode": solve, "bsuite_solve_episode": seen, "counts_for_score": counts}


#: cts: seed 1 stopped at 11 (bsuite logs 12: not in its log); dqn never solves
ROWS = [_row("cts", 10, 1, 11, 11, None), _row("cts", 12, 1, 30, 30, 30), _row("cts", 10, 2, 5, 5, 5),
        _row("cts", 12, 2, 2000, None, None), _row("dqn", 10, 1, 2000, None, None), _row("dqn", 12, 1, 2000, None, None)]


def test_next_logged_episode():
    assert [dss.next_logged_episode(e) for e in (1, 10, 11, 12, 13, 26, 101, 1001, 2223)] == \
        [1, 10, 12, 12, 14, 30, 120, 1200, 2500]


def test_summary_by_hand():
    s = dss.summarise(ROWS, {10: 2000, 12: 2000}, {"cts": "DQN-CTS"})
    cts, dqn = s["cts"], s["dqn"]
    assert cts["label"] == "DQN-CTS" and dqn["label"] == "dqn" and cts["seeds"] == [1, 2]
    # seed 1: 12 counts (30), 10 stopped at 11 has no bsuite episode -> 1/2; upper: 12 < 2^10 + 100 -> 2/2
    # seed 2: 10 at 5 counts, 12 unsolved -> 1/2 both ways
    assert cts["per_seed_score"] == [0.5, 0.5] and cts["per_seed_score_upper"] == [1.0, 0.5]
    assert cts["stopped_between_logged"] == 1 and cts["score_mean"] == 0.5
    assert cts["largest_n_solved"] == [12, 10] and dqn["largest_n_solved"] == [None]
    assert cts["score_interval"] == [0.0, 1.0]  # 2 seeds: the sign-flip interval is (-inf, inf), clipped
    assert cts["seeds_solved"]["12"]["k"] == 1 and cts["seeds_solved"]["12"]["n"] == 2
    assert dqn["per_seed_score"] == [0.0] and dqn["seeds_solved"]["10"]["interval"] == [0.0, pytest.approx(0.975)]
    # with a cap of 11 the next logged 12 is past it: the upper bound does not count it
    assert dss.summarise(ROWS, {10: 11, 12: 2000})["cts"]["per_seed_score_upper"] == [0.5, 0.5]


def test_six_seeds_give_a_finite_exact_interval():
    rows = [_row("a", 12, s, 10, 10, 10 if s < 4 else None) for s in range(6)]
    # scores 1, 1, 1, 1, 0, 0: at n = 6 (K = 1) the interval is [min, max] = [0, 1]; 7 seeds narrow it
    assert dss.summarise(rows)["a"]["score_interval"] == [pytest.approx(0.0, abs=1e-6), pytest.approx(1.0)]
    rows = [_row("a", 12, s, 10, 10, 10) for s in range(7)]
    assert dss.summarise(rows)["a"]["score_interval"] == [pytest.approx(1.0, abs=1e-6), 1.0]


def _report(root: Path, per_seed: str) -> Path:
    from pcnn_explore.sweep.deep_sea_report import SCALING_COLUMNS

    (root / "report").mkdir(parents=True)
    with open(root / "report" / "deep_sea_scaling.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(SCALING_COLUMNS)
        for r in ROWS:
            w.writerow(["" if r[c] is None else r[c] for c in SCALING_COLUMNS])
    (root / "report" / "deep_sea_score.csv").write_text(
        "variant,sizes_run,seeds,sizes_solved,score,score_low,score_high,per_seed_scores\n"
        f"cts,2,2,1,0.5,,,{per_seed}\ndqn,2,1,0,0,,,1:0\n")
    return root


def test_a_sweep_report_is_read_and_checked(tmp_path):
    got = dss.read_sweep_report(_report(tmp_path / "ok", "1:0.5;2:0.5"))
    assert got["scores"] == {"cts": {1: 0.5, 2: 0.5}, "dqn": {1: 0.0}}
    assert got["rows"][0] == ROWS[0] and got["rows"][3]["solve_episode"] is None
    data = dss.collect(dss.settings("smoke"), [], tmp_path / "unused", sweep_dir=tmp_path / "ok")
    assert data["part"] == "partial protocol" and data["caps"] == {} and data["rows"] == got["rows"]
    assert not (tmp_path / "unused").exists()  # nothing trained
    with pytest.raises(ValueError, match="disagree"):
        dss.read_sweep_report(_report(tmp_path / "bad", "1:1;2:0.5"))
    with pytest.raises(FileNotFoundError, match="pcnn-explore sweep --report"):
        dss.read_sweep_report(tmp_path / "none")


def test_profiles_and_budget():
    s = dss.settings("study")
    assert s.sizes == (10, 12, 14, 16, 20) and s.episodes == (2_500,) and s.seeds == tuple(range(401, 411))
    assert dss.protocol_part(s) == "partial protocol" and dss.protocol_part(dss.settings("paper")) == "whole protocol"
    assert dict(s.train_overrides)["stop_when_solved"] is True
    b = dss.budget(s, dss.lines("study"))
    # 72 x 2,500 x 10 = 1.8M steps a line; 2 x 1.8M / 7,000 + 1.8M / 9,000 + 1.8M / 1,250 = 2,154.3 core-s
    assert b["lines"]["paper_cts"]["steps"] == 1_800_000
    assert b["core_s"] == pytest.approx(2 * 1.8e6 / 7000 + 200 + 1440)
    assert b["wall_min"] == pytest.approx(17.95, abs=0.01) and b["wall_min"] <= 45
    assert [v.key for v in dss.lines("smoke")] == ["paper_cts", "kit", "dqn"]


def _by_hand(log: Path) -> dict:
    """A run's solve episodes from its log.csv, by bsuite's rule, by hand."""
    rows = [r for r in csv.DictReader(open(log)) if r["complete"] == "1"]
    logged = {*range(1, 11), 12, 14, 17, 20, 25, 30, 40, 50, 60, 70, 80, 90, 100}
    solve = seen = None
    bad = 0
    for e, r in enumerate(rows, 1):
        bad += not float(r["return"]) > 0.5
        if bad / e < 0.9:
            solve = e if solve is None else solve
            seen = e if seen is None and e in logged else seen
    return {"episodes_run": len(rows), "solve_episode": solve, "bsuite_solve_episode": seen}


@pytest.mark.slow
def test_notebook_14_smoke(notebook_runner, tmp_path):
    m = notebook_runner(NAME)
    out = tmp_path / Path(NAME).stem
    assert m["profile"] == "smoke"
    p = m["protocol"]
    assert p["part"] == "partial protocol" and p["sizes"] == [4, 5] and p["episodes"] == [10, 10]
    assert p["seeds"] == [0, 1] and p["stop_when_solved"] is True
    assert set(m["lines"]) == {"paper_cts", "kit", "dqn"}
    assert {k: v["kind"] for k, v in m["lines"].items()} == {"paper_cts": "paper", "kit": "kit", "dqn": "baseline"}
    for key, line in m["lines"].items():
        scores, upper, largest = [], [], []
        for seed in (0, 1):
            counted = high = 0
            solved = []
            for n in (4, 5):
                run = out / "runs" / f"DeepSea-{n}-v0" / f"{key}_s{seed}"
                h = _by_hand(run / "log.csv")
                assert json.loads((run / "settings.json").read_text())["stop_when_solved"] is True
                if h["solve_episode"] is not None:  # stopped at the solve episode
                    assert h["episodes_run"] == h["solve_episode"]
                    solved.append(n)
                else:
                    assert h["episodes_run"] == 10
                counted += h["bsuite_solve_episode"] is not None  # 2^4 + 100 > 10: solved in the log counts
                high += h["solve_episode"] is not None and dss.next_logged_episode(h["solve_episode"]) <= 10
            scores.append(counted / 2)
            upper.append(high / 2)
            largest.append(max(solved) if solved else None)
        assert line["per_seed_score"] == scores and line["per_seed_score_upper"] == upper
        assert line["largest_n_solved"] == largest and line["seeds"] == [0, 1]
        assert line["score_mean"] == pytest.approx(sum(scores) / 2) and line["score_interval"] == [0.0, 1.0]
    assert m["budget"]["lines"]["dqn"]["steps"] == (4 + 5) * 10 * 2
    assert (out / "deep_sea_scaling.png").is_file() and (out / "deep_sea_score.png").is_file()
    # its claims, the kit's line against each other line of the whole protocol: no store at smoke, none testable
    assert m["schema"] == 1 and (m["word"], m["kit_word"]) == ("no verdict", "not testable")
    assert [(c["name"], c["kind"], c["word"], c["reason"]) for c in m["claims"]] == [
        (f"kit against {k}", "kit", "not testable", "too few seeds at this profile")
        for k in ("dqn", "paper_cts", "paper_cts_horizon")]
