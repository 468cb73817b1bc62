"""``pcnn-explore reproduce --compact``: a notebook's report folder without its runs and executed
notebook, its figures (files and those inside the HTML) stored smaller and still the same picture;
each record names the commit that ran it."""
from __future__ import annotations

import base64
import io
import re

import numpy as np
import pytest
from PIL import Image

from pcnn_explore.report.compact import compact_notebook, smaller_png
from pcnn_explore.report.reproduce import source_commit


def _figure_png() -> bytes:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 3), dpi=100)
    ax = fig.add_subplot()
    x = np.linspace(0, 6, 200)
    for k in range(4):
        ax.plot(x, np.sin(x + k), label=f"line {k}")
    ax.legend()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _pixels(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as img:
        return np.asarray(img.convert("RGB"), dtype=np.int16)


def test_a_figure_is_stored_smaller_and_looks_the_same():
    data = _figure_png()
    small = smaller_png(data)
    assert len(small) < 0.8 * len(data)
    a, b = _pixels(data), _pixels(small)
    assert a.shape == b.shape and np.abs(a - b).mean() < 2.0  # mean error under 2 of 255 per channel
    assert smaller_png(b"not a png") == b"not a png"


def test_compact_drops_runs_and_the_executed_notebook_and_shrinks_every_figure(tmp_path):
    folder = tmp_path / "07_dqn_pixelcnn"
    (folder / "runs" / "DeepSea-14-v0" / "dqn_s401").mkdir(parents=True)
    (folder / "runs" / "DeepSea-14-v0" / "dqn_s401" / "log.csv").write_text("step\n1\n")
    png = _figure_png()
    (folder / "fig.png").write_bytes(png)
    (folder / "metrics.json").write_text("{}")
    (folder / "07_dqn_pixelcnn.ipynb").write_text("{}")
    embedded = base64.b64encode(png).decode()
    (folder / "07_dqn_pixelcnn.html").write_text(f'<img src="data:image/png;base64,{embedded}"><p>text</p>')
    (folder / "orphan.ipynb").write_text("{}")  # no HTML beside it: kept
    sizes = compact_notebook(folder)
    assert sizes["after"] < sizes["before"]
    assert not (folder / "runs").exists() and not (folder / "07_dqn_pixelcnn.ipynb").exists()
    assert (folder / "orphan.ipynb").exists() and (folder / "metrics.json").read_text() == "{}"
    assert len((folder / "fig.png").read_bytes()) < len(png)
    page = (folder / "07_dqn_pixelcnn.html").read_text()
    inner = base64.b64decode(re.search(r"base64,([A-Za-z0-9+/=]+)", page).group(1))
    assert len(inner) < len(png) and np.abs(_pixels(inner) - _pixels(png)).mean() < 2.0
    assert page.endswith("<p>text</p>")
    assert compact_notebook(folder)["after"] == sizes["after"]  # once is enough: nothing more to shrink
    assert not list(folder.glob(".*.tmp"))


def test_the_commit_of_this_checkout_is_recorded():
    commit = source_commit()
    if commit is None:
        pytest.skip("not a git checkout")
    assert re.fullmatch(r"[0-9a-f]{7,12}(\+changes)?", commit), commit
