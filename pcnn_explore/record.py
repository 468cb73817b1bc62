"""Recorded episodes: play one episode while a density model trains online, save it, load it back.

An :class:`Episode` holds, for every agent step t = 0 .. T-1 of the recorded episode (one agent
step = ``frame_skip`` emulator frames):

==================  ===================  ====================================================
key                 shape, dtype         meaning
==================  ===================  ====================================================
``rgb``             (T, H, W, 3) uint8   the RGB picture of state s_t (the state the action is
                                         taken in, which is also the frame the model scores)
``density``         (T, 42, 42) uint8    the density model's view of s_t, levels 0..7
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
``pseudo_count``    (T,) float64         N_n = 1 / (exp(PG_n) - 1) (inf where PG_n <= 0)
``bonus``           (T,) float64         r+ = sqrt(expm1(c * decay(n) * max(PG_n, 0)))
``surprise``        (T, 42, 42) float16  per-pixel log-loss -log rho_n(x_ij | x_<ij) in nats,
                                         before the update on s_t: the model's surprise map
``metadata``        JSON string          env, model, settings, package and format version,
                                         checksum of everything above
==================  ===================  ====================================================

The density model first trains on ``warmup_frames`` frames from the same environment and policy
(separate episodes, environment seed ``seed + 1``), then keeps training online through the
recorded episode (environment seed ``seed``). The bonus numbers come from
:class:`pcnn_explore.bonus.PseudoCountBonus`, so ``n`` counts warm-up updates too.

Files are single ``.npz`` archives written with ``np.savez_compressed`` (atomically: temp file
then ``os.replace``) and read with ``allow_pickle=False``. :func:`load_episode` checks keys,
dtypes, shapes, lengths, value ranges and a SHA-256 checksum, and raises ValueError naming the
file and the problem on anything corrupt, truncated or edited.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any, Callable

import numpy as np

import pcnn_explore

__all__ = [
    "FORMAT_VERSION",
    "DENSITY_MODELS",
    "SCRIPTS",
    "Episode",
    "ScriptedPolicy",
    "record_episode",
    "save_episode",
    "load_episode",
    "episode_checksum",
    "SHIPPED_DIR",
    "shipped_episode",
    "summarize_episode",
    "add_arguments",
    "run_cli",
]

FORMAT_VERSION = 1
DENSITY_MODELS = ("pixelcnn", "cts", "convcts")
MONTEZUMA_ROOM_RAM = 3  # RAM address of the current room in Montezuma's Revenge

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
# Scripted policies
# ----------------------------------------------------------------------------------------------
_MZ = {"NOOP": 0, "FIRE": 1, "UP": 2, "RIGHT": 3, "LEFT": 4, "DOWN": 5, "RIGHTFIRE": 11, "LEFTFIRE": 12}

#: Montezuma's Revenge, first room: down the ladder, rope, right ladder, jump the skull, key (+100),
#: back up, right door (+300), room 2, then back to room 1 and into room 2 again (three room
#: changes in all). Open-loop (action, repeat) pairs in agent steps of 4 emulator frames; they
#: need deterministic dynamics (no sticky actions, no random no-ops at reset). Found by trial,
#: reading the player's position from RAM (x: address 42, y: address 43).
MONTEZUMA_SCRIPT: tuple[tuple[str, int], ...] = (
    ("NOOP", 1), ("DOWN", 9), ("RIGHT", 13), ("RIGHTFIRE", 1), ("NOOP", 3), ("DOWN", 3),  # onto the rope
    ("RIGHTFIRE", 1), ("NOOP", 12), ("RIGHT", 1), ("DOWN", 9),  # right platform, down the ladder
    ("LEFT", 10), ("LEFTFIRE", 1), ("NOOP", 6), ("LEFT", 14),  # jump over the skull
    ("UP", 9), ("LEFT", 1), ("FIRE", 1), ("NOOP", 15),  # left ladder, jump for the key
    ("RIGHT", 1), ("DOWN", 9), ("RIGHT", 8), ("RIGHTFIRE", 1), ("NOOP", 6), ("RIGHT", 16),  # back
    ("UP", 9), ("LEFT", 1), ("LEFTFIRE", 1), ("NOOP", 12), ("LEFTFIRE", 1), ("NOOP", 7),  # rope
    ("LEFT", 1), ("UP", 12),  # middle ladder, back where the episode started
    ("RIGHT", 2), ("RIGHTFIRE", 1), ("NOOP", 8), ("RIGHT", 20),  # right door (+300), room 2
    ("LEFT", 10), ("RIGHT", 14),  # back into room 1 and out again
)

#: env id -> the script run by ``--policy scripted``.
SCRIPTS: dict[str, tuple[tuple[str, int], ...]] = {"ALE/MontezumaRevenge-v5": MONTEZUMA_SCRIPT}


class ScriptedPolicy:
    """Plays a fixed action script from each episode start, then uniformly random actions.

    ``script`` is a sequence of (action name, repeat) pairs; names are Montezuma's Revenge
    action names (NOOP, FIRE, UP, RIGHT, LEFT, DOWN, RIGHTFIRE, LEFTFIRE).
    """

    def __init__(self, script, n_actions: int, rng: np.random.Generator):
        self.actions = np.array([_MZ[name] for name, repeat in script for _ in range(repeat)], np.int64)
        self.n_actions, self.rng = int(n_actions), rng
        self.t = 0

    def reset(self) -> None:
        self.t = 0

    def __call__(self, obs: np.ndarray) -> int:
        t, self.t = self.t, self.t + 1
        if t < len(self.actions):
            return int(self.actions[t])
        return int(self.rng.integers(self.n_actions))


class _RandomPolicy:
    def __init__(self, n_actions: int, rng: np.random.Generator):
        self.n_actions, self.rng = int(n_actions), rng

    def reset(self) -> None:
        pass

    def __call__(self, obs: np.ndarray) -> int:
        return int(self.rng.integers(self.n_actions))


class _CheckpointPolicy:
    def __init__(self, fn: Callable[[np.ndarray], int]):
        self.fn = fn

    def reset(self) -> None:
        pass

    def __call__(self, obs: np.ndarray) -> int:
        return int(self.fn(obs))


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
    arrays = {name: np.ascontiguousarray(a) for name, a in episode.arrays().items()}
    metadata = {k: v for k, v in episode.metadata.items() if k != "checksum"}
    metadata.setdefault("format_version", FORMAT_VERSION)
    _check_arrays(arrays, metadata, where="episode to save")
    metadata["checksum"] = episode_checksum(arrays, metadata)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".npz.tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(f, metadata=np.array(json.dumps(metadata, sort_keys=True)), **arrays)
        os.chmod(tmp, 0o666 & ~_umask())  # the mode of a plainly created file, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    episode.metadata = metadata
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def load_episode(path: str | os.PathLike) -> Episode:
    """Read and validate an episode file; raise ValueError naming the file and the problem."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"episode file {path} does not exist")
    arrays: dict[str, np.ndarray] = {}
    try:
        with np.load(path, allow_pickle=False) as data:
            keys = set(data.files)
            missing = sorted((set(FIELDS) | {"metadata"}) - keys)
            extra = sorted(keys - set(FIELDS) - {"metadata"})
            if missing:
                raise _Bad(f"missing arrays {missing}")
            if extra:
                raise _Bad(f"unexpected arrays {extra} (not an episode file of format {FORMAT_VERSION}?)")
            for name in sorted(keys):
                arrays[name] = data[name]
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
    for name in ("log_rho", "log_rho_prime", "prediction_gain", "bonus"):
        if not np.isfinite(arrays[name]).all():
            raise _Bad(f"array {name!r} holds non-finite values")
    if np.isnan(arrays["pseudo_count"]).any() or (arrays["pseudo_count"] < 0).any():
        raise _Bad("array 'pseudo_count' holds NaN or negative values (inf, where PG <= 0, is allowed)")
    if (arrays["bonus"] < 0).any():
        raise _Bad("array 'bonus' holds negative values")


