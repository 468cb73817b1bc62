"""The Python API snippet of docs/density-models.md ("The API in a few lines") runs as written."""
from __future__ import annotations

import math
import re
from pathlib import Path

import torch

PAGE = Path(__file__).resolve().parents[1] / "docs" / "density-models.md"
SECTION = "## The API in a few lines"


def _api_snippet() -> str:
    text = PAGE.read_text(encoding="utf-8")
    assert SECTION in text, f"{PAGE} has no section {SECTION!r}"
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))  # the next section
    section = text[start:end if end != -1 else len(text)]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, f"want one python block in {SECTION!r}, found {len(blocks)}"
    return blocks[0]


def test_api_snippet_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # whatever the snippet writes lands here
    torch.set_num_threads(1)
    namespace: dict = {"__name__": "readme_snippet"}
    exec(compile(_api_snippet(), f"{PAGE} ({SECTION[3:]})", "exec"), namespace)
    # what the snippet says it computes
    assert namespace["frame"].shape == (42, 42) and namespace["frame"].max() <= 7
    assert math.isfinite(namespace["log_rho"]) and math.isfinite(namespace["log_rho_prime"])
    assert namespace["record"].n == 1 and namespace["record"].bonus >= 0
    info = namespace["info"]
    assert 0 <= info["intrinsic_reward"] and math.isfinite(info["prediction_gain"])
    assert -1 <= namespace["reward"] <= 1
