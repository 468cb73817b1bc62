"""The paper's slim PixelCNN (appendix A) and its completely online training.

Network, for a one-channel image with ``levels`` grey levels:

1. 7x7 masked convolution, mask A (the centre pixel and everything after it in raster order
   are excluded), 1 -> 16 feature maps;
2. two gated residual blocks: ``h + conv1x1(tanh(a) * sigmoid(b))`` with ``(a, b)`` from a 1x1
   convolution to 32 maps (the gate multiplies);
3. 1x1 convolution to 64 maps, ReLU; a final 1x1 convolution to ``levels`` logits per pixel.

With a single input channel, mask-B 1x1 convolutions are plain 1x1 convolutions: after the
mask-A layer no feature at position p depends on pixel p or later, and a 1x1 layer mixes
features of the same position only. Here a 1x1 convolution is a Linear layer applied to every
pixel and the mask-A convolution a Linear layer over each pixel's 24 causal taps, the same
functions with fewer operations for batch-1 online training; the arithmetic runs on (channels,
pixels) matrices (:mod:`pcnn_explore.density.pixelcnn_step`). ``tests/test_pixelcnn.py`` proves
causality by gradients and the hand-written gradients of the update against autograd.

Training, in one of two named readings (``rmsprop``), both uncentred RMSProp with lr 1e-3
(constant by default), momentum 0.9, decay 0.95 (PyTorch's ``alpha``, not ``weight_decay``), eps 1e-4:

- ``"tf1"``, the paper's and the default: App. A names the arguments of TensorFlow 1's
  ``RMSPropOptimizer``, and the paper group's public PixelCNN bonus trains with it on the per-pixel
  mean cross-entropy. So: the gradient of the mean over the H x W pixels of the cross-entropy, and
  TF1's update (mean square from 1, epsilon inside the root, learning rate inside the momentum);
- ``"torch"``, a named sensitivity reading (the kit's before 0.4.0): the gradient of the summed
  cross-entropy -log rho(x), and torch's ``RMSprop`` form (mean square from 0, epsilon outside the
  root, learning rate after the momentum).

(:class:`~pcnn_explore.density.pixelcnn_step.FlatRMSprop` writes both out.) Under both, log rho(x)
and the PG are whole-frame sums in nats. One update, as in the paper's PG computation:
forward -> log rho_n(x), backward, optimiser step, forward without grad -> log rho'_n(x).
On CUDA the update is replayed as one CUDA graph (``cuda_graph``), with the same values.
Training is online with batch 1, so rho'_n = rho_{n+1} and nothing is reverted.

Location (the kit's extension, not the paper's): the appendix network is translation-invariant
and sees only the 24 causal neighbours of a pixel, so two frames that differ only in *where* an
object is, on a uniform background, get the same probability (DeepSea: the agent in any cell).
``position="bias"`` adds a learned logit per pixel position and level, a (levels, H*W) parameter
initialised to zero (so before training the network computes exactly the paper's function) and
trained with the rest. ``position="none"`` is the paper's network and the default.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from pcnn_explore.density.base import check_frames, check_sample_args, check_shape_args
from pcnn_explore.density.pixelcnn_step import FORMS, FlatRMSprop, OnlineStep, forward_columns, frame_sums, pixel_log_probs

LR_SCHEDULES = ("constant", "inverse", "inverse_sqrt")
#: ``position`` options: the paper's translation-invariant network, or a learned logit bias per position and level
POSITIONS = ("none", "bias")


def learning_rate(lr: float, n: int, schedule: str) -> float:
    """Learning rate of the n-th update (n >= 1): lr, lr / n, or lr / sqrt(n)."""
    if n < 1:
        raise ValueError(f"n counts updates from 1, got {n}")
    if schedule == "constant":
        return lr
    if schedule == "inverse":
        return lr / n
    if schedule == "inverse_sqrt":
        return lr / math.sqrt(n)
    raise ValueError(f"unknown learning-rate schedule {schedule!r}: choose one of {LR_SCHEDULES}")


def causal_offsets(kernel_size: int) -> list[tuple[int, int]]:
    """(row, column) offsets a mask-A k x k kernel keeps: the rows above the centre, and the
    pixels left of the centre in its row. 7x7 -> 3 * 7 + 3 = 24 taps."""
    c = kernel_size // 2
    return [(di, dj) for di in range(-c, 1) for dj in range(-c, c + 1) if di < 0 or dj < 0]


class CausalInputConv(nn.Module):
    """The 7x7 mask-A convolution, written as a linear map over each pixel's causal taps.

    A masked convolution multiplies most of its kernel by zero; keeping only the 24 live taps as
    the parameters of a Linear layer computes the same function (zero padding at the borders)
    with fewer operations and no mask. ``columns`` gathers the taps of every pixel as a
    (taps, B*H*W) matrix, the layout of :func:`pcnn_explore.density.pixelcnn_step.forward_columns`.
    """

    def __init__(self, height: int, width: int, out_channels: int, kernel_size: int = 7):
        super().__init__()
        offsets = causal_offsets(kernel_size)
        rows = torch.arange(height).view(-1, 1, 1) + torch.tensor([o[0] for o in offsets])
        cols = torch.arange(width).view(1, -1, 1) + torch.tensor([o[1] for o in offsets])
        inside = (rows >= 0) & (rows < height) & (cols >= 0) & (cols < width)
        # Taps outside the image point at an extra zero appended to the flat image (index H*W).
        taps = torch.where(inside, rows * width + cols, torch.tensor(height * width)).reshape(height * width, -1)
        self.register_buffer("taps", taps.reshape(-1), persistent=False)  # (H*W * taps,), pixel-major
        self.register_buffer("column_taps", taps.t().reshape(-1), persistent=False)  # (taps * H*W,), tap-major
        self.n_taps = len(offsets)
        self.linear = nn.Linear(len(offsets), out_channels)

    def columns(self, x: torch.Tensor) -> torch.Tensor:
        """(B, H*W) pixels -> (taps, B*H*W): each pixel's causal neighbourhood (0 outside) as a column."""
        padded = F.pad(x, (0, 1))
        n_pixels = x.shape[1]
        if len(x) == 1:
            return padded[0].index_select(0, self.column_taps).view(self.n_taps, n_pixels)
        per_image = padded[:, self.column_taps.view(self.n_taps, n_pixels)]  # (B, taps, H*W)
        return per_image.transpose(0, 1).reshape(self.n_taps, -1)


class GatedResidualBlock(nn.Module):
    """h + conv1x1(tanh(a) * sigmoid(b)), (a, b) = split(conv1x1(h) to 2 * channels).

    A 1x1 convolution is a Linear layer applied at every pixel; ``forward`` takes (B, H*W, C)
    features. The network itself runs the same block on (C, pixels) columns
    (:func:`pcnn_explore.density.pixelcnn_step.forward_columns`).
    """

    def __init__(self, channels: int):
        super().__init__()
        self.gate_in = nn.Linear(channels, 2 * channels)
        self.gate_out = nn.Linear(channels, channels)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        a, b = self.gate_in(h).chunk(2, dim=-1)
        return h + self.gate_out(torch.tanh(a) * torch.sigmoid(b))


def check_position(position: object) -> str:
    if position not in POSITIONS:
        raise ValueError(f"position must be one of {POSITIONS} ('none': the paper's network; 'bias': a learned "
                         f"logit per pixel position and level), got {position!r}")
    return position


class PixelCNN(nn.Module):
    """Appendix A network: (B, H*W) float pixels -> (B, H*W, levels) logits.

    ``position="bias"``: plus ``position_bias``, a (levels, H*W) logit per level and pixel
    position (zeros at creation; registered after the appendix layers, so the appendix weights
    drawn from a seed are the same with and without it). ``position="none"``: the paper's.
    """

    def __init__(self, height: int, width: int, levels: int = 8, channels: int = 16, hidden: int = 64, n_blocks: int = 2,
                 position: str = "none"):
        super().__init__()
        self.position = check_position(position)
        self.input_conv = CausalInputConv(height, width, channels, kernel_size=7)
        self.blocks = nn.Sequential(*[GatedResidualBlock(channels) for _ in range(n_blocks)])
        self.hidden = nn.Linear(channels, hidden)
        self.logits = nn.Linear(hidden, levels)
        self.position_bias = nn.Parameter(torch.zeros(levels, height * width)) if position == "bias" else None

    def add_position_bias(self, logits: torch.Tensor, pixels: slice | None = None) -> torch.Tensor:
        """(levels, B*P) logits of B images' pixels ``pixels`` (default all H*W) -> the same plus the
        position bias of each pixel, in place; unchanged for ``position="none"``."""
        if self.position_bias is None:
            return logits
        bias = self.position_bias if pixels is None else self.position_bias[:, pixels]
        return logits.view(logits.shape[0], -1, bias.shape[1]).add_(bias[:, None, :]).view(logits.shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_images, n_pixels = x.shape
        logits = forward_columns(self, self.input_conv.columns(x))  # (levels, B*H*W)
        if self.position_bias is not None:  # out of place: autograd needs the bias-free logits' graph
            logits = (logits.view(-1, n_images, n_pixels) + self.position_bias[:, None, :]).view(logits.shape)
        return logits.view(-1, n_images, n_pixels).permute(1, 2, 0)


class PixelCNNDensity:
    """Online PixelCNN density model over (height, width) images with ``levels`` grey levels.

    ``lr`` is the (initial) learning rate and ``lr_schedule`` its decay over updates n = 1, 2, ...:
    "constant" (the paper's choice), "inverse" (lr / n) or "inverse_sqrt" (lr / sqrt(n)).
    Pixels enter the network as level / (levels - 1) in [0, 1].
    ``seed`` seeds the initial weights (the global torch RNG is left alone).
    ``position``: "none" (the paper's translation-invariant network, default) or "bias" (plus a
    learned logit per pixel position and level, H*W*levels parameters; see the module docstring).
    ``rmsprop``: the optimiser's reading, "tf1" (the paper's, default: TF1's RMSProp on the per-pixel
    mean cross-entropy) or "torch" (torch's RMSprop form on the summed cross-entropy); see the module
    docstring. ``update`` returns the whole frame's log-probabilities in nats under both.
    ``cuda_graph``: replay each update as one CUDA graph (about 5x faster at batch 1, same values);
    None (default) turns it on for CUDA devices. ``load_state_dict`` copies into the existing
    tensors, so a captured graph stays valid.
    """

    def __init__(
        self,
        height: int = 42,
        width: int = 42,
        levels: int = 8,
        *,
        lr: float = 1e-3,
        lr_schedule: str = "constant",
        momentum: float = 0.9,
        alpha: float = 0.95,
        eps: float = 1e-4,
        device: str | torch.device = "cpu",
        seed: int = 0,
        dtype: torch.dtype = torch.float32,
        cuda_graph: bool | None = None,
        position: str = "none",
        rmsprop: str = "tf1",
    ):
        check_shape_args(height, width, levels)
        check_position(position)
        if rmsprop not in FORMS:
            raise ValueError(f"rmsprop must be one of {', '.join(FORMS)} ('tf1': TensorFlow 1's RMSProp on the "
                             f"per-pixel mean cross-entropy, the paper's; 'torch': torch's form on the sum), got {rmsprop!r}")
        if not (isinstance(lr, (int, float)) and math.isfinite(lr) and lr > 0):
            raise ValueError(f"lr must be a positive finite number, got {lr!r}")
        learning_rate(lr, 1, lr_schedule)  # validates the schedule name
        self.height, self.width, self.levels = int(height), int(width), int(levels)
        self.lr, self.lr_schedule = float(lr), lr_schedule
        self.device = torch.device(device)
        self.dtype = dtype
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            self.net = PixelCNN(self.height, self.width, levels=self.levels, position=position)
        self.position = position
        self.net.to(device=self.device, dtype=dtype)
        self.rmsprop = rmsprop
        self.optimizer = FlatRMSprop(self.net, lr=self.lr, alpha=alpha, eps=eps, momentum=momentum, form=rmsprop)
        self._n_updates = 0
        self._scale = 1.0 / (self.levels - 1)
        if cuda_graph and self.device.type != "cuda":
            raise ValueError(f"cuda_graph=True needs a CUDA device, got device={self.device}")
        self.cuda_graph = self.device.type == "cuda" if cuda_graph is None else bool(cuda_graph)
        self._online: OnlineStep | None = None  # built on the first update

    # -- protocol ------------------------------------------------------------------------------
    @property
    def n_updates(self) -> int:
        """Number of frames trained on."""
        return self._n_updates

    def _pixel_log_probs(self, frames: np.ndarray) -> torch.Tensor:
        """uint8 (B, H, W) -> (1, B*H*W) log-probabilities of the frames' pixels, image after image."""
        targets = torch.from_numpy(frames.reshape(1, -1)).to(self.device, torch.int64)
        x = targets.to(self.dtype).mul_(self._scale).view(len(frames), -1)
        logits = self.net.add_position_bias(forward_columns(self.net, self.net.input_conv.columns(x)))
        return pixel_log_probs(logits, targets)[1]

    def pixel_log_prob(self, frames: np.ndarray) -> np.ndarray:
        """Per-pixel log rho(x_ij | x_<ij) in nats, float64 (B, H, W); no training."""
        frames = check_frames(frames, self.height, self.width, self.levels)
        with torch.inference_mode():
            lp = self._pixel_log_probs(frames)
        return lp.double().cpu().numpy().reshape(frames.shape)

    def log_prob(self, frames: np.ndarray) -> np.ndarray:
        """log rho_n(x) in nats, float64 (B,); no training. The same operations as ``update`` 's
        (per-pixel terms summed in float64), so for one frame the two agree exactly."""
        frames = check_frames(frames, self.height, self.width, self.levels)
        with torch.inference_mode():
            lp = self._pixel_log_probs(frames)
        return frame_sums(lp, len(frames)).cpu().numpy()

    def update(self, frame: np.ndarray) -> tuple[float, float]:
        """One online step on ``frame`` (H, W); return (log rho_n(x), log rho'_n(x)) in nats.

        Forward -> log rho_n(x), gradient of the reading's loss (``tf1``: -log rho_n(x) / (H W), the
        per-pixel mean cross-entropy; ``torch``: -log rho_n(x)), RMSProp step with the learning rate
        of update n, forward -> log rho'_n(x): :class:`~pcnn_explore.density.pixelcnn_step.OnlineStep`,
        eager or (``cuda_graph``) replayed as one CUDA graph.
        """
        frame = check_frames(frame, self.height, self.width, self.levels, single=True)
        if self._online is None:
            self._online = OnlineStep(self, cuda_graph=self.cuda_graph)
        self._n_updates += 1
        self.optimizer.lr = learning_rate(self.lr, self._n_updates, self.lr_schedule)
        result = self._online(frame, self.optimizer.lr)
        self.optimizer.steps += 1
        return result

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` images (n, H, W) uint8, pixel by pixel in raster order.

        Every layer after the mask-A input layer acts on one pixel at a time, so the logits of
        pixel p need only p's 24 causal input taps: each step runs the network on one patch per
        image, not on the whole image. Draws come from ``rng`` (inverse CDF on uniforms), so
        samples are reproducible.
        """
        check_sample_args(n, rng)
        hw = self.height * self.width
        uniforms = rng.random((n, hw))
        taps = self.net.input_conv.taps.view(hw, -1)
        canvas = torch.zeros(n, hw + 1, device=self.device, dtype=self.dtype)  # last column: the zero pad
        out = np.zeros((n, hw), np.uint8)
        with torch.inference_mode():
            for p in range(hw):
                logits = self.net.add_position_bias(forward_columns(self.net, canvas[:, taps[p]].t()), slice(p, p + 1))
                cdf = np.cumsum(torch.softmax(logits.double(), dim=0).t().cpu().numpy(), axis=1)
                out[:, p] = np.minimum((uniforms[:, p, None] >= cdf).sum(axis=1), self.levels - 1)
                canvas[:, p] = torch.from_numpy(out[:, p]).to(self.device, self.dtype) * self._scale
        return out.reshape(n, self.height, self.width)

    def state_dict(self) -> dict:
        return {
            "kind": "PixelCNNDensity",
            "shape": [self.height, self.width, self.levels],
            "position": self.position,
            "rmsprop": self.rmsprop,
            "net": self.net.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "n_updates": self._n_updates,
        }

    def load_state_dict(self, state: dict) -> None:
        if state.get("kind") != "PixelCNNDensity":
            raise ValueError(f"state is for {state.get('kind')!r}, not PixelCNNDensity")
        shape = [int(v) for v in state["shape"]]
        if shape != [self.height, self.width, self.levels]:
            raise ValueError(f"state is for shape/levels {shape}, model has {[self.height, self.width, self.levels]}")
        if state.get("position", "none") != self.position:
            raise ValueError(f"state is for position={state.get('position', 'none')!r}, the model has "
                             f"position={self.position!r}")
        saved = state.get("rmsprop", "torch")  # a state saved before the readings were named: torch's
        if saved != self.rmsprop:
            raise ValueError(f"state was trained under the {saved!r} RMSProp reading, the model runs {self.rmsprop!r}: "
                             f"build it with rmsprop={saved!r} to continue it")
        self.net.load_state_dict(state["net"])
        self.optimizer.load_state_dict(state["optimizer"])
        self._n_updates = int(state["n_updates"])

    def __repr__(self) -> str:
        return (
            f"PixelCNNDensity(height={self.height}, width={self.width}, levels={self.levels}, "
            f"lr={self.lr}, lr_schedule={self.lr_schedule!r}, position={self.position!r}, rmsprop={self.rmsprop!r}, "
            f"n_updates={self._n_updates})"
        )
