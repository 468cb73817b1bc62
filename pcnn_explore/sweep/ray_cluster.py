"""Ray for sweeps on a cluster: start or join Ray, and run a sweep's trials as Ray tasks.

:func:`connect` joins a running cluster (``address``, ``$RAY_ADDRESS``) or starts a local Ray
(:func:`start_local`); :class:`RayExecutor` runs trials as Ray tasks with ``cpus_per_trial`` CPUs and
``gpus_per_trial`` GPUs each (fractions share a device), and Ray runs a task again, up to
``max_retries`` times, when its worker dies. The sweep runner (:mod:`pcnn_explore.sweep.executors`)
uses it for clusters; on one machine it runs trials without Ray (:mod:`pcnn_explore.sweep.local`).

A local Ray (:func:`start_local`) runs with token authentication, as Ray chooses for a new local
cluster, said explicitly (``RAY_AUTH_MODE=token``) so that Ray does not warn that it chose it; a
start that timed out on a loaded machine is tried again (:data:`START_ATTEMPTS`).
Ray's ``init`` takes SIGTERM over in the driver and its ``shutdown`` leaves that handler in place;
:func:`shutdown` gives back the handler that was there before (so a run trained in the same process
afterwards takes SIGTERM over and checkpoints, :mod:`pcnn_explore.run.ctrl_c`).
Ray is imported only when one of these functions runs.
"""
from __future__ import annotations

import logging
import os
import signal
import threading
import time
from typing import Callable

__all__ = ["START_ATTEMPTS", "init", "shutdown", "start_local", "connect", "release", "RayExecutor"]

#: tries at starting a local Ray: on a loaded machine its node can miss Ray's fixed start-up deadlines
#: (the raylet waits 15 s for its dashboard agent's ports and then aborts, the driver 30 s for the
#: raylet; in Ray 2.60 neither moves with ``RAY_agent_register_timeout_ms``). A quiet 2-core machine
#: starts one in about 14 s; with five busy processes beside it the agent took 25 s and every try failed.
START_ATTEMPTS = 3


_SIGTERM_BEFORE_RAY = None  # the SIGTERM handler before this process's first ray.init (None: no init yet)


def init(**options):
    """``ray.init(**options)``, remembering the SIGTERM handler in place before it (Ray's init sets
    its own in the main thread) for :func:`shutdown` to give back."""
    import ray

    global _SIGTERM_BEFORE_RAY
    if _SIGTERM_BEFORE_RAY is None and threading.current_thread() is threading.main_thread():
        _SIGTERM_BEFORE_RAY = signal.getsignal(signal.SIGTERM)
    return ray.init(**options)


def shutdown() -> None:
    """``ray.shutdown()``, then the SIGTERM handler from before :func:`init` is back."""
    import ray

    global _SIGTERM_BEFORE_RAY
    ray.shutdown()
    if _SIGTERM_BEFORE_RAY is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _SIGTERM_BEFORE_RAY)
        _SIGTERM_BEFORE_RAY = None


def _token_auth() -> None:
    """Say ``RAY_AUTH_MODE=token`` where Ray would choose token authentication itself (a new local
    cluster; joining with a token at hand), so that it does not warn that it chose it; a mode the
    user set stays. Ray then makes the cluster's token (``~/.ray/auth_token``) if there is none."""
    if "RAY_AUTH_MODE" in os.environ:
        return
    os.environ["RAY_AUTH_MODE"] = "token"  # workers, and notebook kernels joining this Ray, inherit it
    try:
        from ray._raylet import Config

        Config.initialize("")  # this process's Ray config reads the mode again (as Ray does when it chooses it)
    except (ImportError, AttributeError):  # another Ray: it reads the environment when it starts
        pass


def _has_token() -> bool:
    try:
        from ray._raylet import AuthenticationTokenLoader

        return bool(AuthenticationTokenLoader.instance().has_token(ignore_auth_mode=True))
    except (ImportError, AttributeError, TypeError):
        return False


