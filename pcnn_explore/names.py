"""The names of the run's fixed choices, importable without torch or gymnasium (the command
line's flags and ``--help`` list them).

- :data:`AGENTS`: the learners of :mod:`pcnn_explore.run.learners`;
- :data:`NETWORKS`: the Q-networks of :func:`pcnn_explore.agents.networks.make_q_network`;
- :data:`OPTIMIZERS`: DQN's optimisers (:class:`pcnn_explore.agents.dqn.DQNAgent`);
- :data:`LEARN_STEPS`: how DQN's gradient step is computed (torch's autograd, or the MLP's step in
  numpy, :mod:`pcnn_explore.agents.mlp_step`);
- :data:`RUNNING_EPISODE_POLICIES`: the replay's Monte Carlo return of a running episode's transitions;
- :data:`SCHEDULES`: the decays of the prediction-gain scale (:mod:`pcnn_explore.bonus`).
"""
from __future__ import annotations

__all__ = ["AGENTS", "NETWORKS", "OPTIMIZERS", "LEARN_STEPS", "RUNNING_EPISODE_POLICIES", "SCHEDULES"]

AGENTS = ("dqn", "reactor")
NETWORKS = ("auto", "nature", "small", "mlp")
OPTIMIZERS = ("rmsprop", "adam")
LEARN_STEPS = ("torch", "numpy")
RUNNING_EPISODE_POLICIES = ("paper", "finished_only")
SCHEDULES = ("inverse_sqrt", "inverse", "constant")
