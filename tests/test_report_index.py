"""The reproduce index says at a glance what reproduced: coloured verdicts, the smoke banner,
thumbnails of each notebook's main figure linking to its HTML, HTML tables, and ``--only`` merging
into an existing index (a fake notebook folder; kernels run the tiny notebooks)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from pcnn_explore import cli
from pcnn_explore.report.index import main_figure, verdict_word
from pcnn_explore.report.reproduce import NotebookResult, write_index

_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def _notebook(verdict: str, figures: tuple[str, ...], main: str | None = None) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "study"\noutput_dir = "output/x"')
    params.metadata["tags"] = ["parameters"]
    body = f"""
import base64, json, pathlib
d = pathlib.Path(output_dir); d.mkdir(parents=True, exist_ok=True)
for name in {list(figures)!r}:
    (d / name).write_bytes(base64.b64decode({_PNG!r}))
m = {{"profile": profile, "summary": {{"loss_nats": 2.5, "verdict": {verdict!r}}},
     "paper": {{"loss_nats": "about 2", "verdict": "the paper's claim"}}}}
if {main!r}:
    m["main_figure"] = {main!r}
(d / "metrics.json").write_text(json.dumps(m))
"""
    nb.cells = [params, nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("notebooks")
    nbformat.write(_notebook("agrees: A below B (1.0 < 2.0)", ("b.png", "a.png"), main="b.png"), root / "01_one.ipynb")
    nbformat.write(_notebook("differs: A above B", ("z.png", "c.png")), root / "02_two.ipynb")
    nbformat.write(_notebook("partly: one of two", ()), root / "03_three.ipynb")
    return root


def _overview(page: str) -> str:
    return page.split('<table class="overview">', 1)[1].split("</table>", 1)[0]


@pytest.fixture(scope="module")
def study_run(notebooks, tmp_path_factory):
    out = tmp_path_factory.mktemp("study")
    assert cli.main(["reproduce", "--profile", "study", "--notebooks", str(notebooks), "--out", str(out)]) == 0
    return out


def test_study_index_shows_coloured_verdicts_and_no_banner(study_run):
    page = (study_run / "index.html").read_text()
    overview = _overview(page)
    rows = overview.split("<tr>")[2:]
    assert [re.search(r'class="badge"[^>]*>([^<]+)<', r).group(1) for r in rows] == ["agrees", "differs", "partly"]
    assert "#1a7f37" in rows[0] and "#c62828" in rows[1] and "#b7791f" in rows[2]
    assert "the paper&#x27;s claim" in rows[0]
    assert "Smoke profile" not in page


def test_thumbnails_are_the_main_figure_and_link_to_the_notebook(study_run):
    rows = _overview((study_run / "index.html").read_text()).split("<tr>")[2:]
    # main_figure named in metrics.json; else the first PNG by name; none when there is none
    assert '<a href="01_one/01_one.html"><img class="thumb" src="01_one/b.png"' in rows[0]
    assert '<a href="02_two/02_two.html"><img class="thumb" src="02_two/c.png"' in rows[1]
    assert "<img" not in rows[2]
    assert (study_run / "01_one" / "b.png").is_file()


def test_numbers_are_html_tables(study_run):
    page = (study_run / "index.html").read_text()
    section = page.split('<section id="01_one">', 1)[1].split("</section>", 1)[0]
    assert "<tr><td>loss_nats</td><td>2.5</td><td>about 2</td></tr>" in section
    assert "agrees: A below B (1.0 &lt; 2.0)" in section


def test_only_merges_into_the_existing_index(notebooks, study_run):
    before = json.loads((study_run / "index.json").read_text())
    assert [r["name"] for r in before["notebooks"]] == ["01_one", "02_two", "03_three"]
    assert cli.main(["reproduce", "--profile", "study", "--notebooks", str(notebooks), "--out", str(study_run),
                     "--only", "02"]) == 0
    after = json.loads((study_run / "index.json").read_text())
    assert [r["name"] for r in after["notebooks"]] == ["01_one", "02_two", "03_three"]
    assert after["notebooks"][0] == before["notebooks"][0]  # not run again: kept as it was
    assert after["notebooks"][1]["seconds"] != before["notebooks"][1]["seconds"]
    page = (study_run / "index.html").read_text()
    assert "3 of 3 notebooks succeeded" in page and "01_one/01_one.html" in page


def test_smoke_index_has_a_banner_and_no_verdict_on_the_paper(notebooks, tmp_path):
    assert cli.main(["reproduce", "--notebooks", str(notebooks), "--out", str(tmp_path), "--only", "01"]) == 0
    page = (tmp_path / "index.html").read_text()
    assert "Smoke profile: a plumbing check." in page and "numbers mean nothing" in page
    rows = _overview(page).split("<tr>")[2:]
    assert len(rows) == 1 and ">not testable at this profile<" in rows[0]  # whatever the notebook says


def test_verdict_word_and_main_figure_rules(tmp_path):
    assert verdict_word({"profile": "study", "summary": {"verdict": "Partly: x"}}) == "partly"
    assert verdict_word({"profile": "study", "summary": {"verdict": "not testable at this profile: y"}}) \
        == "not testable at this profile"
    assert verdict_word({"profile": "study", "summary": {"verdict": "similar losses"}}) == "no verdict"
    assert verdict_word({"profile": "smoke", "summary": {"verdict": "agrees: z"}}) == "not testable at this profile"
    assert verdict_word(None, status="failed") == "failed"
    assert main_figure(tmp_path, {"main_figure": "missing.png"}) is None
    (tmp_path / "b.png").write_bytes(b"x")
    assert main_figure(tmp_path, {"main_figure": "missing.png"}) == tmp_path / "b.png"


def test_write_index_without_merge_keeps_only_the_results(tmp_path):
    def result(name):
        d = tmp_path / name
        d.mkdir()
        (d / "metrics.json").write_text(json.dumps({"profile": "paper", "summary": {"verdict": "agrees: ok"}}))
        return NotebookResult(name=name, status="ok", seconds=1.0, output_dir=d, executed=d / "x.ipynb",
                              html=None, metrics={"profile": "paper"})

    write_index([result("01_a")], tmp_path, "paper")
    write_index([result("02_b")], tmp_path, "paper")
    assert [r["name"] for r in json.loads((tmp_path / "index.json").read_text())["notebooks"]] == ["01_a", "02_b"]
    write_index([result("03_c")], tmp_path, "paper", merge=False)
    assert [r["name"] for r in json.loads((tmp_path / "index.json").read_text())["notebooks"]] == ["03_c"]


def test_inconclusive_is_a_verdict_with_its_own_colour(tmp_path):
    from pcnn_explore.verdicts import VERDICT_COLOURS

    assert verdict_word({"profile": "study", "summary": {"verdict": "Inconclusive: [-0.2, 0.4]"}}) == "inconclusive"
    d = tmp_path / "07_x"
    d.mkdir()
    (d / "metrics.json").write_text(json.dumps({"profile": "study", "summary": {"verdict": "inconclusive: wide"}}))
    write_index([NotebookResult(name="07_x", status="ok", seconds=1.0, output_dir=d, executed=d / "x.ipynb",
                                html=None, metrics={"profile": "study"})], tmp_path, "study")
    row = _overview((tmp_path / "index.html").read_text()).split("<tr>")[2]
    assert re.search(r'class="badge"[^>]*>([^<]+)<', row).group(1) == "inconclusive"
    colour = VERDICT_COLOURS["inconclusive"]
    assert colour in row and colour not in {VERDICT_COLOURS[w] for w in VERDICT_COLOURS if w != "inconclusive"}
