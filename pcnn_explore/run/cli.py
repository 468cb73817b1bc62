"""``pcnn-explore train``: a flag for every :class:`TrainConfig` field, generated from the dataclass.

Each field ``name`` becomes ``--name-with-dashes`` (plus the short aliases ``--mmc`` and ``--out``),
typed and bounded by the same tables that validate the dataclass, with the comment after the field
as its help. Unset flags take the profile's preset; a field whose None means "automatic" takes the
word ``auto``; booleans take ``--flag`` / ``--no-flag``. Every error is one line on stderr and exit
status 2, naming the flag, before anything is written. ``--resume --out DIR`` continues the run in
DIR with the settings stored in its checkpoint (``--env`` and the rest not needed; a flag given must
agree with them, except those a resume may change, such as ``--steps``). ``--check`` makes every
check a run makes before it builds anything (the settings, ``--out``, a checkpoint to resume, the
device), prints the resolved settings and stops with status 0: nothing is built or written.
``--line NAME`` takes the settings of a named line of :mod:`pcnn_explore.run.lines`
(``paper_cts``, ``kit``, ...; printed at the start, and by ``--check``); a flag given beside it
overrides that one setting (every flag's default is None, so a flag left out is told from one given).
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import os
import shlex
import signal
import sys
import textwrap
import threading
from dataclasses import fields
from functools import lru_cache
from typing import Any

from pcnn_explore.checks import AUTO, FLAG_ALIASES, SettingError, arg_type, flag
from pcnn_explore.run.config import INT_LOWS, NUMBER_RANGES, TrainConfig, choices
from pcnn_explore.run.interrupt import RunInterrupted, active_stop, end_now

__all__ = ["add_arguments", "run_cli", "field_help", "config_from_args", "line_settings", "describe_line"]

_REQUIRED = ("out_dir",)  # --env too, unless --resume (the checkpoint holds it)
_PROG = "pcnn-explore train"


@lru_cache(maxsize=None)
def field_help() -> dict[str, str]:
    """TrainConfig field -> the comment that follows it in the source (its help text)."""
    source = textwrap.dedent(inspect.getsource(TrainConfig))
    lines = source.splitlines()
    out = {}
    for node in ast.parse(source).body[0].body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            line = lines[node.lineno - 1]
            if "#" in line:
                out[node.target.id] = line.split("#", 1)[1].strip()
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``pcnn-explore train``: one per TrainConfig field, plus --resume and --no-progress."""
    helps, options = field_help(), choices()
    for f in fields(TrainConfig):
        names = [flag(f.name)] if f.name not in FLAG_ALIASES else [flag(f.name), "--" + f.name.replace("_", "-")]
        auto = f.default is None
        kw = dict(dest=f.name, default=None, help=helps.get(f.name, ""))
        if f.name in options:
            kw.update(choices=(*options[f.name], AUTO) if auto else options[f.name])
        elif f.type.startswith("bool"):
            if auto:
                kw.update(type=arg_type("bool", auto=True), metavar="true|false|auto")
            else:
                kw.update(action=argparse.BooleanOptionalAction)
        elif f.name in INT_LOWS:
            kw.update(type=arg_type("int", INT_LOWS[f.name], auto=auto), metavar="N|auto" if auto else "N")
        elif f.name in NUMBER_RANGES:
            kw.update(type=arg_type("float", *NUMBER_RANGES[f.name], auto=auto), metavar="X|auto" if auto else "X")
        if f.name in _REQUIRED:
            kw.update(required=True, metavar="DIR")
        if f.name == "env":
            kw.update(metavar="ID")
        if f.name == "profile":  # default None, not "study": with --resume an unset --profile is the checkpoint's
            kw.update(help=f"{kw['help']} (default: study; with --resume: the checkpoint's)")
        parser.add_argument(*names, **kw)
    parser.add_argument("--line", metavar="NAME", action=_Once,
                        help="a named line of pcnn_explore.run.lines (dqn, dqn_mmc, paper_cts, "
                             "paper_pixelcnn, kit, kit_novelty, ...): its settings (printed at the start), each "
                             "overridden by a flag given beside it")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out from its checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="hide the settings and the progress bar")
    parser.add_argument("--check", action="store_true",
                        help="check the settings and --out as a run would, print the settings and stop (writes nothing)")


