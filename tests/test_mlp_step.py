"""The MLP's learn step in numpy is torch's autograd step to float32 rounding: one step of each, from the
same numbers, differs by no more than float32 rounding allows each value (a bound derived from the
arithmetic, :func:`step_error_bound`, not a tolerance measured on one CPU).

Over many random networks and batches (one-hot DeepSea grids, dense random frames, several sizes,
Q-learning, MMC and double Q-learning targets, errors in both parts of the Huber loss): the same loss,
gradients, Adam state and weights after a step, and after hundreds of steps the same greedy action in
every cell of the grid. A checkpoint written by either path loads into the other; subnormal moments
are flushed; the step refuses the networks and optimisers it is not written for, and ``learn_step``
resolves to it only where it applies.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pcnn_explore.agents.dqn import DQNAgent
from pcnn_explore.agents.mlp_step import NumpyMLPStep, _adam, first_layer
from pcnn_explore.agents.replay import Batch
from pcnn_explore.checks import SettingError
from pcnn_explore.run import TrainConfig

torch.set_num_threads(1)


def grid_batch(rng, n: int, size: int, n_actions: int = 2, dense: bool = False, reward_scale: float = 1.0) -> Batch:
    """A replay batch of (n, 1, size, size) frames: one-hot grids (DeepSea's) or dense random bytes."""
    def frames():
        if dense:
            return rng.integers(0, 256, size=(n, 1, size, size), dtype=np.uint8)
        f = np.zeros((n, 1, size, size), np.uint8)
        f[np.arange(n), 0, rng.integers(size, size=n), rng.integers(size, size=n)] = 255
        return f

    return Batch(obs=frames(), action=rng.integers(n_actions, size=n).astype(np.int64),
                 reward=(reward_scale * rng.normal(size=n)).astype(np.float32), next_obs=frames(),
                 done=(rng.random(n) < 0.2).astype(np.float32),
                 mc_return=(reward_scale * rng.normal(size=n)).astype(np.float32), index=np.arange(n))


def twin_agents(seed: int, size: int, n_actions: int = 2, hidden: int = 50, **kw) -> tuple[DQNAgent, DQNAgent]:
    """Two agents with the same initial weights: torch's learn step and the numpy one."""
    agents = []
    for learn_step in ("torch", "numpy"):
        torch.manual_seed(seed)
        agents.append(DQNAgent((1, size, size), n_actions, network="mlp", hidden=hidden, optimizer="adam", lr=1e-3,
                               learn_step=learn_step, **kw))
    for p in agents[0].target.parameters():  # a target network unlike the online one
        p.data.normal_(0, 0.3, generator=torch.Generator().manual_seed(seed + 1000))
    agents[1].target.load_state_dict(agents[0].target.state_dict())
    return agents[0], agents[1]


def close(a, b, what: str, rtol: float, atol: float) -> None:
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol, atol=atol,
                               err_msg=what)


def start_alike(fast: DQNAgent, ref: DQNAgent) -> None:
    """Give ``fast`` ``ref``'s weights and Adam state, in place (the numpy step's views stay valid), so
    that the next step of each starts from the same numbers and differs from the other only by its own
    rounding (earlier steps' rounding is the multi-step test's)."""
    with torch.no_grad():
        for p, q in zip(ref.q.parameters(), fast.q.parameters()):
            q.copy_(p)
            if p in ref.optimizer.state:
                for key in ("exp_avg", "exp_avg_sq", "step"):
                    fast.optimizer.state[q][key].copy_(ref.optimizer.state[p][key])


