import numpy as np
import pytest

from pcnn_explore.frames import area_weights, to_density_frame


def test_area_weights_hand_computed():
    # 3 -> 2: output 0 covers [0, 1.5), output 1 covers [1.5, 3); each input pixel has width 1.
    np.testing.assert_allclose(area_weights(3, 2), [[2 / 3, 1 / 3, 0], [0, 1 / 3, 2 / 3]])
    # 210 -> 42 is an exact 5-pixel box
    w = area_weights(210, 42)
    np.testing.assert_allclose(w[0, :5], 0.2)
    assert w[0, 5:].sum() == 0
    np.testing.assert_allclose(area_weights(160, 42).sum(axis=1), 1.0)


def test_hand_computed_levels():
    # A 2x2 image -> 1x1: mean luma of the four pixels, then // 32.
    img = np.zeros((2, 2, 3), np.uint8)
    img[0, 0] = (255, 255, 255)  # luma 255
    img[0, 1] = (100, 100, 100)  # luma 100
    # mean = (255 + 100 + 0 + 0) / 4 = 88.75 -> level 2
    assert to_density_frame(img, 1, 1).tolist() == [[2]]
    red = np.zeros((1, 1, 3), np.uint8)
    red[..., 0] = 200  # luma 0.299 * 200 = 59.8 -> level 1
    assert to_density_frame(red, 1, 1).tolist() == [[1]]


def test_extremes_never_reach_eight():
    white = np.full((210, 160, 3), 255, np.uint8)
    out = to_density_frame(white)
    assert out.shape == (42, 42) and out.dtype == np.uint8
    assert (out == 7).all()
    assert (to_density_frame(np.zeros((210, 160, 3), np.uint8)) == 0).all()
    rng = np.random.default_rng(0)
    noisy = rng.integers(0, 256, (210, 160, 3), dtype=np.uint8)
    assert to_density_frame(noisy).max() <= 7


def test_real_atari_frame():
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)
    env = gym.make("ALE/MontezumaRevenge-v5")
    obs, _ = env.reset(seed=0)
    frame = to_density_frame(obs)
    env.close()
    assert frame.shape == (42, 42) and frame.dtype == np.uint8
    assert 0 <= frame.min() and frame.max() <= 7
    assert len(np.unique(frame)) > 1  # a real screen is not flat


def test_any_image_size():
    img = np.random.default_rng(1).integers(0, 256, (7, 13, 3), dtype=np.uint8)
    assert to_density_frame(img).shape == (42, 42)


@pytest.mark.parametrize(
    "bad, error, words",
    [
        (np.zeros((210, 160), np.uint8), ValueError, "shape"),
        (np.zeros((210, 160, 4), np.uint8), ValueError, "(H, W, 3)"),
        (np.zeros((210, 160, 3), np.float32), TypeError, "uint8"),
        ([[0, 1], [2, 3]], TypeError, "numpy array"),
    ],
)
def test_bad_input_rejected(bad, error, words):
    with pytest.raises(error, match=None) as info:
        to_density_frame(bad)
    assert words in str(info.value)


def test_bad_levels_rejected():
    with pytest.raises(ValueError, match="levels"):
        to_density_frame(np.zeros((4, 4, 3), np.uint8), levels=6)


def test_compiled_resize_equals_the_matrix_formula():
    from pcnn_explore.frames import area_resize, greyscale, quantise

    rng = np.random.default_rng(3)
    for shape in [(210, 160, 3), (7, 13, 3), (64, 64, 3), (1, 1, 3), (43, 41, 3)]:
        for _ in range(5):
            x = rng.integers(0, 256, shape, dtype=np.uint8)
            np.testing.assert_array_equal(to_density_frame(x), quantise(area_resize(greyscale(x), 42, 42)))
