"""Frame streams from real Atari games, generated once and cached on disk.

A *frame stream* is the sequence of density-model frames an agent sees while it acts in an
ALE game: ``frames[i]`` is the (42, 42) uint8 frame (levels 0..7, see
:func:`pcnn_explore.envs.frames.to_density_frame`) of the state in which ``actions[i]`` was taken,
``rewards[i]`` is the reward that action earned, and ``episode_starts[i]`` is True when
``frames[i]`` is the first frame of an episode (the observation right after a reset). Terminal
observations are not part of the stream: the state in which an action is taken is the state a
density model scores (the paper's and Bellemare et al.'s choice), and no action is taken in a
terminal state. Every index counts *agent steps* (one agent step = ``frameskip`` emulator frames).

Policies
--------
- ``"random"``: uniform over the game's minimal action set.
- ``"biased"``: the policy changes every ``switch_every`` agent steps (counted over the whole
  stream, across episode boundaries); each phase draws its action probabilities from a symmetric
  Dirichlet(``BIASED_CONCENTRATION``), so some phases favour a few actions strongly. This is the
  non-stationary data of the paper's Fig. 2 (left), where "the agent's policy changes every 4K
  updates".
- ``"explorer"`` (Montezuma's Revenge): an open-loop route through rooms 1, 2, 6 and 5 with
  random branches, played from emulator states cloned and restored along the route
  (:mod:`pcnn_explore.streams.policies`); needs ``sticky_actions=0``.
- ``"checkpoint:PATH"``: a trained agent (``pcnn_explore.run.load_policy(PATH)``) in the env
  it was trained on; the settings hold the policy file's content hash.

Streams of the last two also carry ``rooms`` (RAM address 3 in Montezuma, else -1) and
``in_branch`` (the explorer's random branches); the others have None there.

Caching
-------
:func:`load_stream` writes each stream as ``.npz`` into the cache directory (argument
``cache_dir``, else the environment variable ``PCNN_EXPLORE_CACHE``, else
``~/.cache/pcnn-explore``), under ``streams/`` with every setting in the file name. The file
also stores its settings as JSON; a file whose stored settings differ from the request (or which
cannot be read, is truncated or has inconsistent arrays) is regenerated, never trusted. The
stored settings include the ale-py version and a fingerprint of the frame conversion
(:func:`frames_fingerprint`), so upgrading either regenerates the streams. A
request for fewer frames than a valid cached stream holds is served from that stream's prefix,
which equals the shorter stream exactly (random numbers are consumed in stream order). Files
are written atomically (:func:`pcnn_explore.atomic.atomic_write`) and read with
``np.load(allow_pickle=False)``.
"""
from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from pcnn_explore.atomic import atomic_write
from pcnn_explore.envs.frames import DENSITY_HEIGHT, DENSITY_LEVELS, DENSITY_WIDTH, to_density_frame

__all__ = ["FrameStream", "POLICIES", "BIASED_CONCENTRATION", "load_stream", "generate_stream",
           "stream_settings", "stream_path", "prefix", "draw_actions", "frames_fingerprint", "default_cache_dir", "check_game"]

POLICIES = ("random", "biased", "explorer", "checkpoint:PATH")
#: Dirichlet concentration of the per-phase action probabilities of the "biased" policy.
BIASED_CONCENTRATION = 0.5
#: Bumped whenever the stream's content for given settings would change.
STREAM_FORMAT = 3  # 3: a recurrent checkpoint policy starts every episode from a zero state


