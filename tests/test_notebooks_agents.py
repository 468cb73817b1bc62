"""Notebooks 07-10 run headlessly in the smoke profile (their runs in worker processes, no Ray; one
test runs notebook 10 again on the module's local Ray, which the kernel joins through $RAY_ADDRESS)
and leave sane metrics: the runs' key figures, and the
paper's evaluation (``summary``: maximum score, AUC, AUC vs DQN, verdict; ``paper``) checked
against the runs' own logs, recomputed here by hand."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from pcnn_explore.experiments.agent_figures import FIGURES

KEYS = {
    "07_dqn_pixelcnn.ipynb": ("dqn", "cts_mmc", "pixelcnn_mmc"),
    "08_mmc_ablation.ipynb": ("dqn", "dqn_mmc", "pixelcnn", "pixelcnn_mmc"),
    "09_pg_scale.ipynb": ("c0.1", "c1", "c10"),
    "10_intrinsic_only.ipynb": ("intrinsic_only", "dqn"),
}
FIGURE = {"07_dqn_pixelcnn.ipynb": "fig5", "08_mmc_ablation.ipynb": "fig11", "09_pg_scale.ipynb": "fig12",
          "10_intrinsic_only.ipynb": "fig13"}
ENV = "MiniGrid-Serpentine-7x7-v0"
WINDOW = 75  # the smoke preset's curve window: 300 agent steps, 4 points


def _curve(log: Path) -> list[float | None]:
    """The paper's curve from a log, by hand: mean return of the complete episodes ending in each
    full window of WINDOW agent steps (an episode ending at step s is in window (s - 1) // WINDOW)."""
    rows = list(csv.DictReader(open(log)))
    k = int(rows[-1]["step"]) // WINDOW
    ends = [[] for _ in range(k)]
    for r in rows:
        i = (int(r["step"]) - 1) // WINDOW
        if r["complete"] == "1" and i < k:
            ends[i].append(float(r["return"]))
    return [sum(v) / len(v) if v else None for v in ends]


def _check_metrics(m: dict, keys: tuple[str, ...], runs: Path, figure: str, seed: int = 0) -> None:
    assert m["profile"] == "smoke"
    assert m["env"] == ENV
    assert m["seeds"] == [seed] and m["steps"] == 300
    assert m["runs"] == len(keys) and m["curve_window"] == WINDOW
    for k in keys:
        assert m[f"{k}/seeds"] == 1
        assert 0.0 <= m[f"{k}/final_success_rate"] <= 1.0
        # MiniGrid's return is 1 - 0.9 t/T on success, 0 otherwise
        assert 0.0 <= m[f"{k}/mean_return_last"] <= 1.0
        assert m[f"{k}/solved_seeds"] in (0, 1)
        assert m[f"{k}/seeds_with_a_success"] in (0, 1)
        first = m[f"{k}/median_first_success_step"]
        assert first is None or 1 <= first <= 300
        assert (first is None) == (m[f"{k}/seeds_with_a_success"] == 0)
        assert math.isfinite(m[f"{k}/steps_per_s"]) and m[f"{k}/steps_per_s"] > 0
    extra = {k.split("/")[0] for k in m if "/" in k} - set(keys)
    assert not extra, f"unexpected variants in metrics: {extra}"
    # the paper's evaluation, against the logs
    curves = {k: _curve(runs / ENV / f"{k}_s{seed}" / "log.csv") for k in keys}
    s = m["summary"]
    assert s["env"] == ENV and s["curve_window_steps"] == WINDOW
    auc = {}
    for k, c in curves.items():
        assert len(c) == 4
        points = [v for v in c if v is not None]
        assert s[f"{k}_max_score"] == (pytest.approx(max(points)) if points else None)
        assert m[f"{k}/max_score"] == s[f"{k}_max_score"]
        auc[k] = sum(points) / len(points) if points else None
        assert s[f"{k}_auc"] == (pytest.approx(auc[k]) if points else None)
    if "dqn" in keys:
        for k in keys:
            a, b = auc[k], auc["dqn"]
            if k == "dqn" or a is None or b is None:
                assert f"{k}_auc_vs_dqn_pct" not in s or s[f"{k}_auc_vs_dqn_pct"] is None
            elif a == b:
                assert s[f"{k}_auc_vs_dqn_pct"] == 0.0
            elif abs(b) < 1e-3 * max(abs(a), abs(b)):
                assert s[f"{k}_auc_vs_dqn_pct"] == pytest.approx(200 * (a - b) / (abs(a) + abs(b)))
                assert s[f"{k}_auc_vs_dqn_symmetric"] is True
            else:
                assert s[f"{k}_auc_vs_dqn_pct"] == pytest.approx(100 * (a - b) / abs(b))
    assert s["verdict"] == "not testable at this profile: smoke runs (300 agent steps) check the plumbing only"
    p = m["paper"]
    assert {k: p[k] for k in keys} == {k: FIGURES[figure].claims[k] for k in keys}
    assert isinstance(p["verdict"], str) and p["verdict"]


def _outputs(executed: Path) -> str:
    """Every text output of an executed notebook (streams, results, errors), joined."""
    texts = []
    for cell in json.loads(executed.read_text())["cells"]:
        for out in cell.get("outputs", []):
            for value in (out.get("text"), (out.get("data") or {}).get("text/plain"), out.get("traceback")):
                texts.append("".join(value) if isinstance(value, list) else value or "")
    return "\n".join(texts)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["08_mmc_ablation.ipynb", "09_pg_scale.ipynb"])
