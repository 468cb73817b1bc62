"""What the kit's own optimisers (:class:`~pcnn_explore.agents.adam.FusedAdam`,
:class:`~pcnn_explore.agents.rmsprop.DQN3RMSprop`) share with ``torch.optim``'s interface: a list of
parameters, one parameter group, a state per parameter, ``zero_grad`` and ``state_dict`` in
``torch.optim``'s layout. Each subclass writes its own ``step`` and ``load_state_dict``.
"""
from __future__ import annotations

import torch

__all__ = ["FlatOptimizer"]


class FlatOptimizer:
    """Base of the kit's optimisers: ``params`` (list), ``param_groups`` (one dict), ``state``
    (parameter -> its tensors), set by the subclass's ``__init__``."""

    params: list[torch.nn.Parameter]
    param_groups: list[dict]
    state: dict[torch.Tensor, dict[str, torch.Tensor]]

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    def state_dict(self) -> dict:
        """``torch.optim``'s layout: state by parameter index (tensors shared, not copied)."""
        index = {id(p): i for i, p in enumerate(self.params)}
        return {"state": {index[id(p)]: dict(s) for p, s in self.state.items()},
                "param_groups": [{**self.param_groups[0], "params": list(range(len(self.params)))}]}
