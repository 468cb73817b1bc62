"""Re-render a report from its stored metrics, re-deciding every verdict under the current rules.

``pcnn-explore reproduce --rerender DIR`` (:func:`rerender`) reads ``DIR/index.json`` and each
notebook's ``DIR/<notebook>/metrics.json``, decides each claim again from the per-seed values the
metrics hold (no notebook runs, no training), writes the claims back as ``claims`` records with the
notebook's new verdict sentence, and writes ``DIR/index.html`` and ``DIR/index.json`` again. A
notebook whose word changes keeps ``rerendered = {"rules", "was", "now", "because"}`` in its
metrics.json; the index shows it in the notebook's section and :func:`rerender` returns those lines
("verdict changed under the 0.3 rules: was partly, now not testable because ..."), which it also
writes into ``DIR/README.md`` between :data:`MARK_BEGIN` and :data:`MARK_END` when the README holds
them. The notebooks' own HTML renderings are left as they ran: they show the verdict of their time (their
styles aside: nbconvert's CSS moves into the report's one shared stylesheet,
:func:`pcnn_explore.report.styles.share_styles`, so a page taken in shares it too).
``--take RUN`` (:func:`take`) first brings a new run's notebooks into the report, folders and
index.json records (its time and commit) alike, so a notebook re-run on its own ships by one command.

Per notebook (:func:`redecide`): every claim of its ``claims`` record decided again from its stored
claim and per-seed values by :func:`pcnn_explore.study.decide_again`, the one function that decided it
at the notebook's first render, and its notebook word again (:func:`pcnn_explore.study.metrics_record`).
A report whose metrics.json holds no claims record (no ``schema``: written before it) is refused before
anything is written (:func:`pcnn_explore.report.take.check_report`): re-run its notebooks. 14's whole deep-sea protocol is also
read again from the report's committed bsuite logs (:func:`whole_protocol_again`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Mapping

from pcnn_explore.atomic import write_text_atomic
from pcnn_explore.report.records import folder_of, read_records
from pcnn_explore.report.styles import share_styles
from pcnn_explore.report.take import KEPT_FOLDERS, take  # a re-run taken into a report, importable from here
from pcnn_explore.report.take import check_report, clear_staging, report_lock
from pcnn_explore.study import Decision, decide_again, decisions_of, metrics_record
from pcnn_explore.verdicts import LINES_DO_NOT_MOVE, NOT_ON_THIS_TASK, TOO_FEW_SEEDS, word_of

__all__ = ["rerender", "take", "KEPT_FOLDERS", "redecide", "whole_protocol_again", "RULES",
           "MARK_BEGIN", "MARK_END"]

#: the rules a re-render decides under
RULES = "0.3"
MARK_BEGIN = "<!-- verdict changes: written by pcnn-explore reproduce --rerender -->"
MARK_END = "<!-- end of verdict changes -->"


def _because(decisions: list[Decision]) -> str:
    paper = [d for d in decisions if d.kind != "kit"]
    n_few = sum(d.reason == TOO_FEW_SEEDS for d in paper)
    n_still = sum(d.reason == LINES_DO_NOT_MOVE for d in paper)
    n_task = sum(d.reason == NOT_ON_THIS_TASK for d in paper)
    parts = []
    if n_few:
        parts.append(f"{n_few} of {len(paper)} paper claims rest on fewer than 6 seeds (too few seeds at this profile)")
    if n_still:
        parts.append(f"{n_still} equivalence claim{'s' if n_still > 1 else ''} rest on lines that do not move")
    if n_task:
        parts.append(f"{n_task} claim{'s' if n_task > 1 else ''} not testable on this task")
    if not parts:
        parts.append("the claims' tests give another word")
    return "; ".join(parts)


def redecide(name: str, metrics: Mapping, where: str = "metrics.json") -> dict | None:
    """``metrics`` with every claim decided again from its stored values (:func:`pcnn_explore.study.decide_again`)
    and its notebook word again, or None for a smoke run; ValueError naming ``where`` for metrics without
    the claims record. A word that changes is kept as ``rerendered = {"rules", "was", "now", "because"}``."""
    metrics = json.loads(json.dumps(metrics))
    if metrics.get("profile") == "smoke":
        return None
    decisions = [decide_again(d) for d in decisions_of(metrics, where)]
    old = str(metrics.get("word") or "")
    metrics.update(metrics_record(decisions))
    prev = metrics.get("rerendered") if isinstance(metrics.get("rerendered"), dict) else {}
    if prev.get("rules") == RULES and prev.get("was"):  # re-rendered before: the verdict of the run stays the one it was
        old = str(prev["was"])
    was, now = word_of(old) or "no verdict", word_of(metrics["word"]) or "no verdict"
    if was != now:
        metrics["rerendered"] = {"rules": RULES, "was": old.split(":")[0].split(" over ")[0], "now": metrics["word"],
                                 "because": _because(decisions)}
    else:
        metrics.pop("rerendered", None)
    return metrics


def whole_protocol_again(folder: Path, metrics: Mapping) -> dict:
    """14's metrics with the whole protocol read again from the report's committed bsuite logs
    (``folder/protocol``, :func:`pcnn_explore.experiments.agents.deep_sea_scaling.whole_protocol`) and its
    figure written beside them, so the report follows the logs as sizes finish, with no run of the
    notebook; as they were for a smoke run or where the folder holds no log."""
    from pcnn_explore.experiments.agents import deep_sea_scaling as dss

    metrics = json.loads(json.dumps(metrics))
    whole = dss.whole_protocol(folder / dss.STORE_NAME) if metrics.get("profile") != "smoke" else None
    if whole is None:
        return metrics
    dss.whole_protocol_figure(whole, folder)
    return {**metrics, **dss.whole_protocol_record(whole)}


def rerender(out: str | Path, say: Callable[[str], None] | None = None) -> list[str]:
    """Re-decide every notebook of the report in ``out`` from its stored metrics (:func:`redecide`),
    write their metrics.json, ``out/index.html`` and ``out/index.json`` again, and return one line per
    notebook whose verdict changed; with the markers in ``out/README.md``, those lines go between them.
    The report is held for the while (:func:`pcnn_explore.report.take.report_lock`), the staging folders
    of a killed take are cleared first (:func:`~pcnn_explore.report.take.clear_staging`, which says so
    through ``say``), and index.json and every metrics.json are checked before anything is written
    (:func:`~pcnn_explore.report.take.check_report`: ValueError naming the file and the field)."""
    out = Path(out)
    read_records(out)  # (FileNotFoundError before the report is locked)
    with report_lock(out):
        clear_staging(out, say)
        return _rerender(out)


def _rerender(out: Path) -> list[str]:
    from pcnn_explore.atomic import write_text_atomic as write
    from pcnn_explore.report import index
    from pcnn_explore.report.metrics import _plain

    stored, loaded = check_report(out)
    changes = []
    for rec in stored["notebooks"]:
        path = out / folder_of(rec) / "metrics.json"
        if rec["name"] not in loaded:  # (a failed notebook, or one that wrote no metrics.json)
            continue
        metrics = loaded[rec["name"]]
        if rec["name"].startswith("14"):  # its claims read again from the logs, then decided again like any
            metrics = whole_protocol_again(path.parent, metrics)
        new = redecide(rec["name"], metrics, str(path))
        if new is None:
            continue
        write(path, json.dumps(_plain(new), indent=2, allow_nan=False) + "\n")
        r = new.get("rerendered")
        if r:
            changes.append(f"{rec['name'][:2]}: verdict changed under the {r['rules']} rules: was {r['was']}, now "
                           f"{r['now']}, because {r['because']}")
    index.write_index([], out, stored.get("profile") or "study")
    share_styles(out)
    readme = out / "README.md"
    if readme.is_file():
        text = readme.read_text()
        if MARK_BEGIN in text and MARK_END in text:
            head, rest = text.split(MARK_BEGIN, 1)
            tail = rest.split(MARK_END, 1)[1]
            body = "\n".join(f"- {c}" for c in changes) or "- none"
            write_text_atomic(readme, f"{head}{MARK_BEGIN}\n{body}\n{MARK_END}{tail}")
    return changes