class _Once(argparse.Action):
    """A flag that may be given once: a second is refused (the last would win unseen)."""

    def __call__(self, parser, namespace, values, option_string=None):
        before = getattr(namespace, self.dest, None)
        if before is not None:
            parser.error(f"{option_string} given twice ({before}, then {values}): give it once")
        setattr(namespace, self.dest, values)


def line_settings(name: str, env: str | None = None) -> tuple[str, dict[str, Any]]:
    """(label, TrainConfig fields) of the named line ``name`` of
    :data:`pcnn_explore.run.lines.LINES` on ``env``: its variant's fields (``bonus``, ``mmc_beta``,
    ...), then the settings the line states, a per-size one resolved for ``env``'s DeepSea N
    (``paper_cts_horizon``'s bonus scale). SettingError naming the known lines for another name, or
    the env a per-size line needs."""
    from pcnn_explore.run.lines import LINES
    from pcnn_explore.run.variants import variant_overrides

    if name not in LINES:
        raise SettingError(f"unknown --line {name!r}: choose one of {', '.join(LINES)}")
    line = LINES[name]
    try:
        fields = line.fields_for(env)
    except ValueError as e:
        raise SettingError(f"--line {name}: {e} (--env DeepSea-N-v0)") from None
    return line.display, {**variant_overrides(line.variant), **fields}


def describe_line(args: argparse.Namespace) -> str | None:
    """One line naming ``--line`` and the settings it resolved to, a flag given beside it marked as
    overriding the line's value (None: no ``--line``)."""
    if getattr(args, "line", None) is None:
        return None
    label, settings = line_settings(args.line, getattr(args, "env", None))
    shown = []
    for name, value in settings.items():
        given = getattr(args, name)
        if given is None:
            shown.append(f"{name}={value}")
        else:
            shown.append(f"{name}={given} ({flag(name)} given; the line's {value})")
    return f"line {args.line} ({label}): " + " ".join(shown)


def config_from_args(args: argparse.Namespace, stored: dict | None = None) -> TrainConfig:
    """The TrainConfig the parsed flags ask for: the profile's preset (``study`` unless given), then
    the settings of ``--line`` (if given, :func:`line_settings`), then every flag given; with
    ``stored`` (a checkpoint's settings), those settings, then the line's, then every flag given."""
    values = {f.name: getattr(args, f.name) for f in fields(TrainConfig)}
    if getattr(args, "line", None) is not None:  # a flag given beside the line overrides that one setting
        _, settings = line_settings(args.line, values.get("env") or (stored or {}).get("env"))
        values.update({k: v for k, v in settings.items() if values[k] is None})
    if stored is not None:
        given = {k: (None if v == AUTO else v) for k, v in values.items() if v is not None}
        return TrainConfig(**{**{k: stored[k] for k in values if k in stored}, **given})
    profile = values.pop("profile") or "study"
    autos = {name: None for name, v in values.items() if v == AUTO}
    cfg = TrainConfig.preset(profile, **{k: v for k, v in values.items() if k not in autos})
    return dataclasses.replace(cfg, **autos) if autos else cfg  # "auto" wins over the preset's value


def _fail(message: str) -> int:
    print(f"{_PROG}: error: {message}", file=sys.stderr)
    return 2


