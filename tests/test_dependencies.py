"""The base install (``pip install -e .``, no extra) holds every package the kit needs at run time.

Every module the package or a notebook imports by name must come from a distribution that
pyproject.toml's ``dependencies`` declares; so must the packages numba needs for what the kit
compiles (scipy: numba's ``np.dot``, in DQN's numpy learn step), which no import names.
CI runs the README's first command in a fresh venv without the test extra, which is the end-to-end
check; this test names the missing package at once.
"""
from __future__ import annotations

import ast
import json
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: needed at run time without an import naming them: package -> why
NEEDED_BY_NAME_ONLY = {"scipy": "numba compiles np.dot (DQN's numpy learn step) through scipy's BLAS"}


def _declared() -> set[str]:
    """The distributions pyproject.toml's base ``dependencies`` name, normalised."""
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M).group(1)
    names = re.findall(r'^\s*"([A-Za-z0-9_.\-]+)', block, re.M)
    return {_norm(n) for n in names}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _imports(source: str) -> set[str]:
    tree = ast.parse(source)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def _kit_imports() -> set[str]:
    found = set()
    for path in (ROOT / "pcnn_explore").rglob("*.py"):
        found |= _imports(path.read_text())
    for path in (ROOT / "notebooks").glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                source = "".join(cell["source"])
                found |= _imports("\n".join(l for l in source.splitlines() if not l.lstrip().startswith(("%", "!"))))
    return found


def test_every_module_the_kit_imports_comes_from_a_declared_distribution():
    declared, owners = _declared(), packages_distributions()
    third_party = sorted(m for m in _kit_imports() if m not in sys.stdlib_module_names and m != "pcnn_explore")
    # tomllib is stdlib from 3.11; on 3.10 the kit imports tomli, declared for it
    missing = {m: owners.get(m, ["?"]) for m in third_party
               if not any(_norm(d) in declared for d in owners.get(m, [m]))}
    assert not missing, f"imported but not declared in pyproject.toml's dependencies: {missing}"


def test_what_numba_needs_for_the_kits_kernels_is_declared():
    declared = _declared()
    missing = {name: why for name, why in NEEDED_BY_NAME_ONLY.items() if name not in declared}
    assert not missing, f"add to pyproject.toml's dependencies: {missing}"