# ------------------------------------------------------------------ what float32 rounding allows
# Two float32 evaluations of one step (numba's loops and numpy's dot products against torch's kernels,
# which sum in another order, in blocks, with or without FMA, and with vectors of another width on
# another CPU) differ only by rounding. Each operation rounds to nearest, so its result is the exact
# one times (1 + delta), |delta| <= U = 2^-24; a sum or dot product of n nonzero terms, in any order
# and blocking, is within gamma(n) = n U / (1 - n U) times the sum of the terms' magnitudes of the
# exact one (Higham, Accuracy and Stability of Numerical Algorithms, 2002, eq. 3.5; a term that is
# exactly 0 in both paths, such as an unlit cell of a one-hot grid or a ReLU that is off in both,
# adds nothing and rounds nothing), and an error e in an input reaches the output through the
# derivative. step_error_bound runs the step once more in float64 on the weights, the Adam state and
# the batch both paths start from, carrying next to every value x the bound e(x) >= |computed x -
# exact x| that this gives for any one of the two paths (to first order in U: the magnitudes are taken
# at the computed values, which moves the bound by a relative O(n U) < 1e-4; where a value is within
# its bound of a kink, the kink's whole jump enters: a ReLU on in one path and off in the other, the
# other action where double Q-learning's argmax is within rounding of a tie, g^2, sqrt and Adam's
# quotient taken over intervals). Adam's moments below float32's smallest normal (2^-126) are flushed
# to 0 by the numpy step and not by torch: 2^-126 enters their bound. The two paths then differ by at
# most 2 e(x), each being within e(x) of the exact value: k = 2 (within()).
U = 2.0 ** -24
TINY = 2.0 ** -126  # float32's smallest normal number
K_PATHS = 2  # two float32 paths, each within the bound of the exact step


def gamma(n):
    """Higham's gamma_n (elementwise for an array of counts): the relative bound of a float32 sum of n
    nonzero terms, against the sum of the terms' magnitudes."""
    return np.asarray(n) * U / (1 - np.asarray(n) * U)


def _dot(a, e_a, a_nonzero, b, e_b, b_nonzero, extra=None):
    """a @ b (+ extra, a vector added to each row: the bias) and its bound; *_nonzero: where a term
    may be nonzero in either path, to count each output's nonzero terms."""
    count = a_nonzero.astype(np.float64) @ b_nonzero.astype(np.float64)
    size = np.abs(a) @ np.abs(b)
    value = a @ b
    if extra is not None:
        value, size, count = value + extra, size + np.abs(extra), count + 1
    return value, gamma(count) * size + e_a @ np.abs(b) + np.abs(a) @ e_b


def _forward(x, weights):
    """(z1, e_z1, z2, e_z2, q, e_q) in float64 for inputs x (B, D) = frames / 255, whose bound is 2 U x
    (torch may multiply by float32(1 / 255) where numba divides by 255: two roundings)."""
    w1, b1, w2, b2, w3, b3 = (np.asarray(p, np.float64).T if p.ndim == 2 else np.asarray(p, np.float64)
                              for p in weights)
    zero = np.zeros_like
    z1, e_z1 = _dot(x, 2 * U * x, x != 0, w1, zero(w1), w1 != 0, b1)
    z2, e_z2 = _dot(np.maximum(z1, 0), e_z1, z1 > -e_z1, w2, zero(w2), w2 != 0, b2)  # ReLU: 1-Lipschitz
    q, e_q = _dot(np.maximum(z2, 0), e_z2, z2 > -e_z2, w3, zero(w3), w3 != 0, b3)
    return z1, e_z1, z2, e_z2, q, e_q


def _relu_backward(dz_pre, e_pre, z, e_z):
    """dz = dz_pre [z > 0] and its bound: where |z| <= e(z) the mask may differ, and the term enters whole."""
    on = z > 0
    unsure = np.abs(z) <= e_z
    return np.where(on, dz_pre, 0.0), np.where(on, e_pre, 0.0) + np.where(unsure, np.abs(dz_pre) + e_pre, 0.0)


def _sum_rows(a, e_a):
    """a.sum(0) and its bound."""
    return a.sum(0), gamma((a != 0).sum(0) + (e_a > 0).sum(0)) * np.abs(a).sum(0) + e_a.sum(0)