@dataclasses.dataclass(frozen=True)
class FrameStream:
    """One recorded stream; all arrays have length N (agent steps).

    frames:         (N, 42, 42) uint8, levels 0..7, the state in which ``actions[i]`` was taken
    episode_starts: (N,) bool, True at the first frame of each episode (always True at 0)
    actions:        (N,) int64, index into the game's minimal action set
    rewards:        (N,) float32, unclipped game reward of ``actions[i]``
    phases:         (N,) int64, index of the policy phase (all 0 for "random")
    action_probs:   (n_phases, n_actions) float64, each phase's action probabilities (NaN for the
                    explorer and checkpoint policies, which follow no fixed distribution)
    settings:       the generating settings (game, n_frames, seed, policy, ...)
    path:           the cache file, or None when not cached
    from_cache:     True when read from an existing valid cache file
    rooms:          (N,) int16 room of each frame (Montezuma, RAM address 3; -1 in other games), or
                    None for the random and biased policies
    in_branch:      (N,) bool, True on the explorer's random branches, or None (random, biased)
    """

    frames: np.ndarray
    episode_starts: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    phases: np.ndarray
    action_probs: np.ndarray
    settings: dict[str, Any]
    path: Path | None = None
    from_cache: bool = False
    rooms: np.ndarray | None = None
    in_branch: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.frames.shape[0])

    @property
    def episode_start_indices(self) -> np.ndarray:
        """(E,) int64 indices of the first frame of each episode."""
        return np.flatnonzero(self.episode_starts)

    @property
    def n_episodes(self) -> int:
        """Number of episodes begun in the stream (the last one may be unfinished)."""
        return int(self.episode_starts.sum())


def _registered_games() -> list[str]:
    import ale_py
    import gymnasium

    gymnasium.register_envs(ale_py)
    return sorted(k[len("ALE/"):-len("-v5")] for k in gymnasium.registry
                  if k.startswith("ALE/") and k.endswith("-v5"))


