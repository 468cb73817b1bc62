"""Run a sweep's trials: on this machine without Ray by default, or as Ray tasks on a cluster.

Each trial is one resumable training run (:func:`pcnn_explore.run.train`) in its own folder.
Where they run is the executor's choice (:func:`choose_executor`): ``local``, a pool of reused
worker processes on this machine (:mod:`pcnn_explore.sweep.local`; no Ray), or ``ray``, Ray tasks
with ``cpus_per_trial`` CPUs and ``gpus_per_trial`` GPUs (fractions share a device) on a cluster
joined by address or a local Ray (:mod:`pcnn_explore.sweep.ray_cluster`). ``auto`` takes Ray where
a cluster is asked for (``address``, ``$RAY_ADDRESS``) or Ray already runs in this process, else
``local``. The folder holds, besides the run's own files (``log.csv``, ``settings.json``,
``checkpoint.pt``, ``policy.pt``, ``tb/``):

- ``trial.json``: the trial (env, variant, seed, line, overrides) and its resolved settings,
  written (under the folder's run lock, :mod:`pcnn_explore.run.lock`) before the run starts; a
  folder whose stored settings differ from the requested ones is never reused
  (:class:`~pcnn_explore.sweep.grid.SweepError`, naming both), except for more ``steps``: the
  trial then resumes from its checkpoint and runs on;
- ``attempt.json``: the current attempt (its number, process id, host, start time);
- ``result.json``: written when the run has done its steps (a finished trial is skipped).

Fault tolerance: a worker that dies (SIGKILL, a lost node) makes the executor run the trial again
(``max_retries``); the new attempt resumes from the trial's last checkpoint, and the training
run drops the log rows after it, so no log covers a step twice. An attempt that died before the
first checkpoint starts afresh. Running the same sweep again skips finished trials and resumes
the others. ``DIR/sweep.json`` (``{"trials": [...]}``, rewritten atomically as trials change)
lists every trial with its status (queued, running, done, failed), agent steps and speed.
On a cluster, folders must be on a file system every node sees (the sweep's folder is given to
Ray as an absolute path).
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from pcnn_explore.atomic import write_text_atomic
from pcnn_explore.checks import RunError
from pcnn_explore.sweep.grid import SweepError, Trial
from pcnn_explore.sweep.ray_cluster import START_ATTEMPTS, _token_auth, connect, release, start_local  # noqa: F401
from pcnn_explore.sweep.view import SweepView

__all__ = ["TRIAL_FILE", "ATTEMPT_FILE", "RESULT_FILE", "SWEEP_FILE", "PLACEMENT", "START_ATTEMPTS", "EXECUTORS",
           "start_local", "connect", "release", "train_trial", "choose_executor",
           "plan", "check_trials", "run_trials", "read_sweep"]

TRIAL_FILE, ATTEMPT_FILE, RESULT_FILE, SWEEP_FILE = "trial.json", "attempt.json", "result.json", "sweep.json"
#: settings that say where a trial runs, not what it computes: they may differ from the stored ones
PLACEMENT = ("out_dir", "device", "num_threads", "bonus_thread")
_RUN_FILES = ("log.csv", "settings.json", "policy.pt", "tb", RESULT_FILE)
EXECUTORS = ("auto", "local", "ray")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


# ------------------------------------------------------------------------------------ the task
def train_trial(settings: dict) -> dict:
    """Train (or resume) one trial from its resolved settings; runs in a worker of the executor.

    Resumes from ``checkpoint.pt`` when the folder has one, else starts afresh (removing what an
    attempt that died before its first checkpoint left). Holds the folder's lock
    (:mod:`pcnn_explore.run.lock`) throughout: while another attempt still runs in it, this one
    stops (RunError) before it writes or removes anything. Writes ``attempt.json`` first and
    ``result.json`` last; returns the result (agent steps, episodes, wall seconds, steps/s).
    """
    from pcnn_explore.run.config import TrainConfig
    from pcnn_explore.run.lock import RunLock
    from pcnn_explore.run.loop import train
    from pcnn_explore.run.checkpoints import CHECKPOINT

    cfg = TrainConfig(**settings)
    out = Path(cfg.out_dir)
    with RunLock(out) as lock:
        lock.acquire()  # one writer per trial folder: refused while another attempt runs here, before clearing anything
        before = _read_json(out / ATTEMPT_FILE) or {}
        write_text_atomic(out / ATTEMPT_FILE, json.dumps({
            "attempt": int(before.get("attempt", 0)) + 1, "pid": os.getpid(), "host": socket.gethostname(),
            "started": time.time()}) + "\n")
        resume = (out / CHECKPOINT).is_file()
        if not resume:
            for name in _RUN_FILES:
                p = out / name
                shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)
        r = train(cfg, resume=resume, progress=False)  # (holds the same lock: re-entrant)
        result = {"steps": int(r.steps), "episodes": int(r.episodes), "wall_seconds": float(r.wall_seconds),
                  "steps_per_second": float(r.steps_per_second) if r.steps_per_second == r.steps_per_second else None,
                  "resumed": resume, "finished": time.time(), "solved_episode": r.solved_episode}
        lock.check_owner()
        write_text_atomic(out / RESULT_FILE, json.dumps(result) + "\n")
    return result


# ------------------------------------------------------------------------------------ planning
def _stored_settings(out: Path) -> tuple[dict | None, str]:
    """The settings a trial folder holds and where they come from (trial.json, else a run's settings.json)."""
    trial = _read_json(out / TRIAL_FILE)
    if isinstance(trial, dict) and isinstance(trial.get("settings"), dict):
        return trial["settings"], str(out / TRIAL_FILE)
    run = _read_json(out / "settings.json")
    if isinstance(run, dict):
        return run, str(out / "settings.json")
    if any((out / n).exists() for n in ("log.csv", "checkpoint.pt", TRIAL_FILE)):
        return {}, str(out)
    return None, ""


def _differences(stored: dict, wanted: dict) -> list[str]:
    keys = sorted((set(stored) | set(wanted)) - set(PLACEMENT))
    return [f"{k}: stored {stored.get(k, '(none)')!r}, requested {wanted.get(k, '(none)')!r}"
            for k in keys if stored.get(k) != wanted.get(k)]


def _extends(stored: dict, wanted: dict) -> bool:
    """True when ``wanted`` is the stored trial with more ``steps`` and nothing else changed: the
    trial resumes from its checkpoint and runs on (as ``pcnn-explore train --resume --steps N``)."""
    diff = {k for k in (set(stored) | set(wanted)) - set(PLACEMENT) if stored.get(k) != wanted.get(k)}
    old, new = stored.get("steps"), wanted.get("steps")
    return diff == {"steps"} and all(isinstance(v, int) and not isinstance(v, bool) for v in (old, new)) and new > old


def plan(trials: Sequence[Trial], on_mismatch: str = "error") -> list[tuple[Trial, dict, bool]]:
    """Check every trial before anything runs: ``[(trial, resolved settings, finished)]``.

    A folder holding another trial's settings raises :class:`SweepError` naming both
    (``on_mismatch="error"``) or has its run files replaced (``"replace"``, what the notebooks ask).
    A folder holding the same trial with fewer ``steps`` is the trial to extend: it resumes from its
    checkpoint (a larger ``--set steps=N`` on a finished sweep runs its trials on).
    """
    if on_mismatch not in ("error", "replace"):
        raise ValueError(f"on_mismatch must be 'error' or 'replace', got {on_mismatch!r}")
    seen: dict[str, str] = {}
    out = []
    for t in trials:
        key = str(Path(t.out_dir).resolve())
        if key in seen:
            raise SweepError(f"two trials share the folder {key} ({seen[key]} and {t.name}): give each its own")
        seen[key] = t.name
        cfg = t.config()
        wanted = cfg.to_dict()
        folder = Path(t.out_dir)
        if folder.exists() and not folder.is_dir():
            raise SweepError(f"{folder} is a file, not a trial folder: remove it or choose another --out")
        stored, where = _stored_settings(folder)
        finished = False
        if stored is not None:
            diff = _differences(stored, wanted) if stored else ["no readable settings"]
            if _extends(stored, wanted):
                diff = []
            if diff and on_mismatch == "error":
                raise SweepError(f"trial folder {folder} holds other settings than {t.name} asks for "
                                 f"({'; '.join(diff[:6])}{'; ...' if len(diff) > 6 else ''}; stored in {where}): "
                                 "choose another --out, or remove that folder to run it afresh")
            result = _read_json(folder / RESULT_FILE)
            finished = not diff and isinstance(result, dict) and (
                result.get("steps", -1) >= cfg.steps  # a run stopped once solved does no more either
                or (cfg.stop_when_solved and result.get("solved_episode") is not None))
            if diff:
                finished = False
        out.append((t, wanted, finished))
    return out


def _sweep_error(e: RunError) -> SweepError:
    """A run lock's error (``{out_dir}``: the trial's folder) in a sweep's words."""
    return SweepError(e.template.replace("{out_dir}", "trial folder", 1).replace("{out_dir}", "--out"))


def _prepare(t: Trial, settings: dict) -> None:
    """Write the trial's folder and ``trial.json`` (and its extra files); clear a replaced run.
    Holds the folder's run lock meanwhile: a folder another process runs in raises SweepError."""
    from pcnn_explore.run.lock import RunLock
    from pcnn_explore.run.checkpoints import CHECKPOINT

    folder = Path(t.out_dir)
    with RunLock(folder) as lock:
        try:
            lock.acquire()
        except RunError as e:
            raise _sweep_error(e) from None
        stored, _ = _stored_settings(folder)
        if stored is not None and (not stored or _differences(stored, settings)) and not _extends(stored, settings):
            # on_mismatch="replace"
            for name in (*_RUN_FILES, CHECKPOINT, ATTEMPT_FILE):
                p = folder / name
                shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)
        record = {"env": t.env, "variant": t.variant, "seed": t.seed, "line": t.line or t.variant,
                  "profile": t.profile, "overrides": dict(t.overrides), "settings": settings}
        write_text_atomic(folder / TRIAL_FILE, json.dumps(record, indent=1, sort_keys=True) + "\n")
        for name, text in t.files:
            write_text_atomic(folder / name, text)


