"""One stylesheet for all the notebook pages of a report (``reproduce --compact``, ``reproduce --rerender``).

nbconvert's HTML template puts the same CSS (about 263 KB, in five ``<style>`` blocks of the page's
``<head>``) into every notebook page; a report of 15 notebooks would carry it 15 times.
:func:`share_styles` moves it, for every page ``DIR/<notebook>/*.html`` of the report ``DIR``, into one
file at the report's root named by the hash of its content, ``DIR/report-<12 hex digits>.css``
(:data:`STYLESHEET`: pages rendered by two nbconvert versions each keep their own), and puts in place
of the page's first ``<style>`` block one ``<link rel="stylesheet" href="../report-<hash>.css"/>``; the
other blocks go. The stylesheet is the blocks' CSS text in their order, joined by newlines, so a page
renders as before; nothing else in the page changes, byte for byte.

Only the template's blocks move, told apart by position: the ``<style>`` elements in ``<head>`` (up
to ``</head>`` or ``<body>``, as an HTML parser reads it, so a ``<style>`` written inside a script is
no element). A style that a notebook's output emits sits in ``<body>`` and stays. A page is left as
it is where moving its styles could change how it renders, or where there is nothing to move: it
already links a shared stylesheet; its head holds no ``<style>``; a block carries attributes other
than ``type="text/css"`` (``media``, ...); another stylesheet link lies between two blocks; the CSS
holds ``@import`` or ``@charset`` (valid only at a stylesheet's start) or a relative ``url(...)``
(which a stylesheet one folder up would resolve elsewhere); the page is not UTF-8. The report's own
``index.html`` (written by :mod:`pcnn_explore.report.index`, with a small style of its own, not
nbconvert's) is no notebook page and is left as it is. The stylesheet is UTF-8, without ``@charset``:
a browser reads a linked stylesheet in its page's encoding (``<meta charset="utf-8">`` in nbconvert's).

Idempotent: a second pass changes nothing. Each file is written atomically
(:func:`pcnn_explore.atomic.atomic_write`), the stylesheet before any page that links it, and
afterwards every file of the root named like a shared stylesheet that no page links any longer is
removed. Folders and pages that are symbolic links, and hidden folders (a take's staging folder), are
never read or written.

A notebook folder taken from another report (``reproduce --rerender DIR --take RUN``, a run made with
``--compact``) links the run's stylesheet: :func:`stylesheets_of` names the stylesheets a folder's pages
link, each checked to be a plain file of the run, and :func:`copy_stylesheets` puts those the report lacks
at its root before the folder moves in.
"""
from __future__ import annotations

import hashlib
import os
import re
from html.parser import HTMLParser
from pathlib import Path

from pcnn_explore.atomic import atomic_write, fsync_dir

__all__ = ["STYLESHEET", "share_styles", "linked_stylesheets", "stylesheet_name", "stylesheets_of", "copy_stylesheets"]

#: the name of a report's shared stylesheet (in the report's root): ``report-`` and 12 hex digits of the
#: SHA-256 of its content
STYLESHEET = re.compile(r"report-[0-9a-f]{12}\.css")
_HREF = re.compile(r"\.\./(" + STYLESHEET.pattern + r")")  # a notebook page's link to it, one folder up
_NOT_MOVABLE = re.compile(r"@import|@charset|url\((?!\s*['\"]?(?:[a-zA-Z][a-zA-Z0-9+.-]*:|/|#))", re.I)


class _End(Exception):
    """The head is read: stop parsing."""


