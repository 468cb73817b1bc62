"""``pcnn-explore sweep --report`` on hand-made DeepSea logs: bsuite's solve rule, the score and its interval."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from pcnn_explore.cli import main
from pcnn_explore.run.log import LOG_COLUMNS
from pcnn_explore.sweep import deep_sea_report as dsr

S, F = True, False


def _log(folder: Path, size: int, episodes: list[bool], cut: bool = False) -> None:
    """A DeepSea training log as the loop writes it: N steps per episode, return 0.99 with the +1,
    else -0.001 or 0; ``cut``: one more row, cut by the budget mid-episode (complete = 0, return 0.99)."""
    folder.mkdir(parents=True)
    lines = [",".join(LOG_COLUMNS)]
    rows = [(size, 0.99 if s else (-0.001 if i % 2 else 0.0), 1) for i, s in enumerate(episodes)]
    rows += [(size // 2, 0.99, 0)] if cut else []
    step = 0
    for i, (length, ret, complete) in enumerate(rows):
        step += length
        v = dict(step=step, episode=i, length=length, complete=complete, epsilon=0.05, wall_seconds=1.0,
                 intrinsic_return=0.0, intrinsic_mean=0.0, distinct_cells=3, density_updates=0)
        v["return"] = ret
        lines.append(",".join(str(v.get(c, "nan")) for c in LOG_COLUMNS))
    (folder / "log.csv").write_text("\n".join(lines) + "\n")


#: (variant, size, seed) -> the episodes' successes (None: the trial has no log yet)
RUNS = {
    ("cts_mmc", 10, 0): [F] * 9 + [S, S] + [S] * 4,  # 9 / 11 < 0.9: solved at 11; bsuite: 12 (9 / 12) < 2^10 + 100
    ("cts_mmc", 10, 1): [F] * 2000 + [S] * 300,      # 2000 / e < 0.9 first at e = 2223; bsuite's log 2500 never comes
    ("cts_mmc", 10, 2): [F] * 50,                     # never
    ("cts_mmc", 12, 0): [S],                          # at once
    ("cts_mmc", 12, 1): [F, F, S],                    # 2 / 3
    ("cts_mmc", 12, 2): None,                         # not started: not solved
    ("dqn", 10, 0): [F] * 9 + [S] + [F] * 5,          # 9 / 10 is a tie: not solved (the cut 0.99 row is no episode)
    ("dqn", 10, 1): [F] * 30,
    ("dqn", 12, 0): [F] * 20,
    ("dqn", 12, 1): [F] * 20,
}


@pytest.fixture
def sweep(tmp_path):
    trials = []
    for (variant, size, seed), episodes in RUNS.items():
        folder = f"DeepSea-{size}-v0/{variant}/seed{seed}"
        if episodes is None:
            (tmp_path / folder).mkdir(parents=True)
        else:
            _log(tmp_path / folder, size, episodes, cut=variant == "dqn" and seed == 0 and size == 10)
        trials.append({"name": folder, "env": f"DeepSea-{size}-v0", "variant": variant, "seed": seed, "line": variant,
                       "status": "done", "folder": folder, "out_dir": str(tmp_path / folder)})
    (tmp_path / "sweep.json").write_text(json.dumps({"trials": trials}))
    return tmp_path


def test_scaling_rows_by_hand(sweep):
    rows = {(r["variant"], r["size"], r["seed"]): r for r in dsr.evaluate_deep_sea(sweep)["rows"]}
    expected = {  # (episodes_run, solved in the run, solve episode, bsuite's solve episode, counts for the score)
        ("cts_mmc", 10, 0): (15, 1, 11, 12, 1), ("cts_mmc", 10, 1): (2300, 1, 2223, None, 0),
        ("cts_mmc", 10, 2): (50, 0, None, None, 0), ("cts_mmc", 12, 0): (1, 1, 1, 1, 1),
        ("cts_mmc", 12, 1): (3, 1, 3, 3, 1), ("cts_mmc", 12, 2): (0, 0, None, None, 0),
        ("dqn", 10, 0): (15, 0, None, None, 0), ("dqn", 10, 1): (30, 0, None, None, 0),
        ("dqn", 12, 0): (20, 0, None, None, 0), ("dqn", 12, 1): (20, 0, None, None, 0)}
    got = {k: (r["episodes_run"], r["solved"], r["solve_episode"], r["bsuite_solve_episode"], r["counts_for_score"])
           for k, r in rows.items()}
    assert got == expected
    # only the protocol's first episodes count: within 2,222 episodes seed 1 of cts_mmc never meets the rule
    cut = {(r["variant"], r["size"], r["seed"]): r for r in dsr.evaluate_deep_sea(sweep, episodes=2222)["rows"]}
    assert cut[("cts_mmc", 10, 1)]["solve_episode"] is None and cut[("cts_mmc", 10, 0)]["solve_episode"] == 11


def test_report_files_by_hand(sweep, capsys):
    assert main(["sweep", "--report", str(sweep)]) == 0
    out = sweep / "report"
    assert {p.name for p in out.iterdir()} == {"deep_sea_scaling.csv", "deep_sea_score.csv", "deep_sea_scaling.png",
                                               "bsuite"}  # bsuite's csv logs: tests/test_bsuite_log.py
    assert (out / "deep_sea_scaling.png").read_bytes()[:4] == b"\x89PNG"
    scaling = list(csv.DictReader(open(out / "deep_sea_scaling.csv")))
    assert list(scaling[0]) == ["size", "variant", "seed", "episodes_run", "solved", "solve_episode",
                                "bsuite_solve_episode", "counts_for_score"]
    assert list(scaling[0]) == list(dsr.SCALING_COLUMNS)
    assert len(scaling) == len(RUNS)
    assert scaling[0] == {"size": "10", "variant": "cts_mmc", "seed": "0", "episodes_run": "15", "solved": "1",
                          "solve_episode": "11", "bsuite_solve_episode": "12", "counts_for_score": "1"}
    assert (scaling[2]["solve_episode"], scaling[2]["solved"], scaling[2]["bsuite_solve_episode"]) == ("", "0", "")
    # solved in the run at 2223, but never at a logged episode of bsuite's: it does not count
    assert (scaling[1]["solved"], scaling[1]["solve_episode"], scaling[1]["bsuite_solve_episode"],
            scaling[1]["counts_for_score"]) == ("1", "2223", "", "0")
    score = {r["variant"]: r for r in csv.DictReader(open(out / "deep_sea_score.csv"))}
    # cts_mmc: per seed 2/2, 1/2, 0/2 solved in time -> mean 0.5, s = 0.5, half width t_{0.975,2} 0.5 / sqrt(3)
    # = 1.242: the interval [-0.742, 1.742] is clipped to [0, 1]
    c = score["cts_mmc"]
    assert (c["sizes_run"], c["seeds"], float(c["sizes_solved"]), float(c["score"])) == ("2", "3", 1.0, 0.5)
    assert (float(c["score_low"]), float(c["score_high"])) == (0.0, 1.0)
    assert c["per_seed_scores"] == "0:1;1:0.5;2:0"
    d = score["dqn"]
    assert (float(d["score"]), float(d["score_low"]), float(d["score_high"]), d["seeds"]) == (0.0, 0.0, 0.0, "2")


def test_the_score_interval_is_the_t_interval_over_seeds(tmp_path):
    # three seeds of one variant on sizes 10 and 12: scores 1, 0.5, 0.5 -> mean 2/3, s = sqrt(1/12)
    trials = []
    for seed, (a, b) in enumerate([([S], [S]), ([S], [F] * 3), ([F] * 3, [S])]):
        for size, eps in ((10, a), (12, b)):
            folder = f"DeepSea-{size}-v0/cts_mmc/seed{seed}"
            _log(tmp_path / folder, size, eps)
            trials.append({"env": f"DeepSea-{size}-v0", "variant": "cts_mmc", "seed": seed, "line": "cts_mmc",
                           "folder": folder})
    (tmp_path / "sweep.json").write_text(json.dumps({"trials": trials}))
    (row,) = dsr.evaluate_deep_sea(tmp_path)["scores"]
    half = 4.302652729749464 * (1 / 12) ** 0.5 / 3 ** 0.5
    assert row["score"] == pytest.approx(2 / 3) and row["score_low"] == 0.0  # 2/3 - 0.717 < 0: clipped
    assert row["score_high"] == 1.0 and 2 / 3 + half > 1


def test_no_logged_deep_sea_trial_is_an_error_and_writes_nothing(tmp_path, capsys):
    (tmp_path / "DeepSea-10-v0/dqn/seed0").mkdir(parents=True)
    (tmp_path / "sweep.json").write_text(json.dumps({"trials": [
        {"env": "DeepSea-10-v0", "variant": "dqn", "seed": 0, "line": "dqn", "folder": "DeepSea-10-v0/dqn/seed0"}]}))
    assert main(["sweep", "--report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no DeepSea trial has logged an episode yet" in err and err.count("\n") == 1
    assert not (tmp_path / "report").exists()


def test_the_scaling_figure_marks_unsolved_runs_and_2_to_the_n(sweep):
    from pcnn_explore.plots.deep_sea import plot_deep_sea_scaling

    rows = dsr.evaluate_deep_sea(sweep)["rows"]
    fig = plot_deep_sea_scaling(rows, {"dqn": "DQN", "cts_mmc": "DQN-CTS"})
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "DQN: not solved in the episodes run" in labels and "DQN-CTS: solved" in labels
    assert "$2^N$ (dithering)" in labels
    with pytest.raises(ValueError, match="no deep-sea runs"):
        plot_deep_sea_scaling([])


#: (size, seed) -> successes of one variant (cts_mmc): the runs where the every-episode check and bsuite's differ
LOGGED = {
    (6, 0): [F] * 221 + [S] * 29,            # 2210 < 9 x 246: solved at 246; bsuite logs 250; 2^6 + 100 = 164: late
    (6, 1): [F] * 30 + [S] * 4 + [F] * 16,   # 30 / 34 at 34; at the logged 40 36 / 40 is a tie, at 50 46 / 50: never
    (6, 2): [F] * 20,                        # never
    (10, 0): [F] * 950 + [S] * 250,          # 9500 < 9 x 1056: 1056 < 2^10 + 100 = 1124; logged: 1000 fails, 1200 late
    (10, 1): [F] * 899 + [S] * 301,          # 8990 < 9 x 999: 999; at the logged 1000, 8990 < 9000: in time
    (10, 2): [F] * 5,                        # never
}


@pytest.fixture
def logged_sweep(tmp_path):
    trials = []
    for (size, seed), episodes in LOGGED.items():
        folder = f"DeepSea-{size}-v0/cts_mmc/seed{seed}"
        _log(tmp_path / folder, size, episodes)
        trials.append({"env": f"DeepSea-{size}-v0", "variant": "cts_mmc", "seed": seed, "line": "cts_mmc",
                       "folder": folder, "steps_total": size * {6: 250, 10: 1200}[size]})
    (tmp_path / "sweep.json").write_text(json.dumps({"trials": trials}))
    return tmp_path


def test_the_score_counts_bsuites_logged_solve_episodes(logged_sweep, monkeypatch):
    result = dsr.evaluate_deep_sea(logged_sweep)
    got = {(r["size"], r["seed"]): (r["episodes_run"], r["solved"], r["solve_episode"], r["bsuite_solve_episode"],
                                    r["counts_for_score"]) for r in result["rows"]}
    assert got == {(6, 0): (250, 1, 246, 250, 0), (6, 1): (50, 1, 34, None, 0), (6, 2): (20, 0, None, None, 0),
                   (10, 0): (1200, 1, 1056, 1200, 0), (10, 1): (1200, 1, 999, 1000, 1),
                   (10, 2): (5, 0, None, None, 0)}
    assert result["caps"] == [250, 1200]  # steps_total / N
    titles = []
    import pcnn_explore.plots.deep_sea as plots

    real = plots.plot_deep_sea_scaling
    monkeypatch.setattr(plots, "plot_deep_sea_scaling", lambda *a: titles.append(a[3]) or real(*a))
    dsr.write_deep_sea_report(logged_sweep)
    assert titles == ["Deep sea: episodes to solve (bsuite's rule at every episode; "
                      "at most 250 to 1,200 episodes a run)"]
    out = logged_sweep / "report"
    scaling = list(csv.DictReader(open(out / "deep_sea_scaling.csv")))
    assert scaling[0] == {"size": "6", "variant": "cts_mmc", "seed": "0", "episodes_run": "250", "solved": "1",
                          "solve_episode": "246", "bsuite_solve_episode": "250", "counts_for_score": "0"}
    assert scaling[1]["bsuite_solve_episode"] == "" and scaling[1]["solved"] == "1"
    assert scaling[2]["solved"] == "0" and scaling[2]["solve_episode"] == "" and scaling[2]["counts_for_score"] == "0"
    (score,) = csv.DictReader(open(out / "deep_sea_score.csv"))
    # per seed, sizes counting: 0 of 2, 1 of 2 (10 at the logged 1000), 0 of 2 -> 0, 0.5, 0: mean 1/6, s = sqrt(1/12);
    # half width t_{0.975,2} sqrt(1/12) / sqrt(3) = 4.302652729749464 / 6 = 0.717109: [0 (clipped), 0.883775]
    # (checked at every episode the kit would have counted 1 + 2 + 0 sizes: 0.5)
    assert (score["sizes_run"], score["seeds"], score["sizes_solved"], score["score"]) == ("2", "3", "0.333333",
                                                                                          "0.166667")
    assert (score["score_low"], score["score_high"], score["per_seed_scores"]) == ("0", "0.883775", "0:0;1:0.5;2:0")


def test_the_dithering_line_stays_within_the_axes():
    from pcnn_explore.plots.deep_sea import plot_deep_sea_scaling

    rows = [{"size": n, "variant": "dqn", "seed": 0, "episodes_run": 100, "solve_episode": None} for n in (6, 8, 10)]
    ax = plot_deep_sea_scaling(rows).axes[0]
    bottom, top = ax.get_ylim()  # 64 / 3 and 100 x 3 = 300: 2^N leaves the axes at N = log2(300)
    assert (bottom, top) == (pytest.approx(64 / 3), 300)
    (line,) = [x for x in ax.get_lines() if x.get_label() == "$2^N$ (dithering)"]
    assert line.get_xdata()[0] == 6 and line.get_xdata()[-1] == pytest.approx(np.log2(300))
    assert max(line.get_ydata()) == pytest.approx(300) and min(line.get_ydata()) == pytest.approx(64)
    # sizes whose 2^N is above every episode: no line, and none in the legend
    rows = [{"size": n, "variant": "dqn", "seed": 0, "episodes_run": 100, "solve_episode": None} for n in (20, 24)]
    ax = plot_deep_sea_scaling(rows).axes[0]
    assert "$2^N$ (dithering)" not in [t.get_text() for t in ax.get_legend().get_texts()]
    assert not [x for x in ax.get_lines() if x.get_label() == "$2^N$ (dithering)"]
    assert "within 10,000" not in plot_deep_sea_scaling(rows).axes[0].get_title()
