"""A read-only install (a Docker image with a read-only root, an HPC module) imports and runs: numba's
cache falls back to a private folder in the temporary directory, or to none, with one warning
(:mod:`pcnn_explore.jit`).

The package is copied to a folder nobody can write, HOME points at another such folder, and a
subprocess imports the copy and runs a CTS update and the frame quantiser (both numba kernels). As
root, file modes do not stop writes, so there the subprocess runs without the capabilities that
override them.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import pcnn_explore

PACKAGE = Path(pcnn_explore.__file__).parent

SCRIPT = """
import warnings, sys
warnings.simplefilter("always")
import numpy as np
import pcnn_explore
from pcnn_explore.density.cts import CTSDensity
from pcnn_explore.envs.frames import to_density_frame
assert pcnn_explore.__file__.startswith(sys.argv[1]), pcnn_explore.__file__
model = CTSDensity(2, 2, 4)
before, after = model.update(np.array([[1, 2], [3, 0]], np.uint8))
frame = to_density_frame(np.full((210, 160, 3), 200, np.uint8))
assert frame.shape == (42, 42) and int(frame.max()) == 200 // 32, frame.max()
print("PG", after - before)
"""


def _run_as() -> dict:
    """Arguments for subprocess.run that make file modes bind the child: as root, its capabilities to
    override them (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER) leave its bounding set, so the
    exec'd interpreter has them no more; {} when not root."""
    if not hasattr(os, "getuid") or os.getuid() != 0:
        return {}
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    pr_capbset_drop, caps = 24, (1, 2, 3)

    def drop():
        for cap in caps:
            if libc.prctl(pr_capbset_drop, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) refused")

    probe = subprocess.run(["true"], preexec_fn=drop, check=False) if sys.platform.startswith("linux") else None
    if probe is None or probe.returncode != 0:
        pytest.skip("running as root where capabilities cannot be dropped: file modes cannot be made to bind")
    return {"preexec_fn": drop}


def _readonly_copy(top: Path) -> Path:
    """The package copied under ``top/site`` (without caches), every folder and file read-only."""
    site = top / "site"
    shutil.copytree(PACKAGE, site / "pcnn_explore", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    for path in [site, *site.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o555 if path.is_dir() else 0o444)
    return site


@pytest.fixture
def sandbox():
    """A folder everybody can enter (pytest's tmp_path is closed to other users), removed after."""
    top = Path(tempfile.mkdtemp(prefix="pcnn-readonly-"))
    top.chmod(0o755)
    yield top
    for path in [top, *top.rglob("*")]:
        if not path.is_symlink():
            path.chmod(stat.S_IRWXU)
    shutil.rmtree(top)


def _import_readonly(sandbox: Path, open_private_folder: bool = False) -> subprocess.CompletedProcess:
    """Import the read-only copy with an unwritable HOME and TMPDIR=sandbox/tmp; with
    ``open_private_folder``, the fallback folder there already exists and is open to everybody."""
    site = _readonly_copy(sandbox)
    home = sandbox / "home"
    home.mkdir()
    home.chmod(0o555)
    tmp = sandbox / "tmp"
    tmp.mkdir()
    tmp.chmod(0o1777)
    if open_private_folder:
        folder = tmp / f"pcnn-explore-numba-{os.getuid()}"
        folder.mkdir()
        folder.chmod(0o777)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PCNN_EXPLORE"))}
    env.update(HOME=str(home), TMPDIR=str(tmp), PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1",
               MPLCONFIGDIR=str(tmp / "mpl"))
    return subprocess.run([sys.executable, "-c", SCRIPT, str(site)], env=env, cwd=str(sandbox), text=True,
                          capture_output=True, timeout=600, **_run_as())


@pytest.mark.slow
def test_a_read_only_install_caches_its_kernels_in_a_private_temporary_folder(sandbox):
    done = _import_readonly(sandbox)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "PG" in done.stdout
    assert done.stderr.count("numba cannot write its cache") == 1, done.stderr[-3000:]
    folders = list((sandbox / "tmp").glob("pcnn-explore-numba-*"))
    assert len(folders) == 1 and stat.S_IMODE(folders[0].stat().st_mode) == 0o700
    assert any(folders[0].rglob("*.nbi")), "the compiled kernels were not cached there"


@pytest.mark.slow
def test_a_read_only_install_whose_private_folder_others_can_write_compiles_without_a_cache(sandbox):
    done = _import_readonly(sandbox, open_private_folder=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "PG" in done.stdout
    assert done.stderr.count("kernels are compiled again in each process") == 1, done.stderr[-3000:]
    assert "numba cannot write its cache" not in done.stderr
    assert not any((sandbox / "tmp").rglob("*.nbi")), "a cache was written in a folder others can write"


def test_a_folder_others_can_write_is_not_used(tmp_path, monkeypatch):
    """numba unpickles its cache files, so a shared temporary folder someone else made or opened is refused."""
    from pcnn_explore.jit import fallback_cache_dir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = fallback_cache_dir()
    assert folder is not None and stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    os.chmod(folder, 0o777)
    assert fallback_cache_dir() is None
