"""Starting or resuming a run: :func:`open_run` checks ``out_dir`` for a fresh start or a
resumption (touching nothing), :func:`episode_seed` gives every episode its env seed, so that a
resumed run replays each env's running episode (see :mod:`pcnn_explore.run.envs`). A run that
takes its folder removes the temporary files its own atomic writes left there when a process was
killed mid-write (:func:`stale_temporaries`), and says so in one line.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pcnn_explore.atomic import temporary_names
from pcnn_explore.checkpoint import CorruptFile, load, read_meta
from pcnn_explore.checks import RunError, flag
from pcnn_explore.run.checkpoints import CHECKPOINT, FORMAT, POLICY
from pcnn_explore.run.config import READINGS, RESUMABLE_CHANGES, TrainConfig, backfill, uses_reading
from pcnn_explore.run.log import LOG, truncate_log
from pcnn_explore.run.settings import SETTINGS
from pcnn_explore.run.trace_log import TRACES

__all__ = ["RunError", "Resume", "open_run", "resume_settings", "episode_seed", "RUN_FILES", "stale_temporaries"]

#: the files a run writes in its folder (each atomically, through a temporary ``.NAME.*.tmp`` beside it)
RUN_FILES = (LOG, CHECKPOINT, POLICY, SETTINGS, TRACES)


def stale_temporaries(out: str | os.PathLike) -> list[Path]:
    """The temporary files of the run's own atomic writes in ``out`` (``.checkpoint.pt.*.tmp``, ...,
    only those of :data:`RUN_FILES`): under the folder's lock, what a killed process left."""
    out = Path(out)
    return sorted(p for name in RUN_FILES for p in out.glob(temporary_names(name)) if not p.is_dir())


def episode_seed(seed: int, episode: int) -> int:
    """The env seed of episode ``episode`` (0-based) of a run with seed ``seed``."""
    return int(np.random.SeedSequence([int(seed), int(episode), 0x5EED]).generate_state(1)[0])



@dataclass
class Resume:
    """Where a run starts: ``saved`` is the checkpoint to continue (None: a fresh run); ``finished``
    is True when a resumed run has already done ``cfg.steps`` (nothing to do)."""

    saved: dict | None
    step: int = 0
    finished: bool = False
    stamp: tuple | None = None  # (inode, bytes, mtime ns) of the checkpoint read: unchanged when the run locks its folder
    backfilled: dict | None = None  # settings the checkpoint lacked (saved before they existed) -> the values used

    def backfill_note(self) -> str | None:
        """One line naming the settings back-filled for an older checkpoint (None: none were)."""
        if not self.backfilled:
            return None
        named = ", ".join(f"{k}={'auto' if v is None else v}" for k, v in self.backfilled.items())
        return (f"the checkpoint was saved before these settings existed; resuming with the values its version "
                f"used: {named}")

    def check_unchanged(self, out_dir: str | os.PathLike) -> None:
        """Raise :class:`RunError` when ``out_dir`` changed since :func:`open_run` looked (another run
        wrote there meanwhile); called under the folder's lock, before the first write."""
        out = Path(out_dir)
        if self.saved is None:
            if (out / CHECKPOINT).exists() or (out / LOG).exists():
                raise RunError(f"{out} already holds a training run (written after this run checked it): "
                               "choose another {out_dir}")
        elif _stamp(out / CHECKPOINT) != self.stamp:
            raise RunError(f"cannot resume {out}: its checkpoint changed while this run read it (another run "
                           "wrote it): start again")

    def claim(self, lock, cfg: TrainConfig, step: int, envs) -> None:
        """Take ``cfg.out_dir`` for the run: lock it (creating it; refused, ``envs`` closed, when
        another run holds it or it changed since :func:`open_run` looked), drop the log rows after
        ``step`` (the checkpoint's; a fresh run's log starts empty), remove the temporary files of
        writes cut short (:func:`stale_temporaries`, named in one line), write ``settings.json``.
        From here on a command's signal unwinds it (:meth:`~pcnn_explore.run.interrupt.CommandStop.unwind`)."""
        from pcnn_explore.run.interrupt import active_stop
        from pcnn_explore.run.settings import write_settings

        stop = active_stop()
        if stop is not None:  # (the command writes from here on: a signal unwinds it, to close all it opened)
            stop.unwind()
        out = Path(cfg.out_dir)
        try:
            lock.acquire(lambda: self.check_unchanged(out))  # creates the folder; nothing is written before
        except BaseException:
            envs.close()
            raise
        stale = stale_temporaries(out)
        for path in stale:
            path.unlink(missing_ok=True)
        if stale:
            print(f"removed {len(stale)} temporary file(s) that a write cut short left in {out}: "
                  f"{', '.join(p.name for p in stale)}", flush=True)
        truncate_log(out / LOG, step)
        write_settings(cfg)


