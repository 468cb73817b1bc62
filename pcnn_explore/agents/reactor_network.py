"""Reactor's recurrent actor-critic network: torso, LSTM, policy and Q-value heads.

Torso: the DQN network of :func:`pcnn_explore.agents.networks.make_q_network` without its output
layer (Atari (4, 84, 84): the Nature conv net and its 512-unit dense layer; small images such as
MiniGrid: :class:`~pcnn_explore.agents.networks.SmallCNN` and its 128-unit dense layer; DeepSea:
:class:`~pcnn_explore.agents.networks.MLP`'s first dense layer of 50),
then an LSTM cell (``lstm_size`` units, default the torso's width), then two linear heads reading
the LSTM output: policy logits (n_actions) and Q-values (n_actions). Observations are uint8 and
scaled to [0, 1] in the torso.
"""
from __future__ import annotations

import torch
from torch import nn

from pcnn_explore.agents.networks import make_q_network

__all__ = ["ReactorNetwork"]


class ReactorNetwork(nn.Module):
    """obs_shape (C, H, W); network "auto" | "nature" | "small" | "mlp"; hidden: torso width (None: 512 / 128 / 50);
    lstm_size: LSTM units (None: the torso width)."""

    def __init__(self, obs_shape, n_actions: int, network: str = "auto", hidden: int | None = None,
                 lstm_size: int | None = None):
        super().__init__()
        base = make_q_network(tuple(obs_shape), n_actions, network, hidden)
        width = base.head[0].out_features
        self.torso = nn.Sequential(base.features, base.head[0], base.head[1])  # conv, dense, ReLU
        self.lstm = nn.LSTMCell(width, lstm_size or width)
        self.policy = nn.Linear(self.lstm.hidden_size, n_actions)
        self.q = nn.Linear(self.lstm.hidden_size, n_actions)

    def embed(self, obs: torch.Tensor) -> torch.Tensor:
        """Torso: obs (N, C, H, W) uint8 -> (N, width) float32 features (inputs scaled to [0, 1])."""
        return self.torso(obs.float() / 255.0)

    def initial_state(self, batch: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
        """Zero (h, c), each (batch, lstm_size) float32."""
        z = torch.zeros(batch, self.lstm.hidden_size, device=device)
        return z, z.clone()

    def step(self, obs: torch.Tensor, state):
        """One step: obs (B, C, H, W) uint8, state (h, c) -> logits (B, A), q (B, A), new state."""
        h, c = self.lstm(self.embed(obs), state)
        return self.policy(h), self.q(h), (h, c)

    def _run(self, features: torch.Tensor, first: torch.Tensor, state):
        outputs = []
        h, c = state
        for t in range(features.shape[1]):
            keep = (1.0 - first[:, t]).unsqueeze(1)
            h, c = self.lstm(features[:, t], (h * keep, c * keep))
            outputs.append(h)
        return torch.stack(outputs, dim=1), (h, c)

    def unroll(self, obs: torch.Tensor, first: torch.Tensor, burn_in: int = 0, state=None):
        """Unroll over a window: obs (B, W, C, H, W) uint8; first (B, W) float, 1 where the state is
        zeroed before the step; the first ``burn_in`` steps run without gradient.

        Returns logits, q, each (B, W - burn_in, A): the outputs of steps burn_in ... W-1.
        """
        B, W = obs.shape[:2]
        if state is None:
            state = self.initial_state(B, obs.device)
        if burn_in:
            with torch.no_grad():
                feats = self.embed(obs[:, :burn_in].flatten(0, 1)).view(B, burn_in, -1)
                _, state = self._run(feats, first[:, :burn_in], state)
        feats = self.embed(obs[:, burn_in:].flatten(0, 1)).view(B, W - burn_in, -1)
        hidden, _ = self._run(feats, first[:, burn_in:], state)
        return self.policy(hidden), self.q(hidden)
