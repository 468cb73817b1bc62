"""Recording with the PixelCNN on a CUDA device: it runs, the file validates, and the numbers
follow the CPU recording of the same episode.

    python benchmarks/gpu_record_check.py [--steps 300] [--warmup 500]   # non-zero exit on failure
    python benchmarks/gpu_record_check.py --device cpu   # CPU against CPU: recording is deterministic

Prints agent steps per second on each device and the largest differences between the two
recordings (the frames and actions must be identical; log-probabilities agree to float32 accuracy
over a few hundred online updates, not bit for bit).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from pcnn_explore.record import load_episode, record_episode, save_episode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--device", default="cuda", help="device compared with the CPU (default: cuda)")
    args = parser.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("no CUDA device: nothing to check")
        return 1
    torch.set_num_threads(1)
    episodes, ok = {}, True
    for device in (args.device, "cpu"):
        record_episode("ALE/MontezumaRevenge-v5", "scripted", "pixelcnn", max_steps=3, device=device)  # warm up
        start = time.perf_counter()
        ep = record_episode("ALE/MontezumaRevenge-v5", "scripted", "pixelcnn", args.warmup, 0,
                            max_steps=args.steps, device=device)
        seconds = time.perf_counter() - start
        with tempfile.TemporaryDirectory() as tmp:
            ep = load_episode(save_episode(ep, Path(tmp) / "episode.npz"))
        episodes[device if device not in episodes else "cpu (again)"] = ep
        print(f"{device}: {(args.warmup + args.steps) / seconds:.0f} agent steps/s "
              f"(warm-up and episode, model updates included); {ep!r}")
    gpu, cpu = list(episodes.values())
    same = np.array_equal(gpu.actions, cpu.actions) and np.array_equal(gpu.density, cpu.density)
    print(f"identical actions and frames: {same}")
    ok &= same
    for name in ("log_rho", "log_rho_prime", "prediction_gain", "bonus"):
        a, b = getattr(gpu, name), getattr(cpu, name)
        rel = np.abs(a - b).max() / max(np.abs(b).max(), 1e-12)
        print(f"{name}: max |{args.device} - cpu| = {np.abs(a - b).max():.3g} (relative to max |cpu| {rel:.2e})")
    rel = np.abs(gpu.log_rho - cpu.log_rho).max() / np.abs(cpu.log_rho).max()
    ok &= bool(rel < 1e-2)
    changes_gpu, changes_cpu = gpu.room_change_steps, cpu.room_change_steps
    print(f"largest-bonus step: {args.device} {int(gpu.bonus.argmax())}, cpu {int(cpu.bonus.argmax())}; "
          f"room changes {changes_gpu.tolist()} / {changes_cpu.tolist()}")
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
