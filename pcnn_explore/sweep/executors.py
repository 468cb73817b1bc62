"""Where a sweep's trials run (:func:`choose_executor`, :func:`make_executor`): ``local``, a pool of
reused worker processes on this machine (:mod:`pcnn_explore.sweep.local`; no Ray), or ``ray``, Ray
tasks with ``cpus_per_trial`` CPUs and ``gpus_per_trial`` GPUs (fractions share a device) on a
cluster joined by address or a local Ray (:mod:`pcnn_explore.sweep.ray_cluster`). ``auto`` takes Ray
where a cluster is asked for (``address``, ``$RAY_ADDRESS``) or Ray already runs in this process,
else ``local``. Either executor has ``submit(key, settings)``, ``wait(timeout)`` (the trials that
ended: ``(key, result, error)``), ``capacity``, ``cancel()`` and ``close()``.
"""
from __future__ import annotations

import os
import sys

from pcnn_explore.sweep.grid import SweepError
from pcnn_explore.sweep.trial import train_trial

__all__ = ["EXECUTORS", "choose_executor", "check_shares", "make_executor"]

EXECUTORS = ("auto", "local", "ray")


def choose_executor(executor: str = "auto", address: str | None = None) -> str:
    """``local`` or ``ray``: the executor named, or for ``auto`` Ray where a cluster is asked for
    (``address``, ``$RAY_ADDRESS``) or Ray is already initialised in this process, else ``local``."""
    if executor not in EXECUTORS:
        raise SweepError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if executor == "local" and address:
        raise SweepError(f"--address {address} joins a Ray cluster, which the local executor does not use: "
                         "leave out --executor local, or --address")
    if executor == "auto":
        ray = sys.modules.get("ray")  # (a Ray this process joined; never imported here)
        joined = ray is not None and callable(getattr(ray, "is_initialized", None)) and ray.is_initialized()
        return "ray" if address or os.environ.get("RAY_ADDRESS") or joined else "local"
    return executor


def check_shares(kind: str, address: str | None, cpus_per_trial: float, gpus_per_trial: float,
                 max_concurrent: int | None) -> None:
    """Refuse (SweepError) shares that are no numbers, more CPUs than this machine has (``local``),
    or a GPU where none can be had (no cluster asked for and no CUDA here)."""
    for name, v, low in (("cpus_per_trial", cpus_per_trial, 0.0), ("gpus_per_trial", gpus_per_trial, -1e-12)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > low:
            raise SweepError(f"{name} must be a {'positive' if low == 0 else 'non-negative'} number, got {v!r}")
    if max_concurrent is not None and (isinstance(max_concurrent, bool) or not isinstance(max_concurrent, int)
                                       or max_concurrent < 1):
        raise SweepError(f"max_concurrent must be a positive integer or None, got {max_concurrent!r}")
    if kind == "local" and cpus_per_trial > (os.cpu_count() or 1):
        raise SweepError(f"each trial asks for {cpus_per_trial:g} CPUs but this machine has {os.cpu_count() or 1}: "
                         "lower --cpus-per-trial, or pass --address of a cluster")
    if gpus_per_trial > 0 and not address and not os.environ.get("RAY_ADDRESS"):
        import torch

        if not torch.cuda.is_available():
            raise SweepError(f"--gpus-per-trial {gpus_per_trial:g} asks for a GPU, but this machine has none: "
                             "leave it out (CPU trials) or pass --address of a cluster with GPUs")


def make_executor(kind: str, address: str | None, cpus_per_trial: float, gpus_per_trial: float, max_retries: int,
                  max_concurrent: int | None, trials: int):
    """The executor ``kind`` (:func:`choose_executor`) for ``trials`` trials of :func:`train_trial`;
    Ray's is connected (SweepError when it cannot start, or its cluster lacks the shares asked for)."""
    if kind == "local":
        from pcnn_explore.sweep.local import LocalExecutor, worker_count

        gpus = 0
        if gpus_per_trial > 0:
            import torch

            gpus = torch.cuda.device_count()
        return LocalExecutor(worker_count(trials, max_concurrent, cpus_per_trial, gpus_per_trial, gpus=gpus),
                             max_retries, train_trial)
    from pcnn_explore.sweep.ray_cluster import START_ATTEMPTS, RayExecutor, connect

    try:
        resources = connect(address)
    except Exception as e:  # noqa: BLE001  (Ray raises a bare Exception when its node misses a start-up deadline)
        if "timed out during startup" not in str(e):
            raise
        raise SweepError(f"the local Ray did not start in time on {START_ATTEMPTS} tries (a loaded machine misses "
                         "Ray's fixed start-up deadlines): run the trials without Ray (--executor local), or start "
                         "Ray yourself (ray start --head) and pass --address auto") from None
    for res, need in (("CPU", cpus_per_trial), ("GPU", gpus_per_trial)):
        if need > 0 and resources.get(res, 0) < need:
            raise SweepError(f"each trial asks for {need:g} {res}(s) but the Ray cluster has "
                             f"{resources.get(res, 0):g}: lower --{res.lower()}s-per-trial or add nodes")
    pool = RayExecutor(train_trial, cpus_per_trial, gpus_per_trial, max_retries)
    pool.capacity = max_concurrent
    return pool
