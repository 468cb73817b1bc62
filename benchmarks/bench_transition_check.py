"""What checking each stored transition and each learned batch costs (issue 33: both learn steps refuse bad
input; issue 42: they also check the batch's layout against the network, ``done`` in {0, 1}, and a reward
finite once rounded to float32).

Times, with ``timeit`` (best of 5 repeats), per call:

- ``check_transition`` on a good transition (uint8 frames, int action, float reward), DeepSea-10's
  (1, 10, 10) grid and an Atari (4, 84, 84) stack;
- ``ReplayBuffer.add`` with the check and with the check replaced by a no-op (the difference is
  what the check adds to each agent step);
- per batch of 32 sampled from a replay: ``check_batch`` (what torch's learn step pays), the numpy
  step's own check (``is_replay_layout``, attribute comparisons, then the one-pass ``_batch_fault``),
  and each learn step with its check, with the check's share of it.

Run: ``python benchmarks/bench_transition_check.py`` (prints microseconds per call). Before issue 42
(99ba5e1) the same script printed: check_transition 0.37 us (DeepSea-10) and 0.34 us (Atari);
check_batch 4.63 us; the numpy step's check 0.28 us of a 31.6 us step.
"""
from __future__ import annotations

import timeit

import numpy as np
import torch

from pcnn_explore.agents import replay
from pcnn_explore.agents.dqn import DQNAgent
from pcnn_explore.agents.replay import ReplayBuffer, check_batch, check_transition
from pcnn_explore.agents.transitions import is_replay_layout


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
    print("per transition:")
    for name, shape, stack in (("DeepSea-10 (1, 10, 10)", (1, 10, 10), 1), ("Atari (4, 84, 84)", (4, 84, 84), 4)):
        obs = np.zeros(shape, np.uint8)
        t = per_call_us(lambda: check_transition(obs, 2, 0.5, obs, shape, 4), 100_000)
        with_check, without = add_cost(shape, stack, 50_000)
        print(f"  {name}: check_transition {t:.2f} us; ReplayBuffer.add {with_check:.2f} us with the check, "
              f"{without:.2f} us without (+{with_check - without:.2f} us per agent step)")
    shape = (1, 10, 10)
    rng = np.random.default_rng(0)
    buf = ReplayBuffer(10_000, shape, n_actions=2)
    for t in range(2_000):
        o = np.zeros(shape, np.uint8)
        o[0, t % 10, t % 7] = 255
        buf.add(o, int(rng.integers(2)), float(rng.normal()), t % 10 == 9, np.roll(o, 1, axis=1), t % 10 == 9)
    batch = buf.sample(32, rng)  # the hot path's batches: as the replay samples them
    from pcnn_explore.agents.mlp_step import _batch_fault

    t_check = per_call_us(lambda: check_batch(batch, 2, shape), 50_000)
    t_layout = per_call_us(lambda: is_replay_layout(batch, shape), 100_000)
    t_fault = per_call_us(lambda: _batch_fault(batch.action, 2, batch.reward, batch.done, batch.mc_return), 100_000)
    print("per batch of 32 (DeepSea-10, sampled from a replay):")
    print(f"  check_batch (the torch step's check): {t_check:.2f} us")
    print(f"  the numpy step's check: {t_layout + t_fault:.2f} us (is_replay_layout {t_layout:.2f} us, "
          f"_batch_fault {t_fault:.2f} us)")
    for step, own in (("numpy", t_layout + t_fault), ("torch", t_check)):
        agent = DQNAgent(shape, 2, network="mlp", optimizer="adam", lr=1e-3, learn_step=step)
        agent.learn(batch)  # compile / load the kernels
        t_step = per_call_us(lambda: agent.learn(batch), 2_000 if step == "numpy" else 300)
        print(f"  the {step} learn step with its check: {t_step:.1f} us per call (the check {100 * own / t_step:.1f}% "
              f"of it)")


if __name__ == "__main__":
    main()
