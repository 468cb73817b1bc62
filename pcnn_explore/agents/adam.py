"""Adam on the CPU without ``torch.optim``: torch's fused Adam kernel, called directly.

Building any ``torch.optim`` optimiser imports ``torch._dynamo`` (its methods are wrapped to keep
the compiler out), which costs about as much start-up as ``import torch`` itself: a second or more
of a laptop DeepSea run that lasts twenty. :class:`FusedAdam` runs the same kernel that
``torch.optim.Adam(fused=True)`` runs on the CPU (``torch._fused_adam_``, after adding 1 to each
parameter's step count), so its weights are bit-identical to it (``tests/test_dqn.py`` checks), and
its ``state_dict`` has ``torch.optim.Adam``'s layout, so a checkpoint loads into either.

Used by :class:`pcnn_explore.agents.dqn.DQNAgent` for ``optimizer="adam"`` on the CPU; on CUDA the
agent keeps ``torch.optim.Adam`` (capturable, replayed in a CUDA graph).
"""
from __future__ import annotations

from typing import Iterable

import torch

from pcnn_explore.agents.flat_optim import FlatOptimizer

__all__ = ["FusedAdam"]


class FusedAdam(FlatOptimizer):
    """Adam (Kingma & Ba), no weight decay or amsgrad, for parameters on the CPU.

    ``step()`` updates every parameter whose ``.grad`` is set; the state of a parameter (``step``:
    0-d float32 update count; ``exp_avg`` and ``exp_avg_sq``: the moment estimates, shaped like the
    parameter) is created at its first update, as ``torch.optim.Adam`` does.
    """

    def __init__(self, params: Iterable[torch.nn.Parameter], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8):
        self.params = list(params)
        for p in self.params:
            if p.device.type != "cpu":
                raise ValueError(f"FusedAdam runs on the CPU, got a parameter on {p.device}: use torch.optim.Adam")
        self.param_groups = [{"lr": float(lr), "betas": (float(betas[0]), float(betas[1])), "eps": float(eps),
                              "weight_decay": 0, "amsgrad": False, "maximize": False, "foreach": None,
                              "capturable": False, "differentiable": False, "fused": True,
                              "decoupled_weight_decay": False}]
        self.state: dict[torch.Tensor, dict[str, torch.Tensor]] = {}

    @torch.no_grad()
    def step(self) -> None:
        g = self.param_groups[0]
        params, grads, exp_avgs, exp_avg_sqs, steps = [], [], [], [], []
        for p in self.params:
            if p.grad is None:
                continue
            s = self.state.get(p)
            if s is None:
                s = self.state[p] = {"step": torch.tensor(0.0, dtype=torch.float32),
                                     "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
                                     "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format)}
            params.append(p)
            grads.append(p.grad)
            exp_avgs.append(s["exp_avg"])
            exp_avg_sqs.append(s["exp_avg_sq"])
            steps.append(s["step"])
        if not params:
            return
        torch._foreach_add_(steps, 1)
        torch._fused_adam_(params, grads, exp_avgs, exp_avg_sqs, [], steps, amsgrad=False, lr=g["lr"],
                           beta1=g["betas"][0], beta2=g["betas"][1], weight_decay=0.0, eps=g["eps"],
                           maximize=False, grad_scale=None, found_inf=None)

    def load_state_dict(self, d: dict) -> None:
        """Load a state saved by this class or by ``torch.optim.Adam`` (any of its modes): the moments
        are copied to each parameter's dtype, the step count to a 0-d float32 tensor; ``lr``, ``betas``
        and ``eps`` come from the saved group. Raises ValueError when it does not fit these parameters."""
        groups = d.get("param_groups") if isinstance(d, dict) else None
        if not isinstance(groups, list) or len(groups) != 1 or list(groups[0].get("params", ())) != list(
                range(len(self.params))):
            raise ValueError(f"the optimiser state does not fit this network's {len(self.params)} parameter tensors "
                             "(one Adam group holding all of them)")
        if groups[0].get("amsgrad") or groups[0].get("weight_decay") or groups[0].get("maximize"):
            raise ValueError("the optimiser state uses amsgrad, weight decay or maximize, which FusedAdam does not")
        state = {}
        for i, s in d.get("state", {}).items():
            p = self.params[int(i)]
            for key in ("exp_avg", "exp_avg_sq"):
                if tuple(s[key].shape) != tuple(p.shape):
                    raise ValueError(f"optimiser state {key!r} of parameter {i} has shape {tuple(s[key].shape)}, "
                                     f"expected {tuple(p.shape)}")
            state[p] = {"step": torch.as_tensor(s["step"], dtype=torch.float32).detach().clone().reshape(()),
                        "exp_avg": s["exp_avg"].detach().to(dtype=p.dtype, device=p.device).clone(),
                        "exp_avg_sq": s["exp_avg_sq"].detach().to(dtype=p.dtype, device=p.device).clone()}
        self.state = state
        g = groups[0]
        self.param_groups[0].update(lr=float(g["lr"]), betas=(float(g["betas"][0]), float(g["betas"][1])),
                                    eps=float(g["eps"]))
