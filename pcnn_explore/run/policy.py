"""A trained agent's policy, read back from a run's ``policy.pt`` (:func:`load_policy`): the greedy
or epsilon-greedy DQN policy, or Reactor's recurrent one, and the env it was trained on.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from pcnn_explore.checkpoint import load, read_meta
from pcnn_explore.run.checkpoints import CHECKPOINT, POLICY

__all__ = ["Policy", "load_policy"]


class Policy:
    """Greedy (or epsilon-greedy) policy of a trained agent: ``policy(obs) -> action``.

    ``obs`` is an observation of the env built by :meth:`make_env` ((C, H, W) uint8).
    ``recurrent``: the agent is Reactor (``config["agent"] == "reactor"``): actions are sampled from
    its LSTM policy (``epsilon`` unused) and :meth:`reset` clears its state. ``step``: the agent step
    whose weights these are (None: not recorded).
    """

    def __init__(self, agent, config: dict, epsilon: float, seed: int, step: int | None = None):
        self.agent, self.config, self.epsilon, self.step = agent, config, float(epsilon), step
        self.recurrent = config.get("agent", "dqn") == "reactor"
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs: np.ndarray) -> int:
        if self.recurrent:
            return int(self.agent.act(obs, self.rng)[0])
        return self.agent.act(obs, self.epsilon, self.rng) if self.epsilon > 0 else self.agent.greedy_action(obs)

    def reset(self) -> None:
        """Call at each episode start (a recurrent policy forgets the last episode)."""
        if self.recurrent:
            self.agent.reset_state(0)

    @property
    def env_kwargs(self) -> dict:
        """The settings :func:`pcnn_explore.envs.make_env` rebuilds the trained env with; DeepSea's
        mapping seed and mapping rule too (settings saved before they were recorded ran on mapping seed
        0, and before 0.2.0 on the kit's ``kit_v1`` draw: :data:`pcnn_explore.run.config.SETTINGS_SINCE`)."""
        from pcnn_explore.envs import is_deep_sea

        c = self.config
        kwargs = dict(sticky_actions=c["sticky_actions"], terminal_on_life_loss=c["terminal_on_life_loss"],
                      frame_stack=c["frame_stack"], tile_size=c["tile_size"], view=c["view"], n_actions=c["n_actions"])
        if is_deep_sea(c["env"]):
            from pcnn_explore.run.config import backfill

            filled, _ = backfill(c)
            kwargs["mapping_seed"], kwargs["mapping_rule"] = filled["mapping_seed"], filled["mapping_rule"]
        return kwargs

    def make_env(self, seed: int = 0, keep_rgb: bool = True):
        """The agent's environment, as trained (``info["rgb"]`` holds the RGB frame when ``keep_rgb``)."""
        from pcnn_explore.envs import make_env

        return make_env(self.config["env"], seed, keep_rgb=keep_rgb, **self.env_kwargs)


def load_policy(path: str | os.PathLike, epsilon: float = 0.0, device: str = "cpu", seed: int = 0):
    """``(env_id, policy)`` from a run's folder, its ``policy.pt`` or its ``checkpoint.pt``.

    Reads only ``policy.pt`` (the Q-network and its settings, kilobytes to megabytes), never the
    checkpoint with its replay buffer. ``policy(obs) -> action`` (epsilon-greedy);
    ``policy.make_env(seed)`` builds the env the agent was trained on; ``policy.step`` is the agent
    step it holds. When the run's ``checkpoint.pt`` beside it is at another step (the run stopped
    between writing the two), a warning says so: its resumption rewrites both.
    """
    given = Path(path)
    file = given / POLICY if given.is_dir() else (given.with_name(POLICY) if given.name == CHECKPOINT else given)
    if not file.is_file():
        raise FileNotFoundError(f"no checkpoint at {given}: pass a training run's out_dir, its policy.pt or its "
                                f"checkpoint.pt (the policy is saved with every checkpoint)")
    if not 0.0 <= float(epsilon) <= 1.0:
        raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
    saved = load(file)
    if not isinstance(saved, dict) or not ("q" in saved or "net" in saved) or "config" not in saved:
        raise ValueError(f"{file} is not a policy saved by pcnn-explore train")
    c = saved["config"]
    obs_shape, n_actions = tuple(saved["obs_shape"]), int(saved["n_actions"])
    network = saved.get("network", c["network"])  # the kind "auto" resolved to (absent before mlp: auto's own)
    if "net" in saved:  # Reactor: actions sampled from its recurrent policy
        from pcnn_explore.agents.reactor import ReactorAgent

        agent = ReactorAgent(obs_shape, n_actions, network=network, hidden=c["hidden"], device=device)
        agent.net.load_state_dict(saved["net"])
    else:
        from pcnn_explore.agents.dqn import DQNAgent

        agent = DQNAgent(obs_shape, n_actions, network=network, hidden=c["hidden"], device=device)
        agent.q.load_state_dict(saved["q"])
        agent.q.eval()
    step = int(saved["step"]) if "step" in saved else None
    beside = read_meta(file.with_name(CHECKPOINT)) if file.name == POLICY else None
    if step is not None and beside is not None and beside.get("step") not in (None, step):
        import warnings

        warnings.warn(f"{file} holds the policy at agent step {step}, {file.with_name(CHECKPOINT)} the run at step "
                      f"{beside['step']} (the run stopped between the two writes; resuming it rewrites both)",
                      stacklevel=2)
    return c["env"], Policy(agent, c, epsilon, seed, step=step)
