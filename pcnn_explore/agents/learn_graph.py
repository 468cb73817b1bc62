"""The DQN gradient step replayed as one CUDA graph.

A batch-32 DQN step on a large GPU is launch-bound: gathering the batch, two forward passes, the
MMC target, the Huber loss, the backward pass and the optimiser step are ~100 small kernels.
:class:`LearnGraph` captures them once and replays them with one launch. Per call, only the
batch's numbers travel: with a device-resident replay (:class:`~pcnn_explore.agents.replay.DeviceBatch`)
the frame slots (B, 2, stack) and the actions, rewards, done flags and Monte Carlo returns, in
two small asynchronous copies from pinned host memory; with a host replay
(:class:`~pcnn_explore.agents.replay.Batch`) also the two (B, C, H, W) uint8 observation arrays.
Pinned buffers rotate over four slots, and a slot is refilled only once the copy that read it has
run (a CUDA event), so nothing synchronises the host with the GPU per step.

The captured function is :meth:`pcnn_explore.agents.dqn.DQNAgent._loss` plus its backward
(:meth:`~pcnn_explore.agents.dqn.DQNAgent._backward`: of the summed loss under DQN 3.0's RMSProp) and
``optimizer.step()`` (a ``capturable`` optimiser, or DQN 3.0's RMSProp, state on the GPU): the eager
step's arithmetic on static tensors. Warm-up steps before capture (run on a side stream, as torch requires) change
the weights and the optimiser state; both are put back afterwards, so the first replayed step is
the first real one. The target network is read in place: ``DQNAgent.sync_target`` copies into it.

A batch is copied into the static buffers as it is, and numpy broadcasts a short array into them
(one action for four observations) while the gather reads any slot it is given, so each batch is
checked first (:func:`~pcnn_explore.agents.transitions.check_batch`, the words of every learn step,
and its layout against the captured one); ``DQNAgent.learn``, which has checked it, says so.
"""
from __future__ import annotations

import torch

from pcnn_explore.agents.transitions import DeviceBatch, check_batch, gather_stacks

__all__ = ["LearnGraph"]

RING = 4  # pinned staging slots


def batch_layout(batch) -> tuple:
    """What a captured graph depends on: the kind of batch, its size and shapes, the frames tensor."""
    if isinstance(batch, DeviceBatch):
        return ("device", batch.frames.data_ptr(), tuple(batch.frames.shape), batch.obs_slots.shape)
    return ("host", batch.obs.shape, batch.obs.dtype.str)


class _Staging:
    """One set of pinned host buffers matching the static device inputs, and its copy event."""

    def __init__(self, ints: torch.Tensor, floats: torch.Tensor, obs: torch.Tensor | None):
        self.ints = torch.empty(ints.shape, dtype=ints.dtype, pin_memory=True)
        self.floats = torch.empty(floats.shape, dtype=floats.dtype, pin_memory=True)
        self.obs = None if obs is None else torch.empty(obs.shape, dtype=obs.dtype, pin_memory=True)
        self.event: torch.cuda.Event | None = None


