"""``pcnn-explore reproduce``: execute every experiment notebook headlessly and summarise them.

Usage::

    pcnn-explore reproduce                          # smoke profile: plumbing check, ~minutes
    pcnn-explore reproduce --profile study          # CPU-scale results (up to about 45 min an agent notebook, 2 cores)
    pcnn-explore reproduce --profile paper --out runs/paper   # the paper's budgets (GPU)
    pcnn-explore reproduce --only 03                # only notebooks whose name contains "03"
    pcnn-explore reproduce --only "0[1-3]_*"        # or a glob on the file name
    pcnn-explore reproduce --rerender docs/study-report   # no runs: verdicts decided again from stored metrics
    pcnn-explore reproduce --rerender docs/study-report --take /tmp/study-08   # ship a re-run of one notebook
    pcnn-explore reproduce --rerender docs/study-report --take /tmp/study-03 --take-reading torch=/tmp/study-03-torch
                                                    # ship a notebook's runs under both optimizer readings as one

Every ``NN_*.ipynb`` notebook shipped with the package (``notebooks/`` in a checkout; two digits,
an underscore, a name) runs in order with papermill (kernel ``python3``, working directory
``OUT/<notebook stem>``, so nothing is written beside the notebooks), with the injected parameters
``profile`` and ``output_dir = "."`` (that folder, written relative so that no path of the machine
that ran it lands in the notebook, its HTML or its ``metrics.json``). For each notebook the command writes, in
``OUT/<stem>/``: the executed notebook ``<stem>.ipynb``, its HTML rendering ``<stem>.html``, and
whatever the notebook writes there itself (``metrics.json``, figures). ``OUT/index.html``
says at a glance which of the paper's claims the run reproduced: a coloured verdict per notebook
(``summary.verdict``: agrees, partly, differs, inconclusive, not testable at this profile), the paper's claim
and a thumbnail of the main figure (``main_figure`` in metrics.json, else the first PNG), linking
to the notebook's HTML; then the key figures beside the paper's as tables. A smoke run carries a
banner: its numbers mean nothing. ``--only`` merges into an existing index (``OUT/index.json``
keeps one record per notebook) instead of shrinking it to the notebooks just run.

A failing notebook does not stop the others; the command names the notebook and the failing
cell (as numbered in the executed notebook) with the error, and exits with status 1. No
notebooks found is an error (status 2).

metrics.json convention (for every notebook author)
--------------------------------------------------
A notebook writes ``output_dir/metrics.json`` with :func:`pcnn_explore.report.write_metrics`.
Besides free-form keys (always include ``"profile"``), two optional sub-dicts feed the index:

- ``"summary"``: ``{name: value}``, the key figures of this run (numbers or short strings; lists
  and nested dicts render as items and sub-tables, see :mod:`pcnn_explore.report.tables`) and
  ``"verdict"``, which starts with a word of :data:`pcnn_explore.verdicts.VERDICTS` (``agrees``,
  ``partly``, ``differs``, ``inconclusive`` or ``not testable at this profile``) followed by the
  numbers that decide it,
  e.g. ``{"final_loss_online_nats": 412.3, "pixelcnn_pg_variability": 0.21}``;
- ``"paper"``: ``{name: claim}``, the paper's number or claim for the same names where the
  paper gives one, e.g. ``{"pixelcnn_pg_variability": "lower than CTS (Fig. 9)"}``.

The index shows one row per name in ``summary`` with the paper's entry of the same name beside
it (names only in ``paper`` are listed with an empty run value; a dict on either side is a group
with a table of its own, the paper's entries beside this run's of the same names). A top-level
entry holding its own ``summary`` and ``paper`` (07-10's ``atari``) gets a table too. Keep names in the paper's words
and put the unit in the name (``_nats``, ``_frames``). ``"main_figure"``: the file name (in
``output_dir``) of the figure the index shows as a thumbnail.
"""
from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import functools
import json
import os
import re
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from pcnn_explore import resources
from pcnn_explore.atomic import write_text_atomic
from pcnn_explore.profiles import PROFILES, check_profile

__all__ = ["NotebookResult", "find_notebooks", "reproduce", "write_index", "add_arguments", "run_cli",
           "kernel_options", "source_commit", "DEFAULT_NOTEBOOKS", "DEFAULT_KERNEL"]