def _stamp(path: Path) -> tuple | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _check_writable(out: Path) -> None:
    """Raise :class:`RunError` (naming ``--out``) when ``out`` cannot be created or written."""
    target = out
    while not target.exists() and target != target.parent:
        target = target.parent
    reason = None
    if not target.is_dir():
        reason = f"{target} is a file, not a folder"
    elif hasattr(os, "statvfs") and os.statvfs(target).f_flag & os.ST_RDONLY:
        reason = "read-only file system"
    elif not os.access(target, os.W_OK | os.X_OK):
        reason = "permission denied"
    if reason is not None:
        raise RunError(f"{{out_dir}} {out}: cannot write there ({reason}): choose another {{out_dir}}")


def open_run(cfg: TrainConfig, resume: bool) -> Resume:
    """Check ``cfg.out_dir`` for a fresh start or a resumption; touch nothing. Raises :class:`RunError`.

    Fresh (``resume=False``): the folder must hold no run. Resume: the folder must hold a
    checkpoint whose checksum matches, made with the same settings (up to :data:`RESUMABLE_CHANGES`).
    Either way the folder must be writable and held by no other run (:mod:`pcnn_explore.run.lock`).
    """
    from pcnn_explore.run.lock import probe

    out = Path(cfg.out_dir)
    ckpt = out / CHECKPOINT
    if out.exists() and not out.is_dir():
        raise RunError(f"{out} is a file, not a folder: choose another {{out_dir}}")
    probe(out)  # a live run first: no advice about a folder that a running process holds
    if (out / LOG).exists() and not ckpt.exists():
        raise RunError(f"{out} holds a log but no checkpoint (the run stopped before its first checkpoint, so "
                       "it cannot resume): remove the folder or choose another {out_dir}")
    if not resume:
        if ckpt.exists():
            raise RunError(f"{out} already holds a training run: {{resume}} to continue it, or choose another "
                           "{out_dir}", python={"resume": "pass resume=True"}, cli={"resume": "add --resume"})
        _check_writable(out)
        return Resume(saved=None)
    if not ckpt.is_file():
        what = "does not exist" if not out.exists() else "holds no checkpoint"
        raise RunError(f"cannot resume: {out} {what}; start a fresh run with another {{out_dir}} ({{fresh}})",
                       python={"fresh": "or with resume=False"}, cli={"fresh": "or without --resume"})
    stamp = _stamp(ckpt)
    reason = "corrupt, truncated or of another version"
    try:
        saved = load(ckpt, checksum=True)
        ok = isinstance(saved, dict) and saved.get("format") == FORMAT and isinstance(saved.get("config"), dict)
    except CorruptFile as e:
        ok, reason = False, e.reason
    if not ok:
        raise RunError(f"cannot resume: {ckpt} is not a readable pcnn-explore checkpoint ({reason}); "
                       "start a fresh run with another {out_dir}")
    filled = _check_resumable(saved["config"], cfg)
    step = int(saved["step"])
    check_log(out, saved)
    if step < cfg.steps:
        _check_writable(out)
    return Resume(saved=saved, step=step, finished=step >= cfg.steps, stamp=stamp, backfilled=filled)


def logged_episodes(saved: dict) -> int | None:
    """The rows a run's log holds up to its checkpoint ``saved``: each episode started and not
    running at the checkpoint ended there with one row (None: a checkpoint without the counts)."""
    try:
        running = sum(r is not None for r in saved["running"])
        return int(saved["episodes"]) - running
    except (KeyError, TypeError, ValueError):
        return None


