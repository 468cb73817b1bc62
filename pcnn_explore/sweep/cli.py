"""``pcnn-explore sweep``: the paper's grid of training runs (this machine or a Ray cluster), and its evaluation.

Usage::

    pcnn-explore sweep --envs MiniGrid-Serpentine-7x7-v0 --variants dqn,pixelcnn_mmc --seeds 0,1 \\
        --set steps=3000 --profile study --out runs/sweep
    pcnn-explore sweep --envs DeepSea-10-v0 --lines paper_cts,kit --seeds 0,1 --out runs/lines  # named lines
    pcnn-explore sweep fig12 --address auto --gpus-per-trial 0.25     # a shipped grid, on a cluster
    pcnn-explore sweep grid.toml --out runs/mine                      # a grid file (same keys)
    pcnn-explore sweep --report runs/sweep                            # curves, max scores, AUC
    pcnn-explore sweep deep_sea --out runs/protocol \
        --bsuite-store docs/study-report/14_deep_sea_scaling/protocol   # bsuite's protocol over sessions

Local by default: worker processes on this machine, reused across trials, no Ray
(``--executor local``); ``--address auto|HOST:PORT`` (or ``$RAY_ADDRESS``) runs the trials as Ray
tasks on a running cluster, and ``--executor ray`` on a local Ray. The same command again skips
finished trials and resumes the others from their checkpoints. Every error is one line on stderr
and exit status 2, before any trial starts.
"""
from __future__ import annotations

import argparse
import contextlib
import sys

from pcnn_explore.checks import arg_type

__all__ = ["add_arguments", "run_cli", "grid_from_args"]

_PROG = "pcnn-explore sweep"


def _csv(kind: str):
    def parse(text: str):
        items = [t.strip() for t in text.split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {text!r}")
        if kind == "int":
            conv = arg_type("int", 0)
            return tuple(conv(t) for t in items)
        return tuple(items)

    parse.__name__ = "list"
    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("grid", nargs="?", help="a grid file (TOML, the keys below) or a shipped grid: "
                        "fig5, fig6, fig8, fig11, fig12, fig13, fig14, deep_sea (bsuite's deep-sea protocol)")
    parser.add_argument("--envs", type=_csv("str"), metavar="E1,E2", help="env ids, e.g. ALE/MontezumaRevenge-v5")
    parser.add_argument("--variants", type=_csv("str"), metavar="V1,V2",
                        help="agent variants: dqn or a density model, then _mmc, then _intrinsic "
                             "(dqn, dqn_mmc, cts_mmc, pixelcnn, pixelcnn_mmc, convcts_mmc, pixelcnn_mmc_intrinsic, ...); "
                             "Reactor: reactor, then _ and a density model (reactor, reactor_pixelcnn, ...)")
    parser.add_argument("--lines", type=_csv("str"), metavar="L1,L2",
                        help="named lines of pcnn_explore.run.lines (paper_cts, kit, ...), as train "
                             "--line: each its variant with the line's settings (--set overrides one); beside or "
                             "instead of --variants")
    parser.add_argument("--seeds", type=_csv("int"), metavar="0,1,2", help="seeds (default 0)")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE[,VALUE...]",
                        help="any TrainConfig field, parsed like pcnn-explore train's flag; several values "
                             "make one axis of the grid (repeatable)")
    parser.add_argument("--episodes", type=arg_type("int", 1), metavar="N",
                        help="DeepSea grids: episodes per trial (each trial runs N x size agent steps)")
    parser.add_argument("--profile", choices=("smoke", "study", "paper"), help="preset of the unset settings "
                        "(default study)")
    parser.add_argument("--out", metavar="DIR", help="the sweep's folder (default runs/sweep)")
    parser.add_argument("--cpus-per-trial", type=arg_type("float", 1e-9), metavar="X", help="CPUs per trial (default 1)")
    parser.add_argument("--gpus-per-trial", type=arg_type("float", 0.0), metavar="X",
                        help="GPUs per trial; a fraction shares a GPU between trials (default 0)")
    parser.add_argument("--address", metavar="auto|HOST:PORT", help="run the trials on a running Ray cluster "
                        "(default: on this machine)")
    parser.add_argument("--executor", choices=("auto", "local", "ray"), default="auto",
                        help="where trials run: local (worker processes on this machine, reused across trials, "
                             "no Ray), ray (Ray tasks: the cluster of --address or $RAY_ADDRESS, else a local Ray), "
                             "auto (ray where a cluster is given, else local; default)")
    parser.add_argument("--max-concurrent", type=arg_type("int", 1), metavar="N",
                        help="trials running at once (default: local, one per CPU over --cpus-per-trial; "
                             "ray, as many as the cluster holds)")
    parser.add_argument("--max-retries", type=arg_type("int", 0), default=3, metavar="N",
                        help="times a trial whose worker died is run again, from its checkpoint (default 3)")
    parser.add_argument("--bsuite-store", metavar="DIR",
                        help="DeepSea grids of bsuite's sizes (N = 10, 12, ..., 50, with --episodes): skip every "
                             "trial whose finished bsuite log is in DIR and add each finished trial's log there, "
                             "on an interruption too, so the protocol is done over sessions or machines; one sweep "
                             "holds DIR at a time, and trials whose settings differ from DIR's line are refused "
                             "(pcnn_explore.sweep.bsuite_store)")
    parser.add_argument("--dry-run", action="store_true", help="make every check a run makes (settings, "
                        "trial folders, resources) and list the trials; write and run nothing")
    parser.add_argument("--no-progress", action="store_true", help="print nothing while the trials run")
    parser.add_argument("--report", metavar="DIR", help="write the evaluation of the sweep in DIR (curves, "
                        "max scores beside the paper's, AUC improvements) to DIR/report; runs nothing")
    parser.add_argument("--window", type=arg_type("int", 1), metavar="STEPS",
                        help="with --report: agent steps per curve point (default: 1M frames, 250K agent steps on Atari)")
    parser.add_argument("--baseline", metavar="LINE",
                        help="with --report: the line AUC improvements are measured against, or a variant: "
                             "each line against that variant at the same settings (default dqn, where the "
                             "sweep has it)")


