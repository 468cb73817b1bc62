"""Run a sweep's trials (:func:`run_trials`): on this machine without Ray by default, or as Ray tasks
on a cluster, by job:

- :mod:`~pcnn_explore.sweep.trial`: the task of one trial (:func:`~pcnn_explore.sweep.trial.train_trial`,
  one resumable training run in its own folder, retried from its checkpoint when a worker dies);
- :mod:`~pcnn_explore.sweep.plan`: every check before anything is written (settings, folders, shares);
- :mod:`~pcnn_explore.sweep.folders`: a trial's folder (``trial.json``, ``attempt.json``, ``result.json``);
- :mod:`~pcnn_explore.sweep.records`: ``DIR/sweep.json``, every trial with its status, steps and speed;
- :mod:`~pcnn_explore.sweep.executors`: where the trials run (``local`` worker processes, or ``ray``);
- this module: the event loop, which submits the trials, follows their folders and keeps
  ``sweep.json`` and the live view (:mod:`~pcnn_explore.sweep.view`) up to date.

Running the same sweep again skips finished trials and resumes the others. On a cluster, folders
must be on a file system every node sees (the sweep's folder is given to Ray as an absolute path).
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, Sequence

from pcnn_explore.sweep.executors import choose_executor, make_executor
from pcnn_explore.sweep.folders import ATTEMPT_FILE, prepare, read_json, tail_step
from pcnn_explore.sweep.grid import Trial
from pcnn_explore.sweep.plan import check_trials
from pcnn_explore.sweep.records import record, write_sweep
from pcnn_explore.sweep.view import SweepView

__all__ = ["run_trials"]


def run_trials(trials: Sequence[Trial], *, address: str | None = None, executor: str = "auto",
               cpus_per_trial: float = 1.0, gpus_per_trial: float = 0.0, max_retries: int = 3,
               max_concurrent: int | None = None, on_mismatch: str = "error",
               sweep_dir: str | os.PathLike | None = None, view: SweepView | None = None, refresh_s: float = 1.0,
               info: dict | None = None, on_done: Callable[[int], None] | None = None) -> list[dict]:
    """Run ``trials`` and return their records (as in ``sweep.json``), in the given order.

    ``executor`` (:func:`~pcnn_explore.sweep.executors.choose_executor`): ``local`` (worker
    processes on this machine, no Ray), ``ray`` or ``auto``. Every check (settings, folders,
    resources asked for: :func:`~pcnn_explore.sweep.plan.check_trials`) happens before any worker
    starts; finished trials are skipped without starting any. ``max_concurrent`` caps the trials
    running at once (None: local, this machine's CPUs over ``cpus_per_trial``; Ray, as many as the
    cluster's resources allow). A failed trial does not stop the others. On KeyboardInterrupt the
    workers end (Ctrl-C: at once; SIGTERM, raised as :class:`~pcnn_explore.run.interrupt.Terminated`:
    the local executor's workers each checkpoint at the step their trial reached first), the
    running trials are marked queued, and it is raised again. ``on_done(i)`` is called in this process
    as soon as ``trials[i]`` ends done in this sweep (not for trials done before it started), so what a
    finished trial leaves can be kept before the sweep ends, or dies.
    """
    kind = choose_executor(executor, address)
    planned = check_trials(trials, address=address, cpus_per_trial=cpus_per_trial, gpus_per_trial=gpus_per_trial,
                           max_concurrent=max_concurrent, on_mismatch=on_mismatch, executor=kind)
    root = Path(sweep_dir).resolve() if sweep_dir is not None else None
    board = _Board([record(t, s, "done" if fin else "queued", root) for t, s, fin in planned], root, info, view)
    todo = [i for i, (_, _, fin) in enumerate(planned) if not fin]
    # the executor first (a Ray that cannot start is an error before any folder is written)
    pool = (make_executor(kind, address, cpus_per_trial, gpus_per_trial, max_retries, max_concurrent, len(todo))
            if todo else None)
    try:
        for i in todo:
            prepare(*planned[i][:2])
    except BaseException:
        pool.close()
        raise
    board.show()
    if pool is None:
        return board.records
    _run(pool, [s for _, s, _ in planned], todo, board, refresh_s, on_done)
    board.show()
    return board.records


def _run(pool, settings: list[dict], todo: list[int], board: "_Board", refresh_s: float,
         on_done: Callable[[int], None] | None = None) -> None:
    """The event loop: submit the trials ``todo`` as ``pool`` has room, record those that end (and
    call ``on_done`` for each done one), and follow the running ones in their folders, every
    ``refresh_s`` seconds."""
    launched = time.time()
    waiting, running, clock = list(todo), set(), {}
    try:
        while waiting or running:
            while waiting and (pool.capacity is None or len(running) < pool.capacity):
                i = waiting.pop(0)
                pool.submit(i, settings[i])
                running.add(i)
            changed = False
            for i, res, error in pool.wait(refresh_s):
                running.discard(i)
                _ended(board.records[i], res, error)
                changed = True
                if error is None and on_done is not None:
                    on_done(i)
            now = time.time()
            for i in running:
                changed |= _follow(board.records[i], i, launched, clock, now)
            board.tick(changed)
    except KeyboardInterrupt as e:
        from pcnn_explore.run.interrupt import Terminated

        if isinstance(e, Terminated) and hasattr(pool, "stop"):
            pool.stop()  # SIGTERM: each running trial checkpoints at the step it reached, then ends
        else:
            pool.cancel()  # Ctrl-C: at once (each resumes from its last checkpoint)
        for i in running:
            board.records[i]["status"] = "queued"
        board.write()
        raise
    finally:
        pool.close()


def _ended(r: dict, res: dict | None, error: str | None) -> None:
    """A trial's record once its task ended: done (its result), or failed (the error, the steps logged)."""
    if error is None:
        r.update(status="done", steps=res["steps"], steps_per_s=res["steps_per_second"])
    else:
        r.update(status="failed", error=error, steps=tail_step(Path(r["out_dir"]) / "log.csv"))
    r["attempts"] = (read_json(Path(r["out_dir"]) / ATTEMPT_FILE) or {}).get("attempt", r["attempts"])


def _follow(r: dict, i: int, launched: float, clock: dict, now: float) -> bool:
    """A running trial's record from its folder (the attempt, its last logged step, the speed since
    the attempt was first seen, kept in ``clock``); True when its status or attempt changed. An
    attempt started before the sweep was ``launched`` is not this sweep's yet."""
    attempt = read_json(Path(r["out_dir"]) / ATTEMPT_FILE) or {}
    if attempt.get("started", 0) < launched:
        return False
    step = tail_step(Path(r["out_dir"]) / "log.csv")
    changed = r["status"] != "running" or attempt.get("attempt") != r["attempts"]
    if changed:
        r.update(status="running", attempts=attempt.get("attempt", 1))
        clock[i] = (now, step)  # speed: steps logged since this attempt was first seen
    t0, first = clock[i]
    r["steps"] = step
    r["steps_per_s"] = (step - first) / (now - t0) if step > first and now > t0 else None
    return changed


class _Board:
    """The trials' records as they change: ``sweep.json`` (under ``root``, with ``info``'s keys)
    rewritten on a change or every 5 s, and the live view."""

    def __init__(self, records: list[dict], root: Path | None, info: dict | None, view: SweepView | None):
        self.records, self.root, self.extra, self.view = records, root, dict(info or {}), view
        self.last_write = 0.0

    def write(self) -> None:
        write_sweep(self.root, self.records, self.extra)

    def show(self) -> None:
        """``sweep.json`` written and the view redrawn, now."""
        self.write()
        if self.view is not None:
            self.view.update(self.records, force=True)

    def tick(self, changed: bool) -> None:
        """One turn of the event loop: ``sweep.json`` rewritten when a record ``changed`` (else every
        5 s); the view redrawn as often as it redraws."""
        now = time.time()
        if changed or now - self.last_write > 5.0:
            self.write()
            self.last_write = now
        if self.view is not None:
            self.view.update(self.records)
