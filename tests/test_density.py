"""Protocol-level proofs for every density model: normalisation, update/log_prob agreement,
state round trips, sampling, and rejection of bad inputs."""
import numpy as np
import pytest
import torch

from pcnn_explore.checkpoint import load, save_atomic
from pcnn_explore.density import MODELS, REGISTRY, all_images, make_density


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("shape", [(2, 2, 4), (3, 3, 2)])
def test_normalised_over_all_images_before_and_after_updates(name, shape):
    h, w, levels = shape
    model = make_density(name, h, w, levels)
    images = all_images(h, w, levels)
    assert len(images) == levels ** (h * w) and len({im.tobytes() for im in images}) == len(images)
    rng = np.random.default_rng(0)
    totals = [np.exp(model.log_prob(images)).sum()]
    for _ in range(6):
        model.update(images[rng.integers(len(images))])
        totals.append(np.exp(model.log_prob(images)).sum())
    np.testing.assert_allclose(totals, 1.0, atol=REGISTRY[name].normalisation_tol, rtol=0)


@pytest.mark.parametrize("name", list(MODELS))
def test_update_returns_log_prob_before_and_after(name):
    model = make_density(name, 5, 6, 4)
    rng = np.random.default_rng(1)
    frames = rng.integers(0, 4, (8, 5, 6)).astype(np.uint8)
    frames[3] = frames[1]  # a repeat
    for frame in frames:
        before = model.log_prob(frame[None])[0]
        log_rho, log_rho_prime = model.update(frame)
        after = model.log_prob(frame[None])[0]
        assert log_rho == before and log_rho_prime == after  # exactly, not approximately
    assert model.n_updates == len(frames)


@pytest.mark.parametrize("name", ["pixelcnn", "cts", "convcts"])
def test_pixel_log_prob_sums_to_log_prob(name):
    model = make_density(name, 4, 5, 8)
    rng = np.random.default_rng(2)
    for f in rng.integers(0, 8, (3, 4, 5)).astype(np.uint8):
        model.update(f)
    frames = rng.integers(0, 8, (2, 4, 5)).astype(np.uint8)
    per_pixel = model.pixel_log_prob(frames)
    assert per_pixel.shape == (2, 4, 5) and per_pixel.dtype == np.float64 and (per_pixel <= 0).all()
    np.testing.assert_allclose(per_pixel.sum(axis=(1, 2)), model.log_prob(frames), rtol=1e-12)


@pytest.mark.parametrize("name", list(MODELS))
def test_state_round_trip_through_a_checkpoint_file(name, tmp_path):
    rng = np.random.default_rng(3)
    frames = rng.integers(0, 4, (12, 4, 4)).astype(np.uint8)
    a = make_density(name, 4, 4, 4)
    for f in frames[:6]:
        a.update(f)
    path = save_atomic(a.state_dict(), tmp_path / "model.pt")
    b = make_density(name, 4, 4, 4, **({"seed": 99} if name == "pixelcnn" else {}))
    b.load_state_dict(load(path))
    probe = rng.integers(0, 4, (10, 4, 4)).astype(np.uint8)
    np.testing.assert_array_equal(a.log_prob(probe), b.log_prob(probe))
    # and training goes on identically (optimiser state and counters came along)
    for f in frames[6:]:
        assert a.update(f) == b.update(f)
    assert a.n_updates == b.n_updates == 12


def test_load_state_rejects_wrong_model_and_shape():
    cts = make_density("cts", 3, 3, 2)
    with pytest.raises(ValueError, match="ConvCTSDensity"):
        make_density("convcts", 3, 3, 2).load_state_dict(cts.state_dict())
    with pytest.raises(ValueError, match="shape"):
        make_density("cts", 4, 3, 2).load_state_dict(cts.state_dict())


@pytest.mark.parametrize("name", list(MODELS))
def test_sample_is_valid_and_reproducible(name):
    model = make_density(name, 3, 4, 4)
    rng = np.random.default_rng(4)
    for f in rng.integers(0, 4, (5, 3, 4)).astype(np.uint8):
        model.update(f)
    s1 = model.sample(6, np.random.default_rng(7))
    s2 = model.sample(6, np.random.default_rng(7))
    assert s1.shape == (6, 3, 4) and s1.dtype == np.uint8 and s1.max() < 4
    np.testing.assert_array_equal(s1, s2)


def test_samples_follow_the_model_distribution():
    # CTS trained on one frame many times should sample that frame most of the time.
    model = make_density("cts", 2, 2, 4)
    frame = np.array([[1, 2], [3, 0]], np.uint8)
    for _ in range(200):
        model.update(frame)
    samples = model.sample(400, np.random.default_rng(0))
    expected = np.exp(model.log_prob(frame[None])[0])
    observed = np.mean([(s == frame).all() for s in samples])
    assert abs(observed - expected) < 0.06


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize(
    "bad, error, words",
    [
        (np.zeros((4, 5), np.uint8), ValueError, "shape"),
        (np.zeros((4, 4, 3), np.uint8), ValueError, "shape"),
        (np.zeros((4, 4), np.float32), TypeError, "dtype"),
        (np.full((4, 4), 4, np.uint8), ValueError, "0..3"),
        (np.full((4, 4), -1, np.int64), ValueError, "0..3"),
        (np.full((4, 4), np.nan), ValueError, "NaN"),
        ([[0] * 4] * 4, TypeError, "numpy array"),
    ],
)
def test_bad_frames_rejected(name, bad, error, words):
    model = make_density(name, 4, 4, 4)
    with pytest.raises(error) as info:
        model.update(bad)
    assert words in str(info.value)
    assert model.n_updates == 0  # nothing was trained


@pytest.mark.parametrize("kwargs, error", [({"height": 0}, ValueError), ({"levels": 1}, ValueError), ({"width": 2.5}, TypeError)])
def test_bad_constructor_arguments(kwargs, error):
    for name in MODELS:
        with pytest.raises(error):
            make_density(name, **{"height": 3, "width": 3, "levels": 4, **kwargs})


def test_unknown_model_name():
    with pytest.raises(ValueError, match="pixelcnn"):
        make_density("pixel-cnn")


def test_empirical_pseudo_count_equals_true_count():
    from pcnn_explore.bonus import pseudo_count

    model = make_density("empirical", 2, 2, 2)
    a, b, c = (np.array(v, np.uint8).reshape(2, 2) for v in ([0, 0, 0, 0], [1, 0, 0, 1], [1, 1, 1, 1]))
    true = {}
    for frame in [a, b, a, a, b, c, a, c, b, a]:
        key = frame.tobytes()
        log_rho, log_rho_prime = model.update(frame)
        if model.n_updates > 1:  # with one frame seen, rho = rho' = 1 and the count is 0/0
            assert pseudo_count(log_rho, log_rho_prime) == pytest.approx(true.get(key, 0), abs=1e-9)
        true[key] = true.get(key, 0) + 1
        assert model.count(frame) == true[key]


def test_cts_pseudo_count_grows_with_repeats():
    from pcnn_explore.bonus import pseudo_count

    model = make_density("cts", 6, 6, 4)
    rng = np.random.default_rng(5)
    for f in rng.integers(0, 4, (20, 6, 6)).astype(np.uint8):  # other frames first
        model.update(f)
    frame = rng.integers(0, 4, (6, 6)).astype(np.uint8)
    counts = [pseudo_count(*model.update(frame)) for _ in range(15)]
    assert all(np.diff(counts) > 0), counts
    assert counts[0] < 1 < counts[-1]