def _tail_step(log: Path) -> int:
    """The agent step of the last row of a training log (0 if none), reading only its header and end."""
    try:
        with open(log, "rb") as f:
            column = f.readline().decode().strip().split(",").index("step")
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4096))
            tail = f.read().decode(errors="replace")
            # a last line without its end is a row the run did not finish writing (killed mid-write)
            last = tail[:tail.rfind("\n") + 1].strip().splitlines()[-1]
        return int(last.split(",")[column])
    except (OSError, ValueError, IndexError):  # no log yet, or only its header
        return 0


def _record(t: Trial, settings: dict, status: str, sweep_dir: Path | None) -> dict:
    folder = Path(t.out_dir)
    rel = os.path.relpath(folder, sweep_dir) if sweep_dir is not None else t.name
    result = (_read_json(folder / RESULT_FILE) or {}) if status == "done" else {}
    return {"name": t.name, "env": t.env, "variant": t.variant, "seed": t.seed, "line": t.line or t.variant,
            "overrides": dict(t.overrides), "status": status, "out_dir": str(folder), "folder": rel,
            "steps": int(settings["steps"]) if status == "done" else 0, "steps_total": int(settings["steps"]),
            "steps_per_s": result.get("steps_per_second"), "attempts": (_read_json(folder / ATTEMPT_FILE) or {}).get("attempt", 0),
            "error": None}


