"""``OUT/index.html`` of ``pcnn-explore reproduce``: which of the paper's claims this run reproduced.

The page opens with one line per notebook: its verdict, coloured (``agrees`` green, ``partly``
amber, ``differs`` red, ``inconclusive`` violet, ``not testable at this profile`` grey; the words and
colours of :mod:`pcnn_explore.verdicts`; read from the first word of
``metrics.json``'s ``summary.verdict`` by :func:`pcnn_explore.verdicts.word_of`, see DESIGN
"Verdicts in the report"), the paper's claim, and a thumbnail of the notebook's main figure
linking to its HTML. A smoke run carries a banner: smoke is a plumbing check and its numbers mean
nothing; every smoke notebook reads ``not testable at this profile`` whatever its text says
(:func:`notebook_verdict`, the one source of the word and sentence of a notebook's row and its
section). Below, per notebook, the numbers beside the paper's as HTML tables
(:mod:`pcnn_explore.report.tables`: no JSON or Python text, nested values as sub-tables).

Main figure: ``metrics.json``'s ``main_figure`` (a file name in the notebook's output folder),
else the first PNG there (by name). Runs of a subset (``--only``) merge into the existing index:
each run's records are kept in ``OUT/index.json`` (name, status, seconds, error, profile) and a
notebook's entry is replaced only when it runs again.
"""
from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from pcnn_explore.atomic import write_text_atomic
from pcnn_explore.report.tables import comparison, value_html
from pcnn_explore.verdicts import VERDICT_COLOURS, VERDICTS, word_of

__all__ = ["VERDICTS", "notebook_verdict", "verdict_word", "main_figure", "write_index", "RECORDS"]

#: the file, beside index.html, holding one record per notebook run
RECORDS = "index.json"
_COLOURS = {**VERDICT_COLOURS, "no verdict": "#757575", "failed": "#c62828"}
NOT_TESTABLE = VERDICTS[-1]  # "not testable at this profile"


def notebook_verdict(metrics: Mapping | None, status: str = "ok", error: str | None = None) -> tuple[str, str]:
    """(word, sentence) of one notebook: the one source of its badge and of the sentence shown
    beside it, in the overview and in the notebook's section alike.

    The word is one of VERDICTS (the one ``summary.verdict`` starts with,
    :func:`pcnn_explore.verdicts.word_of`), "no verdict" when it starts with none, or "failed"
    (``status`` not "ok"; the sentence is then ``error``). A smoke run is ``not testable at this
    profile`` whatever the notebook wrote: a sentence starting with another word is kept after
    that word as the notebook's reading, never as a verdict.
    """
    if status != "ok":
        return "failed", str(error or "")
    metrics = metrics or {}
    summary = metrics.get("summary")
    text = str((summary.get("verdict") if isinstance(summary, Mapping) else None) or "").strip()
    word = word_of(text)
    if metrics.get("profile") == "smoke" and word != NOT_TESTABLE:
        reading = f" (the notebook's reading, not a verdict: {text})" if text else ""
        return NOT_TESTABLE, f"{NOT_TESTABLE}: smoke runs check the plumbing only{reading}"
    return word or "no verdict", text


def verdict_word(metrics: Mapping | None, status: str = "ok") -> str:
    """One of VERDICTS, or "failed" / "no verdict", for a notebook's metrics.json (:func:`notebook_verdict`)."""
    return notebook_verdict(metrics, status)[0]


def main_figure(output_dir: Path, metrics: dict | None) -> Path | None:
    """The notebook's main figure: metrics' ``main_figure`` if that file exists, else the first PNG."""
    named = (metrics or {}).get("main_figure")
    if isinstance(named, str) and named and (output_dir / named).is_file() and not Path(named).is_absolute():
        return output_dir / named
    pngs = sorted(output_dir.glob("*.png")) if output_dir.is_dir() else []
    return pngs[0] if pngs else None


def _record(result, out: Path) -> dict[str, Any]:
    def rel(p):
        if p is None:
            return None
        try:
            return Path(p).resolve().relative_to(out.resolve()).as_posix()
        except ValueError:
            return None

    return {"name": result.name, "status": result.status, "seconds": float(result.seconds),
            "error": result.error, "failed_cell": result.failed_cell, "html": rel(result.html),
            "output_dir": rel(result.output_dir), "profile": (result.metrics or {}).get("profile")}


def _merged_records(results: Sequence, out: Path, merge: bool) -> list[dict[str, Any]]:
    records: dict[str, dict] = {}
    path = out / RECORDS
    if merge and path.is_file():
        try:
            stored = json.loads(path.read_text())
            records = {r["name"]: r for r in stored.get("notebooks", []) if isinstance(r, dict) and "name" in r}
        except (ValueError, AttributeError, TypeError):
            records = {}
    for r in results:
        records[r.name] = _record(r, out)
    return [records[k] for k in sorted(records)]


def _badge(word: str) -> str:
    return (f'<span class="badge" style="background:{_COLOURS.get(word, "#757575")}">'
            f'{html.escape(word)}</span>')


