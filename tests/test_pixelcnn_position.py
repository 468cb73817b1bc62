"""PixelCNNDensity(position="bias"): a learned logit per pixel position and level (the kit's extension).

The protocol proofs (normalisation over all images of tiny shapes, update = log_prob before and
after, state round trips, bad inputs) run on it through the registry entry ``pixelcnn_pos`` in
tests/test_density.py; here: causality, the hand-written gradient, the textbook update, and what
the bias is for (telling positions apart on a uniform background).
"""
import numpy as np
import pytest
import torch

from pcnn_explore.density import REGISTRY, make_density
from pcnn_explore.density.pixelcnn import PixelCNN, PixelCNNDensity, causal_offsets, learning_rate
from test_pixelcnn import _autograd_reference_update, assert_hand_gradients_equal_autograd  # autograd references


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def _trained_bias_net(h: int, w: int, levels: int, seed: int) -> PixelCNN:
    """A position-bias network whose bias is not zero (as after training)."""
    torch.manual_seed(seed)
    net = PixelCNN(h, w, levels=levels, position="bias").double()
    with torch.no_grad():
        net.position_bias.normal_()
    return net


def test_causal_on_42x42_by_gradients_with_the_position_bias():
    h = w = 42
    net = _trained_bias_net(h, w, 8, 0)
    x = torch.rand(1, h * w, dtype=torch.float64)
    for p in list(range(0, h * w, 41)) + [0, 1, w - 1, h * w - 1]:
        xg = x.clone().requires_grad_(True)
        net(xg)[0, p].sum().backward()
        g = xg.grad[0]
        assert torch.count_nonzero(g[p:]) == 0, f"pixel {p} sees the future"
        i, j = divmod(p, w)
        live = [(i + di) * w + (j + dj) for di, dj in causal_offsets(7) if 0 <= i + di < h and 0 <= j + dj < w]
        assert torch.count_nonzero(g) == len(live)  # the bias adds no dependence on any pixel


def test_the_bias_has_one_parameter_per_position_and_level_and_starts_at_zero():
    m = PixelCNNDensity(5, 6, 4, position="bias")
    assert tuple(m.net.position_bias.shape) == (4, 30)
    assert torch.count_nonzero(m.net.position_bias) == 0
    n_paper = sum(p.numel() for p in PixelCNNDensity(5, 6, 4).net.parameters())
    assert sum(p.numel() for p in m.net.parameters()) == n_paper + 5 * 6 * 4
    assert m.optimizer.flat.numel() == n_paper + 120  # trained with the rest
    assert PixelCNNDensity(5, 6, 4).net.position_bias is None  # the default is the paper's network


def test_before_training_the_bias_network_is_the_papers_network():
    frames = np.random.default_rng(0).integers(0, 8, (4, 6, 7)).astype(np.uint8)
    paper, biased = PixelCNNDensity(6, 7, 8, seed=3), PixelCNNDensity(6, 7, 8, seed=3, position="bias")
    np.testing.assert_array_equal(paper.log_prob(frames), biased.log_prob(frames))
    (before_paper, after_paper), (before_bias, after_bias) = paper.update(frames[0]), biased.update(frames[0])
    assert before_paper == before_bias  # the same function before the first step
    assert after_bias != after_paper  # after it the bias has learned something too


def test_update_equals_an_autograd_step_with_torch_rmsprop():
    m = PixelCNNDensity(5, 7, 4, lr=0.01, lr_schedule="inverse_sqrt", seed=3, dtype=torch.float64, position="bias",
                        rmsprop="torch")  # against torch's RMSprop: the torch reading
    ref = PixelCNN(5, 7, levels=4, position="bias").double()
    ref.load_state_dict(m.net.state_dict())
    opt = torch.optim.RMSprop(ref.parameters(), lr=0.01, alpha=0.95, eps=1e-4, momentum=0.9, centered=False)
    rng = np.random.default_rng(4)
    for n in range(1, 11):
        frame = rng.integers(0, 4, (5, 7)).astype(np.uint8)
        ours = m.update(frame)
        assert ours == pytest.approx(_autograd_reference_update(ref, opt, frame, 4, learning_rate(0.01, n, "inverse_sqrt")),
                                     rel=1e-12, abs=1e-12)
    for p, q in zip(m.net.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-10, atol=1e-12)
    assert torch.count_nonzero(m.net.position_bias) > 0


