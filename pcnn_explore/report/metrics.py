"""What a notebook leaves behind: ``metrics.json`` and the paper-versus-this-run table."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from pcnn_explore.atomic import write_text_atomic


def _plain(value: Any) -> Any:
    """Numpy scalars/arrays -> Python; non-finite floats -> None (JSON has no NaN)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_metrics(output_dir: str | os.PathLike, metrics: Mapping[str, Any]) -> Path:
    """Write ``output_dir/metrics.json`` atomically (:func:`pcnn_explore.atomic.write_text_atomic`,
    mode ``0666 & ~umask`` like every other output) and return its path.

    Non-finite floats become ``null``; numpy values become plain Python values.
    """
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "metrics.json"
    text = json.dumps(_plain(metrics), indent=2, sort_keys=True, allow_nan=False)
    return write_text_atomic(path, text + "\n")


def read_metrics(output_dir: str | os.PathLike) -> dict[str, Any]:
    return json.loads((Path(output_dir) / "metrics.json").read_text())


def paper_vs_run(rows: list[tuple[str, str, str]]) -> str:
    """Format ``(quantity, paper, this run)`` rows as an aligned text table for a notebook."""
    header = ("quantity", "paper", "this run")
    table = [header, *[(str(a), str(b), str(c)) for a, b, c in rows]]
    widths = [max(len(r[i]) for r in table) for i in range(3)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)) for r in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
