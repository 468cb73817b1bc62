"""A sweep's grid: envs x agent variants x settings x seeds, each point one training run (a trial).

A :class:`Grid` comes from the command line (:func:`grid_from_args`) or a TOML file
(:func:`load_grid`) with the same keys::

    figure = "Fig. 12"                      # optional: a title for reports
    envs = ["ALE/MontezumaRevenge-v5"]
    variants = ["pixelcnn_mmc"]             # the rule of pcnn_explore.run.variants
    lines = ["paper_cts", "kit"]            # optional: named lines of pcnn_explore.run.lines
    seeds = [0, 1, 2, 3, 4]
    profile = "paper"
    episodes = 10000                        # optional, DeepSea only: steps = episodes x N per trial
    [set]                                   # any TrainConfig field; a list is one axis of the grid
    pg_scale = [0.1, 1.0, 10.0]

Values are parsed and bounded like the flags of ``pcnn-explore train`` (:func:`parse_value`).
A named line (``lines``, as ``pcnn-explore train --line``) is its variant with the settings the line
states; ``set`` overrides those it also gives; its trials' folders are named by the line
(``OUT/<env>/kit/seed<k>/``).
Each trial is written in its own folder, ``OUT/<env>/<variant>[,<field>=<value>...]/seed<k>/``:
the env id made folder-safe (``ALE/Pong-v5`` -> ``ALE_Pong-v5``) and, after the variant, the
settings that differ between the grid's trials (so Fig. 12's scales get folders of their own).
Steps, windows and budgets are agent steps (Atari: 4 frames each).
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from pcnn_explore.checks import AUTO, SettingError, arg_type

__all__ = ["SweepError", "Grid", "Trial", "parse_value", "parse_set", "load_grid", "shipped_grids", "grid_path",
           "folder_safe", "line_name", "GRID_KEYS", "FROM_VARIANT", "FROM_GRID"]

#: settings the variant name decides (``pixelcnn_mmc_intrinsic``, ``reactor_pixelcnn``): name another variant instead
FROM_VARIANT = ("agent", "bonus", "mmc_beta", "intrinsic_only")
#: settings each trial gets from the grid itself
FROM_GRID = ("env", "seed", "out_dir", "profile")
#: keys of a grid file (the command line has a flag for each)
GRID_KEYS = ("figure", "envs", "variants", "lines", "seeds", "set", "profile", "out", "cpus_per_trial",
             "gpus_per_trial", "episodes")


class SweepError(ValueError):
    """A sweep that cannot run as asked; the text names the problem and the fix."""


# ------------------------------------------------------------------------------------ values
@lru_cache(maxsize=None)
def _train_actions() -> dict[str, argparse.Action]:
    """The ``pcnn-explore train`` flags by TrainConfig field (their types, bounds and choices)."""
    from pcnn_explore.run.cli import add_arguments

    p = argparse.ArgumentParser(add_help=False)
    add_arguments(p)
    return {a.dest: a for a in p._actions}


def _fields() -> tuple[str, ...]:
    from pcnn_explore.run.config import TrainConfig

    return tuple(f.name for f in dataclasses.fields(TrainConfig))


def _check_field(name: str, where: str) -> None:
    if name not in _fields():
        raise SweepError(f"unknown field {name!r} in {where}: TrainConfig has no such setting; "
                         f"choose one of {', '.join(f for f in _fields() if f not in FROM_GRID + FROM_VARIANT)}")
    if name in FROM_VARIANT:
        raise SweepError(f"{where} may not set {name!r}: the variant name decides it "
                         "(dqn or a density model, then _mmc, then _intrinsic; or reactor, then _ and a density model); "
                         "list the variants you want instead")
    if name in FROM_GRID:
        what = {"env": "envs", "seed": "seeds", "out_dir": "out", "profile": "profile"}[name]
        raise SweepError(f"{where} may not set {name!r}: it comes from the grid's {what!r}")


def parse_value(field: str, value: Any, where: str = "--set") -> Any:
    """One value of TrainConfig field ``field``, parsed (text) and bounded like ``pcnn-explore train``'s flag.

    ``auto`` means the field's automatic value (None) where the flag allows it. Non-text values
    (from a TOML file) are checked with the same bounds. Raises :class:`SweepError` naming the field.
    """
    _check_field(field, where)
    action = _train_actions()[field]
    if not isinstance(value, str):
        if isinstance(value, float) and math.isnan(value):
            raise SweepError(f"{where}: {field}={value!r} is not a number")
        from pcnn_explore.run.config import NUMBER_RANGES

        if field in NUMBER_RANGES and isinstance(value, int) and not isinstance(value, bool):
            return float(value)  # pg_scale = 10 in a TOML file is the flag's --pg-scale 10
        return value  # TrainConfig.validate checks it when the trials are built
    if isinstance(action, argparse.BooleanOptionalAction):
        convert = arg_type("bool")
    else:
        convert = action.type or str
    try:
        parsed = convert(value)
    except (argparse.ArgumentTypeError, ValueError) as e:
        raise SweepError(f"{where}: bad value for {field}: {e}") from None
    if action.choices is not None and parsed not in action.choices:
        raise SweepError(f"{where}: unknown {field} {value!r}: choose one of {', '.join(map(str, action.choices))}")
    return None if parsed == AUTO else parsed


def parse_set(items: Sequence[str]) -> dict[str, tuple[Any, ...]]:
    """``["pg_scale=0.1,1,10", "steps=600"]`` -> ``{"pg_scale": (0.1, 1.0, 10.0), "steps": (600,)}``.

    Each item is ``FIELD=VALUE[,VALUE...]``; several values make one axis of the grid.
    """
    out: dict[str, tuple[Any, ...]] = {}
    for item in items:
        if not isinstance(item, str) or "=" not in item:
            raise SweepError(f"--set takes FIELD=VALUE[,VALUE...], got {item!r}")
        name, text = (s.strip() for s in item.split("=", 1))
        if name in out:
            raise SweepError(f"--set {name} is given twice: give its values once, separated by commas")
        if not text:
            raise SweepError(f"--set {name}= has no value: write {name}=VALUE")
        out[name] = tuple(parse_value(name, t.strip(), f"--set {name}") for t in text.split(","))
    return out


# ------------------------------------------------------------------------------------ folders
def folder_safe(text: str) -> str:
    """``ALE/Pong-v5`` -> ``ALE_Pong-v5``: anything but letters, digits, ``.``, ``-``, ``_`` and ``=`` becomes ``_``."""
    return re.sub(r"[^A-Za-z0-9._=-]", "_", str(text))


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        short = f"{value:g}"  # 0.1, 10, 1e-05: the names of the shipped grids' folders
        return short if float(short) == value else repr(value)  # 0.1000001: exact where :g rounds
    return "auto" if value is None else str(value)


def _named_line(name: str):
    """The named line ``name`` of :data:`pcnn_explore.run.lines.LINES` where it is one and
    no variant name (``kit``, ``paper_cts``), else None (``dqn`` is both: the variant's label serves)."""
    from pcnn_explore.run.variants import VARIANTS

    if name in VARIANTS:
        return None
    from pcnn_explore.run.lines import LINES

    return LINES.get(name)


def line_label(line: str) -> str:
    """The paper's name of a line: ``pixelcnn_mmc,pg_scale=10`` -> ``DQN-PixelCNN, pg_scale=10``; a
    named line's label for a sweep's ``lines`` (``kit`` -> ``DQN-CTS + all the kit's additions (kit)``)."""
    from pcnn_explore.run.variants import variant_label

    variant, _, rest = line.partition(",")
    named = _named_line(variant)
    return (named.display if named is not None else variant_label(variant)) + (
        ", " + rest.replace(",", ", ") if rest else "")


def line_colour(line: str) -> str | None:
    """The colour of a line's variant in every figure (None: the figure's default)."""
    from pcnn_explore.run.variants import variant_colour

    variant = line.partition(",")[0]
    named = _named_line(variant)
    return variant_colour(named.variant if named is not None else variant)


def line_name(variant: str, named: Mapping[str, Any]) -> str:
    """A trial's line: ``pixelcnn_mmc`` or ``pixelcnn_mmc,pg_scale=10`` (the settings in ``named``, sorted).

    Floats are written short (``:g``) where that names them exactly, else in full
    (``pg_scale=0.1000001``), so two values of an axis never share a name."""
    return ",".join([variant] + [f"{k}={folder_safe(_show(v))}" for k, v in sorted(named.items())])


# ------------------------------------------------------------------------------------ trials
@dataclasses.dataclass(frozen=True)
class Trial:
    """One training run of a sweep: a variant with settings, on one env and seed, in ``out_dir``.

    ``overrides``: TrainConfig fields beyond the variant's and the profile's (steps, pg_scale, ...).
    ``line``: the variant and the settings that tell this trial's line from the others'.
    ``files``: extra (name, text) files written into the folder with the trial's settings.
    """

    env: str
    variant: str
    seed: int
    profile: str
    out_dir: str
    overrides: tuple[tuple[str, Any], ...] = ()
    line: str = ""
    files: tuple[tuple[str, str], ...] = ()

    def config(self):
        """The trial's resolved :class:`~pcnn_explore.run.config.TrainConfig` (raises SettingError)."""
        from pcnn_explore.run.variants import variant_overrides
        from pcnn_explore.run.config import TrainConfig

        return TrainConfig.preset(self.profile, env=self.env, seed=int(self.seed), out_dir=str(self.out_dir),
                                  **{**variant_overrides(self.variant), **dict(self.overrides)})

    @property
    def name(self) -> str:
        """``<env>/<line>/seed<k>``, the folder relative to the sweep's."""
        return f"{folder_safe(self.env)}/{self.line or self.variant}/seed{self.seed}"


@dataclasses.dataclass
class Grid:
    """envs x variants x the ``set`` axes x seeds; see the module docstring."""

    envs: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    #: named lines of :data:`pcnn_explore.run.lines.LINES`, each its variant with the line's settings
    lines: tuple[str, ...] = ()
    seeds: tuple[int, ...] = (0,)
    set: dict[str, tuple[Any, ...]] = dataclasses.field(default_factory=dict)
    profile: str = "study"
    out: str = "runs/sweep"
    cpus_per_trial: float = 1.0
    gpus_per_trial: float = 0.0
    figure: str = ""
    #: DeepSea only: episodes per trial; each trial runs ``episodes * N`` agent steps (its episodes last N)
    episodes: int | None = None

    def check(self) -> None:
        """Raise :class:`SweepError` for an empty, repeated or unknown env, variant, line or seed, a bad
        share, episode count or ``set`` axis: each kind of check in its own method below."""
        self._check_lists()
        self._check_lines()
        self._check_names()
        self._check_shares()
        self._check_episodes()
        self._check_set()

    def _check_lists(self) -> None:
        for key, what in (("envs", "env ids"), ("variants", "variant names"), ("lines", "named lines"),
                          ("seeds", "seeds")):
            values = getattr(self, key)
            if isinstance(values, (str, bytes)) or not isinstance(values, (tuple, list)):
                raise SweepError(f"{key} must be a list of {what}, got {values!r}")
            if not values and key != "lines" and not (key == "variants" and self.lines):
                raise SweepError(f"{key} is empty: give at least one (--{key} A,B)"
                                 + (" or --lines" if key == "variants" else ""))
            if len(set(values)) != len(values):
                raise SweepError(f"{key} repeat: {', '.join(map(str, values))}")
        for s in self.seeds:
            if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                raise SweepError(f"seeds must be non-negative integers, got {s!r}")

    def _check_lines(self) -> None:
        if not self.lines:
            return
        from pcnn_explore.envs.deep_sea import deep_sea_size
        from pcnn_explore.run.lines import LINES

        for name in self.lines:
            if name not in LINES:
                raise SweepError(f"unknown line {name!r} in lines: choose one of {', '.join(LINES)}")
            other = [e for e in self.envs if deep_sea_size(e) is None]
            if LINES[name].per_size and other:  # e.g. paper_cts_horizon: its bonus scale is one per DeepSea size
                raise SweepError(f"line {name!r} sets {', '.join(k for k, _ in LINES[name].per_size)} per "
                                 f"DeepSea size N and {other[0]} is no DeepSea-N-v0: run that line on DeepSea "
                                 "envs only")
        both = [name for name in self.lines if name in self.variants]
        if both:
            raise SweepError(f"{both[0]} is both a variant and a line of the grid, and both would be run in "
                             f"the folder {both[0]}: give it once")

    def _check_names(self) -> None:
        from pcnn_explore.envs import check_env_id
        from pcnn_explore.profiles import check_profile
        from pcnn_explore.run.variants import check_variant

        try:
            check_profile(self.profile)
            for e in self.envs:
                check_env_id(e)
            for v in self.variants:
                check_variant(v)
        except (ValueError, TypeError) as e:
            raise SweepError(str(e)) from None
        if not isinstance(self.out, (str, Path)) or not str(self.out):
            raise SweepError("out must name the sweep's folder (--out DIR)")

    def _check_shares(self) -> None:
        for key in ("cpus_per_trial", "gpus_per_trial"):
            v = getattr(self, key)
            low_ok = v > 0 if key == "cpus_per_trial" else v >= 0
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not low_ok:
                raise SweepError(f"{key} must be a {'positive' if key == 'cpus_per_trial' else 'non-negative'} "
                                 f"number (a fraction shares a device), got {v!r}")

    def _check_episodes(self) -> None:
        if self.episodes is None:
            return
        from pcnn_explore.envs.deep_sea import deep_sea_size

        if isinstance(self.episodes, bool) or not isinstance(self.episodes, int) or self.episodes < 1:
            raise SweepError(f"episodes must be a positive integer (episodes per DeepSea trial), "
                             f"got {self.episodes!r}")
        fixed = [e for e in self.envs if deep_sea_size(e) is None]
        if fixed:
            raise SweepError(f"episodes sets a DeepSea trial's steps to episodes x N; {fixed[0]} has no fixed "
                             "episode length: leave episodes out and set steps (--set steps=N)")
        if "steps" in self.set:
            raise SweepError("episodes and set steps both give the trials' steps: keep one")

    def _check_set(self) -> None:
        for name, values in self.set.items():
            _check_field(name, "set")
            if not values:
                raise SweepError(f"set {name} has no value")
            if len(set(map(repr, values))) != len(values):
                raise SweepError(f"set {name} repeats a value: {', '.join(map(_show, values))}")

    def trials(self) -> list[Trial]:
        """Every trial, env-major then variant, settings and seed; each config checked (SweepError).

        Two trials whose folders would be one are refused (SweepError naming both)."""
        self.check()
        root = Path(self.out).resolve()
        names = sorted(self.set)
        axes = [k for k in names if len(self.set[k]) > 1]
        gpu = {"device": "cuda"} if self.gpus_per_trial > 0 and "device" not in self.set else {}
        out: list[Trial] = []
        folders: dict[str, str] = {}
        for env in self.envs:
            steps = {} if self.episodes is None else {"steps": self.episodes * _episode_length(env)}
            for variant, name, stated in self._runs(env):
                for values in itertools.product(*(self.set[k] for k in names)):
                    chosen = dict(zip(names, values))
                    line = line_name(name, {k: chosen[k] for k in axes})
                    for seed in self.seeds:
                        t = Trial(env, variant, int(seed), self.profile,
                                  str(root / folder_safe(env) / line / f"seed{seed}"),
                                  tuple(sorted({**stated, **gpu, **steps, **chosen}.items())), line)
                        try:
                            t.config()
                        except SettingError as e:
                            raise SweepError(f"{t.name}: {e}") from None
                        named = ", ".join(f"{k}={chosen[k]!r}" for k in axes)
                        other = folders.setdefault(t.out_dir, named)
                        if other != named:
                            raise SweepError(f"two trials would share the folder {t.name} ({other}; {named}): "
                                             "give the axis values that differ in a folder name (letters, digits, "
                                             "'.', '-', '_', '=')")
                        out.append(t)
        return out


    def _runs(self, env: str) -> list[tuple[str, str, dict[str, Any]]]:
        """(variant, folder name, settings beyond the variant's) of each variant, then each named line
        on ``env`` (a line's per-size settings resolved for DeepSea-N: :meth:`StudyVariant.fields_for`)."""
        out: list[tuple[str, str, dict[str, Any]]] = [(v, v, {}) for v in self.variants]
        if self.lines:
            from pcnn_explore.run.lines import LINES

            out += [(LINES[k].variant, k, LINES[k].fields_for(env)) for k in self.lines]
        return out


def _episode_length(env: str) -> int:
    """Agent steps per episode of DeepSea-N (N)."""
    from pcnn_explore.envs.deep_sea import deep_sea_size

    return int(deep_sea_size(env))


# ------------------------------------------------------------------------------------ files
def shipped_grids() -> dict[str, Path]:
    """The paper's grids shipped with the package (``data/grids/*.toml``): {name: path}."""
    from pcnn_explore.resources import data_path

    folder = data_path("grids")
    return {p.stem: p for p in sorted(folder.glob("*.toml"))} if folder.is_dir() else {}


def grid_path(name: str) -> Path:
    """A grid file: a path, or the name of a shipped grid (``fig12`` or ``fig12.toml``)."""
    p = Path(name)
    if p.is_file():
        return p
    shipped = shipped_grids()
    stem = p.name[:-5] if p.name.endswith(".toml") else p.name
    if stem in shipped and len(p.parts) == 1:
        return shipped[stem]
    raise SweepError(f"no grid file {name!r}: give a TOML file's path or a shipped grid "
                     f"({', '.join(shipped) or 'none found'})")


def load_grid(path: str | Path) -> Grid:
    """A :class:`Grid` from a TOML file (keys: :data:`GRID_KEYS`); SweepError names a bad key or value."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the same parser, as a package (declared for it in pyproject.toml)
        import tomli as tomllib

    p = grid_path(str(path))
    try:
        data = tomllib.loads(p.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise SweepError(f"{p} is not a readable TOML file: {e}") from None
    unknown = sorted(set(data) - set(GRID_KEYS))
    if unknown:
        raise SweepError(f"{p}: unknown key(s) {', '.join(unknown)}; a grid file has {', '.join(GRID_KEYS)}")
    values = dict(data)
    for key in ("envs", "variants", "lines", "seeds"):
        if key in values:
            v = values[key]
            values[key] = tuple(v) if isinstance(v, list) else v
    raw = values.pop("set", {})
    if not isinstance(raw, dict):
        raise SweepError(f"{p}: set must be a table of FIELD = value or [values]")
    values["set"] = {k: tuple(parse_value(k, x, f"{p.name} set.{k}") for x in (v if isinstance(v, list) else [v]))
                     for k, v in raw.items()}
    return Grid(**values)
