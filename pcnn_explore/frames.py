"""The density frame's old home: the pipeline lives in :mod:`pcnn_explore.envs.frames`."""
from pcnn_explore.envs.frames import (DENSITY_HEIGHT, DENSITY_LEVELS, DENSITY_WIDTH, area_overlaps, area_resize,  # noqa: F401
                                      area_weights, check_rgb, greyscale, quantise, to_density_frame)

__all__ = ["DENSITY_HEIGHT", "DENSITY_WIDTH", "DENSITY_LEVELS", "area_overlaps", "area_weights", "greyscale",
           "area_resize", "quantise", "check_rgb", "to_density_frame"]