def check_game(game: object) -> str:
    """Return ``game`` if ``ALE/<game>-v5`` is a registered environment, else raise a clear error."""
    if not isinstance(game, str):
        raise TypeError(f"game must be an ALE game name such as 'Freeway', got {type(game).__name__}")
    games = _registered_games()
    if game not in games:
        close = difflib.get_close_matches(game, games, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ValueError(f"unknown ALE game {game!r} (expected a name like 'Freeway', 'Pong' or "
                         f"'MontezumaRevenge' for which ALE/<name>-v5 exists){hint}")
    return game


def _check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def stream_settings(game: str, n_frames: int, seed: int = 0, policy: str = "random",
                    switch_every: int | None = None, frameskip: int = 4,
                    sticky_actions: float | None = None) -> dict[str, Any]:
    """Validate the settings of a stream and return them as a dict (what the cache file stores).

    ``sticky_actions`` None means 0 for the explorer (an open-loop route) and 0.25 (the ALE v5
    default) otherwise; a checkpoint's streams use the value its agent was trained with.

    Raises TypeError/ValueError naming the bad setting before any environment is built.
    """
    import ale_py

    game = check_game(game)
    n_frames = _check_int("n_frames", n_frames, 1)
    seed = _check_int("seed", seed, 0)
    frameskip = _check_int("frameskip", frameskip, 1)
    extra: dict[str, Any] = {}
    if sticky_actions is None:
        sticky_actions = 0.0 if policy == "explorer" else 0.25
    if not isinstance(policy, str) or (policy not in POLICIES[:3] and not policy.startswith("checkpoint:")):
        raise ValueError(f"unknown policy {policy!r}: choose one of {', '.join(POLICIES)}")
    if policy == "explorer":
        from pcnn_explore.streams import policies as sp

        if game not in sp.EXPLORER_GAMES:
            raise ValueError(f"policy 'explorer' has a route for {', '.join(sp.EXPLORER_GAMES)} only, not {game!r}; "
                             "use 'random', 'biased' or 'checkpoint:PATH' (a trained agent)")
        if float(sticky_actions) != 0.0:
            raise ValueError("policy 'explorer' plays an open-loop route and needs sticky_actions=0, "
                             f"got {sticky_actions}")
        extra = {"route": sp.route_fingerprint(), "branch_every": sp.BRANCH_EVERY, "branch_length": sp.BRANCH_LENGTH}
    elif policy.startswith("checkpoint:"):
        from pcnn_explore.streams import policies as sp

        extra = sp.checkpoint_settings(policy[len("checkpoint:"):], game)
        sticky_actions = extra.pop("sticky_actions")  # the env the agent was trained in
    if policy == "biased":
        if switch_every is None:
            raise ValueError("policy='biased' needs switch_every (agent steps per policy phase), "
                             "e.g. switch_every=4000 as in the paper's Fig. 2 (left)")
        switch_every = _check_int("switch_every", switch_every, 1)
    elif switch_every is not None:
        raise ValueError("switch_every only applies to policy='biased'; pass switch_every=None "
                         "for the uniform random policy")
    if isinstance(sticky_actions, bool) or not isinstance(sticky_actions, (int, float, np.floating)):
        raise TypeError(f"sticky_actions must be a probability (float), got {sticky_actions!r}")
    if not 0.0 <= float(sticky_actions) <= 1.0:
        raise ValueError(f"sticky_actions is a probability and must lie in [0, 1], got {sticky_actions}")
    return {
        "game": game, "n_frames": n_frames, "seed": seed, "policy": policy,
        "switch_every": switch_every, "frameskip": frameskip,
        "sticky_actions": float(sticky_actions),
        "concentration": BIASED_CONCENTRATION if policy == "biased" else None,
        "height": DENSITY_HEIGHT, "width": DENSITY_WIDTH, "levels": DENSITY_LEVELS,
        "ale_py": ale_py.__version__, "frames": frames_fingerprint(), "format": STREAM_FORMAT, **extra,
    }


def frames_fingerprint() -> str:
    """A short hash of what :func:`to_density_frame` makes of three fixed test images (random
    noise; a smooth ramp crossing every grey-level boundary; bands of uniform greys and colours
    whose luma lies exactly on, just below and just above each bin edge, each band exactly one
    output row high). Stored with each stream, so a change to the frame conversion, including one
    that moves only values on a bin edge, invalidates every cached stream."""
    rng = np.random.default_rng(0)
    noise = rng.integers(0, 256, size=(210, 160, 3), dtype=np.uint8)
    ramp = np.broadcast_to(np.linspace(0, 255, 160).round().astype(np.uint8)[None, :, None], (210, 160, 3))
    digest = hashlib.sha1()
    for image in (noise, np.ascontiguousarray(ramp), _bin_edge_image()):
        digest.update(to_density_frame(image, DENSITY_HEIGHT, DENSITY_WIDTH, DENSITY_LEVELS).tobytes())
    return digest.hexdigest()[:12]


def _bin_edge_image() -> np.ndarray:
    """(210, 160, 3) uint8: 42 bands of 5 rows (one output row each at 42x42), each one colour:
    greys 32 k - 1, 32 k, 32 k + 1 for k = 0..7, then colours whose luma
    (299 R + 587 G + 114 B) / 1000 is exactly a multiple of 32, then white."""
    greys = [min(max(32 * k + d, 0), 255) for k in range(8) for d in (-1, 0, 1)]
    colours = [(g, g, g) for g in greys]
    # luma exactly 32 k for k = 1..7 (each of these fell one level low in float64 arithmetic, but 3 and 6)
    colours += [(2, 50, 18), (73, 15, 12), (4, 100, 36), (16, 70, 159), (8, 200, 72), (9, 169, 229),
                (3, 239, 165), (21, 251, 56), (179, 251, 203), (190, 252, 169)]
    colours += [(255, 255, 255)] * (42 - len(colours))
    bands = np.repeat(np.array(colours, np.uint8), 5, axis=0)  # (210, 3)
    return np.ascontiguousarray(np.broadcast_to(bands[:, None, :], (210, 160, 3)))


def default_cache_dir() -> Path:
    """``$PCNN_EXPLORE_CACHE`` if set, else ``~/.cache/pcnn-explore``."""
    env = os.environ.get("PCNN_EXPLORE_CACHE")
    return Path(env).expanduser() if env else Path("~/.cache/pcnn-explore").expanduser()


def stream_path(settings: dict[str, Any], cache_dir: str | os.PathLike | None = None) -> Path:
    """The cache file of a stream: every setting appears in the file name."""
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    s = settings
    policy = s["policy"] + (f"{s['switch_every']}" if s["policy"] == "biased" else "")
    if s["policy"].startswith("checkpoint:"):
        policy = f"checkpoint-{s['checkpoint_sha1']}"
    name = (f"{s['game']}_n{s['n_frames']}_seed{s['seed']}_{policy}_fs{s['frameskip']}"
            f"_sticky{s['sticky_actions']:g}_v{s['format']}.npz")
    return root / "streams" / name


def _phase_probabilities(rng: np.random.Generator, policy: str, n_phases: int,
                         n_actions: int) -> np.ndarray:
    if policy == "random":
        return np.full((n_phases, n_actions), 1.0 / n_actions)
    return rng.dirichlet(np.full(n_actions, BIASED_CONCENTRATION), size=n_phases)


def draw_actions(action_probs: np.ndarray, phases: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Inverse-CDF sampling: step i takes the first action whose cumulative probability in phase
    ``phases[i]`` exceeds ``uniforms[i]`` (uniforms in [0, 1)). Returns (N,) int64."""
    cumulative = np.cumsum(action_probs, axis=1)[phases]
    counts = (uniforms[:, None] >= cumulative).sum(axis=1)
    return np.minimum(counts, action_probs.shape[1] - 1).astype(np.int64)


def generate_stream(settings: dict[str, Any], progress: bool = False) -> FrameStream:
    """Play the game with the settings' policy and record ``n_frames`` agent steps (no caching).

    Deterministic given the settings: the environment is seeded once with ``seed`` at the first
    reset; the policy draws from its own generator seeded with ``seed``.
    """
    import ale_py
    import gymnasium

    if settings["policy"] == "explorer" or settings["policy"].startswith("checkpoint:"):
        return _generate_moving(settings, progress)
    gymnasium.register_envs(ale_py)
    n = settings["n_frames"]
    env = gymnasium.make(f"ALE/{settings['game']}-v5", frameskip=settings["frameskip"],
                         repeat_action_probability=settings["sticky_actions"],
                         obs_type="rgb", max_episode_steps=None)
    n_actions = int(env.action_space.n)
    # separate generators for the phase probabilities and the action draws, each consumed in
    # stream order: the first n steps of a longer stream equal the stream of n steps
    probs_rng, action_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(settings["seed"]).spawn(2))
    n_phases = 1 if settings["policy"] == "random" else -(-n // settings["switch_every"])
    probs = _phase_probabilities(probs_rng, settings["policy"], n_phases, n_actions)
    phases = (np.zeros(n, np.int64) if settings["policy"] == "random"
              else np.arange(n, dtype=np.int64) // settings["switch_every"])
    actions = draw_actions(probs, phases, action_rng.random(n))

    frames = np.empty((n, settings["height"], settings["width"]), np.uint8)
    episode_starts = np.zeros(n, bool)
    rewards = np.zeros(n, np.float32)
    steps = range(n)
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc=f"{settings['game']} stream", unit="step")
    try:
        obs, _ = env.reset(seed=settings["seed"])
        start = True
        for i in steps:
            frames[i] = to_density_frame(obs, settings["height"], settings["width"], settings["levels"])
            episode_starts[i] = start
            obs, reward, terminated, truncated, _ = env.step(int(actions[i]))
            rewards[i] = reward
            start = terminated or truncated
            if start:
                obs, _ = env.reset()
    finally:
        env.close()
    return FrameStream(frames=frames, episode_starts=episode_starts, actions=actions,
                       rewards=rewards, phases=phases, action_probs=probs, settings=dict(settings))


def _generate_moving(settings: dict[str, Any], progress: bool) -> FrameStream:
    """The explorer's or a checkpoint's stream (:mod:`pcnn_explore.streams.policies`)."""
    from pcnn_explore.streams import policies as sp

    play = sp.play_explorer if settings["policy"] == "explorer" else sp.play_checkpoint
    arrays = play(settings, progress=progress)
    n_actions = arrays.pop("n_actions")
    return FrameStream(**arrays, phases=np.zeros(settings["n_frames"], np.int64),
                       action_probs=np.full((1, n_actions), np.nan), settings=dict(settings))


_ARRAYS = ("frames", "episode_starts", "actions", "rewards", "phases", "action_probs")
_OPTIONAL = ("rooms", "in_branch")


def _save(stream: FrameStream, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as f:
        np.savez_compressed(f, settings=np.array(json.dumps(stream.settings, sort_keys=True)),
                            **{k: getattr(stream, k) for k in _ARRAYS},
                            **{k: getattr(stream, k) for k in _OPTIONAL if getattr(stream, k) is not None})


def _load_valid(path: Path, settings: dict[str, Any]) -> FrameStream | None:
    """The cached stream at ``path`` if it is readable, complete and made with ``settings``."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            stored = json.loads(str(data["settings"]))
            if stored != json.loads(json.dumps(settings, sort_keys=True)):
                return None
            arrays = {k: data[k] for k in _ARRAYS}
            arrays.update({k: data[k] for k in _OPTIONAL if k in data.files})
    except Exception:  # corrupt, truncated, missing keys, not an npz: regenerate
        return None
    n = settings["n_frames"]
    shapes_ok = (arrays["frames"].shape == (n, settings["height"], settings["width"])
                 and arrays["frames"].dtype == np.uint8
                 and all(arrays[k].shape == (n,) for k in ("episode_starts", "actions", "rewards", "phases", *_OPTIONAL)
                         if k in arrays)
                 and n > 0 and bool(arrays["episode_starts"][0])
                 and int(arrays["frames"].max(initial=0)) < settings["levels"])
    if not shapes_ok:
        return None
    return FrameStream(**arrays, settings=stored, path=path, from_cache=True)


def prefix(stream: FrameStream, n_frames: int) -> FrameStream:
    """The first ``n_frames`` agent steps of ``stream`` (equal to the stream generated with
    ``n_frames``: generation consumes its random numbers in stream order)."""
    n_frames = _check_int("n_frames", n_frames, 1)
    if n_frames > len(stream):
        raise ValueError(f"stream has {len(stream)} frames, cannot take the first {n_frames}")
    n_phases = int(stream.phases[n_frames - 1]) + 1
    return dataclasses.replace(
        stream, frames=stream.frames[:n_frames], episode_starts=stream.episode_starts[:n_frames],
        actions=stream.actions[:n_frames], rewards=stream.rewards[:n_frames],
        phases=stream.phases[:n_frames], action_probs=stream.action_probs[:n_phases],
        **{k: getattr(stream, k)[:n_frames] for k in _OPTIONAL if getattr(stream, k) is not None},
        settings={**stream.settings, "n_frames": n_frames})


def _load_longer(settings: dict[str, Any], cache_dir) -> FrameStream | None:
    """A valid cached stream with the same settings but more frames, cut to ``n_frames``."""
    folder = stream_path(settings, cache_dir).parent
    if not folder.is_dir():
        return None
    candidates = []
    for path in folder.glob(f"{settings['game']}_n*.npz"):
        match = _N_IN_NAME.match(path.name[len(settings["game"]) + 1:])
        if match and int(match.group(1)) > settings["n_frames"]:
            longer = {**settings, "n_frames": int(match.group(1))}
            if stream_path(longer, cache_dir) == path:
                candidates.append((longer["n_frames"], path, longer))
    for _, path, longer in sorted(candidates):  # the shortest valid one: least to read
        stream = _load_valid(path, longer)
        if stream is not None:
            return prefix(stream, settings["n_frames"])
    return None


_N_IN_NAME = re.compile(r"^n(\d+)_")


def load_stream(game: str, n_frames: int, seed: int = 0, policy: str = "random",
                switch_every: int | None = None, frameskip: int = 4, sticky_actions: float | None = None,
                cache_dir: str | os.PathLike | None = None, progress: bool = False) -> FrameStream:
    """The stream of ``n_frames`` agent steps of ``game`` under ``policy``: from the cache when a
    valid file with identical settings exists (or the prefix of a valid cached longer stream with
    otherwise identical settings), else generated, cached and returned.

    ``game`` is an ALE name ('Freeway', 'Pong', 'MontezumaRevenge', ...); the environment is
    ``gymnasium.make("ALE/<game>-v5", frameskip=frameskip, repeat_action_probability=sticky_actions)``;
    ``sticky_actions`` None: 0 for the explorer, else 0.25. ``policy``: see the module docstring.
    Bad settings raise TypeError/ValueError before anything is generated or written.
    """
    settings = stream_settings(game, n_frames, seed, policy, switch_every, frameskip, sticky_actions)
    path = stream_path(settings, cache_dir)
    cached = _load_valid(path, settings)
    if cached is not None:
        return cached
    longer = _load_longer(settings, cache_dir)
    if longer is not None:
        return longer
    stream = generate_stream(settings, progress=progress)
    _save(stream, path)
    return dataclasses.replace(stream, path=path)