def _descendants() -> set[int]:
    """The process ids under this process (Linux ``/proc``; empty elsewhere)."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, ppid in parent.items() if ppid in frontier} - found
        found |= frontier
    return found


def start_local(num_cpus: int | None = None, num_gpus: int | None = None, **options):
    """``ray.init`` of a new local Ray (no dashboard, token authentication), tried up to
    :data:`START_ATTEMPTS` times: the processes of a start that timed out are ended (before the next).
    Returns Ray's context (``.address_info["address"]``: the address others join)."""
    _token_auth()
    for attempt in range(1, START_ATTEMPTS + 1):
        before = _descendants()
        try:
            return init(num_cpus=num_cpus, num_gpus=num_gpus, include_dashboard=False, **options)
        except Exception as e:  # noqa: BLE001  (Ray raises a bare Exception when its node misses a deadline)
            if "timed out during startup" not in str(e):
                raise
            shutdown()
            for pid in _descendants() - before:  # this start's GCS, raylet, agents, monitors
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if attempt == START_ATTEMPTS:
                raise
            time.sleep(2.0 * attempt)


def connect(address: str | None = None, num_cpus: int | None = None, num_gpus: int | None = None) -> dict:
    """Start or join Ray (once per process) and return the cluster's resources.

    ``address``: ``auto`` or ``HOST:PORT`` of a running cluster; None: ``$RAY_ADDRESS`` if set,
    else a local Ray with this machine's CPUs and GPUs (or ``num_cpus``/``num_gpus``), no dashboard
    (:func:`start_local`).
    """
    import ray

    global _STARTED_LOCAL
    if not ray.is_initialized():
        quiet = dict(logging_level=logging.WARNING, log_to_driver=False)
        if address or os.environ.get("RAY_ADDRESS"):
            if address in (None, "auto") and _has_token():
                _token_auth()  # Ray would turn token authentication on here, and warn that it did
            init(address=address, **quiet)
        else:
            start_local(num_cpus, num_gpus, **quiet)
            _STARTED_LOCAL = True
    return ray.cluster_resources()


_STARTED_LOCAL = False  # this process started a local Ray (connect), which release() stops


def release() -> None:
    """Stop the local Ray this process started, if any (a cluster joined by address stays up).

    Notebooks call it when their runs are done, so that the kernel exits without Ray: a kernel
    stopped while Ray runs gets SIGTERM and Ray's signal handler prints a stack dump."""
    global _STARTED_LOCAL
    if _STARTED_LOCAL:
        shutdown()
        _STARTED_LOCAL = False


class RayExecutor:
    """A sweep's trials as Ray tasks on the Ray this process joined (:func:`connect`).

    ``task(settings) -> result`` runs in a Ray worker with ``cpus_per_trial`` CPUs and
    ``gpus_per_trial`` GPUs; a worker that dies makes Ray run the task again (``max_retries``); an
    exception the task raises is not retried. :attr:`capacity` None: as many trials at once as the
    cluster's resources allow.
    """

    capacity = None

    def __init__(self, task: Callable[[dict], dict], cpus_per_trial: float, gpus_per_trial: float, max_retries: int):
        import ray

        self._ray = ray
        self._remote = ray.remote(task).options(num_cpus=cpus_per_trial, num_gpus=gpus_per_trial,
                                                max_retries=max_retries, retry_exceptions=False)
        self._running: dict = {}  # Ray object ref -> the caller's key of the trial

    def submit(self, key: int, settings: dict) -> None:
        """Start the trial ``key`` with its resolved settings."""
        self._running[self._remote.remote(settings)] = key

    def wait(self, timeout: float) -> list[tuple[int, dict | None, str | None]]:
        """The trials that ended within ``timeout`` seconds: ``(key, result, None)`` or ``(key, None, error)``,
        the error being the last line of the task's exception (its retries spent, for a dead worker)."""
        if not self._running:
            return []
        ready, _ = self._ray.wait(list(self._running), num_returns=len(self._running), timeout=timeout)
        ended = []
        for ref in ready:
            key = self._running.pop(ref)
            try:
                ended.append((key, self._ray.get(ref), None))
            except Exception as e:  # noqa: BLE001  (RayTaskError, WorkerCrashedError after the retries)
                lines = [x for x in str(e).strip().splitlines() if x.strip()]
                ended.append((key, None, lines[-1][:500] if lines else type(e).__name__))
        return ended

    def cancel(self) -> None:
        """End the running trials now (their workers are killed; each resumes from its checkpoint later)."""
        for ref in self._running:
            self._ray.cancel(ref, force=True)
        self._running.clear()

    def close(self) -> None:
        """Nothing to end: the Ray this process started stops with :func:`release`."""
