"""A report's notebook pages share one stylesheet (:mod:`pcnn_explore.report.styles`): nbconvert's head styles
move, in order, into ``report-<hash>.css`` at the report's root; the rest of each page stays byte for byte;
a style a cell's output emits (in ``<body>``) stays; ``reproduce --compact``, ``--rerender`` and ``--take``
leave pages linking a stylesheet that is on disk."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import nbformat
import pytest

from pcnn_explore import cli
from pcnn_explore.report import take as take_module
from pcnn_explore.report.reproduce import _render_html
from pcnn_explore.report.rerender import rerender, take
from pcnn_explore.report.styles import share_styles
from pcnn_explore.study import metrics_record

_A = "\nbody { color: #111; }\n.jp-Cell { margin: 0; }\n"
_B = ".jp-Output::before { content: '\u2022'; }\n"  # (a non-ASCII character: stored as UTF-8)
_BODY_STYLE = "<style>.mine { color: red; }</style>"


def _page(a: str = _A, b: str = _B, body: str = "<p>text</p>") -> str:
    """A page shaped like nbconvert's: two head style blocks with a script between them (holding a
    ``<style>`` in a string, which is no element), a body with a cell output's own style, CRLF line ends."""
    return ('<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"/>\r\n<title>Notebook</title>\n'
            f'<style type="text/css">{a}</style>\n<script>var s = "<style>x{{}}</style>";</script>\n'
            f'<style>{b}</style>\n</head>\n<body>\r\n{body}\n{_BODY_STYLE}\n</body>\n</html>\n')


def _sheet(*blocks: str) -> str:
    """The name of the stylesheet holding ``blocks``, computed here by hand: sha256 of the blocks joined by newlines."""
    return f"report-{hashlib.sha256(chr(10).join(blocks).encode('utf-8')).hexdigest()[:12]}.css"


def _write(report: Path, name: str, text: str) -> Path:
    (report / name).mkdir(parents=True, exist_ok=True)
    page = report / name / f"{name}.html"
    page.write_bytes(text.encode("utf-8"))
    return page


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))
            if p.is_file()}


def _link(name: str) -> str:
    return f'<link rel="stylesheet" href="../{name}"/>'


def test_head_styles_move_in_order_and_the_rest_of_the_page_stays_byte_for_byte(tmp_path):
    page = _write(tmp_path, "00_a", _page())
    done = share_styles(tmp_path)
    name = _sheet(_A, _B)
    assert (tmp_path / name).read_bytes() == (_A + "\n" + _B).encode("utf-8")  # the blocks' CSS, in order
    want = ('<!DOCTYPE html>\n<html lang="en">\n<head><meta charset="utf-8"/>\r\n<title>Notebook</title>\n'
            f'{_link(name)}\n<script>var s = "<style>x{{}}</style>";</script>\n'
            f'\n</head>\n<body>\r\n<p>text</p>\n{_BODY_STYLE}\n</body>\n</html>\n')
    assert page.read_bytes() == want.encode("utf-8")  # the cell output's style and the CRLF stay
    assert done == {"pages": [page], "written": [tmp_path / name], "removed": []}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["00_a", name]


def test_pages_with_the_same_head_styles_share_one_file_and_other_styles_get_their_own(tmp_path):
    a = _write(tmp_path, "00_a", _page(body="<p>one</p>"))
    b = _write(tmp_path, "01_b", _page(body="<p>two</p>"))
    c = _write(tmp_path, "02_c", _page(b=".other { }\n"))
    share_styles(tmp_path)
    same, other = _sheet(_A, _B), _sheet(_A, ".other { }\n")
    assert same != other
    assert sorted(p.name for p in tmp_path.glob("*.css")) == sorted([same, other])
    assert _link(same) in a.read_text() and _link(same) in b.read_text() and "<p>two</p>" in b.read_text()
    assert _link(other) in c.read_text() and _link(same) not in c.read_text()
    assert (tmp_path / other).read_text(encoding="utf-8") == _A + "\n.other { }\n"


