"""What checking each stored transition and each learned batch costs (issue 33: both learn steps refuse bad input).

Times, with ``timeit`` (best of 5 repeats), per call:

- ``check_transition`` on a good transition (uint8 frames, int action, float reward), DeepSea-10's
  (1, 10, 10) grid and an Atari (4, 84, 84) stack;
- ``ReplayBuffer.add`` with the check and with the check replaced by a no-op (the difference is
  what the check adds to each agent step);
- ``check_batch`` on a batch of 32 (what torch's learn step pays) and the numpy step's one-pass
  check, beside the numpy learn step itself.

Run: ``python benchmarks/bench_transition_check.py`` (prints microseconds per call).
"""
from __future__ import annotations

import timeit

import numpy as np
import torch

from pcnn_explore.agents import replay
from pcnn_explore.agents.dqn import DQNAgent
from pcnn_explore.agents.replay import ReplayBuffer, check_batch, check_transition


def per_call_us(fn, number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def add_cost(shape: tuple[int, int, int], stack: int, number: int) -> tuple[float, float]:
    """(us per add with the check, us per add with the check a no-op)."""
    obs, nxt = np.zeros(shape, np.uint8), np.ones(shape, np.uint8)
    out = []
    for checked in (True, False):
        buf = ReplayBuffer(100_000, shape, stack=stack, n_actions=4)
        if not checked:
            replay.check_transition, saved = (lambda o, a, r, n, s, k: (o, a, r, n)), replay.check_transition
        try:
            out.append(per_call_us(lambda: buf.add(obs, 2, 0.5, False, nxt, False), number))
        finally:
            if not checked:
                replay.check_transition = saved
    return out[0], out[1]


def main() -> None:
    torch.set_num_threads(1)
    for name, shape, stack in (("DeepSea-10 (1, 10, 10)", (1, 10, 10), 1), ("Atari (4, 84, 84)", (4, 84, 84), 4)):
        obs = np.zeros(shape, np.uint8)
        t = per_call_us(lambda: check_transition(obs, 2, 0.5, obs, shape, 4), 100_000)
        with_check, without = add_cost(shape, stack, 50_000)
        print(f"{name}: check_transition {t:.2f} us; ReplayBuffer.add {with_check:.2f} us with the check, "
              f"{without:.2f} us without (+{with_check - without:.2f} us per agent step)")
    rng = np.random.default_rng(0)
    buf = ReplayBuffer(10_000, (1, 10, 10), n_actions=2)
    for t in range(2_000):
        o = np.zeros((1, 10, 10), np.uint8)
        o[0, t % 10, t % 7] = 255
        buf.add(o, int(rng.integers(2)), float(rng.normal()), t % 10 == 9, np.roll(o, 1, axis=1), t % 10 == 9)
    batch = buf.sample(32, rng)
    t_check = per_call_us(lambda: check_batch(batch, 2), 50_000)
    agent = DQNAgent((1, 10, 10), 2, network="mlp", optimizer="adam", lr=1e-3, learn_step="numpy")
    agent.learn(batch)  # compile / load the kernels
    t_step = per_call_us(lambda: agent.learn(batch), 2_000)
    from pcnn_explore.agents.mlp_step import _batch_fault

    t_fault = per_call_us(lambda: _batch_fault(batch.action, 2, batch.reward, batch.mc_return), 50_000)
    print(f"check_batch (batch 32, the torch step's check): {t_check:.2f} us; the numpy step's own check "
          f"(_batch_fault): {t_fault:.2f} us; the numpy learn step with it: {t_step:.1f} us per call "
          f"({100 * t_fault / t_step:.1f}% of it)")


if __name__ == "__main__":
    main()