def _section(rec: dict, out: Path) -> tuple[str, str]:
    """(summary row, detail section) of one notebook record."""
    name = rec["name"]
    out_dir = out / (rec.get("output_dir") or name)
    metrics = None
    if (out_dir / "metrics.json").is_file():
        try:
            metrics = json.loads((out_dir / "metrics.json").read_text())
        except ValueError:
            metrics = None
    word, sentence = notebook_verdict(metrics, rec["status"], rec.get("error"))
    summary, paper = (metrics or {}).get("summary") or {}, (metrics or {}).get("paper") or {}
    claim = value_html(paper.get("verdict", "")) if isinstance(paper, Mapping) else ""
    summary, paper = (summary if isinstance(summary, Mapping) else {}), (paper if isinstance(paper, Mapping) else {})
    href = rec.get("html")
    link = (f'<a href="{html.escape(href)}">{html.escape(name)}</a>' if href else html.escape(name))
    figure = main_figure(out_dir, metrics)
    thumb = ""
    if figure is not None:
        src = html.escape(figure.resolve().relative_to(out.resolve()).as_posix())
        img = f'<img class="thumb" src="{src}" alt="main figure of {html.escape(name)}">'
        thumb = f'<a href="{html.escape(href)}">{img}</a>' if href else img
    profile = rec.get("profile") or (metrics or {}).get("profile") or ""
    status = '<span class="ok">ok</span>' if rec["status"] == "ok" else '<span class="failed">failed</span>'
    why = html.escape(sentence)
    row = (f'<tr><td>{link}<br><small>{status}, {html.escape(str(profile))}, {rec["seconds"]:.1f} s</small></td>'
           f'<td>{_badge(word)}</td><td>{claim}<br><small class="why">{why}</small></td><td>{thumb}</td></tr>')
    detail = (f'<section id="{html.escape(name)}"><h2>{link} {_badge(word)}</h2>'
              f'<p class="verdict">{why}</p>{comparison(summary, paper)}{_parts(metrics)}</section>')
    return row, detail


def _parts(metrics: Mapping | None) -> str:
    """The summaries a notebook keeps besides its own (a top-level entry holding ``summary`` and
    ``paper``, e.g. 07-10's ``atari`` at the paper profile): a titled table each, its verdict above."""
    blocks = []
    for key, part in (metrics or {}).items():
        if key in ("summary", "paper") or not (isinstance(part, Mapping) and isinstance(part.get("summary"), Mapping)):
            continue
        s, p = part["summary"], part.get("paper") if isinstance(part.get("paper"), Mapping) else {}
        blocks.append(f'<h3>{html.escape(str(key))}</h3><p class="verdict">{html.escape(str(s.get("verdict", "")))}</p>'
                      + comparison(s, p))
    return "".join(blocks)


def write_index(results: Sequence, out: str | os.PathLike, profile: str, merge: bool = True) -> Path:
    """Write ``out/index.html`` and ``out/index.json`` (see the module docstring); with ``merge``,
    notebooks recorded by earlier runs in ``out`` and not in ``results`` are kept."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records = _merged_records(results, out, merge)
    write_text_atomic(out / RECORDS, json.dumps({"profile": profile, "notebooks": records}, indent=1) + "\n")
    rows, details = zip(*(_section(r, out) for r in records)) if records else ((), ())
    profiles = {r.get("profile") or profile for r in records} | {profile}
    banner = ('<div class="banner"><strong>Smoke profile: a plumbing check.</strong> Its numbers mean nothing and no '
              'verdict on the paper can be read from them. Run <code>pcnn-explore reproduce --profile study</code> '
              'for CPU-scale results.</div>' if "smoke" in profiles else "")
    counts = {w: 0 for w in (*VERDICTS, "no verdict", "failed")}
    for r in records:
        counts[verdict_word(_metrics(out, r), r["status"])] += 1
    tally = " · ".join(f"{_badge(w)} {n}" for w, n in counts.items() if n)
    legend = " ".join(_badge(w) for w in VERDICTS)
    n_ok = sum(r["status"] == "ok" for r in records)
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>pcnn-explore reproduce ({html.escape(profile)})</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 1200px; }} table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #ccc; padding: 4px 8px; vertical-align: top; text-align: left; }}
table.fig td, table.fig th {{ border: none; border-bottom: 1px solid #eee; font-size: 90%; }}
.ok {{ color: #060; font-weight: bold; }} .failed {{ color: #a00; font-weight: bold; }}
.badge {{ color: white; padding: 2px 8px; border-radius: 4px; font-weight: bold; white-space: nowrap; }}
.banner {{ background: #fff3cd; border: 2px solid #b7791f; padding: 10px; margin-bottom: 1em; }}
small.why {{ color: #555; }} img.thumb {{ max-width: 220px; max-height: 140px; }} .verdict {{ font-size: 95%; }}
code {{ white-space: nowrap; }} table.sub td, table.sub th {{ border: 1px solid #eee; padding: 2px 6px; font-size: 95%; }}
h4.group {{ margin: 0.8em 0 0.2em; font-weight: normal; font-style: italic; }} p.paper {{ margin: 0.2em 0; color: #555; }}
ul.items {{ margin: 0; padding-left: 1.2em; }} span.none {{ color: #999; }}
</style></head><body>
<h1>pcnn-explore reproduce: profile <code>{html.escape(", ".join(sorted(profiles)))}</code></h1>
{banner}
<p>{n_ok} of {len(records)} notebooks succeeded; total run time {sum(r["seconds"] for r in records):.0f} s.
Verdicts: {tally}</p>
<p class="legend">The verdict words: {legend}</p>
<table class="overview"><tr><th>notebook</th><th>verdict</th><th>the paper's claim</th><th>main figure</th></tr>
{chr(10).join(rows)}
</table>
<h2>Numbers beside the paper's</h2>
{chr(10).join(details)}
</body></html>
"""
    return write_text_atomic(out / "index.html", page)


def _metrics(out: Path, rec: dict) -> dict | None:
    path = out / (rec.get("output_dir") or rec["name"]) / "metrics.json"
    try:
        return json.loads(path.read_text()) if path.is_file() else None
    except ValueError:
        return None
