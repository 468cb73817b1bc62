"""pcnn-explore: count-based exploration with neural density models (Ostrovski et al., ICML 2017).

The sub-commands are ``train``, ``record``, ``reproduce`` and ``sweep``.

Each sub-command lives in its own module, which provides two functions:

- ``add_arguments(parser: argparse.ArgumentParser) -> None``
- ``run_cli(args: argparse.Namespace) -> int`` (the exit status)

The modules are imported only when their sub-command runs, so ``--help`` stays fast.

Every sub-command takes SIGTERM (a scheduler's stop) as it takes Ctrl-C, from the first line of the
command on, whatever it is doing (importing torch, say): one line on stderr and exit status 143 for
SIGTERM, 130 for Ctrl-C, the first signal to arrive setting it
(:class:`~pcnn_explore.run.interrupt.CommandStop`). Before a command writes anything it ends at
once; ``train`` and ``sweep`` then checkpoint at the step reached. ``train`` and ``sweep`` refuse
on Windows at once, in one line that names WSL 2 (the run lock is POSIX's ``flock``).
"""
from __future__ import annotations

import os
import sys

from pcnn_explore.run.interrupt import CommandStop, clear_interrupt_mark


def _program_is_the_cli() -> bool:
    """Whether this process runs the CLI as its program (``pcnn-explore``, ``python -m
    pcnn_explore``), not a program that imports it, nor a worker that multiprocessing is preparing."""
    mp = sys.modules.get("multiprocessing.process")
    if mp is not None and getattr(mp.current_process(), "_inheriting", False):
        return False
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if not main_file or not sys.argv or os.path.abspath(main_file) != os.path.abspath(sys.argv[0]):
        return False
    entry = os.path.join("pcnn_explore", "__main__.py")
    return os.path.basename(main_file) == "pcnn-explore" or main_file.endswith(entry)


#: sub-commands that run training: refused on Windows
RUNS = ("train", "sweep")

#: sub-command -> (module, one-line help)
COMMANDS = {
    "train": ("pcnn_explore.run.cli", "train a DQN or Reactor agent, with or without the pseudo-count bonus"),
    "record": ("pcnn_explore.record", "record one episode while a density model trains online"),
    "reproduce": ("pcnn_explore.report.reproduce", "execute the experiment notebooks headlessly"),
    "sweep": ("pcnn_explore.sweep.cli", "run a grid of training runs (on this machine, or a Ray cluster), or --report it"),
}

#: sub-command -> modules its run imports as it goes, imported before it starts writing: a signal
#: in an import ends the command at once, and one raised inside an import would leave it half done
UNWINDS = {
    "sweep": ("pcnn_explore.sweep.grid", "pcnn_explore.sweep.plan", "pcnn_explore.sweep.runner",
              "pcnn_explore.sweep.view", "pcnn_explore.sweep.local", "pcnn_explore.sweep.bsuite_store",
              "pcnn_explore.sweep.store_lock", "pcnn_explore.sweep.folders", "pcnn_explore.sweep.executors",
              "pcnn_explore.sweep.report", "pcnn_explore.run.config", "pcnn_explore.run.checkpoints",
              "pcnn_explore.run.lock", "pcnn_explore.run.cli", "pcnn_explore.run.variants", "pcnn_explore.bonus",
              "pcnn_explore.envs.deep_sea", "pcnn_explore.envs.ids", "numpy.random", "numpy.typing"),
}
# train unwinds once its run takes its folder (pcnn_explore.run.resume.Resume.claim); record and
# reproduce end at once (their writes are atomic: a temporary file under way is removed first)

#: sub-command -> what follows "interrupted" (or "stopped by SIGTERM") when it ends at once
QUIET = {
    "train": " before the run started: nothing was written",
    "record": "; nothing was written",
    "reproduce": ": the notebooks it finished keep their outputs; run the command again for the rest",
    "sweep": " before any trial started: nothing was written",
}


def _stop_for(argv: list[str], **kw) -> CommandStop:
    """The stop of the command ``argv`` names (``train``, ...), not installed yet."""
    command = argv[0] if argv[:1] and argv[0] in COMMANDS else None
    if command is None:
        return CommandStop("pcnn-explore", **kw)
    return CommandStop(f"pcnn-explore {command}", QUIET[command], **kw)


#: the program's stop, in place from here (the first line of the CLI) when this process runs the CLI
_STOP = _stop_for(sys.argv[1:]).install() if _program_is_the_cli() else None

import argparse  # noqa: E402 - (after the stop: a signal while these load ends the command in one line)
import importlib  # noqa: E402


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage block) and exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # (called by another program: its process is not the command's to end; a signal unwinds the call)
    stop = _STOP if _STOP is not None else _stop_for(argv, ends_process=False).install()
    try:
        status = _main(argv, stop)
    except KeyboardInterrupt:  # (raised once a command unwinds, and not caught by it)
        status = stop.status or 130
        if not stop.done:
            print(f"{stop.prog}: {'interrupted' if status == 130 else 'stopped by SIGTERM'}", file=sys.stderr)
    finally:
        stop.said()  # (a signal now changes nothing: the command has ended)
        clear_interrupt_mark()  # (the status returned is the process's, under python -m too)
        if stop is not _STOP:
            stop.restore()
    return stop.status if stop.status is not None and status in (130, 143) else status


def _main(argv: list[str], stop: CommandStop) -> int:
    parser = OneLineParser(prog="pcnn-explore", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=OneLineParser)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        # Only the chosen sub-command's module is imported (torch and friends are slow to load).
        if argv[:1] == [name]:
            importlib.import_module(module).add_arguments(p)
    args = parser.parse_args(argv)
    if args.command in RUNS and sys.platform == "win32" and not getattr(args, "report", None):
        from pcnn_explore.run.lock import PLATFORM_REFUSAL  # (sweep --report only reads and writes files)

        print(f"{parser.prog} {args.command}: error: {PLATFORM_REFUSAL}", file=sys.stderr)
        return 2
    run_cli = importlib.import_module(args._module).run_cli
    if args.command in UNWINDS:
        for name in UNWINDS[args.command]:
            try:
                importlib.import_module(name)
            except ModuleNotFoundError:
                pass
        stop.unwind()
    return int(run_cli(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