def read_sweep(sweep_dir: str | os.PathLike) -> list[dict]:
    """The trials of ``DIR/sweep.json`` (SweepError if there is none)."""
    path = Path(sweep_dir) / SWEEP_FILE
    data = _read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("trials"), list):
        raise SweepError(f"no sweep at {sweep_dir}: {path} is missing or unreadable; run pcnn-explore sweep first")
    return data["trials"]


def _write_sweep(sweep_dir: Path | None, records: list[dict], extra: dict) -> None:
    if sweep_dir is None:
        return
    old = _read_json(sweep_dir / SWEEP_FILE)
    mine = {r["folder"] for r in records}
    kept = [r for r in (old or {}).get("trials", []) if isinstance(r, dict) and r.get("folder") not in mine]
    sweep_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(sweep_dir / SWEEP_FILE, json.dumps({**extra, "trials": kept + records}, indent=1) + "\n")


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


def check_trials(trials: Sequence[Trial], *, address: str | None = None, cpus_per_trial: float = 1.0,
                 gpus_per_trial: float = 0.0, max_concurrent: int | None = None,
                 on_mismatch: str = "error", executor: str = "auto") -> list[tuple[Trial, dict, bool]]:
    """Every check :func:`run_trials` makes before it writes anything or starts a worker (the executor,
    the shares asked for, a GPU where one is asked for, each trial's settings and folder: :func:`plan`,
    no other process running in an unfinished trial's folder); writes nothing.

    Returns :func:`plan`'s ``[(trial, resolved settings, finished)]``; raises :class:`SweepError`.
    """
    from pcnn_explore.run.lock import probe

    kind = choose_executor(executor, address)
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
    planned = plan(trials, on_mismatch)
    for t, _, finished in planned:
        if not finished:
            try:
                probe(t.out_dir)
            except RunError as e:
                raise _sweep_error(e) from None
    return planned


