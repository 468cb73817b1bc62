"""What checking each stored transition and each learned batch costs (issue 33: both learn steps refuse bad
input; issue 42: they also check a batch's layout against the network, ``done`` in {0, 1}, and a reward
finite once rounded to float32).

Times, with ``timeit`` (best of 5 repeats), per call:

- per transition: ``check_transition`` on a good transition (uint8 frames, int action, float reward),
  DeepSea-10's (1, 10, 10) grid and an Atari (4, 84, 84) stack; ``ReplayBuffer.add`` with the check
  and with the check replaced by a no-op (the difference is what the check adds to each agent step);
- per batch of 32 sampled from a replay (the hot path's batches): ``check_batch`` (what torch's learn
  step pays), the numpy step's own check (``is_replay_layout``, attribute comparisons, then the
  one-pass compiled ``_batch_fault``), the numpy step's ``gradients`` with its arithmetic replaced by
  a no-op (all it does around the kernel: the check and the frames' reshape), and each learn step
  with its check, with the check's share of it.

``--against DIR`` (a checkout of an earlier version, e.g. ``git worktree add /tmp/old 99ba5e1``) also
times that version's ``check_transition``, ``check_batch`` and numpy ``gradients`` without arithmetic,
alternating with today's in this process (best of ``--rounds`` rounds), so that a loaded machine
slows both alike.

Run: ``python benchmarks/bench_transition_check.py [--against DIR]`` (prints microseconds per call).
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import timeit
from pathlib import Path

import numpy as np
import torch

from pcnn_explore.agents import mlp_step, replay, transitions
from pcnn_explore.agents.dqn import DQNAgent
from pcnn_explore.agents.replay import ReplayBuffer, check_batch, check_transition
from pcnn_explore.agents.transitions import is_replay_layout

SHAPE = (1, 10, 10)  # DeepSea-10


def per_call_us(fn, number: int, repeat: int = 5) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


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


def replay_batch(size: int = 32):
    rng = np.random.default_rng(0)
    buf = ReplayBuffer(10_000, SHAPE, n_actions=2)
    for t in range(2_000):
        o = np.zeros(SHAPE, np.uint8)
        o[0, t % 10, t % 7] = 255
        buf.add(o, int(rng.integers(2)), float(rng.normal()), t % 10 == 9, np.roll(o, 1, axis=1), t % 10 == 9)
    return buf.sample(size, rng)


def without_arithmetic(module, agent):
    """``module.NumpyMLPStep(agent).gradients`` with the kernel ``_gradients`` a no-op (only the
    check and the frames' reshape around it are left)."""
    step = module.NumpyMLPStep(agent)
    module._gradients = lambda *args: 0.0
    return step.gradients


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def calls(t, m, batch) -> dict:
    """The timed calls of one version: its transitions module ``t`` and numpy step module ``m``."""
    atari = np.zeros((4, 84, 84), np.uint8)
    grid = batch.obs[0]
    takes_shape = len(inspect.signature(t.check_batch).parameters) == 3  # before issue 42: (batch, n_actions)
    gradients = without_arithmetic(m, DQNAgent(SHAPE, 2, network="mlp", optimizer="adam", lr=1e-3))
    return {
        "check_transition, DeepSea-10": lambda: t.check_transition(grid, 1, 0.5, grid, SHAPE, 2),
        "check_transition, Atari": lambda: t.check_transition(atari, 1, 0.5, atari, (4, 84, 84), 4),
        "check_batch, batch 32": ((lambda: t.check_batch(batch, 2, SHAPE)) if takes_shape
                                  else (lambda: t.check_batch(batch, 2))),
        "numpy gradients() without arithmetic, batch 32": lambda: gradients(batch),
    }


def against(folder: Path, batch, rounds: int) -> None:
    old_t = load("earlier_transitions", folder / "pcnn_explore/agents/transitions.py")
    old_m = load("earlier_mlp_step", folder / "pcnn_explore/agents/mlp_step.py")
    now_m = load("today_mlp_step", Path(mlp_step.__file__))  # a copy whose kernel may be replaced
    earlier, today = calls(old_t, old_m, batch), calls(transitions, now_m, batch)
    best = {k: [float("inf"), float("inf")] for k in today}
    for _ in range(rounds):
        for k in today:
            for j, fn in enumerate((earlier[k], today[k])):
                best[k][j] = min(best[k][j], per_call_us(fn, 20_000, repeat=3))
    print(f"against {folder} (alternating, best of {rounds} rounds):")
    for k, (e, n) in best.items():
        print(f"  {k}: {e:.2f} us before, {n:.2f} us now ({n - e:+.2f} us)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", type=Path, help="a checkout of an earlier version to time alongside")
    parser.add_argument("--rounds", type=int, default=10, help="alternating rounds with --against (default 10)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("per transition:")
    for name, shape, stack in (("DeepSea-10 (1, 10, 10)", SHAPE, 1), ("Atari (4, 84, 84)", (4, 84, 84), 4)):
        obs = np.zeros(shape, np.uint8)
        t = per_call_us(lambda: check_transition(obs, 2, 0.5, obs, shape, 4), 100_000)
        with_check, without = add_cost(shape, stack, 50_000)
        print(f"  {name}: check_transition {t:.2f} us; ReplayBuffer.add {with_check:.2f} us with the check, "
              f"{without:.2f} us without (+{with_check - without:.2f} us per agent step)")
    batch = replay_batch()
    from pcnn_explore.agents.mlp_step import _batch_fault

    t_check = per_call_us(lambda: check_batch(batch, 2, SHAPE), 50_000)
    t_layout = per_call_us(lambda: is_replay_layout(batch, SHAPE), 100_000)
    t_fault = per_call_us(lambda: _batch_fault(batch.action, 2, batch.reward, batch.done, batch.mc_return), 100_000)
    print("per batch of 32 (DeepSea-10, sampled from a replay):")
    print(f"  check_batch (the torch step's check): {t_check:.2f} us")
    print(f"  the numpy step's check: {t_layout + t_fault:.2f} us (is_replay_layout {t_layout:.2f} us, "
          f"_batch_fault {t_fault:.2f} us)")
    for step, own in (("numpy", t_layout + t_fault), ("torch", t_check)):
        agent = DQNAgent(SHAPE, 2, network="mlp", optimizer="adam", lr=1e-3, learn_step=step)
        agent.learn(batch)  # compile / load the kernels
        t_step = per_call_us(lambda: agent.learn(batch), 2_000 if step == "numpy" else 300)
        print(f"  the {step} learn step with its check: {t_step:.1f} us per call (the check {100 * own / t_step:.1f}% "
              f"of it)")
    if args.against is not None:
        against(args.against, batch, args.rounds)


if __name__ == "__main__":
    main()
