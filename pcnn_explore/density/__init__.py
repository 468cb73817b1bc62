"""Density models over quantised frames, all following :class:`DensityModel` (see ``base``)."""
from pcnn_explore.density.base import DensityModel, all_images, check_frames
from pcnn_explore.density.cts import ConvCTSDensity, CTSDensity
from pcnn_explore.density.empirical import EmpiricalDensity
from pcnn_explore.density.pixelcnn import PixelCNNDensity

MODELS = {
    "pixelcnn": PixelCNNDensity,
    "cts": CTSDensity,
    "convcts": ConvCTSDensity,
    "empirical": EmpiricalDensity,
}


def make_density(name: str, height: int = 42, width: int = 42, levels: int = 8, **kwargs) -> DensityModel:
    """Build a density model by name: "pixelcnn", "cts", "convcts" or "empirical".

    Extra keyword arguments go to the model (e.g. ``lr`` or ``device`` for PixelCNN).
    """
    if name not in MODELS:
        raise ValueError(f"unknown density model {name!r}: choose one of {', '.join(MODELS)}")
    return MODELS[name](height=height, width=width, levels=levels, **kwargs)


__all__ = [
    "DensityModel",
    "PixelCNNDensity",
    "CTSDensity",
    "ConvCTSDensity",
    "EmpiricalDensity",
    "MODELS",
    "make_density",
    "all_images",
    "check_frames",
]
