import numpy as np
import pytest

from pcnn_explore.envs.frames import area_weights, to_density_frame


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
        (np.zeros((210, 160, 5), np.uint8), ValueError, "(H, W, 3)"),
        (np.zeros((210, 160, 1), np.uint8), ValueError, "(H, W, 3)"),
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


def _exact_reference(x, height=42, width=42, levels=8):
    """The spec in exact integer arithmetic, as one matrix formula: luma x 1000 (weights 299, 587,
    114), area weights as integer overlaps over n_in (rows of ``area_overlaps`` sum to n_in), one
    floor division at the end."""
    from pcnn_explore.envs.frames import area_overlaps

    luma = x[..., 0].astype(np.int64) * 299 + x[..., 1].astype(np.int64) * 587 + x[..., 2].astype(np.int64) * 114
    rows, cols = area_overlaps(x.shape[0], height), area_overlaps(x.shape[1], width)
    total = rows @ luma @ cols.T
    return (total // (1000 * (256 // levels) * x.shape[0] * x.shape[1])).astype(np.uint8)


def test_compiled_resize_equals_the_matrix_formula():
    from pcnn_explore.envs.frames import area_resize, greyscale, quantise

    rng = np.random.default_rng(3)
    for shape in [(210, 160, 3), (7, 13, 3), (64, 64, 3), (1, 1, 3), (43, 41, 3)]:
        for _ in range(5):
            x = rng.integers(0, 256, shape, dtype=np.uint8)
            exact = to_density_frame(x)
            np.testing.assert_array_equal(exact, _exact_reference(x))
            # The float formula agrees wherever its grey value is not within round-off of a bin
            # edge (a multiple of 32); there the exact version decides.
            grey = area_resize(greyscale(x), 42, 42)
            away = np.abs(grey / 32 - np.round(grey / 32)) > 1e-9
            np.testing.assert_array_equal(exact[away], quantise(grey)[away])


@pytest.mark.parametrize("shape, out", [
    ((210, 160), (42, 42)),  # Atari
    ((211, 161), (42, 42)),  # odd, neither side a multiple of 42
    ((7, 5), (3, 2)),  # odd down-sampling
    ((42, 42), (42, 42)),  # identity
    ((5, 7), (42, 42)),  # up-sampling
])
def test_every_uniform_grey_lands_in_its_bin(shape, out):
    # A uniform grey v has luma v and area mean v: level v // 32, exactly, for every v, at bin edges too.
    for v in range(256):
        frame = to_density_frame(np.full((*shape, 3), v, np.uint8), *out)
        assert frame.shape == out
        assert (frame == v // 32).all(), (v, np.unique(frame))


@pytest.mark.parametrize("levels", [2, 4, 16, 256])
def test_every_uniform_grey_with_other_levels(levels):
    for v in range(256):
        frame = to_density_frame(np.full((210, 160, 3), v, np.uint8), levels=levels)
        assert (frame == v // (256 // levels)).all(), (levels, v, np.unique(frame))


def test_uniform_colours_use_integer_luma():
    # Colours whose luma 0.299 R + 0.587 G + 0.114 B is a multiple of 32 (exactly, in integers):
    # a float luma may land a hair below the edge.
    edge_colours = [(r, g, b) for r in range(0, 256, 5) for g in range(256) for b in range(0, 256, 3)
                    if (299 * r + 587 * g + 114 * b) % 32000 == 0]
    assert len(edge_colours) > 20
    for shape in [(210, 160), (211, 161)]:
        for colour in edge_colours + [(200, 0, 0), (0, 0, 255), (1, 2, 3)]:
            frame = to_density_frame(np.broadcast_to(np.array(colour, np.uint8), (*shape, 3)).copy())
            expected = (299 * colour[0] + 587 * colour[1] + 114 * colour[2]) // 32000
            assert (frame == expected).all(), (shape, colour)


def test_area_overlaps_are_exact_integers():
    from pcnn_explore.envs.frames import area_overlaps

    # 3 -> 2 in units of 1/2 input pixel: output 0 covers [0, 3), input pixels cover [0, 2), [2, 4), [4, 6)
    np.testing.assert_array_equal(area_overlaps(3, 2), [[2, 1, 0], [0, 1, 2]])
    for n_in, n_out in [(210, 42), (160, 42), (211, 42), (7, 3), (5, 42), (1, 1)]:
        o = area_overlaps(n_in, n_out)
        assert o.dtype == np.int64 and (o.sum(axis=1) == n_in).all() and (o.sum(axis=0) == n_out).all()
        np.testing.assert_allclose(o / n_in, area_weights(n_in, n_out), atol=1e-15)


def test_rgba_drops_alpha():
    rng = np.random.default_rng(4)
    rgb = rng.integers(0, 256, (210, 160, 3), dtype=np.uint8)
    for alpha in (0, 255):
        rgba = np.concatenate([rgb, np.full((210, 160, 1), alpha, np.uint8)], axis=2)
        np.testing.assert_array_equal(to_density_frame(rgba), to_density_frame(rgb))


def test_non_contiguous_views_convert_like_copies():
    x = np.random.default_rng(5).integers(0, 256, (210, 160, 3), dtype=np.uint8)
    view = x[::-1, ::2]
    np.testing.assert_array_equal(to_density_frame(view), to_density_frame(view.copy()))


@pytest.mark.parametrize("image, advice, wrong", [
    (np.full((8, 8, 3), 200, np.int64), "img.astype(np.uint8)", "* 255"),  # 0..255 in a wider int
    (np.full((8, 8, 3), 200, np.uint16), "img.astype(np.uint8)", "* 255"),
    (np.full((8, 8, 3), 60000, np.uint16), "// 257", "* 255"),  # a 16-bit image
    (np.full((8, 8, 3), -3, np.int64), "outside 0..255", "* 255"),
    (np.full((8, 8, 3), 0.5, np.float32), "(img * 255).round().astype(np.uint8)", "// 257"),  # in [0, 1]
    (np.full((8, 8, 3), 200.0), "img.round().astype(np.uint8)", "* 255"),  # a float image in 0..255
    (np.ones((8, 8, 3), bool), "img.astype(np.uint8) * 255", "// 257"),
])
def test_wrong_dtype_gets_advice_that_fits_the_values(image, advice, wrong):
    with pytest.raises(TypeError, match="uint8") as info:
        to_density_frame(image)
    message = str(info.value)
    assert advice in message and wrong not in message, message