def test_a_second_pass_changes_nothing(tmp_path):
    for name in ("00_a", "01_b"):
        _write(tmp_path, name, _page())
    share_styles(tmp_path)
    before = _snapshot(tmp_path)
    assert share_styles(tmp_path) == {"pages": [], "written": [], "removed": []}
    assert _snapshot(tmp_path) == before  # not one file written again


@pytest.mark.parametrize("text", [
    f"<html><head><title>t</title></head><body><p>x</p>{_BODY_STYLE}</body></html>",  # no head style
    _page(a="a { }", b=_B).replace('<style type="text/css">', '<style type="text/css" media="print">'),
    _page(a="a { background: url(img/x.png); }"),  # a relative url: one folder up it would resolve elsewhere
    _page(a="@import 'x.css';\n"),
    _page().replace("<script>", '<link rel="stylesheet" href="x.css"/><script>'),  # a stylesheet between blocks
    "<style>a { }</style><p>no head ends</p>",
])
def test_a_page_whose_styles_cannot_move_as_they_are_is_left_alone(tmp_path, text):
    page = _write(tmp_path, "00_a", text)
    before = _snapshot(tmp_path)
    assert share_styles(tmp_path) == {"pages": [], "written": [], "removed": []}
    assert _snapshot(tmp_path) == before and page.read_bytes() == text.encode("utf-8")


@pytest.mark.parametrize("css", ["a { background: url('data:image/svg+xml;base64,PHN2Zz4='); }",
                                 'a { background: url( "https://example.org/x.png" ); }',
                                 "a { background: url(/x.png); } b { mask: url(#m); }"])
def test_urls_that_resolve_the_same_from_the_root_move(tmp_path, css):
    page = _write(tmp_path, "00_a", _page(a=css))
    share_styles(tmp_path)
    assert _link(_sheet(css, _B)) in page.read_text() and (tmp_path / _sheet(css, _B)).is_file()


def test_a_page_that_is_not_utf8_is_left_alone_and_keeps_the_stylesheet_it_links(tmp_path):
    name = _sheet("a { }")
    (tmp_path / name).write_text("a { }")
    page = _write(tmp_path, "00_a", "")
    data = f'<html><head>{_link(name)}</head><body>caf\xe9</body></html>'.encode("latin-1")
    page.write_bytes(data)
    assert share_styles(tmp_path) == {"pages": [], "written": [], "removed": []}
    assert page.read_bytes() == data and (tmp_path / name).read_text() == "a { }"


def test_a_page_already_linked_is_left_alone_and_keeps_its_stylesheet(tmp_path):
    name = _sheet("a { }")
    (tmp_path / name).write_text("a { }")
    text = f'<html><head>{_link(name)}<style>b {{ }}</style></head><body></body></html>'
    page = _write(tmp_path, "00_a", text)
    before = _snapshot(tmp_path)
    assert share_styles(tmp_path)["pages"] == []
    assert _snapshot(tmp_path) == before and page.read_bytes() == text.encode("utf-8")


def test_stylesheets_no_page_links_are_removed_and_nothing_else(tmp_path):
    _write(tmp_path, "00_a", _page())
    _write(tmp_path, "01_b", _page())
    share_styles(tmp_path)
    old = _sheet(_A, _B)
    stale = tmp_path / "report-0123456789ab.css"
    stale.write_text("x { }")
    kept = ["report-notes.css", "report-0123456789AB.css", "report-0123456789ab.css.bak", "style.css"]
    for name in kept:
        (tmp_path / name).write_text("kept")
    (tmp_path / "00_a" / "report-0123456789ab.css").write_text("kept, not in the root")
    assert share_styles(tmp_path)["removed"] == [stale]
    assert not stale.exists() and (tmp_path / old).is_file()  # still linked by both pages
    assert all((tmp_path / n).read_text() == "kept" for n in kept) and (tmp_path / "00_a" / stale.name).is_file()
    # a page rendered again by another nbconvert: its styles get their own file; the old one stays while linked
    _write(tmp_path, "00_a", _page(a="new { }"))
    share_styles(tmp_path)
    assert (tmp_path / old).is_file() and (tmp_path / _sheet("new { }", _B)).is_file()
    _write(tmp_path, "01_b", _page(a="new { }"))
    assert share_styles(tmp_path)["removed"] == [tmp_path / old]
    assert sorted(p.name for p in tmp_path.glob("*.css")) == sorted([_sheet("new { }", _B), *kept[:2], "style.css"])


