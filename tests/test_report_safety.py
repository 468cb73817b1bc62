"""``reproduce --rerender DIR --take RUN`` touches nothing outside the report: every name read from
index.json or metrics.json is one plain folder or file name, a run's links are refused (never
followed), a malformed index.json or metrics.json is one line naming the file and the field with exit
status 2 before anything moves, and a take is all or nothing, even when it is killed (the next take or
re-render clears what it left and says so in one line)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pcnn_explore import cli
from pcnn_explore.report import take as take_module
from pcnn_explore.report.rerender import rerender, take
from pcnn_explore.study import metrics_record

_BIN = Path(sys.executable).parent / "pcnn-explore"
_CLI = [str(_BIN)] if _BIN.is_file() else [sys.executable, "-m", "pcnn_explore"]
_NB = "99_b"  # (a notebook whose claims the re-render does not decide: its metrics.json stays as it is)


def _notebook(folder: Path, tag: str, name: str | None = None) -> None:
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps({"profile": "study", "tag": tag, **metrics_record([])}))
    (folder / f"{name or folder.name}.html").write_text(f"<p>{tag}</p>")


def _record(name: str, seconds: float = 1.0, commit: str = "a", **fields) -> dict:
    return {"name": name, "status": "ok", "seconds": seconds, "error": None, "failed_cell": None,
            "html": f"{name}/{name}.html", "output_dir": name, "profile": "study", "commit": commit, **fields}


def _report(folder: Path, *names: str, tag: str = "old") -> Path:
    for name in names:
        _notebook(folder / name, tag)
    (folder / "index.json").write_text(json.dumps({"profile": "study", "notebooks": [_record(n) for n in names]}))
    return folder


def _snapshot(folder: Path) -> dict[str, object]:
    """Every path under ``folder`` with its bytes (files), "folder" or its link target; no link followed."""
    seen: dict[str, object] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = Path(root) / name
            key = str(p.relative_to(folder))
            seen[key] = (f"link to {os.readlink(p)}" if p.is_symlink() else "folder" if p.is_dir()
                         else p.read_bytes())
    return seen


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*_CLI, "reproduce", *args], capture_output=True, text=True, timeout=120)


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pcnn-explore reproduce: error: "), err
    return lines[0]


# ------------------------------------------------------------------ names outside the report
@pytest.mark.parametrize("where", ["relative", "absolute"])
def test_a_name_that_leaves_the_report_touches_nothing_outside_it(tmp_path, where):
    """The reviewed case: a run naming its notebook "../victim" (or the victim's absolute path), status
    ok, output_dir "nb", taken by the real command: the sibling folder victim/ is left as it is, the
    report too, exit status 2 in one line naming index.json and the field."""
    out = _report(tmp_path / "report", _NB)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("the only copy")
    run = tmp_path / "run"
    _notebook(run / "nb", "new", name="x")
    name = "../victim" if where == "relative" else str(victim)
    (run / "index.json").write_text(json.dumps({"profile": "study", "notebooks": [
        _record(name, output_dir="nb", html="nb/x.html")]}))
    before, victim_before, run_before = _snapshot(out), _snapshot(victim), _snapshot(run)
    done = _cli("--rerender", str(out), "--take", str(run))
    assert done.returncode == 2, done.stderr
    line = _one_error_line(done.stderr)
    assert f"{run / 'index.json'}: notebooks[0].name must be one plain folder or file name" in line
    assert repr(name) in line
    assert _snapshot(victim) == victim_before and _snapshot(out) == before and _snapshot(run) == run_before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report", "run", "victim"]  # nothing beside them


@pytest.mark.parametrize("field, value, said", [
    ("name", "", "notebooks[0].name must be one plain folder"),
    ("name", ".hidden", "notebooks[0].name must be one plain folder"),
    ("name", "..", "notebooks[0].name must be one plain folder"),
    ("name", "a/b", "notebooks[0].name must be one plain folder"),
    ("name", "index.json", "notebooks[0].name is 'index.json', a file of the report itself"),
    ("output_dir", "../secret", "notebooks[0] (99_b).output_dir must be one plain folder"),
    ("output_dir", "/etc", "notebooks[0] (99_b).output_dir must be one plain folder"),
    ("html", "../../x.html", "notebooks[0] (99_b).html must be '99_b/<file>.html'"),
    ("html", "99_b/../../x.html", "notebooks[0] (99_b).html must be '99_b/<file>.html'"),
])
def test_every_path_read_from_index_json_is_one_plain_name(tmp_path, capsys, field, value, said):
    out = _report(tmp_path / "report", _NB)
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "metrics.json").write_text("{}")  # (what an output_dir of ../secret would copy in)
    run = _report(tmp_path / "run", _NB, tag="new")
    records = json.loads((run / "index.json").read_text())
    records["notebooks"][0][field] = value
    (run / "index.json").write_text(json.dumps(records))
    before = _snapshot(tmp_path)
    assert cli.main(["reproduce", "--rerender", str(out), "--take", str(run)]) == 2
    assert f"{run / 'index.json'}: {said}" in _one_error_line(capsys.readouterr().err)
    assert _snapshot(tmp_path) == before


def test_a_main_figure_outside_the_notebooks_folder_is_refused(tmp_path, capsys):
    out = _report(tmp_path / "report", _NB)
    (tmp_path / "x.png").write_bytes(b"png")
    metrics = out / _NB / "metrics.json"
    metrics.write_text(json.dumps({"profile": "study", "main_figure": "../../x.png", **metrics_record([])}))
    before = _snapshot(tmp_path)
    assert cli.main(["reproduce", "--rerender", str(out)]) == 2
    assert f"{metrics}: main_figure must be one plain folder or file name" in capsys.readouterr().err
    assert _snapshot(tmp_path) == before


# ------------------------------------------------------------------ links in the run
@pytest.mark.parametrize("link", ["file", "folder", "the notebook's folder", "a pipe"])
def test_links_in_a_run_are_refused_never_followed(tmp_path, link):
    """A link to a file (the review's /etc/hostname) or to a folder anywhere in the run, or the
    notebook's folder itself a link, is refused, not copied into the report as real content; a named
    pipe (which a copy would read) too."""
    out = _report(tmp_path / "report", _NB)
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "hostname").write_text("a secret of the machine")
    run = _report(tmp_path / "run", _NB, tag="new")
    inner = run / _NB / "figures"
    inner.mkdir()
    if link == "file":
        (inner / "host.txt").symlink_to(secret / "hostname")
        bad = inner / "host.txt"
    elif link == "folder":
        (run / _NB / "linked").symlink_to(secret, target_is_directory=True)
        bad = run / _NB / "linked"
    elif link == "a pipe":
        os.mkfifo(inner / "pipe")
        bad = inner / "pipe"
    else:
        real = tmp_path / "elsewhere"
        (run / _NB).rename(real)
        (run / _NB).symlink_to(real, target_is_directory=True)
        bad = run / _NB
    before = _snapshot(out)
    with pytest.raises(ValueError) as refused:
        take(run, out)
    said = "is not a plain file or folder" if link == "a pipe" else "is a symbolic link"
    assert str(refused.value).startswith(f"{bad} {said}: a run to take")
    assert _snapshot(out) == before
    assert not any(b"a secret" in v for v in _snapshot(out).values() if isinstance(v, bytes))


def test_links_in_the_reports_store_are_refused(tmp_path, capsys):
    """A store a re-render reads (14's protocol) holds real files only."""
    out = _report(tmp_path / "report", "14_d")
    store = out / "14_d" / "protocol" / "kit"
    store.mkdir(parents=True)
    (tmp_path / "outside.csv").write_text("episode,total_return\n")
    (store / "seed1").symlink_to(tmp_path, target_is_directory=True)
    before = _snapshot(out)
    assert cli.main(["reproduce", "--rerender", str(out)]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"{store / 'seed1'} is a symbolic link: the report's store {out / '14_d' / 'protocol'}" in line
    assert _snapshot(out) == before


# ------------------------------------------------------------------ malformed files
_BAD_INDEX = {
    "a list": ("[]", "the top level must be an object"),
    "not JSON": ('{"profile": "study", ', "is not readable JSON"),
    "name 5": ({"name": 5}, "notebooks[0].name must be one plain folder or file name (no '/', no '..', no leading "
                            "'.', not empty), got 5"),
    "no name": ({"name": None}, "notebooks[0].name is missing"),
    "no seconds": ({"seconds": None}, "notebooks[0] (99_b).seconds must be the run's time in seconds (a number >= 0), "
                                      "got nothing"),
    "seconds text": ({"seconds": "12"}, "notebooks[0] (99_b).seconds must be the run's time in seconds"),
    "seconds nan": ({"seconds": float("nan")}, "notebooks[0] (99_b).seconds must be"),
    "no status": ({"status": None}, "notebooks[0] (99_b).status must be 'ok' or 'failed', got 'nothing'"),
    "commit 3": ({"commit": 3}, "notebooks[0] (99_b).commit must be text or null, got 3"),
    "a record 7": ("7", "notebooks[0] must be an object"),
    "notebooks {}": ("{}", "notebooks must be a list of records, got {}"),
    "no profile": ("none", "profile must be the run's profile"),
}


def _bad_index(folder: Path, case: str) -> None:
    change, _ = _BAD_INDEX[case]
    records = json.loads((folder / "index.json").read_text())
    if isinstance(change, dict):
        for k, v in change.items():
            if v is None:
                records["notebooks"][0].pop(k)
            else:
                records["notebooks"][0][k] = v
        text = json.dumps(records)
    elif change == "7":
        text = json.dumps({**records, "notebooks": [7]})
    elif change == "{}":
        text = json.dumps({**records, "notebooks": {}})
    elif change == "none":
        text = json.dumps({"notebooks": records["notebooks"]})
    else:
        text = change
    (folder / "index.json").write_text(text)


@pytest.mark.parametrize("case", sorted(_BAD_INDEX))
@pytest.mark.parametrize("whose", ["the run's", "the report's"])
def test_a_malformed_index_json_is_one_line_naming_the_file_and_field_before_anything_moves(tmp_path, capsys, case,
                                                                                             whose):
    out = _report(tmp_path / "report", _NB, "09_c")
    run = _report(tmp_path / "run", _NB, "07_a", tag="new")
    bad = run if whose == "the run's" else out
    _bad_index(bad, case)
    before = _snapshot(tmp_path)
    assert cli.main(["reproduce", "--rerender", str(out), "--take", str(run)]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert str(bad / "index.json") in line and _BAD_INDEX[case][1] in line
    assert _snapshot(tmp_path) == before  # nothing taken, nothing re-rendered


@pytest.mark.parametrize("case", ["no seconds", "name 5", "a list"])
def test_a_rerender_of_a_malformed_report_writes_nothing(tmp_path, capsys, case):
    """A missing ``seconds`` ended in a traceback after the re-render had written its metrics."""
    out = _report(tmp_path / "report", _NB)
    _bad_index(out, case)
    before = _snapshot(out)
    assert cli.main(["reproduce", "--rerender", str(out)]) == 2
    assert str(out / "index.json") in _one_error_line(capsys.readouterr().err)
    assert _snapshot(out) == before


@pytest.mark.parametrize("whose", ["the run's", "the report's"])
@pytest.mark.parametrize("text, said", [("[]", "the top level must be an object"),
                                        ("{", "is not readable JSON"),
                                        ('{"main_figure": 5}', "main_figure must be one plain folder or file name")])
def test_a_malformed_metrics_json_is_one_line_naming_the_file(tmp_path, capsys, whose, text, said):
    out = _report(tmp_path / "report", _NB, "09_c")
    run = _report(tmp_path / "run", _NB, tag="new")
    bad = (run / _NB if whose == "the run's" else out / "09_c") / "metrics.json"
    bad.write_text(text)
    before = _snapshot(tmp_path)
    assert cli.main(["reproduce", "--rerender", str(out), "--take", str(run)]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert str(bad) in line and said in line
    assert _snapshot(tmp_path) == before


# ------------------------------------------------------------------ all or nothing
def _two_and_a_store(tmp_path: Path) -> tuple[Path, Path]:
    """A report of 08_b (with a store) and 09_c; a run of 07_a (new to the report) and 08_b."""
    out = _report(tmp_path / "report", "08_b", "09_c")
    (out / "08_b" / "protocol" / "kit").mkdir(parents=True)
    (out / "08_b" / "protocol" / "kit" / "log.csv").write_text("kept")
    (out / "README.md").write_text("the report\n")
    run = tmp_path / "run"
    for name in ("07_a", "08_b"):
        _notebook(run / name, "new")
    (run / "08_b" / "protocol" / "dqn").mkdir(parents=True)
    (run / "08_b" / "protocol" / "dqn" / "log.csv").write_text("new")
    (run / "index.json").write_text(json.dumps({"profile": "study", "notebooks": [
        _record("07_a", commit="b"), _record("08_b", 2.0, "b")]}))
    return out, run


@pytest.mark.parametrize("step", ["copy 1", "copy 2", "union", "move 1", "move 2", "move 3", "commit"])
def test_a_take_that_fails_half_way_leaves_the_report_as_it_was(tmp_path, monkeypatch, step):
    """An error at any step of a take (copying the second notebook, joining the stores, each rename of
    the swap, the commit of index.json) leaves the report byte for byte as before, and no staging folder."""
    import shutil

    out, run = _two_and_a_store(tmp_path)
    before = _snapshot(out)
    kind, _, k = step.partition(" ")

    def failing(real, at):
        calls = []

        def f(*a, **kw):
            calls.append(a)
            if len(calls) == at:
                raise OSError(28, "No space left on device (injected)")
            return real(*a, **kw)
        return f

    if kind == "copy":  # (shutil.copytree copies each notebook)
        monkeypatch.setattr(shutil, "copytree", failing(shutil.copytree, int(k)))
    elif kind == "union":
        monkeypatch.setattr(take_module, "_union", failing(take_module._union, 1))
    else:  # the swap's renames: 07_a in; 08_b out of the report; 08_b in; the commit: index.json
        monkeypatch.setattr(take_module, "_move", failing(take_module._move, 4 if kind == "commit" else int(k)))
    with pytest.raises(OSError, match="injected"):
        take(run, out)
    assert _snapshot(out) == before
    take(run, out)  # and the same take, done whole, changes what it should
    assert json.loads((out / "08_b" / "metrics.json").read_text())["tag"] == "new"
    assert sorted(p.name for p in out.iterdir()) == ["07_a", "08_b", "09_c", "README.md", "index.json"]
    assert (out / "08_b" / "protocol" / "kit" / "log.csv").read_text() == "kept"


_KILLER = """
import os, shutil, signal, sys
from pcnn_explore.report import take as t
kind, at = sys.argv[3], int(sys.argv[4])
calls = []
def killing(real, after=False):
    def f(*a, **kw):
        calls.append(a)
        if len(calls) == at and not after:
            os.kill(os.getpid(), signal.SIGKILL)
        r = real(*a, **kw)
        if len(calls) == at and after:
            os.kill(os.getpid(), signal.SIGKILL)
        return r
    return f
if kind == "copy":
    shutil.copytree = killing(shutil.copytree)
else:
    t._move = killing(t._move, after=kind == "after")
t.take(sys.argv[1], sys.argv[2])
"""


@pytest.mark.parametrize("kind, at", [("copy", 2), ("move", 1), ("move", 2), ("move", 3), ("move", 4),
                                      ("after", 4)])
def test_a_killed_take_is_cleared_by_the_next_rerender_in_one_line(tmp_path, kind, at):
    """SIGKILL at each step of a take: the next re-render finds the staging folder the take left, puts
    back what it had moved (or, killed after its commit, keeps the take), removes the folder and says
    so in one line; the report is then byte for byte as before the take (or as after it)."""
    out, run = _two_and_a_store(tmp_path)
    before = _snapshot(out)
    killed = subprocess.run([sys.executable, "-c", _KILLER, str(run), str(out), kind, str(at)],
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    (staging,) = [p.name for p in out.iterdir() if p.name.startswith(take_module.STAGING_PREFIX)]
    said: list[str] = []
    assert take_module.clear_staging(out, said.append) == said[0]
    finished = kind == "after"
    assert said == [f"removed 1 staging folder that a killed take left in {out}: {staging} ("
                    + ("its take had finished" if finished else "it had moved nothing" if kind == "copy"
                       else "its take was undone, the report is as it was before it") + ")"]
    if finished:
        assert json.loads((out / "08_b" / "metrics.json").read_text())["tag"] == "new"
        assert sorted(p.name for p in out.iterdir()) == ["07_a", "08_b", "09_c", "README.md", "index.json"]
    else:
        assert _snapshot(out) == before


@pytest.mark.parametrize("kind, at, said", [("copy", 2, "it had moved nothing"),
                                            ("move", 3, "its take was undone, the report is as it was before it")])
def test_the_command_after_a_killed_take_says_what_it_cleared(tmp_path, kind, at, said):
    """The real commands: a take killed while it copies the second notebook, or half way through its
    swap; a re-render then a take, each a new process: the first clears the staging folder in one line,
    the second has nothing to clear."""
    out, run = _two_and_a_store(tmp_path)
    killed = subprocess.run([sys.executable, "-c", _KILLER, str(run), str(out), kind, str(at)],
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    done = _cli("--rerender", str(out))
    assert done.returncode == 0, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"pcnn-explore reproduce: removed 1 staging folder that a killed take left in {out}: "
                           f"{take_module.STAGING_PREFIX}")
    assert line.endswith(f"({said})")
    assert not (out / "07_a").exists() and json.loads((out / "08_b" / "metrics.json").read_text())["tag"] == "old"
    done = _cli("--rerender", str(out), "--take", str(run))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert f"took 07_a, 08_b into {out}" in done.stdout
    assert sorted(p.name for p in out.iterdir()) == ["07_a", "08_b", "09_c", "README.md", "index.html", "index.json"]


def test_only_staging_folders_are_ever_cleared(tmp_path):
    """A folder of another name (a hidden one, an old-style ``.08_b.old``), a file or a link of a staging
    folder's name: left as they are, and nothing said."""
    out = _report(tmp_path / "report", _NB)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "kept.txt").write_text("kept")
    for name in (".git", ".08_b.old", f"{take_module.STAGING_PREFIX}notmine", f"{take_module.STAGING_PREFIX}1-abc"):
        (out / name).mkdir()
        (out / name / "kept.txt").write_text("kept")
    (out / f"{take_module.STAGING_PREFIX}12-0123456789ab").write_text("a file")
    (out / f"{take_module.STAGING_PREFIX}13-0123456789ab").symlink_to(elsewhere, target_is_directory=True)
    before = _snapshot(tmp_path)
    said: list[str] = []
    assert take_module.clear_staging(out, said.append) is None and said == []
    assert _snapshot(tmp_path) == before


def test_one_take_or_rerender_holds_a_report_at_a_time(tmp_path):
    out = _report(tmp_path / "report", _NB)
    run = _report(tmp_path / "run", _NB, tag="new")
    before = _snapshot(out)
    with take_module.report_lock(out):
        with pytest.raises(ValueError, match="is being changed by another pcnn-explore reproduce --rerender"):
            take(run, out)
        with pytest.raises(ValueError, match="is being changed by another"):
            rerender(out)
    assert _snapshot(out) == before
    assert take(run, out) == [_NB]
