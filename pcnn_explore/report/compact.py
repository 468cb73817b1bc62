"""Keep a reproduce report small enough to ship (``pcnn-explore reproduce --compact``).

:func:`compact_notebook` works on one notebook's folder of a report (``OUT/<notebook>/``):

- its training runs (``runs/``) go: the notebook read them into ``metrics.json`` and its figures, and
  ``pcnn-explore reproduce`` run again trains them afresh;
- its executed notebook (``<notebook>.ipynb``) goes: the HTML rendering beside it holds the same
  cells and outputs;
- every PNG figure, as a file and inside the HTML rendering (``data:image/png;base64,...``), is
  stored again with an adaptive palette of at most 256 colours (matplotlib's figures use a few tens
  of colours; antialiased edges lose a little smoothness, nothing a reader can tell), only where that
  makes it smaller.

Files are replaced atomically; a figure Pillow cannot read is left as it is. Once every notebook has
run, ``reproduce --compact`` also moves the CSS each HTML page embeds into one stylesheet the pages
share (:func:`pcnn_explore.report.styles.share_styles`, on the whole report).

:func:`relative_paths` takes the path of the machine that ran a notebook out of what it left behind:
an absolute path ending in the notebook's folder (``/any/where/<notebook>``, the ``output_dir`` an
older ``pcnn-explore reproduce`` gave the notebook) becomes ``.``, the folder itself, in its HTML,
executed notebook and ``metrics.json``. ``pcnn-explore reproduce`` now passes ``output_dir = "."``, so
a new run names no such path in the first place.
"""
from __future__ import annotations

import base64
import io
import os
import re
import shutil
from pathlib import Path

from pcnn_explore.atomic import atomic_write, write_text_atomic

__all__ = ["compact_notebook", "smaller_png", "relative_paths", "machine_path"]

_EMBEDDED_PNG = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=\s]+)")


def smaller_png(data: bytes) -> bytes:
    """``data`` (a PNG) stored with an adaptive palette of at most 256 colours, or ``data`` itself
    when it has a palette already, when that is not smaller, or when Pillow cannot read it."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as img:
            if img.mode == "P":
                return data
            img.load()
            rgba = img.convert("RGBA")
    except (OSError, ValueError, SyntaxError):
        return data
    # quantize keeps alpha with the fast-octree method; opaque figures take the median cut
    if rgba.getextrema()[3][0] == 255:
        small = rgba.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    else:
        small = rgba.quantize(colors=256, method=Image.Quantize.FASTOCTREE)
    buf = io.BytesIO()
    small.save(buf, format="PNG", optimize=True)
    out = buf.getvalue()
    return out if len(out) < len(data) else data


def compact_notebook(folder: str | os.PathLike) -> dict[str, int]:
    """Compact one notebook's report folder (see the module docstring). Returns ``{"before": bytes,
    "after": bytes}`` of the folder."""
    folder = Path(folder)
    before = _size(folder)
    relative_paths(folder)
    shutil.rmtree(folder / "runs", ignore_errors=True)
    for nb in folder.glob("*.ipynb"):
        if nb.with_suffix(".html").is_file():
            nb.unlink()
    for png in folder.rglob("*.png"):
        data = png.read_bytes()
        small = smaller_png(data)
        if small is not data:
            with atomic_write(png, "wb") as f:
                f.write(small)
    for page in folder.glob("*.html"):
        text = page.read_text(encoding="utf-8")

        def shrink(m: re.Match) -> str:
            data = base64.b64decode(re.sub(r"\s", "", m.group(1)))
            small = smaller_png(data)
            return m.group(0) if small is data else "data:image/png;base64," + base64.b64encode(small).decode("ascii")

        new = _EMBEDDED_PNG.sub(shrink, text)
        if new != text:
            write_text_atomic(page, new)
    return {"before": before, "after": _size(folder)}


def machine_path(folder_name: str) -> re.Pattern:
    """The pattern of an absolute path ending in the folder ``folder_name`` (a notebook's stem):
    ``/work/study-out/00_pseudo_counts`` in ``"/work/study-out/00_pseudo_counts/metrics.json"``."""
    return re.compile(r"(?<![\w.~-])/(?:[\w.~+-]+/)*" + re.escape(folder_name) + r"(?![\w.-])")


def relative_paths(folder: str | os.PathLike) -> list[Path]:
    """Replace, in ``folder``'s HTML, .ipynb and metrics.json, every absolute path ending in the
    folder's own name (:func:`machine_path`) by ``.``; returns the files it changed."""
    folder = Path(folder)
    pattern = machine_path(folder.name)
    changed = []
    for f in [*folder.glob("*.html"), *folder.glob("*.ipynb"), *folder.glob("metrics.json")]:
        text = f.read_text(encoding="utf-8")
        new = pattern.sub(".", text)
        if new != text:
            write_text_atomic(f, new)
            changed.append(f)
    return changed


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
