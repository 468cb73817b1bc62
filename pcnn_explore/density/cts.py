"""Context Tree Switching (CTS) density models over images.

``CTSDensity`` is the location-dependent model of Bellemare et al. (2014, 2016): one CTS per
pixel position. ``ConvCTSDensity`` (this paper's appendix C) shares one CTS across all positions.

Each pixel is predicted from its L-shaped context of four already-seen neighbours, and the
context tree splits first on the *left* neighbour, then *up*, *up-left*, *up-right* (depth 4).
Neighbours outside the image read as 0.

Node estimator: Dirichlet with Perks prior a = 1 / levels, p(s) = (n_s + a) / (n + levels * a).
Inner node prediction: P = (w_s P_est + w_k P_child) / (w_s + w_k), where w_s = e^ls ("stay")
and w_k = e^lk ("split"), both 1/2 at creation. Switching update along the context path, with
P_est, P_child and the weights all taken *before* the update and alpha = 1 / (t + 1), t the
number of symbols this CTS has seen counting this one:

    ls <- log((1 - alpha) e^ls P_est + alpha e^lk P_child)
    lk <- log((1 - alpha) e^lk P_child + alpha e^ls P_est)

Predictions and later updates are unchanged when both weights are multiplied by the same
constant, so each node stores only the normalised stay weight ``stay = w_s / (w_s + w_k)``;
``state_dict`` exposes it, and ``log_weights()`` gives the equivalent (ls, lk) normalised to
logaddexp(ls, lk) = 0. This keeps the kernels free of logs and exps except one log per pixel.

A node that was never created predicts exactly 1 / levels (uniform estimator, and the mixture
of uniform distributions is uniform), so queries never allocate. Nodes live in flat arrays
(a pool that grows by doubling); the kernels are compiled with numba.
"""
from __future__ import annotations

import numpy as np

from pcnn_explore.density.base import check_frames, check_sample_args, check_shape_args
from pcnn_explore.jit import njit

DEPTH = 4  # context order: left, up, up-left, up-right
_NO_CHILD = -1


# --------------------------------------------------------------------------------------------
# Kernels. All take the node pool (counts, totals, stay, children) as flat arrays.
# --------------------------------------------------------------------------------------------


@njit(inline="always")
def _context(frame, i, j, d):
    """Symbol of the d-th context neighbour of pixel (i, j): left, up, up-left, up-right."""
    h, w = frame.shape
    if d == 0:
        return frame[i, j - 1] if j > 0 else 0
    if d == 1:
        return frame[i - 1, j] if i > 0 else 0
    if d == 2:
        return frame[i - 1, j - 1] if (i > 0 and j > 0) else 0
    return frame[i - 1, j + 1] if (i > 0 and j + 1 < w) else 0


@njit()
def _pixel_prob(frame, i, j, root, symbol, counts, totals, stay, children, levels, path):
    """P(symbol | context of (i, j)) under the tree rooted at ``root``; ``path`` is scratch."""
    path[0] = root
    n = 1
    node = root
    for d in range(DEPTH):
        node = children[node, _context(frame, i, j, d)]
        if node == _NO_CHILD:
            break
        path[n] = node
        n += 1
    a = 1.0 / levels
    # Below the deepest existing node the (absent) subtree predicts uniformly.
    p = a
    for k in range(n - 1, -1, -1):
        v = path[k]
        est = (counts[v, symbol] + a) / (totals[v] + 1.0)  # (n_s + a) / (n + levels * a)
        if k == DEPTH:
            p = est
        else:
            p = stay[v] * est + (1.0 - stay[v]) * p
    return p


@njit()
def _frame_pixel_log_probs(frames, tree_of, roots, counts, totals, stay, children, levels, out):
    """out[b, i, j] = log P(frames[b, i, j] | context) for every frame of a batch; no training."""
    nb, h, w = frames.shape
    path = np.empty(DEPTH + 1, np.int64)
    for b in range(nb):
        f = frames[b]
        for i in range(h):
            for j in range(w):
                root = roots[tree_of[i, j]]
                out[b, i, j] = np.log(_pixel_prob(f, i, j, root, f[i, j], counts, totals, stay, children, levels, path))


