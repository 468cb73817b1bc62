"""Q-networks. Inputs are uint8 (B, C, H, W) observations; they are scaled to [0, 1] inside.

- :class:`NatureCNN`: the network of Mnih et al. (2015) for (4, 84, 84) Atari stacks:
  conv 32x8x8 stride 4, conv 64x4x4 stride 2, conv 64x3x3 stride 1, dense 512, dense n_actions,
  ReLU between layers.
- :class:`SmallCNN`: for small images (MiniGrid renders of tens of pixels a side), sized for CPUs:
  conv 16x3x3 stride 2, conv 32x3x3 stride 2, conv 32x3x3 stride 1 (all padded), dense ``hidden``
  (128), dense n_actions. A 32x32 input costs about 1.3M multiply-adds, a sixth of a stride-1
  first layer's.
- :class:`MLP`: for one-hot grids such as DeepSea's (1, N, N): the flattened input, two dense
  layers of ``hidden`` units (50, as in bsuite's baseline DQN agents), dense n_actions, ReLU
  between layers. At N = 20 a batch of 32 is about 0.7M multiply-adds forward, a tenth of
  :class:`SmallCNN`'s on the same grid. Acting on a CPU, :meth:`MLP.q_values_numpy` computes the
  same Q-values in numpy on the parameters' own memory (a few microseconds, against about 100 us
  for the eight small torch calls of :meth:`MLP.forward`).
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from pcnn_explore.names import NETWORKS

__all__ = ["NatureCNN", "SmallCNN", "MLP", "make_q_network", "NETWORKS"]



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


class MLP(nn.Module):
    def __init__(self, in_channels: int, n_actions: int, height: int, width: int, hidden: int = 50):
        super().__init__()
        # features and head as in the CNNs: Reactor's torso is features + the first dense layer
        self.features = nn.Sequential(nn.Flatten(), nn.Linear(in_channels * height * width, hidden), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, n_actions))
        self._dense = (self.features[1], self.head[0], self.head[2])  # a plain tuple: no second registration
        self._numpy_views = None  # see _numpy_layers

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """obs (B, C, H, W) uint8 -> Q-values (B, n_actions) float32."""
        # the layers' own operations, called directly: at this size a module call costs more than its math
        one, two, out = self._dense
        x = obs.flatten(1).float() / 255.0
        x = F.relu(F.linear(x, one.weight, one.bias))
        return F.linear(F.relu(F.linear(x, two.weight, two.bias)), out.weight, out.bias)

    def _numpy_layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(W^T, b) of each dense layer as numpy views of the parameters' memory, made once: in-place
        updates (optimiser steps, ``load_state_dict``) show through them; ``.to(...)`` and other
        ``_apply`` calls that may give the parameters new memory drop them."""
        if self._numpy_views is None:
            self._numpy_views = [(layer.weight.detach().numpy().T, layer.bias.detach().numpy()) for layer in self._dense]
        return self._numpy_views

    def _apply(self, fn, *args, **kwargs):
        self._numpy_views = None
        return super()._apply(fn, *args, **kwargs)

    def q_values_numpy(self, obs: np.ndarray) -> np.ndarray:
        """obs (B, C, H, W) uint8 -> Q-values (B, n_actions) float32, computed in numpy.

        For acting on a CPU: the layers' weights are read in place (numpy views of the parameters,
        so every optimiser step is seen at once), no autograd, no torch dispatch. The arithmetic is
        :meth:`forward`'s in float32 (x / 255, then x W^T + b and ReLU per layer); the two differ
        only in the order of the float32 sums inside each dot product, a few units in the last
        place of the Q-values. Parameters on another device: use :meth:`forward`.
        """
        x = np.asarray(obs).reshape(len(obs), -1).astype(np.float32) / np.float32(255.0)
        layers = self._numpy_layers()
        for k, (weight_t, bias) in enumerate(layers):
            x = x @ weight_t
            x += bias
            if k < len(layers) - 1:
                np.maximum(x, 0.0, out=x)
        return x


def make_q_network(obs_shape: tuple[int, int, int], n_actions: int, kind: str = "auto", hidden: int | None = None) -> nn.Module:
    """``kind``: "nature", "small", "mlp" or "auto" (Nature for 84x84 inputs, small otherwise;
    the training loop resolves "auto" to "mlp" for DeepSea first, see
    :func:`pcnn_explore.envs.auto_network`). ``hidden``: dense width (None: 512, 128, 50)."""
    c, h, w = obs_shape
    if kind == "auto":
        kind = "nature" if (h, w) == (84, 84) else "small"
    if kind == "nature":
        return NatureCNN(c, n_actions, h, w, hidden or 512)
    if kind == "small":
        return SmallCNN(c, n_actions, h, w, hidden or 128)
    if kind == "mlp":
        return MLP(c, n_actions, h, w, hidden or 50)
    raise ValueError(f"network must be 'auto', 'nature', 'small' or 'mlp', got {kind!r}")
