"""Write ``claims_snapshot_99ba5e1.json``: the shipped study report's verdicts as the code of commit
99ba5e1 reads and re-decides them, the "before" that the one claim record must keep.

Run it on that commit, from the repository root of a worktree of it::

    git worktree add /tmp/old 99ba5e1
    cd /tmp/old && PYTHONPATH=/tmp/old python tests/data/make_claims_snapshot.py OUT.json

Per notebook 00-14 of ``docs/study-report`` it keeps:

- ``word``: the notebook's word (:func:`pcnn_explore.report.index.notebook_verdict` of its metrics);
- ``kit_word``: the word of its kit verdict as stored (``summary.kit_verdict``, else ``kit_verdict``;
  None without one), and ``kit_word_redecided``: the kit claims' word after ``--rerender``'s
  :func:`redecide` (None without kit claims);
- ``claims``: per stored claim record, in the report's order (name, kind, word, estimate, interval,
  p, n; each reading of a claim that depends on the bonus scale the same), once as stored
  (``stored``) and once as :func:`redecide` decides it again (``redecided``);
- ``rows``: the report's claim rows (:func:`pcnn_explore.report.claims.claims_of`), every field;
- ``first_screen``: the first-screen row (:func:`pcnn_explore.report.first_screen.notebook_row`).

Floats are kept as JSON writes them (repr: exact); NaN as None.
"""
from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path

from pcnn_explore.report.claims import _ordered, claims_of
from pcnn_explore.report.first_screen import notebook_row
from pcnn_explore.report.index import notebook_verdict
from pcnn_explore.report.rerender import _word_of_claims, redecide
from pcnn_explore.verdicts import word_of

REPORT = Path("docs/study-report")


def _plain(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _fields(c: dict) -> dict:
    out = {"kind": c.get("kind", "paper"), "word": c.get("verdict") or c.get("word"),
           "estimate": _plain(c.get("estimate")), "interval": _plain(c.get("interval")),
           "p": _plain(c.get("p_value")), "n": c.get("n")}
    if isinstance(c.get("readings"), dict):
        out["readings"] = {k: _fields(r) for k, r in c["readings"].items()}
    return out


def _records(name: str, metrics: dict) -> dict:
    s = metrics.get("summary") if isinstance(metrics.get("summary"), dict) else {}
    records = metrics.get("claims") if isinstance(metrics.get("claims"), dict) else s.get("claims")
    return records if isinstance(records, dict) else {}


def snapshot() -> dict:
    index = json.loads((REPORT / "index.json").read_text())
    out = {}
    for rec in index["notebooks"]:
        name = rec["name"]
        metrics = json.loads((REPORT / (rec.get("output_dir") or name) / "metrics.json").read_text())
        word, sentence = notebook_verdict(metrics, rec["status"], rec.get("error"))
        s = metrics.get("summary") if isinstance(metrics.get("summary"), dict) else {}
        kit = s.get("kit_verdict") or metrics.get("kit_verdict")
        stored = _records(name, metrics)
        again = redecide(name, metrics)
        redecided = _records(name, again) if again is not None else {}
        order = _ordered(name, stored)
        out[name] = {
            "word": word,
            "kit_word": word_of(str(kit)) if kit else None,
            "kit_word_redecided": _word_of_claims(redecided)[1] if redecided else None,
            "claims": [{"name": k, "stored": _fields(stored[k]),
                        "redecided": _fields(redecided[k]) if k in redecided else None} for k in order],
            "rows": [{k: _plain(v) for k, v in dataclasses.asdict(c).items()} for c in claims_of(name, metrics)],
            "first_screen": dataclasses.asdict(notebook_row(name, metrics, word, sentence)),
        }
    return {"commit": "99ba5e1", "report": str(REPORT), "notebooks": out}


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps(snapshot(), indent=1, allow_nan=False) + "\n")
