"""DQN agents: Q-networks, replay memory with Monte Carlo returns, the mixed Monte Carlo update."""
from pcnn_explore.agents.dqn import DQNAgent, discounted_returns, mixed_mc_target
from pcnn_explore.agents.networks import MLP, NatureCNN, SmallCNN, make_q_network
from pcnn_explore.agents.replay import Batch, ReplayBuffer

__all__ = ["DQNAgent", "discounted_returns", "mixed_mc_target", "NatureCNN", "SmallCNN", "MLP", "make_q_network",
           "Batch", "ReplayBuffer"]
