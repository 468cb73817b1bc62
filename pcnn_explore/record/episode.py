"""The recorded episode (:class:`Episode`), its file format, saving, loading and validation.

An :class:`Episode` holds, for every agent step t = 0 .. T-1 of the recorded episode (one agent
step = ``frame_skip`` emulator frames):

==================  ===================  ====================================================
key                 shape, dtype         meaning
==================  ===================  ====================================================
``rgb``             (T, H, W, 3) uint8   the RGB picture of state s_t (the state the action is
                                         taken in, which is also the frame the model scores)
``density``         (T, H, W) uint8      the density model's view of s_t, levels 0..7;
                                         (H, W) = ``pcnn_explore.envs.density_shape(env)``:
                                         42x42, N x N for DeepSea-N
``actions``         (T,) int64           a_t, taken in s_t
``rewards``         (T,) float32         extrinsic reward after a_t (unclipped game points)
``life_loss``       (T,) bool            a life was lost during step t
``episode_start``   (T,) bool            s_t is the first state of an episode
``room``            (T,) int16           Montezuma's Revenge room of s_t (RAM address 3); -1
                                         for other games
``n``               (T,) int64           model updates so far, counting this one
``log_rho``         (T,) float64         log rho_n(s_t) in nats, before the update on s_t
``log_rho_prime``   (T,) float64         log rho'_n(s_t) in nats, after that update
``prediction_gain`` (T,) float64         PG_n = log_rho_prime - log_rho (nats)
``pseudo_count``    (T,) float64         the exact pseudo-count of the (unscaled) model,
                                         N_n = rho (1 - rho') / (rho' - rho) (+inf where
                                         PG_n <= 0, 0 where rho' = 1); not the approximation
                                         1 / (exp(PG_n) - 1)
``bonus``           (T,) float64         r+ = beta sqrt(expm1(c * decay(n) * max(PG_n, 0)));
                                         +inf where that exceeds the float range (c = 1 or 10
                                         and the large PG of the first frames), never NaN;
                                         beta is the settings' ``bonus_scale`` (absent: 1)
``surprise``        (T, H, W) float16    per-pixel log-loss -log rho_n(x_ij | x_<ij) in nats,
                                         before the update on s_t: the model's surprise map
``metadata``        JSON string          env, model, settings, the bonus form in words
                                         (``bonus_form``), package and format version,
                                         the PyTorch build, instruction set and thread count
                                         that ran the model, checksum of everything above
==================  ===================  ====================================================

The density model first trains on ``warmup_frames`` frames from the same environment and policy
(separate episodes, environment seed ``seed + 1``), then keeps training online through the
recorded episode (environment seed ``seed``). The bonus numbers come from
:class:`pcnn_explore.bonus.PseudoCountBonus`, so ``n`` counts warm-up updates too.

Files are single ``.npz`` archives written with ``np.savez_compressed`` (atomically, with
:func:`pcnn_explore.atomic.atomic_write`) and read with ``allow_pickle=False``. :func:`load_episode`
checks keys, dtypes, shapes, lengths, value ranges and a SHA-256 checksum, and raises ValueError
naming the file and the problem on anything corrupt, truncated, edited or not an episode at all
(FileNotFoundError for a missing file). :func:`save_episode` validates the same way and raises
ValueError before anything is written.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from pcnn_explore.resources import data_path

from pcnn_explore.atomic import atomic_write

__all__ = ["FORMAT_VERSION", "FIELDS", "BONUS_FIELDS", "Episode", "episode_checksum", "save_episode", "load_episode",
           "SHIPPED_DIR", "shipped_episode", "summarize_episode"]

FORMAT_VERSION = 1

#: (field, dtype, trailing shape or None for "from the data") of every array in an episode file.
FIELDS: dict[str, tuple[np.dtype, tuple[int, ...] | None]] = {
    "rgb": (np.dtype(np.uint8), None),
    "density": (np.dtype(np.uint8), None),
    "actions": (np.dtype(np.int64), ()),
    "rewards": (np.dtype(np.float32), ()),
    "life_loss": (np.dtype(np.bool_), ()),
    "episode_start": (np.dtype(np.bool_), ()),
    "room": (np.dtype(np.int16), ()),
    "n": (np.dtype(np.int64), ()),
    "log_rho": (np.dtype(np.float64), ()),
    "log_rho_prime": (np.dtype(np.float64), ()),
    "prediction_gain": (np.dtype(np.float64), ()),
    "pseudo_count": (np.dtype(np.float64), ()),
    "bonus": (np.dtype(np.float64), ()),
    "surprise": (np.dtype(np.float16), None),
}
BONUS_FIELDS = ("n", "log_rho", "log_rho_prime", "prediction_gain", "pseudo_count", "bonus")

# ----------------------------------------------------------------------------------------------
# The episode
# ----------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Episode:
    """One recorded episode (see the module docstring for every array's meaning and shape)."""

    rgb: np.ndarray
    density: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    life_loss: np.ndarray
    episode_start: np.ndarray
    room: np.ndarray
    n: np.ndarray
    log_rho: np.ndarray
    log_rho_prime: np.ndarray
    prediction_gain: np.ndarray
    pseudo_count: np.ndarray
    bonus: np.ndarray
    surprise: np.ndarray
    metadata: dict[str, Any]

    def __len__(self) -> int:
        return int(len(self.actions))

    @property
    def n_frames(self) -> int:
        """Number of recorded agent steps T."""
        return len(self)

    @property
    def env_id(self) -> str:
        return str(self.metadata["env_id"])

    @property
    def density_model(self) -> str:
        return str(self.metadata["density_model"])

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in FIELDS}

    # -- events, as step indices ---------------------------------------------------------------
    @property
    def reward_steps(self) -> np.ndarray:
        """Steps t with a non-zero extrinsic reward after a_t."""
        return np.flatnonzero(self.rewards != 0)

    @property
    def life_loss_steps(self) -> np.ndarray:
        return np.flatnonzero(self.life_loss)

    @property
    def episode_start_steps(self) -> np.ndarray:
        return np.flatnonzero(self.episode_start)

    @property
    def room_change_steps(self) -> np.ndarray:
        """Steps t whose state s_t is in another room than s_{t-1} (within one episode):
        the milestones of the paper's Fig. 10. Empty for games without rooms."""
        if len(self) < 2 or (self.room < 0).all():
            return np.zeros(0, np.int64)
        changed = (self.room[1:] != self.room[:-1]) & ~self.episode_start[1:]
        return np.flatnonzero(changed) + 1

    def events(self) -> dict[str, np.ndarray]:
        """All event tracks as step indices: rewards, life losses, episode starts, room changes."""
        return {
            "reward": self.reward_steps,
            "life_loss": self.life_loss_steps,
            "episode_start": self.episode_start_steps,
            "room_change": self.room_change_steps,
        }

    def __repr__(self) -> str:
        return (f"Episode(env_id={self.env_id!r}, density_model={self.density_model!r}, "
                f"n_frames={len(self)}, return={float(self.rewards.sum()):g}, "
                f"room_changes={len(self.room_change_steps)})")


