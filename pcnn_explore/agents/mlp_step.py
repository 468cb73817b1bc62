"""DQN's learn step for the small MLP, written out by hand in numpy (and one numba loop for Adam).

On a CPU, a gradient step of :class:`~pcnn_explore.agents.networks.MLP` on a batch of 32 DeepSea grids is
a few hundred thousand multiply-adds, about 30 microseconds of arithmetic, but torch's autograd and
dispatch make it about a millisecond. :class:`NumpyMLPStep` computes the same step on the parameters'
own memory (numpy views of the torch tensors, so checkpoints, ``policy.pt`` and greedy actions see every
update at once, and a checkpoint written by either path loads into the other):

Forward, for x = obs / 255 flattened to (B, D) float32, online weights (W1, b1), (W2, b2), (W3, b3)::

    z1 = x W1^T + b1,  h1 = relu(z1),  z2 = h1 W2^T + b2,  h2 = relu(z2),  q = h2 W3^T + b3   (B, A)

Target y: :func:`~pcnn_explore.agents.returns.mixed_mc_target` of ``max_a' Q_target(x', a')`` (double
Q-learning: the online network's argmax, the target network's value), as in
:meth:`~pcnn_explore.agents.dqn.DQNAgent._loss`. Loss: Huber with delta 1 between q[a] and y, averaged
over the batch; its gradient in q[a] is ``clip(q[a] - y, -1, 1) / B``. Backward (``*`` elementwise,
``[z > 0]`` ReLU's derivative, as torch takes it)::

    dq = one_hot(a) * clip(q[a] - y, -1, 1) / B                   (B, A)
    gW3 = dq^T h2,  gb3 = sum_B dq,   dz2 = (dq W3) * [z2 > 0]
    gW2 = dz2^T h1, gb2 = sum_B dz2,  dz1 = (dz2 W2) * [z1 > 0]
    gW1 = dz1^T x,  gb1 = sum_B dz1

Adam: torch's update rule for ``torch.optim.Adam`` (no weight decay, no amsgrad), per element, with t
the parameter's step count after adding 1::

    m = m + (1 - beta1) (g - m),  v = beta2 v + (1 - beta2) g^2
    p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

The state lives in the agent's optimiser (:class:`~pcnn_explore.agents.adam.FusedAdam`) in its own
layout. Float32 throughout; the results differ from torch's step only in the order of float32 sums
(``tests/test_mlp_step.py`` bounds the difference over many random networks and batches). Used where
``learn_step`` resolves to ``"numpy"`` (:class:`~pcnn_explore.run.config.TrainConfig`); torch stays the
path for every other network and optimiser.

Bad inputs: the loops here index the weights with the batch's actions and rows unchecked (a short
action array or a wider frame reads and writes out of bounds), so a batch is checked first: its
layout against the replay's own (:func:`~pcnn_explore.agents.transitions.is_replay_layout`,
attribute comparisons) and its values in one compiled pass (:func:`_batch_fault`: actions in
[0, A), finite rewards and returns, ``done`` 0 or 1); where either finds a fault,
:func:`~pcnn_explore.agents.transitions.check_batch` names it, with the message torch's step gives,
which calls the same check (or, for a valid batch of other dtypes, converts it). The replay refuses
a bad transition already when it is stored. Needs numba (and scipy, for numba's ``np.dot``):
``learn_step`` auto picks torch where either is missing.
"""
from __future__ import annotations

import importlib.util

import numba  # noqa: F401  (this step exists only compiled: without numba it does not import, and DQNAgent says so)
import numpy as np

from pcnn_explore.agents.transitions import check_batch, is_replay_layout
from pcnn_explore.jit import njit


__all__ = ["NumpyMLPStep", "supports_numpy_step"]


def supports_numpy_step(agent) -> str | None:
    """None when :class:`NumpyMLPStep` can run ``agent``'s learn step, else why not (a sentence)."""
    from pcnn_explore.agents.adam import FusedAdam
    from pcnn_explore.agents.networks import MLP

    if agent.device.type != "cpu":
        return f"the agent runs on {agent.device}, and the numpy step on the CPU"
    if not isinstance(agent.q, MLP):
        return f"the network is {type(agent.q).__name__}, and the numpy step is written for the MLP"
    if not isinstance(agent.optimizer, FusedAdam):
        return f"the optimiser is {type(agent.optimizer).__name__}, and the numpy step runs Adam"
    return None