class LearnGraph:
    """``agent``'s gradient step for batches laid out like ``batch``, as a CUDA graph.

    Call it with a batch of the same layout (:func:`batch_layout`); it returns the loss as a 0-d
    device tensor (a copy: later steps do not change it) without synchronising. A batch no learn
    step may read, or of another layout, raises ValueError before anything is copied.
    """

    def __init__(self, agent, batch):
        check_batch(batch, agent.n_actions, agent.obs_shape)  # its sizes become the static buffers'
        self.agent, self.layout = agent, batch_layout(batch)
        dev, size = agent.device, len(batch.action)
        self.frames = batch.frames if isinstance(batch, DeviceBatch) else None
        n_slots = 2 * batch.obs_slots.size if self.frames is not None else 0
        # static inputs: [obs slots, next slots, actions] as int64; [reward, done, mc_return] as float32
        self.ints = torch.zeros(n_slots + size, dtype=torch.int64, device=dev)
        self.floats = torch.zeros(3, size, dtype=torch.float32, device=dev)
        self.obs = None
        if self.frames is None:
            self.obs = torch.zeros((2, *batch.obs.shape), dtype=torch.uint8, device=dev)
        self.slot_shape = (2, *batch.obs_slots.shape) if self.frames is not None else None
        self.n_slots = n_slots
        self.ring = [_Staging(self.ints, self.floats, self.obs) for _ in range(RING)]
        self.turn = 0
        self.graph: torch.cuda.CUDAGraph | None = None
        self.loss: torch.Tensor | None = None
        self._capture()

    # ------------------------------------------------------------------------------------ body
    def _body(self) -> torch.Tensor:
        """The eager step's arithmetic on the static inputs; returns the (static) loss."""
        action = self.ints[self.n_slots:]
        if self.frames is not None:
            slots = self.ints[: self.n_slots].view(self.slot_shape)
            obs, next_obs = gather_stacks(self.frames, slots[0]), gather_stacks(self.frames, slots[1])
        else:
            obs, next_obs = self.obs[0], self.obs[1]
        loss = self.agent._loss(obs, next_obs, action, self.floats[0], self.floats[1], self.floats[2])
        self.agent._backward(loss, len(action))  # (DQN 3.0's RMSProp: the summed loss's gradient)
        self.agent.optimizer.step()
        return loss.detach()

    def _capture(self) -> None:
        agent, dev = self.agent, self.agent.device
        opt, params = agent.optimizer, list(agent.q.parameters())
        saved_params = [p.detach().clone() for p in params]
        saved_state = {p: {k: v.clone() for k, v in opt.state[p].items() if torch.is_tensor(v)}
                       for p in params if p in opt.state}
        side = torch.cuda.Stream(device=dev)
        side.wait_stream(torch.cuda.current_stream(dev))
        with torch.cuda.stream(side):
            for _ in range(3):  # warm-up: optimiser state and lazy initialisation before capture
                opt.zero_grad(set_to_none=True)
                self._body()
        torch.cuda.current_stream(dev).wait_stream(side)
        opt.zero_grad(set_to_none=True)  # backward in the graph allocates the gradients in its pool
        graph = torch.cuda.CUDAGraph()
        # thread_local: another thread (the density model's) may use the GPU during capture
        with torch.cuda.graph(graph, stream=side, capture_error_mode="thread_local"):
            self.loss = self._body()
        with torch.no_grad():  # undo the warm-up: the first replay is the first real step
            for p, s in zip(params, saved_params):
                p.copy_(s)
            for p in params:
                for k, v in opt.state[p].items():
                    if torch.is_tensor(v):
                        v.copy_(saved_state[p][k]) if p in saved_state else v.zero_()
        self.graph = graph

    # ------------------------------------------------------------------------------------ replay
    def __call__(self, batch, checked: bool = False) -> torch.Tensor:
        """One step on ``batch``; ``checked``: the caller has passed it through
        :func:`~pcnn_explore.agents.transitions.check_batch` for this agent and matched its layout."""
        if not checked:
            check_batch(batch, self.agent.n_actions, self.agent.obs_shape)
            if batch_layout(batch) != self.layout:
                raise ValueError(f"batch of layout {batch_layout(batch)} given to a graph captured for {self.layout}: "
                                 "capture a LearnGraph for it (DQNAgent.learn does)")
        stage = self.ring[self.turn]
        self.turn = (self.turn + 1) % RING
        if stage.event is not None:
            stage.event.synchronize()  # the copy that last read these pinned buffers has run
        ints = stage.ints.numpy()
        if self.frames is not None:
            ints[: self.n_slots // 2] = batch.obs_slots.reshape(-1)
            ints[self.n_slots // 2 : self.n_slots] = batch.next_slots.reshape(-1)
        else:
            obs = stage.obs.numpy()
            obs[0], obs[1] = batch.obs, batch.next_obs
        ints[self.n_slots:] = batch.action
        floats = stage.floats.numpy()
        floats[0], floats[1], floats[2] = batch.reward, batch.done, batch.mc_return
        self.ints.copy_(stage.ints, non_blocking=True)
        self.floats.copy_(stage.floats, non_blocking=True)
        if self.obs is not None:
            self.obs.copy_(stage.obs, non_blocking=True)
        stage.event = torch.cuda.Event()
        stage.event.record(torch.cuda.current_stream(self.agent.device))
        self.graph.replay()
        return self.loss.clone()
