"""What a training run of either agent (DQN or Reactor) keeps on disk, and its checkpoint writer
(networks, optimisers, density model, replay, RNG states, counters).

Files in ``out_dir``:

- ``log.csv`` (:mod:`pcnn_explore.run.log`): one row per episode (:data:`~pcnn_explore.run.log.LOG_COLUMNS`; ``step`` is the agent step at which the
  episode ended, ``length`` its agent steps; the last row of a run whose budget ends mid-episode
  has ``complete = 0``). The lengths add up to the steps run, each step exactly once.
  ``distinct_cells`` (cells or rooms visited by the run so far; DeepSea: of the N (N + 1) / 2 cells
  the agent can occupy before an episode ends, not the row below the grid) and ``first_success_step`` come
  from envs that expose ``info["cell"]`` / ``info["success"]`` (DeepSea, MiniGrid, Montezuma), else NaN.
  ``density_updates``: density-model updates so far (n of the bonus; 0 without a bonus).
- ``settings.json`` (:mod:`pcnn_explore.run.settings`): the resolved :class:`~pcnn_explore.run.config.TrainConfig` of the latest start.
- ``checkpoint.pt``: everything needed to continue (networks, optimisers, density model, replay,
  RNG states, counters), written atomically with a SHA-256 of its content that is checked before a
  resume (:mod:`pcnn_explore.checkpoint`; its header also holds the step and the settings);
  loaded with ``torch.load(weights_only=True)``.
- ``policy.pt``: the agent's network (DQN's Q-network or Reactor's recurrent actor-critic) and the
  settings that rebuild its env, written just before every checkpoint (so it holds the
  checkpoint's step, or, after a crash between the two writes, the step of the next checkpoint,
  which a resumed run reaches with the same weights); :func:`pcnn_explore.run.policy.load_policy` reads
  only this small file.
- ``run.lock``: the lock that keeps a second writer out, and the attempt that owns the folder
  (:mod:`pcnn_explore.run.lock`).

Checkpoints fall between vector steps; each env's running episode is stored as its number and
actions, and replayed on resume (see :mod:`pcnn_explore.run.envs`): episode k starts with
``env.reset(seed=episode_seed(seed, k))`` (:mod:`pcnn_explore.run.resume`, which also checks a folder
before a run starts or resumes).
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pcnn_explore.checkpoint import save_atomic

__all__ = ["CHECKPOINT", "POLICY", "FORMAT", "rng_states", "restore_rng_states", "save_checkpoint", "snapshot",
           "CheckpointWriter", "CheckpointCancelled"]

CHECKPOINT, POLICY = "checkpoint.pt", "policy.pt"
FORMAT = 2  # 2: replay in per-env shards, running episodes stored per env


def _encode_generator(rng: np.random.Generator) -> dict:
    bitgen = rng.bit_generator.state
    return {"bit_generator": bitgen["bit_generator"], "state": str(bitgen["state"]["state"]),
            "inc": str(bitgen["state"]["inc"]), "has_uint32": int(bitgen["has_uint32"]),
            "uinteger": int(bitgen["uinteger"])}  # 128-bit integers as strings


def _restore_generator(rng: np.random.Generator, a: dict) -> None:
    rng.bit_generator.state = {"bit_generator": a["bit_generator"], "state": {"state": int(a["state"]),
                               "inc": int(a["inc"])}, "has_uint32": int(a["has_uint32"]),
                               "uinteger": int(a["uinteger"])}


def rng_states(rng: np.random.Generator, **generators: np.random.Generator) -> dict:
    """Every RNG the run draws from (``rng``, the named ``generators``, python's, numpy's and
    torch's global ones), encoded for ``weights_only`` loading (no pickle)."""
    version, internal, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state()
    st = {"agent": _encode_generator(rng), **{k: _encode_generator(g) for k, g in generators.items()},
          "python": {"version": version, "internal": torch.tensor(internal, dtype=torch.int64), "gauss": gauss},
          "numpy": {"name": name, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                    "has_gauss": int(has_gauss), "cached": float(cached)},
          "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        st["cuda"] = torch.cuda.get_rng_state_all()
    return st


def restore_rng_states(rng: np.random.Generator, st: dict, **generators: np.random.Generator) -> None:
    """Undo :func:`rng_states`: set ``rng``, the named ``generators`` and the global RNGs to the stored states."""
    _restore_generator(rng, st["agent"])
    for key, g in generators.items():
        _restore_generator(g, st[key])
    p = st["python"]
    random.setstate((p["version"], tuple(int(x) for x in p["internal"].tolist()), p["gauss"]))
    n = st["numpy"]
    keys = np.asarray(n["keys"].numpy() if isinstance(n["keys"], torch.Tensor) else n["keys"]).astype(np.uint32)
    np.random.set_state((n["name"], keys, int(n["pos"]), int(n["has_gauss"]), float(n["cached"])))
    torch.set_rng_state(st["torch"])
    if "cuda" in st and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(st["cuda"])


def save_checkpoint(out_dir: Path, payload: dict, policy: dict, owner=None) -> None:
    """Write the small ``policy.pt`` and then ``checkpoint.pt`` beside it, each atomically, both with
    the step in their header. ``owner()`` (:meth:`pcnn_explore.run.lock.RunLock.check_owner`) runs
    before each write and raises when the folder belongs to another attempt now."""
    for name, obj, meta in ((POLICY, policy, {"step": int(payload["step"])}),
                            (CHECKPOINT, payload, {"step": int(payload["step"]), "config": payload["config"]})):
        if owner is not None:
            owner()
        save_atomic({"format": FORMAT, **obj}, out_dir / name, meta=meta)


def snapshot(obj: Any) -> Any:
    """A copy of a state (nested dicts, lists, numpy arrays, tensors) that later training cannot change."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().to("cpu", copy=True)
    if isinstance(obj, np.ndarray):
        return obj.copy()
    if isinstance(obj, dict):
        return {k: snapshot(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(snapshot(v) for v in obj)
    return obj


class CheckpointWriter:
    """Writes checkpoints in one background thread, from a snapshot taken when asked.

    The loop pays only for the snapshot (a memory copy); serialising, compressing and writing run
    alongside training. One write at a time: a new checkpoint first waits for the previous one.
    A run killed mid-write keeps the previous checkpoint (each file is replaced atomically).
    ``owner``: see :func:`save_checkpoint`.
    """

    def __init__(self, out_dir: Path, owner=None):
        from concurrent.futures import ThreadPoolExecutor

        self.out_dir, self.owner = out_dir, owner
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="checkpoint")
        self.pending = None
        self.cancelled = False

    def _check(self) -> None:
        """Before each file: stop once cancelled, then ``owner()``."""
        if self.cancelled:
            raise CheckpointCancelled("the checkpoint was cancelled before this file")
        if self.owner is not None:
            self.owner()

    def submit(self, payload: dict, policy: dict) -> None:
        self.wait()
        self.pending = self.pool.submit(save_checkpoint, self.out_dir, snapshot(payload), snapshot(policy), self._check)

    def wait(self) -> None:
        """Block until the checkpoint in flight is on disk (re-raising its error, if any)."""
        pending = self.pending
        if pending is not None:
            try:
                pending.result()
            finally:
                if pending.done():  # (an interrupted wait leaves it in flight)
                    self.pending = None

    def in_flight(self):
        """The write still running (a Future), or None."""
        return self.pending if self.pending is not None and not self.pending.done() else None

    def cancel(self):
        """Stop without waiting: a checkpoint not started is dropped, one being written stops before
        its next file (each file is replaced atomically: the folder keeps whole files). Returns the
        write still running (a Future: the folder must stay locked until it is done), or None."""
        self.cancelled = True
        if self.pending is not None:
            self.pending.cancel()
        self.pool.shutdown(wait=False, cancel_futures=True)
        return self.in_flight()

    def close(self) -> None:
        """Wait for the checkpoint in flight, then end the thread; interrupted while waiting
        (KeyboardInterrupt), cancel it instead (:meth:`cancel`) and re-raise."""
        try:
            self.wait()
        except BaseException:
            self.cancel()
            raise
        self.pool.shutdown(wait=True)


class CheckpointCancelled(RuntimeError):
    """A checkpoint write stopped by :meth:`CheckpointWriter.cancel`."""
