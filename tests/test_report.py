"""metrics.json and the paper-versus-run table."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from pcnn_explore.report import paper_vs_run, read_metrics, write_metrics


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_metrics_json_is_plain_json_with_the_mode_of_every_other_output(tmp_path, umask_022):
    path = write_metrics(tmp_path / "run", {"a": np.float32(1.5), "b": [np.int64(2), float("nan")],
                                            "c": np.arange(3), "d": {"e": float("inf")}})
    assert path == tmp_path / "run" / "metrics.json"
    assert path.stat().st_mode & 0o777 == 0o644  # not mkstemp's 0600
    assert json.loads(path.read_text()) == {"a": 1.5, "b": [2, None], "c": [0, 1, 2], "d": {"e": None}}
    assert read_metrics(tmp_path / "run") == {"a": 1.5, "b": [2, None], "c": [0, 1, 2], "d": {"e": None}}
    assert sorted(p.name for p in path.parent.iterdir()) == ["metrics.json"]  # no temp file left


def test_a_failed_write_keeps_the_old_metrics(tmp_path, monkeypatch):
    path = write_metrics(tmp_path, {"a": 1})

    def explode(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", explode)
    with pytest.raises(OSError, match="disk full"):
        write_metrics(tmp_path, {"a": 2})
    assert json.loads(path.read_text()) == {"a": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.json"]


def test_paper_vs_run_table():
    text = paper_vs_run([("score", "6600", "12"), ("rooms", "15", "3")])
    assert text.splitlines()[0].split() == ["quantity", "paper", "this", "run"]
    assert len(text.splitlines()) == 4
