"""Time per update under each optimizer reading: the PixelCNN's ``update`` (tf1, the paper's, against
torch) and DQN's ``learn`` step with RMSProp (dqn3, DQN 3.0's, against torch's centred RMSprop).

Both readings run on one torch thread on the same inputs, interleaved in rounds so that machine load
hits both alike; the wall-clock time and the thread's CPU time (which leaves out waits for a core on
a shared machine) are printed, medians over the rounds. PixelCNN: 42x42 Montezuma's Revenge frames
(ale-py), else synthetic ones. DQN: the Nature CNN on 84x84x4 frames, batch 32, or ``--small``
(the small CNN on 4x20x20) for a quick look.

    python benchmarks/bench_optimizer_readings.py [--frames 300] [--steps 30] [--rounds 5] [--small]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

from pcnn_explore.agents.dqn import DQNAgent  # noqa: E402
from pcnn_explore.agents.replay import Batch  # noqa: E402
from pcnn_explore.density import PixelCNNDensity  # noqa: E402
from pcnn_explore.names import DENSITY_OPTIMIZERS, DQN_RMSPROPS  # noqa: E402


def density_frames(n: int) -> tuple[np.ndarray, str]:
    try:
        from _frames import montezuma_frames

        return montezuma_frames(n), "Montezuma's Revenge (ale-py)"
    except ImportError:
        return np.random.default_rng(0).integers(0, 8, (n, 42, 42)).astype(np.uint8), "synthetic (no ale-py)"


def timed(fn, items) -> tuple[float, float]:
    """(wall-clock seconds, this thread's CPU seconds) per call of ``fn`` over ``items``."""
    start, cpu = time.perf_counter(), time.thread_time()
    for x in items:
        fn(x)
    return (time.perf_counter() - start) / len(items), (time.thread_time() - cpu) / len(items)


def batches(obs_shape, n: int, size: int = 32) -> list[Batch]:
    rng = np.random.default_rng(0)
    return [Batch(rng.integers(0, 256, (size, *obs_shape), dtype=np.uint8), rng.integers(0, 6, size).astype(np.int64),
                  rng.uniform(-1, 1, size).astype(np.float32), rng.integers(0, 256, (size, *obs_shape), dtype=np.uint8),
                  np.zeros(size, np.float32), np.zeros(size, np.float32), np.arange(size)) for _ in range(n)]


def report(name: str, times: dict[str, list[tuple[float, float]]]) -> None:
    for k, clock in enumerate(("wall-clock", "CPU time")):
        medians = {r: statistics.median(t[k] for t in ts) * 1e3 for r, ts in times.items()}
        print(f"  {clock}, median of rounds: " + ", ".join(f"{r} {ms:.3f} ms" for r, ms in medians.items())
              + f" per {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=300, help="PixelCNN updates per round and reading")
    parser.add_argument("--steps", type=int, default=30, help="DQN learn steps per round and reading")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--small", action="store_true", help="DQN: the small CNN on 4x20x20 frames")
    args = parser.parse_args()
    torch.set_num_threads(1)
    frames, source = density_frames(args.frames + 50)
    warm, frames = frames[:50], frames[50:]
    models = {r: PixelCNNDensity(seed=0, rmsprop=r) for r in DENSITY_OPTIMIZERS}
    for m in models.values():
        for f in warm:
            m.update(f)
    times = {r: [] for r in models}
    for _ in range(args.rounds):
        for r, m in models.items():
            times[r].append(timed(m.update, list(frames)))
    print(f"PixelCNN update, 42x42, one torch thread, {args.frames} frames x {args.rounds} rounds ({source}):")
    report("update", times)

    obs, network = ((4, 20, 20), "small") if args.small else ((4, 84, 84), "nature")
    data = batches(obs, args.steps)
    agents = {}
    for r in DQN_RMSPROPS:
        torch.manual_seed(0)
        agents[r] = DQNAgent(obs, 6, network=network, optimizer="rmsprop", rmsprop=r)
        for b in data[:3]:
            agents[r].learn(b)
    times = {r: [] for r in agents}
    for _ in range(args.rounds):
        for r, a in agents.items():
            times[r].append(timed(lambda b, a=a: float(a.learn(b)), data))
    print(f"DQN learn step, {network} network on {'x'.join(map(str, obs))}, batch 32, RMSProp, one torch thread, "
          f"{args.steps} steps x {args.rounds} rounds:")
    report("learn step", times)


if __name__ == "__main__":
    main()
