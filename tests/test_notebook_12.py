"""Notebook 12 runs headlessly in the smoke profile (its runs in worker processes, no Ray) and leaves
metrics that its runs' own logs confirm, recomputed here by hand."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

NAME = "12_exploration_on_a_laptop.ipynb"


def _rows(log: Path) -> list[dict]:
    return list(csv.DictReader(open(log)))


@pytest.mark.slow
def test_notebook_12_smoke(notebook_runner, tmp_path):
    m = notebook_runner(NAME)
    runs = tmp_path / Path(NAME).stem / "runs"
    assert m["profile"] == "smoke" and m["seeds"] == [0]
    # DeepSea-5, 40 episodes of 5 steps: each variant's figures from its log by hand
    assert set(m["deep_sea"]) == {"dqn", "cts_mmc", "pixelcnn_pos_mmc"}
    for variant, by_n in m["deep_sea"].items():
        row = by_n["N=5"]
        rows = _rows(runs / "deep_sea" / "DeepSea-5-v0" / f"{variant}_s0" / "log.csv")
        assert len(rows) == 40 and all(int(r["length"]) == 5 for r in rows)  # every episode lasts N steps
        wins = [int(r["step"]) for r in rows if r["complete"] == "1" and float(r["return"]) > 0.5]
        late = [s for s in wins if s > 150]  # the last quarter of 200 steps
        assert row["seeds"] == 1 and row["reachable_cells"] == 5 * 6 // 2
        assert row["late_successes"] == [len(late)] and row["reached_late"] == int(bool(late))
        assert row["first_success_steps"] == [wins[0] if wins else None]
        assert row["distinct_cells"] == [int(float(rows[-1]["distinct_cells"]))]
        assert 5 <= row["distinct_cells"][0] <= 15  # the first episode alone occupies 5 cells (one per row)
        assert row["seed_ids"] == [0]
        # each line's settings as stated: the paper's bonus form of its model, the state acted in, epsilon-greedy
        cfg = json.loads((runs / "deep_sea" / "DeepSea-5-v0" / f"{variant}_s0" / "settings.json").read_text())
        assert cfg["novelty_epsilon"] == 0.0 and cfg["scored_frame"] == "state"
        assert cfg["mmc_beta"] == (0.0 if variant == "dqn" else 0.1)
        if variant != "dqn":
            assert (cfg["pg_scale"], cfg["pg_schedule"], cfg["bonus_scale"]) == (
                (1.0, "constant", 0.05) if variant == "cts_mmc" else (0.1, "inverse_sqrt", 1.0))
        assert m["deep_sea_lines"][variant]["kind"] == {"dqn": "baseline", "cts_mmc": "paper",
                                                        "pixelcnn_pos_mmc": "kit"}[variant]
        for r in rows:  # a return > 0.5 is the +1 less some costs; every other is <= 0
            assert float(r["return"]) <= 0.0 or 0.99 - 1e-9 <= float(r["return"]) <= 1.0
    # the egocentric task: final distinct cells = the last log row's
    assert set(m["coverage"]) == {"dqn", "cts_mmc_intrinsic"}
    for variant, cov in m["coverage"].items():
        rows = _rows(runs / "rooms" / "MiniGrid-RoomChain-R3-v0" / f"{variant}_s0" / "log.csv")
        last = float(rows[-1]["distinct_cells"])
        assert cov["final_cells_mean"] == cov["final_cells_min"] == cov["final_cells_max"] == last
        assert 1 <= last <= 3 * 16
    # the density models on DeepSea frames: one summary per model, in range
    assert set(m["count_maps"]) == {"cts", "pixelcnn", "pixelcnn_pos"}
    for s in m["count_maps"].values():
        assert -1.0 <= s["spearman_log_rho_vs_visits"] <= 1.0 and s["row_spread_nats"] >= 0.0
    assert m["count_maps"]["cts"]["spearman_log_rho_vs_visits"] > 0.5  # CTS counts even on 20 episodes
    s = m["summary"]
    assert m["schema"] == 1 and m["word"] == "not testable: too few seeds at this profile"
    assert "verdict" not in s and "findings" not in s
    assert s["goals"]["strict_goal"]["holds"] is None  # no N >= 20 in smoke
    assert any("does not hold" in line or "holds" in line or "not run" in line for line in s["lines"])
    assert (tmp_path / Path(NAME).stem / "count_maps.png").is_file()
    # each claim says what it is about; the kit's questions never make the verdict on the paper: the kit's
    # model is absent from the paper's claim, only the paper's DQN-CTS is tested there (smoke runs no PixelCNN)
    claims = {c["name"]: c for c in m["claims"]}
    reach = [c for c in m["claims"] if c["claim"]["lines"][:1] in (["cts_mmc"], ["pixelcnn_pos_mmc"])]
    assert [(c["kind"], c["claim"]["lines"][0]) for c in reach] == [("paper", "cts_mmc"), ("kit", "pixelcnn_pos_mmc")]
    assert [claims[k]["kind"] for k in ("strict_goal", "coverage", "location")] == ["kit"] * 3
    # one seed decides nothing: a decided claim needs 6 per line
    assert all(c["word"] == "not testable" and c["reason"] == "too few seeds at this profile" for c in reach)
    assert claims["strict_goal"]["word"] == "not testable"
    assert {claims[k]["word"] for k in ("coverage", "location")} == {"no verdict"}
    from pcnn_explore.study import decide_again, decisions_of

    assert all(decide_again(d) == d for d in decisions_of(m))
    assert s["lines"][0].startswith("paper: ") and all(
        line.startswith(("paper", "kit", "  ")) for line in s["lines"])
