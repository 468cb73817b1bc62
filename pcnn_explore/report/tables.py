"""A notebook's numbers as HTML tables: this run's ``summary`` beside the ``paper``'s (metrics.json).

Every value is written as a reader reads it, never as JSON or Python text:

- a number: an integer in full (``12,000``), any other with 4 significant digits; a bool as
  ``yes`` / ``no``; None (JSON's ``null``: a non-finite number, or nothing measured) as an en dash;
- a list of numbers or short words: the items separated by commas; a list holding a sentence: one
  item a line; a list of records (dicts): a table with one column per field; a list of lists: a
  table, one row each; an empty list: ``none``;
- a dict: a table of its names and values (as deep as the value goes); a dict of records: a table,
  one row per name and one column per field.

:func:`comparison` lays ``summary`` and ``paper`` side by side: one row per name (``quantity``,
``this run``, ``paper``), this run's names first in their order, then the names only the paper
gives. A name whose value is a dict on either side (a group: per-goal results, per-claim numbers)
gets a table of its own below, titled by its path (``goals / coverage``), with the paper's entries
of the same names beside this run's; a group without the paper's entries and made of records is one
table, a row per record. The name ``verdict`` is left out (the index shows it above the table).
"""
from __future__ import annotations

import html
import re
from typing import Any, Mapping

__all__ = ["value_html", "comparison", "plain_words", "EMPTY"]

#: a missing value (a name one side does not give)
EMPTY = ""
#: None (JSON null): not measured, or not a finite number
_NONE = '<span class="none">&ndash;</span>'
#: a string this long (characters) or longer is a sentence: a list of them is one item a line
_SENTENCE = 40
_MISSING = object()


_MMC_BETA = re.compile(r"\b(?:MMC|mmc)[ _]beta\b")
_BONUS_BETA = re.compile(r"\b(?:bonus scale |bonus_scale_)?beta(?:_N)?\b")


def plain_words(text: str) -> str:
    """``text`` with its two betas named: the mixed Monte Carlo mix (``MMC beta 0.1``, ``mmc_beta``) ->
    ``MMC mix``, and the bonus's scale (``beta 0.05``, ``the bonus scale beta 10 times``) -> ``bonus scale``."""
    return _BONUS_BETA.sub("bonus scale", _MMC_BETA.sub("MMC mix", str(text)))


def _is_record(v: Any) -> bool:
    return isinstance(v, Mapping) and bool(v) and not any(isinstance(x, Mapping) for x in v.values())


def _scalar(v: Any) -> str:
    if v is None:
        return _NONE
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return html.escape(f"{v:.4g}")
    return html.escape(plain_words(str(v)))


def _grid(rows: Mapping[str, Mapping] | list[Mapping], name: str = "") -> str:
    """A table of records: a row each, a column per field (the union of their fields, in order)."""
    items = list(rows.items()) if isinstance(rows, Mapping) else [(None, r) for r in rows]
    fields = list(dict.fromkeys(k for _, r in items for k in r))
    head = (f"<th>{html.escape(name)}</th>" if isinstance(rows, Mapping) else "") + \
        "".join(f"<th>{html.escape(str(f))}</th>" for f in fields)
    body = "".join("<tr>" + (f"<td>{html.escape(str(k))}</td>" if k is not None else "")
                   + "".join(f"<td>{value_html(r[f]) if f in r else EMPTY}</td>" for f in fields) + "</tr>"
                   for k, r in items)
    return f'<table class="sub"><tr>{head}</tr>{body}</table>'


def value_html(v: Any) -> str:
    """One value as HTML (see the module docstring); never JSON, never Python's repr."""
    if isinstance(v, Mapping):
        if not v:
            return "none"
        if all(_is_record(x) for x in v.values()):
            return _grid(v)
        rows = "".join(f"<tr><td>{html.escape(str(k))}</td><td>{value_html(x)}</td></tr>" for k, x in v.items())
        return f'<table class="sub">{rows}</table>'
    if isinstance(v, (list, tuple)):
        if not v:
            return "none"
        if all(isinstance(x, Mapping) for x in v) and all(v):
            return _grid(list(v))
        if all(isinstance(x, (list, tuple)) for x in v):
            rows = "".join("<tr>" + "".join(f"<td>{value_html(c)}</td>" for c in x) + "</tr>" for x in v)
            return f'<table class="sub">{rows}</table>'
        if any(isinstance(x, (Mapping, list, tuple)) or (isinstance(x, str) and len(x) >= _SENTENCE) for x in v):
            return '<ul class="items">' + "".join(f"<li>{value_html(x)}</li>" for x in v) + "</ul>"
        return ", ".join(_scalar(x) for x in v)
    return _scalar(v)


def _cell(v: Any) -> str:
    return EMPTY if v is _MISSING else value_html(v)


def _table(rows: list[tuple[str, str, str]]) -> str:
    body = "".join(f"<tr><td>{html.escape(name)}</td><td>{run}</td><td>{paper}</td></tr>" for name, run, paper in rows)
    return f'<table class="fig"><tr><th>quantity</th><th>this run</th><th>paper</th></tr>{body}</table>'


def comparison(summary: Mapping[str, Any] | None, paper: Mapping[str, Any] | None, path: tuple[str, ...] = ()) -> str:
    """``summary`` beside ``paper`` as HTML tables (see the module docstring); "" when neither gives a name."""
    summary, paper = summary or {}, paper or {}
    names = [k for k in summary if k != "verdict" or path] + [k for k in paper if k not in summary and (k != "verdict" or path)]
    rows: list[tuple[str, str, str]] = []
    groups: list[str] = []
    for name in names:
        run, claim = summary.get(name, _MISSING), paper.get(name, _MISSING)
        group_run = isinstance(run, Mapping) and bool(run)
        if (group_run and (claim is _MISSING or not isinstance(claim, (list, tuple)))) or \
                (isinstance(claim, Mapping) and claim and (run is _MISSING or isinstance(run, Mapping))):
            groups.append(name)
        else:
            rows.append((str(name), _cell(run), _cell(claim)))
    blocks = [_title(path) + _table(rows)] if rows else []
    for name in groups:
        run, claim = summary.get(name, _MISSING), paper.get(name, _MISSING)
        run = run if isinstance(run, Mapping) else {}
        sub = (*path, str(name))
        note = "" if claim is _MISSING or isinstance(claim, Mapping) else f'<p class="paper">the paper: {value_html(claim)}</p>'
        if not isinstance(claim, Mapping) and all(_is_record(x) for x in run.values()):
            blocks.append(_title(sub) + note + _grid(run, "name"))
            continue
        inner = comparison(run, claim if isinstance(claim, Mapping) else {}, sub)
        if note:
            inner = (_title(sub) + note + inner[len(_title(sub)):] if inner.startswith(_title(sub))
                     else _title(sub) + note + inner)
        blocks.append(inner)
    return "".join(blocks)


def _title(path: tuple[str, ...]) -> str:
    return f'<h4 class="group">{html.escape(" / ".join(path))}</h4>' if path else ""
