"""``OUT/index.html`` of ``pcnn-explore reproduce``: which of the paper's claims this run reproduced.

The page opens with what the agent verdicts rest on (DeepSea sizes, episodes, agent steps and seeds,
from the agent notebooks' ``settings``; :func:`pcnn_explore.report.claims.scope`) and that no Atari
agent result of the paper is reproduced here. Then one line per notebook: its verdict, coloured
(``agrees`` green, ``partly`` amber, ``differs`` red, ``inconclusive`` violet, ``not testable at
this profile`` grey; the words and colours of :mod:`pcnn_explore.verdicts`; read from the first
word of ``metrics.json``'s ``word``, the claims record's, see DESIGN "Verdicts in the report"), its claim in
at most about 15 words, the run's status and time, and a thumbnail of its main figure linking to
its HTML. A smoke run carries a banner: smoke is a plumbing check and its numbers mean nothing;
every smoke notebook and claim reads ``not testable at this profile`` whatever its text says, and
no other verdict word is shown (:func:`notebook_verdict`; the notebook's reading, below the fold,
with its verdict words taken out).

Below, per notebook: the paper's sentence, then one row per claim (:func:`pcnn_explore.report.claims.claims_of`,
which reads metrics.json's ``claims``, the claims record): the claim in plain words, its verdict word, this run's
number with interval and unit, n and the test; the paper's claims first, the kit's own questions
apart and marked. The notebook's sentences and its key figures beside the paper's (names in words
with units, :func:`pcnn_explore.report.claims.words`) sit below a fold (``<details>``).

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
from pcnn_explore.report.claims import SMOKE_REASON, claims_of, scope, unverdict, words
from pcnn_explore.report.first_screen import SCORES, decision_rule, notebook_row, legend_of_tests
from pcnn_explore.report.tables import plain_words, value_html
from pcnn_explore.verdicts import NOT_TESTABLE, VERDICT_COLOURS, VERDICTS, word_of

__all__ = ["VERDICTS", "notebook_verdict", "verdict_word", "main_figure", "write_index", "RECORDS"]

#: the file, beside index.html, holding one record per notebook run
RECORDS = "index.json"
_COLOURS = {**VERDICT_COLOURS, "no verdict": "#757575", "failed": "#c62828", SCORES: "#37474f"}


def notebook_verdict(metrics: Mapping | None, status: str = "ok", error: str | None = None) -> tuple[str, str]:
    """(word, sentence) of one notebook: the one source of its badge and of the sentence shown
    beside it, in the overview and in the notebook's section alike.

    The word is one of VERDICTS (the one metrics.json's ``word`` starts with, the notebook word of its
    claims record, :func:`pcnn_explore.verdicts.word_of`), "no verdict" when it starts with none or the
    metrics hold no claims record, or "failed"
    (``status`` not "ok"; the sentence is then ``error``). A smoke run is ``not testable at this
    profile`` whatever the notebook wrote: a sentence starting with another word is kept after
    that word as the notebook's reading, never as a verdict.
    """
    if status != "ok":
        return "failed", str(error or "")
    metrics = metrics or {}
    text = str(metrics.get("word") or "").strip()  # the claims record's notebook word (pcnn_explore.study.metrics_record)
    word = word_of(text)
    if metrics.get("profile") == "smoke" and word != NOT_TESTABLE:
        reading = f" (the notebook's reading, not a verdict: {text})" if text else ""
        return NOT_TESTABLE, f"{NOT_TESTABLE}: {SMOKE_REASON}{reading}"
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
            "output_dir": rel(result.output_dir), "profile": (result.metrics or {}).get("profile"),
            "commit": getattr(result, "commit", None)}


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


def _text(s) -> str:
    """``s`` in plain words (:func:`pcnn_explore.report.tables.plain_words`) escaped for a text node
    (quotes kept as they are: no ``&#x27;`` in the reader's text)."""
    return html.escape(plain_words(str(s)), quote=False)


def _claim_rows(claims) -> str:
    """The claims' table: the paper's claims, then the kit's (marked as the kit's), one row each."""
    def row(c):
        mark = '<span class="kit">kit:</span> ' if c.kind == "kit" else ""
        number = _text(c.number) if c.number else '<span class="none">&ndash;</span>'
        if c.p is not None and c.number:
            number += f", p = {c.p:.3g}"
        why = f'<br><span class="reason">{_text(c.reason)}</span>' if c.reason else ""
        return (f'<tr><td>{mark}{_text(c.claim)}</td><td>{_badge(c.word)}{why}</td><td>{number}</td>'
                f'<td>{_text(c.test)}</td></tr>')
    paper = [c for c in claims if c.kind != "kit"]
    kit = [c for c in claims if c.kind == "kit"]
    body = "".join(row(c) for c in paper)
    if kit:
        body += ('<tr class="kit-head"><td colspan="4">the kit\'s own questions, not the paper\'s claims</td></tr>'
                 + "".join(row(c) for c in kit))
    return ('<table class="claims"><tr><th>claim</th><th>verdict</th><th>this run</th><th>n and test</th></tr>'
            f'{body}</table>')


def _figures(summary: Mapping, paper: Mapping, smoke: bool) -> str:
    """This run's key figures beside the paper's, one row per name in words (:func:`words`); the
    findings already shown as claims (nested records, verdict sentences) are left out."""
    def shown(v):
        if isinstance(v, Mapping) or (isinstance(v, (list, tuple)) and any(isinstance(x, (Mapping, list, tuple)) for x in v)):
            return False
        return True

    skip = {"verdict", "kit_verdict", "lines", "claims", "findings", "goals"}
    names = [k for k in summary if k not in skip and shown(summary[k])]
    names += [k for k in paper if k not in skip and k not in summary and shown(paper[k])]
    rows = []
    for k in names:
        run, claim = summary.get(k, ""), paper.get(k, "")
        if smoke and isinstance(run, str):
            run = unverdict(run)  # (before escaping: unverdict trims ";", which ends an HTML entity)
        run_text = value_html(run) if k in summary else ""
        claim_text = value_html(claim) if k in paper else ""
        rows.append(f"<tr><td>{_text(words(k))}</td><td>{run_text}</td><td>{claim_text}</td></tr>")
    if not rows:
        return ""
    return ('<table class="fig"><tr><th>quantity</th><th>this run</th><th>paper</th></tr>' + "".join(rows) + "</table>")


def _duration(seconds: float) -> str:
    """Seconds as a reader reads them: "35 s", "9 min 42 s"."""
    s = int(round(float(seconds)))
    return f"{s} s" if s < 60 else f"{s // 60} min {s % 60} s"


def _section(rec: dict, out: Path) -> tuple[str, str]:
    """(overview row, detail section) of one notebook record."""
    name = rec["name"]
    out_dir = out / (rec.get("output_dir") or name)
    metrics = _metrics(out, rec)
    word, sentence = notebook_verdict(metrics, rec["status"], rec.get("error"))
    smoke = (metrics or {}).get("profile") == "smoke"
    summary, paper = (metrics or {}).get("summary") or {}, (metrics or {}).get("paper") or {}
    summary, paper = (summary if isinstance(summary, Mapping) else {}), (paper if isinstance(paper, Mapping) else {})
    paper_sentence = str(paper.get("verdict") or "")
    href = rec.get("html")
    link = (f'<a href="{html.escape(href)}">{_text(name)}</a>' if href else _text(name))
    figure = main_figure(out_dir, metrics)
    thumb = ""
    if figure is not None:
        src = html.escape(figure.resolve().relative_to(out.resolve()).as_posix())
        img = f'<img class="thumb" src="{src}" alt="main figure of {html.escape(name)}">'
        thumb = f'<a href="{html.escape(href)}">{img}</a>' if href else img
    status = '<span class="ok">ok</span>' if rec["status"] == "ok" else '<span class="failed">failed</span>'
    first = notebook_row(name, metrics, word, sentence)
    number = _text(first.number) if first.number else '<span class="none">&ndash;</span>'
    if first.word == SCORES:  # the scores stand in place of a word
        answer = f'<td class="number" colspan="2">{number}</td>'
    else:
        answer = f'<td class="number">{number}</td><td>{_badge(word)}</td>'
    changed = (metrics or {}).get("rerendered") if isinstance((metrics or {}).get("rerendered"), Mapping) else None
    was = f" (before the {changed.get('rules')} rules: {changed.get('was')})" if changed else ""
    row = (f'<tr><td><code>{link}</code></td><td class="paper">{_text(first.paper)}</td>{answer}'
           f'<td class="reason">{_text(first.reason + was)}</td>'
           f'<td class="run">{status}, {_duration(rec["seconds"])}'
           + (f', commit {_text(rec["commit"])}' if rec.get("commit") else "") + f' {thumb}</td></tr>')
    claims = claims_of(name, metrics) if rec["status"] == "ok" else []
    if rec["status"] != "ok":
        why = _text(sentence)
    elif smoke:
        why = f"{NOT_TESTABLE}: {SMOKE_REASON}"
    else:
        why = _text(f"{word}: over the claims below" if len(claims) > 1 else
                    claims[0].detail if claims and claims[0].detail else sentence)  # (one claim: its decision's sentence)
    table = _claim_rows(claims) if claims else '<p class="none">no finding recorded</p>'
    fold = []
    if smoke and sentence:
        reading = str((metrics or {}).get("word") or "")
        if reading:
            fold.append(f"<p>The notebook's reading (not a verdict): {_text(unverdict(reading))}</p>")
    for c in claims:
        if c.detail:
            fold.append(f"<p>{'kit: ' if c.kind == 'kit' else ''}{_text(c.detail)}</p>")
    lines = summary.get("lines")
    if isinstance(lines, list) and lines:
        fold.append('<ul class="items">' + "".join(
            f"<li>{_text(unverdict(str(x)) if smoke else str(x))}</li>" for x in lines) + "</ul>")
    whole = (metrics or {}).get("whole_protocol")
    whole_text = whole.get("text") if isinstance(whole, Mapping) else None
    if isinstance(whole_text, list) and whole_text:  # 14: bsuite's whole deep-sea protocol, per line
        fold.append('<ul class="items">' + "".join(f"<li>{_text(str(x))}</li>" for x in whole_text) + "</ul>")
    fold.append(_figures(summary, paper, smoke))
    fold.append(_parts(metrics))
    details = "".join(x for x in fold if x)
    paper_p = f'<p class="paper">The paper: {_text(paper_sentence)}</p>' if paper_sentence else ""
    if changed:
        paper_p += (f'<p class="changed">Verdict changed under the {_text(changed.get("rules"))} rules: was '
                    f'{_text(changed.get("was"))}, now {_text(changed.get("now"))}, because '
                    f'{_text(changed.get("because"))}. The notebook\'s own page shows the verdict of its run.</p>')
    heading = _badge(word if first.word != SCORES else SCORES)
    if first.word == SCORES:
        why = _text(f"{first.number}; {first.reason}")
    detail = (f'<section id="{html.escape(name)}"><h2><code>{link}</code> {heading}</h2>'
              f'<p class="verdict">{why}</p>{paper_p}{table}'
              + (f"<details><summary>details: the notebook's sentences and key figures</summary>{details}</details>"
                 if details else "") + "</section>")
    return row, detail


def _parts(metrics: Mapping | None) -> str:
    """The summaries a notebook keeps besides its own (a top-level entry holding ``summary`` and
    ``paper``, e.g. 07-10's ``atari`` at the paper profile): a titled table each, its verdict above."""
    blocks = []
    smoke = (metrics or {}).get("profile") == "smoke"
    for key, part in (metrics or {}).items():
        if key in ("summary", "paper") or not (isinstance(part, Mapping) and isinstance(part.get("summary"), Mapping)):
            continue
        s, p = part["summary"], part.get("paper") if isinstance(part.get("paper"), Mapping) else {}
        verdict = str(s.get("verdict", ""))
        blocks.append(f'<h3>{_text(words(str(key)))}</h3>'
                      f'<p class="verdict">{_text(unverdict(verdict) if smoke else verdict)}</p>'
                      + _figures(s, p, smoke))
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
    metrics = {r["name"]: _metrics(out, r) for r in records}
    counts = {w: 0 for w in (*VERDICTS, "no verdict", "failed")}
    for r in records:
        counts[verdict_word(metrics[r["name"]], r["status"])] += 1
    tally = " · ".join(f"{_badge(w)} {n}" for w, n in counts.items() if n)
    n_ok = sum(r["status"] == "ok" for r in records)
    rests = scope(metrics)
    scope_line = (f"The agent verdicts rest on DeepSea alone ({html.escape(rests)})." if rests else
                  "No agent notebook is in this run.")
    claims = [c for r in records if r["status"] == "ok" for c in claims_of(r["name"], metrics[r["name"]])]
    rule = _text(decision_rule(claims))
    words_legend = " ".join(_badge(w) for w in VERDICTS)
    body = "\n".join(rows) + "\n".join(details)
    tests = "".join(f"<li><strong>{_text(n)}</strong>: {_text(w)}</li>" for n, w in legend_of_tests(html.unescape(body)))
    tests_html = f'<ul class="tests">{tests}</ul>' if tests else ""
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>pcnn-explore reproduce ({html.escape(profile)})</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 1400px; }} table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #ccc; padding: 4px 8px; vertical-align: top; text-align: left; }}
table.fig td, table.fig th {{ border: none; border-bottom: 1px solid #eee; font-size: 90%; }}
.ok {{ color: #060; font-weight: bold; }} .failed {{ color: #a00; font-weight: bold; }}
.badge {{ color: white; padding: 2px 8px; border-radius: 4px; font-weight: bold; white-space: nowrap; }}
.banner {{ background: #fff3cd; border: 2px solid #b7791f; padding: 10px; margin-bottom: 1em; }}
img.thumb {{ max-width: 90px; max-height: 1.6em; vertical-align: middle; }} .verdict {{ font-size: 95%; }}
table.overview td {{ padding: 2px 6px; font-size: 90%; }} table.overview td.run {{ font-size: 80%; width: 9em; }}
table.overview td.reason, span.reason {{ color: #444; font-size: 85%; }} table.claims td {{ font-size: 95%; }}
span.kit {{ font-weight: bold; color: #555; }} tr.kit-head td {{ font-style: italic; background: #f6f6f6; }}
details {{ margin: 0.4em 0 1em; }} p.scope {{ font-size: 105%; }} p.rule {{ font-weight: bold; }}
code {{ white-space: nowrap; }} table.sub td, table.sub th {{ border: 1px solid #eee; padding: 2px 6px; font-size: 95%; }}
h4.group {{ margin: 0.8em 0 0.2em; font-weight: normal; font-style: italic; }} p.paper {{ margin: 0.2em 0; color: #555; }}
ul.items {{ margin: 0; padding-left: 1.2em; }} span.none {{ color: #999; }} ul.tests {{ font-size: 90%; }}
</style></head><body>
<h1>pcnn-explore reproduce: profile <code>{html.escape(", ".join(sorted(profiles)))}</code></h1>
<p class="scope">{scope_line} No Atari agent result of the paper is reproduced here: the paper's agents ran
150M Atari frames; the kit's agent notebooks test its claims on DeepSea at the sizes above.</p>
{banner}
<p class="rule">{rule}</p>
<table class="overview"><tr><th>notebook</th><th>the paper</th><th>this kit: the first paper claim's number, 95% interval, n</th><th>verdict</th><th>why not "agrees"</th><th>run, figure</th></tr>
{chr(10).join(rows)}
</table>
<p>{n_ok} of {len(records)} notebooks succeeded; total run time {_duration(sum(r["seconds"] for r in records))}.
Verdicts: {tally}</p>
<p class="legend">The verdict words: {words_legend}</p>
<p>A notebook agrees when at least one paper claim is testable and every testable one agrees; partly when some agree
and none differ; mixed when some agree and some differ; differs when every decided claim differs; inconclusive when
claims are testable and none is decided; not testable (with its reason) when no paper claim is testable: too few
seeds at this profile, not testable on this task, or the lines do not move (an equivalence or no-progress claim whose
positive control in the same runs does not leave the floor).</p>
{tests_html}
<h2>Each notebook: the paper's sentence, then one row per claim</h2>
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
