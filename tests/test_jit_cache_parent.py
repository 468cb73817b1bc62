"""numba's fallback cache folder is not used in a temporary directory that others can write without
the sticky bit: anyone could rename the private folder away and put their own (whose cache files
numba would unpickle) in its place. The kernels then compile in each process, said in one warning
that names the directory (:mod:`pcnn_explore.jit`)."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile

import pytest

from test_readonly_install import SCRIPT, _readonly_copy, _run_as, sandbox  # noqa: F401 - (a fixture)

pytestmark = pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX modes")


@pytest.mark.parametrize("mode, used", [(0o777, False), (0o1777, True), (0o775, False), (0o700, True)])
def test_the_fallback_folder_needs_a_parent_others_cannot_swap_it_in(tmp_path, monkeypatch, mode, used):
    from pcnn_explore import jit

    parent = tmp_path / "tmp"
    parent.mkdir()
    parent.chmod(mode)
    monkeypatch.setattr(tempfile, "tempdir", str(parent))
    folder, why = jit._fallback()
    assert (folder is not None) == used, (oct(mode), folder, why)
    if used:
        assert folder == str(parent / f"pcnn-explore-numba-{os.getuid()}") and why == ""
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    else:
        assert f"the temporary directory {parent} is writable by others without the sticky bit" in why
        assert os.listdir(parent) == []  # (nothing made there)
    assert jit.fallback_cache_dir() == folder


@pytest.mark.slow
def test_a_read_only_install_under_a_tmpdir_without_the_sticky_bit_compiles_without_a_cache(sandbox):  # noqa: F811
    site = _readonly_copy(sandbox)
    home, tmp = sandbox / "home", sandbox / "tmp"
    home.mkdir()
    home.chmod(0o555)
    tmp.mkdir()
    tmp.chmod(0o777)  # (world-writable, no sticky bit)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PCNN_EXPLORE"))}
    env.update(HOME=str(home), TMPDIR=str(tmp), PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1",
               MPLCONFIGDIR=str(sandbox / "mpl"))
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(site)], env=env, cwd=str(sandbox), text=True,
                          capture_output=True, timeout=600, **_run_as())
    assert done.returncode == 0, done.stderr[-3000:]
    assert "PG" in done.stdout
    warning = (f"the temporary directory {tmp} is writable by others without the sticky bit, so a folder there "
               "could be replaced by theirs); kernels are compiled again in each process")
    assert done.stderr.count(warning) == 1 and done.stderr.count("RuntimeWarning") == 1, done.stderr[-3000:]
    assert "numba cannot write its cache" not in done.stderr
    assert not list(tmp.glob("pcnn-explore-numba-*")), "a cache folder was made in a directory others can swap"
