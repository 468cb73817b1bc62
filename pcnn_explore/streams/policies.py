"""Frame streams from agents that move through the game: the Montezuma explorer and a trained checkpoint.

Random-policy streams of Montezuma's Revenge stay in the first room (87.6% of pixel positions
hold one value in more than 99% of the frames); the paper's density models saw frames of
learning agents that move from room to room. Two policies give such streams
(:func:`pcnn_explore.streams.load_stream`):

- ``"explorer"`` (Montezuma's Revenge only): the open-loop :data:`MONTEZUMA_EXPLORER_ROUTE`
  through rooms 1, 2, 6, 5, 6, 2 and back to 1 (key, right door, ladder, two corridors), played
  from every episode start, with *branches*: before each route step, with probability
  ``1 / branch_every``, the emulator state is cloned (``ale.cloneState()``), 1 to
  ``branch_length`` uniformly random actions are played and recorded, and the state is restored
  (``ale.restoreState``), so the route never desynchronises. When the route ends, the episode
  ends (reset). Needs deterministic dynamics: sticky actions 0, no random no-ops at reset.
- ``"checkpoint:PATH"``: a trained agent (``pcnn_explore.run.load_policy``) acting
  epsilon-greedily (:data:`CHECKPOINT_EPSILON`) in the env it was trained on
  (``policy.make_env(seed)``); the frames are the env's density frames. ``policy.reset()`` at
  each episode start: a Reactor agent's LSTM state starts every episode from zero.

Both return plain arrays: frames (N, 42, 42) uint8, episode_starts (N,) bool, actions (N,)
int64, rewards (N,) float32, rooms (N,) int16 (RAM address 3 in Montezuma, else -1),
in_branch (N,) bool (True on the random branches of the explorer), and n_actions (int).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from pcnn_explore.envs.montezuma import MONTEZUMA_SCRIPT, montezuma_room, script_actions

__all__ = ["MONTEZUMA_EXPLORER_ROUTE", "EXPLORER_GAMES", "BRANCH_EVERY", "BRANCH_LENGTH", "CHECKPOINT_EPSILON",
           "route_actions", "route_fingerprint", "checkpoint_file", "checkpoint_settings", "play_explorer",
           "play_checkpoint"]

#: (action name, repeat) pairs in agent steps (4 emulator frames each): the recorder's first-room
#: script (key, right door, room 2), then the centre ladder of room 2 down to room 6, left into
#: room 5, back right into room 6, up the ladder to room 2 and left through the door into room 1.
#: Found by trial with ALE (sticky actions 0, no no-ops); rooms read from RAM address 3.
MONTEZUMA_EXPLORER_ROUTE: tuple[tuple[str, int], ...] = MONTEZUMA_SCRIPT + (
    ("RIGHT", 10), ("LEFT", 2), ("DOWN", 30),  # to the centre ladder of room 2, down into room 6
    ("LEFT", 30),  # along room 6's floor into room 5
    ("RIGHT", 6), ("RIGHT", 18),  # back into room 6, to the ladder
    ("UP", 30), ("LEFT", 30),  # up into room 2, left through the open door into room 1
)
#: games with an explorer route
EXPLORER_GAMES = ("MontezumaRevenge",)
#: a branch starts before a route step with probability 1 / BRANCH_EVERY
BRANCH_EVERY = 25
#: a branch plays 1..BRANCH_LENGTH random actions (uniform)
BRANCH_LENGTH = 30
#: the trained agent's exploration rate while recording a checkpoint stream
CHECKPOINT_EPSILON = 0.01


def route_actions(route=MONTEZUMA_EXPLORER_ROUTE) -> np.ndarray:
    """(L,) int64 ALE action indices of the route, one per agent step."""
    return script_actions(route)


def route_fingerprint(route=MONTEZUMA_EXPLORER_ROUTE) -> str:
    """A short hash of the route (stored with the stream: a changed route regenerates it)."""
    return hashlib.sha1(json.dumps([list(step) for step in route]).encode()).hexdigest()[:12]


def checkpoint_file(path: str | Path) -> Path:
    """The ``policy.pt`` that ``load_policy(path)`` reads: ``path`` itself, ``path/policy.pt`` for a
    run's folder, or the ``policy.pt`` beside a ``checkpoint.pt``. FileNotFoundError if absent."""
    given = Path(path).expanduser()
    file = given / "policy.pt" if given.is_dir() else (given.with_name("policy.pt") if given.name == "checkpoint.pt"
                                                        else given)
    if not file.is_file():
        raise FileNotFoundError(f"policy 'checkpoint:{path}': no policy at {given}; pass a training run's out_dir, "
                                "its policy.pt or its checkpoint.pt")
    return file


