"""The reproduce index says at a glance what reproduced: coloured verdicts, the smoke banner,
thumbnails of each notebook's main figure linking to its HTML, HTML tables, and ``--only`` merging
into an existing index (a fake notebook folder; kernels run the tiny notebooks)."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import nbformat
import pytest

from pcnn_explore import cli
from pcnn_explore.report.index import main_figure, notebook_verdict, verdict_word
from pcnn_explore.report.reproduce import NotebookResult, write_index
from pcnn_explore.study import Claim, Decision, metrics_record
from pcnn_explore.verdicts import VERDICT_COLOURS, VERDICTS

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
m = {{"profile": profile, "schema": 1, "claims": [], "word": {verdict!r}, "kit_word": None, "summary": {{"loss_nats": 2.5}},
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


def _word(word: str) -> dict:
    """metrics.json's claims record holding no claim, with the notebook word ``word``."""
    return {"schema": 1, "claims": [], "word": word, "kit_word": None}


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
    assert "the paper's claim" in rows[0]
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
    assert "<tr><td>loss (nats)</td><td>2.5</td><td>about 2</td></tr>" in section
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
    assert len(rows) == 1 and ">not testable<" in rows[0]  # whatever the notebook says


def test_verdict_word_and_main_figure_rules(tmp_path):
    assert verdict_word({"profile": "study", **_word("Partly: x")}) == "partly"
    assert verdict_word({"profile": "study", **_word("not testable at this profile: y")}) \
        == "not testable"  # the word before 0.3 reads as the one word now
    assert verdict_word({"profile": "study", **_word("not testable: the lines do not move")}) \
        == "not testable"
    assert verdict_word({"profile": "study", **_word("similar losses")}) == "no verdict"
    assert verdict_word({"profile": "smoke", **_word("agrees: z")}) == "not testable"
    assert verdict_word(None, status="failed") == "failed"
    assert main_figure(tmp_path, {"main_figure": "missing.png"}) is None
    (tmp_path / "b.png").write_bytes(b"x")
    assert main_figure(tmp_path, {"main_figure": "missing.png"}) == tmp_path / "b.png"


def test_write_index_without_merge_keeps_only_the_results(tmp_path):
    def result(name):
        d = tmp_path / name
        d.mkdir()
        (d / "metrics.json").write_text(json.dumps({"profile": "paper", **_word("agrees: ok")}))
        return NotebookResult(name=name, status="ok", seconds=1.0, output_dir=d, executed=d / "x.ipynb",
                              html=None, metrics={"profile": "paper"})

    write_index([result("01_a")], tmp_path, "paper")
    write_index([result("02_b")], tmp_path, "paper")
    assert [r["name"] for r in json.loads((tmp_path / "index.json").read_text())["notebooks"]] == ["01_a", "02_b"]
    write_index([result("03_c")], tmp_path, "paper", merge=False)
    assert [r["name"] for r in json.loads((tmp_path / "index.json").read_text())["notebooks"]] == ["03_c"]


def test_inconclusive_is_a_verdict_with_its_own_colour(tmp_path):
    from pcnn_explore.verdicts import VERDICT_COLOURS, VERDICTS

    assert verdict_word({"profile": "study", **_word("Inconclusive: [-0.2, 0.4]")}) == "inconclusive"
    d = tmp_path / "07_x"
    d.mkdir()
    (d / "metrics.json").write_text(json.dumps({"profile": "study", **_word("inconclusive: wide")}))
    write_index([NotebookResult(name="07_x", status="ok", seconds=1.0, output_dir=d, executed=d / "x.ipynb",
                                html=None, metrics={"profile": "study"})], tmp_path, "study")
    row = _overview((tmp_path / "index.html").read_text()).split("<tr>")[2]
    assert re.search(r'class="badge"[^>]*>([^<]+)<', row).group(1) == "inconclusive"
    colour = VERDICT_COLOURS["inconclusive"]
    assert colour in row and colour not in {VERDICT_COLOURS[w] for w in VERDICT_COLOURS if w != "inconclusive"}

    # the page lists every verdict word in its colour, inconclusive among them, whichever words occur
    write_index([], tmp_path / "empty", "study", merge=False)
    legend = (tmp_path / "empty" / "index.html").read_text().split('<p class="legend">', 1)[1].split("</p>", 1)[0]
    assert re.findall(r'background:(#[0-9a-f]{6})">([^<]+)<', legend) == [(VERDICT_COLOURS[w], w) for w in VERDICTS]


