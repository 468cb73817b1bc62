"""Every notebook's ``parameters`` cell is what papermill sees.

``papermill --help-notebook`` (and ``-p NAME VALUE``) only know the names papermill's own parser
finds in the cell; an apostrophe in a comment once hid every parameter after it. Here each name
the cell assigns (read with Python's parser) must be among papermill's inferred parameters, and
the command-line help must run and list them. No kernel starts.
"""
from __future__ import annotations

import ast

import nbformat
import pytest
from click.testing import CliRunner
from papermill.cli import papermill as papermill_cli
from papermill.inspection import inspect_notebook

from pcnn_explore.resources import notebooks_dir

NOTEBOOK_PATHS = sorted(notebooks_dir().glob("[0-9][0-9]_*.ipynb"))


def _assigned_names(path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{path.name}: {len(cells)} cells tagged 'parameters', want 1"
    tree = ast.parse(cells[0].source)
    return [t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)]


def test_every_notebook_is_checked():
    # every shipped notebook, numbered 00, 01, ... without a gap (counted, not a pasted number)
    assert [int(p.name[:2]) for p in NOTEBOOK_PATHS] == list(range(len(NOTEBOOK_PATHS)))
    assert len(NOTEBOOK_PATHS) >= 15 and NOTEBOOK_PATHS[-1].name == "14_deep_sea_scaling.ipynb"


@pytest.mark.parametrize("path", NOTEBOOK_PATHS, ids=lambda p: p.stem)
def test_papermill_infers_every_parameter(path):
    names = _assigned_names(path)
    assert {"profile", "output_dir", "seed"} <= set(names)  # what `pcnn-explore reproduce` injects, and the seed
    inferred = inspect_notebook(str(path))
    assert list(inferred) == names
    result = CliRunner().invoke(papermill_cli, ["--help-notebook", str(path)])
    assert result.exit_code == 0, result.output
    for name in names:
        assert f"  {name}: " in result.output, f"{name} missing from papermill --help-notebook"
