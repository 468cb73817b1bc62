"""The PixelCNN's arithmetic on pixel columns, and its online batch-1 training step.

Layout: activations are (channels, M) matrices with one *column* per pixel (M = B * H * W for B
images, pixels in raster order, image after image). Every layer after the mask-A input layer is a
1x1 convolution, i.e. ``W @ X + b`` on these matrices; the input layer is the same on each pixel's
24 causal taps, gathered as a (taps, M) matrix. A ``position="bias"`` network adds its (levels, H*W)
position bias to the logits after :func:`forward_columns` (``PixelCNN.add_position_bias``). Channel-first matrices keep every elementwise
operation contiguous (the gate's two halves are row blocks, the log-softmax runs across rows),
which is several times faster on a CPU than (M, channels) rows with a chunked last dimension.

``tanh(a)`` is computed as ``2 sigmoid(2a) - 1`` (the same function, to float rounding): one
sigmoid over the gate's whole (2C, M) pre-activation instead of a slow CPU tanh plus a sigmoid.

:class:`OnlineStep` is the training step of ``PixelCNNDensity.update``: forward -> log rho,
gradients computed by hand into the flat gradient buffer of :class:`FlatRMSprop` (no autograd
graph, no allocation of the large activations: every (channels, H*W) matrix lives in a buffer
allocated once), RMSProp step with the learning rate read from a tensor, forward -> log rho'.
The gradient is that of the loss the optimiser's reading trains on (``tf1``: the per-pixel mean
cross-entropy; ``torch``: the sum); log rho and log rho' are whole-frame sums in nats either way.
The same function runs eagerly (CPU, and CUDA without graphs: the reference) or is captured once
in a CUDA graph and replayed (``cuda_graph``), with identical values.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from pcnn_explore.names import DENSITY_OPTIMIZERS

__all__ = ["FORMS", "FlatRMSprop", "forward_columns", "OnlineStep"]

#: the readings of the RMSProp update (:class:`FlatRMSprop`), the paper's first
FORMS = DENSITY_OPTIMIZERS


class FlatRMSprop:
    """Uncentred RMSProp with momentum over all parameters of a module stored in one flat buffer.

    Two readings of the paper's "(uncentered) RMSProp with momentum 0.9, decay 0.95 and epsilon
    1e-4" (``form``; the density model pairs each with its loss, :class:`OnlineStep`):

    - ``"tf1"`` (the paper's: the argument names of TensorFlow 1's ``RMSPropOptimizer``, whose
      update this is, in its kernel's order): the mean square starts at **1**, epsilon inside the
      root, the learning rate inside the momentum::

          v <- v + (g^2 - v)(1 - alpha);   m <- momentum m + lr g / sqrt(v + eps);   p <- p - m

    - ``"torch"`` (``torch.optim.RMSprop(alpha=decay, momentum=..., eps=..., centered=False)``):
      the mean square starts at 0, epsilon outside the root, the rate after the momentum::

          v <- alpha v + (1 - alpha) g^2;   b <- momentum b + g / (sqrt(v) + eps);   p <- p - lr b

    A learning rate that changes between updates (a schedule) therefore weights each step's
    gradient under ``tf1`` and the whole momentum under ``torch``.

    A batch-1 model has many tiny tensors, so the parameters and their gradients are moved into two
    flat buffers (each parameter becomes a view) and a step is a few tensor operations instead of
    several per parameter. ``step(lr)`` takes the learning rate as a Python float (default:
    ``self.lr``) or as a 0-d tensor on the parameters' device, which a CUDA graph reads at replay
    time. ``steps`` counts calls of :meth:`step` (the density model counts its own).
    """

    def __init__(self, module: nn.Module, lr: float, alpha: float, eps: float, momentum: float, form: str = "tf1"):
        if form not in FORMS:
            raise ValueError(f"the RMSProp reading must be one of {', '.join(FORMS)} ('tf1': TensorFlow 1's, the "
                             f"paper's; 'torch': torch's RMSprop form), got {form!r}")
        params = list(module.parameters())
        self.lr, self.alpha, self.eps, self.momentum, self.form = lr, alpha, eps, momentum, form
        with torch.no_grad():
            self.flat = torch.cat([p.detach().reshape(-1) for p in params])
        self.flat_grad = torch.zeros_like(self.flat)
        offset = 0
        for p in params:
            n = p.numel()
            p.data = self.flat[offset : offset + n].view_as(p)
            # Autograd accumulates into an existing .grad in place, hence into flat_grad.
            p.grad = self.flat_grad[offset : offset + n].view_as(p)
            offset += n
        # TF1 creates the mean square with ones (its RMSPropOptimizer's slot initialiser), torch with zeros
        self.square_avg = torch.ones_like(self.flat) if form == "tf1" else torch.zeros_like(self.flat)
        self.momentum_buffer = torch.zeros_like(self.flat)
        self._denominator = torch.zeros_like(self.flat)
        self._scratch = torch.zeros_like(self.flat)
        self.steps = 0

    def zero_grad(self) -> None:
        self.flat_grad.zero_()

    @torch.no_grad()
    def apply(self, lr: float | torch.Tensor) -> None:
        """The update on the current gradient, without counting it; allocation-free."""
        g, v, m = self.flat_grad, self.square_avg, self.momentum_buffer
        if self.form == "tf1":  # TF1's ApplyRMSProp: ms += (g^2 - ms)(1 - rho); mom = mom momentum + g lr / sqrt(ms + eps)
            torch.mul(g, g, out=self._scratch).sub_(v)
            v.add_(self._scratch, alpha=1.0 - self.alpha)
            torch.add(v, self.eps, out=self._denominator).sqrt_()
            torch.mul(g, lr, out=self._scratch).div_(self._denominator)
            m.mul_(self.momentum).add_(self._scratch)
            self.flat.sub_(m)
            return
        v.mul_(self.alpha).addcmul_(g, g, value=1.0 - self.alpha)
        torch.sqrt(v, out=self._denominator).add_(self.eps)
        m.mul_(self.momentum).addcdiv_(g, self._denominator)
        if isinstance(lr, torch.Tensor):
            self.flat.addcmul_(m, lr, value=-1.0)
        else:
            self.flat.add_(m, alpha=-lr)

    def step(self, lr: float | torch.Tensor | None = None) -> None:
        self.apply(self.lr if lr is None else lr)
        self.steps += 1

    def state_tensors(self) -> tuple[torch.Tensor, ...]:
        """The tensors an update changes: weights, both optimiser buffers, the gradient."""
        return self.flat, self.square_avg, self.momentum_buffer, self.flat_grad

    def state_dict(self) -> dict:
        return {
            "square_avg": self.square_avg.clone(),
            "momentum_buffer": self.momentum_buffer.clone(),
            "steps": self.steps,
            "hyper": torch.tensor([self.alpha, self.eps, self.momentum], dtype=torch.float64),
            "form": self.form,
        }

    def load_state_dict(self, state: dict) -> None:
        """Copies into the existing buffers (in place: a captured CUDA graph stays valid). A state of
        the other reading is refused (ValueError); one without ``form`` was saved before the readings
        were named, under ``torch``."""
        saved = state.get("form", "torch")
        if saved != self.form:
            raise ValueError(f"the optimizer state is of the {saved!r} RMSProp reading and this model runs "
                             f"{self.form!r}: build the model with rmsprop={saved!r} to continue it")
        for key in ("square_avg", "momentum_buffer"):
            if state[key].shape != self.flat.shape:
                raise ValueError(f"optimizer state {key!r} has shape {tuple(state[key].shape)}, expected {tuple(self.flat.shape)}")
            getattr(self, key).copy_(state[key])
        self.steps = int(state["steps"])


def _linears(net: nn.Module) -> list[nn.Linear]:
    """The network's affine maps in order: input taps, (gate_in, gate_out) per block, hidden, logits."""
    out = [net.input_conv.linear]
    for block in net.blocks:
        out += [block.gate_in, block.gate_out]
    return out + [net.hidden, net.logits]


def _gate_scale(channels: int, like: torch.Tensor) -> torch.Tensor:
    """(2C, 1) column [2] * C + [1] * C: sigmoid(scale * z) = [sigmoid(2a); sigmoid(b)]."""
    return torch.cat([torch.full((channels, 1), 2.0), torch.ones(channels, 1)]).to(like)


def _affine_params(net: nn.Module) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(weight (out, in), bias as an (out, 1) column) of each affine map, in order."""
    return [(lin.weight, lin.bias[:, None]) for lin in _linears(net)]


def forward_columns(net: nn.Module, patches: torch.Tensor, ws: "_Workspace | None" = None) -> torch.Tensor:
    """Logits (levels, M) of the pixels whose causal taps are the columns of ``patches`` (taps, M).

    Differentiable by autograd when ``ws`` is None; with a workspace every activation is written
    into its buffers (no autograd) and kept there for :meth:`OnlineStep` 's backward pass. Both
    ways run the same operations, so they give the same bits.
    """
    params = ws.params if ws is not None else _affine_params(net)
    n_blocks = len(params) // 2 - 1
    h = torch.addmm(params[0][1], params[0][0], patches, out=ws.h[0] if ws else None)
    for k in range(n_blocks):
        (w_in, b_in), (w_out, b_out) = params[1 + 2 * k], params[2 + 2 * k]
        z = torch.addmm(b_in, w_in, h, out=ws.s[k] if ws else None)
        c = z.shape[0] // 2
        s = torch.sigmoid(z.mul_(ws.gate_scale if ws else _gate_scale(c, z)), out=ws.s[k] if ws else None)
        minus_one = ws.minus_one if ws else s.new_full((), -1.0)
        tanh_a = torch.add(minus_one, s[:c], alpha=2.0, out=ws.tanh[k] if ws else None)
        u = torch.mul(tanh_a, s[c:], out=ws.u[k] if ws else None)
        h = torch.addmm(b_out, w_out, u, out=ws.h[k + 1] if ws else None).add_(h)
    q = torch.addmm(params[-2][1], params[-2][0], h, out=ws.q if ws else None)
    r = torch.clamp_min(q, 0.0, out=ws.r if ws else None)
    return torch.addmm(params[-1][1], params[-1][0], r, out=ws.logits if ws else None)


def pixel_log_probs(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(log-softmax over levels (levels, M), log-probability of each target level (1, M))."""
    log_p = torch.log_softmax(logits, dim=0)
    return log_p, log_p.gather(0, targets)


def frame_sums(pixel_lp: torch.Tensor, n_frames: int) -> torch.Tensor:
    """float64 (B,) sums of (1, B*H*W) per-pixel log-probabilities, frame by frame."""
    return pixel_lp.view(n_frames, -1).double().sum(dim=1)


class _Workspace:
    """Preallocated (channels, H*W) buffers of one image's forward and backward pass, and the
    layers' tensors (weights, bias columns, transposed weights, gradient views) looked up once."""

    def __init__(self, net: nn.Module, n_pixels: int, device: torch.device, dtype: torch.dtype):
        lin = _linears(net)
        ch, hidden, levels = lin[0].out_features, lin[-2].out_features, lin[-1].out_features
        n_blocks, taps = len(net.blocks), lin[0].in_features
        e = lambda rows: torch.empty(rows, n_pixels, device=device, dtype=dtype)  # noqa: E731
        self.h = [e(ch) for _ in range(n_blocks + 1)]
        self.s = [e(2 * ch) for _ in range(n_blocks)]  # gate pre-activation, then [sigmoid(2a); sigmoid(b)]
        self.tanh, self.u = [e(ch) for _ in range(n_blocks)], [e(ch) for _ in range(n_blocks)]
        self.q, self.r, self.logits, self.patches = e(hidden), e(hidden), e(levels), e(taps)
        self.d_logits, self.d_r, self.d_h, self.d_u = e(levels), e(hidden), e(ch), e(ch)
        self.d_z, self.tmp = e(2 * ch), e(ch)
        self.padded = torch.zeros(1, n_pixels + 1, device=device, dtype=dtype)  # last column: the zero pad
        self.gate_scale = _gate_scale(ch, self.padded)
        self.minus_one = torch.full((), -1.0, device=device, dtype=dtype)
        self.one = torch.ones((), device=device, dtype=dtype)
        self.minus_ones = torch.full((1, n_pixels), -1.0, device=device, dtype=dtype)
        self.params = _affine_params(net)
        self.weights_t = [m.weight.t() for m in lin]
        self.grads = [(m.weight.grad, m.bias.grad) for m in lin]
        self.column_taps = net.input_conv.column_taps
        self.position_bias = getattr(net, "position_bias", None)  # (levels, H*W) or None


class OnlineStep:
    """``PixelCNNDensity.update`` 's arithmetic on one frame, on static buffers.

    ``__call__(frame, lr) -> (log rho_n(x), log rho'_n(x))`` in nats. The frame (H, W) uint8 and
    the learning rate enter through static tensors (``frame`` (1, H*W) uint8 and ``lr`` 0-d on the
    model's device) and the two log-probabilities leave through ``out`` (2,) float64, so that the
    step can be replayed as a CUDA graph: ``cuda_graph=True`` captures it on the first call (after
    three warm-up steps on a side stream whose changes to the weights and optimiser are undone) and
    replays it afterwards; the frame comes in and the result goes out through pinned host buffers
    (one copy each way, one synchronisation). Nothing here counts updates: the caller does.
    """

    def __init__(self, model, cuda_graph: bool = False):
        self.model, self.net, self.opt = model, model.net, model.optimizer
        self._params = list(self.net.parameters())
        dev, n = model.device, model.height * model.width
        if cuda_graph and dev.type != "cuda":
            raise ValueError(f"cuda_graph needs a CUDA device, the model is on {dev}")
        self.ws = _Workspace(self.net, n, dev, model.dtype)
        # the loss differentiated: the per-pixel mean cross-entropy under tf1 (the paper's), the sum under torch
        self.loss_scale = 1.0 / n if self.opt.form == "tf1" else None
        self.frame = torch.zeros(1, n, dtype=torch.uint8, device=dev)
        self.targets = torch.zeros(1, n, dtype=torch.int64, device=dev)
        self.lr = torch.zeros((), dtype=model.dtype, device=dev)
        self.out = torch.zeros(2, dtype=torch.float64, device=dev)
        self.cuda_graph = bool(cuda_graph)
        self.graph: torch.cuda.CUDAGraph | None = None
        self._tensors = self._tensor_ids()  # addresses the workspace and the graph have baked in
        if self.cuda_graph:
            self.frame_host = torch.zeros(1, n, dtype=torch.uint8, pin_memory=True)
            self.out_host = torch.zeros(2, dtype=torch.float64, pin_memory=True)

    # -------------------------------------------------------------------------------- arithmetic
    def _forward(self) -> torch.Tensor:
        ws = self.ws
        ws.padded[:, :-1].copy_(self.targets).mul_(self.model._scale)  # as log_prob: convert, then scale
        torch.index_select(ws.padded[0], 0, ws.column_taps, out=ws.patches.view(-1))
        logits = forward_columns(self.net, ws.patches, ws)
        return logits if ws.position_bias is None else logits.add_(ws.position_bias)  # position="bias"

    def _backward(self, log_p: torch.Tensor) -> None:
        """Gradient of the loss into the flat gradient: of -log rho(x) = -sum of the target
        log-probabilities (``torch`` reading), or of -log rho(x) / (H W), the per-pixel mean
        cross-entropy (``tf1``, the paper's: ``loss_scale`` 1 / (H W) scales the logits' gradient)."""
        ws, wt, grads = self.ws, self.ws.weights_t, self.ws.grads
        n_blocks = len(ws.s)
        d_logits = torch.exp(log_p, out=ws.d_logits).scatter_add_(0, self.targets, ws.minus_ones)  # softmax - onehot
        if self.loss_scale is not None:
            d_logits.mul_(self.loss_scale)
        if ws.position_bias is not None:  # logits = network + bias: its gradient is d_logits itself
            ws.position_bias.grad.copy_(d_logits)
        torch.mm(d_logits, ws.r.t(), out=grads[-1][0])
        torch.sum(d_logits, 1, out=grads[-1][1])
        d_r = torch.mm(wt[-1], d_logits, out=ws.d_r).mul_(torch.sign(ws.r, out=ws.q))  # relu': 1 where r > 0
        torch.mm(d_r, ws.h[n_blocks].t(), out=grads[-2][0])
        torch.sum(d_r, 1, out=grads[-2][1])
        d_h = torch.mm(wt[-2], d_r, out=ws.d_h)
        for k in reversed(range(n_blocks)):
            i_in, i_out = 1 + 2 * k, 2 + 2 * k
            s, tanh_a, d_z, tmp = ws.s[k], ws.tanh[k], ws.d_z, ws.tmp
            c = tanh_a.shape[0]
            sig_b = s[c:]
            torch.mm(d_h, ws.u[k].t(), out=grads[i_out][0])
            torch.sum(d_h, 1, out=grads[i_out][1])
            d_u = torch.mm(wt[i_out], d_h, out=ws.d_u)
            # u = tanh(a) sigmoid(b): du/da = (1 - tanh^2) sigmoid(b), du/db = tanh(a) sigmoid(b) (1 - sigmoid(b))
            torch.addcmul(ws.one, tanh_a, tanh_a, value=-1.0, out=tmp).mul_(sig_b)
            torch.mul(tmp, d_u, out=d_z[:c])
            torch.addcmul(sig_b, sig_b, sig_b, value=-1.0, out=tmp).mul_(tanh_a)
            torch.mul(tmp, d_u, out=d_z[c:])
            torch.mm(d_z, ws.h[k].t(), out=grads[i_in][0])
            torch.sum(d_z, 1, out=grads[i_in][1])
            d_h.addmm_(wt[i_in], d_z)  # the residual path adds d_h itself
        torch.mm(d_h, ws.patches.t(), out=grads[0][0])
        torch.sum(d_h, 1, out=grads[0][1])

    @torch.no_grad()
    def _step(self) -> None:
        """On the static tensors: out = (log rho, log rho') of ``frame`` around one RMSProp step."""
        self.targets.copy_(self.frame)
        log_p, pixel_lp = pixel_log_probs(self._forward(), self.targets)
        torch.sum(pixel_lp.double(), dim=1, out=self.out[0:1])
        self._backward(log_p)
        self.opt.apply(self.lr)
        _, pixel_lp = pixel_log_probs(self._forward(), self.targets)
        torch.sum(pixel_lp.double(), dim=1, out=self.out[1:2])

    # ----------------------------------------------------------------------------------- calling
    def __call__(self, frame: np.ndarray, lr: float) -> tuple[float, float]:
        """One update on ``frame`` (H, W) uint8 with learning rate ``lr``; returns the two log-probs."""
        src = torch.from_numpy(np.ascontiguousarray(frame).reshape(1, -1))
        if self._tensors != self._tensor_ids():  # a tensor was replaced: look the layers up again
            self.ws = _Workspace(self.net, self.ws.padded.shape[1] - 1, self.frame.device, self.model.dtype)
            self.graph, self._tensors = None, self._tensor_ids()
        if not self.cuda_graph:
            self.frame.copy_(src)
            self.lr.fill_(lr)
            self._step()
            a, b = self.out.tolist()
            return a, b
        if self.graph is None:
            self.capture()
        self.frame_host.copy_(src)
        self.frame.copy_(self.frame_host, non_blocking=True)
        self.lr.fill_(lr)
        self.graph.replay()
        self.out_host.copy_(self.out, non_blocking=True)
        torch.cuda.current_stream(self.frame.device).synchronize()
        a, b = self.out_host.tolist()
        return a, b

    def _tensor_ids(self) -> tuple[int, ...]:
        """Where the weights, optimiser buffers and gradients live (``load_state_dict`` copies in place)."""
        return tuple(t.data_ptr() for t in self.opt.state_tensors()) + tuple(
            t.data_ptr() for p in self._params for t in (p, p.grad))

    def capture(self) -> None:
        """Capture :meth:`_step` in a CUDA graph, leaving the weights and optimiser as they were."""
        dev = self.frame.device
        saved = [t.clone() for t in self.opt.state_tensors()]
        side = torch.cuda.Stream(device=dev)
        side.wait_stream(torch.cuda.current_stream(dev))
        with torch.cuda.stream(side):
            for _ in range(3):  # warm-up: lazy initialisation must not happen during capture
                self._step()
        torch.cuda.current_stream(dev).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        # thread_local: other threads (the DQN learner) may keep using the GPU during capture
        with torch.cuda.graph(graph, stream=side, capture_error_mode="thread_local"):
            self._step()
        with torch.no_grad():
            for t, s in zip(self.opt.state_tensors(), saved):
                t.copy_(s)
        self.graph = graph
