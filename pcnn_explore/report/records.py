"""What ``reproduce --take`` and ``--rerender`` read from a report folder, checked before anything moves.

A report (``pcnn-explore reproduce --out DIR``) is ``DIR/index.json`` (one record per notebook) and one
folder per notebook holding its ``metrics.json``. Every name these files give to a place on disk is
one plain folder or file name (:func:`plain_name`: no ``/``, not ``..``, not hidden, not empty), so no
take or re-render ever reaches outside the report; a record names its notebook's folder (``name``,
``output_dir``) and HTML (``html``: ``<folder>/<file>``), metrics.json its main figure
(``main_figure``). :func:`read_records` and :func:`read_metrics` raise one ValueError naming the file
and the field of the first thing wrong (a bad name, a missing ``seconds``, a file that is not JSON or
not an object). A folder a take copies or a store a re-render reads holds real files only
(:func:`real_files_only`): a symbolic link, a pipe or a device there is refused, never followed.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Mapping

from pcnn_explore.report.index import RECORDS

__all__ = ["RECORDS", "RESERVED", "plain_name", "read_records", "read_metrics", "real_files_only", "folder_of"]

#: the report's own files, which no notebook may be named after
RESERVED = (RECORDS, "index.html", "README.md")
_STATUSES = ("ok", "failed")
_FIX = "restore the file from git, or make the run again with pcnn-explore reproduce"


def plain_name(value: Any, where: str | os.PathLike, field: str) -> str:
    """``value`` when it is one plain folder or file name: a string, not empty, no ``/`` or ``\\``, no
    leading dot (so not ``.`` or ``..``), no control character; else ValueError naming ``where`` (the
    file it was read from) and ``field``."""
    if (isinstance(value, str) and value and not value.startswith(".") and "/" not in value and "\\" not in value
            and not any(ord(c) < 32 for c in value)):
        return value
    raise ValueError(f"{where}: {field} must be one plain folder or file name (no '/', no '..', no leading '.', "
                     f"not empty), got {value!r}: {_FIX}")


def _notebook_name(value: Any, where: Path, field: str) -> str:
    name = plain_name(value, where, field)
    if name in RESERVED:
        raise ValueError(f"{where}: {field} is {name!r}, a file of the report itself, not a notebook: {_FIX}")
    return name


def folder_of(record: Mapping) -> str:
    """The notebook folder (in its report) of a record :func:`read_records` has checked."""
    return record.get("output_dir") or record["name"]


def _check_record(r: Any, where: Path, i: int) -> None:
    at = f"notebooks[{i}]"
    if not isinstance(r, dict):
        raise ValueError(f"{where}: {at} must be an object (a notebook's record), got {json.dumps(r)[:60]}: {_FIX}")
    if "name" not in r:
        raise ValueError(f"{where}: {at}.name is missing: {_FIX}")
    _notebook_name(r["name"], where, f"{at}.name")
    at = f"notebooks[{i}] ({r['name']})"
    if r.get("output_dir") is not None:
        _notebook_name(r["output_dir"], where, f"{at}.output_dir")
    if r.get("status") not in _STATUSES:
        raise ValueError(f"{where}: {at}.status must be 'ok' or 'failed', got {r.get('status', 'nothing')!r}: {_FIX}")
    seconds = r.get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) or seconds < 0:
        got = "nothing" if "seconds" not in r else repr(seconds)
        raise ValueError(f"{where}: {at}.seconds must be the run's time in seconds (a number >= 0), got {got}: {_FIX}")
    html = r.get("html")
    if html is not None:
        parts = html.split("/") if isinstance(html, str) else []
        if len(parts) != 2 or parts[0] != folder_of(r):
            raise ValueError(f"{where}: {at}.html must be '{folder_of(r)}/<file>.html', in the notebook's own folder, "
                             f"got {html!r}: {_FIX}")
        plain_name(parts[1], where, f"{at}.html's file")
    for field in ("error", "commit", "profile"):
        if r.get(field) is not None and not isinstance(r[field], str):
            raise ValueError(f"{where}: {at}.{field} must be text or null, got {r[field]!r}: {_FIX}")
    cell = r.get("failed_cell")
    if cell is not None and (isinstance(cell, bool) or not isinstance(cell, int)):
        raise ValueError(f"{where}: {at}.failed_cell must be a cell number or null, got {cell!r}: {_FIX}")


def _read_json(path: Path) -> Any:
    if path.is_symlink():
        raise ValueError(f"{path} is a symbolic link: a report holds real files only; put the file itself there")
    try:
        return json.loads(path.read_text())
    except ValueError as e:  # (UnicodeDecodeError too)
        raise ValueError(f"{path} is not readable JSON ({e}): {_FIX}") from None


def read_records(folder: str | os.PathLike) -> dict:
    """``folder/index.json``, every record checked: an object with a ``profile`` (text) and ``notebooks``,
    a list of records each with a plain ``name`` (:func:`plain_name`, not one of :data:`RESERVED`), a
    ``status`` ('ok' or 'failed'), ``seconds`` (a number >= 0), and, where given, a plain ``output_dir``,
    an ``html`` in the notebook's own folder, text ``error``, ``commit`` and ``profile``; no two records
    of one name. FileNotFoundError where there is no index.json; ValueError naming the field otherwise."""
    path = Path(folder) / RECORDS
    if not path.is_file() and not path.is_symlink():
        raise FileNotFoundError(f"{path} does not exist: --take and --rerender each need a report made by "
                                "pcnn-explore reproduce")
    data = _read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the top level must be an object ({{'profile': ..., 'notebooks': [...]}}), got "
                         f"{json.dumps(data)[:60]}: {_FIX}")
    if not isinstance(data.get("profile"), str) or not data["profile"]:
        raise ValueError(f"{path}: profile must be the run's profile (smoke, study or paper), got "
                         f"{data.get('profile', 'nothing')!r}: {_FIX}")
    if not isinstance(data.get("notebooks"), list):
        raise ValueError(f"{path}: notebooks must be a list of records, got {data.get('notebooks', 'nothing')!r}: "
                         f"{_FIX}")
    seen: set[str] = set()
    for i, r in enumerate(data["notebooks"]):
        _check_record(r, path, i)
        if r["name"] in seen:
            raise ValueError(f"{path}: notebooks[{i}].name {r['name']!r} is recorded twice: {_FIX}")
        seen.add(r["name"])
    return data


def read_metrics(path: str | os.PathLike) -> dict:
    """A notebook's ``metrics.json`` at ``path``: a JSON object whose ``main_figure``, where given, is a
    plain file name; ValueError naming the file (and the field) otherwise."""
    path = Path(path)
    data = _read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the top level must be an object, got {json.dumps(data)[:60]}: write it again "
                         "with pcnn_explore.report.write_metrics")
    if data.get("main_figure") is not None:
        plain_name(data["main_figure"], path, "main_figure")
    return data


def real_files_only(folder: str | os.PathLike, what: str) -> None:
    """Raise ValueError when ``folder`` (``what``, in words) is, or holds anywhere, a symbolic link or
    anything but plain files and folders; no link is followed."""
    folder = Path(folder)
    if folder.is_symlink():
        raise ValueError(f"{folder} is a symbolic link: {what} must be a real folder; copy the folder itself there")
    stack = [folder]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for e in entries:
                if e.is_symlink():
                    raise ValueError(f"{e.path} is a symbolic link: {what} must hold real files only; put the file "
                                     "it points to in its place, or remove it")
                if e.is_dir(follow_symlinks=False):
                    stack.append(Path(e.path))
                elif not e.is_file(follow_symlinks=False):
                    raise ValueError(f"{e.path} is not a plain file or folder: {what} must hold real files only; "
                                     "remove it")
