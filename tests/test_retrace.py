"""Retrace(lambda) targets and trace coefficients on hand-computed cases."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pcnn_explore.agents.retrace import retrace_targets, trace_coefficients


def test_c_zero_is_the_one_step_expected_target():
    # Q^ret_t = r_t + gamma_t V(x_{t+1}) = [1 + 0.9 * 10, 2 + 0.9 * 20, 3 + 0.9 * 30]
    out = retrace_targets([1.0, 2.0, 3.0], [0.9, 0.9, 0.9], [5.0, 6.0, 7.0], [10.0, 20.0, 30.0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(out, [10.0, 20.0, 30.0], rtol=0, atol=1e-12)
    assert out.dtype == np.float64


def test_terminal_inside_the_sequence_stops_the_trace():
    # gamma_1 = 0 (terminal at step 1), c = 1:
    # Q^ret_2 = 3 + 0.5 * (1 * (6 - 6) + 9) = 7.5; Q^ret_1 = 2 + 0 = 2
    # Q^ret_0 = 1 + 0.5 * (1 * (2 - 4) + 7) = 3.5
    out = retrace_targets([1.0, 2.0, 3.0], [0.5, 0.0, 0.5], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 1.0, 1.0])
    np.testing.assert_allclose(out, [3.5, 2.0, 7.5], rtol=0, atol=1e-12)


def test_time_limit_cut_bootstraps_from_v_of_the_last_observation():
    # The sequence ends at a time limit: gamma stays 0.9, the last target is r + gamma V(x_T),
    # whatever c_T is: Q^ret_1 = 1 + 0.9 * 5 = 5.5; Q^ret_0 = 0 + 0.9 * (0.5 * (5.5 - 3) + 2) = 2.925
    out = retrace_targets([0.0, 1.0], [0.9, 0.9], [3.0, 4.0], [2.0, 5.0], [0.5, 0.7])
    np.testing.assert_allclose(out, [2.925, 5.5], rtol=0, atol=1e-12)


def test_c_one_with_q_equal_v_is_the_n_step_return():
    # r = [1, 0, 2], gamma 0.5, V(x_3) = 8: n-step returns bootstrapped with V(x_3):
    # G_2 = 2 + 0.5 * 8 = 6; G_1 = 0 + 0.5 * 2 + 0.25 * 8 = 3; G_0 = 1 + 0 + 0.25 * 2 + 0.125 * 8 = 2.5
    v = [4.0, 6.0, 8.0]
    out = retrace_targets([1.0, 0.0, 2.0], [0.5] * 3, v, v, [1.0] * 3)
    np.testing.assert_allclose(out, [2.5, 3.0, 6.0], rtol=0, atol=1e-12)


def test_c_one_adds_the_discounted_v_minus_q_terms():
    # As above, but Q(x_1, a_1) = 3 (V 4) and Q(x_2, a_2) = 5 (V 6):
    # Q^ret_0 = 2.5 + 0.5 * (4 - 3) + 0.25 * (6 - 5) = 3.25; Q^ret_1 = 3 + 0.5 * (6 - 5) = 3.5; Q^ret_2 = 6
    out = retrace_targets([1.0, 0.0, 2.0], [0.5] * 3, [3.0, 5.0, 8.0], [4.0, 6.0, 8.0], [1.0] * 3)
    np.testing.assert_allclose(out, [3.25, 3.5, 6.0], rtol=0, atol=1e-12)


def test_batched_numpy_and_torch_float64_agree_with_rows():
    rows = [([1.0, 2.0, 3.0], [0.5, 0.0, 0.5], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 1.0, 1.0]),
            ([1.0, 0.0, 2.0], [0.5] * 3, [3.0, 5.0, 8.0], [4.0, 6.0, 8.0], [1.0] * 3)]
    expected = np.array([[3.5, 2.0, 7.5], [3.25, 3.5, 6.0]])
    batch = [np.array([r[k] for r in rows]) for k in range(5)]
    np.testing.assert_allclose(retrace_targets(*batch), expected, rtol=0, atol=1e-12)
    t = retrace_targets(*(torch.tensor(b, dtype=torch.float64) for b in batch))
    assert t.dtype == torch.float64 and t.shape == (2, 3)
    np.testing.assert_allclose(t.numpy(), expected, rtol=0, atol=1e-12)
    # float32 numpy inputs are computed in float64
    assert retrace_targets(*(b.astype(np.float32) for b in batch)).dtype == np.float64


def test_padded_sequence_with_c_zero_at_its_end_ignores_the_padding():
    # A 2-step sequence padded to 4: c_next is 0 where x_{t+1} is the last real observation,
    # so the padding (any values) does not reach the real steps (expected: the (T,) case above).
    out = retrace_targets([0.0, 1.0, 99.0, 99.0], [0.9, 0.9, 0.9, 0.9], [3.0, 4.0, 99.0, 99.0],
                          [2.0, 5.0, 99.0, 99.0], [0.5, 0.0, 1.0, 1.0])
    np.testing.assert_allclose(out[:2], [2.925, 5.5], rtol=0, atol=1e-12)


def test_rejects_mixed_and_mismatched_inputs():
    with pytest.raises(ValueError, match="shape"):
        retrace_targets([1.0], [1.0, 2.0], [1.0], [1.0], [1.0])
    with pytest.raises(TypeError, match="numpy arrays or all torch"):
        retrace_targets(torch.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2))


def test_trace_coefficients_hand_values():
    np.testing.assert_allclose(trace_coefficients(np.array([0.2, 0.6]), np.array([0.4, 0.3]), 1.0), [0.5, 1.0])
    np.testing.assert_allclose(trace_coefficients(np.array([0.2, 0.6]), np.array([0.4, 0.3]), 0.9), [0.45, 0.9])
    t = trace_coefficients(torch.tensor([0.2, 0.6], dtype=torch.float64), torch.tensor([0.4, 0.3], dtype=torch.float64))
    np.testing.assert_allclose(t.numpy(), [0.5, 1.0], rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="lambda"):
        trace_coefficients(0.5, 0.5, 1.5)
