"""DQN agents: Q-networks, replay memory with Monte Carlo returns, the mixed Monte Carlo update.

The names below are imported on first use (torch loads then), so ``pcnn_explore.names``
is cheap to import.
"""
import importlib

_HOMES = {"DQNAgent": "dqn", "discounted_returns": "returns", "mixed_mc_target": "returns", "NatureCNN": "networks",
          "SmallCNN": "networks", "MLP": "networks", "make_q_network": "networks", "Batch": "replay",
          "ReplayBuffer": "replay"}

__all__ = ["DQNAgent", "discounted_returns", "mixed_mc_target", "NatureCNN", "SmallCNN", "MLP", "make_q_network",
           "Batch", "ReplayBuffer"]


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
