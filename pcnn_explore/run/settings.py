"""The run's settings file, ``out_dir/settings.json``: the resolved
:class:`~pcnn_explore.run.config.TrainConfig` of the latest start (the checkpoint's header holds
the settings a resume is checked against: :func:`pcnn_explore.run.resume.resume_settings`).
"""
from __future__ import annotations

import json
from pathlib import Path

from pcnn_explore.atomic import write_text_atomic
from pcnn_explore.run.config import TrainConfig

__all__ = ["SETTINGS", "write_settings"]

SETTINGS = "settings.json"


def write_settings(cfg: TrainConfig) -> None:
    """Store the resolved settings as ``out_dir/settings.json``."""
    write_text_atomic(Path(cfg.out_dir) / SETTINGS, json.dumps(cfg.to_dict(), indent=2, sort_keys=True) + "\n")