@njit(fastmath=True, error_model="numpy")
def _adam(param, grad, exp_avg, exp_avg_sq, beta1, beta2, step_size, bias_correction2_sqrt, eps):  # pragma: no cover
    """Adam's update of one parameter (1-D float32 views), in place; see the module docstring. The
    scalars are float32: ``beta1`` and ``beta2`` as (beta, 1 - beta) pairs, each rounded from float64
    as torch's kernel takes them (float32(1 - 0.999) is not 1 - float32(0.999)).

    Moments below float32's smallest normal number (1.2e-38) are stored as 0, as a CPU that flushes
    subnormals does: the first moment of an input never seen again decays by beta1 each step and
    would otherwise reach the subnormal range, where float32 arithmetic is tens of times slower."""
    b1, one_minus_b1 = beta1
    b2, one_minus_b2 = beta2
    tiny = np.float32(1.1754944e-38)
    for i in range(param.size):
        g = grad[i]
        m = exp_avg[i] + one_minus_b1 * (g - exp_avg[i])
        v = b2 * exp_avg_sq[i] + one_minus_b2 * g * g
        m = m if abs(m) >= tiny else np.float32(0.0)
        v = v if v >= tiny else np.float32(0.0)
        exp_avg[i] = m
        exp_avg_sq[i] = v
        param[i] -= step_size * m / (np.sqrt(v) / bias_correction2_sqrt + eps)


@njit()
def _nonzeros(obs):  # pragma: no cover
    """(rows, columns, values / 255) of the nonzero entries of obs (B, D) uint8, row by row."""
    n, d_in = obs.shape
    count = 0
    for i in range(n):
        for d in range(d_in):
            if obs[i, d] != 0:
                count += 1
    rows, cols = np.empty(count, np.int64), np.empty(count, np.int64)
    vals = np.empty(count, np.float32)
    k = 0
    for i in range(n):
        for d in range(d_in):
            if obs[i, d] != 0:
                rows[k], cols[k], vals[k] = i, d, np.float32(obs[i, d]) / np.float32(255.0)
                k += 1
    return rows, cols, vals


@njit()
def _sparse_first_layer(rows, cols, vals, weight, bias, out):  # pragma: no cover
    """out = x W^T + b, x given by its nonzero entries (:func:`_nonzeros`); out (B, H) float32."""
    for i in range(out.shape[0]):
        for h in range(out.shape[1]):
            out[i, h] = bias[h]
    for k in range(rows.size):
        i, d, x = rows[k], cols[k], vals[k]
        for h in range(out.shape[1]):
            out[i, h] += x * weight[h, d]


@njit()
def first_layer(obs, weight, bias, out):  # pragma: no cover
    """out = (obs / 255) W^T + b for obs (B, D) uint8, W (H, D), b (H,), out (B, H) float32, over the
    nonzero inputs only: DeepSea's grids are one-hot, so this is H multiply-adds per row instead of
    D H. Where a row has one nonzero input the result is the dense product's exactly."""
    rows, cols, vals = _nonzeros(obs)
    _sparse_first_layer(rows, cols, vals, weight, bias, out)


@njit()
def _first_layer_grad(rows, cols, vals, dz, out):  # pragma: no cover
    """out = dz^T x: the gradient of the first layer's weights (H, D), x given by its nonzero entries."""
    out[:] = 0.0
    for k in range(rows.size):
        i, d, x = rows[k], cols[k], vals[k]
        for h in range(dz.shape[1]):
            out[h, d] += dz[i, h] * x


@njit()
def _mlp(nonzeros, n, w1, b1, w2, b2, w3, b3):  # pragma: no cover
    """(z1, h1, z2, h2, q) of the MLP on n inputs given by their nonzero entries (:func:`_nonzeros`);
    see the module docstring."""
    z1 = np.empty((n, b1.size), dtype=np.float32)
    _sparse_first_layer(nonzeros[0], nonzeros[1], nonzeros[2], w1, b1, z1)
    h1 = np.maximum(z1, np.float32(0.0))
    z2 = np.dot(h1, w2.T) + b2
    h2 = np.maximum(z2, np.float32(0.0))
    q = np.dot(h2, w3.T) + b3
    return z1, h1, z2, h2, q


@njit()
def _greedy(obs, w1, b1, w2, b2, w3, b3):  # pragma: no cover
    """argmax_a Q(obs, a) per row of obs (B, D) uint8 (the first of tied actions, as numpy's argmax)."""
    q = _mlp(_nonzeros(obs), obs.shape[0], w1, b1, w2, b2, w3, b3)[4]
    out = np.empty(q.shape[0], dtype=np.int64)
    for i in range(q.shape[0]):
        out[i] = np.argmax(q[i])
    return out


