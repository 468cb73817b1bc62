"""Every ``pcnn-explore`` command that README.md and docs/*.md show is valid today, and docs/layout.md
lists the tree as it is.

The commands are read from the pages' shell code blocks (continuation lines joined, comments
stripped, ``&&`` chains split) and checked without training anything, in this process: ``train``
and ``record`` with ``--check``, ``sweep`` with ``--dry-run`` (``sweep --report`` is parsed only: it
reads a finished sweep), ``reproduce`` parsed and its ``--only`` matched against the notebooks.
Relative paths land in a fresh temporary folder; placeholders (``DIR``, ``<DIR>``, ``/shared/...``)
become folders in it; a command that resumes a run or records a run's policy gets a short finished
DeepSea run at that path. A command whose line says ``# exits N`` must exit with N, and print the error line the page shows
beneath it (a comment ``# pcnn-explore ...: error: ...``), if it shows one.
"""
from __future__ import annotations

import importlib
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from pcnn_explore.cli import COMMANDS, OneLineParser, main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"", "bash", "sh", "shell", "console"}
FENCE = re.compile(r"^([ \t]*)```(\w*)[ \t]*\n(.*?)^\1```", re.M | re.S)
PLACEHOLDER = re.compile(r"^(<[^>]+>|[A-Z][A-Z0-9_]*)$")
RUN_ENV = "DeepSea-10-v0"  # the env of the docs' runs that a command resumes or records from

torch.set_num_threads(1)


@dataclass(frozen=True)
class Command:
    where: str  # page:line
    argv: tuple[str, ...]  # after "pcnn-explore"
    status: int  # the exit status the page shows (0 unless "# exits N")
    error: str | None = None  # the error line the page shows below such a command ("# pcnn-explore ...: error: ...")


def commands_in(text: str, page: str = "page") -> list[Command]:
    """The ``pcnn-explore`` commands of ``text``'s shell code blocks, in order."""
    found = []
    for m in FENCE.finditer(text):
        if m.group(2) not in SHELL:
            continue
        first_line = text.count("\n", 0, m.start(3)) + 1
        lines = m.group(3).splitlines()
        i = 0
        while i < len(lines):
            start, joined = i, lines[i]
            while joined.rstrip().endswith("\\") and i + 1 < len(lines):  # a continuation line
                i += 1
                joined = joined.rstrip()[:-1] + " " + lines[i].strip()
            i += 1
            status = re.search(r"#\s*exits (\d+)", joined)
            shown = re.match(r"\s*#\s*(pcnn-explore \w+: error: .*)$", lines[i]) if status and i < len(lines) else None
            tokens = shlex.split(joined, comments=True)
            segments, current = [], []
            for token in tokens + ["&&"]:
                if token in ("&&", "||", ";"):
                    segments.append(current)
                    current = []
                else:
                    current.append(token)
            for seg in segments:
                if seg and Path(seg[0]).name == "pcnn-explore":
                    found.append(Command(f"{page}:{first_line + start}", tuple(seg[1:]),
                                         int(status.group(1)) if status else 0, shown.group(1) if shown else None))
    return found


def all_commands() -> list[Command]:
    return [c for page in PAGES for c in commands_in(page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix())]


def option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv and argv.index(name) + 1 < len(argv) else None


def parse_only(argv: list[str]):
    """Parse ``argv`` as ``pcnn-explore`` does (the same parsers, the same one-line errors)."""
    parser = OneLineParser(prog="pcnn-explore")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    importlib.import_module(COMMANDS[argv[0]][0]).add_arguments(sub.add_parser(argv[0]))
    return parser.parse_args(argv)


# ------------------------------------------------------------------------------- the extraction
def test_commands_are_read_from_shell_blocks_with_continuations_comments_and_chains():
    text = "\n".join([
        "Intro `pcnn-explore train --inline` is prose.",
        "```bash",
        "# a comment line",
        "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/pcnn-explore reproduce --out r",
        "pcnn-explore train --env DeepSea-6-v0 \\",
        "    --bonus cts --out DIR   # trailing comment",
        'pcnn-explore reproduce --only "0[1-6]_*"',
        "pcnn-explore train --steps 7 --num-envs 2 --out x   # exits 2: not a multiple",
        "# pcnn-explore train: error: --steps (7) must be a multiple",
        "```",
        "```python",
        'print("pcnn-explore train --not-shell")',
        "```",
        "- a list item:",
        "  ```bash",
        "  pcnn-explore sweep fig12 --dry-run",
        "  ```",
    ])
    assert commands_in(text, "p") == [
        Command("p:4", ("reproduce", "--out", "r"), 0),
        Command("p:5", ("train", "--env", "DeepSea-6-v0", "--bonus", "cts", "--out", "DIR"), 0),
        Command("p:7", ("reproduce", "--only", "0[1-6]_*"), 0),
        Command("p:8", ("train", "--steps", "7", "--num-envs", "2", "--out", "x"), 2,
                "pcnn-explore train: error: --steps (7) must be a multiple"),
        Command("p:16", ("sweep", "fig12", "--dry-run"), 0),
    ]


