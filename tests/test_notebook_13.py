"""Notebook 13 (Reactor and the bonus) runs headlessly in the smoke profile (its runs in
worker processes, no Ray) and leaves metrics that its runs' own logs and replays confirm."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

NAME = "13_reactor.ipynb"
VARIANTS = ("reactor", "reactor_pixelcnn_pos", "pixelcnn_pos_mmc")


def _rows(log: Path) -> list[dict]:
    return list(csv.DictReader(open(log)))


@pytest.mark.slow
def test_notebook_13_smoke(notebook_runner, tmp_path):
    m = notebook_runner(NAME)
    out = tmp_path / Path(NAME).stem
    runs = out / "runs" / "DeepSea-5-v0"
    assert m["profile"] == "smoke" and m["seeds"] == [0] and m["env"] == "DeepSea-5-v0"
    assert m["steps_per_run"] == 40 * 5 and set(m["success"]) == set(VARIANTS)
    for variant in VARIANTS:  # success shares from each run's log by hand
        rows = _rows(runs / f"{variant}_s0" / "log.csv")
        assert len(rows) == 40 and all(int(r["length"]) == 5 for r in rows)
        wins = [float(r["return"]) > 0.5 for r in rows]
        row = m["success"][variant]
        assert row["auc"] == [pytest.approx(np.mean(wins))] and row["late"] == [pytest.approx(np.mean(wins[30:]))]
        assert row["reached_late"] == int(any(wins[30:])) and row["seeds"] == 1
        settings = json.loads((runs / f"{variant}_s0" / "settings.json").read_text())
        assert settings["agent"] == ("reactor" if variant.startswith("reactor") else "dqn")
        assert settings["bonus_fraction"] == (0.25 if variant.startswith("reactor") else 1.0)
        if variant == "reactor_pixelcnn_pos":  # the density model updated on about a quarter of the steps
            assert 0 < int(rows[-1]["density_updates"]) < 200 * 0.5
    # trace products: one record per Reactor run; every replayed success, each product in [0, 1]
    assert set(m["trace_products"]) == {"reactor", "reactor_pixelcnn_pos"}
    for variant, (rec,) in m["trace_products"].items():
        rows = _rows(runs / f"{variant}_s0" / "log.csv")
        won = [int(r["episode"]) for r in rows if float(r["return"]) > 0.5]
        assert rec["successes"] == len(won) and rec["episodes"] == won  # 200 steps: all still in the replay
        assert rec["replayed"] == 40 and rec["lam"] == 1.0 and rec["lengths"] == [5] * len(won)
        assert all(0.0 <= p <= 1.0 for p in rec["products"]) and all(0.0 <= c <= 1.0 for c in rec["mean_c"])
        assert all(p <= c + 1e-12 for p, c in zip(rec["products"], rec["mean_c"]))  # a product of 4 c's <= their mean
    s = m["summary"]
    assert s["verdict"] == "not testable at this profile"
    assert set(s["goals"]) == {"bonus_helps_reactor", "dqn_bonus_above_reactor_bonus", "traces_cut"}
    assert s["goals"]["traces_cut"]["mmc_beta"] == 0.1 and any("Retrace" in line for line in s["lines"])
    assert m["paper"]["mmc_beta"] == 0.1 and "25%" in m["paper"]["bonus_fraction"]
    assert m["main_figure"] == "reactor_deep_sea.png" and (out / m["main_figure"]).is_file()
