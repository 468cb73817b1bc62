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


# ------------------------------------------------------------------ one local Ray for the session
# Ray's node misses its start-up deadlines on a loaded 2-core machine (its raylet gives the dashboard
# agent a fixed 15 s), and the test workers are the load. So the controller starts the session's
# Ray in a process of its own (tests/ray_holder.py, as a sweep starts one) before the workers start,
# where the selected tests include a module that uses Ray, and hands its address to the workers
# through the environment. A worker without one (a run of one module, -p no:xdist) starts its own.
_RAY_MODULES = ("test_sweep.py", "test_notebooks_agents.py", "test_sweep_ray.py")
_RAY_CPUS = 4  # two modules' trials at once, as when each module started a 2-CPU Ray
_RAY_ADDRESS_VAR, _RAY_HOME_VAR = "PCNN_EXPLORE_TEST_RAY_ADDRESS", "PCNN_EXPLORE_TEST_RAY_HOME"


class RayHolder:
    """A local Ray in a process of its own (``tests/ray_holder.py``), with ``home`` as its HOME (Ray
    keeps the cluster's token in ``home/.ray/auth_token``) and its stderr in ``home/stderr.txt``."""

    def __init__(self, address: str, home: Path, process: subprocess.Popen | None = None):
        self.address, self.home, self._process = address, Path(home), process

    @property
    def token(self) -> Path:
        return self.home / ".ray" / "auth_token"

    @property
    def stderr(self) -> str:
        return (self.home / "stderr.txt").read_text()

    @classmethod
    def start(cls, home: Path, num_cpus: int = _RAY_CPUS, timeout: float = 600.0) -> "RayHolder":
        import selectors
        import sys
        import time

        home.mkdir(parents=True, exist_ok=True)
        env = cls.environment_without_ray()
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        with open(home / "stderr.txt", "w") as err:
            process = subprocess.Popen([sys.executable, str(ROOT / "tests" / "ray_holder.py"), str(num_cpus)],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                                       env={**env, "HOME": str(home)}, start_new_session=True)
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while process.poll() is None and time.monotonic() < deadline and not selector.select(timeout=1.0):
            pass
        line = process.stdout.readline().strip() if process.poll() is None else ""
        if not line:
            process.kill()
            process.wait()
            raise RuntimeError(f"the test session's local Ray did not start: {(home / 'stderr.txt').read_text()[-2000:]}")
        return cls(line, home, process)

    @classmethod
    def from_environment(cls) -> "RayHolder | None":
        address = os.environ.get(_RAY_ADDRESS_VAR)
        return cls(address, Path(os.environ[_RAY_HOME_VAR])) if address else None

    def export(self) -> None:
        os.environ[_RAY_ADDRESS_VAR], os.environ[_RAY_HOME_VAR] = self.address, str(self.home)

    @staticmethod
    def environment_without_ray() -> dict[str, str]:
        """This process's environment less what joins a Ray (the keys of :meth:`join_environment`)."""
        return {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN_PATH")}

    def join_environment(self) -> dict[str, str]:
        """What a process (this one, a kernel, a CLI run) needs in its environment to join this Ray."""
        return {"RAY_ADDRESS": self.address, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(self.token)}

    def close(self) -> None:
        if self._process is None or self._process.poll() is not None:
            return
        self._process.stdin.close()  # the holder shuts its Ray down and exits
        try:
            self._process.wait(120)
        except subprocess.TimeoutExpired:
            os.killpg(self._process.pid, 9)
            self._process.wait()


def _selects_a_ray_module(config) -> bool:
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::")[0])
        if path.is_dir() and any(next(path.rglob(m), None) for m in _RAY_MODULES) or path.name in _RAY_MODULES:
            return True
    return False


def pytest_configure(config):
    # The controller (or a run without xdist), before any test worker starts.
    if hasattr(config, "workerinput") or RayHolder.from_environment() is not None:
        return
    if not _selects_a_ray_module(config) or config.option.collectonly:
        return
    import importlib.util
    import shutil
    import tempfile

    if importlib.util.find_spec("ray") is None:
        return
    home = Path(tempfile.mkdtemp(prefix="pcnn-explore-test-ray-"))
    try:
        holder = RayHolder.start(home)
    except RuntimeError:  # the workers that need Ray start their own (session_ray), whose error says why
        shutil.rmtree(home, ignore_errors=True)
        return
    holder.export()
    config._ray_holder = holder


def pytest_unconfigure(config):
    holder = getattr(config, "_ray_holder", None)
    if holder is not None:
        import shutil

        holder.close()
        shutil.rmtree(holder.home, ignore_errors=True)
        for var in (_RAY_ADDRESS_VAR, _RAY_HOME_VAR):
            os.environ.pop(var, None)


@pytest.fixture(scope="session")
def session_ray(tmp_path_factory):
    """The session's local Ray (:class:`RayHolder`): the controller's, or one this worker starts."""
    pytest.importorskip("ray")
    holder = RayHolder.from_environment()
    if holder is not None:
        yield holder
        return
    holder = RayHolder.start(tmp_path_factory.mktemp("ray-home"))
    try:
        yield holder
    finally:
        holder.close()


@pytest.fixture(scope="module")
def ray_cluster(session_ray):
    """This process joined to the session's local Ray for one test module (Ray's CPUs are shared with
    the other modules that use it). Notebook kernels started meanwhile join it through the environment
    (``$RAY_ADDRESS`` and the cluster's token)."""
    import logging

    import ray

    from pcnn_explore.sweep.ray_cluster import _token_auth, init, shutdown

    if ray.is_initialized():
        shutdown()
    joined = session_ray.join_environment()
    before = {k: os.environ.get(k) for k in joined}
    os.environ.update({k: v for k, v in joined.items() if k != "RAY_AUTH_MODE"})
    os.environ.pop("RAY_AUTH_MODE", None)
    _token_auth()  # RAY_AUTH_MODE=token, and this process's Ray config reads it and the token path again
    init(address=session_ray.address, logging_level=logging.WARNING, log_to_driver=False)
    try:
        yield ray
    finally:
        shutdown()  # and SIGTERM's handler from before Ray's init is back
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


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