@njit()
def _frame_log_probs(frames, tree_of, roots, counts, totals, stay, children, levels):
    """log rho(x) of each frame: per-pixel logs summed in raster order (as ``update`` sums)."""
    nb, h, w = frames.shape
    path = np.empty(DEPTH + 1, np.int64)
    out = np.zeros(nb)
    for b in range(nb):
        f = frames[b]
        total = 0.0
        for i in range(h):
            for j in range(w):
                root = roots[tree_of[i, j]]
                total += np.log(_pixel_prob(f, i, j, root, f[i, j], counts, totals, stay, children, levels, path))
        out[b] = total
    return out


@njit()
def _update_pixel(frame, i, j, root, alpha, counts, totals, stay, children, n_nodes, levels, path, est, mix):
    """Train the tree at ``root`` on pixel (i, j) of ``frame``; create missing path nodes.

    Returns (P before the update, P after the update, new n_nodes). The caller guarantees the
    pool has room for DEPTH more nodes; ``path``, ``est`` and ``mix`` are scratch arrays of
    length DEPTH + 1.
    """
    symbol = frame[i, j]
    path[0] = root
    node = root
    for d in range(DEPTH):
        c = _context(frame, i, j, d)
        child = children[node, c]
        if child == _NO_CHILD:
            child = n_nodes
            n_nodes += 1
            counts[child, :] = 0
            totals[child] = 0
            stay[child] = 0.5
            children[child, :] = _NO_CHILD
            children[node, c] = child
        path[d + 1] = child
        node = child
    a = 1.0 / levels
    # Bottom-up: the estimators and mixtures before the update.
    for k in range(DEPTH, -1, -1):
        v = path[k]
        est[k] = (counts[v, symbol] + a) / (totals[v] + 1.0)
        if k == DEPTH:
            mix[k] = est[k]
        else:
            mix[k] = stay[v] * est[k] + (1.0 - stay[v]) * mix[k + 1]
    p_before = mix[0]
    # Switching update of the weights (from the old weights), then the counts.
    for k in range(DEPTH + 1):
        v = path[k]
        if k < DEPTH:
            ws = stay[v]
            s_new = (1.0 - alpha) * ws * est[k] + alpha * (1.0 - ws) * mix[k + 1]
            k_new = (1.0 - alpha) * (1.0 - ws) * mix[k + 1] + alpha * ws * est[k]
            stay[v] = s_new / (s_new + k_new)
        counts[v, symbol] += 1
        totals[v] += 1
    # Bottom-up again: the mixture after the update.
    p = 0.0
    for k in range(DEPTH, -1, -1):
        v = path[k]
        e = (counts[v, symbol] + a) / (totals[v] + 1.0)
        p = e if k == DEPTH else stay[v] * e + (1.0 - stay[v]) * p
    return p_before, p, n_nodes


@njit()
def _update_location_dependent(frame, roots, tree_updates, counts, totals, stay, children, n_nodes, levels):
    """One CTS per pixel: train every pixel's tree once; return (log rho, log rho', n_nodes).

    Trees are independent, so querying before and after can be fused with the update pixel by
    pixel and the frame's log-probabilities are exact sums of per-pixel terms.
    """
    h, w = frame.shape
    path, est, mix = np.empty(DEPTH + 1, np.int64), np.empty(DEPTH + 1), np.empty(DEPTH + 1)
    log_rho = 0.0
    log_rho_prime = 0.0
    for i in range(h):
        for j in range(w):
            t = i * w + j
            tree_updates[t] += 1
            alpha = 1.0 / (tree_updates[t] + 1.0)
            pb, pa, n_nodes = _update_pixel(frame, i, j, roots[t], alpha, counts, totals, stay, children, n_nodes, levels, path, est, mix
            )
            log_rho += np.log(pb)
            log_rho_prime += np.log(pa)
    return log_rho, log_rho_prime, n_nodes


@njit()
def _update_shared(frame, root, tree_updates, counts, totals, stay, children, n_nodes, levels):
    """One CTS shared by all pixels: train it on every pixel in raster order; return n_nodes."""
    h, w = frame.shape
    path, est, mix = np.empty(DEPTH + 1, np.int64), np.empty(DEPTH + 1), np.empty(DEPTH + 1)
    for i in range(h):
        for j in range(w):
            tree_updates[0] += 1
            alpha = 1.0 / (tree_updates[0] + 1.0)
            _, _, n_nodes = _update_pixel(frame, i, j, root, alpha, counts, totals, stay, children, n_nodes, levels, path, est, mix
            )
    return n_nodes


