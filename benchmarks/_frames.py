"""Real Montezuma's Revenge density frames for the benchmarks (random policy, seeded)."""
from __future__ import annotations

import numpy as np


def montezuma_frames(n: int = 600, seed: int = 0) -> np.ndarray:
    """(n, 42, 42) uint8 density frames from a random policy on ALE/MontezumaRevenge-v5."""
    import ale_py
    import gymnasium as gym

    from pcnn_explore.envs.frames import to_density_frame

    gym.register_envs(ale_py)
    env = gym.make("ALE/MontezumaRevenge-v5")
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    frames = []
    while len(frames) < n:
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        frames.append(to_density_frame(obs))
        if terminated or truncated:
            obs, _ = env.reset()
    env.close()
    return np.stack(frames)