def episode_checksum(arrays: dict[str, np.ndarray], metadata: dict[str, Any]) -> str:
    """SHA-256 over every array (name, dtype, shape, bytes) and the metadata without its checksum."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    meta = {k: v for k, v in metadata.items() if k != "checksum"}
    h.update(json.dumps(meta, sort_keys=True).encode())
    return h.hexdigest()


# ----------------------------------------------------------------------------------------------
# Saving and loading
# ----------------------------------------------------------------------------------------------
def save_episode(episode: Episode, path: str | os.PathLike) -> Path:
    """Write ``episode`` to ``path`` (a ``.npz`` file) atomically and return the path.

    The episode is validated first, and the checksum in its metadata is (re)computed.
    """
    if not isinstance(episode, Episode):
        raise TypeError(f"save_episode expects an Episode, got {type(episode).__name__}")
    path = Path(path)
    if path.suffix != ".npz":
        raise ValueError(f"episode files end in .npz, got {str(path)!r}; add the .npz suffix")
    if not path.parent.is_dir():
        raise ValueError(f"cannot write {path}: directory {path.parent} does not exist; create it first")
    if path.is_dir():
        raise ValueError(f"cannot write {path}: it is a directory")
    arrays = {name: np.ascontiguousarray(a) for name, a in episode.arrays().items()}
    metadata = {k: v for k, v in episode.metadata.items() if k != "checksum"}
    metadata.setdefault("format_version", FORMAT_VERSION)
    try:
        _check_arrays(arrays, metadata, where="episode to save")
    except _Bad as e:
        raise ValueError(f"episode to save is not valid, nothing written to {path}: {e}") from None
    metadata["checksum"] = episode_checksum(arrays, metadata)
    with atomic_write(path) as f:
        np.savez_compressed(f, metadata=np.array(json.dumps(metadata, sort_keys=True)), **arrays)
    episode.metadata = metadata
    return path


def load_episode(path: str | os.PathLike) -> Episode:
    """Read and validate an episode file.

    FileNotFoundError if ``path`` does not exist; ValueError naming the file and the problem for
    anything that is not a complete, unmodified episode file (pickled data is never loaded).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"episode file {path} does not exist")
    if not path.is_file():
        raise ValueError(f"{path}: not a valid episode file: not a regular file (a directory?)")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path}: not a valid episode file: not an .npz (zip) archive; "
                         "truncated, corrupt or another kind of file")
    arrays: dict[str, np.ndarray] = {}
    try:
        with np.load(path, allow_pickle=False) as data:
            if not isinstance(data, np.lib.npyio.NpzFile):
                raise _Bad("not an .npz archive of arrays")
            keys = set(data.files)
            missing = sorted((set(FIELDS) | {"metadata"}) - keys)
            extra = sorted(keys - set(FIELDS) - {"metadata"})
            if missing:
                raise _Bad(f"missing arrays {missing}")
            if extra:
                raise _Bad(f"unexpected arrays {extra} (not an episode file of format {FORMAT_VERSION}?)")
            for name in sorted(keys):
                arrays[name] = _read_array(data, name)
    except _Bad as e:
        raise ValueError(f"{path}: not a valid episode file: {e}") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError) as e:
        raise ValueError(f"{path}: corrupt or truncated episode file ({type(e).__name__}: {e})") from None
    raw_meta = arrays.pop("metadata")
    try:
        if raw_meta.dtype.kind != "U" or raw_meta.shape != ():
            raise _Bad(f"metadata must be a JSON string, got an array of dtype {raw_meta.dtype} shape {raw_meta.shape}")
        try:
            metadata = json.loads(str(raw_meta))
        except json.JSONDecodeError as e:
            raise _Bad(f"metadata is not valid JSON ({e})") from None
        if not isinstance(metadata, dict):
            raise _Bad("metadata must be a JSON object")
        version = metadata.get("format_version")
        if version != FORMAT_VERSION:
            raise _Bad(f"format version {version!r}, this package reads version {FORMAT_VERSION}")
        _check_arrays(arrays, metadata, where="file")
        stored = metadata.get("checksum")
        if not isinstance(stored, str):
            raise _Bad("metadata has no checksum")
        actual = episode_checksum(arrays, metadata)
        if actual != stored:
            raise _Bad(f"checksum mismatch (stored {stored[:12]}..., contents hash to {actual[:12]}...): "
                       "the file was modified after it was written; record it again")
    except _Bad as e:
        raise ValueError(f"{path}: not a valid episode file: {e}") from None
    return Episode(**arrays, metadata=metadata)


