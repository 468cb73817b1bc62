import copy
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from pcnn_explore.density.pixelcnn import (
    FlatRMSprop,
    GatedResidualBlock,
    PixelCNN,
    PixelCNNDensity,
    causal_offsets,
    learning_rate,
)


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def input_gradients(net: PixelCNN, x: torch.Tensor, pixel: int) -> torch.Tensor:
    """d(sum of the logits at ``pixel``) / d(input), shape (H*W,)."""
    x = x.clone().requires_grad_(True)
    net(x)[0, pixel].sum().backward()
    return x.grad[0]


def test_causal_on_42x42_by_gradients():
    torch.manual_seed(0)
    h = w = 42
    net = PixelCNN(h, w, levels=8).double()
    x = torch.rand(1, h * w, dtype=torch.float64)
    pixels = list(range(0, h * w, 37)) + [0, 1, w - 1, w, h * w - 1, 20 * w + 20]
    for p in pixels:
        g = input_gradients(net, x, p)
        # no dependence on the pixel itself or anything after it in raster order
        assert torch.count_nonzero(g[p:]) == 0, f"pixel {p} sees the future"
        # and it does see its causal neighbourhood (the test would pass on a constant net too)
        i, j = divmod(p, w)
        live = [(i + di) * w + (j + dj) for di, dj in causal_offsets(7) if 0 <= i + di < h and 0 <= j + dj < w]
        assert all(g[q] != 0 for q in live), f"pixel {p} misses a causal neighbour"
        assert torch.count_nonzero(g) == len(live)  # exactly the 7x7 mask-A field


def test_mask_a_has_24_taps():
    offsets = causal_offsets(7)
    assert len(offsets) == 24
    assert (0, 0) not in offsets and (0, -1) in offsets and (-3, 3) in offsets and (0, 1) not in offsets


def test_architecture_of_appendix_a():
    net = PixelCNN(42, 42, levels=8)
    shapes = {name: tuple(p.shape) for name, p in net.named_parameters()}
    assert shapes["input_conv.linear.weight"] == (16, 24)  # 7x7 mask A, 1 -> 16 maps
    assert shapes["blocks.0.gate_in.weight"] == (32, 16)  # 1x1 to 32 maps = (a, b)
    assert shapes["blocks.1.gate_out.weight"] == (16, 16)
    assert shapes["hidden.weight"] == (64, 16)  # 1x1 to 64 maps
    assert shapes["logits.weight"] == (8, 64)  # 1x1 to the 8 levels
    assert len(net.blocks) == 2


def test_gate_multiplies():
    torch.manual_seed(1)
    block = GatedResidualBlock(4).double()
    h = torch.randn(3, 5, 4, dtype=torch.float64)
    a, b = F.linear(h, block.gate_in.weight, block.gate_in.bias).chunk(2, dim=-1)
    expected = h + F.linear(torch.tanh(a) * torch.sigmoid(b), block.gate_out.weight, block.gate_out.bias)
    torch.testing.assert_close(block(h), expected)
    additive = h + F.linear(torch.tanh(a) + torch.sigmoid(b), block.gate_out.weight, block.gate_out.bias)
    assert not torch.allclose(block(h), additive)


def test_flat_rmsprop_matches_torch_rmsprop_with_decay_as_alpha():
    torch.manual_seed(2)
    a = PixelCNN(5, 6, levels=4)
    b = copy.deepcopy(a)
    ours = FlatRMSprop(a, lr=1e-2, alpha=0.95, eps=1e-4, momentum=0.9)
    ref = torch.optim.RMSprop(b.parameters(), lr=1e-2, alpha=0.95, eps=1e-4, momentum=0.9, centered=False)
    x, t = torch.rand(1, 30), torch.randint(0, 4, (1, 30))
    for _ in range(5):
        for net, opt in ((a, ours), (b, ref)):
            opt.zero_grad()
            F.cross_entropy(net(x).transpose(1, 2), t, reduction="sum").backward()
            opt.step()
    for pa, pb in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(pa, pb, rtol=1e-6, atol=1e-7)