@pytest.mark.parametrize("rmsprop", ["tf1", "torch"])
def test_hand_written_gradients_equal_autograd_on_42x42_with_the_bias(rmsprop):
    m = PixelCNNDensity(seed=2, dtype=torch.float64, position="bias", rmsprop=rmsprop)
    with torch.no_grad():
        m.net.position_bias.normal_(generator=torch.Generator().manual_seed(0))
    assert_hand_gradients_equal_autograd(m)
    assert torch.count_nonzero(m.net.position_bias.grad) > 0


def test_sampling_uses_the_bias():
    m = PixelCNNDensity(4, 5, 4, seed=1, position="bias")
    for f in np.random.default_rng(0).integers(0, 4, (10, 4, 5)).astype(np.uint8):
        m.update(f)
    samples = m.sample(3, np.random.default_rng(9))
    uniforms = np.random.default_rng(9).random((3, 20))
    with torch.no_grad():
        probs = torch.softmax(m.net(torch.from_numpy(samples.reshape(3, -1)).float() / 3.0).double(), -1).numpy()
    expected = np.minimum((uniforms[..., None] >= np.cumsum(probs, axis=-1)).sum(-1), 3)
    np.testing.assert_array_equal(samples.reshape(3, -1), expected)


def _one_hot_frame(n: int, cell: tuple[int, int], level: int = 7) -> np.ndarray:
    frame = np.zeros((n, n), np.uint8)
    frame[cell] = level
    return frame


@pytest.mark.parametrize("rmsprop, updates", [("torch", 60), ("tf1", 300)])
def test_the_papers_network_cannot_tell_where_the_agent_is_and_the_bias_can(rmsprop, updates):
    # DeepSea-like frames: one bright pixel on a background of 0, the level the border padding
    # reads. Away from the right and bottom edges (every pixel that sees the agent in its 24
    # causal taps lies inside the frame), the paper's network gives the same probability to the
    # agent in any cell, however long it trains on one cell; the position bias learns the cell.
    # Under the tf1 reading (mean square from 1, the gradient of the per-pixel mean) the bias learns
    # it later: 0.015 nats after 60 updates, 1.66 after 300 (torch: 1.95 after 60).
    n, seen, unseen = 12, (4, 4), (7, 3)
    paper = PixelCNNDensity(n, n, 8, seed=0, rmsprop=rmsprop)
    biased = PixelCNNDensity(n, n, 8, seed=0, position="bias", rmsprop=rmsprop)
    for _ in range(updates):
        for m in (paper, biased):
            m.update(_one_hot_frame(n, seen))
    frames = np.stack([_one_hot_frame(n, seen), _one_hot_frame(n, unseen)])
    lp_paper, lp_bias = paper.log_prob(frames), biased.log_prob(frames)
    assert lp_paper[0] == pytest.approx(lp_paper[1], abs=1e-4)  # float32 sums in another order
    assert lp_bias[0] - lp_bias[1] > 1.0  # nats (measured above): the seen cell is e times more probable or more
    # per pixel: the paper's network puts the same probability on the agent pixel in both cells
    pix = paper.pixel_log_prob(frames)
    assert pix[0][seen] == pytest.approx(pix[1][unseen], abs=1e-5)


def test_bad_position_and_mismatched_states_rejected():
    with pytest.raises(ValueError, match="position"):
        PixelCNNDensity(3, 3, 2, position="learned")
    with pytest.raises(ValueError, match="position"):
        PixelCNNDensity(3, 3, 2).load_state_dict(PixelCNNDensity(3, 3, 2, position="bias").state_dict())
    with pytest.raises(ValueError, match="position"):
        PixelCNNDensity(3, 3, 2, position="bias").load_state_dict(PixelCNNDensity(3, 3, 2).state_dict())


def test_registry_entry_and_the_agent_variants_it_brings():
    from pcnn_explore.run.variants import VARIANTS, variant_label
    from pcnn_explore.run import BONUSES, TrainConfig

    m = make_density("pixelcnn_pos", 4, 5, 8, seed=2, lr=0.01)
    assert isinstance(m, PixelCNNDensity) and m.position == "bias" and m.lr == 0.01
    assert make_density("pixelcnn", 4, 5, 8).position == "none"
    with pytest.raises(ValueError, match="position"):
        make_density("pixelcnn_pos", 4, 5, 8, position="none")
    assert REGISTRY["pixelcnn_pos"].agent_bonus and "pixelcnn_pos" in BONUSES
    assert VARIANTS["pixelcnn_pos_mmc"] == {"bonus": "pixelcnn_pos", "mmc_beta": 0.1}
    assert variant_label("pixelcnn_pos_mmc") == "DQN-PixelCNN (position bias)"
    assert TrainConfig.preset("smoke", bonus="pixelcnn_pos").bonus == "pixelcnn_pos"