def step_error_bound(agent, batch) -> dict:
    """What float32 rounding allows each value of ``agent``'s next learn step on ``batch`` to be off by,
    for either path, before any path has run it: {"loss": float, "grads", "exp_avg", "exp_avg_sq",
    "weights": a list of 6 arrays each} (the parameters in the optimiser's order W1, b1, W2, b2, W3,
    b3). ``agent``: a torch or a numpy agent, whose weights and Adam state both paths start from."""
    n = len(batch.action)
    frames = (np.asarray(f, np.uint8).reshape(n, -1) for f in (batch.obs, batch.next_obs))
    x, x_next = ((f.astype(np.float32) / np.float32(255)).astype(np.float64) for f in frames)
    online = [p.detach().numpy() for p in agent.q.parameters()]
    target = [p.detach().numpy() for p in agent.target.parameters()]
    rows, a = np.arange(n), np.asarray(batch.action)
    # the target y = (1 - beta) (r + gamma (1 - done) max_a' Q_target(x', a')) + beta R_mc
    qt, e_qt = _forward(x_next, target)[4:]
    if agent.double_q:
        qo, e_qo = _forward(x_next, online)[4:]
        chosen = qo.argmax(axis=1)
        # every action whose online value is within rounding of the chosen one's may be chosen instead
        maybe = qo >= qo[rows, chosen][:, None] - (e_qo + e_qo[rows, chosen][:, None])
        nq = qt[rows, chosen]
        e_nq = np.max(np.where(maybe, np.abs(qt - nq[:, None]) + e_qt, 0.0), axis=1)
    else:
        nq, e_nq = qt.max(axis=1), e_qt.max(axis=1)  # max moves no value by more than its inputs moved
    r, done, mc = (np.asarray(v, np.float64) for v in (batch.reward, batch.done, batch.mc_return))
    gamma_, beta = float(np.float32(agent.gamma)), float(np.float32(agent.mmc_beta))
    bootstrap = gamma_ * (1 - done)
    y = (1 - beta) * (r + bootstrap * nq) + beta * mc
    # 6 roundings at most: the constants gamma, 1 - beta, beta, and each *, + of the formula
    e_y = (1 - beta) * bootstrap * e_nq + 6 * U * ((1 - beta) * (np.abs(r) + bootstrap * np.abs(nq)) + beta * np.abs(mc))
    z1, e_z1, z2, e_z2, q, e_q = _forward(x, online)
    h1, h2 = np.maximum(z1, 0), np.maximum(z2, 0)
    d = q[rows, a] - y
    e_d = e_q[rows, a] + e_y + U * np.abs(d)
    # Huber (delta 1): 0.5 d^2 or |d| - 0.5, slope min(|d|, 1); 3 roundings each, then a mean of n
    huber = np.where(np.abs(d) < 1, 0.5 * d * d, np.abs(d) - 0.5)
    e_huber = np.minimum(np.abs(d), 1) * e_d + 3 * U * huber
    loss = huber.mean()
    e_loss = (e_huber.sum() + gamma(n) * huber.sum()) / n + U * loss
    # backward: dL/dq[i, a_i] = clip(d_i, -1, 1) / n (clip is 1-Lipschitz; one rounding for the 1 / n)
    g = np.clip(d, -1, 1) / n
    e_g = e_d / n + U * np.abs(g)
    w1, b1, w2, b2, w3, b3 = (np.asarray(p, np.float64) for p in online)
    one_hot = np.zeros((n, w3.shape[0]))
    one_hot[rows, a] = 1
    dq, e_dq, dq_nonzero = one_hot * g[:, None], one_hot * e_g[:, None], one_hot > 0
    gw3, e_gw3 = _dot(dq.T, e_dq.T, dq_nonzero.T, h2, e_z2, z2 > -e_z2)
    gb3, e_gb3 = _sum_rows(dq, e_dq)
    pre2, e_pre2 = _dot(dq, e_dq, dq_nonzero, w3, np.zeros_like(w3), w3 != 0)
    dz2, e_dz2 = _relu_backward(pre2, e_pre2, z2, e_z2)
    dz2_nonzero = (e_dz2 > 0) | (dz2 != 0)
    gw2, e_gw2 = _dot(dz2.T, e_dz2.T, dz2_nonzero.T, h1, e_z1, z1 > -e_z1)
    gb2, e_gb2 = _sum_rows(dz2, e_dz2)
    pre1, e_pre1 = _dot(dz2, e_dz2, dz2_nonzero, w2, np.zeros_like(w2), w2 != 0)
    dz1, e_dz1 = _relu_backward(pre1, e_pre1, z1, e_z1)
    gw1, e_gw1 = _dot(dz1.T, e_dz1.T, ((e_dz1 > 0) | (dz1 != 0)).T, x, 2 * U * x, x != 0)
    gb1, e_gb1 = _sum_rows(dz1, e_dz1)
    grads, e_grads = [gw1, gb1, gw2, gb2, gw3, gb3], [e_gw1, e_gb1, e_gw2, e_gb2, e_gw3, e_gb3]
    # Adam (torch's rule, the module docstring of pcnn_explore.agents.mlp_step), per element
    group = agent.optimizer.param_groups[0]
    lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
    out = {"loss": e_loss, "grads": e_grads, "exp_avg": [], "exp_avg_sq": [], "weights": []}
    for p, gr, e_gr in zip(agent.q.parameters(), grads, e_grads):
        s = agent.optimizer.state.get(p, {})
        m0 = s["exp_avg"].numpy().astype(np.float64) if s else np.zeros(gr.shape)
        v0 = s["exp_avg_sq"].numpy().astype(np.float64) if s else np.zeros(gr.shape)
        t = float(s["step"]) + 1 if s else 1.0
        m = m0 + (1 - beta1) * (gr - m0)
        e_m = (1 - beta1) * e_gr + 4 * U * (np.abs(m0) + np.abs(gr)) + TINY
        v = beta2 * v0 + (1 - beta2) * gr * gr
        # g^2 moves by 2 |g| e + e^2 (the second-order term counts where g is rounding noise about 0)
        e_v = (1 - beta2) * (2 * np.abs(gr) + e_gr) * e_gr + 6 * U * (v0 + (1 - beta2) * gr * gr) + TINY
        # sqrt and the quotient as intervals: their inputs' bounds may exceed the values themselves
        c2 = np.sqrt(1 - beta2 ** t)
        root = np.sqrt(v)
        e_root = np.maximum(np.sqrt(v + e_v) - root, root - np.sqrt(np.maximum(v - e_v, 0))) + U * root
        den = root / c2 + eps
        # roundings of den = sqrt(v) / c2 + eps: the sqrt, the quotient, the sum, and one more where numba's
        # fastmath takes the quotient as a product by a reciprocal
        e_den = e_root / c2 + 4 * U * den
        size = lr / (1 - beta1 ** t)
        update = size * m / den
        den_low = np.maximum(den - e_den, eps * (1 - 2 * U))  # sqrt(v) >= 0 in either path
        corners = [size * mm / dd for mm in (m - e_m, m + e_m) for dd in (den_low, den + e_den)]
        # 5 roundings: the step size, the constant sqrt(1 - beta2^t), the product, the quotient (two with a
        # reciprocal)
        e_update = np.max([np.abs(c - update) for c in corners], axis=0) + 5 * U * np.max(np.abs(corners), axis=0)
        w = p.detach().numpy().astype(np.float64)
        out["exp_avg"].append(e_m)
        out["exp_avg_sq"].append(e_v)
        out["weights"].append(e_update + U * np.abs(w - update))
    return out