def test_paper_optimiser_settings():
    m = PixelCNNDensity(4, 4, 4)
    opt = m.optimizer
    assert (opt.lr, opt.alpha, opt.momentum, opt.eps) == (1e-3, 0.95, 0.9, 1e-4)


def test_loss_is_the_sum_of_pixel_cross_entropies():
    m = PixelCNNDensity(3, 4, 4)
    frame = np.array([[0, 1, 2, 3], [3, 2, 1, 0], [1, 1, 1, 1]], np.uint8)
    x = torch.from_numpy(frame.reshape(1, -1)).float() / 3.0  # levels 0..3 -> [0, 1]
    t = torch.from_numpy(frame.reshape(1, -1)).long()
    with torch.no_grad():
        ce = F.cross_entropy(m.net(x).transpose(1, 2).double(), t, reduction="sum")
    assert m.log_prob(frame[None])[0] == pytest.approx(-ce.item(), rel=1e-6)


def test_update_steps_on_the_same_frame():
    m = PixelCNNDensity(6, 6, 8)
    frame = np.random.default_rng(0).integers(0, 8, (6, 6)).astype(np.uint8)
    first = m.update(frame)
    second = m.update(frame)
    assert first[1] > first[0]  # one step on x raises rho(x) here
    assert second[0] == pytest.approx(first[1], abs=1e-9)  # rho'_n = rho_{n+1}: nothing reverted


@pytest.mark.parametrize(
    "schedule, expected", [("constant", [0.1, 0.1, 0.1]), ("inverse", [0.1, 0.05, 0.1 / 3]), ("inverse_sqrt", [0.1, 0.1 / math.sqrt(2), 0.1 / math.sqrt(3)])]
)
def test_learning_rate_schedules(schedule, expected):
    assert [learning_rate(0.1, n, schedule) for n in (1, 2, 3)] == pytest.approx(expected)
    m = PixelCNNDensity(3, 3, 2, lr=0.1, lr_schedule=schedule)
    used = []
    for _ in range(3):
        m.update(np.zeros((3, 3), np.uint8))
        used.append(m.optimizer.lr)
    assert used == pytest.approx(expected)


def test_bad_optimiser_arguments():
    with pytest.raises(ValueError, match="schedule"):
        PixelCNNDensity(3, 3, 2, lr_schedule="cosine")
    with pytest.raises(ValueError, match="lr"):
        PixelCNNDensity(3, 3, 2, lr=-1.0)
    with pytest.raises(ValueError, match="from 1"):
        learning_rate(0.1, 0, "inverse")


def test_seed_fixes_initial_weights_without_touching_global_rng():
    torch.manual_seed(123)
    state = torch.get_rng_state()
    a, b = PixelCNNDensity(4, 4, 4, seed=5), PixelCNNDensity(4, 4, 4, seed=5)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(a.optimizer.flat, b.optimizer.flat)
    assert not torch.equal(a.optimizer.flat, PixelCNNDensity(4, 4, 4, seed=6).optimizer.flat)


def test_sampling_uses_the_same_conditionals_as_log_prob():
    # With uniforms at the edge between two levels, any difference in the conditionals shows up.
    # Instead, check the defining property: each sampled pixel's level is the inverse-CDF draw
    # from the full network's conditional given the sampled prefix.
    m = PixelCNNDensity(4, 5, 4, seed=1)
    for f in np.random.default_rng(0).integers(0, 4, (10, 4, 5)).astype(np.uint8):
        m.update(f)
    samples = m.sample(3, np.random.default_rng(9))
    uniforms = np.random.default_rng(9).random((3, 20))
    x = torch.from_numpy(samples.reshape(3, -1)).float() / 3.0
    with torch.no_grad():
        probs = torch.softmax(m.net(x).double(), dim=-1).numpy()  # (3, 20, 4), causal: prefix only
    cdf = np.cumsum(probs, axis=-1)
    expected = np.minimum((uniforms[..., None] >= cdf).sum(-1), 3)
    np.testing.assert_array_equal(samples.reshape(3, -1), expected)