@njit()
def _sample(uniforms, tree_of, roots, counts, totals, stay, children, levels):
    """Ancestral sampling in raster order by inverse CDF on pre-drawn uniforms (n, H, W)."""
    n, h, w = uniforms.shape
    out = np.zeros((n, h, w), np.uint8)
    path = np.empty(DEPTH + 1, np.int64)
    for b in range(n):
        f = out[b]
        for i in range(h):
            for j in range(w):
                root = roots[tree_of[i, j]]
                u = uniforms[b, i, j]
                acc = 0.0
                chosen = levels - 1
                for s in range(levels):
                    acc += _pixel_prob(f, i, j, root, s, counts, totals, stay, children, levels, path)
                    if u < acc:
                        chosen = s
                        break
                f[i, j] = chosen
    return out


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------


class _CTSBase:
    """Shared machinery: the node pool, queries, sampling and state."""

    #: Whether each pixel position has its own tree.
    location_dependent = True
    #: Per-node symbol counts. A location-dependent node sees at most one symbol per frame, so
    #: int32 lasts 2^31 frames; the shared tree of ConvCTS sees H*W symbols per frame.
    _count_dtype = np.int32

    def __init__(self, height: int = 42, width: int = 42, levels: int = 8, initial_capacity: int = 1 << 16):
        check_shape_args(height, width, levels)
        self.height, self.width, self.levels = int(height), int(width), int(levels)
        n_trees = self.height * self.width if self.location_dependent else 1
        capacity = max(int(initial_capacity), n_trees + self.height * self.width * DEPTH)
        self._counts = np.zeros((capacity, self.levels), self._count_dtype)
        self._totals = np.zeros(capacity, np.int64)
        self._stay = np.full(capacity, 0.5)
        self._children = np.full((capacity, self.levels), _NO_CHILD, np.int32)
        self._roots = np.arange(n_trees, dtype=np.int64)
        self._n_nodes = n_trees
        self._tree_updates = np.zeros(n_trees, np.int64)  # t of each tree
        self._tree_of = (
            np.arange(self.height * self.width, dtype=np.int64).reshape(self.height, self.width)
            if self.location_dependent
            else np.zeros((self.height, self.width), np.int64)
        )
        self._n_updates = 0

    # -- protocol ------------------------------------------------------------------------------
    @property
    def n_updates(self) -> int:
        """Number of frames trained on."""
        return self._n_updates

    @property
    def n_nodes(self) -> int:
        return self._n_nodes

    def pixel_log_prob(self, frames: np.ndarray) -> np.ndarray:
        """Per-pixel log P(x_ij | context) in nats, float64 (B, H, W); no training."""
        frames = check_frames(frames, self.height, self.width, self.levels)
        out = np.empty(frames.shape, np.float64)
        _frame_pixel_log_probs(
            frames, self._tree_of, self._roots, self._counts, self._totals, self._stay, self._children, self.levels, out
        )
        return out

    def log_prob(self, frames: np.ndarray) -> np.ndarray:
        """log rho_n(x) in nats, float64 (B,): the sum of per-pixel log-probabilities; no training."""
        frames = check_frames(frames, self.height, self.width, self.levels)
        return _frame_log_probs(
            frames, self._tree_of, self._roots, self._counts, self._totals, self._stay, self._children, self.levels
        )

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` images (n, H, W) uint8 drawn from the model, pixel by pixel in raster order."""
        check_sample_args(n, rng)
        uniforms = rng.random((n, self.height, self.width))
        return _sample(uniforms, self._tree_of, self._roots, self._counts, self._totals, self._stay, self._children, self.levels)

    def log_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """(ls, lk) of every node, normalised so that logaddexp(ls, lk) = 0."""
        stay = self._stay[: self._n_nodes]
        with np.errstate(divide="ignore"):
            return np.log(stay), np.log1p(-stay)

    # -- pool ----------------------------------------------------------------------------------
    def _reserve(self, extra: int) -> None:
        """Grow the node pool (by doubling) so that ``extra`` more nodes fit."""
        need = self._n_nodes + extra
        capacity = len(self._totals)
        if need <= capacity:
            return
        while capacity < need:
            capacity *= 2
        grow = capacity - len(self._totals)
        self._counts = np.concatenate([self._counts, np.zeros((grow, self.levels), self._count_dtype)])
        self._totals = np.concatenate([self._totals, np.zeros(grow, np.int64)])
        self._stay = np.concatenate([self._stay, np.full(grow, 0.5)])
        self._children = np.concatenate([self._children, np.full((grow, self.levels), _NO_CHILD, np.int32)])

    # -- state ---------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """Plain numpy arrays and ints (only the used part of the pool)."""
        n = self._n_nodes
        return {
            "kind": type(self).__name__,
            "shape": np.array([self.height, self.width, self.levels], np.int64),
            "counts": self._counts[:n].copy(),
            "totals": self._totals[:n].copy(),
            "stay": self._stay[:n].copy(),
            "children": self._children[:n].copy(),
            "tree_updates": self._tree_updates.copy(),
            "n_updates": self._n_updates,
        }

    def load_state_dict(self, state: dict) -> None:
        if state.get("kind") != type(self).__name__:
            raise ValueError(f"state is for {state.get('kind')!r}, not {type(self).__name__}")
        shape = tuple(int(v) for v in np.asarray(state["shape"]))
        if shape != (self.height, self.width, self.levels):
            raise ValueError(f"state is for shape/levels {shape}, model has {(self.height, self.width, self.levels)}")
        counts = np.asarray(state["counts"], self._count_dtype)
        n = len(counts)
        arrays = {
            "totals": (n,),
            "stay": (n,),
            "children": (n, self.levels),
            "tree_updates": self._tree_updates.shape,
        }
        for key, shp in arrays.items():
            if np.shape(state[key]) != shp:
                raise ValueError(f"state[{key!r}] has shape {np.shape(state[key])}, expected {shp}")
        if counts.shape != (n, self.levels) or n < len(self._roots):
            raise ValueError(f"state['counts'] has shape {counts.shape}, expected (>= {len(self._roots)}, {self.levels})")
        children = np.asarray(state["children"], np.int32)
        if children.size and (children.min() < _NO_CHILD or children.max() >= n):
            raise ValueError("state['children'] points outside the node pool")
        self._n_nodes = 0
        self._reserve(n)
        self._counts[:n] = counts
        self._totals[:n] = np.asarray(state["totals"], np.int64)
        self._stay[:n] = np.asarray(state["stay"], np.float64)
        self._children[:n] = children
        self._counts[n:] = 0
        self._totals[n:] = 0
        self._stay[n:] = 0.5
        self._children[n:] = _NO_CHILD
        self._n_nodes = n
        self._tree_updates[:] = np.asarray(state["tree_updates"], np.int64)
        self._n_updates = int(state["n_updates"])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(height={self.height}, width={self.width}, levels={self.levels}, n_updates={self._n_updates}, n_nodes={self._n_nodes})"


class CTSDensity(_CTSBase):
    """Location-dependent CTS: one context tree per pixel position (Bellemare et al. 2014)."""

    location_dependent = True

    def update(self, frame: np.ndarray) -> tuple[float, float]:
        """Train once on ``frame`` (H, W); return (log rho_n(x), log rho'_n(x)) in nats."""
        frame = check_frames(frame, self.height, self.width, self.levels, single=True)
        self._reserve(self.height * self.width * DEPTH)
        log_rho, log_rho_prime, self._n_nodes = _update_location_dependent(
            frame, self._roots, self._tree_updates, self._counts, self._totals, self._stay, self._children, self._n_nodes, self.levels
        )
        self._n_updates += 1
        return float(log_rho), float(log_rho_prime)


class ConvCTSDensity(_CTSBase):
    """Convolutional CTS (appendix C): one context tree shared by every pixel position.

    ``update`` queries the whole frame first (log rho_n is the probability before any pixel of
    x is trained on), then trains on its pixels in raster order, then queries again.
    """

    location_dependent = False
    _count_dtype = np.int64

    def update(self, frame: np.ndarray) -> tuple[float, float]:
        """Train once on ``frame`` (H, W); return (log rho_n(x), log rho'_n(x)) in nats."""
        frame = check_frames(frame, self.height, self.width, self.levels, single=True)
        log_rho = float(self.log_prob(frame[None])[0])
        self._reserve(self.height * self.width * DEPTH)
        self._n_nodes = _update_shared(
            frame, self._roots[0], self._tree_updates, self._counts, self._totals, self._stay, self._children, self._n_nodes, self.levels
        )
        self._n_updates += 1
        return log_rho, float(self.log_prob(frame[None])[0])
