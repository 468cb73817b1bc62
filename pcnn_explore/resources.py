"""Files that ship inside the package: the experiment notebooks and ``data/``.

In a repository checkout the files live in the top-level ``notebooks/`` and ``data/`` folders
(where JupyterLab, the README commands and git see them); ``pcnn_explore/notebooks`` and
``pcnn_explore/data`` are relative symbolic links to them, declared as package data in
``pyproject.toml``, so that a wheel or a non-editable ``pip install .`` copies the files into the
installed package. Code finds them here, through :mod:`importlib.resources`, never relative to
the repository.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["package_dir", "data_path", "notebooks_dir"]


def package_dir() -> Path:
    """The installed ``pcnn_explore`` folder (the checkout's, for an editable install)."""
    root = resources.files("pcnn_explore")
    if not isinstance(root, Path):  # a zipped install: the notebooks need real files
        raise RuntimeError(f"pcnn_explore is installed as {root!r}, not as files on disk; reinstall it with pip")
    return root


def data_path(*parts: str) -> Path:
    """``data/<parts...>`` of the installed package, e.g. ``data_path("episodes", "pong_pixelcnn.npz")``.

    The path is returned whether or not the file exists; the caller reports a missing file.
    """
    return package_dir().joinpath("data", *parts)


def notebooks_dir() -> Path:
    """The folder holding the experiment notebooks ``NN_*.ipynb``."""
    return package_dir() / "notebooks"
