"""numba's ``njit`` with an on-disk cache that never stops the package from importing.

Every kernel of the kit (CTS, the frame quantiser, DQN's numpy learn step) is compiled once and
cached on disk so that a new process does not compile again (seconds per module). numba finds a
cache folder at decoration time, that is when the module is imported: next to the source file
(``__pycache__``), else in ``~/.cache/numba``, else ``$NUMBA_CACHE_DIR`` where set. In a read-only
install (a Docker image with a read-only root, an HPC module) with an unwritable HOME, none of
these is writable and ``numba.njit(cache=True)`` raises ``RuntimeError: cannot cache function ...:
no locator available`` at import.

:func:`njit` falls back, with one warning per process, to a private folder in the temporary
directory (``$TMPDIR/pcnn-explore-numba-<uid>``, created with mode 0700 and used only when this
user owns it and nobody else can write to it, since numba's cache files are unpickled when
loaded), and where even that cannot be written, to no cache at all (each process compiles again).
A temporary directory that others can write without the sticky bit (``/tmp`` has it) is not used
either: anyone could rename the private folder away and put one of their own in its place; that
too is said in one warning, naming the directory.
The fallback changes no global numba setting: ``numba.config.CACHE_DIR`` is set only while one
function is decorated, and numba keeps the folder in that function's cache locator.

numba is a dependency of the base install. Where it is missing all the same, the kernels run as the
plain Python they are written in (same values, many times slower), with one warning naming
``pip install numba``; DQN's learn step then takes its torch form (:mod:`pcnn_explore.run.config`).
"""
from __future__ import annotations

import os
import stat
import tempfile
import warnings

try:
    import numba
    from numba.core import config as numba_config
except ModuleNotFoundError:  # a broken install: the kernels run as plain Python (see the module docstring)
    numba = numba_config = None

__all__ = ["njit", "fallback_cache_dir"]

_warned: set[str] = set()  # the fallbacks already announced in this process


def njit(**options):
    """``numba.njit(cache=True, **options)`` that falls back to a writable cache folder, or to none,
    where numba finds no writable place for its cache (see the module docstring)."""

    def decorate(func):
        if numba is None:
            _warn_once("numba", "pcnn-explore: numba is not installed, so the kit's kernels (CTS, the frame "
                                "quantiser) run as plain Python, many times slower; pip install numba")
            return func
        try:
            return numba.njit(cache=True, **options)(func)
        except RuntimeError as err:
            if "no locator available" not in str(err):
                raise
        folder, why = _fallback()
        if folder is not None:
            _warn_once("folder", f"pcnn-explore: numba cannot write its cache next to the package or in HOME; "
                                 f"compiled kernels are cached in {folder} (set NUMBA_CACHE_DIR to choose the place)")
            previous = numba_config.CACHE_DIR
            numba_config.CACHE_DIR = folder
            try:
                return numba.njit(cache=True, **options)(func)
            finally:
                numba_config.CACHE_DIR = previous
        _warn_once("none", f"pcnn-explore: numba finds no writable folder for its cache ({why}); kernels are "
                           "compiled again in each process (set NUMBA_CACHE_DIR to a writable folder to keep them)")
        return numba.njit(cache=False, **options)(func)

    return decorate


def fallback_cache_dir() -> str | None:
    """``$TMPDIR/pcnn-explore-numba-<uid>``, created (mode 0700) where missing; None when it cannot be
    written, or is not this user's own folder closed to others (a folder another user could fill
    would let them plant cache files that numba unpickles), or lies in a temporary directory that
    others can write without the sticky bit (they could put another folder in its place)."""
    return _fallback()[0]


def _fallback() -> tuple[str | None, str]:
    """(:func:`fallback_cache_dir`, why there is none: the words of the warning)."""
    none = "package, HOME and the temporary directory are read-only"
    uid = os.getuid() if hasattr(os, "getuid") else 0
    parent = tempfile.gettempdir()
    folder = os.path.join(parent, f"pcnn-explore-numba-{uid}")
    try:
        if hasattr(os, "getuid"):
            mode = os.stat(parent).st_mode
            if mode & 0o022 and not mode & stat.S_ISVTX:
                return None, (f"package and HOME are read-only, and the temporary directory {parent} is writable by "
                              "others without the sticky bit, so a folder there could be replaced by theirs")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        info = os.stat(folder, follow_symlinks=False)
        if hasattr(os, "getuid") and (info.st_uid != uid or info.st_mode & 0o022 or os.path.islink(folder)):
            return None, none
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return None, none
    return folder, ""


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=3)