def grid_from_args(args: argparse.Namespace):
    """The :class:`~pcnn_explore.sweep.grid.Grid` the flags (over the grid file, if any) ask for."""
    from pcnn_explore.sweep.grid import Grid, load_grid, parse_set

    grid = load_grid(args.grid) if args.grid else Grid()
    given = {"envs": args.envs, "variants": args.variants, "lines": args.lines, "seeds": args.seeds,
             "profile": args.profile, "out": args.out, "cpus_per_trial": args.cpus_per_trial,
             "gpus_per_trial": args.gpus_per_trial, "episodes": args.episodes}
    for key, value in given.items():
        if value is not None:
            setattr(grid, key, value)
    grid.set = {**grid.set, **parse_set(args.set)}
    return grid


def _store_key(trial) -> tuple[str, int, int]:
    """(line, seed, N) of a DeepSea trial in a bsuite store."""
    from pcnn_explore.envs.deep_sea import deep_sea_size

    return trial.line or trial.variant, int(trial.seed), int(deep_sea_size(trial.env))


def _store_plan(store, grid, trials, dry_run: bool = False):
    """(the store's folder, the (line, seed, N) of the trials whose finished log it holds, the store's lock,
    held for the sweep: None on a dry run); (None, set(), None) without ``--bsuite-store``. SweepError for a
    grid that is not bsuite's (sizes, episodes, map), a store another sweep holds, or runs whose cap,
    profile or settings differ from the store's lines' (each difference named)."""
    if not store:
        return None, set(), None
    from pcnn_explore.envs.deep_sea import deep_sea_size
    from pcnn_explore.envs.deep_sea_protocol import PROTOCOL_SIZES
    from pcnn_explore.sweep import bsuite_store, store_lock
    from pcnn_explore.sweep.grid import SweepError

    if grid.episodes is None:
        raise SweepError("--bsuite-store keeps runs of a fixed episode cap: give the grid's episodes (--episodes N)")
    other = [t.env for t in trials if deep_sea_size(t.env) not in PROTOCOL_SIZES]
    if other:
        raise SweepError(f"--bsuite-store keeps bsuite's deep-sea logs, of N = 10, 12, ..., 50 only; {other[0]} is not "
                         "one: leave it out of the grid")
    keys = [_store_key(t) for t in trials]
    settings: dict = {}
    lock = None
    try:
        for t, (line, _, _) in zip(trials, keys):
            mine = bsuite_store.result_settings(t.config().to_dict(), line)
            bsuite_store.check_map(mine, t.name)
            differ = bsuite_store.settings_differences(settings.setdefault(line, mine), mine)
            if differ:
                raise SweepError(f"the trials of line {line} differ in settings "
                                 f"({bsuite_store.differences_text(differ)}), and a store holds one set per line: "
                                 "give those settings the same value on every size")
        if dry_run:
            store_lock.probe(store)
        else:
            lock = store_lock.StoreLock(store).acquire()
        bsuite_store.adopt(store, write=not dry_run)
        bsuite_store.check_manifest(store, {k[0]: grid.profile for k in keys}, grid.episodes, settings)
        pending = set(bsuite_store.pending(keys, store, grid.episodes))
    except BaseException as e:
        if lock is not None:
            lock.release()
        if isinstance(e, ValueError):
            raise SweepError(str(e)) from None
        raise
    return store, {k for i, k in enumerate(keys) if i not in pending}, lock