# ------------------------------------------------------------------ the page read in full
_NESTED = {
    "profile": "study",
    "summary": {"loss_nats": 0.123456, "frames": 12000, "seeds": [0, 2, 4], "solved": True, "holds": False,
                "largest_separated": None, "per_seed": [1.5, None, 2.5], "nothing": [],
                "lines": ["DeepSea, N at least 20: the bonus agents reach the goal late in every seed",
                          "kit: the position-biased PixelCNN ranks cells by visits"],
                "goals": {"coverage": {"holds": False, "ratios": {"cts_mmc_intrinsic": 1.21}},
                          "deep_sea": {"detail": {"5": {"dqn": "1 of 1 seeds", "cts_mmc": "0 of 1 seeds"}},
                                       "sizes": [], "word": None, "matrix": [[1, 2], [3, 4]]}}},
    **metrics_record([
        Decision(Claim("00_x", "deep_sea", "paper", "the bonus makes DQN reach DeepSea's +1 where DQN does not", "fisher"),
                 "agrees", "agrees: 3 of 3 seeds against 0 of 3", "fisher"),
        Decision(Claim("00_x", "coverage", "kit", "on the egocentric task intrinsic-only agents visit twice DQN's cells",
                       "reading"), "no verdict", "a reading with no test: holds", "reading")]),
    "word": "VERDICT",
    "paper": {"loss_nats": "about 0.1", "frames": 10000, "goals": {"coverage": {"holds": "yes, 2x the cells"}},
              "mmc_beta": 0.1, "verdict": "the paper says so"},
    "atari": {"summary": {"dqn_auc": 0.5, "verdict": "partly: one of two games"},
              "paper": {"dqn_auc": "far behind", "verdict": "the Atari claim"}},
}


def _result(out, name, metrics, status="ok", error=None):
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "metrics.json").write_text(json.dumps(metrics))
    return NotebookResult(name=name, status=status, seconds=1.0, output_dir=d, executed=d / "x.ipynb", html=None,
                          metrics=metrics, error=error)


def _body(page: str) -> str:
    """The page without its style sheet (CSS has braces of its own)."""
    return re.sub(r"<style>.*?</style>", "", page, flags=re.S)


