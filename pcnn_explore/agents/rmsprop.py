"""DQN 3.0's RMSProp: the update of Mnih et al. 2015's published code, the paper's DQN.

DeepMind's DQN 3.0 (Lua, ``NeuralQLearner.lua``) back-propagates, for a minibatch of B
transitions, the TD errors clipped to [-1, 1]: its ``dw`` is the minibatch **sum** of
clip(y - Q) grad Q, i.e. minus the gradient G of the summed Huber loss (B times the gradient of the
mean). Then, with ``g`` and ``g2`` zero at the start::

    g  <- 0.95 g  + 0.05 G
    g2 <- 0.95 g2 + 0.05 G^2
    w  <- w - lr G / sqrt(g2 - g^2 + 0.01)

a centred RMSProp without momentum, epsilon **inside** the square root, lr 2.5e-4. (The sign of
``dw`` does not reach ``g2 - g^2``, so stepping along +dw is stepping along -G.)

``torch.optim.RMSprop(alpha=0.95, eps=0.01, centered=True)`` on the mean loss, the kit's form
before 0.4.0, differs in the three places: the gradient is B times smaller, epsilon is added
outside the root, and so the step's size differs. :class:`pcnn_explore.agents.dqn.DQNAgent` keeps
it as the named reading ``rmsprop="torch"``.

:class:`DQN3RMSprop` takes ``p.grad`` as G (the agent back-propagates the summed loss,
:meth:`~pcnn_explore.agents.dqn.DQNAgent._backward`). Its state lives beside the parameters from
the start and a step is a few ``foreach`` tensor operations with the learning rate as a number, so
it runs in a captured CUDA graph unchanged (:mod:`pcnn_explore.agents.learn_graph`).
"""
from __future__ import annotations

from typing import Iterable

import torch

from pcnn_explore.agents.flat_optim import FlatOptimizer

__all__ = ["DQN3RMSprop"]


class DQN3RMSprop(FlatOptimizer):
    """DQN 3.0's centred RMSProp (module docstring) over ``params``.

    ``step()`` updates every parameter whose ``.grad`` is set, reading ``.grad`` as G, the gradient
    of the minibatch's summed loss. State per parameter: ``grad_avg`` (g) and ``square_avg`` (g2),
    zeros at construction. ``param_groups`` and ``state_dict`` follow ``torch.optim``'s layout (one
    group, state by parameter index), with ``reading: "dqn3"`` in the group; a state without it
    (``torch.optim.RMSprop``'s) is refused.
    """

    reading = "dqn3"

    def __init__(self, params: Iterable[torch.nn.Parameter], lr: float, decay: float = 0.95, eps: float = 0.01,
                 capturable: bool = False):
        self.params = list(params)
        self.param_groups = [{"lr": float(lr), "alpha": float(decay), "eps": float(eps), "centered": True,
                              "momentum": 0, "foreach": True, "capturable": bool(capturable),
                              "reading": self.reading}]
        self.state: dict[torch.Tensor, dict[str, torch.Tensor]] = {
            p: {"grad_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
                "square_avg": torch.zeros_like(p, memory_format=torch.preserve_format)} for p in self.params}

    @torch.no_grad()
    def step(self) -> None:
        group = self.param_groups[0]
        params = [p for p in self.params if p.grad is not None]
        if not params:
            return
        lr, decay, eps = group["lr"], group["alpha"], group["eps"]
        grads = [p.grad for p in params]
        g = [self.state[p]["grad_avg"] for p in params]
        g2 = [self.state[p]["square_avg"] for p in params]
        torch._foreach_mul_(g, decay)
        torch._foreach_add_(g, grads, alpha=1.0 - decay)  # g <- 0.95 g + 0.05 G
        torch._foreach_mul_(g2, decay)
        torch._foreach_addcmul_(g2, grads, grads, value=1.0 - decay)  # g2 <- 0.95 g2 + 0.05 G^2
        denominator = torch._foreach_addcmul(g2, g, g, value=-1.0)  # g2 - g^2
        torch._foreach_add_(denominator, eps)
        torch._foreach_sqrt_(denominator)  # sqrt(g2 - g^2 + 0.01)
        torch._foreach_addcdiv_(params, grads, denominator, value=-lr)  # w <- w - lr G / sqrt(...)

    def load_state_dict(self, d: dict) -> None:
        """Copy a state saved by this class into the existing tensors (in place: a captured CUDA graph
        stays valid); ``lr``, ``alpha`` and ``eps`` come from the saved group. ValueError when the state
        is of another reading (``torch.optim.RMSprop``'s) or does not fit these parameters."""
        groups = d.get("param_groups") if isinstance(d, dict) else None
        if not isinstance(groups, list) or len(groups) != 1 or list(groups[0].get("params", ())) != list(
                range(len(self.params))):
            raise ValueError(f"the optimiser state does not fit this network's {len(self.params)} parameter tensors "
                             "(one RMSProp group holding all of them)")
        saved = groups[0].get("reading", "torch")
        if saved != self.reading:
            raise ValueError(f"the optimiser state is of the {saved!r} RMSProp reading and this agent runs DQN 3.0's "
                             f"({self.reading!r}): build the agent with rmsprop={saved!r} to continue it")
        states = d.get("state", {})
        for i, p in enumerate(self.params):
            s = states.get(i, states.get(str(i)))
            if s is None:
                raise ValueError(f"the optimiser state has no entry for parameter {i}")
            for key in ("grad_avg", "square_avg"):
                if tuple(s[key].shape) != tuple(p.shape):
                    raise ValueError(f"optimiser state {key!r} of parameter {i} has shape {tuple(s[key].shape)}, "
                                     f"expected {tuple(p.shape)}")
                self.state[p][key].copy_(s[key])
        g = groups[0]
        self.param_groups[0].update(lr=float(g["lr"]), alpha=float(g["alpha"]), eps=float(g["eps"]))