# ----------------------------------------------------------------------------------------------
# Shipped episodes and summaries
# ----------------------------------------------------------------------------------------------
#: Episodes shipped with the repository (``data/episodes``; see its README for the commands).
SHIPPED_DIR = Path(__file__).resolve().parents[1] / "data" / "episodes"


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


# ----------------------------------------------------------------------------------------------
# Recording
# ----------------------------------------------------------------------------------------------
def _check_settings(env_id, policy, density, warmup_frames, seed, max_steps, n_episodes, pg_scale,
                    sticky_actions) -> None:
    from pcnn_explore.envs import check_env_id

    check_env_id(env_id)
    if density not in DENSITY_MODELS:
        raise ValueError(f"unknown density model {density!r}: choose one of {', '.join(DENSITY_MODELS)}")
    for name, value, lo in (("warmup_frames", warmup_frames, 0), ("seed", seed, 0),
                            ("max_steps", max_steps, 1), ("n_episodes", n_episodes, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
    if not (isinstance(pg_scale, (int, float)) and np.isfinite(pg_scale) and pg_scale > 0):
        raise ValueError(f"pg_scale must be a positive number, got {pg_scale!r}")
    if not isinstance(policy, (str, os.PathLike)):
        raise TypeError(f"policy must be 'random', 'scripted' or a checkpoint path, got {type(policy).__name__}")
    policy = str(policy)
    if policy == "scripted":
        if env_id not in SCRIPTS:
            raise ValueError(f"no scripted policy for {env_id!r}; scripts exist for {', '.join(SCRIPTS)}; "
                             "use --policy random or a checkpoint")
        if sticky_actions not in (None, 0, 0.0):
            raise ValueError("the scripted policy is an open-loop action script and needs sticky_actions=0")
    elif policy != "random" and not Path(policy).exists():
        raise ValueError(f"policy {policy!r} is neither 'random', 'scripted' nor an existing checkpoint "
                         "(a training run's checkpoint file or output directory)")


def _load_checkpoint_policy(path: str, env_id: str, seed: int):
    """``pcnn_explore.train.load_policy``, checked against ``env_id``."""
    try:
        from pcnn_explore.train import load_policy
    except ImportError as e:  # pragma: no cover - the train module ships with the package
        raise ValueError(f"checkpoint policies need pcnn_explore.train.load_policy ({e})") from None
    ckpt_env, fn = load_policy(path, epsilon=0.0, seed=seed)
    if ckpt_env != env_id:
        raise ValueError(f"checkpoint {path} was trained on {ckpt_env!r}, not {env_id!r}; pass --env {ckpt_env}")
    return fn


def _make_env_and_policy(policy: str, env_id: str, env_seed: int, rng: np.random.Generator,
                         sticky: float, checkpoint_fn=None):
    """The environment (``info["rgb"]`` and ``info["density_frame"]`` on every step) and the policy.

    Atari: no random no-ops at reset, so the seed fixes the episode. A checkpoint policy gets the
    environment it was trained on (its frame stack, sticky actions, ...).
    """
    from pcnn_explore.envs import is_atari, make_env

    kwargs: dict[str, Any] = {}
    if checkpoint_fn is not None and hasattr(checkpoint_fn, "env_kwargs"):
        kwargs.update(checkpoint_fn.env_kwargs)
    if is_atari(env_id):
        kwargs.update(noop_max=0)
        if checkpoint_fn is None or not hasattr(checkpoint_fn, "env_kwargs"):
            kwargs.update(sticky_actions=sticky)
    env = make_env(env_id, env_seed, keep_rgb=True, **kwargs)
    n_actions = env.action_space.n
    if policy == "random":
        return env, _RandomPolicy(n_actions, rng)
    if policy == "scripted":
        return env, ScriptedPolicy(SCRIPTS[env_id], n_actions, rng)
    return env, _CheckpointPolicy(checkpoint_fn)


def _room(env) -> int:
    return int(env.unwrapped.ale.getRAM()[MONTEZUMA_ROOM_RAM])


def record_episode(
    env_id: str,
    policy: str | os.PathLike = "random",
    density: str = "pixelcnn",
    warmup_frames: int = 0,
    seed: int = 0,
    *,
    max_steps: int = 2000,
    n_episodes: int = 1,
    pg_scale: float = 0.1,
    pg_schedule: str = "inverse_sqrt",
    sticky_actions: float | None = None,
    device: str = "cpu",
    progress: bool = False,
) -> Episode:
    """Play ``n_episodes`` episode(s) of ``env_id`` (at most ``max_steps`` agent steps in all) with
    ``policy`` while a ``density`` model trains online on every state; return the :class:`Episode`.

    ``policy``: "random" (uniform), "scripted" (the action script in :data:`SCRIPTS`, then
    random), or the path of an agent checkpoint (``pcnn_explore.train.load_policy``).
    ``warmup_frames``: frames (agent steps) the model trains on first, from separate episodes
    of the same env and policy. ``sticky_actions``: probability of repeating the previous action
    per emulator frame; None means 0.25 (the ALE v5 default) except 0 for the scripted policy.
    Random no-ops at reset are off so that a seed fixes the episode. Bonus settings
    (``pg_scale`` c, ``pg_schedule``) are those of :class:`pcnn_explore.bonus.PseudoCountBonus`.
    """
    _check_settings(env_id, policy, density, warmup_frames, seed, max_steps, n_episodes, pg_scale,
                    sticky_actions)
    return _record(env_id, str(policy), density, int(warmup_frames), int(seed), int(max_steps), int(n_episodes),
                   float(pg_scale), pg_schedule, sticky_actions, device, progress)


def _record(env_id, policy, density, warmup_frames, seed, max_steps, n_episodes, pg_scale, pg_schedule,
            sticky_actions, device, progress) -> Episode:
    from pcnn_explore.bonus import SCHEDULES, PseudoCountBonus
    from pcnn_explore.density import make_density

    if pg_schedule not in SCHEDULES:
        raise ValueError(f"unknown pg_schedule {pg_schedule!r}: choose one of {', '.join(SCHEDULES)}")
    policy = str(policy)
    sticky = (0.0 if policy == "scripted" else 0.25) if sticky_actions is None else float(sticky_actions)
    checkpoint_fn = None
    if policy not in ("random", "scripted"):
        checkpoint_fn = _load_checkpoint_policy(policy, env_id, int(seed))
        sticky = float(getattr(checkpoint_fn, "env_kwargs", {}).get("sticky_actions", sticky))
    model_kwargs = {"device": device, "seed": int(seed)} if density == "pixelcnn" else {}
    model = make_density(density, **model_kwargs)
    bonus = PseudoCountBonus(model, scale=float(pg_scale), schedule=pg_schedule)
    is_montezuma = env_id == "ALE/MontezumaRevenge-v5"
    atari = env_id.startswith("ALE/")

    # Warm-up: the model trains on frames from separate episodes (environment seed + 1).
    if warmup_frames:
        env, pol = _make_env_and_policy(policy, env_id, int(seed) + 1, np.random.default_rng([int(seed), 1]),
                                        sticky, checkpoint_fn)
        done, steps_in_episode = True, 0
        for _ in _progress(range(warmup_frames), progress, "warm-up"):
            if done:
                obs, info = env.reset()
                pol.reset()
                steps_in_episode = 0
            bonus.step(info["density_frame"])
            obs, _, terminated, truncated, info = env.step(pol(obs))
            steps_in_episode += 1
            done = terminated or truncated or steps_in_episode >= max_steps
        env.close()

    env, pol = _make_env_and_policy(policy, env_id, int(seed), np.random.default_rng([int(seed), 0]),
                                    sticky, checkpoint_fn)
    rows: dict[str, list] = {name: [] for name in FIELDS}
    done, episodes_done = True, 0
    bar = _progress(range(max_steps), progress, "episode")
    for _ in bar:
        if done:
            if episodes_done == n_episodes:
                break
            obs, info = env.reset()
            pol.reset()
            episodes_done += 1
            start = True
        frame = info["density_frame"]
        rows["rgb"].append(info["rgb"])
        rows["density"].append(frame)
        rows["room"].append(_room(env) if is_montezuma else -1)
        rows["episode_start"].append(start)
        rows["surprise"].append((-model.pixel_log_prob(frame[None])[0]).astype(np.float16))
        record = bonus.step(frame)
        for name in BONUS_FIELDS:
            rows[name].append(getattr(record, name))
        lives = info.get("lives")
        action = pol(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        rows["actions"].append(action)
        rows["rewards"].append(reward)
        rows["life_loss"].append(lives is not None and info.get("lives", lives) < lives)
        done, start = terminated or truncated, False
    env.close()

    arrays = {name: np.asarray(values, dtype=FIELDS[name][0]) for name, values in rows.items()}
    metadata = {
        "format_version": FORMAT_VERSION,
        "package_version": pcnn_explore.__version__,
        "env_id": env_id,
        "density_model": density,
        "model": repr(model),
        "height": int(frame.shape[0]),
        "width": int(frame.shape[1]),
        "levels": 8,
        "settings": {
            "policy": policy if policy in ("random", "scripted") else f"checkpoint:{Path(policy).name}",
            "warmup_frames": int(warmup_frames),
            "seed": int(seed),
            "max_steps": int(max_steps),
            "n_episodes": int(n_episodes),
            "pg_scale": float(pg_scale),
            "pg_schedule": pg_schedule,
            "sticky_actions": sticky if atari else None,
            "noop_max": 0 if atari else None,
            "frame_skip": 4 if atari else None,
            "scored_frame": "state",
            "warmup_env_seed": int(seed) + 1,
        },
    }
    return Episode(**arrays, metadata=metadata)


def _progress(iterable, enabled: bool, desc: str):
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, leave=False)


# ----------------------------------------------------------------------------------------------
# Command line: pcnn-explore record ...
# ----------------------------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--env", required=True, help="environment id, e.g. ALE/MontezumaRevenge-v5")
    parser.add_argument("--policy", default="random",
                        help="random | scripted | path of an agent checkpoint (default: random)")
    parser.add_argument("--density", default="pixelcnn", choices=DENSITY_MODELS,
                        help="density model trained online (default: pixelcnn)")
    parser.add_argument("--warmup-frames", type=int, default=0,
                        help="frames the model trains on before the recorded episode (default: 0)")
    parser.add_argument("--max-steps", type=int, default=2000,
                        help="at most this many agent steps are recorded (default: 2000)")
    parser.add_argument("--episodes", type=int, default=1, help="episodes to record back to back (default: 1)")
    parser.add_argument("--seed", type=int, default=0, help="environment, policy and model seed (default: 0)")
    parser.add_argument("--pg-scale", type=float, default=0.1, help="bonus scale c (default: 0.1)")
    parser.add_argument("--pg-schedule", default="inverse_sqrt",
                        help="PG decay: inverse_sqrt | inverse | constant (default: inverse_sqrt)")
    parser.add_argument("--sticky-actions", type=float, default=None,
                        help="sticky-action probability (default: 0.25; 0 for the scripted policy)")
    parser.add_argument("--device", default="cpu", help="torch device of the PixelCNN (default: cpu)")
    parser.add_argument("--out", required=True, help="output file, ending in .npz")


def run_cli(args: argparse.Namespace) -> int:
    import torch

    torch.set_num_threads(1)
    out = Path(args.out)
    try:
        if out.suffix != ".npz":
            raise ValueError(f"--out must end in .npz, got {args.out!r}")
        if not out.parent.is_dir():
            raise ValueError(f"--out directory {out.parent} does not exist; create it first")
        from pcnn_explore.bonus import SCHEDULES

        if args.pg_schedule not in SCHEDULES:
            raise ValueError(f"unknown --pg-schedule {args.pg_schedule!r}: choose one of {', '.join(SCHEDULES)}")
        _check_settings(args.env, args.policy, args.density, args.warmup_frames, args.seed, args.max_steps,
                        args.episodes, args.pg_scale, args.sticky_actions)
    except (ValueError, TypeError) as e:
        print(f"pcnn-explore record: error: {e}", file=sys.stderr)
        return 2
    try:
        episode = record_episode(args.env, args.policy, args.density, args.warmup_frames, args.seed,
                                 max_steps=args.max_steps, n_episodes=args.episodes, pg_scale=args.pg_scale,
                                 pg_schedule=args.pg_schedule, sticky_actions=args.sticky_actions,
                                 device=args.device, progress=sys.stderr.isatty())
    except (ValueError, TypeError, FileNotFoundError) as e:  # e.g. a checkpoint for another game
        print(f"pcnn-explore record: error: {e}", file=sys.stderr)
        return 2
    save_episode(episode, out)
    size = out.stat().st_size / 1e6
    print(f"wrote {out} ({size:.1f} MB): {episode!r}; mean bonus {episode.bonus.mean():.4f}, "
          f"max bonus {episode.bonus.max():.4f}")
    return 0