class _Head(HTMLParser):
    """The ``<style>`` elements and stylesheet links of a page's ``<head>``, with their offsets in the text."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=False)
        self.text = text
        self.lines = [0] + [m.end() for m in re.finditer("\n", text)]  # offset of each line's start
        self.styles: list[tuple[int, int, int, int, list]] = []  # (start, css start, css end, end, attrs)
        self.links: list[tuple[int, str]] = []  # (offset, href) of each <link rel="stylesheet">
        self.ended = False  # </head> or <body> seen
        self._open: tuple[int, int, list] | None = None

    def _offset(self) -> int:
        line, col = self.getpos()
        return self.lines[line - 1] + col

    def handle_starttag(self, tag, attrs):
        if tag == "body":
            self.ended = True
            raise _End
        at = self._offset()
        if tag == "style":
            self._open = (at, at + len(self.get_starttag_text()), attrs)
        elif tag == "link" and "stylesheet" in (dict(attrs).get("rel") or "").lower().split():
            self.links.append((at, dict(attrs).get("href") or ""))

    def handle_endtag(self, tag):
        if tag == "head":
            self.ended = True
            raise _End
        if tag == "style" and self._open is not None:
            start, css, attrs = self._open
            at = self._offset()
            self.styles.append((start, css, at, self.text.index(">", at) + 1, attrs))
            self._open = None


def _read_head(text: str) -> _Head:
    head = _Head(text)
    try:
        head.feed(text)
        head.close()
    except _End:
        pass
    return head


def linked_stylesheets(text: str) -> list[str]:
    """The names of the shared stylesheets (:data:`STYLESHEET`) that the notebook page ``text`` links
    (``href="../report-<hash>.css"``)."""
    head = _read_head(text)
    return [m.group(1) for _, href in head.links for m in [_HREF.fullmatch(href)] if m]


def stylesheet_name(css: str) -> str:
    """The file name of the shared stylesheet holding ``css``: ``report-`` and 12 hex digits of its SHA-256."""
    return f"report-{hashlib.sha256(css.encode('utf-8')).hexdigest()[:12]}.css"


def _moved(text: str) -> tuple[str, str] | None:
    """(the CSS of the head's ``<style>`` blocks, the page linking it instead), or None for a page left as
    it is (see the module docstring)."""
    head = _read_head(text)
    if not head.ended or not head.styles or any(_HREF.fullmatch(href) for _, href in head.links):
        return None
    if any(k.lower() != "type" or (v or "").lower() != "text/css" for *_, attrs in head.styles for k, v in attrs):
        return None
    first, last = head.styles[0][0], head.styles[-1][3]
    if any(first < at < last for at, _ in head.links):
        return None
    blocks = [text[css:end] for _, css, end, _, _ in head.styles]
    if any(_NOT_MOVABLE.search(b) for b in blocks):
        return None
    css = "\n".join(blocks)
    parts, at = [], 0
    for i, (start, _, _, end, _) in enumerate(head.styles):
        parts.append(text[at:start])
        if i == 0:
            parts.append(f'<link rel="stylesheet" href="../{stylesheet_name(css)}"/>')
        at = end
    parts.append(text[at:])
    return css, "".join(parts)


def _pages(report: Path) -> list[Path]:
    """The notebook pages of the report: ``report/<folder>/*.html``, no link, no hidden folder."""
    return sorted(page for folder in report.iterdir()
                  if folder.is_dir() and not folder.is_symlink() and not folder.name.startswith(".")
                  for page in folder.glob("*.html") if page.is_file() and not page.is_symlink())


def _write(path: Path, data: bytes) -> None:
    with atomic_write(path, "wb") as f:
        f.write(data)


def share_styles(report: str | os.PathLike) -> dict[str, list[Path]]:
    """Move the head styles of every notebook page of the report folder ``report`` into one shared
    stylesheet at its root (see the module docstring). Returns ``{"pages": the pages rewritten,
    "written": the stylesheets written, "removed": the stylesheets no page links any longer, removed}``."""
    report = Path(report)
    rewritten: dict[Path, bytes] = {}
    sheets: dict[str, str] = {}
    linked: set[str] = set()
    for page in _pages(report):
        data = page.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:  # (left as it is; the stylesheet it may link stays)
            linked.update(linked_stylesheets(data.decode("utf-8", "replace")))
            continue
        moved = _moved(text)
        if moved is None:
            linked.update(linked_stylesheets(text))
            continue
        css, new = moved
        name = stylesheet_name(css)
        sheets[name] = css
        linked.add(name)
        rewritten[page] = new.encode("utf-8")
    written = []
    for name, css in sorted(sheets.items()):  # every stylesheet on disk before a page links it
        path, data = report / name, css.encode("utf-8")
        if path.is_symlink() or not path.is_file() or path.read_bytes() != data:
            _write(path, data)
            written.append(path)
    for page, data in rewritten.items():
        _write(page, data)
    removed = [p for p in sorted(report.iterdir()) if STYLESHEET.fullmatch(p.name) and p.name not in linked
               and (p.is_symlink() or p.is_file())]
    for p in removed:
        p.unlink()
    if removed:
        fsync_dir(report)
    return {"pages": list(rewritten), "written": written, "removed": removed}


def stylesheets_of(folder: str | os.PathLike, root: str | os.PathLike) -> dict[str, Path]:
    """{name: path in ``root``} of the shared stylesheets that the pages of the notebook folder ``folder``
    (in the report ``root``) link; ValueError for one that is not a plain file there."""
    folder, root = Path(folder), Path(root)
    found = {}
    for page in sorted(folder.glob("*.html")):
        for name in linked_stylesheets(page.read_bytes().decode("utf-8", "replace")):
            path = root / name
            if path.is_symlink() or not path.is_file():
                what = "a symbolic link" if path.is_symlink() else "missing"
                raise ValueError(f"{page} links the stylesheet {path}, which is {what}: put the run's stylesheet back "
                                 "there (reproduce --compact wrote it beside the notebook folders), or run it again")
            found[name] = path
    return found


def copy_stylesheets(sheets: dict[str, Path], report: str | os.PathLike, added: list[Path]) -> None:
    """Copy each stylesheet of ``sheets`` (:func:`stylesheets_of`) that the report ``report`` lacks into
    its root (atomically), appending each one written to ``added`` (so a caller that fails later can
    remove them)."""
    report = Path(report)
    for name, path in sorted(sheets.items()):
        if not (report / name).is_file():
            _write(report / name, path.read_bytes())
            added.append(report / name)