@njit()
def _gradients(obs, next_obs, action, reward, done, mc_return, gamma, beta, double_q,
               w1, b1, w2, b2, w3, b3, tw1, tb1, tw2, tb2, tw3, tb3,
               gw1, gb1, gw2, gb2, gw3, gb3):  # pragma: no cover
    """The Huber loss on the batch (float32); its gradients written into gw1 ... gb3. See the module docstring."""
    n = obs.shape[0]
    one = np.float32(1.0)
    seen, reached = _nonzeros(obs), _nonzeros(next_obs)
    q_next = _mlp(reached, n, tw1, tb1, tw2, tb2, tw3, tb3)[4]
    q_online_next = _mlp(reached, n, w1, b1, w2, b2, w3, b3)[4] if double_q else q_next
    z1, h1, z2, h2, q = _mlp(seen, n, w1, b1, w2, b2, w3, b3)
    d = np.empty(n, dtype=np.float32)
    loss = np.float32(0.0)
    for i in range(n):
        if double_q:
            next_q_max = q_next[i, np.argmax(q_online_next[i])]
        else:
            next_q_max = q_next[i].max()
        # mixed_mc_target, in float32 and in its order of operations
        y = (one - beta) * (reward[i] + gamma * (one - done[i]) * next_q_max) + beta * mc_return[i]
        d[i] = q[i, action[i]] - y
        a = abs(d[i])
        loss += np.float32(0.5) * d[i] * d[i] if a < one else a - np.float32(0.5)
    loss /= np.float32(n)
    # backward: dq is one-hot in each row (the action taken), so dz2 = dq W3 is a row of W3 per sample
    gw3[:] = 0.0
    gb3[:] = 0.0
    dz2 = np.empty_like(z2)
    for i in range(n):
        g = min(max(d[i], -one), one) / np.float32(n)
        a = action[i]
        gb3[a] += g
        for h in range(z2.shape[1]):
            gw3[a, h] += g * h2[i, h]
            dz2[i, h] = g * w3[a, h] if z2[i, h] > 0 else np.float32(0.0)
    gw2[:] = np.dot(dz2.T, h1)
    gb2[:] = dz2.sum(axis=0)
    dz1 = np.dot(dz2, w2)
    for i in range(n):
        for h in range(z1.shape[1]):
            if z1[i, h] <= 0:
                dz1[i, h] = 0.0
    _first_layer_grad(seen[0], seen[1], seen[2], dz1, gw1)
    gb1[:] = dz1.sum(axis=0)
    return loss


@njit()
def _batch_fault(action, n_actions, reward, done, mc_return):  # pragma: no cover
    """True where a row of the batch has an action outside [0, n_actions), a reward or Monte Carlo
    return that is not finite, or a ``done`` that is not 0 or 1 (NaN is neither): one pass, under a
    microsecond at batch size 32 (numpy's min, max, isfinite and counts take several). The arrays
    are (B,), as :func:`~pcnn_explore.agents.transitions.is_replay_layout` has checked."""
    for i in range(action.size):
        if (action[i] < 0 or action[i] >= n_actions or not (np.isfinite(reward[i]) and np.isfinite(mc_return[i]))
                or (done[i] != 0 and done[i] != 1)):
            return True
    return False


@njit()
def _adam_all(params, grads, exp_avgs, exp_avg_sqs, steps, lr, beta1, beta2, eps):  # pragma: no cover
    """Adam's step of every parameter (tuples of 1-D float32 views; steps: 1-element float32 views)."""
    for k in range(len(params)):
        steps[k][0] += 1
        t = np.float64(steps[k][0])
        _adam(params[k], grads[k], exp_avgs[k], exp_avg_sqs[k], (np.float32(beta1), np.float32(1.0 - beta1)),
              (np.float32(beta2), np.float32(1.0 - beta2)), np.float32(lr / (1.0 - beta1 ** t)),
              np.float32(np.sqrt(1.0 - beta2 ** t)), np.float32(eps))