#: the notebooks shipped with the package (package data; the checkout's notebooks/)
DEFAULT_NOTEBOOKS = resources.notebooks_dir()
DEFAULT_KERNEL = "python3"
_NOTEBOOK_NAME = re.compile(r"^\d\d_.+\.ipynb$")
#: the ``output_dir`` every notebook is given: its working directory, ``OUT/<notebook stem>``, written
#: relative so that the executed notebook, its HTML and its metrics.json name no path of the machine
OUTPUT_DIR = "."
#: the measured study times of docs/study-report (2 CPU cores): the shortest and longest notebook, all 15
STUDY_TIMES = ("a budget of about 45 min for each agent notebook (07-10, 12, 13) on 2 CPU cores, the density "
               "notebooks seconds to minutes each; the shipped report (docs/study-report) gives each one's measured time")


@dataclasses.dataclass
class NotebookResult:
    """The outcome of one notebook run.

    status: "ok" or "failed"; seconds: wall-clock run time; error: one line naming the notebook,
    the failing cell and the exception (None when ok); failed_cell: the execution count of the
    failing cell in the executed notebook (None when unknown or ok).
    """

    name: str
    status: str
    seconds: float
    output_dir: Path
    executed: Path
    html: Path | None
    metrics: dict[str, Any] | None
    error: str | None = None
    failed_cell: int | None = None
    commit: str | None = None  # the kit's commit that ran it (``+changes``: with uncommitted changes); None: not a checkout

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def find_notebooks(notebooks_dir: str | os.PathLike | None = None, only: str | None = None) -> list[Path]:
    """The ``NN_*.ipynb`` notebooks of ``notebooks_dir`` (default: the package's notebooks), in
    order, filtered by ``only`` (a glob on the file name if it holds ``*?[``, else a substring).

    Raises FileNotFoundError when the directory is missing or nothing matches.
    """
    root = Path(notebooks_dir) if notebooks_dir is not None else DEFAULT_NOTEBOOKS
    if not root.is_dir():
        raise FileNotFoundError(
            f"notebook directory {root} does not exist; pass --notebooks DIR (the folder holding "
            "01_*.ipynb, 02_*.ipynb, ...)")
    found = sorted(p for p in root.iterdir() if p.is_file() and _NOTEBOOK_NAME.match(p.name))
    if not found:
        raise FileNotFoundError(f"no notebooks named NN_*.ipynb in {root}; pass --notebooks DIR")
    if only:
        if any(c in only for c in "*?["):
            found = [p for p in found if fnmatch.fnmatch(p.name, only) or fnmatch.fnmatch(p.stem, only)]
        else:
            found = [p for p in found if only in p.name]
        if not found:
            raise FileNotFoundError(f"no notebook in {root} matches --only {only!r}")
    return found


def _check_kernel(kernel_name: str) -> None:
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(kernel_name)
    except NoSuchKernel:
        raise ValueError(f"no Jupyter kernel named {kernel_name!r}; install one with "
                         f"`python -m ipykernel install --user --name {kernel_name}`") from None


def kernel_options() -> dict[str, Any]:
    """Keyword arguments for ``papermill.execute_notebook`` that start and stop the kernel cleanly.

    - Transport encryption: where pyzmq has CurveZMQ and the kernelspec declares it (ipykernel's
      does), the kernel manager provisions keys, so the kernel talks to papermill encrypted and
      does not warn "Kernel is running over TCP without encryption".
    - Shutdown: jupyter_client interrupts a kernel (SIGINT to its process group) before asking it to
      shut down. When papermill is done the kernel is idle, so that signal only hits whatever it
      is finishing (logged as "KeyboardInterrupt caught in kernel.") and its worker processes.
      The kernel manager given here skips it; a kernel that ignores the shutdown request is
      still terminated by jupyter_client after its grace period.
    """
    import zmq
    from traitlets.config import Config

    manager = _idle_shutdown_kernel_manager()
    config = Config()
    if zmq.has("curve") and manager.class_traits(config=True).get("transport_encryption") is not None:
        config.KernelManager.transport_encryption = "auto"  # jupyter_client >= 8.10
    return {"kernel_manager_class": manager, "config": config}


