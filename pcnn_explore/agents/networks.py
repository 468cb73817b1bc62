"""Q-networks. Inputs are uint8 (B, C, H, W) observations; they are scaled to [0, 1] inside.

- :class:`NatureCNN`: the network of Mnih et al. (2015) for (4, 84, 84) Atari stacks:
  conv 32x8x8 stride 4, conv 64x4x4 stride 2, conv 64x3x3 stride 1, dense 512, dense n_actions,
  ReLU between layers.
- :class:`SmallCNN`: for small images (MiniGrid renders of tens of pixels a side), sized for CPUs:
  conv 16x3x3 stride 2, conv 32x3x3 stride 2, conv 32x3x3 stride 1 (all padded), dense ``hidden``
  (128), dense n_actions. A 32x32 input costs about 1.3M multiply-adds, a sixth of a stride-1
  first layer's.
"""
from __future__ import annotations

import torch
from torch import nn

__all__ = ["NatureCNN", "SmallCNN", "make_q_network"]


class NatureCNN(nn.Module):
    def __init__(self, in_channels: int, n_actions: int, height: int = 84, width: int = 84, hidden: int = 512):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 32, 8, stride=4), nn.ReLU(),
            nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(),
            nn.Flatten(),
        )
        with torch.no_grad():
            n = self.features(torch.zeros(1, in_channels, height, width)).shape[1]
        self.head = nn.Sequential(nn.Linear(n, hidden), nn.ReLU(), nn.Linear(hidden, n_actions))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """obs (B, C, H, W) uint8 -> Q-values (B, n_actions) float32."""
        return self.head(self.features(obs.float() / 255.0))


class SmallCNN(nn.Module):
    def __init__(self, in_channels: int, n_actions: int, height: int, width: int, hidden: int = 128):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(32, 32, 3, stride=1, padding=1), nn.ReLU(),
            nn.Flatten(),
        )
        with torch.no_grad():
            n = self.features(torch.zeros(1, in_channels, height, width)).shape[1]
        self.head = nn.Sequential(nn.Linear(n, hidden), nn.ReLU(), nn.Linear(hidden, n_actions))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """obs (B, C, H, W) uint8 -> Q-values (B, n_actions) float32."""
        return self.head(self.features(obs.float() / 255.0))


def make_q_network(obs_shape: tuple[int, int, int], n_actions: int, kind: str = "auto", hidden: int | None = None) -> nn.Module:
    """``kind``: "nature", "small" or "auto" (Nature for 84x84 inputs, small otherwise)."""
    c, h, w = obs_shape
    if kind == "auto":
        kind = "nature" if (h, w) == (84, 84) else "small"
    if kind == "nature":
        return NatureCNN(c, n_actions, h, w, hidden or 512)
    if kind == "small":
        return SmallCNN(c, n_actions, h, w, hidden or 128)
    raise ValueError(f"network must be 'auto', 'nature' or 'small', got {kind!r}")
