"""``pcnn-explore sweep --report`` on hand-made DeepSea logs: bsuite's solve rule, the score and its interval."""
from __future__ import annotations

import csv
import json
from pathlib import Path

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
    ("cts_mmc", 10, 0): [F] * 9 + [S, S] + [S] * 4,  # 9 / 11 < 0.9: solved at 11, below 2^10 + 100
    ("cts_mmc", 10, 1): [F] * 2000 + [S] * 300,      # 2000 / e < 0.9 first at e = 2223: solved, too late
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
    expected = {  # (episodes_run, solved in time, solve episode)
        ("cts_mmc", 10, 0): (15, 1, 11), ("cts_mmc", 10, 1): (2300, 0, 2223), ("cts_mmc", 10, 2): (50, 0, None),
        ("cts_mmc", 12, 0): (1, 1, 1), ("cts_mmc", 12, 1): (3, 1, 3), ("cts_mmc", 12, 2): (0, 0, None),
        ("dqn", 10, 0): (15, 0, None), ("dqn", 10, 1): (30, 0, None), ("dqn", 12, 0): (20, 0, None),
        ("dqn", 12, 1): (20, 0, None)}
    assert {k: (r["episodes_run"], r["solved"], r["solve_episode"]) for k, r in rows.items()} == expected
    # only the protocol's first episodes count: within 2,222 episodes seed 1 of cts_mmc never meets the rule
    cut = {(r["variant"], r["size"], r["seed"]): r for r in dsr.evaluate_deep_sea(sweep, episodes=2222)["rows"]}
    assert cut[("cts_mmc", 10, 1)]["solve_episode"] is None and cut[("cts_mmc", 10, 0)]["solve_episode"] == 11


def test_report_files_by_hand(sweep, capsys):
    assert main(["sweep", "--report", str(sweep)]) == 0
    out = sweep / "report"
    assert {p.name for p in out.iterdir()} == {"deep_sea_scaling.csv", "deep_sea_score.csv", "deep_sea_scaling.png"}
    assert (out / "deep_sea_scaling.png").read_bytes()[:4] == b"\x89PNG"
    scaling = list(csv.DictReader(open(out / "deep_sea_scaling.csv")))
    assert list(scaling[0]) == ["size", "variant", "seed", "episodes_run", "solved", "solve_episode"]
    assert len(scaling) == len(RUNS)
    assert scaling[0] == {"size": "10", "variant": "cts_mmc", "seed": "0", "episodes_run": "15", "solved": "1",
                          "solve_episode": "11"}
    assert scaling[2]["solve_episode"] == "" and scaling[1]["solve_episode"] == "2223" and scaling[1]["solved"] == "0"
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