def run_cli(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except KeyboardInterrupt as e:  # Ctrl-C: one line, status 130 (SIGTERM: 143)
        return _stopped(str(args.out_dir), e)


def _run(args: argparse.Namespace) -> int:
    import torch

    from pcnn_explore.run.lock import RunLock, probe
    from pcnn_explore.run.loop import run_loop
    from pcnn_explore.run.resume import open_run, resume_settings

    out = str(args.out_dir)
    stop = active_stop()
    if stop is not None:  # (a second Ctrl-C once the run writes: what the folder holds then)
        stop.at_once = lambda: _folder_tail(out, at_once=True)
    try:
        probe(args.out_dir)  # a folder a live run holds gets no other advice
        stored = resume_settings(args.out_dir) if args.resume else None
        if args.env is None and stored is None and not args.resume:
            raise SettingError("the following arguments are required: {env} (or --resume to continue the run "
                               "in {out_dir} with its own settings)")
        cfg = config_from_args(args, stored)
        start = open_run(cfg, resume=args.resume)
        if start.saved is None:
            _check_run_folder(cfg.out_dir)
        if cfg.device.startswith("cuda") and not torch.cuda.is_available():
            raise SettingError(f"{{device}} {cfg.device} requested but CUDA is not available: use --device cpu")
    except SettingError as e:
        return _fail(e.for_cli())
    except (ValueError, TypeError, OSError) as e:
        return _fail(str(e))
    if stop is not None and start.saved is not None:  # (a stop before the run writes: the folder as it is)
        stop.quiet = f" before the run started: nothing was written; {_resume_tail(out, start.step)}"
    line = describe_line(args)
    if line is not None:
        print(line, flush=True)
    if args.check:
        return _report_check(cfg, start)
    if start.finished:
        print(f"{cfg.out_dir}: already ran {start.step} agent steps (--steps {cfg.steps}): nothing to do")
        return 0
    if start.saved is not None:
        print(f"resuming {cfg.out_dir} at step {start.step} of {cfg.steps}", flush=True)
        if start.backfill_note():
            print(start.backfill_note(), flush=True)
    try:
        with RunLock(cfg.out_dir) as lock:
            result = run_loop(cfg, start, not args.no_progress, lock)
    except SettingError as e:  # the folder taken by another run, or a checkpoint that cannot be restored
        return _fail(e.for_cli())
    mean = ("no finished episode yet" if result.episodes == 0
            else f"mean return (last 10% of episodes) {result.mean_return_last:.3f}")
    print(f"{result.steps} agent steps, {result.episodes} episodes, {mean}, {result.steps_per_second:.0f} steps/s; "
          f"logs in {result.out_dir}")
    note = result.solved_note(cfg.steps)
    if note is not None:
        print(note)
    return 0


def _report_check(cfg: TrainConfig, start) -> int:
    """``--check``: the resolved settings and what the run would do; status 0, nothing written."""
    from pcnn_explore.run.loop import describe

    print(describe(cfg))
    if start.backfill_note():
        print(start.backfill_note())
    if start.finished:
        plan = f"already ran {start.step} agent steps (--steps {cfg.steps}): a run would do nothing"
    elif start.saved is not None:
        plan = f"a run would resume {cfg.out_dir} at step {start.step} of {cfg.steps}"
    else:
        plan = f"a run would start afresh in {cfg.out_dir}, {cfg.steps} agent steps"
    print(f"check passed: {plan}; nothing was written")
    return 0


def _check_run_folder(out_dir) -> None:
    """Refuse (RunError) a fresh run into a folder that holds files that are not a training run's:
    the run would write beside them, and a later clean-up would take them for its own."""
    from fnmatch import fnmatchcase

    from pcnn_explore.atomic import temporary_names
    from pcnn_explore.checks import RunError
    from pcnn_explore.run.lock import LOCK
    from pcnn_explore.run.resume import RUN_FILES

    ours = (*RUN_FILES, LOCK, "tb")
    try:
        names = sorted(os.listdir(out_dir))
    except OSError:  # (no folder yet: nothing beside the run)
        return
    for name in names:
        temporary = any(fnmatchcase(name, temporary_names(n)) for n in RUN_FILES)  # (an atomic write cut short)
        if name not in ours and not temporary:
            raise RunError(f"{{out_dir}} {out_dir} holds files that are not a training run's ({name}): choose a new "
                           "or empty folder for {out_dir}, or move them away")


def _loaded(name: str):
    """The module ``name`` if it is imported whole, else None: a stop may come while a module is
    half imported (torch, say), and importing over it fails; a module not imported yet means this
    process has not done what it serves."""
    module = sys.modules.get(name)
    spec = getattr(module, "__spec__", None)
    return None if module is None or getattr(spec, "_initializing", False) else module


def _checkpoint_step(out: str) -> int | None:
    """The step of the checkpoint in ``out`` (None: none, or the checkpoint module not imported)."""
    checkpoint, files = _loaded("pcnn_explore.checkpoint"), _loaded("pcnn_explore.run.checkpoints")
    if checkpoint is None or files is None:
        return None
    step = (checkpoint.read_meta(os.path.join(out, files.CHECKPOINT)) or {}).get("step")
    return None if step is None else int(step)


def _resume_tail(out: str, step: int) -> str:
    return f"the last checkpoint in {out} is at step {step}: resume with: {_PROG} --resume --out {shlex.quote(out)}"


def _folder_tail(out: str, at_once: bool = False) -> str:
    """What follows "interrupted" (or "stopped by SIGTERM") when a command stops outside the run's
    loop: what ``out`` holds then, and how to go on. ``at_once``: a second Ctrl-C ended it at once."""
    lock, log, checks = _loaded("pcnn_explore.run.lock"), _loaded("pcnn_explore.run.log"), _loaded("pcnn_explore.checks")
    head = ": stopped at once" if at_once else ""
    nothing = f"{head} before the run started: nothing was written"
    if lock is None or log is None or checks is None:  # (not imported yet: this run has neither locked nor written)
        return nothing
    try:
        lock.probe(out)
        last = _checkpoint_step(out)
    except (checks.RunError, OSError):  # another run holds the folder: this one wrote nothing there
        return nothing
    if last is not None:
        return f"{head}; {_resume_tail(out, last)}"
    if os.path.exists(os.path.join(out, log.LOG)):
        return f"{head} before the run's first checkpoint, so {out} cannot resume: remove {out} or choose another --out"
    return nothing


def _stopped(out: str, e: KeyboardInterrupt) -> int:
    """Ctrl-C: one line on stderr (the step, and the command that resumes the run), status 130
    (SIGTERM first: 143). A checkpoint write still in flight (Ctrl-C twice) ends with the process:
    its temporary files are removed first (:func:`pcnn_explore.run.interrupt.end_now`), and the
    process's end frees the lock. Imports nothing: the stop may have come in an import."""
    stop = active_stop()
    first = stop.first if stop is not None and stop.first is not None else getattr(e, "signum", signal.SIGINT)
    resume = f"{_PROG} --resume --out {shlex.quote(out)}"
    if isinstance(e, RunInterrupted):
        if e.at_once:  # (read last: a write may have ended meanwhile; one still running ends with the process)
            e.checkpoint, e.writing = _checkpoint_step(out), False
        line, status = e.text(resume, f"remove {out} or choose another --out"), e.exit_status
    else:  # before the run's loop, or after it
        verb = "interrupted" if first == signal.SIGINT else "stopped by SIGTERM"
        line, status = verb + _folder_tail(out), 128 + first
    if stop is not None:
        stop.said()
    line = f"{_PROG}: {line}"
    if any(t.name.startswith("checkpoint") and t.is_alive() for t in threading.enumerate()):
        end_now(line, status)  # (a checkpoint write cancelled mid-file: it ends with the process, not after it)
    sys.stdout.flush()
    print(line, file=sys.stderr, flush=True)
    return status
