"""A torn, partial or unreadable log in a bsuite store (a write cut short, garbage, missing columns) is named
in one line and left out of the store's results: the next sweep runs it again, and a re-render of the
report treats it as a run missing, without a traceback."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pcnn_explore.envs.bsuite_log import read_bsuite_log
from pcnn_explore.sweep import bsuite_store as bs

from test_bsuite_store import F, S, _log

ROOT = Path(__file__).resolve().parents[1]
_ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def _cut_at_last_comma(path: Path) -> None:
    """A write cut short just after a comma of the last row (no line end after it)."""
    text = path.read_text()
    path.write_text(text[: text.rstrip("\n").rindex(",") + 1])


_TEARS = {
    "cut at a comma": _cut_at_last_comma,
    "no last line end": lambda p: p.write_bytes(p.read_bytes().rstrip(b"\n")),
    "garbage": lambda p: p.write_bytes(b"\x00\xff\x13garbage\x81"),
    "missing columns": lambda p: p.write_text("steps,episode\n10,1\n"),
}


@pytest.mark.parametrize("tear", sorted(_TEARS))
def test_a_torn_log_in_the_store_is_named_once_and_run_again(tmp_path, capfd, tear):
    store = tmp_path / "store"
    for n in (10, 12):
        bs.keep(store, "kit", 701, n, _log(tmp_path / f"r{n}", n, [F] * 9 + [S] * 3), cap=100, profile="study")
    torn = store / "kit" / "seed701" / "bsuite_id_-_deep_sea-1.csv"
    _TEARS[tear](torn)
    capfd.readouterr()
    keys = [("kit", 701, 10), ("kit", 701, 12)]
    assert bs.pending(keys, store, 100) == [1]  # run again
    assert [r["size"] for r in bs.scaling_rows(store, 100)] == [10]  # a run missing, not a result
    (line,) = capfd.readouterr().err.splitlines()  # named once, in one line
    assert line.startswith(f"pcnn-explore: warning: {torn}: ") and line.endswith(
        ": left out of the store's results, a run missing (a sweep into the store runs it again)")
    # a run finished again replaces it
    assert bs.keep(store, "kit", 701, 12, tmp_path / "r12", cap=100, profile="study") == torn
    assert bs.pending(keys, store, 100) == [] and capfd.readouterr().err == ""


@pytest.mark.slow
def test_a_sweep_into_a_store_with_torn_logs_names_them_and_runs_them_again(tmp_path):
    """The review's case: ``sweep --bsuite-store`` refused with "float() argument must be ... not
    'NoneType'", naming no file. Now each torn log is named and its trial run again, exit 0."""
    store = tmp_path / "protocol"
    for n in (10, 12):
        bs.keep(store, "dqn", 701, n, _log(tmp_path / f"r{n}", n, [F] * 10), cap=10, profile="study")
    cut, garbage = (store / "dqn" / "seed701" / f"bsuite_id_-_deep_sea-{i}.csv" for i in (0, 1))
    _cut_at_last_comma(cut)
    _TEARS["garbage"](garbage)
    done = subprocess.run([sys.executable, "-m", "pcnn_explore", "sweep", "--envs", "DeepSea-10-v0,DeepSea-12-v0",
                           "--lines", "dqn", "--seeds", "701", "--episodes", "10", "--set", "tensorboard=false",
                           "--executor", "local", "--no-progress", "--out", "out", "--bsuite-store", str(store)],
                          cwd=tmp_path, capture_output=True, text=True, env=_ENV, timeout=300)
    assert done.returncode == 0, done.stderr
    err = done.stderr.splitlines()
    assert len(err) == 3 and "Traceback" not in done.stderr
    assert err[0].startswith(f"pcnn-explore: warning: {cut}: torn (its last line has no line end")
    assert err[1].startswith(f"pcnn-explore: warning: {garbage}: not a bsuite deep_sea log (not UTF-8 text")
    assert err[2] == f"2 finished trial logs added to {store} (0 were there before)"
    assert done.stdout.startswith("2 of 2 trials done")
    for path, n in ((cut, 10), (garbage, 12)):  # the trials' own logs now, whole
        assert read_bsuite_log(path)["episode"].tolist() == list(range(1, 11))
        assert path.read_text().endswith("\n")


@pytest.mark.slow
def test_rerendering_a_report_whose_store_has_a_torn_log_names_it_and_counts_the_run_missing(tmp_path):
    """The review's case: ``reproduce --rerender`` on a copy of docs/study-report with one protocol csv cut at
    a comma ended in a traceback, rc 1. Now: the file named, the run missing (503 of 504), exit 0."""
    report = tmp_path / "report"
    shutil.copytree(ROOT / "docs" / "study-report", report)
    torn = report / "14_deep_sea_scaling" / "protocol" / "kit" / "seed701" / "bsuite_id_-_deep_sea-5.csv"
    _cut_at_last_comma(torn)
    done = subprocess.run([sys.executable, "-m", "pcnn_explore", "reproduce", "--rerender", str(report)], cwd=tmp_path,
                          capture_output=True, text=True, env=_ENV, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    named = [line for line in done.stderr.splitlines() if str(torn) in line]
    assert named == [f"pcnn-explore: warning: {torn}: torn (its last line has no line end: a write cut short): left "
                     "out of the store's results, a run missing (a sweep into the store runs it again)"]
    whole = json.loads((report / "14_deep_sea_scaling" / "metrics.json").read_text())["whole_protocol"]
    assert (whole["done"], whole["planned"]) == (503, 504)
    assert whole["part"] == "partial protocol: 503 of 504 runs of the whole protocol in the store"
    kit = whole["lines"]["kit"]["protocol_score"]
    assert not kit["complete"] and kit["per_seed_lower"][0] < kit["per_seed_upper"][0]  # seed 701's N = 20 to run