def _executor(kind: str, address: str | None, cpus_per_trial: float, gpus_per_trial: float, max_retries: int,
              max_concurrent: int | None, trials: int):
    if kind == "local":
        from pcnn_explore.sweep.local import LocalExecutor, worker_count

        gpus = 0
        if gpus_per_trial > 0:
            import torch

            gpus = torch.cuda.device_count()
        return LocalExecutor(worker_count(trials, max_concurrent, cpus_per_trial, gpus_per_trial, gpus=gpus),
                             max_retries, train_trial)
    from pcnn_explore.sweep.ray_cluster import RayExecutor

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


def run_trials(trials: Sequence[Trial], *, address: str | None = None, executor: str = "auto",
               cpus_per_trial: float = 1.0, gpus_per_trial: float = 0.0, max_retries: int = 3,
               max_concurrent: int | None = None, on_mismatch: str = "error",
               sweep_dir: str | os.PathLike | None = None, view: SweepView | None = None, refresh_s: float = 1.0,
               info: dict | None = None) -> list[dict]:
    """Run ``trials`` and return their records (as in ``sweep.json``), in the given order.

    ``executor`` (:func:`choose_executor`): ``local`` (worker processes on this machine, no Ray),
    ``ray`` or ``auto``. Every check (settings, folders, resources asked for) happens before any
    worker starts; finished trials are skipped without starting any. ``max_concurrent`` caps the
    trials running at once (None: local, this machine's CPUs over ``cpus_per_trial``; Ray, as many
    as the cluster's resources allow). A failed trial does not stop the others. On
    KeyboardInterrupt the workers end, the running trials are marked queued, and it is raised again.
    """
    kind = choose_executor(executor, address)
    planned = check_trials(trials, address=address, cpus_per_trial=cpus_per_trial, gpus_per_trial=gpus_per_trial,
                           max_concurrent=max_concurrent, on_mismatch=on_mismatch, executor=kind)
    root = Path(sweep_dir).resolve() if sweep_dir is not None else None
    records = [_record(t, s, "done" if fin else "queued", root) for t, s, fin in planned]
    extra = dict(info or {})
    todo = [i for i, (_, _, fin) in enumerate(planned) if not fin]
    # the executor first (a Ray that cannot start is an error before any folder is written)
    pool = (_executor(kind, address, cpus_per_trial, gpus_per_trial, max_retries, max_concurrent, len(todo))
            if todo else None)
    try:
        for i in todo:
            _prepare(*planned[i][:2])
    except BaseException:
        pool.close()
        raise
    _write_sweep(root, records, extra)
    if view is not None:
        view.update(records, force=True)
    if pool is None:
        return records
    launched = time.time()
    waiting, running, clock, last_write = list(todo), set(), {}, 0.0
    try:
        while waiting or running:
            while waiting and (pool.capacity is None or len(running) < pool.capacity):
                i = waiting.pop(0)
                pool.submit(i, planned[i][1])
                running.add(i)
            changed = False
            for i, res, error in pool.wait(refresh_s):
                running.discard(i)
                r = records[i]
                if error is None:
                    r.update(status="done", steps=res["steps"], steps_per_s=res["steps_per_second"])
                else:
                    r.update(status="failed", error=error, steps=_tail_step(Path(r["out_dir"]) / "log.csv"))
                r["attempts"] = (_read_json(Path(r["out_dir"]) / ATTEMPT_FILE) or {}).get("attempt", r["attempts"])
                changed = True
            now = time.time()
            for i in running:
                r = records[i]
                attempt = _read_json(Path(r["out_dir"]) / ATTEMPT_FILE) or {}
                if attempt.get("started", 0) < launched:
                    continue
                step = _tail_step(Path(r["out_dir"]) / "log.csv")
                if r["status"] != "running" or attempt.get("attempt") != r["attempts"]:
                    r.update(status="running", attempts=attempt.get("attempt", 1))
                    clock[i] = (now, step)  # speed: steps logged since this attempt was first seen
                    changed = True
                t0, first = clock[i]
                r["steps"] = step
                r["steps_per_s"] = (step - first) / (now - t0) if step > first and now > t0 else None
            if changed or now - last_write > 5.0:
                _write_sweep(root, records, extra)
                last_write = now
            if view is not None:
                view.update(records)
    except KeyboardInterrupt:
        pool.cancel()
        for i in running:
            records[i]["status"] = "queued"
        _write_sweep(root, records, extra)
        raise
    finally:
        pool.close()
    _write_sweep(root, records, extra)
    if view is not None:
        view.update(records, force=True)
    return records
