"""DQN (Mnih et al. 2015) with the mixed Monte Carlo update (Bellemare et al. 2016; Ostrovski et al. 2017).

Target of the mixed Monte Carlo (MMC) update, for a transition (x, a, r, x') with Monte Carlo
return R_MC (the discounted sum of the rewards from x to the end of its episode)::

    y = (1 - beta) * (r + gamma * (1 - done) * max_a' Q_target(x', a')) + beta * R_MC

``beta = 0`` is plain Q-learning (the paper's baseline DQN); the paper's intrinsically motivated
agents use ``beta = 0.1``. The paper uses regular (not double) Q-learning; ``double_q=True`` picks
a' with the online network and evaluates it with the target network (van Hasselt et al. 2016).

Loss: Huber (smooth L1, delta 1) between Q(x, a) and y, the Nature DQN's error clipping, averaged
over the batch.

Optimisers (``optimizer=``):
- ``"rmsprop"``: the Nature DQN's centred RMSProp, learning rate 2.5e-4, decay 0.95, epsilon 0.01,
  no momentum, in one of two named readings (``rmsprop=``):
  - ``"dqn3"`` (the paper's, default): DQN 3.0's update as DeepMind's published code writes it, on
    the gradient of the minibatch's summed Huber loss, epsilon inside the square root
    (:class:`~pcnn_explore.agents.rmsprop.DQN3RMSprop`);
  - ``"torch"`` (the kit's before 0.4.0): ``torch.optim.RMSprop(lr, alpha=0.95, eps=0.01,
    centered=True)`` on the mean loss, epsilon outside the root.
- ``"adam"``: Adam with epsilon 1.5e-4 (the Rainbow setting), learning rate given by ``lr``;
  faster on small CPU-scale tasks.

On CUDA the optimisers are ``capturable`` (their state lives on the GPU) and, with ``cuda_graph``
(default on CUDA), each ``learn`` replays the whole step as one CUDA graph
(:mod:`pcnn_explore.agents.learn_graph`) with the eager step's values.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from pcnn_explore.names import DQN_RMSPROPS, LEARN_STEPS, OPTIMIZERS
from pcnn_explore.agents.networks import make_q_network
from pcnn_explore.agents.transitions import check_batch
from pcnn_explore.agents.returns import check_unit as _check_unit, discounted_returns, mixed_mc_target

__all__ = ["discounted_returns", "mixed_mc_target", "DQNAgent", "OPTIMIZERS", "LEARN_STEPS"]


class DQNAgent:
    """Online Q-network, target network and optimiser.

    Args:
        obs_shape: (C, H, W) of the uint8 observations. n_actions: number of discrete actions.
        network: "auto" | "nature" | "small" | "mlp" (see :mod:`pcnn_explore.agents.networks`); hidden: dense width.
        gamma: discount. mmc_beta: beta of the MMC target (0 = Q-learning). double_q: double Q-learning.
        optimizer: "rmsprop" (Nature DQN) or "adam". rmsprop: the reading of RMSProp, "dqn3" (DQN 3.0's
            update, the paper's) or "torch" (torch's centred RMSprop on the mean loss); see the module
            docstring. lr: learning rate. device: torch device.
        cuda_graph: replay each ``learn`` as one CUDA graph (None: on for CUDA devices). A graph is
            captured for the first batch of each layout (host :class:`~pcnn_explore.agents.replay.Batch`
            or device-resident :class:`~pcnn_explore.agents.replay.DeviceBatch`, batch size) and again
            after :meth:`load_state_dict`. Changing ``lr`` after capture needs :meth:`drop_graph`.
        learn_step: "torch" (autograd and the optimiser's kernel, every network) or "numpy" (the MLP with
            Adam on the CPU, written out by hand: :mod:`pcnn_explore.agents.mlp_step`, several times
            faster at DeepSea's sizes, equal to torch's step to float32 rounding).
    """

    def __init__(self, obs_shape, n_actions: int, *, network: str = "auto", hidden: int | None = None,
                 gamma: float = 0.99, mmc_beta: float = 0.0, double_q: bool = False, optimizer: str = "rmsprop",
                 lr: float = 2.5e-4, device: str = "cpu", cuda_graph: bool | None = None, learn_step: str = "torch",
                 rmsprop: str = "dqn3"):
        if optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
        if rmsprop not in DQN_RMSPROPS:
            raise ValueError(f"rmsprop must be one of {DQN_RMSPROPS} ('dqn3': DQN 3.0's update, the paper's; "
                             f"'torch': torch's centred RMSprop on the mean loss), got {rmsprop!r}")
        if learn_step not in LEARN_STEPS:
            raise ValueError(f"learn_step must be one of {LEARN_STEPS}, got {learn_step!r}")
        self.gamma = _check_unit("gamma", gamma)
        self.mmc_beta = _check_unit("mmc_beta", mmc_beta)
        self.double_q = bool(double_q)
        self.n_actions = int(n_actions)
        self.obs_shape = tuple(int(x) for x in obs_shape)  # what the network reads: each batch is checked against it
        self.device = torch.device(device)
        self.q = make_q_network(tuple(obs_shape), n_actions, network, hidden).to(self.device)
        self.target = make_q_network(tuple(obs_shape), n_actions, network, hidden).to(self.device)
        self.target.load_state_dict(self.q.state_dict())
        self.target.requires_grad_(False)
        cuda = self.device.type == "cuda"
        if cuda_graph and not cuda:
            raise ValueError(f"cuda_graph=True needs a CUDA device, got device={self.device}")
        self.cuda_graph = cuda if cuda_graph is None else bool(cuda_graph)
        # capturable on CUDA, graphed or not: eager and graphed steps run the same optimiser kernels
        # DQN 3.0's RMSProp reads the gradient of the minibatch's summed loss (:meth:`_backward`)
        self.rmsprop = rmsprop if optimizer == "rmsprop" else None
        if optimizer == "rmsprop" and rmsprop == "dqn3":
            from pcnn_explore.agents.rmsprop import DQN3RMSprop

            self.optimizer = DQN3RMSprop(self.q.parameters(), lr=lr, decay=0.95, eps=0.01, capturable=cuda)
        elif optimizer == "rmsprop":
            self.optimizer = torch.optim.RMSprop(self.q.parameters(), lr=lr, alpha=0.95, eps=0.01, centered=True,
                                                 foreach=True, capturable=cuda)
        elif self.device.type == "cpu":
            # torch's fused Adam kernel (several times faster than the per-tensor loop), without
            # torch.optim, whose first use imports torch._dynamo (seconds of a laptop run's start-up)
            from pcnn_explore.agents.adam import FusedAdam

            self.optimizer = FusedAdam(self.q.parameters(), lr=lr, eps=1.5e-4)
        else:
            self.optimizer = torch.optim.Adam(self.q.parameters(), lr=lr, eps=1.5e-4, fused=cuda or None,
                                              capturable=cuda)
        self._graph = None  # LearnGraph of the last batch layout
        self._numpy_act = self.device.type == "cpu" and hasattr(self.q, "q_values_numpy")
        self._params = tuple(self.q.parameters())
        # the optimiser's own update rule, under torch.optim's wrappers of step() (profiler record,
        # step hooks, dynamo graph breaks: a third of a small network's learn step on a CPU)
        self._step = type(self.optimizer).step
        while hasattr(self._step, "__wrapped__"):
            self._step = self._step.__wrapped__
        # how this agent's optimiser runs (a loaded state_dict must not change it)
        group = self.optimizer.param_groups[0]
        self._optimizer_flags = {k: group[k] for k in ("capturable", "foreach", "fused") if k in group}
        self.learn_step = learn_step
        self._numpy_step = self._make_numpy_step()

    def _make_numpy_step(self):
        if self.learn_step != "numpy":
            return None
        try:
            from pcnn_explore.agents.mlp_step import NumpyMLPStep
        except ImportError as e:  # numba missing or broken
            raise ImportError(f"learn_step='numpy' needs numba, which does not import ({e}): pip install numba, "
                              "or use learn_step='torch'") from e
        return NumpyMLPStep(self)  # (raises, naming why, where the agent is not the MLP with Adam on a CPU)

    def greedy_action(self, obs: np.ndarray) -> int:
        """argmax_a Q(obs, a) for one (C, H, W) uint8 observation."""
        return self.greedy_actions([obs])[0]

    def greedy_actions(self, observations) -> list[int]:
        """argmax_a Q(obs, a) for each of B (C, H, W) uint8 observations, in one forward.

        On a CPU a network with ``q_values_numpy`` (:class:`~pcnn_explore.agents.networks.MLP`)
        acts in numpy: same Q-values to a few units in the last place, a tenth of the time; with
        ``learn_step="numpy"``, in the numpy step's own forward (numba, a few microseconds).
        """
        if self._numpy_step is None and not self._numpy_act:
            return self._greedy_torch(observations)
        x = observations[0][None] if len(observations) == 1 else np.stack(observations)
        # the numpy step's own forward (one-hot inputs: a row of W1 each) reads uint8 only; frames of
        # another dtype take the MLP's numpy forward, pixel values as torch's forward takes them
        if self._numpy_step is not None and x.dtype == np.uint8:
            return self._numpy_step.greedy_actions(x)
        return self.q.q_values_numpy(x).argmax(axis=1).tolist()

    @torch.no_grad()
    def _greedy_torch(self, observations) -> list[int]:
        x = (torch.from_numpy(np.asarray(observations[0]))[None] if len(observations) == 1  # one obs: no copy
             else torch.from_numpy(np.stack(observations)))
        return self.q(x.to(self.device)).argmax(dim=1).tolist()

    def act(self, obs: np.ndarray, epsilon: float, rng: np.random.Generator) -> int:
        """Epsilon-greedy action. Draws one uniform from ``rng`` always, and one integer when exploring."""
        if rng.random() < epsilon:
            return int(rng.integers(self.n_actions))
        return self.greedy_action(obs)

    def _loss(self, obs, next_obs, action, reward, done, mc_return) -> torch.Tensor:
        """Huber loss between Q(obs, action) and the MMC target, on device tensors: obs/next_obs
        (B, C, H, W) uint8, action (B,) int64, reward/done/mc_return (B,) float32. 0-d, with grad."""
        with torch.no_grad():
            next_target = self.target(next_obs)
            if self.double_q:
                next_a = self.q(next_obs).argmax(dim=1, keepdim=True)
                next_q_max = next_target.gather(1, next_a).squeeze(1)
            else:
                next_q_max = next_target.max(dim=1).values
            y = mixed_mc_target(reward, next_q_max, done, mc_return, self.gamma, self.mmc_beta)
        q_sa = self.q(obs).gather(1, action.unsqueeze(1)).squeeze(1)
        return F.smooth_l1_loss(q_sa, y)

    def learn(self, batch) -> torch.Tensor:
        """One gradient step on a replay batch (:class:`~pcnn_explore.agents.replay.Batch`, or a
        :class:`~pcnn_explore.agents.replay.DeviceBatch` whose frames are on this agent's device).

        Returns the Huber loss as a detached 0-d tensor on the device (``float()`` of it syncs); with
        ``learn_step="numpy"``, as a float32 numpy scalar.

        A batch that no step may read (observations not of ``obs_shape``, not one action, reward,
        done and return per observation, an action outside [0, n_actions), a reward or return that
        is not finite in float32, a done not 0 or 1, frames not uint8) raises ValueError with the
        same message on every path (:func:`~pcnn_explore.agents.transitions.check_batch`, which
        the numpy step calls itself), before any arithmetic.
        """
        if self._numpy_step is not None:
            return self._numpy_step(batch)
        action, reward, done, mc = check_batch(batch, self.n_actions, self.obs_shape)  # int64, float32 (B,)
        if self.cuda_graph:
            return self._learn_graphed(batch)
        dev = self.device
        if hasattr(batch, "obs_slots"):  # DeviceBatch: stacks gathered where the frames are
            obs, next_obs = batch.obs.to(dev), batch.next_obs.to(dev)
        else:
            obs, next_obs = torch.from_numpy(batch.obs).to(dev), torch.from_numpy(batch.next_obs).to(dev)
        action = torch.from_numpy(action).to(dev)
        reward = torch.from_numpy(reward).to(dev)
        done = torch.from_numpy(done).to(dev)
        mc = torch.from_numpy(mc).to(dev)
        loss = self._loss(obs, next_obs, action, reward, done, mc)
        for p in self._params:  # zero_grad(set_to_none=True), without its per-call profiler and dynamo wrappers
            p.grad = None
        self._backward(loss, len(action))
        with torch.no_grad():  # optimizer.step() itself: its wrappers only add profiler records and hooks
            self._step(self.optimizer)
        return loss.detach()

    def _backward(self, loss: torch.Tensor, batch_size: int) -> None:
        """Back-propagate what the optimiser reads from the mean Huber loss ``loss``: under DQN 3.0's
        RMSProp the gradient of the minibatch's sum (``batch_size`` times the mean's), else the mean's."""
        (loss * batch_size if self.rmsprop == "dqn3" else loss).backward()

    def _learn_graphed(self, batch) -> torch.Tensor:
        from pcnn_explore.agents.learn_graph import LearnGraph, batch_layout

        if self._graph is None or self._graph.layout != batch_layout(batch):
            self._graph = None  # release the old graph's memory pool first
            self._graph = LearnGraph(self, batch)
        return self._graph(batch, checked=True)  # learn() has checked it, and the layout is the graph's

    def drop_graph(self) -> None:
        """Forget the captured step (the next ``learn`` captures again), e.g. after changing ``lr``."""
        self._graph = None

    @torch.no_grad()
    def sync_target(self) -> None:
        """Copy the online weights into the target network, in place (a captured graph reads them)."""
        for t, s in zip(self.target.parameters(), self.q.parameters()):
            t.copy_(s)
        for t, s in zip(self.target.buffers(), self.q.buffers()):
            t.copy_(s)

    def state_dict(self) -> dict:
        return {"q": self.q.state_dict(), "target": self.target.state_dict(), "optimizer": self.optimizer.state_dict()}

    def load_state_dict(self, d: dict) -> None:
        """Weights are copied in place; the optimiser gets new state tensors, so a graph is captured again.

        The optimiser keeps this agent's way of running (``capturable``, ``foreach``, ``fused``),
        whatever the saved state says: a state saved on the CPU, or by a version whose CUDA
        optimiser was not capturable, resumes into a graphed agent.
        """
        if self.rmsprop is not None:  # a state of the other RMSProp reading: refused (torch's states name none)
            groups = d["optimizer"].get("param_groups") or [{}]
            saved = groups[0].get("reading", "torch")
            if saved != self.rmsprop:
                raise ValueError(f"the agent's state was trained under the {saved!r} RMSProp reading and this agent "
                                 f"runs {self.rmsprop!r}: build it with rmsprop={saved!r} to continue it")
        self.q.load_state_dict(d["q"])
        self.target.load_state_dict(d["target"])
        self.optimizer.load_state_dict(d["optimizer"])
        for group in self.optimizer.param_groups:
            group.update(self._optimizer_flags)
        if self._optimizer_flags["capturable"] or self._optimizer_flags.get("fused"):
            for p, state in self.optimizer.state.items():  # such optimisers keep the step count on the device
                if torch.is_tensor(state.get("step")):
                    state["step"] = state["step"].to(device=p.device, dtype=torch.float32)
        self._graph = None
        self._numpy_step = self._make_numpy_step()  # the optimiser's state tensors are new
