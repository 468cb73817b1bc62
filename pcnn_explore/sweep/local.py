"""Run a sweep's trials on this machine without Ray: a pool of worker processes, reused across trials.

Each worker is a process of its own (multiprocessing's ``spawn`` context: a fresh interpreter,
nothing copied from the caller) with one torch thread; it runs trials one after another
(the sweep runner passes :func:`pcnn_explore.sweep.trial.train_trial`), so its imports are paid once per worker, not once
per trial. At most ``workers`` exist at once, started as trials need them. The semantics are the
Ray path's (:class:`pcnn_explore.sweep.ray_cluster.RayExecutor`):

- a worker that dies while it runs a trial (SIGKILL, out of memory) is replaced, and the trial runs
  again, up to ``max_retries`` times; the new attempt resumes from the trial's last checkpoint;
- a trial that raises fails alone (its error's last line is reported); its worker goes on;
- :meth:`LocalExecutor.cancel` (the sweep interrupted by Ctrl-C) kills the workers at once: their
  trials resume from their checkpoints when the sweep runs again;
- :meth:`LocalExecutor.stop` (the sweep stopped by SIGTERM) passes SIGTERM on to the workers, each of
  which takes a checkpoint at the step its trial reached and ends (:mod:`pcnn_explore.run.interrupt`;
  a worker that a scheduler sent SIGTERM itself does the same): the trials resume from there when
  the sweep runs again. A worker stopped so while the sweep goes on is replaced, and its trial
  resumes at once, as after a death.

Workers print nothing (their stdout and stderr go to ``os.devnull``, as a Ray worker's output
stays in Ray's logs) and ignore SIGINT (Ctrl-C reaches the whole process group; the sweep ends
them). On Linux a worker is killed when the thread that started it ends (``PR_SET_PDEATHSIG``), so
none outlives a sweep whose process was killed (elsewhere this is not asked for). Every trial uses the GPUs the machine shows
(``CUDA_VISIBLE_DEVICES``); to spread trials over several GPUs, run them on Ray. As with any
``spawn`` pool, a script that runs trials at its top level needs ``if __name__ == "__main__":``
around that code (each worker imports the script that started it).
"""
from __future__ import annotations

import collections
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import time
import traceback
from typing import Callable

__all__ = ["CONTEXT", "LocalExecutor", "worker_count"]

#: multiprocessing start method of the workers (a fresh interpreter: safe with threads, CUDA and notebooks)
CONTEXT = "spawn"
#: seconds :meth:`LocalExecutor.stop` waits for the workers' checkpoints before it kills them
STOP_WAIT_S = 600.0


def worker_count(trials: int, max_concurrent: int | None, cpus_per_trial: float = 1.0,
                 gpus_per_trial: float = 0.0, cpus: int | None = None, gpus: int = 0) -> int:
    """Workers for ``trials`` trials: ``max_concurrent``, else as many as this machine's ``cpus``
    (default ``os.cpu_count()``) hold at ``cpus_per_trial`` each; never more than ``gpus`` hold at
    ``gpus_per_trial`` each (when it is above 0), nor more than there are trials; at least 1."""
    n = max_concurrent if max_concurrent is not None else int((cpus or os.cpu_count() or 1) // cpus_per_trial)
    if gpus_per_trial > 0:
        n = min(n, int(gpus // gpus_per_trial))
    return max(1, min(n, trials))


def _last_line(e: BaseException) -> str:
    lines = [x for x in "".join(traceback.format_exception_only(type(e), e)).strip().splitlines() if x.strip()]
    return lines[-1][:500] if lines else type(e).__name__


def _end_with_parent(parent: int) -> None:
    """Have the kernel kill this process when its parent ends (Linux); elsewhere nothing."""
    if not sys.platform.startswith("linux"):  # (prctl is Linux's; ctypes.CDLL(None) fails on Windows)
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError, TypeError):
        return
    if os.getppid() != parent:  # the parent ended before the call above
        os._exit(1)


def _serve(conn, parent: int, task: Callable[[dict], dict]) -> None:
    """A worker: run ``task(settings)`` for each settings dict received; reply ``("done", result)`` or
    ``("error", last line)``; end on ``None`` or when the pipe closes. SIGTERM ends it: a trial
    running checkpoints at the step reached (``("stopped", its line)``), then the worker ends."""
    from pcnn_explore.run.interrupt import raise_terminated

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, raise_terminated)  # (a trial's run takes it over while it trains)
    _end_with_parent(parent)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    import torch

    torch.set_num_threads(1)
    while True:
        try:
            settings = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):  # (SIGTERM between trials: nothing to save)
            settings = None
        if settings is None:  # nothing to flush or close (each trial closed its files): skip the interpreter's teardown
            os._exit(0)
        try:
            reply = ("done", task(settings))
        except BaseException as e:  # noqa: BLE001  (reported to the sweep; the worker goes on)
            stopped = isinstance(e, KeyboardInterrupt) and getattr(e, "signum", None) == signal.SIGTERM
            reply = ("stopped" if stopped else "error", _last_line(e))
        try:
            conn.send(reply)
        except (OSError, KeyboardInterrupt):
            return
        if reply[0] == "stopped":  # (its files closed, its checkpoint written: the trial resumes from there)
            os._exit(128 + signal.SIGTERM)


