"""CTS and convolutional CTS against probabilities worked out by hand.

Set-up: 1x2 images, 2 levels, so the Perks prior is a = 1/2 and a node's estimator gives
p(s) = (n_s + 1/2) / (n + 1). Pixel (0,0) has context (left, up, up-left, up-right) = (0,0,0,0)
(all outside the image); pixel (0,1) has context (x00, 0, 0, 0).

A node never created predicts 1/2 (uniform estimator, uniform mixture).
"""
import math

import numpy as np
import pytest

from pcnn_explore.density import ConvCTSDensity, CTSDensity

X1 = np.array([[1, 1]], np.uint8)
X2 = np.array([[0, 1]], np.uint8)


def test_location_dependent_cts_by_hand():
    model = CTSDensity(1, 2, 2)
    # Untrained: every pixel 1/2.
    assert model.log_prob(X1[None])[0] == pytest.approx(2 * math.log(1 / 2), abs=1e-15)

    # Update on x1 = [1, 1], t = 1, alpha = 1/2. In each tree the whole path is new: every
    # estimator and mixture is 1/2 before; the switch leaves stay = 1/2 (both terms 1/4); after,
    # every node has n_1 = 1, n = 1, so p(1) = 3/4 all the way up.
    log_rho, log_rho_prime = model.update(X1)
    assert log_rho == pytest.approx(2 * math.log(1 / 2), abs=1e-14)
    assert log_rho_prime == pytest.approx(2 * math.log(3 / 4), abs=1e-14)

    # Update on x2 = [0, 1], t = 2, alpha = 1/3.
    # Pixel (0,0), symbol 0, same all-zero path: each node n_0 = 0, n = 1 -> 1/4 before;
    # estimator = child = 1/4 keeps stay = 1/2; after, n_0 = 1, n = 2 -> 3/4 ... p(0) = 1/2.
    # Pixel (0,1), symbol 1, context left = 0: the root exists (n_1 = 1, n = 1, est 3/4) but its
    # child for "left = 0" does not, so the path below is new (predicts 1/2):
    #   before: P = 1/2 * 3/4 + 1/2 * 1/2 = 5/8
    #   root switch (old weights 1/2, 1/2; P_est = 3/4, P_child = 1/2, alpha = 1/3):
    #     stay  = 2/3 * 1/2 * 3/4 + 1/3 * 1/2 * 1/2 = 1/3
    #     split = 2/3 * 1/2 * 1/2 + 1/3 * 1/2 * 3/4 = 7/24   -> stay weight 8/15
    #   after: root est (2 + 1/2) / 3 = 5/6; child path est 3/4 (mixtures of 3/4 are 3/4)
    #     P' = 8/15 * 5/6 + 7/15 * 3/4 = 143/180
    log_rho, log_rho_prime = model.update(X2)
    assert log_rho == pytest.approx(math.log(1 / 4) + math.log(5 / 8), abs=1e-14)
    assert log_rho_prime == pytest.approx(math.log(1 / 2) + math.log(143 / 180), abs=1e-14)
    # (Updating the split weight from the *new* stay weight would give 4/7 and 67/84 instead.)
    ls, lk = model.log_weights()
    root_of_second_pixel = 1
    assert math.exp(ls[root_of_second_pixel]) == pytest.approx(8 / 15, abs=1e-15)
    assert math.exp(lk[root_of_second_pixel]) == pytest.approx(7 / 15, abs=1e-15)

    # Queries do not train: query [1, 0] now. Pixel (0,0), symbol 1: n_1 = 1, n = 2 -> 1/2 on
    # the whole path. Pixel (0,1), symbol 0, context left = 1: the path made by x1 with
    # n_0 = 0, n = 1 (est 1/4, stay 1/2 below the root); root: n_0 = 0, n = 2 -> est 1/6,
    # stay 8/15 -> P = 8/15 * 1/6 + 7/15 * 1/4 = 8/90 + 7/60 = 37/180.
    query = np.array([[[1, 0]]], np.uint8)
    before = model.state_dict()
    assert model.log_prob(query)[0] == pytest.approx(math.log(1 / 2) + math.log(37 / 180), abs=1e-14)
    after = model.state_dict()  # the query changed no count, weight or node
    assert after.keys() == before.keys()
    for key in before:
        np.testing.assert_array_equal(after[key], before[key], err_msg=key)


