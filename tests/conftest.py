"""Shared test helpers."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"

# Tests run single-threaded torch: batch-1 models are faster that way on small machines.
os.environ.setdefault("PCNN_EXPLORE_PROFILE", "smoke")


def run_notebook(name: str, tmp_path: Path, **parameters) -> dict:
    """Execute ``notebooks/<name>`` with papermill in the smoke profile; return its metrics.json."""
    import papermill as pm

    out_dir = tmp_path / Path(name).stem
    params = {"profile": "smoke", "output_dir": str(out_dir), **parameters}
    pm.execute_notebook(
        str(NOTEBOOKS / name),
        str(tmp_path / name),
        parameters=params,
        cwd=str(NOTEBOOKS),
        kernel_name="python3",
        progress_bar=False,
    )
    return json.loads((out_dir / "metrics.json").read_text())


@pytest.fixture
def notebook_runner(tmp_path):
    return lambda name, **params: run_notebook(name, tmp_path, **params)