class _Worker:
    def __init__(self, ctx, task: Callable[[dict], dict]):
        here, there = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(there, os.getpid(), task), daemon=True,
                                   name="pcnn-explore-trial")
        self.process.start()
        there.close()
        self.conn = here
        self.key: int | None = None  # the trial it runs

    def end(self, kill: bool) -> None:
        if not kill:
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.process.join(10.0)
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.conn.close()


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit status {exitcode}"


class LocalExecutor:
    """``submit`` trials, ``wait`` for the ones that end, ``close`` (or ``cancel``) at the end.

    ``task(settings) -> result`` runs in the workers (a module-level function: the workers import
    it by name). :attr:`capacity` is ``workers``: the trials worth submitting at once (more wait
    in a queue here).
    """

    def __init__(self, workers: int, max_retries: int, task: Callable[[dict], dict]):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        self.capacity, self.max_retries, self._task = workers, max_retries, task
        self._ctx = multiprocessing.get_context(CONTEXT)
        self._workers: list[_Worker] = []
        self._queue: collections.deque[int] = collections.deque()
        self._settings: dict[int, dict] = {}
        self._deaths: dict[int, int] = {}

    @property
    def pids(self) -> list[int]:
        """The process ids of the live workers."""
        return [w.process.pid for w in self._workers]

    def submit(self, key: int, settings: dict) -> None:
        """Queue the trial ``key`` with its resolved settings; it starts as soon as a worker is free."""
        self._settings[key], self._deaths[key] = settings, 0
        self._queue.append(key)
        self._dispatch()

    def _dispatch(self) -> None:
        while self._queue:
            worker = next((w for w in self._workers if w.key is None), None)
            if worker is not None and not worker.process.is_alive():  # died between trials: replace it
                self._workers.remove(worker)
                worker.end(kill=True)
                continue
            if worker is None:
                if len(self._workers) >= self.capacity:
                    return
                worker = _Worker(self._ctx, self._task)
                self._workers.append(worker)
            key = self._queue.popleft()
            try:
                worker.conn.send(self._settings[key])
            except OSError:  # the worker is gone: the trial never reached it
                self._queue.appendleft(key)
                self._workers.remove(worker)
                worker.end(kill=True)
                continue
            worker.key = key

    def wait(self, timeout: float) -> list[tuple[int, dict | None, str | None]]:
        """The trials that ended within ``timeout`` seconds (returns as soon as one does):
        ``(key, result, None)`` or ``(key, None, error)``. A trial whose worker died is run again by
        a new worker (not returned) until its ``max_retries`` are spent, then fails."""
        busy = [w for w in self._workers if w.key is not None]
        if not busy:
            return []
        ready = set(multiprocessing.connection.wait([w.conn for w in busy] + [w.process.sentinel for w in busy],
                                                    timeout))
        ended = []
        for w in busy:
            if w.conn not in ready and w.process.sentinel not in ready:
                continue
            reply = None
            try:
                if w.conn.poll():
                    reply = w.conn.recv()
            except (EOFError, OSError):
                reply = None
            key = w.key
            if reply is not None and reply[0] != "stopped":  # (stopped by SIGTERM: its worker ends, as a death)
                w.key = None
                kind, value = reply
                ended.append((key, value, None) if kind == "done" else (key, None, value))
                del self._settings[key], self._deaths[key]
                continue
            self._workers.remove(w)  # it died mid-trial: a new worker takes its place
            w.end(kill=True)
            self._deaths[key] += 1
            if self._deaths[key] > self.max_retries:
                ended.append((key, None, f"the worker running this trial died ({_death(w.process.exitcode)}) on "
                                         f"each of its {self._deaths[key]} attempts"))
                del self._settings[key], self._deaths[key]
            else:
                self._queue.appendleft(key)  # runs again first, resuming from its checkpoint
        self._dispatch()
        return ended

    def cancel(self) -> None:
        """Kill every worker now; queued and running trials are dropped (they resume later)."""
        self._stop(kill=True)

    def stop(self, wait_s: float = STOP_WAIT_S) -> None:
        """SIGTERM to every worker running a trial: each checkpoints at the step its trial reached
        and ends; wait up to ``wait_s`` seconds for them (a KeyboardInterrupt meanwhile: no longer),
        then kill what still runs. Queued trials are dropped; all resume later from their checkpoints."""
        workers, self._workers = self._workers, []
        self._queue.clear()
        try:
            busy = [w for w in workers if w.key is not None and w.process.is_alive()]
            for w in busy:
                w.process.terminate()  # (SIGTERM)
            deadline = time.monotonic() + wait_s
            for w in busy:
                w.process.join(max(0.0, deadline - time.monotonic()))
        finally:
            for w in workers:
                w.end(kill=w.key is not None)

    def close(self) -> None:
        """End the workers: idle ones stop, any still running a trial are killed (it resumes later)."""
        self._stop(kill=False)

    def _stop(self, kill: bool) -> None:
        workers, self._workers = self._workers, []
        self._queue.clear()
        for w in workers:
            if kill:
                w.process.kill()
        for w in workers:
            w.end(kill=kill or w.key is not None)
