"""A plain pure-Python CTS, written straight from the specification, for reading and checking.

This is the location-dependent CTS of :mod:`pcnn_explore.density.cts` with one Python object per
node and log-space weights ``ls``/``lk`` exactly as the specification states them. It is about
100x slower than the numba kernels; the tests use it as an oracle (both must agree on every
probability) and ``benchmarks/bench_cts.py`` uses it as the baseline.
"""
from __future__ import annotations

import math

import numpy as np

DEPTH = 4
LOG_HALF = math.log(0.5)


class Node:
    __slots__ = ("counts", "total", "ls", "lk", "children")

    def __init__(self, levels: int):
        self.counts = [0] * levels
        self.total = 0
        self.ls = LOG_HALF  # log weight of "stay": use this node's estimator
        self.lk = LOG_HALF  # log weight of "split": use the child along the context
        self.children: dict[int, Node] = {}


class ReferenceCTS:
    """One context tree per pixel; context (left, up, up-left, up-right), 0 outside the image."""

    def __init__(self, height: int, width: int, levels: int):
        self.height, self.width, self.levels = height, width, levels
        self.roots = [Node(levels) for _ in range(height * width)]
        self.t = 0  # symbols each tree has seen (one per frame)

    def context(self, frame, i: int, j: int) -> tuple[int, int, int, int]:
        h, w = self.height, self.width
        left = frame[i][j - 1] if j > 0 else 0
        up = frame[i - 1][j] if i > 0 else 0
        up_left = frame[i - 1][j - 1] if i > 0 and j > 0 else 0
        up_right = frame[i - 1][j + 1] if i > 0 and j + 1 < w else 0
        return left, up, up_left, up_right

    def estimate(self, node: Node, symbol: int) -> float:
        a = 1.0 / self.levels  # Perks prior
        return (node.counts[symbol] + a) / (node.total + self.levels * a)

    def predict(self, node: Node | None, context, depth: int, symbol: int) -> float:
        if node is None:
            return 1.0 / self.levels  # a subtree never created predicts uniformly
        p_est = self.estimate(node, symbol)
        if depth == DEPTH:
            return p_est
        p_child = self.predict(node.children.get(context[depth]), context, depth + 1, symbol)
        # (e^ls P_est + e^lk P_child) / (e^ls + e^lk), shifted by max(ls, lk) against underflow
        m = max(node.ls, node.lk)
        ws, wk = math.exp(node.ls - m), math.exp(node.lk - m)
        return (ws * p_est + wk * p_child) / (ws + wk)

    def train(self, node: Node, context, depth: int, symbol: int, alpha: float) -> None:
        p_est = self.estimate(node, symbol)
        if depth < DEPTH:
            child = node.children.setdefault(context[depth], Node(self.levels))
            p_child = self.predict(child, context, depth + 1, symbol)  # before the update
            ls, lk = node.ls, node.lk  # both lines use the old weights
            m = max(ls, lk)  # the weights shrink every update: shift by m so exp cannot underflow
            node.ls = m + math.log((1 - alpha) * math.exp(ls - m) * p_est + alpha * math.exp(lk - m) * p_child)
            node.lk = m + math.log((1 - alpha) * math.exp(lk - m) * p_child + alpha * math.exp(ls - m) * p_est)
            self.train(child, context, depth + 1, symbol, alpha)
        node.counts[symbol] += 1
        node.total += 1

    def log_prob(self, frame) -> float:
        total = 0.0
        for i in range(self.height):
            for j in range(self.width):
                ctx = self.context(frame, i, j)
                total += math.log(self.predict(self.roots[i * self.width + j], ctx, 0, int(frame[i][j])))
        return total

    def update(self, frame) -> tuple[float, float]:
        frame = np.asarray(frame).tolist()
        log_rho = self.log_prob(frame)
        self.t += 1
        alpha = 1.0 / (self.t + 1)
        for i in range(self.height):
            for j in range(self.width):
                ctx = self.context(frame, i, j)
                self.train(self.roots[i * self.width + j], ctx, 0, int(frame[i][j]), alpha)
        return log_rho, self.log_prob(frame)