def test_index_links_and_hidden_folders_are_not_notebook_pages(tmp_path):
    index = tmp_path / "index.html"
    index.write_text(_page())  # the report's own page: its style is its own
    _write(tmp_path, ".pcnn-explore-take-1-0123456789ab", _page())  # a take's staging folder
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    _write(elsewhere, "00_a", _page())
    (tmp_path / "00_a").symlink_to(elsewhere / "00_a", target_is_directory=True)
    before, outside = _snapshot(tmp_path), _snapshot(elsewhere)
    assert share_styles(tmp_path) == {"pages": [], "written": [], "removed": []}
    assert _snapshot(tmp_path) == before and _snapshot(elsewhere) == outside


def test_a_real_nbconvert_page_links_a_file_holding_the_css_it_embedded(tmp_path):
    """reproduce's own rendering (nbconvert's HTMLExporter) of a one-cell notebook whose output emits a style."""
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("display(HTML(...))", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": f"{_BODY_STYLE}<b>out</b>"})]
    nb.cells = [cell]
    executed = tmp_path / "00_one.ipynb"
    nbformat.write(nb, executed)
    (tmp_path / "report" / "00_one").mkdir(parents=True)
    page = _render_html(executed, tmp_path / "report" / "00_one" / "00_one.html")
    text = page.read_text(encoding="utf-8")
    head = text[:text.index("</head>")]
    embedded = re.findall(r"<style[^>]*>(.*?)</style>", head, re.S)  # (read here by a plain pattern)
    assert len("".join(embedded)) > 100_000 and _BODY_STYLE in text[len(head):]
    share_styles(tmp_path / "report")
    new = page.read_text(encoding="utf-8")
    (href,) = re.findall(r'<link rel="stylesheet" href="([^"]+)"/>', new)
    assert (page.parent / href).resolve().read_text(encoding="utf-8") == "\n".join(embedded)
    assert href == "../" + _sheet(*embedded) and "<style" not in new[:new.index("</head>")]
    # the page is the one nbconvert wrote, its head's style elements gone and the link in place of the first
    without = re.sub(r"<style[^>]*>.*?</style>", "", head, flags=re.S) + text[len(head):]
    assert new.replace(_link(href[3:]), "", 1) == without
    assert _BODY_STYLE in new


# --- the call sites: reproduce --compact, --rerender, --take ---------------------------------------------------

def _metrics_folder(folder: Path, page: str) -> None:
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps({"profile": "study", **metrics_record([])}))
    (folder / f"{folder.name}.html").write_text(page, encoding="utf-8")


def _record(name: str) -> dict:
    return {"name": name, "status": "ok", "seconds": 1.0, "error": None, "failed_cell": None,
            "html": f"{name}/{name}.html", "output_dir": name, "profile": "study", "commit": "a"}


def _report(folder: Path, pages: dict[str, str]) -> Path:
    for name, page in pages.items():
        _metrics_folder(folder / name, page)
    (folder / "index.json").write_text(json.dumps({"profile": "study", "notebooks": [_record(n) for n in pages]}))
    return folder


def test_rerender_shares_the_styles_of_a_report(tmp_path):
    out = _report(tmp_path / "report", {"98_a": _page(), "99_b": _page(body="<p>b</p>")})
    assert rerender(out) == []
    name = _sheet(_A, _B)
    assert (out / name).read_text(encoding="utf-8") == _A + "\n" + _B
    assert all(_link(name) in (out / n / f"{n}.html").read_text() for n in ("98_a", "99_b"))
    assert "<style>" in (out / "index.html").read_text()  # the index keeps its own small style


