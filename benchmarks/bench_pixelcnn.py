"""PixelCNN ``update`` (one prediction-gain step) against a naive eager PyTorch step.

The naive step is what a direct reading of the paper gives: the appendix-A network with masked
nn.Conv2d layers, three forward passes (log rho, the training pass, log rho'), a backward pass
and torch's RMSprop. Both run on one torch thread (batch 1 is faster that way on small CPUs), on
the same real Montezuma's Revenge frames, interleaved in rounds so machine load hits both alike.
On the CPU both the wall-clock time and the thread's CPU time are reported: on a machine shared
with other work, CPU time leaves out the time the thread waited for a core.

    python benchmarks/bench_pixelcnn.py [--frames 300] [--rounds 5] [--device cpu]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).parent))
from _frames import montezuma_frames  # noqa: E402

from pcnn_explore.density import PixelCNNDensity  # noqa: E402


class NaiveMaskedConv(nn.Conv2d):
    def __init__(self, cin, cout, k, mask_type):
        super().__init__(cin, cout, k, padding=k // 2)
        mask = torch.ones_like(self.weight)
        c = k // 2
        mask[:, :, c, c + (mask_type == "B"):] = 0
        mask[:, :, c + 1:, :] = 0
        self.register_buffer("mask", mask)

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, padding=self.padding)


class NaivePixelCNN(nn.Module):
    def __init__(self, levels=8):
        super().__init__()
        self.inp = NaiveMaskedConv(1, 16, 7, "A")
        self.g_in = nn.ModuleList([NaiveMaskedConv(16, 32, 1, "B") for _ in range(2)])
        self.g_out = nn.ModuleList([NaiveMaskedConv(16, 16, 1, "B") for _ in range(2)])
        self.hidden = NaiveMaskedConv(16, 64, 1, "B")
        self.out = NaiveMaskedConv(64, levels, 1, "B")

    def forward(self, x):
        h = self.inp(x)
        for gi, go in zip(self.g_in, self.g_out):
            a, b = gi(h).chunk(2, 1)
            h = h + go(torch.tanh(a) * torch.sigmoid(b))
        return self.out(F.relu(self.hidden(h)))


class NaiveDensity:
    def __init__(self, device):
        self.device = device
        self.net = NaivePixelCNN().to(device)
        self.opt = torch.optim.RMSprop(self.net.parameters(), lr=1e-3, alpha=0.95, eps=1e-4, momentum=0.9)

    def loss(self, frame):
        t = torch.from_numpy(frame).to(self.device, torch.int64)[None]
        x = (t.float() / 7.0)[:, None]
        return F.cross_entropy(self.net(x), t, reduction="sum")

    def update(self, frame):
        with torch.no_grad():
            before = self.loss(frame)
        self.opt.zero_grad()
        self.loss(frame).backward()
        self.opt.step()
        with torch.no_grad():
            after = self.loss(frame)
        return -float(before), -float(after)


def time_updates(model, frames, device) -> tuple[float, float]:
    """(wall-clock seconds, this thread's CPU seconds) per update over ``frames``."""
    if device.type == "cuda":
        torch.cuda.synchronize()
    start, cpu = time.perf_counter(), time.thread_time()
    for f in frames:
        model.update(f)  # returns Python floats, which synchronises a GPU every step
    return (time.perf_counter() - start) / len(frames), (time.thread_time() - cpu) / len(frames)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    frames = montezuma_frames(args.frames + 50)
    warm, frames = frames[:50], frames[50:]
    ours, naive = PixelCNNDensity(device=device), NaiveDensity(device)
    for f in warm:
        ours.update(f)
        naive.update(f)
    t_ours, t_naive = [], []
    for _ in range(args.rounds):
        t_naive.append(time_updates(naive, frames, device))
        t_ours.append(time_updates(ours, frames, device))
    print(f"device={device} torch_threads={args.threads} frames={args.frames} rounds={args.rounds}")
    clocks = ("wall-clock", "CPU time") if device.type == "cpu" else ("wall-clock",)
    for k, clock in enumerate(clocks):
        m_ours = statistics.median(t[k] for t in t_ours) * 1e3
        m_naive = statistics.median(t[k] for t in t_naive) * 1e3
        print(f"{clock}, median of rounds:")
        print(f"  naive eager step (3 forwards + backward + RMSprop): {m_naive:.3f} ms/update")
        print(f"  PixelCNNDensity.update:                              {m_ours:.3f} ms/update")
        print(f"  speed-up: {m_naive / m_ours:.2f}x (required >= 1.5x, goal 3x)")


if __name__ == "__main__":
    main()
