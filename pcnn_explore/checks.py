"""One validator for settings: integers, numbers, choices and flags, for Python and the command line.

Each check raises :class:`SettingError` (a ValueError) whose text names the setting the way the
caller knows it: ``steps must be an integer >= 1, got -1`` from Python, and, through
:meth:`SettingError.for_cli`, ``--steps must be ...`` on the command line. The same bounds build
argparse types (:func:`arg_type`), so a flag and its dataclass field can never disagree.
"""
from __future__ import annotations

import argparse
import math
import re
from typing import Any, Callable, Iterable

import numpy as np

__all__ = ["RunError", "SettingError", "flag", "check_int", "check_number", "check_choice", "check_bool", "arg_type",
           "describe_int", "describe_number", "AUTO"]

#: what a flag given the word ``auto`` parses to: the field's None ("automatic"), even over a preset
AUTO = "auto"

#: Python field name -> the flag users type, where it is shorter than the field's own
FLAG_ALIASES = {"mmc_beta": "--mmc", "out_dir": "--out"}


def flag(name: str) -> str:
    """The command-line flag of setting ``name`` (``intrinsic_only`` -> ``--intrinsic-only``)."""
    return FLAG_ALIASES.get(name, "--" + name.replace("_", "-"))


class SettingError(ValueError):
    """A bad setting. ``str(e)`` names Python fields; ``e.for_cli()`` names command-line flags.

    ``template`` holds ``{field}`` placeholders, e.g. ``"{intrinsic_only} needs {bonus}"`` with
    ``python={"intrinsic_only": "intrinsic_only=True", "bonus": "a bonus (pixelcnn, cts, ...)"}``.
    Placeholders without an entry render as the field name (Python) or its flag (CLI).
    """

    def __init__(self, template: str, python: dict[str, str] | None = None, cli: dict[str, str] | None = None):
        self.template, self.python, self.cli = template, dict(python or {}), dict(cli or {})
        super().__init__(self._render(self.python, lambda n: n))

    def _render(self, words: dict[str, str], default: Callable[[str], str]) -> str:
        return re.sub(r"\{(\w+)\}", lambda m: words.get(m.group(1), default(m.group(1))), self.template)

    def for_cli(self) -> str:
        return self._render(self.cli, flag)


class RunError(SettingError):
    """A run cannot start or resume as asked; the text names the folder and the way out."""


def describe_int(low: int) -> str:
    return {0: "a non-negative integer", 1: "a positive integer"}.get(low, f"an integer >= {low}")


def describe_number(low: float, high: float = math.inf) -> str:
    if high == math.inf:
        return "a non-negative number" if low == 0 else f"a number >= {low:g}"
    return f"a number in [{low:g}, {high:g}]"


def check_int(name: str, value: Any, low: int, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < low:
        raise SettingError(f"{{{name}}} must be {describe_int(low)}, got {value!r}")


def check_number(name: str, value: Any, low: float, high: float = math.inf) -> None:
    ok = (not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, float, np.integer, np.floating))
          and math.isfinite(value) and low <= value <= high)
    if not ok:
        raise SettingError(f"{{{name}}} must be {describe_number(low, high)}, got {value!r}")


def check_choice(name: str, value: Any, options: Iterable[Any]) -> None:
    options = tuple(options)
    if value not in options:
        raise SettingError(f"unknown {{{name}}} {value!r}: choose one of {', '.join(map(str, options))}")


def check_bool(name: str, value: Any, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if not isinstance(value, (bool, np.bool_)):
        extra = ", or None (automatic)" if allow_none else ""
        raise SettingError(f"{{{name}}} must be True or False{extra}, got {value!r}")


def arg_type(kind: str, low: float | None = None, high: float = math.inf, auto: bool = False) -> Callable[[str], Any]:
    """An argparse type for ``kind`` "int" | "float" | "bool" within the bounds; ``auto`` accepts the word auto (None)."""

    def parse(text: str):
        if auto and text == AUTO:
            return AUTO
        try:
            if kind == "bool":
                if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                return text.lower() in ("true", "1", "yes")
            v = int(text) if kind == "int" else float(text)
        except ValueError:
            words = {"int": describe_int(int(low or 0)), "float": describe_number(low or 0.0, high),
                     "bool": "true or false"}[kind]
            raise argparse.ArgumentTypeError(f"expected {words}{' or auto' if auto else ''}, got {text!r}") from None
        if kind == "int" and low is not None and v < low:
            raise argparse.ArgumentTypeError(f"expected {describe_int(int(low))}, got {v}")
        if kind == "float" and (not math.isfinite(v) or (low is not None and not low <= v <= high)):
            raise argparse.ArgumentTypeError(f"expected {describe_number(low if low is not None else -math.inf, high)}, got {v}")
        return v

    parse.__name__ = kind  # argparse names the type in its messages
    return parse
