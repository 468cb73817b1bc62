"""The names of the run's fixed choices, importable without torch or gymnasium (the command
line's flags and ``--help`` list them).

- :data:`AGENTS`: the learners of :mod:`pcnn_explore.run.learners`;
- :data:`NETWORKS`: the Q-networks of :func:`pcnn_explore.agents.networks.make_q_network`;
- :data:`OPTIMIZERS`: DQN's optimisers (:class:`pcnn_explore.agents.dqn.DQNAgent`);
- :data:`DQN_RMSPROPS`: the readings of DQN's RMSProp (``dqn3``, DQN 3.0's update, the paper's; ``torch``);
- :data:`DENSITY_OPTIMIZERS`: the readings of the PixelCNN's RMSProp (``tf1``, TensorFlow 1's on the
  per-pixel mean cross-entropy, the paper's; ``torch``, torch's form on the summed cross-entropy);
- :data:`LEARN_STEPS`: how DQN's gradient step is computed (torch's autograd, or the MLP's step in
  numpy, :mod:`pcnn_explore.agents.mlp_step`);
- :data:`RUNNING_EPISODE_POLICIES`: the replay's Monte Carlo return of a running episode's transitions;
- :data:`SCHEDULES`: the decays of the prediction-gain scale (:mod:`pcnn_explore.bonus`).
"""
from __future__ import annotations

__all__ = ["AGENTS", "NETWORKS", "OPTIMIZERS", "DQN_RMSPROPS", "DENSITY_OPTIMIZERS", "LEARN_STEPS", "RUNNING_EPISODE_POLICIES", "SCHEDULES"]

AGENTS = ("dqn", "reactor")
NETWORKS = ("auto", "nature", "small", "mlp")
OPTIMIZERS = ("rmsprop", "adam")
DQN_RMSPROPS = ("dqn3", "torch")
DENSITY_OPTIMIZERS = ("tf1", "torch")
LEARN_STEPS = ("torch", "numpy")
RUNNING_EPISODE_POLICIES = ("paper", "finished_only")
SCHEDULES = ("inverse_sqrt", "inverse", "constant")