def _keep_in_store(store, grid, trials, kept: set) -> None:
    """Add the bsuite log of each finished trial not yet in ``kept`` (their names) to the store, and its name to ``kept``."""
    from pcnn_explore.sweep import bsuite_store

    for t in trials:
        line, seed, n = _store_key(t)
        if t.name not in kept and bsuite_store.keep(store, line, seed, n, t.out_dir, grid.episodes,
                                                    grid.profile) is not None:
            kept.add(t.name)


def _fail(message: str) -> int:
    print(f"{_PROG}: error: {message}", file=sys.stderr)
    return 2


def _report_cli(args: argparse.Namespace) -> int:
    """``sweep --report DIR``: the evaluation of a finished sweep's folder (no run)."""
    from pcnn_explore.sweep.grid import SweepError

    if args.grid or args.envs or args.variants or args.lines or args.seeds or args.set:
        return _fail("--report reads a sweep's folder; run the sweep and its report as two commands")
    from pcnn_explore.sweep.report import write_report

    try:
        paths = write_report(args.report, window=args.window, baseline=args.baseline)
    except (SweepError, ValueError, OSError) as e:
        return _fail(str(e))
    print("report: " + ", ".join(str(p) for p in paths))
    return 0


def run_cli(args: argparse.Namespace) -> int:
    from pcnn_explore.sweep.grid import SweepError

    if args.report:
        return _report_cli(args)
    if args.window is not None or args.baseline is not None:
        return _fail(f"{'--window' if args.window is not None else '--baseline'} goes with --report DIR")
    from pcnn_explore.sweep.plan import check_trials
    from pcnn_explore.sweep.runner import run_trials
    from pcnn_explore.sweep.view import SweepView

    stack = contextlib.ExitStack()
    try:
        grid = grid_from_args(args)
        if not grid.envs and not args.grid:
            return _fail("name a grid file, or the grid with --envs, --variants or --lines (and --seeds, --set)")
        trials = grid.trials()
        store, held, lock = _store_plan(args.bsuite_store, grid, trials, args.dry_run)
        if lock is not None:  # the store is this sweep's until it ends
            stack.callback(lock.release)
        if store is not None:
            trials = [t for t in trials if _store_key(t) not in held]
        if args.dry_run:  # every check a run makes (settings, folders, shares), nothing written
            check_trials(trials, address=args.address, cpus_per_trial=grid.cpus_per_trial,
                         gpus_per_trial=grid.gpus_per_trial, max_concurrent=args.max_concurrent,
                         executor=args.executor)
            for t in trials:
                print(t.name)
            print(f"{len(trials)} trials in {grid.out}" + (f" ({len(held)} more already in {store})" if store else ""))
            return 0
        kept: set = set()
        try:
            records = run_trials(trials, address=args.address, executor=args.executor,
                                 cpus_per_trial=grid.cpus_per_trial, gpus_per_trial=grid.gpus_per_trial,
                                 max_retries=args.max_retries, max_concurrent=args.max_concurrent, sweep_dir=grid.out,
                                 view=None if args.no_progress else SweepView(),
                                 info={"figure": grid.figure, "profile": grid.profile},
                                 on_done=None if store is None else lambda i: _keep_in_store(store, grid, [trials[i]], kept))
        finally:  # kept as each trial ended (none lost to a kill); here those done before this command
            if store is not None:
                _keep_in_store(store, grid, trials, kept)
                print(f"{len(kept)} finished trial logs added to {store} ({len(held)} were there before)", file=sys.stderr)
    except (SweepError, ValueError, TypeError, OSError) as e:
        return _fail(str(e))
    except KeyboardInterrupt:
        print(f"{_PROG}: interrupted; the same command resumes the unfinished trials from their checkpoints",
              file=sys.stderr)
        return 130
    finally:
        stack.close()
    failed = [r for r in records if r["status"] == "failed"]
    for r in failed:
        print(f"{_PROG}: failed: {r['name']}: {r['error']}", file=sys.stderr)
    print(f"{sum(r['status'] == 'done' for r in records)} of {len(records)} trials done in {grid.out}; "
          f"evaluate with: pcnn-explore sweep --report {grid.out}")
    return 1 if failed else 0