def within(got, want, bound, what: str) -> float:
    """Assert |got - want| <= K_PATHS * bound elementwise; return the largest |got - want| / (K_PATHS * bound)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    allowed = K_PATHS * np.asarray(bound, np.float64)
    off = np.abs(got - want)
    ratio = np.where(off > 0, off / np.where(allowed > 0, allowed, 1e-300), 0.0)
    bad = off > allowed
    if bad.any():
        i = np.unravel_index(np.argmax(ratio), ratio.shape)
        raise AssertionError(f"{what}: {bad.sum()} of {bad.size} values differ by more than float32 rounding allows; "
                             f"worst: {got[i]!r} against {want[i]!r}, {off[i]:.3g} > {allowed[i]:.3g}")
    return float(ratio.max(initial=0.0))


CASES = [  # (size, n_actions, hidden, dense, target settings, reward scale)
    (5, 2, 50, False, {}, 1.0),
    (10, 2, 50, False, {"mmc_beta": 0.1}, 1.0),
    (20, 2, 50, False, {"mmc_beta": 0.5, "gamma": 0.9}, 5.0),  # most errors in Huber's linear part
    (20, 3, 64, False, {"double_q": True, "mmc_beta": 0.1}, 1.0),
    (8, 4, 32, True, {"mmc_beta": 0.1}, 1.0),  # dense frames: every input nonzero
    (8, 2, 50, True, {"double_q": True}, 3.0),
]


@pytest.mark.cpu_kernels
@pytest.mark.parametrize("case", CASES, ids=[f"N{c[0]}-A{c[1]}-H{c[2]}{'-dense' if c[3] else ''}" for c in CASES])
def test_one_step_gives_torchs_loss_gradients_adam_state_and_weights(case):
    size, n_actions, hidden, dense, settings, scale = case
    rng = np.random.default_rng(size * 100 + n_actions)
    for seed in range(8):  # random networks, each on a fresh batch
        ref, fast = twin_agents(seed, size, n_actions, hidden, **settings)
        for _ in range(seed % 3):  # some nets with Adam state already built
            batch = grid_batch(rng, 32, size, n_actions, dense, scale)
            ref.learn(batch), fast.learn(batch)
        start_alike(fast, ref)
        batch = grid_batch(rng, 32, size, n_actions, dense, scale)
        bound = step_error_bound(ref, batch)
        loss, grads = fast._numpy_step.gradients(batch)
        grads = [g.copy() for g in grads]
        want_loss = ref._loss(*(torch.from_numpy(np.asarray(x)) for x in (
            batch.obs, batch.next_obs, batch.action, batch.reward, batch.done, batch.mc_return)))
        for p in ref.q.parameters():
            p.grad = None
        want_loss.backward()
        within(loss, float(want_loss.detach()), bound["loss"], "loss")
        for k, (g, p) in enumerate(zip(grads, ref.q.parameters())):
            within(g, p.grad.numpy(), bound["grads"][k], f"gradient of parameter {k}")
        ref._step(ref.optimizer)
        fast._numpy_step(batch)
        for k, (p, q) in enumerate(zip(ref.q.parameters(), fast.q.parameters())):
            within(q.detach().numpy(), p.detach().numpy(), bound["weights"][k], f"weights {k} after the step")
            s, t = ref.optimizer.state[p], fast.optimizer.state[q]
            assert float(s["step"]) == float(t["step"]) == 1 + seed % 3
            within(t["exp_avg"].numpy(), s["exp_avg"].numpy(), bound["exp_avg"][k], f"Adam's first moment of {k}")
            within(t["exp_avg_sq"].numpy(), s["exp_avg_sq"].numpy(), bound["exp_avg_sq"][k],
                   f"Adam's second moment of {k}")


@pytest.mark.cpu_kernels
def test_hundreds_of_steps_stay_together_and_act_alike_in_every_cell():
    size = 12
    rng = np.random.default_rng(7)
    cells = np.zeros((size * size, 1, size, size), np.uint8)
    cells[np.arange(size * size), 0, np.arange(size * size) // size, np.arange(size * size) % size] = 255
    for seed in range(4):
        ref, fast = twin_agents(seed, size, mmc_beta=0.1)
        for k in range(400):
            batch = grid_batch(rng, 32, size)
            # 400 steps: each path's rounding feeds its next step, which no one-step bound follows; the
            # tolerance is a measurement: the largest differences, under torch's AVX-512, AVX2 and portable
            # (ATEN_CPU_CAPABILITY=default, NUMBA_CPU_NAME=generic) kernels, are 4.3e-7 of a loss and 1.6e-5
            # of a weight (relative), 0.45% of what rtol=1e-4, atol=1e-5 allow
            close(fast.learn(batch), float(ref.learn(batch)), f"loss of step {k}", rtol=1e-4, atol=1e-5)
            if k % 50 == 49:
                ref.sync_target(), fast.sync_target()
        for p, q in zip(ref.q.parameters(), fast.q.parameters()):
            close(q.detach().numpy(), p.detach().numpy(), "weights after 400 steps", rtol=1e-4, atol=1e-5)
        with torch.no_grad():
            q_ref = ref.q(torch.from_numpy(cells)).numpy()
        clear = np.abs(q_ref[:, 0] - q_ref[:, 1]) > 1e-4  # cells whose greedy action float32 rounding cannot flip
        assert clear.mean() > 0.9
        acts = np.array(fast.greedy_actions(list(cells)))
        np.testing.assert_array_equal(acts[clear], q_ref.argmax(axis=1)[clear])
        np.testing.assert_array_equal(acts[clear], np.array(ref.greedy_actions(list(cells)))[clear])


@pytest.mark.cpu_kernels
def test_a_checkpoint_of_either_step_continues_in_the_other():
    rng = np.random.default_rng(3)
    ref, fast = twin_agents(0, 6)
    for _ in range(20):
        batch = grid_batch(rng, 16, 6)
        ref.learn(batch), fast.learn(batch)
    # numpy -> torch and torch -> numpy: both continue from the other's state as they would from their own
    for source, target_kind in ((fast, "torch"), (ref, "numpy")):
        torch.manual_seed(99)
        other = DQNAgent((1, 6, 6), 2, network="mlp", optimizer="adam", lr=1e-3, learn_step=target_kind)
        other.load_state_dict(source.state_dict())
        batch = grid_batch(rng, 16, 6)
        copy = DQNAgent((1, 6, 6), 2, network="mlp", optimizer="adam", lr=1e-3, learn_step=source.learn_step)
        copy.load_state_dict(source.state_dict())
        bound = step_error_bound(copy, batch)  # one step of each from the same numbers
        copy.learn(batch), other.learn(batch)
        for k, (p, q) in enumerate(zip(copy.q.parameters(), other.q.parameters())):
            within(q.detach().numpy(), p.detach().numpy(), bound["weights"][k], f"{source.learn_step} -> {target_kind}")
        for p, q in zip(copy.q.parameters(), other.q.parameters()):
            assert float(other.optimizer.state[q]["step"]) == float(copy.optimizer.state[p]["step"]) == 21
    # the numpy step writes into the optimiser state a checkpoint saves, not into a copy of it
    saved = fast.state_dict()["optimizer"]
    before = saved["state"][0]["exp_avg"].clone()
    fast.learn(grid_batch(rng, 16, 6))
    assert not torch.equal(fast.state_dict()["optimizer"]["state"][0]["exp_avg"], before)
    assert float(fast.state_dict()["optimizer"]["state"][0]["step"]) == 21


@pytest.mark.cpu_kernels
def test_first_layer_over_nonzero_inputs_is_the_dense_product():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(7, 30)).astype(np.float32)
    b = rng.normal(size=7).astype(np.float32)
    obs = np.zeros((5, 30), np.uint8)
    obs[0, 3] = 255
    obs[1, [0, 29]] = [17, 255]
    obs[2] = rng.integers(0, 256, size=30)
    obs[4, 29] = 1  # row 3: all zero, so the bias alone
    out = np.empty((5, 7), np.float32)
    first_layer(obs, w, b, out)
    x = obs.astype(np.float32) / np.float32(255.0)
    dense = x @ w.T + b
    # both are float32 sums of 31 terms (30 products and the bias), in another order: gamma(31) each
    allowed = gamma(31) * (np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64)).T + np.abs(b))
    within(out, dense, allowed, "the sparse first layer against the dense product")
    np.testing.assert_array_equal(out[0], w[:, 3] + b)  # one-hot: exactly a column of W plus b
    np.testing.assert_array_equal(out[3], b)


@pytest.mark.cpu_kernels
def test_adam_flushes_subnormal_moments_and_otherwise_follows_torchs_rule():
    f = np.float32
    p = np.array([1.0, 1.0, 1.0], np.float32)
    g = np.array([0.0, 0.5, -2.0], np.float32)
    m = np.array([1e-38, 0.1, 0.0], np.float32)  # 0.9 * 1e-38 is subnormal in float32
    v = np.array([1e-38, 0.01, 0.0], np.float32)
    t = 3
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1.5e-4
    _adam(p, g, m, v, (f(b1), f(1 - b1)), (f(b2), f(1 - b2)), f(lr / (1 - b1 ** t)), f(np.sqrt(1 - b2 ** t)), f(eps))
    assert m[0] == 0.0 and v[0] == 0.0 and p[0] == 1.0  # flushed: no step from a moment of 1e-38
    for i, (m0, v0) in enumerate(((0.1, 0.01), (0.0, 0.0))[:2], start=1):
        gi = float(g[i])
        m1, v1 = m0 + (1 - b1) * (gi - m0), b2 * v0 + (1 - b2) * gi * gi
        step = lr / (1 - b1 ** t) * m1 / (np.sqrt(v1) / np.sqrt(1 - b2 ** t) + eps)
        # float32 against the float64 formula: each value is a few (at most 12) roundings of U relative to
        # the largest of its terms (|m0|, |g|, |v0|, g^2, and 1 for the weight)
        rtol = 12 * U
        close(m[i], m1, "first moment", rtol, rtol * max(m0, abs(gi)))
        close(v[i], v1, "second moment", rtol, rtol * max(v0, gi * gi))
        close(p[i], 1.0 - step, "weight", rtol, rtol)


@pytest.mark.parametrize("network, optimizer, why", [("small", "adam", "SmallCNN"), ("mlp", "rmsprop", "RMSprop")])
def test_the_numpy_step_refuses_what_it_is_not_written_for(network, optimizer, why):
    with pytest.raises(ValueError, match=rf"{why}.*learn_step='torch'"):
        DQNAgent((1, 8, 8), 2, network=network, optimizer=optimizer, learn_step="numpy")
    with pytest.raises(ValueError, match="learn_step must be one of"):
        DQNAgent((1, 8, 8), 2, network="mlp", learn_step="jax")


def test_learn_step_resolves_to_numpy_only_where_it_applies():
    assert TrainConfig.preset("study", env="DeepSea-20-v0", bonus="cts").learn_step == "numpy"
    assert TrainConfig.preset("study", env="MiniGrid-Empty-5x5-v0").learn_step == "torch"
    assert TrainConfig.preset("study", env="DeepSea-20-v0", agent="reactor").learn_step == "torch"
    assert TrainConfig.preset("study", env="DeepSea-20-v0", optimizer="rmsprop").learn_step == "torch"
    assert TrainConfig.preset("study", env="DeepSea-20-v0", learn_step="torch").learn_step == "torch"
    with pytest.raises(SettingError, match=r"learn_step.*optimizer.*rmsprop.*needs adam"):
        TrainConfig.preset("study", env="DeepSea-20-v0", optimizer="rmsprop", learn_step="numpy")
    with pytest.raises(SettingError, match=r"learn_step.*network.*auto.*needs mlp"):
        TrainConfig.preset("study", env="MiniGrid-Empty-5x5-v0", learn_step="numpy")


def test_the_numpy_step_needs_the_agents_own_memory():
    agent = DQNAgent((1, 5, 5), 2, network="mlp", optimizer="adam", learn_step="numpy")
    step = agent._numpy_step
    assert isinstance(step, NumpyMLPStep)
    w1 = step.online[0]
    assert np.shares_memory(w1, agent.q._dense[0].weight.detach().numpy())
    agent.load_state_dict(agent.state_dict())  # the optimiser's state tensors are new: the step is rebuilt
    assert agent._numpy_step is not step
    moment = agent.optimizer.state[agent.q._dense[0].weight]["exp_avg"]
    assert np.shares_memory(agent._numpy_step._flat[2][0], moment.numpy())
