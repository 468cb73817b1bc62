"""Notebook 13 (Reactor and the bonus) runs headlessly in the smoke profile (its runs in
worker processes, no Ray) and leaves metrics that its runs' own logs and traces confirm, with its claims
as one record of the study layer."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from pcnn_explore.study import decide_again, decisions_of

NAME = "13_reactor.ipynb"
VARIANTS = ("reactor", "reactor_cts", "cts_mmc", "reactor_pixelcnn_pos", "pixelcnn_pos_mmc")
LOGGED = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 17, 20, 25)  # bsuite logs these of 25 episodes
KINDS = {"reactor": "baseline", "reactor_cts": "paper", "cts_mmc": "paper", "reactor_pixelcnn_pos": "kit",
         "pixelcnn_pos_mmc": "kit"}


def _rows(path: Path) -> list[dict]:
    return list(csv.DictReader(open(path)))


@pytest.mark.slow
def test_notebook_13_smoke(notebook_runner, tmp_path):
    m = notebook_runner(NAME)
    out = tmp_path / Path(NAME).stem
    runs = out / "runs" / "DeepSea-4-v0"
    assert m["profile"] == "smoke" and m["seeds"] == [0, 1] and m["sizes"] == [4] and m["episodes"] == 25
    assert set(m["per_seed"]) == set(VARIANTS) and m["wall_s"] > 0
    for variant in VARIANTS:  # per-seed success shares and solve episodes from each run's log by hand
        for i, seed in enumerate((0, 1)):
            rows = _rows(runs / f"{variant}_s{seed}" / "log.csv")
            assert len(rows) == 25 and all(int(r["length"]) == 4 and r["complete"] == "1" for r in rows)
            wins = np.array([float(r["return"]) > 0.5 for r in rows])
            assert m["per_seed"][variant]["auc"][i] == pytest.approx(wins.mean())
            assert m["per_seed"][variant]["late"][i] == pytest.approx(wins[19:].mean())  # the last quarter
            bad = np.cumsum(~wins)
            hit = [e for e in range(1, 26) if bad[e - 1] / e < 0.9]
            assert m["per_seed"][variant]["solve_episode"][i] == (hit[0] if hit else 26)
            seen = [e for e in hit if e in LOGGED]  # bsuite's logged solve episode: the score counts it
            assert m["per_seed"][variant]["bsuite_solve_episode"][i] == (seen[0] if seen else 26)
            assert m["per_seed"][variant]["solved"][i] == float(bool(seen))  # 25 < 2^4 + 100
            settings = json.loads((runs / f"{variant}_s{seed}" / "settings.json").read_text())
            # every line's settings as stated: the paper's CTS form on reactor_cts and cts_mmc, the state acted in
            model = {"reactor": "none", "reactor_cts": "cts", "cts_mmc": "cts"}.get(variant, "pixelcnn_pos")
            assert settings["bonus"] == model and settings["novelty_epsilon"] == 0.0
            assert settings["mmc_beta"] == (0.1 if variant.endswith("_mmc") else 0.0)
            if model != "none":
                assert settings["scored_frame"] == "state"
                assert (settings["pg_scale"], settings["pg_schedule"], settings["bonus_scale"]) == (
                    (1.0, "constant", 0.05) if model == "cts" else (0.1, "inverse_sqrt", 1.0))
            assert settings["agent"] == ("reactor" if variant.startswith("reactor") else "dqn")
            assert settings["bonus_fraction"] == (0.25 if variant.startswith("reactor") else 1.0)
            assert (runs / f"{variant}_s{seed}" / "traces.csv").exists() == variant.startswith("reactor")
    # trace products: read back from each Reactor run's traces.csv (the learn-time policy), by hand
    assert set(m["traces"]) == {"reactor", "reactor_cts", "reactor_pixelcnn_pos"}
    for variant in m["traces"]:
        for i, seed in enumerate((0, 1)):
            t = _rows(runs / f"{variant}_s{seed}" / "traces.csv")
            assert len(t) > 0 and all(int(r["sequences"]) == 32 for r in t)
            n = np.array([float(r["from_start"]) for r in t])
            p = np.array([float(r["from_start_product_mean"]) if r["from_start_product_mean"] else 0.0 for r in t])
            got = m["traces"][variant]["from_start_product"][i]
            if n.sum():
                assert got == pytest.approx((n * p).sum() / n.sum()) and 0 < got <= 1
            else:
                assert got is None  # NaN in metrics.json
            assert m["traces"][variant]["from_start"][i] == n.sum()
    s = m["summary"]
    assert {v: line["kind"] for v, line in m["lines"].items()} == KINDS
    # the claims record: 2 seeds decide nothing (min p 2^-2 = 0.25 > 0.025), and a re-render decides the same
    assert m["schema"] == 1 and m["word"].startswith("not testable: too few seeds at this profile")
    assert m["kit_word"] == "not testable" and "verdict" not in m and "verdict" not in s
    claims = {d.name: d for d in decisions_of(m)}
    assert all(decide_again(d) == d for d in claims.values())
    assert {k: d.kind for k, d in claims.items()} == {
        "bonus_helps_reactor": "paper", "dqn_mmc_above_reactor_bonus": "paper", "traces_cut": "kit",
        "position_bias_helps_reactor": "kit", "kit_dqn_above_reactor_bonus": "kit"}
    # the paper's headline compares CTS with CTS
    assert claims["bonus_helps_reactor"].claim.lines == ("reactor_cts", "reactor")
    assert claims["dqn_mmc_above_reactor_bonus"].claim.lines == ("cts_mmc", "reactor_cts")
    for k in ("bonus_helps_reactor", "dqn_mmc_above_reactor_bonus"):
        assert claims[k].word == "not testable" and claims[k].test == "sign_flip"
        assert claims[k].n == 2
    assert list(claims["bonus_helps_reactor"].values) == m["per_seed"]["reactor_cts"]["auc"]
    assert list(claims["bonus_helps_reactor"].values_b) == m["per_seed"]["reactor"]["auc"]
    # traces_cut: the MMC mix of the DQN-CTS runs minus each replaying seed's product
    cut = claims["traces_cut"]
    products = [(s_, p) for s_, p in zip((0, 1), m["traces"]["reactor_cts"]["from_start_product"]) if p is not None]
    assert m["dqn_mmc_beta"] == 0.1 and cut.claim.measure.startswith("MMC mix 0.1 - prod c from x_0")
    assert cut.seeds == tuple(s_ for s_, _ in products) and cut.values == pytest.approx([0.1 - p for _, p in products])
    assert cut.claim.lines == ("reactor_cts", "cts_mmc")
    assert any("Retrace" in line for line in s["lines"])
    assert m["paper"]["mmc_beta"] == 0.1 and "25%" in m["paper"]["bonus_fraction"]
    assert m["main_figure"] == "reactor_deep_sea.png" and (out / m["main_figure"]).is_file()
