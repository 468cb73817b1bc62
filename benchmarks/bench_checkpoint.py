"""Size and time of a replay checkpoint at paper scale: 1M slots of 84x84 Atari frames.

    python benchmarks/bench_checkpoint.py                 # N = 100K transitions, capacity 1M
    python benchmarks/bench_checkpoint.py --n 1000000     # the full replay (about 8 GB of memory)

Fills a ``ReplayBuffer`` (capacity ``--capacity``, 4-frame stacks) with ``--n`` transitions whose
frames are real Atari frames: ``--real`` agent observations of a random policy in ``--env`` (the
kit's Nature DQN preprocessing), replayed in order, episode ends included, over and over until N
transitions are stored (zlib's 32 KB window sees at most five frames, so repeating the trajectory
does not make it compress better than fresh play would). Prints the size of the saved state,
the time to build and save it (``state_dict`` + :func:`pcnn_explore.checkpoint.save_atomic`)
and to load it (:func:`pcnn_explore.checkpoint.load`, ``torch.load(weights_only=True)``, +
``load_state_dict`` into a fresh replay), and checks that the loaded replay is the saved one
(checksums of every array, the ring position and a sampled batch).
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import zlib  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent.parent))

from pcnn_explore.agents.replay import ReplayBuffer  # noqa: E402
from pcnn_explore.checkpoint import load, save_atomic  # noqa: E402


def atari_trajectory(env_id: str, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(n + 1, 84, 84) uint8 newest frames of consecutive observations and (n,) bool episode ends."""
    from pcnn_explore.envs import make_env

    env = make_env(env_id, seed, density_frame=False)
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    frames, ends = [obs[-1]], []
    while len(ends) < n:
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        ends.append(bool(terminated or truncated))
        if ends[-1]:
            obs, _ = env.reset()
        frames.append(obs[-1])
    env.close()
    return np.stack(frames), np.array(ends)


def fill(replay: ReplayBuffer, frames: np.ndarray, ends: np.ndarray, n: int, max_episode: int) -> None:
    """Add ``n`` transitions cycling through the trajectory; episodes also end every ``max_episode`` steps."""
    rng = np.random.default_rng(0)
    length = 0
    stack = [frames[0]] * 4
    for t in range(n):
        i = t % len(ends)
        nxt = stack[1:] + [frames[i + 1]]
        length += 1
        end = bool(ends[i]) or length == max_episode or t == n - 1
        replay.add(np.stack(stack), int(rng.integers(18)), float(rng.random() < 0.01), bool(ends[i]),
                   np.stack(nxt), end)
        stack = [frames[i + 1]] * 4 if end else nxt
        length = 0 if end else length


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="transitions stored (default 100K)")
    parser.add_argument("--capacity", type=int, default=1_000_000)
    parser.add_argument("--env", default="ALE/MontezumaRevenge-v5")
    parser.add_argument("--real", type=int, default=5_000, help="distinct real frames to cycle through")
    args = parser.parse_args()
    if args.n > args.capacity:
        parser.error("--n must be at most --capacity")
    t = time.perf_counter()
    frames, ends = atari_trajectory(args.env, min(args.real, args.n))
    print(f"{args.env}: {len(ends)} real transitions ({ends.sum()} episode ends) in {time.perf_counter() - t:.1f} s")
    replay = ReplayBuffer(args.capacity, (4, 84, 84), stack=4)
    t = time.perf_counter()
    fill(replay, frames, ends, args.n, max_episode=27_000)
    print(f"filled {args.n:,} transitions into a {args.capacity:,}-slot replay in {time.perf_counter() - t:.1f} s")
    filled = min(replay.written, replay.capacity)
    raw = filled * 84 * 84
    before = signature(replay)
    with tempfile.TemporaryDirectory() as tmp:
        # what the training loop waits for: the snapshot its background writer takes (frames copied,
        # compression deferred to the writer thread)
        from pcnn_explore.run.checkpoints import snapshot

        t = time.perf_counter()
        snap = snapshot(replay.state_dict(defer=True))
        t_loop = time.perf_counter() - t
        del snap
        path = Path(tmp) / "replay.pt"
        t = time.perf_counter()
        state = replay.state_dict()
        t_state = time.perf_counter() - t
        save_atomic({"replay": state}, path)
        t_save = time.perf_counter() - t
        size = path.stat().st_size
        del state, replay  # one replay in memory at a time
        t = time.perf_counter()
        back = ReplayBuffer(args.capacity, (4, 84, 84), stack=4)
        back.load_state_dict(load(path)["replay"])
        t_load = time.perf_counter() - t
    same = signature(back) == before
    print(f"checkpoint of {filled:,} filled slots: {size / 2**20:.1f} MiB on disk "
          f"(raw frames {raw / 2**20:.0f} MiB, {raw / max(size, 1):.0f}x smaller; the whole-capacity format "
          f"took {args.capacity * (84 * 84 + 31) / 2**30:.1f} GiB)")
    print(f"save: {t_save:.2f} s (state_dict {t_state:.2f} s); load: {t_load:.2f} s (into a new replay); "
          f"{len(os.sched_getaffinity(0))} CPUs; restored exactly: {same}")
    print(f"the training loop waits {t_loop:.2f} s per checkpoint (the snapshot; the rest runs in the background)")
    if not same:
        sys.exit(1)


def signature(replay: ReplayBuffer) -> tuple:
    """Checksums of every array's filled slots, the ring position, and a sampled batch."""
    filled = min(replay.written, replay.capacity)
    sums = tuple(zlib.crc32(memoryview(np.ascontiguousarray(getattr(replay, k)[:filled]))) for k in
                 ("frames", "action", "reward", "done", "mc_return", "has_transition", "mc_ready", "episode_start",
                  "episode_id"))
    batch = replay.sample(32, np.random.default_rng(1))
    return sums + (replay.cursor, replay.written, replay.n_episodes, zlib.crc32(batch.obs.tobytes()),
                   tuple(batch.index))


if __name__ == "__main__":
    main()
