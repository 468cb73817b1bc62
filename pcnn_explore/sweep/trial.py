"""The task of one trial, run in a worker of the executor: :func:`train_trial`.

Each trial is one resumable training run (:func:`pcnn_explore.run.train`) in its own folder
(:mod:`pcnn_explore.sweep.folders`). Fault tolerance: a worker that dies (SIGKILL, a lost node)
makes the executor run the trial again (``max_retries``); the new attempt resumes from the trial's
last checkpoint, and the training run drops the log rows after it, so no log covers a step twice.
An attempt that died before the first checkpoint starts afresh.
"""
from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from pcnn_explore.atomic import write_text_atomic
from pcnn_explore.sweep.folders import ATTEMPT_FILE, RESULT_FILE, RUN_FILES, clear, read_json

__all__ = ["train_trial"]


def train_trial(settings: dict) -> dict:
    """Train (or resume) one trial from its resolved settings; runs in a worker of the executor.

    Resumes from ``checkpoint.pt`` when the folder has one, else starts afresh (removing what an
    attempt that died before its first checkpoint left). Holds the folder's lock
    (:mod:`pcnn_explore.run.lock`) throughout: while another attempt still runs in it, this one
    stops (RunError) before it writes or removes anything. Writes ``attempt.json`` first and
    ``result.json`` last; returns the result (agent steps, episodes, wall seconds, steps/s).
    """
    from pcnn_explore.run.checkpoints import CHECKPOINT
    from pcnn_explore.run.config import TrainConfig
    from pcnn_explore.run.lock import RunLock
    from pcnn_explore.run.loop import train

    cfg = TrainConfig(**settings)
    out = Path(cfg.out_dir)
    with RunLock(out) as lock:
        lock.acquire()  # one writer per trial folder: refused while another attempt runs here, before clearing anything
        before = read_json(out / ATTEMPT_FILE) or {}
        write_text_atomic(out / ATTEMPT_FILE, json.dumps({
            "attempt": int(before.get("attempt", 0)) + 1, "pid": os.getpid(), "host": socket.gethostname(),
            "started": time.time()}) + "\n")
        resume = (out / CHECKPOINT).is_file()
        if not resume:
            clear(out, RUN_FILES)
        r = train(cfg, resume=resume, progress=False)  # (holds the same lock: re-entrant)
        result = {"steps": int(r.steps), "episodes": int(r.episodes), "wall_seconds": float(r.wall_seconds),
                  "steps_per_second": float(r.steps_per_second) if r.steps_per_second == r.steps_per_second else None,
                  "resumed": resume, "finished": time.time(), "solved_episode": r.solved_episode}
        lock.check_owner()
        write_text_atomic(out / RESULT_FILE, json.dumps(result) + "\n")
    return result
