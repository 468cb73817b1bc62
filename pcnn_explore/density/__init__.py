"""Density models over quantised frames, all following :class:`DensityModel` (see ``base``).

The registry :data:`REGISTRY` is the one place that knows the models: their names (as typed on
the command line and stored in checkpoints), labels and colours for figures, which of the common
constructor options (``lr``, ``device``, ``seed``, ``rmsprop``) each takes, whether an agent can use it as its
bonus, and the normalisation tolerance its tests use. Training, recording, the experiments and
the plots read it; none of them branches on a model's name. To add a model, see the README
("How to add a density model").
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

#: the models' classes and the helpers, imported on first use (PixelCNN loads torch, CTS numba):
#: name -> its module in this package
_HOMES = {"PixelCNNDensity": "pixelcnn", "CTSDensity": "cts", "ConvCTSDensity": "cts",
          "EmpiricalDensity": "empirical", "DensityModel": "base", "all_images": "base", "check_frames": "base"}

#: the options every caller may pass to :func:`make_density`; each model takes the ones it lists
#: (``rmsprop``: the PixelCNN's optimiser reading, "tf1" the paper's and its default, or "torch")
COMMON_OPTIONS = ("lr", "device", "seed", "rmsprop")


@dataclass(frozen=True)
class DensitySpec:
    """What the kit needs to know about one density model."""

    name: str
    cls: type | str  # the model's class, or its name in this package (imported on first use)
    label: str  # in figures and tables, the paper's word
    colour: str  # a matplotlib colour, the same in every figure
    options: tuple[str, ...] = ()  # which of COMMON_OPTIONS the constructor takes
    agent_bonus: bool = True  # offered as an agent's bonus (--bonus) and for recordings (--density)
    normalisation_tol: float = 1e-6  # |sum over all images of rho - 1| allowed in float64 tests
    fixed: dict[str, Any] = field(default_factory=dict)  # constructor arguments this entry always passes

    @property
    def model_class(self) -> type:
        """The model's class (``cls``, imported if it is given by name)."""
        return __getattr__(self.cls) if isinstance(self.cls, str) else self.cls


REGISTRY: dict[str, DensitySpec] = {
    spec.name: spec
    for spec in (
        DensitySpec("pixelcnn", "PixelCNNDensity", "PixelCNN", "tab:blue", options=("lr", "device", "seed", "rmsprop"),
                    normalisation_tol=1e-4),
        DensitySpec("pixelcnn_pos", "PixelCNNDensity", "PixelCNN (position bias)", "tab:purple",
                    options=("lr", "device", "seed", "rmsprop"), normalisation_tol=1e-4, fixed={"position": "bias"}),
        DensitySpec("cts", "CTSDensity", "CTS", "tab:orange"),
        DensitySpec("convcts", "ConvCTSDensity", "ConvCTS", "tab:green"),
        DensitySpec("empirical", "EmpiricalDensity", "empirical", "tab:grey", agent_bonus=False),
    )
}

#: the models an agent (``--bonus``) or a recording (``--density``) can use
BONUS_MODELS: tuple[str, ...] = tuple(name for name, spec in REGISTRY.items() if spec.agent_bonus)


def density_spec(name: str) -> DensitySpec:
    """The registry entry of ``name``; ValueError naming the choices for an unknown name."""
    if name not in REGISTRY:
        raise ValueError(f"unknown density model {name!r}: choose one of {', '.join(REGISTRY)}")
    return REGISTRY[name]


def label(name: str) -> str:
    """The model's label in figures ("PixelCNN"); unknown names come back unchanged."""
    return REGISTRY[name].label if name in REGISTRY else name


def colour(name: str) -> str | None:
    """The model's colour in figures; None (matplotlib's cycle) for unknown names."""
    return REGISTRY[name].colour if name in REGISTRY else None


def make_density(name: str, height: int = 42, width: int = 42, levels: int = 8, **kwargs: Any) -> DensityModel:
    """Build a registered density model by name for frames of ``(height, width)`` with ``levels`` levels.

    The common options ``lr``, ``device``, ``seed`` and ``rmsprop`` may always be passed: each model
    receives the ones it takes (a ``None`` value means "the model's default"; PixelCNN's ``rmsprop``
    default is "tf1", the paper's reading). Any other keyword goes to
    the model as is (e.g. ``lr_schedule`` for PixelCNN). The entry's ``fixed`` arguments are
    always passed (``pixelcnn_pos``: ``position="bias"``) and may not be overridden.
    """
    spec = density_spec(name)
    clash = sorted(set(kwargs) & set(spec.fixed))
    if clash:
        raise ValueError(f"density model {name!r} fixes {', '.join(clash)} ({spec.fixed}); "
                         "choose another registered name instead")
    model_kwargs = {k: v for k, v in kwargs.items()
                    if k not in COMMON_OPTIONS or (k in spec.options and v is not None)}
    return spec.model_class(height=height, width=width, levels=levels, **spec.fixed, **model_kwargs)


def __getattr__(name: str):
    """The models' classes, the helpers of ``base`` and ``MODELS`` (name -> class, every registered
    model), imported on first use."""
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    if name == "MODELS":
        return {key: spec.model_class for key, spec in REGISTRY.items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DensityModel",
    "DensitySpec",
    "PixelCNNDensity",
    "CTSDensity",
    "ConvCTSDensity",
    "EmpiricalDensity",
    "REGISTRY",
    "MODELS",
    "BONUS_MODELS",
    "COMMON_OPTIONS",
    "density_spec",
    "label",
    "colour",
    "make_density",
    "all_images",
    "check_frames",
]