def test_no_json_or_python_text_in_the_index(tmp_path):
    """Nested dicts, lists, bools, None and numbers, under every verdict word: tables and items only."""
    sentences = {"agrees": "agrees over 3 seeds: slope below 1", "partly": "Partly: one of two claims",
                 "differs": "differs: above", "inconclusive": "inconclusive: interval straddles 0",
                 "not testable": "not testable: too few seeds at this profile (one seed)",
                 "no verdict": "similar losses"}
    results = []
    for i, (word, sentence) in enumerate(sentences.items()):
        metrics = json.loads(json.dumps(_NESTED).replace("VERDICT", sentence))
        results.append(_result(tmp_path, f"{i:02d}_{word.split()[0]}", metrics))
    results.append(_result(tmp_path, "06_broken", {}, status="failed", error="06_broken.ipynb: cell 3 raised KeyError"))
    write_index(results, tmp_path, "study")
    page = (tmp_path / "index.html").read_text()
    body = _body(page)
    for raw in ("{", "}", "[", "]", "&quot;", "&#x27;"):
        assert raw not in body, raw
    assert not re.search(r"\b(True|False|None|null|true|false)\b", body)
    badges = re.findall(r'class="badge"[^>]*>([^<]+)<', _overview(page))
    assert badges == [*sentences, "failed"]
    for word, colour in VERDICT_COLOURS.items():
        assert f'style="background:{colour}">{word}</span>' in page
    section = body.split('<section id="00_agrees">', 1)[1].split("</section>", 1)[0]
    for cells in ("<td>loss (nats)</td><td>0.1235</td><td>about 0.1</td>", "<td>frames</td><td>12,000</td><td>10,000</td>",
                  "<td>seeds</td><td>0, 2, 4</td><td></td>", "<td>solved</td><td>yes</td>", "<td>holds</td><td>no</td>",
                  '<td>largest separated</td><td><span class="none">&ndash;</span></td>', "<td>nothing</td><td>none</td>",
                  "<td>MMC mix</td><td></td><td>0.1</td>", "<li>kit: the position-biased PixelCNN ranks cells by visits</li>",
                  "<td>DQN AUC</td><td>0.5</td><td>far behind</td>", '<p class="verdict">partly: one of two games</p>'):
        assert cells in section, cells
    # the findings are claim rows, the kit's marked as the kit's; no sub-table of their internal fields
    claims = section.split('<table class="claims">', 1)[1].split("</table>", 1)[0]
    assert ("<td>the bonus makes DQN reach DeepSea's +1 where DQN does not</td>"
            '<td><span class="badge" style="background:#1a7f37">agrees</span></td>') in claims
    assert claims.index("the kit's own questions") < claims.index('<span class="kit">kit:</span> on the egocentric')
    for internal in ("<th>name</th><th>kind</th><th>answer</th>", "goals / coverage", "1 of 1 seeds", "<td>1</td><td>2</td>"):
        assert internal not in section, internal


def test_a_smoke_notebook_reads_one_verdict_in_its_row_and_its_section(tmp_path):
    """Smoke is never a verdict: a notebook sentence starting with "agrees" is kept as its reading,
    after the one word shown in the overview and in the section alike (03 said "not testable" in
    the overview and "agrees" in its section)."""
    m = {"profile": "smoke", **_word("agrees: best named - best other = -5 nats"), "summary": {"best": "constant"},
         "paper": {"verdict": "lowest loss: constant 1e-3"}}
    write_index([_result(tmp_path, "03_lr", m)], tmp_path, "smoke")
    page = (tmp_path / "index.html").read_text()
    row = _overview(page).split("<tr>")[2]
    section = page.split('<section id="03_lr">', 1)[1]
    expected = ("not testable: too few seeds at this profile (smoke runs check the plumbing only) (the notebook's "
                "reading, not a verdict: agrees: best named - best other = -5 nats)")
    assert ('<p class="verdict">not testable: too few seeds at this profile (smoke runs check the plumbing only)</p>'
            in section)
    assert "The notebook's reading (not a verdict): best named - best other = -5 nats" in section
    assert ">not testable</span>" in row and ">not testable</span>" in section
    assert "agrees" not in row and "agrees" not in section
    assert notebook_verdict(m) == ("not testable", expected)
    assert notebook_verdict({"profile": "study", **_word("agreesome")}) == ("no verdict", "agreesome")
    assert notebook_verdict(None, "failed", "cell 2 raised") == ("failed", "cell 2 raised")


def test_the_banner_keeps_the_command_on_one_line(tmp_path):
    write_index([_result(tmp_path, "01_a", {"profile": "smoke", **_word("not testable")})],
                tmp_path, "smoke")
    page = (tmp_path / "index.html").read_text()
    banner = page.split('<div class="banner">', 1)[1].split("</div>", 1)[0]
    assert "<code>pcnn-explore reproduce --profile study</code>" in banner
    style = page.split("<style>", 1)[1].split("</style>", 1)[0]
    assert re.search(r"(^|[\s}])code\s*\{[^}]*white-space:\s*nowrap", style)  # no line break at its hyphens