def test_the_pages_show_every_command_and_the_one_minute_example():
    found = all_commands()
    assert {c.argv[0] for c in found} == set(COMMANDS)
    readme = [c.argv for c in found if c.where.startswith("README.md:")]
    assert ("train", "--env", "DeepSea-10-v0", "--bonus", "cts", "--steps", "20000", "--out", "runs/deepsea") in readme
    assert ("reproduce", "--out", "reproduce") in readme  # the quick start's first command
    assert any(c.status == 2 and c.error for c in found)  # an error example is checked for its status and line


# ------------------------------------------------------------------------------------ the commands
@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A short finished run on the docs' DeepSea env, for commands that resume or record from one."""
    from pcnn_explore.run import TrainConfig, train

    out = tmp_path_factory.mktemp("fixture") / "run"
    train(TrainConfig.preset("smoke", env=RUN_ENV, bonus="cts", steps=100, out_dir=str(out)), progress=False)
    return out


def _prepare(argv: list[str], tmp: Path, finished_run: Path) -> list[str]:
    argv = [str(tmp / "placeholders" / a.strip("<>").lower()) if PLACEHOLDER.match(a) and i > 0 else a
            for i, a in enumerate(argv)]
    argv = [str(tmp / a.lstrip("/")) if a.startswith("/shared/") else a for a in argv]
    if argv[0] == "train" and "--resume" in argv:
        shutil.copytree(finished_run, tmp / option(argv, "--out"))
    policy = option(argv, "--policy")
    if argv[0] == "record" and policy not in (None, "random", "scripted"):
        shutil.copytree(finished_run, tmp / policy)
    return argv


@pytest.mark.parametrize("command", all_commands(), ids=lambda c: c.where)
def test_documented_command_is_valid(command, tmp_path, monkeypatch, capsys, finished_run):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    argv = _prepare(list(command.argv), tmp_path, finished_run)
    name, status, message = argv[0], command.status, None
    device = option(argv, "--device") or ""
    if device.startswith("cuda") and not torch.cuda.is_available():
        status, message = 2, "CUDA is not available"  # what the command says on a machine without a GPU
    if name == "sweep" and "--report" in argv:
        parse_only(argv)  # --report reads a finished sweep: its flags are checked, nothing is read
        return
    if name == "reproduce":
        args = parse_only(argv)
        if args.notebooks is None:
            from pcnn_explore.report.reproduce import find_notebooks

            assert find_notebooks(None, args.only), command
        return
    extra = {"train": "--check", "record": "--check", "sweep": "--dry-run"}[name]
    before = sorted(tmp_path.rglob("*"))
    try:
        got = main(argv if extra in argv else [*argv, extra])
    except SystemExit as e:  # argparse
        got = e.code
    out, err = capsys.readouterr()
    assert got == status, f"{command.where}: pcnn-explore {' '.join(command.argv)}\n{err}"
    if status == 0:
        assert ("trials in" if name == "sweep" else "check passed") in out
    else:
        assert err.count("\n") == 1 and (message is None or message in err), err
        if command.error is not None and message is None:
            assert err.strip() == command.error  # the line the page shows, exactly
    assert sorted(tmp_path.rglob("*")) == before  # a check or a dry run writes nothing


# ------------------------------------------------------------------------------------------ layout
def _layout_paths() -> list[str]:
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    return re.findall(r"^\| `([^`]+)` \|", text, re.M)


def test_layout_lists_only_paths_that_exist():
    paths = _layout_paths()
    assert len(paths) > 40
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert missing == [], f"docs/layout.md lists paths that do not exist: {missing}"


def test_layout_lists_every_module_and_subpackage_of_the_package():
    listed = {p.rstrip("/") for p in _layout_paths()}
    package = ROOT / "pcnn_explore"
    tree = {f"pcnn_explore/{p.name}" for p in package.iterdir()
            if (p.suffix == ".py" and p.name not in ("__init__.py", "__main__.py"))
            or (p.is_dir() and (p / "__init__.py").exists())}
    assert sorted(tree - listed) == [], "docs/layout.md leaves these out"


# ------------------------------------------------------------------------------------------- links
def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_slug_follows_github():
    assert _slug("bsuite's deep-sea protocol") == "bsuites-deep-sea-protocol"
    assert _slug("`pcnn-explore reproduce`") == "pcnn-explore-reproduce"
    assert _slug("Notebooks, the reproduce command and verdicts") == "notebooks-the-reproduce-command-and-verdicts"


def test_every_relative_link_of_the_pages_leads_to_a_file_and_heading_that_exist():
    broken = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and anchor not in {_slug(h) for h in re.findall(r"^#+ (.+)$", file.read_text(), re.M)}:
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []
