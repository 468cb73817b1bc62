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


@pytest.mark.cpu_kernels
def test_flat_rmsprop_matches_torch_rmsprop_with_decay_as_alpha():
    torch.manual_seed(2)
    a = PixelCNN(5, 6, levels=4)
    b = copy.deepcopy(a)
    ours = FlatRMSprop(a, lr=1e-2, alpha=0.95, eps=1e-4, momentum=0.9, form="torch")  # the torch reading
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


def _autograd_reference_update(net, opt, frame: np.ndarray, levels: int, lr: float) -> tuple[float, float]:
    """The update as a direct reading of the paper: module forward, autograd backward of the summed
    cross-entropy, torch's RMSprop (the decay is ``alpha``), forward again."""
    t = torch.from_numpy(frame.reshape(1, -1)).long()
    x = t.to(next(net.parameters()).dtype) / (levels - 1)

    def log_rho():
        return torch.log_softmax(net(x), dim=-1).gather(-1, t.unsqueeze(-1)).sum()

    before = log_rho()
    for group in opt.param_groups:
        group["lr"] = lr
    opt.zero_grad()
    (-before).backward()
    opt.step()
    with torch.no_grad():
        after = log_rho()
    return before.item(), after.item()


@pytest.mark.parametrize("schedule", ["constant", "inverse", "inverse_sqrt"])
def test_update_equals_an_autograd_step_with_torch_rmsprop(schedule):
    # float64: the hand-written gradients and the flat optimiser are the textbook step, to rounding
    # (the torch reading; the paper's tf1 reading against its formulas: tests/test_optimizer_readings.py)
    m = PixelCNNDensity(5, 7, 4, lr=0.01, lr_schedule=schedule, seed=3, dtype=torch.float64, rmsprop="torch")
    ref_net = PixelCNN(5, 7, levels=4).double()
    ref_net.load_state_dict(m.net.state_dict())
    ref_opt = torch.optim.RMSprop(ref_net.parameters(), lr=0.01, alpha=0.95, eps=1e-4, momentum=0.9, centered=False)
    rng = np.random.default_rng(4)
    for n in range(1, 13):
        frame = rng.integers(0, 4, (5, 7)).astype(np.uint8)
        ours = m.update(frame)
        ref = _autograd_reference_update(ref_net, ref_opt, frame, 4, learning_rate(0.01, n, schedule))
        assert ours == pytest.approx(ref, rel=1e-12, abs=1e-12)
    assert m.n_updates == 12 and m.optimizer.steps == 12
    for p, q in zip(m.net.parameters(), ref_net.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("rmsprop", ["tf1", "torch"])
def test_hand_written_gradients_equal_autograd_on_42x42(rmsprop):
    assert_hand_gradients_equal_autograd(PixelCNNDensity(seed=2, dtype=torch.float64, rmsprop=rmsprop))


def assert_hand_gradients_equal_autograd(m: PixelCNNDensity) -> None:
    """The hand-written backward of the online step writes autograd's gradient (float64 model) of
    the reading's loss: the per-pixel mean cross-entropy (tf1), or the summed one (torch)."""
    from pcnn_explore.density.pixelcnn_step import OnlineStep, pixel_log_probs

    frame = np.random.default_rng(1).integers(0, 8, (1, 42 * 42)).astype(np.uint8)
    t = torch.from_numpy(frame).long()
    m.optimizer.zero_grad()
    nll = -torch.log_softmax(m.net(t.double() / 7), -1).gather(-1, t.unsqueeze(-1)).sum()
    (nll / (42 * 42) if m.rmsprop == "tf1" else nll).backward()
    expected = m.optimizer.flat_grad.clone()
    step = OnlineStep(m)
    step.frame.copy_(torch.from_numpy(frame))
    step.targets.copy_(step.frame)
    m.optimizer.flat_grad.fill_(123.0)  # written, not accumulated
    with torch.no_grad():
        step._backward(pixel_log_probs(step._forward(), step.targets)[0])
    torch.testing.assert_close(m.optimizer.flat_grad, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("form", ["tf1", "torch"])
def test_flat_rmsprop_takes_the_learning_rate_as_a_tensor(form):
    # the CUDA graph reads lr from a tensor; on the CPU both forms give the same step
    torch.manual_seed(5)
    a = PixelCNN(4, 4, levels=4)
    b = copy.deepcopy(a)
    opts = [FlatRMSprop(net, lr=0.0, alpha=0.95, eps=1e-4, momentum=0.9, form=form) for net in (a, b)]
    lr_tensor = torch.zeros(())
    x, t = torch.rand(1, 16), torch.randint(0, 4, (1, 16))
    for n in range(1, 6):
        lr = 0.05 / math.sqrt(n)
        lr_tensor.fill_(lr)
        for net, opt, arg in ((a, opts[0], lr), (b, opts[1], lr_tensor)):
            opt.zero_grad()
            F.cross_entropy(net(x).transpose(1, 2), t, reduction="sum").backward()
            opt.step(arg)
    torch.testing.assert_close(opts[0].flat, opts[1].flat, rtol=1e-6, atol=1e-7)
    assert opts[0].steps == opts[1].steps == 5


def test_state_round_trip_continues_exactly_and_keeps_the_tensors():
    rng = np.random.default_rng(6)
    frames = rng.integers(0, 8, (16, 6, 6)).astype(np.uint8)
    a = PixelCNNDensity(6, 6, 8, lr_schedule="inverse_sqrt", seed=1)
    for f in frames[:8]:
        a.update(f)
    b = PixelCNNDensity(6, 6, 8, lr_schedule="inverse_sqrt", seed=9)
    b.update(frames[0])  # b has built its step (buffers, and on CUDA its graph) before loading
    pointers = [t.data_ptr() for t in b.optimizer.state_tensors()] + [p.data_ptr() for p in b.net.parameters()]
    b.load_state_dict(a.state_dict())
    assert pointers == [t.data_ptr() for t in b.optimizer.state_tensors()] + [p.data_ptr() for p in b.net.parameters()]
    assert b.n_updates == 8 and b.optimizer.steps == 8
    for f in frames[8:]:
        assert a.update(f) == b.update(f)  # same n, same learning rate, same weights: bit for bit
    assert a.optimizer.lr == b.optimizer.lr == pytest.approx(1e-3 / math.sqrt(16))


def test_cuda_graph_is_off_on_the_cpu():
    assert PixelCNNDensity(3, 3, 2).cuda_graph is False
    assert PixelCNNDensity(3, 3, 2, cuda_graph=False).cuda_graph is False
    with pytest.raises(ValueError, match="CUDA"):
        PixelCNNDensity(3, 3, 2, cuda_graph=True)


def test_log_prob_of_a_batch_equals_one_frame_at_a_time():
    m = PixelCNNDensity(5, 6, 8, seed=4)
    frames = np.random.default_rng(2).integers(0, 8, (7, 5, 6)).astype(np.uint8)
    for f in frames[:3]:
        m.update(f)
    batch = m.log_prob(frames)
    single = np.array([m.log_prob(f[None])[0] for f in frames])
    np.testing.assert_allclose(batch, single, rtol=1e-6)
    per_pixel = m.pixel_log_prob(frames)
    assert per_pixel.shape == (7, 5, 6)
    np.testing.assert_allclose(per_pixel.sum(axis=(1, 2)), batch, rtol=1e-6)
