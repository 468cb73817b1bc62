"""Recording: play episode(s) while a density model trains online on every state.

Policies: uniform random, a scripted action sequence (:data:`SCRIPTS`, then random) or a trained
agent's checkpoint (``pcnn_explore.run.load_policy``). See :func:`record_episode`.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np

import pcnn_explore
from pcnn_explore.envs.montezuma import MONTEZUMA_SCRIPT, montezuma_room, script_actions
from pcnn_explore.record.episode import BONUS_FIELDS, FIELDS, FORMAT_VERSION, Episode

__all__ = ["MONTEZUMA_SCRIPT", "SCRIPTS", "ScriptedPolicy", "record_episode", "RECORD_BONUS_FORM", "BonusForm",
           "bonus_form"]

#: record's own bonus form, where no checkpoint gives one: the PixelCNN model with the paper's PixelCNN
#: form, c = 0.1 n^-1/2, beta = 1 (the form every shipped episode was recorded with)
RECORD_BONUS_FORM: dict[str, Any] = {"density": "pixelcnn", "pg_scale": 0.1, "pg_schedule": "inverse_sqrt",
                                     "bonus_scale": 1.0}

#: env id -> the script run by ``--policy scripted``.
SCRIPTS: dict[str, tuple[tuple[str, int], ...]] = {"ALE/MontezumaRevenge-v5": MONTEZUMA_SCRIPT}


class ScriptedPolicy:
    """Plays a fixed action script from each episode start, then uniformly random actions.

    ``script`` is a sequence of (action name, repeat) pairs; names are Montezuma's Revenge
    action names (NOOP, FIRE, UP, RIGHT, LEFT, DOWN, RIGHTFIRE, LEFTFIRE).
    """

    def __init__(self, script, n_actions: int, rng: np.random.Generator):
        self.actions = script_actions(script)
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
    """A trained agent (``pcnn_explore.run.load_policy``); ``reset()`` at each episode start
    zeroes a recurrent agent's LSTM state (Reactor), so no episode sees the one before."""

    def __init__(self, fn: Callable[[np.ndarray], int]):
        self.fn = fn

    def reset(self) -> None:
        self.fn.reset()

    def __call__(self, obs: np.ndarray) -> int:
        return int(self.fn(obs))


# ----------------------------------------------------------------------------------------------
# The bonus form
# ----------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class BonusForm:
    """The density model and bonus form of a recording: r+ = beta PC^-1/2 (reward units), PC from the
    prediction gain scaled by c_n = c decay(n). ``source``: where each came from, in words."""

    density: str
    pg_scale: float  # c
    pg_schedule: str  # the decay of c over density-model updates n
    bonus_scale: float  # beta
    source: str

    def describe(self) -> str:
        """``cts, c = 0.1 constant, beta = 1 (the checkpoint's: ...)``."""
        decay = {"inverse_sqrt": " n^-1/2", "inverse": " n^-1", "constant": " constant"}.get(
            self.pg_schedule, f" {self.pg_schedule}")
        return f"{self.density}, c = {self.pg_scale:g}{decay}, beta = {self.bonus_scale:g} ({self.source})"


def bonus_form(density: str | None = None, pg_scale: float | None = None, pg_schedule: str | None = None,
               bonus_scale: float | None = None, checkpoint_config: dict | None = None) -> BonusForm:
    """The density model and bonus form a recording runs: each value given (not None) as given; the
    rest from the checkpoint's run (``checkpoint_config``, the settings its ``policy.pt`` holds, filled
    as a resume fills them: :func:`pcnn_explore.run.config.backfill`) where the policy is a checkpoint
    whose run trained with a bonus and ``density`` is that run's model (or not given); else record's
    own form, :data:`RECORD_BONUS_FORM`."""
    given = {"density": density, "pg_scale": pg_scale, "pg_schedule": pg_schedule, "bonus_scale": bonus_scale}
    base, source = dict(RECORD_BONUS_FORM), "record's own form"
    if checkpoint_config is not None:
        from pcnn_explore.run.config import backfill

        trained, _ = backfill(checkpoint_config)
        model = trained.get("bonus", "none")
        if model == "none":
            source = "record's own form: the checkpoint's run trained without a bonus"
        elif density not in (None, model):
            source = f"record's own form: the checkpoint's run trained {model}, not {density}"
        else:
            base = {"density": model, "pg_scale": float(trained["pg_scale"]),
                    "pg_schedule": str(trained["pg_schedule"]), "bonus_scale": float(trained["bonus_scale"])}
            source = "the checkpoint's: its run trained with this form"
    flags = [name for name, value in given.items() if value is not None and name != "density"]
    if flags:
        source += "; " + ", ".join(f"{name} given" for name in flags)
    chosen = {k: (given[k] if given[k] is not None else base[k]) for k in base}
    return BonusForm(chosen["density"], float(chosen["pg_scale"]), str(chosen["pg_schedule"]),
                     float(chosen["bonus_scale"]), source)