def test_convolutional_cts_by_hand():
    model = ConvCTSDensity(1, 2, 2)
    # log rho is the query before any pixel of the frame is trained on: 1/2 * 1/2.
    # Then pixel (0,0) (t = 1, alpha = 1/2) builds the all-zero path with n_1 = 1 everywhere;
    # pixel (0,1) (t = 2, alpha = 1/3) meets the root (est 3/4) with a new "left = 1" child
    # (1/2): the same switch as in the test above gives stay weight 8/15 at the root, and the
    # root's counts become n_1 = 2, n = 2.
    # After: both pixels see the root (est 5/6, stay 8/15) over a path of nodes with n_1 = 1
    # (3/4): P' = 143/180 for each pixel.
    log_rho, log_rho_prime = model.update(X1)
    assert log_rho == pytest.approx(2 * math.log(1 / 2), abs=1e-14)
    assert log_rho_prime == pytest.approx(2 * math.log(143 / 180), abs=1e-14)
    assert model.n_updates == 1


def test_alpha_counts_symbols_per_tree():
    # In the location-dependent model each tree sees one symbol per frame; in the shared tree
    # every pixel is a symbol. After one 1x2 frame: per-pixel trees at t = 1, the shared tree at 2.
    a, b = CTSDensity(1, 2, 2), ConvCTSDensity(1, 2, 2)
    a.update(X1)
    b.update(X1)
    assert a.state_dict()["tree_updates"].tolist() == [1, 1]
    assert b.state_dict()["tree_updates"].tolist() == [2]


def test_context_neighbours_and_border():
    # A 2x3 image: pixel (1,1) has context left x10, up x01, up-left x00, up-right x02.
    # Train on one frame; a query that changes only x12 (which is not in (1,1)'s context and
    # comes after it) must leave pixel (1,1)'s probability unchanged, while changing x02
    # (its up-right neighbour) must change it.
    model = CTSDensity(2, 3, 4)
    frame = np.array([[1, 2, 3], [0, 1, 2]], np.uint8)
    for _ in range(3):
        model.update(frame)
    base = model.pixel_log_prob(frame[None])[0]
    later = frame.copy()
    later[1, 2] = 3
    assert model.pixel_log_prob(later[None])[0][1, 1] == base[1, 1]
    upright = frame.copy()
    upright[0, 2] = 0
    assert model.pixel_log_prob(upright[None])[0][1, 1] != base[1, 1]


def test_pool_grows_without_changing_results():
    small = CTSDensity(6, 6, 8, initial_capacity=1)
    large = CTSDensity(6, 6, 8, initial_capacity=1 << 14)
    rng = np.random.default_rng(0)
    for f in rng.integers(0, 8, (30, 6, 6)).astype(np.uint8):
        assert small.update(f) == large.update(f)
    assert small.n_nodes == large.n_nodes > 36


def test_numba_kernels_agree_with_the_plain_reference():
    from pcnn_explore.density.cts_reference import ReferenceCTS

    rng = np.random.default_rng(11)
    fast, slow = CTSDensity(5, 6, 4), ReferenceCTS(5, 6, 4)
    base = rng.integers(0, 4, (5, 6))
    for _ in range(40):  # correlated frames, so contexts repeat and weights move
        frame = np.where(rng.random((5, 6)) < 0.2, rng.integers(0, 4, (5, 6)), base).astype(np.uint8)
        a, b = fast.update(frame), slow.update(frame)
        assert a == pytest.approx(b, rel=1e-11, abs=1e-11)
    probe = rng.integers(0, 4, (5, 6)).astype(np.uint8)
    assert fast.log_prob(probe[None])[0] == pytest.approx(slow.log_prob(probe.tolist()), rel=1e-11)
