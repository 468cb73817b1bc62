"""``pcnn-explore sweep --report`` on a hand-made sweep: the numbers by hand, beside the paper's."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from pcnn_explore.cli import main
from pcnn_explore.evaluation import SYMMETRIC_NOTE
from pcnn_explore.run.log import LOG_COLUMNS
from pcnn_explore.sweep import report

GAME = "ALE/Venture-v5"


def _log(folder: Path, episodes: list[tuple[int, float]], steps: int) -> None:
    """A training log: (end step, return) per complete episode, then a cut episode up to ``steps``."""
    folder.mkdir(parents=True)
    lines, last = [",".join(LOG_COLUMNS)], 0
    rows = [(s, r, 1) for s, r in episodes] + ([(steps, 99.0, 0)] if episodes[-1][0] < steps else [])
    for i, (step, ret, complete) in enumerate(rows):
        v = dict(step=step, episode=i, length=step - last, complete=complete, epsilon=0.1, wall_seconds=1.0,
                 intrinsic_return=0.0, intrinsic_mean=0.0, prediction_gain_mean="nan", td_loss="nan")
        v["return"] = ret
        lines.append(",".join(str(v.get(c, "nan")) for c in LOG_COLUMNS))
        last = step
    (folder / "log.csv").write_text("\n".join(lines) + "\n")


@pytest.fixture
def sweep(tmp_path):
    """Venture, window 10 steps: dqn (2 seeds), pixelcnn_mmc (2 seeds), pixelcnn_mmc with c = 10 (1 seed)."""
    runs = {
        ("dqn", 0): ([(5, 0.0), (15, 100.0), (25, 0.0)], 30),          # curve [0, 100, 0]
        ("dqn", 1): ([(5, 0.0), (25, 200.0)], 30),                     # curve [0, nan, 200]
        ("pixelcnn_mmc", 0): ([(5, 100.0), (15, 300.0), (25, 500.0), (35, 900.0)], 40),  # [100, 300, 500, 900]
        ("pixelcnn_mmc", 1): ([(9, 100.0), (19, 100.0), (29, 800.0)], 33),  # [100, 100, 800]; 33: partial window
        ("pixelcnn_mmc,pg_scale=10", 0): ([(10, 1600.0), (20, 0.0), (30, 0.0)], 30),
    }
    trials = []
    for (line, seed), (episodes, steps) in runs.items():
        folder = f"ALE_Venture-v5/{line}/seed{seed}"
        _log(tmp_path / folder, episodes, steps)
        trials.append({"name": folder, "env": GAME, "variant": line.split(",")[0], "seed": seed, "line": line,
                       "status": "done", "folder": folder, "out_dir": str(tmp_path / folder)})
    (tmp_path / "sweep.json").write_text(json.dumps({"trials": trials}))
    return tmp_path


def test_evaluation_of_a_sweep_by_hand(sweep):
    r = report.evaluate_sweep(sweep, window=10)
    e = r["envs"][GAME]
    assert e["window"] == 10 and e["frames_per_step"] == 4
    dqn, pc, c10 = (e["lines"][k] for k in ("dqn", "pixelcnn_mmc", "pixelcnn_mmc,pg_scale=10"))
    assert dqn["max_score"] == 150.0 and dqn["best_peak"] == 200.0  # peaks 100 and 200
    assert pc["max_score"] == 850.0  # peaks 900 and 800
    # common horizon: 3 windows; dqn mean curve [0, 100, 100] -> 200/3; pixelcnn [100, 200, 650] -> 950/3
    assert dqn["horizon"] == pc["horizon"] == 3
    assert dqn["auc"] == pytest.approx(200 / 3) and pc["auc"] == pytest.approx(950 / 3)
    assert pc["improvement"] == pytest.approx(375.0) and pc["symmetric"] is False
    assert c10["max_score"] == c10["best_peak"] == 1600.0 and c10["label"] == "DQN-PixelCNN, pg_scale=10"


def test_report_files_beside_the_papers_numbers(sweep, capsys):
    assert main(["sweep", "--report", str(sweep), "--window", "10"]) == 0
    out = sweep / "report"
    assert {p.name for p in out.iterdir()} == {"curves_ALE_Venture-v5.png", "max_scores.csv", "max_scores.md",
                                              "auc_improvements.png", "report.json"}
    rows = {r["line"]: r for r in csv.DictReader(open(out / "max_scores.csv"))}
    assert rows["pixelcnn_mmc"]["game"] == "Venture"
    assert float(rows["pixelcnn_mmc"]["paper"]) == 1356.25 and rows["pixelcnn_mmc"]["paper_column"] == "DQN-PixelCNN"
    assert float(rows["dqn"]["paper"]) == 163.0
    assert float(rows["pixelcnn_mmc,pg_scale=10"]["paper"]) == 1500.0
    assert rows["pixelcnn_mmc,pg_scale=10"]["paper_compares"] == "best_peak"
    assert rows["pixelcnn_mmc"]["auc_improvement"] == "+375%" and rows["dqn"]["auc_improvement"] == ""
    md = (out / "max_scores.md").read_text()
    assert "| Venture | DQN-PixelCNN | 2 | 850.00 | 900.00 | 316.67 | +375% | 1,356.25 (DQN-PixelCNN" in md
    assert json.loads((out / "report.json").read_text())["envs"][GAME]["lines"]["dqn"]["runs"][1][1] is None


def test_report_needs_a_window_the_runs_reach(sweep, capsys):
    assert main(["sweep", "--report", str(sweep)]) == 2  # 1M frames = 250K agent steps on Atari
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fewer than one window of 250,000: pass --window" in err


def test_symmetric_improvements_are_marked(tmp_path):
    from pcnn_explore.evaluation import Improvement
    from pcnn_explore.plots.evaluation import plot_auc_improvements

    fig = plot_auc_improvements({"DQN-PixelCNN": {GAME: Improvement(200.0, True), "ALE/Pong-v5": Improvement(-5.0, False)}},
                                hard={GAME}, names={GAME: "Venture"})
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["ALE/Pong-v5", "Venture*"]
    assert "1 better" in ax.get_title() and "symmetric" in fig.get_supxlabel()


def _sweep_of(root: Path, runs: dict) -> Path:
    trials = []
    for (line, seed), (episodes, steps) in runs.items():
        folder = f"ALE_Venture-v5/{line}/seed{seed}"
        _log(root / folder, episodes, steps)
        trials.append({"name": folder, "env": GAME, "variant": line.split(",")[0], "seed": seed, "line": line,
                       "status": "done", "folder": folder, "out_dir": str(root / folder)})
    (root / "sweep.json").write_text(json.dumps({"trials": trials}))
    return root


@pytest.fixture
def steps_axis(tmp_path):
    """Venture, window 10 steps, an axis steps=30,60 (one seed each):
    dqn,steps=30 [0, 0, 0]; pixelcnn_mmc,steps=30 [100, 100, 100];
    dqn,steps=60 [10] * 6; pixelcnn_mmc,steps=60 [10, 10, 10, 40, 40, 40]."""
    def episodes(returns):
        return [(10 * i + 5, float(r)) for i, r in enumerate(returns)]

    return _sweep_of(tmp_path, {
        ("dqn,steps=30", 0): (episodes([0, 0, 0]), 30), ("pixelcnn_mmc,steps=30", 0): (episodes([100] * 3), 30),
        ("dqn,steps=60", 0): (episodes([10] * 6), 60), ("pixelcnn_mmc,steps=60", 0): (episodes([10] * 3 + [40] * 3), 60)})


def test_a_baseline_variant_is_matched_at_each_lines_settings(steps_axis, capsys):
    e = report.evaluate_sweep(steps_axis, window=10)["envs"][GAME]["lines"]
    assert {k: d["baseline"] for k, d in e.items()} == {
        "dqn,steps=30": "dqn,steps=30", "pixelcnn_mmc,steps=30": "dqn,steps=30",
        "dqn,steps=60": "dqn,steps=60", "pixelcnn_mmc,steps=60": "dqn,steps=60"}
    # steps=60: both over their 6 windows, AUC 10 and 25 -> +150%; steps=30: AUC 0 and 100 -> symmetric 200%
    assert e["pixelcnn_mmc,steps=60"]["horizon"] == 6 and e["pixelcnn_mmc,steps=60"]["auc"] == 25.0
    assert e["pixelcnn_mmc,steps=60"]["improvement"] == pytest.approx(150.0)
    assert e["pixelcnn_mmc,steps=30"]["improvement"] == pytest.approx(200.0) and e["pixelcnn_mmc,steps=30"]["symmetric"]
    assert main(["sweep", "--report", str(steps_axis), "--window", "10"]) == 0
    rows = {r["line"]: r for r in csv.DictReader(open(steps_axis / "report" / "max_scores.csv"))}
    assert [rows[k]["auc_improvement"] for k in sorted(rows)] == ["", "", "+200%*", "+150%"]
    md = (steps_axis / "report" / "max_scores.md").read_text()
    assert md.count(SYMMETRIC_NOTE) == 1 and "the dqn line at the same settings" in md
    # a whole line as the baseline: every line against it, over the horizon they all have (3 windows)
    e = report.evaluate_sweep(steps_axis, window=10, baseline="dqn,steps=60")["envs"][GAME]["lines"]
    assert {k: d["improvement"] for k, d in e.items()} == pytest.approx(
        {"dqn,steps=30": -100.0, "pixelcnn_mmc,steps=30": 900.0, "dqn,steps=60": 0.0, "pixelcnn_mmc,steps=60": 0.0})


def test_the_symmetric_footnote_only_where_a_row_uses_it(sweep):
    assert main(["sweep", "--report", str(sweep), "--window", "10"]) == 0
    md = (sweep / "report" / "max_scores.md").read_text()
    assert "*" not in md.replace("**", "") and SYMMETRIC_NOTE not in md


def test_a_baseline_the_sweep_lacks_is_refused_and_the_report_left_alone(steps_axis, capsys):
    assert main(["sweep", "--report", str(steps_axis), "--window", "10"]) == 0
    before = {p.name: p.read_bytes() for p in (steps_axis / "report").iterdir()}
    capsys.readouterr()
    assert main(["sweep", "--report", str(steps_axis), "--window", "10", "--baseline", "reactor"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--baseline 'reactor' is no line of the sweep" in err
    assert "dqn,steps=30, dqn,steps=60, pixelcnn_mmc,steps=30, pixelcnn_mmc,steps=60" in err
    assert {p.name: p.read_bytes() for p in (steps_axis / "report").iterdir()} == before
    assert sorted(p.name for p in steps_axis.iterdir()) == ["ALE_Venture-v5", "report", "sweep.json"]


def test_a_report_keeps_no_file_of_an_earlier_report(sweep):
    assert main(["sweep", "--report", str(sweep), "--window", "10"]) == 0
    assert (sweep / "report" / "auc_improvements.png").is_file()
    (sweep / "report" / "curves_ALE_Pong-v5.png").write_bytes(b"an env the sweep no longer has")
    # the sweep now holds one line: no improvement to draw
    data = json.loads((sweep / "sweep.json").read_text())
    data["trials"] = [t for t in data["trials"] if t["line"] == "pixelcnn_mmc"]
    (sweep / "sweep.json").write_text(json.dumps(data))
    assert main(["sweep", "--report", str(sweep), "--window", "10"]) == 0
    assert sorted(p.name for p in (sweep / "report").iterdir()) == [
        "curves_ALE_Venture-v5.png", "max_scores.csv", "max_scores.md", "report.json"]
    assert sorted(p.name for p in sweep.iterdir()) == ["ALE_Venture-v5", "report", "sweep.json"]