class _Bad(Exception):
    """A validation failure (turned into ValueError with the file name)."""


def _read_array(data, name: str) -> np.ndarray:
    """``data[name]``, refusing object arrays in words of our own (numpy's message advises unpickling)."""
    try:
        return data[name]
    except ValueError as e:
        if "pickle" in str(e).lower():
            raise _Bad(f"array {name!r} holds Python objects (pickled data), which are never loaded") from None
        raise


def _check_arrays(arrays: dict[str, np.ndarray], metadata: dict[str, Any], where: str) -> None:
    for key in ("env_id", "density_model", "height", "width", "levels"):
        if key not in metadata:
            raise _Bad(f"metadata lacks {key!r}")
    h, w, levels = metadata["height"], metadata["width"], metadata["levels"]
    if not all(isinstance(v, int) and v > 0 for v in (h, w, levels)):
        raise _Bad(f"metadata height/width/levels must be positive integers, got {h!r}/{w!r}/{levels!r}")
    for name, (dtype, trailing) in FIELDS.items():
        if name not in arrays:
            raise _Bad(f"{where} lacks array {name!r}")
        if arrays[name].dtype != dtype:
            raise _Bad(f"array {name!r} has dtype {arrays[name].dtype}, expected {dtype}")
    t = len(arrays["actions"])
    if t < 1:
        raise _Bad("the episode has no steps")
    expected = {name: (t, *trailing) for name, (_, trailing) in FIELDS.items() if trailing is not None}
    expected["density"] = (t, h, w)
    expected["surprise"] = (t, h, w)
    for name, shape in expected.items():
        if arrays[name].shape != shape:
            raise _Bad(f"array {name!r} has shape {arrays[name].shape}, expected {shape} "
                       f"({t} steps, density frames {h}x{w})")
    rgb = arrays["rgb"]
    if rgb.ndim != 4 or rgb.shape[0] != t or rgb.shape[3] != 3:
        raise _Bad(f"array 'rgb' has shape {rgb.shape}, expected ({t}, H, W, 3)")
    if arrays["density"].max() >= levels:
        raise _Bad(f"array 'density' holds level {int(arrays['density'].max())}, expected 0..{levels - 1}")
    if not arrays["episode_start"][0]:
        raise _Bad("the first step must be an episode start")
    if (arrays["actions"] < 0).any():
        raise _Bad("array 'actions' holds negative actions")
    for name in ("log_rho", "log_rho_prime", "prediction_gain"):
        if not np.isfinite(arrays[name]).all():
            raise _Bad(f"array {name!r} holds non-finite values")
    if np.isnan(arrays["pseudo_count"]).any() or (arrays["pseudo_count"] < 0).any():
        raise _Bad("array 'pseudo_count' holds NaN or negative values (inf, where PG <= 0, is allowed)")
    if np.isnan(arrays["bonus"]).any():
        raise _Bad("array 'bonus' holds NaN, a non-finite value no bonus has (+inf, beyond the float range, "
                   "is allowed)")
    if (arrays["bonus"] < 0).any():
        raise _Bad("array 'bonus' holds negative values")


# ----------------------------------------------------------------------------------------------
# Shipped episodes and summaries
# ----------------------------------------------------------------------------------------------
#: Episodes shipped with the repository (``data/episodes``; see its README for the commands).
SHIPPED_DIR = data_path("episodes")  # the package data, also in a non-editable install


def shipped_episode(name: str) -> Path:
    """Path of a shipped episode, e.g. ``shipped_episode("montezuma_pixelcnn")``."""
    path = SHIPPED_DIR / f"{name}.npz"
    if not path.is_file():
        have = sorted(p.stem for p in SHIPPED_DIR.glob("*.npz")) if SHIPPED_DIR.is_dir() else []
        raise ValueError(f"no shipped episode {name!r} in {SHIPPED_DIR}; available: {have or 'none'}; "
                         "data/episodes/README.md gives the commands that make them")
    return path


def summarize_episode(episode: Episode) -> dict[str, Any]:
    """Key numbers of an episode's intrinsic reward around its milestones (room changes).

    ``bonus_at_room_changes``: mean bonus over the steps that enter a new room (NaN if none);
    ``room_change_to_median``: that mean over the episode's median bonus;
    ``first_room_change_rank``: 1 + the number of steps with a larger bonus than the first room
    change (1 = the largest bonus of the episode).
    """
    bonus = np.asarray(episode.bonus, np.float64)
    changes = episode.room_change_steps
    median = float(np.median(bonus))
    at_changes = float(bonus[changes].mean()) if len(changes) else float("nan")
    first = int(changes[0]) if len(changes) else None
    return {
        "density_model": episode.density_model,
        "n_frames": len(episode),
        "extrinsic_return": float(episode.rewards.sum()),
        "mean_bonus": float(bonus.mean()),
        "median_bonus": median,
        "max_bonus": float(bonus.max()),
        "max_bonus_step": int(bonus.argmax()),
        "mean_prediction_gain": float(np.mean(episode.prediction_gain)),
        "room_change_steps": [int(t) for t in changes],
        "bonus_at_room_changes": at_changes,
        "room_change_to_median": at_changes / median if median > 0 else float("nan"),
        "first_room_change_step": first,
        "first_room_change_rank": None if first is None else int((bonus > bonus[first]).sum()) + 1,
        "life_losses": int(episode.life_loss.sum()),
    }
