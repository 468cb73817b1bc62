"""Command line: ``pcnn-explore record --env ENV --density MODEL --out FILE.npz ...``.

Any error (a bad flag, a bad checkpoint, an unwritable ``--out``, a failure while recording or
saving) prints one line on stderr, ``pcnn-explore record: error: ...``, and exits with status 2;
the output file is written atomically, so it appears complete or not at all. ``--check`` makes the
same checks, loads a checkpoint policy and builds the density model on ``--device`` (as a recording
starts), prints the resolved settings and stops with status 0 before any env is built or episode
played: nothing is left written.

The density model and bonus form (``--density``, ``--pg-scale``, ``--pg-schedule``, ``--bonus-scale``)
not given are a checkpoint policy's run's, where it trained with a bonus, else record's own (PixelCNN,
c = 0.1 n^-1/2, beta = 1); both the recording's summary line and ``--check`` say which form ran and whence.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from pcnn_explore.record.episode import save_episode
from pcnn_explore.record.recorder import _check_settings, record_episode

__all__ = ["add_arguments", "run_cli"]

_PROG_ERROR = "pcnn-explore record: error:"


class _OneLineErrors:
    """argparse with one-line errors: ``PROG: error: MESSAGE`` on stderr, exit status 2, no usage
    block; unrecognised arguments are an error of this parser, not of the top-level one."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from pcnn_explore.density import BONUS_MODELS
    from pcnn_explore.names import DENSITY_OPTIMIZERS

    if not isinstance(parser, _OneLineErrors):
        parser.__class__ = type(f"OneLine{type(parser).__name__}", (_OneLineErrors, type(parser)), {})
    parser.add_argument("--env", required=True, help="environment id, e.g. ALE/MontezumaRevenge-v5")
    parser.add_argument("--policy", default="random",
                        help="random | scripted | path of an agent checkpoint (default: random)")
    parser.add_argument("--density", default=None, choices=BONUS_MODELS,
                        help="density model trained online (default: a checkpoint policy's own bonus model, "
                             "else pixelcnn)")
    parser.add_argument("--warmup-frames", type=int, default=0,
                        help="frames the model trains on before the recorded episode (default: 0)")
    parser.add_argument("--max-steps", type=int, default=2000,
                        help="at most this many agent steps are recorded (default: 2000)")
    parser.add_argument("--episodes", type=int, default=1, help="episodes to record back to back (default: 1)")
    parser.add_argument("--seed", type=int, default=0, help="environment, policy and model seed (default: 0)")
    parser.add_argument("--pg-scale", type=float, default=None,
                        help="c, the prediction-gain scale (default: a checkpoint policy's, where its run trained "
                             "with a bonus of --density's model, else 0.1)")
    parser.add_argument("--pg-schedule", default=None,
                        help="PG decay: inverse_sqrt | inverse | constant (default: a checkpoint policy's, as "
                             "--pg-scale, else inverse_sqrt)")
    parser.add_argument("--bonus-scale", type=float, default=None,
                        help="beta of r+ = beta PC^-1/2, reward units (default: a checkpoint policy's, as "
                             "--pg-scale, else 1)")
    parser.add_argument("--sticky-actions", type=float, default=None,
                        help="sticky-action probability (default: 0.25; 0 for the scripted policy)")
    parser.add_argument("--density-optimizer", default="tf1", choices=DENSITY_OPTIMIZERS,
                        help="reading of the PixelCNN's RMSProp: tf1 (the paper's: TensorFlow 1's RMSProp on the "
                             "per-pixel mean cross-entropy) or torch (torch's RMSprop form on the summed "
                             "cross-entropy) (default: tf1)")
    parser.add_argument("--device", default="cpu",
                        help="torch device of the density model, for models that take one (default: cpu)")
    parser.add_argument("--out", required=True, help="output file, ending in .npz")
    parser.add_argument("--check", action="store_true",
                        help="check the settings and --out as a recording would, print them and stop (leaves nothing written)")


def run_cli(args: argparse.Namespace) -> int:
    """Record and save; 0 on success, 2 (and one line on stderr) on any error, 130 if interrupted."""
    try:
        return _run(args)
    except KeyboardInterrupt:
        print(f"{_PROG_ERROR} interrupted; nothing was written", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - every error becomes one line, never a traceback
        print(f"{_PROG_ERROR} {_one_line(e)}", file=sys.stderr)
        return 2


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    if isinstance(e, (ValueError, TypeError, OSError)) and text:
        return text
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _check_writable(folder: Path) -> None:
    """Fail before a recording of minutes if ``folder`` takes no new file (what atomic_write needs)."""
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".pcnn-explore-write-check.")
    except OSError as e:
        raise OSError(f"cannot write --out into {folder}: {e.strerror or e}") from None
    os.close(fd)
    os.unlink(probe)


