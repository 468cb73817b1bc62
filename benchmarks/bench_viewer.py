"""How responsive the episode viewer is, and how fast recording runs.

Prints, for the shipped Montezuma episodes (500 steps):
- building an EpisodeViewer (one and two columns): the traces are drawn once here;
- one slider move (the kernel side: blend the frame, encode it, paint the cursor, encode the
  trace) for frames not seen yet, and for frames already cached;
- recording throughput (agent steps per second) with CTS and with PixelCNN, warm-up excluded.

    python benchmarks/bench_viewer.py [--record-steps 200]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from pcnn_explore.record import load_episode, record_episode, shipped_episode
from pcnn_explore.widgets import EpisodeViewer


def _time(fn, repeat: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record-steps", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(1)
    first = load_episode(shipped_episode("montezuma_pixelcnn"))
    second = load_episode(shipped_episode("montezuma_cts"))
    print(f"episode: {first!r}")
    print(f"load_episode (validates, checksums): {1e3 * _time(lambda: load_episode(shipped_episode('montezuma_pixelcnn'))):.0f} ms")
    for columns, compare in ((1, None), (2, second)):
        build = _time(lambda: EpisodeViewer(first, compare=compare))
        viewer = EpisodeViewer(first, compare=compare)
        steps = np.random.default_rng(0).permutation(np.arange(1, len(first)))[:100]
        start = time.perf_counter()
        for t in steps:
            viewer.slider.value = int(t)
        fresh = (time.perf_counter() - start) / len(steps)
        start = time.perf_counter()
        for t in steps:
            viewer.slider.value = int(t)
        cached = (time.perf_counter() - start) / len(steps)
        print(f"viewer, {columns} column(s): build {1e3 * build:.0f} ms; slider move {1e3 * fresh:.1f} ms "
              f"(new frame), {1e3 * cached:.1f} ms (cached frame)")
    for model in ("cts", "pixelcnn"):
        record_episode("ALE/MontezumaRevenge-v5", "scripted", model, max_steps=5)  # compile / warm up
        n = args.record_steps
        seconds = _time(lambda: record_episode("ALE/MontezumaRevenge-v5", "scripted", model, max_steps=n))
        print(f"recording with {model}: {n / seconds:.0f} agent steps/s ({1e3 * seconds / n:.1f} ms per step)")


if __name__ == "__main__":
    main()