def test_agent_notebook_smoke(notebook_runner, tmp_path, name):
    m = notebook_runner(name)
    _check_metrics(m, KEYS[name], tmp_path / Path(name).stem / "runs", FIGURE[name])
    noise = _outputs(tmp_path / name)
    assert "Token authentication" not in noise and noise.count("A.L.E: Arcade Learning Environment") <= 1


@pytest.mark.slow
def test_notebook_07_with_another_seed_and_the_paper_table(notebook_runner, tmp_path):
    name = "07_dqn_pixelcnn.ipynb"
    m = notebook_runner(name, seed=2)
    _check_metrics(m, KEYS[name], tmp_path / Path(name).stem / "runs", FIGURE[name], seed=2)
    assert m["paper_table"]["Private Eye"]["DQN-PixelCNN"] == 15806.5
    assert "pixelcnn_mmc_max_score" not in m["paper"]  # the table has no number for the corridor


@pytest.mark.slow
def test_notebook_10_is_deterministic(ray_cluster, notebook_runner, tmp_path, monkeypatch):
    """Training on CPU is deterministic for a fixed seed: a second run in another folder (which
    trains again, as Ray tasks: the kernel joins the module's Ray) gives the figures of the first
    (worker processes without Ray)."""
    name = "10_intrinsic_only.ipynb"
    with monkeypatch.context() as m:
        m.setenv("PCNN_EXPLORE_EXECUTOR", "local")  # (the kernel inherits it: no Ray, $RAY_ADDRESS aside)
        a = notebook_runner(name)
    _check_metrics(a, KEYS[name], tmp_path / Path(name).stem / "runs", FIGURE[name])
    b = notebook_runner(name, output_dir=str(tmp_path / "again"))
    assert (tmp_path / "again" / "runs" / ENV / "intrinsic_only_s0" / "log.csv").is_file()
    noise = _outputs(tmp_path / name)  # the kernel joined the module's Ray: no token warning
    assert "Token authentication" not in noise and noise.count("A.L.E: Arcade Learning Environment") <= 1
    drop = lambda m: {k: v for k, v in m.items() if not k.endswith("steps_per_s") and k != "settings"}
    assert drop(a) == drop(b)