# ------------------------------------------------------------------ what a reader sees
_IDENTIFIER = re.compile(r"\b[a-z0-9]+(?:_[a-z0-9]+){2,}\b")
_SMOKE = Path(__file__).parent / "data" / "report_index_smoke"  # every notebook's metrics.json of a smoke run
_OTHER_WORDS = [w for w in VERDICTS if w != "not testable"]


def _visible(page: str) -> str:
    """What a reader reads: the body's text without tags; <code> (the notebook file names) left out."""
    body = re.sub(r"<code>.*?</code>", " ", _body(page), flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def _index_of(tmp_path, metrics_by_name: dict, profile: str) -> str:
    write_index([_result(tmp_path, name, m) for name, m in metrics_by_name.items()], tmp_path, profile)
    return (tmp_path / "index.html").read_text()


def _smoke_metrics() -> dict:
    return {p.stem: json.loads(p.read_text()) for p in sorted(_SMOKE.glob("*.json"))}


def _study_like() -> dict:
    """Study-profile metrics of every shape the notebooks write, with their internal names."""
    smoke = _smoke_metrics()
    out = {}
    def agrees(r: dict) -> dict:  # a record's "not testable" read as "agrees", its claim as declared
        r = {**r, "readings": [[k, agrees(x)] for k, x in r.get("readings") or []]}
        if r["word"] == "not testable":
            r.update(word="agrees", reason="", why="", sentence="agrees" + r["sentence"][len("not testable"):])
        return r

    for name, m in smoke.items():
        m = {**m, "profile": "study", "claims": [agrees(r) for r in m["claims"]]}
        m["word"] = "agrees" + m["word"][len("not testable"):] if m["word"].startswith("not testable") else m["word"]
        out[name] = m
    out["03_lr_schedules"]["claims"][0]["word"] = "inconclusive"
    out["03_lr_schedules"]["word"] = "partly over 3 seeds: " + out["03_lr_schedules"]["word"]
    return out


@pytest.mark.parametrize("which", ["smoke", "study"])
def test_the_index_shows_words_never_identifiers(tmp_path, which):
    metrics = _smoke_metrics() if which == "smoke" else _study_like()
    assert len(metrics) == 15
    page = _index_of(tmp_path, metrics, which)
    text = _visible(page)
    assert not _IDENTIFIER.findall(text), sorted(set(_IDENTIFIER.findall(text)))
    for name in ("final loss, constant 1e-3 (nats), per seed", "CTS repeat count slope, per seed"):
        assert name in text, name
    # every notebook that records a finding shows it as claim rows, 12 and 13 among them
    for name in ("12_exploration_on_a_laptop", "13_reactor"):
        section = page.split(f'<section id="{name}">', 1)[1].split("</section>", 1)[0]
        assert section.count("<tr><td>") >= 3 and "no finding recorded" not in section


def test_a_not_testable_claim_row_carries_no_other_verdict_word(tmp_path):
    page = _index_of(tmp_path, _smoke_metrics(), "smoke")
    rows = [r for t in re.findall(r'<table class="claims">(.*?)</table>', page, flags=re.S) for r in t.split("<tr>")[2:]]
    assert len(rows) > 40
    for row in rows:
        if "kit-head" in row:
            continue
        text = _visible(row)
        assert "not testable" in text and "too few seeds at this profile" in text, text
        rest = text.replace("not testable", "")
        assert not [w for w in _OTHER_WORDS if re.search(rf"\b{w}\b", rest)], text
    # 04's reading ("...: differs: distance PixelCNN - CTS = 0.393") keeps its number, not its word
    section = _visible(page.split('<section id="04_samples">', 1)[1].split("</section>", 1)[0])
    assert "distance PixelCNN - CTS = 0.393" in section
    assert not [w for w in _OTHER_WORDS if re.search(rf"\b{w}\b", section)]


def test_one_line_per_claim_and_a_short_top_table(tmp_path):
    page = _index_of(tmp_path, _study_like(), "study")
    overview = _overview(page)
    assert len(overview.strip().splitlines()) <= 25 and "<br" not in overview
    for row in overview.split("<tr>")[2:]:
        claim = re.findall(r'<td class="paper">(.*?)</td>', row)[0]
        assert len(claim.split()) <= 16, claim
    # paper's claims apart from the kit's: 07's three paper rows first, then the kit's, each marked
    section = page.split('<section id="07_dqn_pixelcnn">', 1)[1].split("</section>", 1)[0]
    assert section.index("<p class=\"paper\">The paper: ") < section.index('<table class="claims">') < section.index("<details>")
    rows = section.split('<table class="claims">', 1)[1].split("</table>", 1)[0].split("<tr")[2:]
    kinds = ["kit" if 'class="kit"' in r else ("head" if "kit-head" in r else "paper") for r in rows]
    assert kinds == ["paper"] * 3 + ["head"] + ["kit"] * 8
    for row in rows:
        assert len(_visible("<tr" + row).split()) <= 45  # claim, word, number with interval and unit, n and test


def test_the_first_lines_say_what_the_agent_verdicts_rest_on(tmp_path):
    page = _index_of(tmp_path, _smoke_metrics(), "smoke")
    first = _visible(page.split('<p class="scope">', 1)[1].split("</p>", 1)[0])
    assert page.index('<p class="scope">') < page.index('<div class="banner">') < page.index('<table class="overview">')
    assert "07: DeepSea-4, 12 episodes (up to 48 agent steps a run), 2 seeds" in first
    assert "12: DeepSea-5, 40 episodes (up to 200 agent steps a run), 1 seed" in first
    assert "No Atari agent result of the paper is reproduced here" in first


_STUDY_REPORT = Path(__file__).resolve().parents[1] / "docs" / "study-report"


def test_the_shipped_study_report_reads_as_words_with_a_short_top_table():
    """The report users open (docs/study-report): every notebook in it, the scope first, a top table of
    at most 25 lines with one row per notebook, and no identifier in its visible text."""
    page = (_STUDY_REPORT / "index.html").read_text()
    notebooks = sorted(p.stem for p in (Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for name in notebooks:
        assert f'<section id="{name}">' in page, f"{name} is not in docs/study-report"
        assert (_STUDY_REPORT / name / "metrics.json").is_file(), name
    overview = _overview(page)
    assert len(overview.strip().splitlines()) <= 25 and overview.count("<tr>") == len(notebooks) + 1
    text = _visible(page)
    assert not _IDENTIFIER.findall(text), sorted(set(_IDENTIFIER.findall(text)))
    assert page.index("rest on DeepSea") < page.index('<table class="overview">')  # the scope before any notebook
    assert "14: DeepSea-10, 12, 14, 16, 20" in text
    assert "No Atari agent result of the paper is reproduced here" in text
    assert "Smoke profile" not in text  # every notebook at the study profile


def test_learning_rate_schedules_are_named_as_the_paper_writes_them():
    from pcnn_explore.report.claims import claims_of
    from pcnn_explore.study.preregistered import lr_schedules as plan

    m = json.loads((_STUDY_REPORT / "03_lr_schedules" / "metrics.json").read_text())
    claims = claims_of("03_lr_schedules", m)
    # the re-run under the optimizer readings decides the paper's two statements, each in the paper's words
    assert [c.claim for c in claims] == [plan.CAPTION_SENTENCE, plan.TEXT_SENTENCE, *plan.RERUN_CLAIMS[2:]]
    assert claims[0].number.startswith("tf1, constant 1e-3 - best other run (nats) ")
    assert claims[1].number.startswith("tf1, min(constant 1e-3, 0.1 n^-1/2) - best unnamed rate (nats) ")
    assert "; torch, min(constant 1e-3, 0.1 n^-1/2) - best unnamed rate (nats) " in claims[1].number
