"""``reproduce --reading``: the run of the PixelCNN's sensitivity optimizer reading that ``--take-reading``
takes beside the paper reading's. Each notebook takes the reading by the name its parameters cell
assigns; a notebook that trains no PixelCNN under a named reading, or an unknown reading, is refused in
one line before anything is written."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pcnn_explore.report.reproduce import READING_PARAMETERS, reading_parameter, reading_parameters

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
_BIN = Path(sys.executable).parent / "pcnn-explore"
_CLI = [str(_BIN)] if _BIN.is_file() else [sys.executable, "-m", "pcnn_explore"]

#: which notebooks train a PixelCNN under a named reading, and by which parameter
EXPECTED = {**{f"0{i}": "rmsprop" for i in range(7)}, "07": "density_optimizer", "12": "density_optimizer",
            "13": "density_optimizer", **{n: None for n in ("08", "09", "10", "11", "14")}}


def _notebook(prefix: str) -> Path:
    (path,) = NOTEBOOKS.glob(f"{prefix}_*.ipynb")
    return path


def take_both_readings(runs: dict, report: Path) -> Path:
    """A report made of ``runs["tf1"]`` (a copy), into which ``reproduce --rerender --take`` takes the tf1 run with
    ``--take-reading torch=runs["torch"]``; the report's folder."""
    shutil.copytree(runs["tf1"], report)
    done = subprocess.run([*_CLI, "reproduce", "--rerender", str(report), "--take", str(runs["tf1"]),
                           "--take-reading", f"torch={runs['torch']}"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return report


@pytest.mark.parametrize("prefix", sorted(EXPECTED))
def test_each_notebook_takes_the_reading_by_its_parameters_cells_name(prefix):
    assert reading_parameter(_notebook(prefix)) == EXPECTED[prefix]


def test_the_parameters_are_the_readings_name_and_none_without_a_reading():
    nbs = [_notebook("00"), _notebook("12")]
    assert reading_parameters(nbs, None) == {nbs[0]: {}, nbs[1]: {}}
    assert reading_parameters(nbs, "torch") == {nbs[0]: {"rmsprop": "torch"}, nbs[1]: {"density_optimizer": "torch"}}
    assert set(READING_PARAMETERS) == {"rmsprop", "density_optimizer"}
    # 07 takes the reading by the agent notebooks' name: `reproduce --reading torch --only 07` runs its torch lines
    (nb07,) = [_notebook("07")]
    assert reading_parameters([nb07], "torch") == {nb07: {"density_optimizer": "torch"}}


@pytest.mark.parametrize("args, said", [
    (["--only", "08", "--reading", "torch"], "--reading torch: 08_mmc_ablation train(s) no PixelCNN"),
    (["--only", "0[28]_*", "--reading", "torch"], "--reading torch: 08_mmc_ablation train(s) no PixelCNN"),
    (["--only", "02", "--reading", "sgd"], "--reading must be one of tf1, torch, got 'sgd'"),
])
def test_a_reading_a_notebook_cannot_take_is_refused_before_anything_is_written(tmp_path, args, said):
    out = tmp_path / "run"
    done = subprocess.run([*_CLI, "reproduce", *args, "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], done.stderr
    assert not out.exists()


@pytest.mark.slow
def test_a_torch_run_is_taken_beside_the_paper_readings_run(tmp_path):
    """Two smoke runs of 02, one per reading, each records its reading; taken together into a report,
    the notebook carries the torch run as its sensitivity reading."""
    runs = {}
    for reading in ("tf1", "torch"):
        out = tmp_path / reading
        done = subprocess.run([*_CLI, "reproduce", "--only", "02", "--reading", reading, "--out", str(out)],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        metrics = json.loads((out / "02_episode_start_spikes" / "metrics.json").read_text())
        assert metrics["settings"]["rmsprop"] == reading
        runs[reading] = out
    report = take_both_readings(runs, tmp_path / "report")
    taken = json.loads((report / "02_episode_start_spikes" / "metrics.json").read_text())
    assert taken["settings"]["rmsprop"] == "tf1"
    assert taken["sensitivity_reading"]["settings"]["rmsprop"] == "torch"