class NumpyMLPStep:
    """The learn step of a :class:`~pcnn_explore.agents.dqn.DQNAgent` whose network is the MLP and whose
    optimiser is Adam on the CPU, written out by hand (numba), on the agent's parameters and optimiser
    state in place.

    Build it again after the agent's parameters or optimiser state get new memory
    (``load_state_dict`` of the optimiser, ``.to(...)``); the agent does.
    """

    def __init__(self, agent):
        why = supports_numpy_step(agent)
        if why is not None:
            raise ValueError(f"the numpy learn step cannot run this agent: {why}; use learn_step='torch'")
        if importlib.util.find_spec("scipy") is None:  # numba compiles np.dot with scipy's BLAS
            raise ImportError("the numpy learn step needs scipy (numba's matrix products call its BLAS), which is "
                              "not installed: pip install scipy, or use learn_step='torch'")
        self.n_actions, self.obs_shape = agent.n_actions, tuple(agent.obs_shape)
        self.gamma, self.mmc_beta, self.double_q = np.float32(agent.gamma), np.float32(agent.mmc_beta), agent.double_q
        opt = agent.optimizer
        group = opt.param_groups[0]
        self.lr, (self.beta1, self.beta2), self.eps = group["lr"], group["betas"], group["eps"]
        # W1, b1, W2, b2, W3, b3 as numpy views of the torch tensors' memory (W is (out, in))
        self.online = tuple(p.detach().numpy() for layer in agent.q._dense for p in (layer.weight, layer.bias))
        self.target = tuple(p.detach().numpy() for layer in agent.target._dense for p in (layer.weight, layer.bias))
        params = [p for layer in agent.q._dense for p in (layer.weight, layer.bias)]
        if [id(p) for p in params] != [id(p) for p in opt.params]:
            raise ValueError("the optimiser's parameters are not the MLP's three dense layers in order")
        states = []
        for p in params:
            s = opt.state.get(p)
            if s is None:  # FusedAdam's layout, as its first step would make it
                import torch

                s = opt.state[p] = {"step": torch.tensor(0.0, dtype=torch.float32), "exp_avg": torch.zeros_like(p),
                                    "exp_avg_sq": torch.zeros_like(p)}
            states.append(s)
        self.grads = tuple(np.empty_like(w) for w in self.online)
        self._flat = (tuple(w.reshape(-1) for w in self.online), tuple(g.reshape(-1) for g in self.grads),
                      tuple(s["exp_avg"].numpy().reshape(-1) for s in states),
                      tuple(s["exp_avg_sq"].numpy().reshape(-1) for s in states),
                      tuple(s["step"].numpy().reshape(1) for s in states))
        for views in self._flat:
            for v in views:
                if not v.flags.c_contiguous or v.base is None:
                    raise ValueError("the numpy learn step needs contiguous parameters and optimiser state in place")

    @staticmethod
    def _inputs(obs) -> np.ndarray:
        """(B, C, H, W) uint8 -> (B, D) uint8, contiguous. Another dtype raises ValueError (a cast would
        wrap 300 to 44 and cut 0.5 to 0)."""
        obs = np.asarray(obs)
        if obs.dtype != np.uint8:
            raise ValueError(f"the numpy learn step reads uint8 frames, got {obs.dtype}: pass the frames as uint8 "
                             "(a ReplayBuffer's batches are)")
        return np.ascontiguousarray(obs.reshape(len(obs), -1))

    def greedy_actions(self, obs) -> list[int]:
        """argmax_a Q(obs, a) of the online network for each of obs (B, C, H, W) uint8. Observations of
        another shape than the network's raise ValueError (the loops would read out of bounds)."""
        inputs = self._inputs(obs)
        if np.shape(obs)[1:] != self.obs_shape:
            raise ValueError(f"the numpy learn step's network reads (B, {', '.join(map(str, self.obs_shape))}) "
                             f"observations, got {np.shape(obs)}: pass observations of the shape it was built for")
        return _greedy(inputs, *self.online).tolist()

    def gradients(self, batch) -> tuple[np.float32, tuple[np.ndarray, ...]]:
        """(loss, gradients) of the Huber loss on ``batch`` (a :class:`~pcnn_explore.agents.replay.Batch`),
        the gradients in the optimiser's parameter order (W1, b1, W2, b2, W3, b3), in arrays this
        object reuses. Changes no parameter. A batch no learn step may read raises ValueError
        (:func:`~pcnn_explore.agents.transitions.check_batch`) before any arithmetic."""
        if is_replay_layout(batch, self.obs_shape) and not _batch_fault(batch.action, self.n_actions, batch.reward,
                                                                         batch.done, batch.mc_return):
            action, reward, done, mc_return = batch.action, batch.reward, batch.done, batch.mc_return
        else:  # raises, naming the first fault; or a valid batch of other dtypes (int32 actions), converted
            action, reward, done, mc_return = check_batch(batch, self.n_actions, self.obs_shape)
        loss = _gradients(self._inputs(batch.obs), self._inputs(batch.next_obs), action, reward, done, mc_return,
                          self.gamma, self.mmc_beta, self.double_q, *self.online, *self.target, *self.grads)
        return np.float32(loss), self.grads

    def __call__(self, batch) -> np.float32:
        """One gradient step on ``batch``: the agent's parameters and Adam state updated in place.
        Returns the Huber loss before the step (a float32 scalar)."""
        loss, _ = self.gradients(batch)
        _adam_all(*self._flat, self.lr, self.beta1, self.beta2, self.eps)
        return loss