@functools.lru_cache(maxsize=None)
def _idle_shutdown_kernel_manager() -> type:
    from jupyter_client.manager import AsyncKernelManager

    class _IdleShutdownKernelManager(AsyncKernelManager):
        """An AsyncKernelManager whose shutdown does not send SIGINT first (see kernel_options)."""

        async def _async_interrupt_kernel(self) -> None:
            if self.shutting_down:
                return
            await super()._async_interrupt_kernel()

    return _IdleShutdownKernelManager


def source_commit() -> str | None:
    """The short git commit of the checkout the running ``pcnn_explore`` package comes from, with
    ``+changes`` when its tracked files differ from that commit; None outside a git checkout."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def _name_paths_relative(executed: Path, notebook: Path) -> None:
    """The executed notebook's papermill record names its input and output by file name, not by the
    absolute paths of the machine that ran it."""
    import nbformat

    nb = nbformat.read(executed, as_version=4)
    record = nb.metadata.get("papermill")
    if isinstance(record, dict) and (record.get("input_path") or record.get("output_path")):
        record["input_path"], record["output_path"] = notebook.name, executed.name
        write_text_atomic(executed, nbformat.writes(nb))


def _render_html(executed: Path, target: Path) -> Path:
    import nbformat
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(nbformat.read(executed, as_version=4))
    return write_text_atomic(target, body)


#: the names under which a notebook's parameters cell takes the PixelCNN's optimizer reading (the density
#: notebooks' settings call it ``rmsprop``; the agent notebooks', beside DQN's own RMSProp, ``density_optimizer``)
READING_PARAMETERS = ("rmsprop", "density_optimizer")


def reading_parameter(notebook: str | os.PathLike) -> str | None:
    """The name of :data:`READING_PARAMETERS` that ``notebook``'s cell tagged ``parameters`` assigns, or
    None for a notebook whose runs take no PixelCNN optimizer reading."""
    import ast

    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            names = {t.id for node in ast.walk(ast.parse(cell.source)) if isinstance(node, ast.Assign)
                     for t in node.targets if isinstance(t, ast.Name)}
            return next((n for n in READING_PARAMETERS if n in names), None)
    return None


def reading_parameters(notebooks: Sequence[Path], reading: str | None) -> dict[Path, dict[str, str]]:
    """Each notebook's extra papermill parameters for ``reading`` (``{"rmsprop": "torch"}``; none for None:
    each notebook's preset, the paper's tf1). ValueError, before any run, for a reading that is not one of
    :data:`pcnn_explore.study.OPTIMIZER_READINGS` or a notebook that takes none."""
    if reading is None:
        return {nb: {} for nb in notebooks}
    from pcnn_explore.study import OPTIMIZER_READINGS

    if reading not in OPTIMIZER_READINGS:
        raise ValueError(f"--reading must be one of {', '.join(OPTIMIZER_READINGS)}, got {reading!r}")
    names = {nb: reading_parameter(nb) for nb in notebooks}
    without = [nb.stem for nb, name in names.items() if name is None]
    if without:
        raise ValueError(f"--reading {reading}: {', '.join(without)} train(s) no PixelCNN under a named optimizer "
                         f"reading (the parameters cell names none of {', '.join(READING_PARAMETERS)}): choose the "
                         "notebooks with --only")
    return {nb: {name: reading} for nb, name in names.items()}


def _run_one(notebook: Path, out: Path, profile: str, kernel_name: str, commit: str | None = None,
             extra: Mapping[str, str] | None = None) -> NotebookResult:
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    out_dir = (out / notebook.stem).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "metrics.json").unlink(missing_ok=True)  # never report a previous run's figures
    executed = out_dir / notebook.name
    error, failed_cell = None, None
    start = time.perf_counter()
    try:
        pm.execute_notebook(str(notebook), str(executed), kernel_name=kernel_name,
                            parameters={"profile": profile, "output_dir": OUTPUT_DIR, **(extra or {})},
                            cwd=str(out_dir), progress_bar=False, log_output=False, **kernel_options())
    except PapermillExecutionError as exc:
        failed_cell = exc.exec_count
        error = f"{notebook.name}: cell [{exc.exec_count}] raised {exc.ename}: {exc.evalue}"
    except Exception as exc:  # kernel died, could not start, bad notebook file, ...
        error = f"{notebook.name}: {type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - start
    html_path = None
    if executed.is_file():
        try:
            _name_paths_relative(executed, notebook)
            html_path = _render_html(executed, out_dir / f"{notebook.stem}.html")
        except Exception as exc:
            error = error or f"{notebook.name}: HTML rendering failed: {type(exc).__name__}: {exc}"
    metrics = None
    if (out_dir / "metrics.json").is_file():
        try:
            metrics = json.loads((out_dir / "metrics.json").read_text())
        except ValueError as exc:
            error = error or f"{notebook.name}: metrics.json is not valid JSON: {exc}"
    elif error is None:
        error = f"{notebook.name}: ran but wrote no metrics.json in output_dir"
    return NotebookResult(name=notebook.stem, status="failed" if error else "ok", seconds=seconds,
                          output_dir=out_dir, executed=executed, html=html_path, metrics=metrics,
                          error=error, failed_cell=failed_cell, commit=commit)


def write_index(results: Sequence[NotebookResult], out: str | os.PathLike, profile: str, merge: bool = True) -> Path:
    """Write ``out/index.html``: a coloured verdict, the paper's claim and a thumbnail per notebook,
    then its numbers beside the paper's (:mod:`pcnn_explore.report.index`); notebooks recorded by
    an earlier run in ``out`` stay unless ``merge`` is False."""
    from pcnn_explore.report import index

    return index.write_index(results, out, profile, merge=merge)


def reproduce(profile: str = "smoke", only: str | None = None, out: str | os.PathLike | None = None,
              notebooks_dir: str | os.PathLike | None = None, kernel_name: str = DEFAULT_KERNEL,
              progress: bool = True, compact: bool = False, reading: str | None = None) -> list[NotebookResult]:
    """Run the notebooks (see the module docstring) and write ``out/index.html``.

    ``out`` defaults to ``output/reproduce-<profile>`` in the current directory. Returns one
    :class:`NotebookResult` per notebook, in order; failures are results, not exceptions. Bad
    arguments (unknown profile, no notebooks, missing kernel, ``out`` is a file) raise before any
    notebook runs. ``compact``: after each notebook, drop what a shipped report does not need
    (:func:`pcnn_explore.report.compact.compact_notebook`: its training runs and executed .ipynb; its
    figures stored with a 256-colour palette), and after the last one the CSS every page embeds goes into
    one stylesheet they share (:func:`pcnn_explore.report.styles.share_styles`). Each record names the
    commit that ran it. ``reading``: the
    PixelCNN's optimizer reading every notebook runs under (:func:`reading_parameters`; None: each
    notebook's preset, the paper's tf1), e.g. ``"torch"`` for the run that ``--take-reading torch=RUN``
    takes beside the paper reading's.
    """
    from tqdm.auto import tqdm

    check_profile(profile)
    notebooks = find_notebooks(notebooks_dir, only)
    extras = reading_parameters(notebooks, reading)
    out = Path(out) if out is not None else Path("output") / f"reproduce-{profile}"
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file; give a directory")
    _check_kernel(kernel_name)
    out.mkdir(parents=True, exist_ok=True)
    results: list[NotebookResult] = []
    commit = source_commit()
    bar = tqdm(notebooks, desc=f"reproduce ({profile})", unit="notebook", disable=not progress)
    for nb in bar:
        bar.set_postfix_str(nb.name)
        result = _run_one(nb, out, profile, kernel_name, commit, extras[nb])
        if compact:
            from pcnn_explore.report.compact import compact_notebook

            compact_notebook(result.output_dir)
        if not result.ok:
            bar.write(f"FAILED {result.error}")
        results.append(result)
        write_index(results, out, profile)  # the index is current even if a later run is killed
    bar.close()
    write_index(results, out, profile)
    if compact:  # nbconvert's CSS once, in one stylesheet all the notebook pages link
        from pcnn_explore.report.styles import share_styles

        share_styles(out)
    return results


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", choices=PROFILES, default="smoke",
                        help="smoke: plumbing check in seconds per notebook (default); study: CPU-scale "
                             f"results, {STUDY_TIMES}; paper: the paper's budgets (GPU)")
    parser.add_argument("--only", metavar="PATTERN", default=None,
                        help="run only notebooks whose file name contains PATTERN (or matches it as a glob)")
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="output directory (default: output/reproduce-<profile>)")
    parser.add_argument("--notebooks", metavar="DIR", default=None,
                        help=f"folder holding the NN_*.ipynb notebooks (default: {DEFAULT_NOTEBOOKS})")
    parser.add_argument("--kernel", default=DEFAULT_KERNEL, help="Jupyter kernel name (default: python3)")
    parser.add_argument("--rerender", metavar="DIR", default=None,
                        help="run no notebook: decide every verdict of the report in DIR again from its stored "
                             "metrics.json under the current rules and write DIR/index.html and index.json again "
                             "(pcnn_explore.report.rerender)")
    parser.add_argument("--take", metavar="RUN", default=None,
                        help="with --rerender: first take the notebooks of the report in RUN (a reproduce --out RUN "
                             "of some notebooks) into DIR, their folders and records (time, commit) replacing "
                             "DIR's (pcnn_explore.report.rerender.take)")
    parser.add_argument("--take-reading", metavar="READING=RUN", default=None,
                        help="with --take: RUN holds the same notebooks run under the PixelCNN's sensitivity "
                             "optimizer reading (torch=RUN; --take's run is the paper's, tf1): each notebook taken "
                             "carries both readings' decisions, the paper reading's word first "
                             "(pcnn_explore.report.take.joined_metrics)")
    parser.add_argument("--reading", metavar="READING", default=None,
                        help="run the notebooks' PixelCNNs under this optimizer reading (tf1, the paper's and each "
                             "notebook's default, or torch, the sensitivity reading): the run that --take-reading "
                             "torch=RUN takes; refused for a notebook that trains no PixelCNN")
    parser.add_argument("--compact", action="store_true",
                        help="keep a report small enough to ship: drop each notebook's training runs and executed "
                             ".ipynb after it ran (its HTML keeps cells and outputs), store its figures with a "
                             "256-colour palette and, at the end, move the CSS every page embeds into one shared "
                             "stylesheet")


def run_cli(args: argparse.Namespace) -> int:
    import sys

    if getattr(args, "take", None) and not getattr(args, "rerender", None):
        print("pcnn-explore reproduce: error: --take RUN needs --rerender DIR, the report to take it into",
              file=sys.stderr)
        return 2
    reading = getattr(args, "take_reading", None)
    readings = None
    if reading is not None:
        from pcnn_explore.study import OPTIMIZER_READINGS

        name, sep, run = str(reading).partition("=")
        if not getattr(args, "take", None):
            print("pcnn-explore reproduce: error: --take-reading READING=RUN needs --take RUN, the paper reading's "
                  "run", file=sys.stderr)
            return 2
        if not sep or not run or name not in OPTIMIZER_READINGS[1:]:
            print(f"pcnn-explore reproduce: error: --take-reading must be READING=RUN with READING "
                  f"{', '.join(OPTIMIZER_READINGS[1:])} (e.g. torch=/tmp/study-03-torch), got {reading!r}",
                  file=sys.stderr)
            return 2
        readings = {name: run}
    if getattr(args, "rerender", None):
        from pcnn_explore.report.rerender import rerender, take

        try:
            if getattr(args, "take", None):
                print("took " + ", ".join(take(args.take, args.rerender, readings=readings)) + f" into {args.rerender}")
            changes = rerender(args.rerender)
        except (FileNotFoundError, ValueError) as exc:
            print(f"pcnn-explore reproduce: error: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:  # (a take is undone first: the report is as it was)
            print(f"pcnn-explore reproduce: error: {exc}", file=sys.stderr)
            return 1
        for line in changes:
            print(line)
        print(f"{len(changes)} notebook verdict(s) changed; summary: {Path(args.rerender) / 'index.html'}")
        return 0
    try:
        results = reproduce(args.profile, args.only, args.out, args.notebooks, args.kernel,
                            compact=getattr(args, "compact", False), reading=getattr(args, "reading", None))
    except (FileNotFoundError, ValueError) as exc:
        print(f"pcnn-explore reproduce: error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out is not None else Path("output") / f"reproduce-{args.profile}"
    for r in results:
        print(f"{'ok    ' if r.ok else 'FAILED'} {r.name:40s} {r.seconds:8.1f} s"
              + ("" if r.ok else f"  {r.error}"))
    failed = [r for r in results if not r.ok]
    print(f"{len(results) - len(failed)}/{len(results)} notebooks ok; summary: {out / 'index.html'}")
    return 1 if failed else 0
