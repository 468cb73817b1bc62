"""No shipped verdict changes with the one claim record: the migrated docs/study-report against the
records of 99ba5e1 (``tests/data/claims_snapshot_99ba5e1.json``, made by
``tests/data/make_claims_snapshot.py`` on that commit).

Compared exactly, per migrated notebook: each claim's name, kind, word, estimate, interval, p and n in
the order made (and each bonus-scale reading's), the notebook's word and kit word, its first-screen
row and its claim rows; and every record decided again (``--rerender``) to the same decision. A claim
that recorded no interval before reads (None, None) now: the record always holds one.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pcnn_explore.report.claims import claims_of
from pcnn_explore.report.first_screen import notebook_row
from pcnn_explore.report.index import notebook_verdict
from pcnn_explore.study import Decision, decide_again, decisions_of, notebook_words

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "docs" / "study-report"
SNAPSHOT = json.loads((ROOT / "tests" / "data" / "claims_snapshot_99ba5e1.json").read_text())["notebooks"]
#: the notebooks whose metrics.json holds the claims record (each migration adds its own)
MIGRATED = ("01_online_vs_shuffled",)


def _metrics(name: str) -> dict:
    return json.loads((REPORT / name / "metrics.json").read_text())


def _fields(d: Decision) -> dict:
    out = {"kind": d.kind, "word": d.word, "estimate": d.estimate, "interval": list(d.interval), "p": d.p, "n": d.n}
    if d.readings:
        out["readings"] = {k: _fields(r) for k, r in d.readings}
    return out


def _before(c: dict) -> dict:
    c = dict(c)
    c["interval"] = c["interval"] if c["interval"] is not None else [None, None]
    if "readings" in c:
        c["readings"] = {k: _before(r) for k, r in c["readings"].items()}
    return c


@pytest.mark.parametrize("name", MIGRATED)
def test_each_claim_keeps_its_word_estimate_interval_p_and_n(name):
    decisions = decisions_of(_metrics(name), name)
    before = SNAPSHOT[name]["claims"]
    assert [d.name for d in decisions] == [c["name"] for c in before]
    for d, c in zip(decisions, before):
        assert _fields(d) == _before(c["stored"]) == _before(c["redecided"]), d.name
        assert decide_again(d) == d, d.name


@pytest.mark.parametrize("name", MIGRATED)
def test_each_notebook_keeps_its_word_kit_word_first_screen_row_and_claim_rows(name):
    m = _metrics(name)
    before = SNAPSHOT[name]
    word, sentence = notebook_verdict(m)
    assert word == before["word"]
    assert notebook_words(decisions_of(m, name))[1] == (before["kit_word"] or before["kit_word_redecided"])
    assert dataclasses.asdict(notebook_row(name, m, word, sentence)) == before["first_screen"]
    assert [dataclasses.asdict(c) for c in claims_of(name, m)] == before["rows"]


@pytest.mark.xfail(strict=True, reason="the notebooks not yet migrated to the claims record")
def test_every_notebook_of_the_report_is_migrated():
    assert sorted(MIGRATED) == sorted(SNAPSHOT)
