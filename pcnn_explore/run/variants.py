"""The agent variants of the paper's experiments, named by one rule and derived from the density registry.

A DQN variant's name is the density model that gives the bonus (a name of
:data:`pcnn_explore.density.BONUS_MODELS`) or ``dqn`` (no bonus), then ``_mmc`` where the agent
learns with the mixed Monte Carlo target (beta 0.1, as in the paper), then ``_intrinsic`` where
it learns from the bonus alone (the extrinsic return is still logged)::

    dqn, dqn_mmc, pixelcnn, pixelcnn_mmc, cts_mmc, convcts_mmc, pixelcnn_mmc_intrinsic, ...

A Reactor variant (Sec. 4.2, ``agent="reactor"``) starts with the agent, ``reactor``, then the
density model of the bonus, if any, then ``_intrinsic``; never ``_mmc`` (Reactor evaluates its
policy with Retrace, not MMC)::

    reactor, reactor_pixelcnn, reactor_cts, reactor_pixelcnn_pos, reactor_cts_intrinsic, ...

:func:`variant_overrides` turns a name into the :class:`pcnn_explore.run.TrainConfig` fields it
sets; :func:`variant_label` into the paper's name ("DQN-PixelCNN" is the bonus agent with MMC,
as in the paper, which uses MMC for every intrinsically motivated agent unless it says otherwise;
"Reactor-PixelCNN" is Reactor with the bonus, added on a random 25% of steps as in the paper).
A density model added to the registry gets its variants here with no change.
"""
from __future__ import annotations

from typing import Any

from pcnn_explore import density

__all__ = ["MMC_BETA", "VARIANTS", "LABELS", "variant_overrides", "variant_label", "variant_colour", "variant_agent", "check_variant"]

#: beta of the MMC target in the ``_mmc`` variants (the paper's value)
MMC_BETA = 0.1
_NO_BONUS = "dqn"
_REACTOR = "reactor"
_MMC = "_mmc"
_INTRINSIC = "_intrinsic"


def _names() -> tuple[str, ...]:
    """Every name the rule allows, bases in registry order."""
    names = [_NO_BONUS, _NO_BONUS + _MMC]
    for model in density.BONUS_MODELS:
        names += [model + mmc + intr for intr in ("", _INTRINSIC) for mmc in ("", _MMC)]
    names.append(_REACTOR)
    for model in density.BONUS_MODELS:
        names += [f"{_REACTOR}_{model}{intr}" for intr in ("", _INTRINSIC)]
    return tuple(names)


_ALL = _names()


def _parse(name: str) -> tuple[str, str, bool, bool]:
    """``name`` -> (agent "dqn" or "reactor", density model or "dqn" for no bonus, uses MMC,
    learns from the bonus alone)."""
    if not isinstance(name, str):
        raise TypeError(f"a variant name is a string, got {name!r}")
    rest, intrinsic = (name[: -len(_INTRINSIC)], True) if name.endswith(_INTRINSIC) else (name, False)
    base, mmc = (rest[: -len(_MMC)], True) if rest.endswith(_MMC) else (rest, False)
    agent, bases = "dqn", (_NO_BONUS, *density.BONUS_MODELS)
    if base == _REACTOR or base.startswith(_REACTOR + "_"):
        agent, bases = _REACTOR, ("", *density.BONUS_MODELS)
        base = "" if base == _REACTOR else base[len(_REACTOR) + 1:] or "?"  # "reactor_" names no model
    why = ""
    if agent == _REACTOR and mmc:
        why = ("'_mmc' is DQN's mixed Monte Carlo target and Reactor evaluates its policy with Retrace: "
               "drop '_mmc' (reactor, reactor_pixelcnn, ...)")
    elif base not in bases:
        why = (f"it must start with 'dqn' or a density model that gives a bonus "
               f"({', '.join(density.BONUS_MODELS)}), then '_mmc' for the MMC target, then '_intrinsic' "
               f"for learning from the bonus alone; or with 'reactor', then '_' and a density model for the "
               f"bonus, then '_intrinsic'")
    elif intrinsic and base in ("", _NO_BONUS):
        why = ("'_intrinsic' needs a bonus: start the name with a density model, not 'dqn'" if agent == "dqn"
               else "'_intrinsic' needs a bonus: name a density model after 'reactor_'")
    if why:
        raise ValueError(f"unknown variant {name!r}: {why}; choose one of {', '.join(_ALL)}")
    return agent, base or _NO_BONUS, mmc, intrinsic


def check_variant(name: str) -> str:
    """Return ``name`` if the rule allows it, else raise ValueError naming the choices."""
    _parse(name)
    return name


def variant_overrides(name: str) -> dict[str, Any]:
    """The TrainConfig fields of a variant: ``bonus`` and ``mmc_beta``, plus ``intrinsic_only=True``
    for an ``_intrinsic`` variant and ``agent="reactor"`` for a Reactor variant.
    ``variant_overrides("pixelcnn_mmc") == {"bonus": "pixelcnn", "mmc_beta": 0.1}``;
    ``variant_overrides("dqn") == {"bonus": "none", "mmc_beta": 0.0}``;
    ``variant_overrides("reactor_pixelcnn") == {"agent": "reactor", "bonus": "pixelcnn", "mmc_beta": 0.0}``
    (the bonus on a random 25% of steps: TrainConfig's ``bonus_fraction`` auto for Reactor)."""
    agent, base, mmc, intrinsic = _parse(name)
    fields: dict[str, Any] = {"agent": agent} if agent != "dqn" else {}
    fields.update(bonus="none" if base == _NO_BONUS else base, mmc_beta=MMC_BETA if mmc else 0.0)
    if intrinsic:
        fields["intrinsic_only"] = True
    return fields


def variant_label(name: str) -> str:
    """The paper's name of a variant: "DQN", "DQN + MMC", "DQN-PixelCNN" (with MMC, the paper's
    default), "DQN-PixelCNN without MMC", "DQN-PixelCNN, intrinsic reward only", "Reactor",
    "Reactor-PixelCNN", ..."""
    agent, base, mmc, intrinsic = _parse(name)
    if agent == _REACTOR:
        text = "Reactor" if base == _NO_BONUS else f"Reactor-{density.label(base)}"
    elif base == _NO_BONUS:
        text = "DQN + MMC" if mmc else "DQN"
    else:
        text = f"DQN-{density.label(base)}" + ("" if mmc else " without MMC")
    return text + (", intrinsic reward only" if intrinsic else "")


def variant_agent(name: str) -> str:
    """The agent of a variant: "dqn" or "reactor"."""
    return _parse(name)[0]


def variant_colour(name: str) -> str | None:
    """The colour of the variant's density model in figures; None (matplotlib's cycle) for DQN and Reactor."""
    _, base, _, _ = _parse(name)
    return None if base == _NO_BONUS else density.colour(base)


#: variant name -> TrainConfig fields, every name the rule allows
VARIANTS: dict[str, dict[str, Any]] = {name: variant_overrides(name) for name in _ALL}
#: variant name -> the paper's name of it
LABELS: dict[str, str] = {name: variant_label(name) for name in _ALL}