def _run(args: argparse.Namespace) -> int:
    import torch

    torch.set_num_threads(1)
    out = Path(args.out)
    if out.suffix != ".npz":
        raise ValueError(f"--out must end in .npz, got {args.out!r}")
    if not out.parent.is_dir():
        raise ValueError(f"--out directory {out.parent} does not exist; create it first")
    if out.is_dir():
        raise ValueError(f"--out {out} is a directory; name a file ending in .npz")
    _check_writable(out.parent)
    from pcnn_explore.bonus import SCHEDULES

    if args.pg_schedule is not None and args.pg_schedule not in SCHEDULES:
        raise ValueError(f"unknown --pg-schedule {args.pg_schedule!r}: choose one of {', '.join(SCHEDULES)}")
    form = _bonus_form(args)
    _check_settings(args.env, args.policy, form.density, args.warmup_frames, args.seed, args.max_steps,
                    args.episodes, form.pg_scale, args.sticky_actions, form.bonus_scale)
    if getattr(args, "check", False):
        return _report_check(args, form)
    episode = record_episode(args.env, args.policy, form.density, args.warmup_frames, args.seed,
                             max_steps=args.max_steps, n_episodes=args.episodes, pg_scale=args.pg_scale,
                             pg_schedule=args.pg_schedule, bonus_scale=args.bonus_scale,
                             sticky_actions=args.sticky_actions, device=args.device, progress=sys.stderr.isatty(),
                             density_optimizer=args.density_optimizer)
    try:
        save_episode(episode, out)
    except OSError as e:
        raise OSError(f"cannot write {out}: {e.strerror or e}") from None
    size = out.stat().st_size / 1e6
    # six significant digits: the first bonuses of a fresh model reach 1e57 (not 58 digits), +inf beyond
    print(f"wrote {out} ({size:.1f} MB): {episode!r}; {bonus_units(form)}; "
          f"mean bonus {episode.bonus.mean():.6g}, max bonus {episode.bonus.max():.6g}")
    return 0


def _bonus_form(args: argparse.Namespace):
    """The recording's density model and bonus form (:func:`pcnn_explore.record.recorder.bonus_form`):
    the flags given, then a checkpoint policy's run's form, then record's own."""
    from pcnn_explore.record.recorder import _load_checkpoint_policy, bonus_form

    config = None
    if str(args.policy) not in ("random", "scripted") and Path(args.policy).exists():
        config = dict(_load_checkpoint_policy(str(args.policy), args.env, int(args.seed)).config)
    return bonus_form(args.density, args.pg_scale, args.pg_schedule, args.bonus_scale, config)


def bonus_units(form) -> str:
    """What record's bonus numbers are: their units and the form this recording's density model ran
    (a :class:`~pcnn_explore.record.recorder.BonusForm`), and where that form came from."""
    return (f"the bonus is r+ = beta PC^-1/2 per recorded frame, in reward units, unclipped (training clips r + r+ "
            f"to [-1, 1]); bonus form: {form.describe()}{_train_note(form)}")


def _train_note(form) -> str:
    """Where the recording's form is not what ``train --bonus MODEL`` runs by default (the paper's form of
    the model), what that is; else nothing."""
    from pcnn_explore.bonus import PAPER_BONUS_FORM
    from pcnn_explore.record.recorder import BonusForm

    paper = PAPER_BONUS_FORM.get(form.density)
    if paper is None or (paper["scale"], paper["schedule"], paper["beta"]) == (
            form.pg_scale, form.pg_schedule, form.bonus_scale):
        return ""
    auto = BonusForm(form.density, paper["scale"], paper["schedule"], paper["beta"], "")
    return f"; train --bonus {form.density} runs the paper's form by default, {auto.describe()[:-3]}"


def _report_check(args: argparse.Namespace, form) -> int:
    """``--check``: a checkpoint policy loaded and matched to ``--env`` and the density model built
    (as a recording starts), then the resolved settings printed; status 0, nothing written."""
    from pcnn_explore.density import make_density
    from pcnn_explore.envs import density_shape
    from pcnn_explore.record.recorder import _load_checkpoint_policy

    policy = str(args.policy)
    sticky = args.sticky_actions
    if policy not in ("random", "scripted"):
        fn = _load_checkpoint_policy(policy, args.env, int(args.seed))
        sticky = getattr(fn, "env_kwargs", {}).get("sticky_actions", sticky)
    if sticky is None:
        sticky = 0.0 if policy == "scripted" else 0.25
    make_density(form.density, *density_shape(args.env), device=args.device, seed=int(args.seed),
                 rmsprop=args.density_optimizer)
    settings = dict(env=args.env, policy=policy, density=form.density, warmup_frames=args.warmup_frames,
                    max_steps=args.max_steps, episodes=args.episodes, seed=args.seed, pg_scale=form.pg_scale,
                    pg_schedule=form.pg_schedule, bonus_scale=form.bonus_scale, sticky_actions=float(sticky),
                    device=args.device, out=args.out)
    print("settings: " + " ".join(f"{k}={v}" for k, v in settings.items()))
    print(f"bonus form: {form.describe()}{_train_note(form)}")
    print(f"check passed: a recording would write {args.out}; nothing was written")
    return 0
