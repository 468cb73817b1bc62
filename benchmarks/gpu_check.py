"""Checks of the density models on a CUDA device: the proofs of the CPU tests, repeated on GPU.

    python benchmarks/gpu_check.py            # exits non-zero if any check fails

- normalisation of PixelCNN over all 2x2 images with 4 levels, before and after updates;
- causality of the 42x42 PixelCNN by gradients, on the GPU;
- ``update`` returns exactly ``log_prob`` before and after, on the GPU;
- the GPU model follows the CPU model (same seed, same frames) to float32 accuracy;
- time per ``update`` on the GPU and on one CPU thread, on real Montezuma frames.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from _frames import montezuma_frames  # noqa: E402

from pcnn_explore.density import PixelCNNDensity, all_images  # noqa: E402
from pcnn_explore.density.pixelcnn import causal_offsets  # noqa: E402


def main() -> int:
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to check")
        return 1
    torch.set_num_threads(1)
    dev = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    failures = []

    m = PixelCNNDensity(2, 2, 4, device=dev)
    images = all_images(2, 2, 4)
    totals = [np.exp(m.log_prob(images)).sum()]
    rng = np.random.default_rng(0)
    for _ in range(5):
        m.update(images[rng.integers(len(images))])
        totals.append(np.exp(m.log_prob(images)).sum())
    ok = np.allclose(totals, 1.0, atol=1e-4, rtol=0)
    print(f"normalisation over 256 images (before and after 5 updates): {np.round(totals, 7).tolist()} -> {'ok' if ok else 'FAIL'}")
    ok or failures.append("normalisation")

    m = PixelCNNDensity(device=dev, dtype=torch.float64)
    bad = 0
    for p in list(range(0, 42 * 42, 97)) + [42 * 42 - 1]:
        x = torch.rand(1, 42 * 42, dtype=torch.float64, device=dev, requires_grad=True)
        m.net(x)[0, p].sum().backward()
        g = x.grad[0]
        i, j = divmod(p, 42)
        live = {(i + a) * 42 + (j + b) for a, b in causal_offsets(7) if 0 <= i + a < 42 and 0 <= j + b < 42}
        nz = set(torch.nonzero(g).flatten().tolist())
        bad += nz != live
    print(f"causality by gradients on 42x42 (19 pixels): {'ok' if bad == 0 else f'FAIL ({bad})'}")
    bad and failures.append("causality")

    frames = montezuma_frames(400)
    gpu, cpu = PixelCNNDensity(device=dev, seed=3), PixelCNNDensity(seed=3)
    exact = True
    diffs = []
    for f in frames[:100]:
        before = gpu.log_prob(f[None])[0]
        lr, lrp = gpu.update(f)
        exact &= lr == before and lrp == gpu.log_prob(f[None])[0]
        c = cpu.update(f)
        diffs.append(abs(lr - c[0]) / abs(c[0]))
    print(f"update == log_prob before/after on GPU: {'ok' if exact else 'FAIL'}")
    exact or failures.append("update/log_prob")
    ok = max(diffs) < 1e-3
    print(f"GPU vs CPU log rho over 100 online updates: max relative difference {max(diffs):.2e} -> {'ok' if ok else 'FAIL'}")
    ok or failures.append("gpu-vs-cpu")

    for name, model in (("cuda", gpu), ("cpu, 1 thread", cpu)):
        for f in frames[100:150]:
            model.update(f)
        t = time.perf_counter()
        for f in frames[150:]:
            model.update(f)
        print(f"PixelCNNDensity.update on {name}: {(time.perf_counter() - t) / 250 * 1e3:.3f} ms/frame")
    print("failures:", failures or "none")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
