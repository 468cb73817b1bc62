"""Run profiles shared by every experiment: ``smoke``, ``study`` and ``paper``.

- ``smoke``: seconds, for tests and CI. Numbers are plumbing checks, not results.
- ``study``: sized to answer, on 2 CPU cores: a budget of about 45 minutes for each agent notebook
  (07-10, 12, 13), whose sizes, episode caps and seeds a pilot chose for a power of 0.8 at each
  claim's smallest effect of interest (:mod:`pcnn_explore.study.power`,
  :mod:`pcnn_explore.study.preregistered.deep_sea`); the density notebooks seconds to minutes
  each (measured times: docs/study-report/README.md).
- ``paper``: the paper's budgets (frames, seeds), meant for a GPU.

Each experiment declares a settings dataclass deriving from :class:`ExperimentSettings` with a
``PRESETS`` mapping ``profile -> {field: value}``; ``Settings.preset("study", seed=3)`` builds one.
"""
from __future__ import annotations

import dataclasses
import numbers
from typing import Any, ClassVar

PROFILES = ("smoke", "study", "paper")


def check_profile(profile: str) -> str:
    """Return ``profile`` if it is a known profile, else raise ValueError naming the choices."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}: choose one of {', '.join(PROFILES)}")
    return profile


@dataclasses.dataclass
class ExperimentSettings:
    """Base for an experiment's settings; subclasses are dataclasses with a ``PRESETS`` table."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}

    @classmethod
    def preset(cls, profile: str, **overrides: Any):
        check_profile(profile)
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(overrides) - names)
        if unknown:
            raise TypeError(f"{cls.__name__} has no setting(s) {unknown}; known: {sorted(names)}")
        values = {**cls.PRESETS.get(profile, {}), **{k: v for k, v in overrides.items() if v is not None}}
        return cls(profile=profile, **values) if "profile" in names else cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def for_notebook(cls, profile: str, seed: int | None = 0, n_seeds: int | None = None, **given: Any):
        """For settings with a ``seeds`` field: the preset of ``profile`` with seeds ``seed, seed + 1,
        ...`` (``n_seeds`` of them; None: as many as the preset has; ``seed`` None: the preset's first
        seed) and any other setting given (None: the preset's). A notebook's parameters cell passes its
        ``seed`` and sizes here."""
        check_profile(profile)
        if seed is None:
            seed = cls.preset(profile).seeds[0]
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
        n = len(cls.preset(profile).seeds) if n_seeds is None else n_seeds
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"n_seeds must be a positive integer or None, got {n_seeds!r}")
        return cls.preset(profile, seeds=tuple(range(int(seed), int(seed) + int(n))), **given)


def default_profile() -> str:
    """The profile a notebook uses when nobody passes one.

    ``study`` for a person in JupyterLab; CI and ``pytest --nbval-lax`` set the environment
    variable ``PCNN_EXPLORE_PROFILE=smoke``. Papermill's injected parameters override both.
    """
    import os

    return check_profile(os.environ.get("PCNN_EXPLORE_PROFILE", "study"))
