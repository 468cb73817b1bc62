"""The run's N environments and their running episodes: :class:`EnvPool` and :class:`Slot`.

With ``num_envs = 1`` the env lives in this process (exactly the single-env run). Envs that step
in microseconds (DeepSea, MiniGrid) live in this process with any N, stepped one after another
(a pipe to a worker costs more than their step); Atari's N > 1 envs each live in a worker process
and all N step at once. The loop treats them in the fixed order env 0 ... N-1. Every env runs the episodes it is given: episode k of the run (counted
over all envs, in the order they start) starts from ``reset(seed=episode_seed(seed, k))``.

A checkpoint falls between vector steps, when the N envs are mid-episode. It stores, per env, the
running episode's number, its actions so far and its statistics; resuming resets each env with
that episode's seed and replays the actions, which restores the emulator exactly (the envs are
deterministic given the reset seed: no-op starts and sticky actions draw from the env's own RNG).
"""
from __future__ import annotations

import multiprocessing as mp
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from pcnn_explore.run.metrics import EpisodeStats

__all__ = ["EnvPool", "Slot"]


def _replay(env, seed: int, actions):
    obs, info = env.reset(seed=seed)
    for a in actions:
        obs, _, _, _, info = env.step(int(a))
    return obs, info


def _serve(conn, make) -> None:
    env = make()
    try:
        while True:
            cmd, arg = conn.recv()
            if cmd == "step":
                conn.send(env.step(arg))
            elif cmd == "replay":
                conn.send(_replay(env, *arg))
            elif cmd == "spaces":
                conn.send((env.observation_space, env.action_space))
            else:
                break
    finally:
        env.close()
        conn.close()


class EnvPool:
    """N copies of the run's env. ``start(i, seed, actions=())`` resets env i (and replays actions);
    ``step(actions)`` steps every env and returns their ``(obs, reward, terminated, truncated, info)``.
    ``in_process``: all N envs in this process (always so for N = 1), else one worker process each."""

    def __init__(self, make, n: int, in_process: bool = False):
        self.n = int(n)
        self._envs, self._pipes, self._procs = [], [], []
        if self.n == 1 or in_process:
            self._envs = [make() for _ in range(self.n)]
            self.observation_space, self.action_space = self._envs[0].observation_space, self._envs[0].action_space
            return
        ctx = mp.get_context("spawn")  # no fork of a process holding torch threads
        for _ in range(self.n):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child, make), daemon=True)
            proc.start()
            child.close()
            self._pipes.append(parent)
            self._procs.append(proc)
        self._pipes[0].send(("spaces", None))
        self.observation_space, self.action_space = self._pipes[0].recv()

    def start(self, i: int, seed: int, actions=()):
        """Reset env i with ``seed``, replay ``actions``; return (obs, info) of the state reached."""
        if self._envs:
            return _replay(self._envs[i], seed, actions)
        self._pipes[i].send(("replay", (seed, list(actions))))
        return self._pipes[i].recv()

    def step(self, actions) -> list[tuple]:
        if self._envs:
            return [env.step(int(a)) for env, a in zip(self._envs, actions)]
        for pipe, a in zip(self._pipes, actions):
            pipe.send(("step", int(a)))
        return [pipe.recv() for pipe in self._pipes]

    def close(self) -> None:
        for env in self._envs:
            env.close()
        for pipe in self._pipes:
            try:
                pipe.send(("close", None))
            except (BrokenPipeError, OSError):
                pass
        for proc in self._procs:
            proc.join(timeout=5)


@dataclass
class Slot:
    """One env's running episode: its number, current observation and density frame, actions, stats,
    and the pseudo-count of the current state when it was reached (None: not scored on arrival)."""

    episode: int
    obs: np.ndarray
    frame: np.ndarray | None
    stats: EpisodeStats
    actions: list[int] = field(default_factory=list)
    pseudo_count: float | None = None

    def state(self) -> dict:
        state = {"episode": self.episode, "actions": np.asarray(self.actions, np.int64), "stats": self.stats.state()}
        if self.pseudo_count is not None:
            state["pseudo_count"] = float(self.pseudo_count)
        return state


def make_pool(cfg) -> EnvPool:
    """The run's envs: in this process, except Atari's N > 1 (one worker process each)."""
    from pcnn_explore.envs import is_atari, make_env

    make = partial(make_env, cfg.env, cfg.seed, sticky_actions=cfg.sticky_actions,
                   terminal_on_life_loss=cfg.terminal_on_life_loss, frame_stack=cfg.frame_stack,
                   tile_size=cfg.tile_size, view=cfg.view, n_actions=cfg.n_actions, density_frame=cfg.bonus != "none",
                   mapping_seed=cfg.mapping_seed, mapping_rule=cfg.mapping_rule)
    return EnvPool(make, cfg.num_envs, in_process=not is_atari(cfg.env))