def test_a_compact_run_taken_in_brings_its_stylesheet_and_the_report_shares_one(tmp_path):
    """A run whose pages link its own root's stylesheet (reproduce --compact): taken into a report that lacks
    that file, the file comes too (before the page), and after the re-render every page links one on disk."""
    out = _report(tmp_path / "report", {"98_a": _page(), "99_b": _page()})
    rerender(out)
    run = _report(tmp_path / "run", {"99_b": _page(a="newer { }")})
    share_styles(run)
    theirs = _sheet("newer { }", _B)
    assert _link(theirs) in (run / "99_b" / "99_b.html").read_text()
    assert take(run, out) == ["99_b"]
    assert (out / theirs).read_bytes() == (run / theirs).read_bytes()
    rerender(out)
    for n in ("98_a", "99_b"):
        (href,) = re.findall(r'href="\.\./(report-[0-9a-f]{12}\.css)"', (out / n / f"{n}.html").read_text())
        assert (out / href).is_file()
    assert sorted(p.name for p in out.glob("*.css")) == sorted([_sheet(_A, _B), theirs])


def test_a_take_whose_page_links_a_missing_stylesheet_is_refused_before_anything_moves(tmp_path):
    out = _report(tmp_path / "report", {"99_b": _page()})
    run = _report(tmp_path / "run", {"99_b": _page(a="newer { }")})
    share_styles(run)
    (run / _sheet("newer { }", _B)).unlink()
    before = _snapshot(out)
    with pytest.raises(ValueError, match=r"99_b\.html links the stylesheet .*report-[0-9a-f]{12}\.css, which is "
                                         r"missing: put the run's stylesheet back"):
        take(run, out)
    assert _snapshot(out) == before


def test_a_take_undone_removes_the_stylesheet_it_brought(tmp_path, monkeypatch):
    out = _report(tmp_path / "report", {"99_b": _page()})
    run = _report(tmp_path / "run", {"99_b": _page(a="newer { }")})
    share_styles(run)
    before = _snapshot(out)
    real_move = take_module._move

    def failing(src, dst):
        if Path(src).name == "index.json":
            raise OSError("disk full")
        real_move(src, dst)

    monkeypatch.setattr(take_module, "_move", failing)
    with pytest.raises(OSError, match="disk full"):
        take(run, out)
    assert _snapshot(out) == before  # the report as it was: no stylesheet left that no page links


def _tiny_notebook(*cells: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "study"\noutput_dir = "x"')
    params.metadata["tags"] = ["parameters"]
    metrics = ('import json, pathlib\n(pathlib.Path(output_dir) / "metrics.json").write_text('
               'json.dumps({"profile": profile}))')
    nb.cells = [params, *(nbformat.v4.new_code_cell(c) for c in (*cells, metrics))]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def test_reproduce_compact_writes_pages_that_share_one_stylesheet(tmp_path):
    """The real command: two notebooks run by papermill, rendered by nbconvert, compacted; one emits a style."""
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(_tiny_notebook(f"from IPython.display import HTML\nHTML({_BODY_STYLE!r})"),
                   notebooks / "01_first.ipynb")
    nbformat.write(_tiny_notebook("x = 1"), notebooks / "02_second.ipynb")
    out = tmp_path / "out"
    assert cli.main(["reproduce", "--profile", "smoke", "--notebooks", str(notebooks), "--out", str(out),
                     "--compact"]) == 0
    (sheet,) = out.glob("report-*.css")
    for stem in ("01_first", "02_second"):
        text = (out / stem / f"{stem}.html").read_text(encoding="utf-8")
        head, body = text.split("</head>", 1)
        assert re.findall(r"<link[^>]*stylesheet[^>]*>", head) == [_link(sheet.name)] and "<style" not in head
        assert (_BODY_STYLE in body) == (stem == "01_first")
    assert len(sheet.read_text(encoding="utf-8")) > 100_000
    assert sheet.name == _sheet(sheet.read_text(encoding="utf-8"))