# ----------------------------------------------------------------------------------------------
# Recording
# ----------------------------------------------------------------------------------------------
def _check_settings(env_id, policy, density, warmup_frames, seed, max_steps, n_episodes, pg_scale,
                    sticky_actions, bonus_scale: float = 1.0) -> None:
    from pcnn_explore.envs import check_env_id

    from pcnn_explore.density import BONUS_MODELS

    check_env_id(env_id)
    if density not in BONUS_MODELS:
        raise ValueError(f"unknown density model {density!r}: choose one of {', '.join(BONUS_MODELS)}")
    for name, value, lo in (("warmup_frames", warmup_frames, 0), ("seed", seed, 0),
                            ("max_steps", max_steps, 1), ("n_episodes", n_episodes, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
    if not (isinstance(pg_scale, (int, float)) and np.isfinite(pg_scale) and pg_scale > 0):
        raise ValueError(f"pg_scale must be a positive number, got {pg_scale!r}")
    if not (isinstance(bonus_scale, (int, float)) and not isinstance(bonus_scale, bool) and np.isfinite(bonus_scale)
            and bonus_scale >= 0):
        raise ValueError(f"bonus_scale must be a non-negative number (beta of r+ = beta PC^-1/2), got {bonus_scale!r}")
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
    """``pcnn_explore.run.load_policy``, checked against ``env_id``; ValueError naming the file if
    it holds no policy (the reason in our words: never advice to unpickle an untrusted file)."""
    from pcnn_explore.checkpoint import check_header
    from pcnn_explore.run.checkpoints import CHECKPOINT
    from pcnn_explore.run import load_policy

    if Path(path).name == CHECKPOINT and Path(path).is_file():
        # the policy is read from the policy.pt beside it: a checkpoint named that cannot be read is
        # refused, not passed over in silence (cheap: its header and size, not its checksum)
        check_header(path)
    try:
        ckpt_env, fn = load_policy(path, epsilon=0.0, seed=seed)
    except Exception as e:  # whatever the loader raises for a file that is not a policy
        raise ValueError(f"cannot load a policy from {path}: {_policy_error(e)}") from None
    if ckpt_env != env_id:
        raise ValueError(f"checkpoint {path} was trained on {ckpt_env!r}, not {env_id!r}; pass --env {ckpt_env}")
    return fn


def _policy_error(e: Exception) -> str:
    text = " ".join(str(e).split())
    if not text or any(word in text for word in ("weights_only", "pickle", "Unpickl")):
        return f"not a checkpoint saved by pcnn-explore train ({type(e).__name__})"
    return text


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


def record_episode(
    env_id: str,
    policy: str | os.PathLike = "random",
    density: str | None = None,
    warmup_frames: int = 0,
    seed: int = 0,
    *,
    max_steps: int = 2000,
    n_episodes: int = 1,
    pg_scale: float | None = None,
    pg_schedule: str | None = None,
    bonus_scale: float | None = None,
    sticky_actions: float | None = None,
    device: str = "cpu",
    progress: bool = False,
    density_optimizer: str = "tf1",
) -> Episode:
    """Play ``n_episodes`` episode(s) of ``env_id`` (at most ``max_steps`` agent steps in all) with
    ``policy`` while a ``density`` model trains online on every state; return the :class:`Episode`.

    ``policy``: "random" (uniform), "scripted" (the action script in :data:`SCRIPTS`, then
    random), or the path of an agent checkpoint (``pcnn_explore.run.load_policy``).
    ``warmup_frames``: frames (agent steps) the model trains on first, from separate episodes
    of the same env and policy. ``sticky_actions``: probability of repeating the previous action
    per emulator frame; None means 0.25 (the ALE v5 default) except 0 for the scripted policy.
    Random no-ops at reset are off so that a seed fixes the episode. The density model and bonus form
    (``pg_scale`` c, ``pg_schedule`` its decay, ``bonus_scale`` beta: those of
    :class:`pcnn_explore.bonus.PseudoCountBonus`) left None are the checkpoint's run's where the policy
    is a checkpoint that trained with a bonus, else record's own (:data:`RECORD_BONUS_FORM`):
    :func:`bonus_form`, kept in ``metadata["bonus_form"]``. ``density_optimizer``: the PixelCNN's
    optimizer reading, "tf1" (the paper's) or "torch" (in ``metadata["model"]``).
    """
    checkpoint_config = None
    if isinstance(policy, (str, os.PathLike)) and str(policy) not in ("random", "scripted") and Path(policy).exists():
        checkpoint_config = dict(_load_checkpoint_policy(str(policy), env_id, int(seed)).config)
    form = bonus_form(density, pg_scale, pg_schedule, bonus_scale, checkpoint_config)
    _check_settings(env_id, policy, form.density, warmup_frames, seed, max_steps, n_episodes, form.pg_scale,
                    sticky_actions, form.bonus_scale)
    return _record(env_id, str(policy), form, int(warmup_frames), int(seed), int(max_steps), int(n_episodes),
                   sticky_actions, device, progress, density_optimizer)


def _record(env_id, policy, form: BonusForm, warmup_frames, seed, max_steps, n_episodes, sticky_actions, device,
            progress, density_optimizer: str = "tf1") -> Episode:
    from pcnn_explore.bonus import SCHEDULES, PseudoCountBonus
    from pcnn_explore.density import make_density
    from pcnn_explore.envs import density_shape

    density, pg_scale, pg_schedule = form.density, form.pg_scale, form.pg_schedule
    if pg_schedule not in SCHEDULES:
        raise ValueError(f"unknown pg_schedule {pg_schedule!r}: choose one of {', '.join(SCHEDULES)}")
    policy = str(policy)
    sticky = (0.0 if policy == "scripted" else 0.25) if sticky_actions is None else float(sticky_actions)
    checkpoint_fn = warmup_fn = None
    if policy not in ("random", "scripted"):
        # one policy per phase, as the random and scripted policies get one generator per phase:
        # the warm-up's draws (Reactor samples its actions) never shift the recorded episode's
        checkpoint_fn = _load_checkpoint_policy(policy, env_id, int(seed))
        warmup_fn = _load_checkpoint_policy(policy, env_id, int(seed) + 1) if warmup_frames else None
        sticky = float(getattr(checkpoint_fn, "env_kwargs", {}).get("sticky_actions", sticky))
    # built for the env's density frames, as training builds it (42x42; N x N for DeepSea-N)
    model = make_density(density, *density_shape(env_id), device=device, seed=int(seed), rmsprop=density_optimizer)
    bonus = PseudoCountBonus(model, scale=float(pg_scale), schedule=pg_schedule, beta=form.bonus_scale)
    is_montezuma = env_id == "ALE/MontezumaRevenge-v5"
    atari = env_id.startswith("ALE/")

    # Warm-up: the model trains on frames from separate episodes (environment seed + 1).
    if warmup_frames:
        env, pol = _make_env_and_policy(policy, env_id, int(seed) + 1, np.random.default_rng([int(seed), 1]),
                                        sticky, warmup_fn)
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
        rows["room"].append(montezuma_room(env) if is_montezuma else -1)
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

    import torch

    arrays = {name: np.asarray(values, dtype=FIELDS[name][0]) for name, values in rows.items()}
    metadata = {
        "format_version": FORMAT_VERSION,
        "package_version": pcnn_explore.__version__,
        # what a neural model's numbers depend on beyond the settings: the same build, instruction
        # set and thread count remake them bit for bit (data/episodes/README.md)
        "torch_version": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_threads": torch.get_num_threads(),
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
            # beta of r+ = beta PC^-1/2; absent: 1, as in every recording made before it was a setting
            **({"bonus_scale": float(form.bonus_scale)} if form.bonus_scale != 1.0 else {}),
        },
        "bonus_form": form.describe(),
    }
    return Episode(**arrays, metadata=metadata)


def _progress(iterable, enabled: bool, desc: str):
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, leave=False)

