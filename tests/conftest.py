"""Shared test helpers, and a session-level check that the tests write nothing into the checkout."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from pcnn_explore.resources import notebooks_dir

ROOT = Path(__file__).resolve().parents[1]
#: the notebooks as the package finds them (package data; in a checkout, the top-level notebooks/)
NOTEBOOKS = notebooks_dir()

# Every kernel the tests start (they inherit the environment) and every default_profile() call
# runs the fast smoke profile, whatever the calling shell says.
os.environ["PCNN_EXPLORE_PROFILE"] = "smoke"


def run_notebook(name: str, tmp_path: Path, **parameters) -> dict:
    """Execute ``notebooks/<name>`` with papermill in the smoke profile; return its metrics.json.

    The kernel runs in ``tmp_path/<stem>`` (its working directory and default ``output_dir``), so
    nothing is written beside the notebooks.
    """
    import papermill as pm

    from pcnn_explore.report.reproduce import kernel_options

    out_dir = tmp_path / Path(name).stem
    out_dir.mkdir(parents=True, exist_ok=True)
    params = {"profile": "smoke", "output_dir": str(out_dir), **parameters}
    pm.execute_notebook(
        str(NOTEBOOKS / name),
        str(tmp_path / name),
        parameters=params,
        cwd=str(out_dir),
        kernel_name="python3",
        progress_bar=False,
        **kernel_options(),
    )
    return json.loads((Path(params["output_dir"]) / "metrics.json").read_text())


@pytest.fixture
def notebook_runner(tmp_path):
    return lambda name, **params: run_notebook(name, tmp_path, **params)


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray for one test module: 2 CPUs, no dashboard, its files under /tmp (Ray's default),
    shut down at the end. Notebook kernels started meanwhile join it through ``$RAY_ADDRESS``.
    Started as the sweeps start theirs (``sweep.runner.start_local``: tried again where a loaded
    machine made the node miss Ray's start-up deadlines; token authentication said explicitly)."""
    import logging

    ray = pytest.importorskip("ray")
    from pcnn_explore.sweep.runner import start_local

    if ray.is_initialized():
        ray.shutdown()
    context = start_local(num_cpus=2, logging_level=logging.WARNING, log_to_driver=False)
    before = os.environ.get("RAY_ADDRESS")
    os.environ["RAY_ADDRESS"] = context.address_info["address"]
    try:
        yield ray
    finally:
        ray.shutdown()
        if before is None:
            os.environ.pop("RAY_ADDRESS", None)
        else:
            os.environ["RAY_ADDRESS"] = before


# ------------------------------------------------------------------ nothing written into the tree
# The session records which ignored paths (and which untracked paths under notebooks/ and data/)
# ``git status`` shows before the tests, and fails if the tests left new ones. Caches that may live
# in the checkout are allowed: __pycache__, *.egg-info, .venv, pytest's own .pytest_cache, and
# $PCNN_EXPLORE_CACHE when it points into the checkout (as .ci/run does).
_ALLOWED_PARTS = {".venv", "__pycache__", ".pytest_cache"}


def _allowed(path: str) -> bool:
    parts = Path(path).parts
    if _ALLOWED_PARTS & set(parts) or any(p.endswith(".egg-info") for p in parts):
        return True
    cache = os.environ.get("PCNN_EXPLORE_CACHE")
    if cache:
        # git shows a new ignored folder as its topmost new directory (".cache/" for .cache/pcnn-explore)
        target, cache_dir = (ROOT / path.rstrip("/")).resolve(), Path(cache).resolve()
        return target == cache_dir or cache_dir in target.parents or target in cache_dir.parents
    return False


def _tree_entries() -> set[str] | None:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--ignored", "-z"],
                             capture_output=True, check=True, timeout=60).stdout.decode()
    except (OSError, subprocess.SubprocessError):
        return None  # not a git checkout (e.g. an unpacked sdist): nothing to compare
    entries = set()
    for item in out.split("\0"):
        status, path = item[:2], item[3:]
        if status == "!!" or (status == "??" and path.startswith(("notebooks/", "data/"))):
            if not _allowed(path):
                entries.add(path)
    return entries


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):  # the controller, not an xdist worker
        session.config._tree_before = _tree_entries()


def pytest_sessionfinish(session, exitstatus):
    before = getattr(session.config, "_tree_before", None)
    if before is None:
        return
    after = _tree_entries()
    new = sorted((after or set()) - before)
    if new:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = ("the test run left files in the source tree (tests must write under tmp_path): "
                   + ", ".join(new))
        if reporter is not None:
            reporter.write_line(f"ERROR: {message}", red=True, bold=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
