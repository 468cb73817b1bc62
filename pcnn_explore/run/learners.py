"""The two agents the loop can train, behind one small interface: :class:`DQNLearner`, :class:`ReactorLearner`.

Each pairs an agent with its replay and offers the loop what one vector step needs: ``act``
(actions of the N envs and what the replay must keep about them), ``store`` (one env's
transition), ``episode_end`` (one env's episode is over), ``learn``, ``sync_target``, and the
states for checkpoints (``"agent"`` and ``"replay"``) and for ``policy.pt``.

- DQN (``--agent dqn``): epsilon-greedy actions; replay of transitions; Q-learning or the MMC target.
- Reactor (``--agent reactor``): actions sampled from the recurrent policy, their probabilities
  mu stored with them; replay of 33-step sequences; Retrace targets and the beta-LOO policy
  gradient (:mod:`pcnn_explore.agents.reactor`, which says what is kept of Reactor and what is not).
"""
from __future__ import annotations

import numpy as np
import torch

from pcnn_explore.names import AGENTS

__all__ = ["DQNLearner", "ReactorLearner", "make_learner", "AGENTS"]



def epsilon_greedy(agent, observations, epsilon, rng: np.random.Generator) -> list[int]:
    """Epsilon-greedy actions of N envs, with one Q-network forward for all greedy ones.

    ``epsilon``: one exploration rate for all envs, or a sequence of N (one per env). Draws from
    ``rng`` exactly as N calls of ``agent.act`` in env order would (one uniform per env, and one
    integer where it explores), so N = 1 is the single-env run.
    """
    rates = epsilon if isinstance(epsilon, (list, tuple)) else [epsilon] * len(observations)
    actions = [int(rng.integers(agent.n_actions)) if rng.random() < e else None for e in rates]
    greedy = [i for i, a in enumerate(actions) if a is None]
    if greedy:
        for i, a in zip(greedy, agent.greedy_actions([observations[i] for i in greedy])):
            actions[i] = a
    return actions


class _Learner:
    """What both learners do the same way: ``self.agent`` learns from ``self.replay``."""

    agent: object
    replay: object

    def can_learn(self) -> bool:
        return self.replay.can_sample()

    def learn(self, batch_size: int, rng: np.random.Generator) -> torch.Tensor:
        return self.agent.learn(self.replay.sample(batch_size, rng))

    def sync_target(self) -> None:
        self.agent.sync_target()

    def state_dict(self, defer: bool = False) -> dict:
        return {"agent": self.agent.state_dict(), "replay": self.replay.state_dict(defer=defer)}

    def load_state_dict(self, d: dict) -> None:
        self.agent.load_state_dict(d["agent"])
        self.replay.load_state_dict(d["replay"])


class DQNLearner(_Learner):
    """DQN (with the MMC target where ``mmc_beta`` > 0) and its transition replay, in N shards."""

    uses_epsilon = True
    logs_traces = False

    def __init__(self, cfg, obs_shape, n_actions: int, stack: int):
        from pcnn_explore.agents.dqn import DQNAgent
        from pcnn_explore.agents.replay import replay_device
        from pcnn_explore.envs import auto_network
        from pcnn_explore.run.shards import ReplayShards

        self.agent = DQNAgent(obs_shape, n_actions, network=auto_network(cfg.env, cfg.network), hidden=cfg.hidden,
                              gamma=cfg.gamma, mmc_beta=cfg.mmc_beta, double_q=cfg.double_q, optimizer=cfg.optimizer, lr=cfg.lr,
                              device=cfg.device, learn_step=cfg.learn_step or "torch", rmsprop=cfg.rmsprop)
        # on CUDA the replay's frames live on the GPU where they fit, so a batch never crosses PCIe
        self.replay = ReplayShards(cfg.num_envs, cfg.replay_capacity, obs_shape, stack=stack, gamma=cfg.gamma,
                                   running_episode=cfg.running_episode, n_actions=n_actions,
                                   device=replay_device(cfg.device, cfg.replay_capacity, obs_shape, stack))
        self.device = self.agent.device

    def act(self, observations, epsilon, rng: np.random.Generator) -> tuple[list[int], list]:
        return epsilon_greedy(self.agent, observations, epsilon, rng), [None] * len(observations)

    def store(self, i: int, obs, action: int, extra, reward: float, terminated: bool, next_obs, end: bool) -> None:
        self.replay.add(i, obs, action, reward, terminated, next_obs, end)

    def episode_end(self, i: int) -> None:
        pass

    def policy_state(self) -> dict:
        return {"q": self.agent.q.state_dict()}


class ReactorLearner(_Learner):
    """The Reactor-style actor-critic and its sequence replay (one shard per env)."""

    uses_epsilon = False
    logs_traces = True  # the loop writes agent.last_traces after each learn call (traces.csv)

    def __init__(self, cfg, obs_shape, n_actions: int, stack: int):
        from pcnn_explore.agents.reactor import ReactorAgent
        from pcnn_explore.agents.sequence_replay import SequenceReplay
        from pcnn_explore.envs import auto_network

        self.agent = ReactorAgent(obs_shape, n_actions, num_envs=cfg.num_envs,
                                  network=auto_network(cfg.env, cfg.network), hidden=cfg.hidden, gamma=cfg.gamma, lr=cfg.lr, device=cfg.device)
        self.replay = SequenceReplay(cfg.num_envs, cfg.replay_capacity, obs_shape, stack=stack)
        self.device = self.agent.device

    def act(self, observations, epsilon: float, rng: np.random.Generator) -> tuple[list[int], list[float]]:
        actions, mus = self.agent.act_batch(observations, rng)
        return [int(a) for a in actions], [float(m) for m in mus]

    def store(self, i: int, obs, action: int, mu: float, reward: float, terminated: bool, next_obs, end: bool) -> None:
        self.replay.add(i, obs, action, mu, reward, terminated, next_obs, end)

    def episode_end(self, i: int) -> None:
        self.agent.reset_state(i)

    def policy_state(self) -> dict:
        return {"net": self.agent.net.state_dict()}


def make_learner(cfg, obs_shape, n_actions: int, stack: int):
    """The learner of ``cfg.agent``."""
    return {"dqn": DQNLearner, "reactor": ReactorLearner}[cfg.agent](cfg, obs_shape, n_actions, stack)