def checkpoint_settings(path: str, game: str) -> dict[str, Any]:
    """The stream settings a checkpoint contributes: its file, content hash and the sticky-action
    probability it was trained with. Raises ValueError when it holds no policy or another game's."""
    from pcnn_explore.run import load_policy

    file = checkpoint_file(path)
    try:
        env_id, policy = load_policy(file)
    except Exception as e:  # whatever the loader raises for a file that is not a policy
        raise ValueError(f"policy 'checkpoint:{path}': {file} is not a policy saved by pcnn-explore train "
                         f"({type(e).__name__})") from None
    if env_id != f"ALE/{game}-v5":
        raise ValueError(f"policy 'checkpoint:{path}' was trained on {env_id!r}, not on ALE/{game}-v5")
    return {"checkpoint": str(file.resolve()), "checkpoint_sha1": hashlib.sha1(file.read_bytes()).hexdigest()[:12],
            "epsilon": CHECKPOINT_EPSILON, "sticky_actions": float(policy.env_kwargs.get("sticky_actions", 0.25))}


class _Recorder:
    def __init__(self, n: int, height: int, width: int):
        self.frames = np.empty((n, height, width), np.uint8)
        self.episode_starts = np.zeros(n, bool)
        self.actions = np.zeros(n, np.int64)
        self.rewards = np.zeros(n, np.float32)
        self.rooms = np.full(n, -1, np.int16)
        self.in_branch = np.zeros(n, bool)
        self.i, self.n_actions = 0, 0

    @property
    def full(self) -> bool:
        return self.i == len(self.frames)

    def add(self, frame, start, action, reward, room, branch) -> None:
        i = self.i
        self.frames[i], self.episode_starts[i], self.actions[i] = frame, start, action
        self.rewards[i], self.rooms[i], self.in_branch[i] = reward, room, branch
        self.i += 1

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: getattr(self, k) for k in ("frames", "episode_starts", "actions", "rewards", "rooms", "in_branch",
                                              "n_actions")}


def play_explorer(settings: dict[str, Any], progress: bool = False) -> dict[str, np.ndarray]:
    """The explorer stream of ``settings`` (see the module docstring); deterministic given them.

    The environment is seeded once with ``seed``; branch points, lengths and actions come from one
    generator seeded with ``seed``, consumed in stream order (a shorter stream is a prefix)."""
    import ale_py
    import gymnasium

    from pcnn_explore.envs.frames import to_density_frame

    gymnasium.register_envs(ale_py)
    h, w, levels = settings["height"], settings["width"], settings["levels"]
    env = gymnasium.make(f"ALE/{settings['game']}-v5", frameskip=settings["frameskip"],
                         repeat_action_probability=0.0, obs_type="rgb", max_episode_steps=None)
    n_actions = int(env.action_space.n)
    ale = env.unwrapped.ale
    route = route_actions()
    rng = np.random.default_rng(settings["seed"])
    rec = _Recorder(settings["n_frames"], h, w)
    rec.n_actions = n_actions
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=settings["n_frames"], desc=f"{settings['game']} explorer stream", unit="step")
    first = True
    try:
        while not rec.full:
            obs, _ = env.reset(seed=settings["seed"]) if first else env.reset()
            first, start = False, True
            for action in route:
                if rec.full:
                    break
                if rng.random() < 1.0 / settings["branch_every"]:
                    state = ale.cloneState()
                    b_obs = obs
                    for _ in range(int(rng.integers(1, settings["branch_length"] + 1))):
                        if rec.full:
                            break
                        b_action = int(rng.integers(n_actions))
                        frame, room = to_density_frame(b_obs, h, w, levels), montezuma_room(env)
                        b_obs, reward, terminated, truncated, _ = env.step(b_action)
                        rec.add(frame, start, b_action, reward, room, True)
                        start = False
                        if terminated or truncated:
                            break
                    ale.restoreState(state)
                    if rec.full:
                        break
                frame, room = to_density_frame(obs, h, w, levels), montezuma_room(env)
                obs, reward, terminated, truncated, _ = env.step(int(action))
                rec.add(frame, start, action, reward, room, False)
                start = False
                if terminated or truncated:
                    break
            if bar is not None:
                bar.n = rec.i
                bar.refresh()
    finally:
        env.close()
        if bar is not None:
            bar.close()
    return rec.arrays()


def play_checkpoint(settings: dict[str, Any], progress: bool = False) -> dict[str, np.ndarray]:
    """The stream of the trained agent in ``settings["checkpoint"]`` (see the module docstring),
    seeded with ``seed`` (environment at the first reset, epsilon-greedy draws)."""
    from pcnn_explore.run import load_policy

    _, policy = load_policy(settings["checkpoint"], epsilon=settings["epsilon"], seed=settings["seed"])
    env = policy.make_env(settings["seed"], keep_rgb=False)
    montezuma = settings["game"] == "MontezumaRevenge"
    rec = _Recorder(settings["n_frames"], settings["height"], settings["width"])
    rec.n_actions = int(env.action_space.n)
    steps = range(settings["n_frames"])
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc=f"{settings['game']} checkpoint stream", unit="step")
    try:
        obs, info = env.reset(seed=settings["seed"])
        start = True
        for _ in steps:
            if start:
                policy.reset()  # a recurrent agent (Reactor) starts each episode from a zero LSTM state
            action = int(policy(obs))
            frame, room = info["density_frame"], montezuma_room(env) if montezuma else -1
            obs, reward, terminated, truncated, info = env.step(action)
            rec.add(frame, start, action, reward, room, False)
            start = terminated or truncated
            if start:
                obs, info = env.reset()
    finally:
        env.close()
    return rec.arrays()
