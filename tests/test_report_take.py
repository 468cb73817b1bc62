"""``pcnn-explore reproduce --rerender DIR --take RUN`` ships a notebook re-run on its own: its folder
and its index.json record (time, commit) replace the report's, checked whole before anything is
written, and the verdicts are decided again."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pcnn_explore import cli
from pcnn_explore.report.rerender import take
from pcnn_explore.study import metrics_record


#: a claims record with no claim (every notebook's metrics.json holds one)
_RECORD = metrics_record([])


def _report(folder: Path, profile: str, notebooks: dict[str, dict]) -> Path:
    """A report folder as reproduce writes it: index.json and, per notebook, its folder."""
    records = []
    for name, rec in notebooks.items():
        nb = folder / name
        nb.mkdir(parents=True)
        (nb / "metrics.json").write_text(json.dumps({"profile": profile, "tag": rec["tag"], **_RECORD}))
        (nb / f"{name}.html").write_text(f"<p>{rec['tag']}</p>")
        records.append({"name": name, "status": rec.get("status", "ok"), "seconds": rec["seconds"], "error": None,
                        "failed_cell": None, "html": f"{name}/{name}.html", "output_dir": name, "profile": profile,
                        "commit": rec["commit"]})
    (folder / "index.json").write_text(json.dumps({"profile": profile, "notebooks": records}))
    return folder


def _index(folder: Path) -> dict[str, dict]:
    return {r["name"]: r for r in json.loads((folder / "index.json").read_text())["notebooks"]}


def test_take_replaces_the_notebooks_folder_and_record_and_keeps_the_others(tmp_path):
    out = _report(tmp_path / "report", "study", {"08_b": {"tag": "old", "seconds": 115.0, "commit": "aaa"},
                                                  "09_c": {"tag": "kept", "seconds": 139.0, "commit": "aaa"}})
    (out / "08_b" / "stale.png").write_bytes(b"x")  # a figure of the old run that the new run does not make
    run = _report(tmp_path / "run", "study", {"08_b": {"tag": "new", "seconds": 700.5, "commit": "bbb"},
                                               "07_a": {"tag": "first", "seconds": 1300.0, "commit": "bbb"}})
    assert take(run, out) == ["07_a", "08_b"]
    records = _index(out)
    assert list(records) == ["07_a", "08_b", "09_c"]  # in the notebooks' order
    assert (records["08_b"]["seconds"], records["08_b"]["commit"]) == (700.5, "bbb")
    assert (records["09_c"]["seconds"], records["09_c"]["commit"]) == (139.0, "aaa")
    assert json.loads((out / "08_b" / "metrics.json").read_text())["tag"] == "new"
    assert not (out / "08_b" / "stale.png").exists()
    assert (out / "07_a" / "07_a.html").read_text() == "<p>first</p>"
    assert sorted(p.name for p in out.iterdir()) == ["07_a", "08_b", "09_c", "index.json"]  # nothing staged left


def test_take_keeps_the_bsuite_store_a_run_of_one_session_lacks(tmp_path):
    out = _report(tmp_path / "report", "study", {"14_d": {"tag": "old", "seconds": 1.0, "commit": "a"}})
    (out / "14_d" / "protocol" / "kit" / "seed701").mkdir(parents=True)
    (out / "14_d" / "protocol" / "kit" / "seed701" / "bsuite_id_-_deep_sea-0.csv").write_text("kept")
    run = _report(tmp_path / "run", "study", {"14_d": {"tag": "new", "seconds": 2.0, "commit": "b"}})
    take(run, out)
    assert (out / "14_d" / "protocol" / "kit" / "seed701" / "bsuite_id_-_deep_sea-0.csv").read_text() == "kept"
    assert json.loads((out / "14_d" / "metrics.json").read_text())["tag"] == "new"
    # a run that brings its own store: the two become one, the run's file first where both have it
    manifest = lambda line: json.dumps({"episodes": 10000, "lines": {line: {"profile": "study"}}})  # noqa: E731
    (out / "14_d" / "protocol" / "store.json").write_text(manifest("kit"))
    (run / "14_d" / "protocol" / "dqn" / "seed701").mkdir(parents=True)
    (run / "14_d" / "protocol" / "dqn" / "seed701" / "bsuite_id_-_deep_sea-0.csv").write_text("new")
    (run / "14_d" / "protocol" / "store.json").write_text(manifest("dqn"))
    take(run, out)
    store = out / "14_d" / "protocol"
    assert sorted(str(p.relative_to(store)) for p in store.rglob("*.csv")) == [
        "dqn/seed701/bsuite_id_-_deep_sea-0.csv", "kit/seed701/bsuite_id_-_deep_sea-0.csv"]
    assert json.loads((store / "store.json").read_text())["lines"] == {"dqn": {"profile": "study"},
                                                                      "kit": {"profile": "study"}}
    # stores of two episode caps cannot be one: refused before anything is written
    (run / "14_d" / "protocol" / "store.json").write_text(json.dumps({"episodes": 10, "lines": {}}))
    with pytest.raises(ValueError, match="holds runs of 10 episodes and the report's .* of 10000"):
        take(run, out)
    assert json.loads((out / "14_d" / "metrics.json").read_text())["tag"] == "new"


@pytest.mark.parametrize("case, match", [
    ("smoke", "'smoke' run and .* a 'study' report"),
    ("failed", "08_b failed in .*run it again"),
    ("no metrics", "holds no metrics.json"),
])
def test_take_refuses_a_run_it_cannot_ship_before_writing_anything(tmp_path, case, match):
    out = _report(tmp_path / "report", "study", {"08_b": {"tag": "old", "seconds": 115.0, "commit": "aaa"}})
    before = (out / "index.json").read_text()
    run = _report(tmp_path / "run", "smoke" if case == "smoke" else "study",
                  {"07_a": {"tag": "fine", "seconds": 1.0, "commit": "bbb"},
                   "08_b": {"tag": "new", "seconds": 2.0, "commit": "bbb",
                            "status": "failed" if case == "failed" else "ok"}})
    if case == "no metrics":
        (run / "08_b" / "metrics.json").unlink()
    with pytest.raises(ValueError, match=match):
        take(run, out)
    assert (out / "index.json").read_text() == before
    assert not (out / "07_a").exists() and json.loads((out / "08_b" / "metrics.json").read_text())["tag"] == "old"


def test_take_needs_two_reports(tmp_path):
    out = _report(tmp_path / "report", "study", {"08_b": {"tag": "old", "seconds": 1.0, "commit": "a"}})
    with pytest.raises(FileNotFoundError, match="nothing/index.json does not exist"):
        take(tmp_path / "nothing", out)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "index.json").write_text(json.dumps({"profile": "study", "notebooks": []}))
    with pytest.raises(ValueError, match="records no notebook"):
        take(tmp_path / "empty", out)


@pytest.mark.parametrize("where", ["run", "report"])
def test_a_take_whose_metrics_hold_no_claims_record_is_refused_before_anything_moves(tmp_path, capsys, where):
    """A metrics.json written before the claims record (no schema), in the run or in the report, cannot
    be decided again: the take is refused in one line, exit 2, before anything moves (not taken, then
    refused by the re-render)."""
    out = _report(tmp_path / "report", "study", {"08_b": {"tag": "old", "seconds": 1.0, "commit": "a"},
                                                  "09_c": {"tag": "kept", "seconds": 1.0, "commit": "a"}})
    run = _report(tmp_path / "run", "study", {"08_b": {"tag": "new", "seconds": 2.0, "commit": "b"}})
    stale = (run / "08_b" if where == "run" else out / "09_c") / "metrics.json"
    stale.write_text(json.dumps({"profile": "study", "tag": "stale", "summary": {"verdict": "agrees: x"}}))
    files = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert cli.main(["reproduce", "--rerender", str(out), "--take", str(run)]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and str(stale.parent) in err[0] and "re-run the notebook" in err[0], err
    assert ("holds no claims record of schema 1" if where == "run" else "no schema") in err[0]
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == files  # nothing moved, nothing written
    with pytest.raises(ValueError, match="re-run the notebook"):
        take(run, out)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == files


def test_the_command_takes_then_decides_again(tmp_path, capsys):
    # (a notebook "99" holds no claim the re-render decides: no verdict changes)
    out = _report(tmp_path / "report", "study", {"99_b": {"tag": "old", "seconds": 1.0, "commit": "a"}})
    run = _report(tmp_path / "run", "study", {"99_b": {"tag": "new", "seconds": 2.0, "commit": "b"}})
    assert cli.main(["reproduce", "--take", str(run)]) == 2
    assert "--take RUN needs --rerender DIR" in capsys.readouterr().err
    assert cli.main(["reproduce", "--rerender", str(out), "--take", str(run)]) == 0
    said = capsys.readouterr().out
    assert f"took 99_b into {out}" in said and "0 notebook verdict(s) changed" in said
    assert _index(out)["99_b"]["commit"] == "b" and (out / "index.html").is_file()