def check_log(out: Path, saved: dict) -> list[dict]:
    """The rows of ``out/log.csv`` up to the checkpoint ``saved``'s step, checked against it: raise
    :class:`RunError` in one line when the log cannot be read (:class:`~pcnn_explore.run.log.LogError`:
    the file and the line) or holds other episodes than the checkpoint counts (emptied, cut short or
    lost: a resumed run would continue a log that misses episodes, and its counts would restart).
    A torn last row is left out with one warning (:func:`~pcnn_explore.run.log.read_rows`)."""
    from pcnn_explore.run.log import read_rows

    path = out / LOG
    step = int(saved["step"])
    rows = [r for r in read_rows(path) if r["step"] <= step] if path.is_file() else []
    want = logged_episodes(saved)
    if want is not None and len(rows) != want:
        what = "is missing" if not path.is_file() else f"holds {len(rows)} episodes up to step {step}"
        raise RunError(f"cannot resume {out}: its log {path} {what} where its checkpoint (step {step}) counts "
                       f"{want} (the log was emptied, cut short or lost): restore log.csv from a copy, or start a "
                       "fresh run with another {out_dir}")
    return rows


def resume_settings(out_dir: str | os.PathLike) -> dict | None:
    """The settings stored with the checkpoint in ``out_dir`` (read from its header, cheaply; None
    if there is no readable one: :func:`open_run` then says why), each setting added since the
    checkpoint was written set to the value that reproduces its version
    (:func:`pcnn_explore.run.config.backfill`)."""
    meta = read_meta(Path(out_dir) / CHECKPOINT)
    config = meta.get("config") if meta else None
    return backfill(dict(config))[0] if isinstance(config, dict) else None


def _check_resumable(saved: dict, cfg: TrainConfig) -> dict:
    """Raise :class:`RunError` unless ``cfg`` is the checkpoint's settings ``saved`` (up to
    :data:`RESUMABLE_CHANGES`); settings the checkpoint lacks take their
    :data:`~pcnn_explore.run.config.SETTINGS_SINCE` values. Returns those (name -> value), but an
    optimizer reading the run does not train under (:func:`~pcnn_explore.run.config.uses_reading`),
    which is neither compared nor named."""
    now = cfg.to_dict()
    saved, filled = backfill(saved)
    unused = {k for k in READINGS if not uses_reading(k, saved)}
    filled = {k: v for k, v in filled.items() if k not in unused}
    diff = sorted(k for k in now if k not in RESUMABLE_CHANGES and k not in unused and saved.get(k) != now[k])
    if diff == ["mapping_rule"]:
        then = saved["mapping_rule"]
        raise RunError(f"cannot resume {cfg.out_dir}: its checkpoint ran DeepSea's {then} action mapping and "
                       f"{{mapping_rule}} {now['mapping_rule']} was asked: {{fix}} to resume, or choose another "
                       "{out_dir} for a fresh run",
                       python={"mapping_rule": "mapping_rule", "fix": f"set mapping_rule={then!r}"},
                       cli={"fix": f"leave --mapping-rule unset (the checkpoint's {then})"})
    readings = [k for k in diff if k in READINGS]
    if readings and readings == diff:  # (both differ: the first named)
        k, then = readings[0], saved[readings[0]]
        raise RunError(f"cannot resume {cfg.out_dir}: its checkpoint trained under the {then} reading of "
                       f"{READINGS[k]} and {{{k}}} {now[k]} was asked: {{fix}} to resume, or choose another "
                       "{out_dir} for a fresh run",
                       python={"fix": f"set {k}={then!r}"}, cli={"fix": f"leave {flag(k)} unset (the checkpoint's {then})"})
    if diff:
        detail = ", ".join(f"{{{k}}}: checkpoint {saved.get(k)!r} vs now {now[k]!r}" for k in diff)
        raise RunError(f"cannot resume {cfg.out_dir}: settings differ from the checkpoint's ({detail}); "
                       "use the checkpoint's settings or another {out_dir}")
    return filled
