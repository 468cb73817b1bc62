"""pcnn-explore: count-based exploration with neural density models (Ostrovski et al., ICML 2017).

The sub-commands are ``train``, ``record``, ``reproduce`` and ``sweep``.

Each sub-command lives in its own module, which provides two functions:

- ``add_arguments(parser: argparse.ArgumentParser) -> None``
- ``run_cli(args: argparse.Namespace) -> int`` (the exit status)

The modules are imported only when their sub-command runs, so ``--help`` stays fast.

``train`` and ``sweep`` take SIGTERM (a scheduler's stop) as they take Ctrl-C: a run checkpoints at
the step reached and the command ends with one line and exit status 143 (130 for Ctrl-C). On
Windows they refuse at once, in one line that names WSL 2 (the run lock is POSIX's ``flock``).
"""
from __future__ import annotations

import argparse
import importlib
import sys

#: sub-commands that run training: SIGTERM stops them as Ctrl-C does; refused on Windows
RUNS = ("train", "sweep")

#: sub-command -> (module, one-line help)
COMMANDS = {
    "train": ("pcnn_explore.run.cli", "train a DQN or Reactor agent, with or without the pseudo-count bonus"),
    "record": ("pcnn_explore.record", "record one episode while a density model trains online"),
    "reproduce": ("pcnn_explore.report.reproduce", "execute the experiment notebooks headlessly"),
    "sweep": ("pcnn_explore.sweep.cli", "run a grid of training runs (on this machine, or a Ray cluster), or --report it"),
}


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage block) and exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = OneLineParser(prog="pcnn-explore", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=OneLineParser)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        # Only the chosen sub-command's module is imported (torch and friends are slow to load).
        if argv[:1] == [name]:
            importlib.import_module(module).add_arguments(p)
    args = parser.parse_args(argv)
    if args.command not in RUNS:
        return int(importlib.import_module(args._module).run_cli(args) or 0)
    from pcnn_explore.run.interrupt import sigterm_as_interrupt
    from pcnn_explore.run.lock import PLATFORM_REFUSAL

    if sys.platform == "win32" and not getattr(args, "report", None):  # (sweep --report only reads and writes files)
        print(f"{parser.prog} {args.command}: error: {PLATFORM_REFUSAL}", file=sys.stderr)
        return 2
    with sigterm_as_interrupt() as stop:
        status = int(importlib.import_module(args._module).run_cli(args) or 0)
    return 143 if status == 130 and stop.received else status  # (stopped by SIGTERM: 128 + 15)


if __name__ == "__main__":
    sys.exit(main())
