"""`pcnn-explore reproduce` on a tiny fake notebook folder (one notebook fails)."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from pcnn_explore import cli
from pcnn_explore import resources
from pcnn_explore.report.reproduce import DEFAULT_NOTEBOOKS, find_notebooks, reproduce


def _notebook(*cells: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "study"\noutput_dir = "output/x"')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, *(nbformat.v4.new_code_cell(c) for c in cells)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


_WRITE_METRICS = """
import json, pathlib
d = pathlib.Path(output_dir); d.mkdir(parents=True, exist_ok=True)
(d / "metrics.json").write_text(json.dumps({"profile": profile, "summary": {"loss_nats": %s, "label": "<b>"},
                                            "paper": {"loss_nats": "about 1.5", "only_paper": "a claim"}}))
"""


_WRITE_RELATIVE = 'open("relative.txt", "w").write("written in the working directory")'


@pytest.fixture(scope="module")
def fake_notebooks(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("notebooks")
    nbformat.write(_notebook("x = 1", _WRITE_METRICS % "1.25", _WRITE_RELATIVE), root / "01_first.ipynb")
    nbformat.write(_notebook("x = 1", "y = 2", "raise ValueError('deliberate failure')"), root / "02_broken.ipynb")
    nbformat.write(_notebook(_WRITE_METRICS % "3.5"), root / "03_third.ipynb")
    (root / "README.md").write_text("not a notebook")
    nbformat.write(_notebook("x = 1"), root / "scratch.ipynb")  # not NN_*: ignored
    return root


@pytest.fixture(scope="module")
def full_run(fake_notebooks, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    status = cli.main(["reproduce", "--profile", "smoke", "--notebooks", str(fake_notebooks),
                       "--out", str(out)])
    return status, out


def test_failure_makes_the_exit_status_non_zero(full_run):
    status, _ = full_run
    assert status == 1


def test_every_notebook_leaves_executed_notebook_html_and_metrics(full_run):
    _, out = full_run
    for stem in ("01_first", "02_broken", "03_third"):
        assert (out / stem / f"{stem}.ipynb").is_file()
        assert (out / stem / f"{stem}.html").is_file()
    assert json.loads((out / "01_first" / "metrics.json").read_text())["profile"] == "smoke"
    assert json.loads((out / "03_third" / "metrics.json").read_text())["summary"]["loss_nats"] == 3.5
    assert not (out / "02_broken" / "metrics.json").exists()
    executed = nbformat.read(out / "01_first" / "01_first.ipynb", as_version=4)
    injected = "".join(c.source for c in executed.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert "profile = \"smoke\"" in injected and 'output_dir = "."' in injected
    # no path of the machine that ran it, in the executed notebook, its HTML or its metrics.json
    for stem in ("01_first", "03_third"):
        for f in (f"{stem}.ipynb", f"{stem}.html", "metrics.json"):
            assert str(out.resolve()) not in (out / stem / f).read_text(), (stem, f)


def test_notebooks_run_in_their_output_directory(full_run, fake_notebooks):
    _, out = full_run
    assert (out / "01_first" / "relative.txt").is_file()  # a relative path lands in OUT/<stem>/
    assert sorted(p.name for p in fake_notebooks.iterdir()) == [
        "01_first.ipynb", "02_broken.ipynb", "03_third.ipynb", "README.md", "scratch.ipynb"]


def test_the_default_notebooks_are_the_package_data():
    assert DEFAULT_NOTEBOOKS == resources.notebooks_dir()
    names = [p.name for p in find_notebooks()]
    # every NN_*.ipynb the package ships, in order, none left out (counted, not a pasted number)
    shipped = sorted(p.name for p in resources.notebooks_dir().glob("[0-9][0-9]_*.ipynb"))
    assert names == shipped and len(names) >= 14
    assert names[0] == "00_pseudo_counts.ipynb" and "12_exploration_on_a_laptop.ipynb" in names
    assert names[-1] == "14_deep_sea_scaling.ipynb"
    assert [int(n[:2]) for n in names] == list(range(len(names)))


def test_output_carries_no_kernel_noise(fake_notebooks, tmp_path, capfd):
    """The kernel talks to papermill encrypted (no "running over TCP without encryption" warning)
    and is shut down without a SIGINT (no "KeyboardInterrupt caught in kernel")."""
    status = cli.main(["reproduce", "--notebooks", str(fake_notebooks), "--out", str(tmp_path), "--only", "01"])
    out, err = capfd.readouterr()
    assert status == 0
    assert "1/1 notebooks ok" in out
    for noise in ("without encryption", "KeyboardInterrupt", "Traceback"):
        assert noise not in out + err, noise


def test_index_lists_every_notebook_with_status_and_figures(full_run):
    _, out = full_run
    page = (out / "index.html").read_text()
    for stem in ("01_first", "02_broken", "03_third"):
        assert f'href="{stem}/{stem}.html"' in page
    assert page.count('class="ok"') == 2 and page.count('class="failed"') == 1
    assert "2 of 3 notebooks succeeded" in page
    # values and the paper's numbers shown; names as words ("only_paper" -> "only, paper"), never identifiers
    assert "1.25" in page and "3.5" in page and "about 1.5" in page and "only, paper" in page and "only_paper" not in page
    assert "&lt;b&gt;" in page and "<b>" not in page  # values are escaped
    assert "02_broken.ipynb: cell [5] raised ValueError: deliberate failure" in page


def test_failure_names_notebook_and_cell(fake_notebooks, tmp_path):
    results = reproduce("smoke", notebooks_dir=fake_notebooks, out=tmp_path, progress=False)
    assert [r.name for r in results] == ["01_first", "02_broken", "03_third"]
    assert [r.status for r in results] == ["ok", "failed", "ok"]
    broken = results[1]
    # cell [1] is the parameters cell, [2] the injected parameters, then x = 1, y = 2, raise
    assert broken.failed_cell == 5
    assert broken.error.startswith("02_broken.ipynb: cell [")
    assert "ValueError: deliberate failure" in broken.error
    assert results[0].metrics["summary"]["loss_nats"] == 1.25 and results[0].seconds > 0


def test_only_filters_by_substring_and_glob(fake_notebooks, tmp_path, capsys):
    status = cli.main(["reproduce", "--notebooks", str(fake_notebooks), "--out", str(tmp_path), "--only", "03"])
    assert status == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["03_third"]
    assert [p.name for p in find_notebooks(fake_notebooks, "0[13]_*")] == ["01_first.ipynb", "03_third.ipynb"]
    assert [p.name for p in find_notebooks(fake_notebooks)] == ["01_first.ipynb", "02_broken.ipynb", "03_third.ipynb"]


def test_nothing_found_is_a_clear_error(tmp_path, capsys):
    assert cli.main(["reproduce", "--notebooks", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "no notebooks named NN_*.ipynb" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError, match="does not exist"):
        find_notebooks(tmp_path / "missing")
    assert not (tmp_path / "o").exists()


def test_bad_arguments_fail_before_running(fake_notebooks, tmp_path):
    with pytest.raises(FileNotFoundError, match="matches --only"):
        reproduce("smoke", only="99", notebooks_dir=fake_notebooks, out=tmp_path / "o")
    with pytest.raises(ValueError, match="unknown profile"):
        reproduce("huge", notebooks_dir=fake_notebooks, out=tmp_path / "o")
    with pytest.raises(ValueError, match="no Jupyter kernel"):
        reproduce("smoke", notebooks_dir=fake_notebooks, out=tmp_path / "o", kernel_name="no-such-kernel")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        reproduce("smoke", notebooks_dir=fake_notebooks, out=tmp_path / "file")
    assert not (tmp_path / "o").exists()


def test_the_old_import_path_is_gone_and_the_report_package_has_the_names():
    import importlib

    from pcnn_explore import report
    from pcnn_explore.report import metrics
    from pcnn_explore.report import reproduce as new
    from pcnn_explore.report.reproduce import NotebookResult, reproduce as run

    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("pcnn_explore.reproduce")
    assert run is new.reproduce and NotebookResult is new.NotebookResult
    assert (report.write_metrics, report.read_metrics, report.paper_vs_run) == \
        (metrics.write_metrics, metrics.read_metrics, metrics.paper_vs_run)
    assert cli.COMMANDS["reproduce"][0] == "pcnn_explore.report.reproduce"
