"""CTS ``update`` (train + requery) per 42x42 frame, 8 levels, on real Montezuma frames.

Baseline: :class:`pcnn_explore.density.cts_reference.ReferenceCTS`, a plain pure-Python
implementation of the same specification (one object per node). Measured on one core; the
numba kernels are compiled (and cached) before timing.

    python benchmarks/bench_cts.py [--frames 2000] [--reference-frames 60]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _frames import montezuma_frames  # noqa: E402

from pcnn_explore.density import ConvCTSDensity, CTSDensity  # noqa: E402
from pcnn_explore.density.cts_reference import ReferenceCTS  # noqa: E402


def per_frame(model, frames) -> float:
    start = time.perf_counter()
    for f in frames:
        model.update(f)
    return (time.perf_counter() - start) / len(frames)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=2000)
    parser.add_argument("--reference-frames", type=int, default=60)
    args = parser.parse_args()
    frames = montezuma_frames(args.frames + 100)
    warm, frames = frames[:100], frames[100:]

    fast = CTSDensity()
    for f in warm:  # compiles the kernels and grows the node pool past its first sizes
        fast.update(f)
    t_fast = per_frame(fast, frames)

    conv = ConvCTSDensity()
    for f in warm[:10]:
        conv.update(f)
    t_conv = per_frame(conv, frames[: min(len(frames), 500)])

    ref = ReferenceCTS(42, 42, 8)
    for f in warm[:5]:
        ref.update(f)
    t_ref = per_frame(ref, frames[: args.reference_frames])

    print(f"frames: {len(frames)} real Montezuma's Revenge frames (random policy), 42x42, 8 levels; nodes: {fast.n_nodes}")
    print(f"pure-Python reference CTS update: {t_ref * 1e3:8.2f} ms/frame  (over {args.reference_frames} frames)")
    print(f"CTSDensity.update (numba):        {t_fast * 1e3:8.3f} ms/frame")
    print(f"ConvCTSDensity.update (numba):    {t_conv * 1e3:8.3f} ms/frame  (3 passes: query, train, query)")
    print(f"speed-up of CTSDensity over the reference: {t_ref / t_fast:.0f}x (required >= 100x, i.e. <= 0.15 ms/frame)")


if __name__ == "__main__":
    main()
