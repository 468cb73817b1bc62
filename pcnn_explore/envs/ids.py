"""Env ids: which exist, their family, the shape of their density frame and the settings each needs.

Env ids are checked before anything is built (:func:`check_env_id`): ``ALE/<Game>-v5``, any
registered ``MiniGrid-*`` id (the kit's own tasks, :mod:`pcnn_explore.envs.minigrid_tasks`, and ones
registered by your own code) and ``DeepSea-{N}-v0`` for N = 3 ... 50 (:mod:`pcnn_explore.envs.deep_sea`).
:func:`env_defaults` gives the training settings a task needs beyond the profile's preset;
:func:`density_shape` the (H, W) of its density frame.
"""
from __future__ import annotations

import difflib

import gymnasium as gym

from pcnn_explore.envs.deep_sea import DEEP_SEA_DEFAULTS, deep_sea_size

__all__ = ["check_env_id", "minigrid_action_count", "auto_network", "is_atari", "is_minigrid", "is_deep_sea",
           "density_shape", "env_defaults", "EXAMPLE_IDS", "DENSITY_SHAPE"]

EXAMPLE_IDS = ("ALE/Pong-v5", "ALE/MontezumaRevenge-v5", "ALE/Freeway-v5", "MiniGrid-Empty-8x8-v0",
               "MiniGrid-DoorKey-8x8-v0", "MiniGrid-MultiRoom-N4-S5-v1", "DeepSea-20-v0")
#: the density frame of Atari and MiniGrid (the paper's 42x42)
DENSITY_SHAPE = (42, 42)


def _register(env_id: str) -> None:
    """Register the ids of ``env_id``'s family with gymnasium, importing only that family's package
    (a DeepSea run never imports ale-py or MiniGrid: seconds of start-up); an id of no known
    family registers every family, so that the error can list what exists."""
    # DeepSea-{N}-v0 are registered by pcnn_explore.envs.deep_sea, imported above
    if is_atari(env_id) or not env_id.startswith(("MiniGrid-", "DeepSea-")):
        import ale_py

        gym.register_envs(ale_py)
    if is_minigrid(env_id) or not env_id.startswith(("ALE/", "DeepSea-")):
        import minigrid  # noqa: F401  (registers the MiniGrid-* ids)

        import pcnn_explore.envs.minigrid_tasks  # noqa: F401  (registers MiniGrid-Serpentine-*, MiniGrid-RoomChain-*)


def is_atari(env_id: str) -> bool:
    return isinstance(env_id, str) and env_id.startswith("ALE/")


def is_minigrid(env_id: str) -> bool:
    return isinstance(env_id, str) and env_id.startswith("MiniGrid-")


def is_deep_sea(env_id: str) -> bool:
    return deep_sea_size(env_id) is not None


def density_shape(env_id: str) -> tuple[int, int]:
    """(H, W) of ``info["density_frame"]`` for ``env_id``: (N, N) for DeepSea-N, else (42, 42).

    The density model of a run is built for this shape (``make_density(name, *density_shape(env))``).
    """
    check_env_id(env_id)
    n = deep_sea_size(env_id)
    return (n, n) if n is not None else DENSITY_SHAPE


def env_defaults(env_id: str, profile: str = "study") -> dict:
    """TrainConfig fields that ``env_id`` needs beyond ``TrainConfig.preset(profile)`` (``{}``: none).

    The training loop applies them under the user's own settings: preset < env_defaults < user.
    DeepSea (study and paper profiles): :data:`pcnn_explore.envs.deep_sea.DEEP_SEA_DEFAULTS`, its scale
    adaptations of the DQN schedule only (the method's settings resolve as on any env: the paper's).
    Every other env, and the smoke profile: none.
    """
    check_env_id(env_id)
    if is_deep_sea(env_id) and profile != "smoke":
        return dict(DEEP_SEA_DEFAULTS)
    return {}


def minigrid_action_count(env_id: str) -> int:
    """Actions of MiniGrid ``env_id``'s own action space (before any ``n_actions`` subset), read from a
    bare instance (no reset, no wrappers: well under a millisecond)."""
    check_env_id(env_id)
    if not is_minigrid(env_id):
        raise ValueError(f"{env_id!r} is not a MiniGrid env")
    env = gym.make(env_id).unwrapped
    try:
        return int(env.action_space.n)
    finally:
        env.close()


def auto_network(env_id: str, network: str) -> str:
    """The Q-network kind for ``env_id`` (see :func:`pcnn_explore.agents.networks.make_q_network`):
    ``network`` itself unless it is "auto"; "auto" on DeepSea is "mlp" (its observation is a one-hot
    grid: nothing for a conv net to find), elsewhere it stays "auto" (Atari: nature; MiniGrid: small)."""
    return "mlp" if network == "auto" and is_deep_sea(env_id) else network


def check_env_id(env_id: object) -> str:
    """Return ``env_id`` if it names a supported, registered environment; else raise ValueError/TypeError.

    Supported: ``ALE/<Game>-v5`` (Atari through ale-py), registered ``MiniGrid-*`` ids and
    ``DeepSea-{N}-v0`` (N = 3 ... 50).
    """
    if not isinstance(env_id, str):
        raise TypeError(f"env id must be a string such as {EXAMPLE_IDS[0]!r}, got {type(env_id).__name__}")
    _register(env_id)
    if not (is_atari(env_id) or is_minigrid(env_id) or env_id.startswith("DeepSea-")):
        raise ValueError(
            f"unsupported env id {env_id!r}: use an Atari id 'ALE/<Game>-v5', a MiniGrid id "
            f"'MiniGrid-...' or 'DeepSea-<N>-v0'; for example {', '.join(EXAMPLE_IDS)}"
        )
    if env_id not in gym.registry:
        family = "ALE/" if is_atari(env_id) else "MiniGrid-" if is_minigrid(env_id) else "DeepSea-"
        known = [k for k in gym.registry if k.startswith(family)]
        close = difflib.get_close_matches(env_id, known, n=3, cutoff=0.6)
        hint = f"did you mean {', '.join(close)}?" if close else f"for example {', '.join(EXAMPLE_IDS)}"
        raise ValueError(f"unknown env id {env_id!r}: it is not registered with gymnasium; {hint}")
    if is_atari(env_id) and not env_id.endswith("-v5"):
        raise ValueError(f"Atari env id {env_id!r}: use the -v5 id (for example 'ALE/Pong-v5'); "
                         "sticky actions and frame skip are set by make_env's arguments")
    return env_id
