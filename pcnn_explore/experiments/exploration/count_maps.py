"""What a density model makes of each DeepSea cell after a random walk (notebook 12, the location part).

:func:`pseudo_count_maps` trains each model on the density frames of a random walk on DeepSea-N,
then scores the frame with the agent in every reachable cell: the paper's translation-invariant
PixelCNN cannot tell the cells of a row apart, CTS and the position-biased PixelCNN can.
"""
from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["random_walk_frames", "CountMaps", "pseudo_count_maps"]


def random_walk_frames(size: int, episodes: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """DeepSea-``size`` under uniformly random actions: the density frames of the states acted in
    ((episodes * size, size, size) uint8, levels 0..7) and the visit count of each cell ((size, size) int64)."""
    from pcnn_explore.envs.deep_sea import DeepSeaEnv

    env, rng = DeepSeaEnv(size), np.random.default_rng(seed)
    frames, counts = [], np.zeros((size, size), np.int64)
    for _ in range(episodes):
        env.reset()
        for _ in range(size):
            frames.append(env.density_frame())
            counts[env.row, env.column] += 1
            env.step(int(rng.integers(2)))
    return np.stack(frames), counts


@dataclasses.dataclass
class CountMaps:
    """What each density model makes of the agent in each DeepSea cell after training on a random
    walk's frames. Maps are (N, N), NaN where the agent can never be (column > row).

    true: visits of each cell in the walk (int). For each model name: log_rho, log rho_n(x) in nats
    of the frame x with the agent in that cell; pg, its prediction gain log rho'_n(x) - log rho_n(x)
    in nats after one update on a copy; pseudo, its pseudo-count rho (1 - rho') / (rho' - rho)
    (inf where PG <= 0: the model is not surprised at all).
    """

    size: int
    true: np.ndarray
    log_rho: dict[str, np.ndarray]
    pg: dict[str, np.ndarray]
    pseudo: dict[str, np.ndarray]

    def reachable(self) -> np.ndarray:
        return np.tril(np.ones((self.size, self.size), bool))

    def summary(self) -> dict[str, dict[str, float]]:
        """model -> Spearman rank correlation of log rho with the true counts over reachable cells
        (a count-like model ranks cells by their visits; 0 for a constant map), the spread of log rho
        over the cells of each row (max - min, mean over rows, nats: 0 when the model cannot tell
        cells of a row apart), and the median PG of visited and of unvisited cells (nats)."""
        mask = self.reachable()
        t = self.true[mask]

        def rank(x):
            return np.argsort(np.argsort(x, kind="stable"), kind="stable").astype(float)

        out = {}
        for name, lp in self.log_rho.items():
            q, g = lp[mask], self.pg[name][mask]
            rho = float(np.corrcoef(rank(t), rank(q))[0, 1]) if np.ptp(q) > 0 else 0.0
            spread = float(np.mean([np.ptp(lp[r, : r + 1]) for r in range(1, self.size)]))
            out[name] = {"spearman_log_rho_vs_visits": rho, "row_spread_nats": spread,
                         "median_pg_visited": float(np.median(g[t > 0])),
                         "median_pg_unvisited": float(np.median(g[t == 0])) if (t == 0).any() else float("nan")}
        return out


def pseudo_count_maps(settings, seed: int = 0) -> CountMaps:
    """``settings``: :class:`pcnn_explore.experiments.exploration.laptop.ExplorationSettings`. Train each of
    ``counts_models`` online on a random walk's frames on DeepSea-``counts_size``
    (``counts_episodes`` episodes), then score the frame with the agent in each reachable cell:
    log rho, and PG and pseudo-count from one update on a copy of the trained model."""
    from pcnn_explore.bonus import pseudo_count
    from pcnn_explore.density import make_density

    settings.check()
    n = settings.counts_size
    frames, counts = random_walk_frames(n, settings.counts_episodes, seed)
    maps: dict[str, dict[str, np.ndarray]] = {"log_rho": {}, "pg": {}, "pseudo": {}}
    for name in settings.counts_models:
        # (the PixelCNNs under the settings' optimizer reading; CTS takes none)
        model = make_density(name, n, n, 8, seed=seed, rmsprop=settings.density_optimizer)
        for f in frames:
            model.update(f)
        state, probe = model.state_dict(), make_density(name, n, n, 8, seed=seed, rmsprop=settings.density_optimizer)
        lp, pg, pc = (np.full((n, n), np.nan) for _ in range(3))
        for r in range(n):
            for c in range(r + 1):
                frame = np.zeros((n, n), np.uint8)
                frame[r, c] = 7
                probe.load_state_dict(state)
                before, after = probe.update(frame)
                lp[r, c], pg[r, c], pc[r, c] = before, after - before, pseudo_count(before, after)
        for key, value in (("log_rho", lp), ("pg", pg), ("pseudo", pc)):
            maps[key][name] = value
    return CountMaps(n, counts, **maps)
