"""What a training run of either agent (DQN or Reactor) keeps on disk: its log, settings,
checkpoint, policy and RNG states; resuming.

Files in ``out_dir``:

- ``log.csv``: one row per episode (:data:`LOG_COLUMNS`; ``step`` is the agent step at which the
  episode ended, ``length`` its agent steps; the last row of a run whose budget ends mid-episode
  has ``complete = 0``). The lengths add up to the steps run, each step exactly once.
  ``distinct_cells`` (cells or rooms visited by the run so far; DeepSea: of the N (N + 1) / 2 cells
  the agent can occupy before an episode ends, not the row below the grid) and ``first_success_step`` come
  from envs that expose ``info["cell"]`` / ``info["success"]`` (DeepSea, MiniGrid, Montezuma), else NaN.
  ``density_updates``: density-model updates so far (n of the bonus; 0 without a bonus).
- ``settings.json``: the resolved :class:`~pcnn_explore.run.config.TrainConfig` of the latest start.
- ``checkpoint.pt``: everything needed to continue (networks, optimisers, density model, replay,
  RNG states, counters), written atomically with a SHA-256 of its content that is checked before a
  resume (:mod:`pcnn_explore.checkpoint`; its header also holds the step and the settings);
  loaded with ``torch.load(weights_only=True)``.
- ``policy.pt``: the agent's network (DQN's Q-network or Reactor's recurrent actor-critic) and the
  settings that rebuild its env, written just before every checkpoint (so it holds the
  checkpoint's step, or, after a crash between the two writes, the step of the next checkpoint,
  which a resumed run reaches with the same weights); :func:`load_policy` reads only this small file.
- ``run.lock``: the lock that keeps a second writer out, and the attempt that owns the folder
  (:mod:`pcnn_explore.run.lock`).

Checkpoints fall between vector steps; each env's running episode is stored as its number and
actions, and replayed on resume (see :mod:`pcnn_explore.run.envs`): episode k starts with
``env.reset(seed=episode_seed(seed, k))``.
"""
from __future__ import annotations

import csv
import io
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pcnn_explore.atomic import write_text_atomic
from pcnn_explore.checkpoint import CorruptFile, load, read_meta, save_atomic
from pcnn_explore.checks import RunError, SettingError
from pcnn_explore.run.config import RESUMABLE_CHANGES, TrainConfig

__all__ = ["LOG_COLUMNS", "CHECKPOINT", "POLICY", "LOG", "SETTINGS", "FORMAT", "RunError", "Resume", "episode_seed",
           "read_log", "truncate_log", "CsvLog", "open_run", "rng_states", "restore_rng_states", "save_checkpoint",
           "Policy", "load_policy", "write_settings", "snapshot", "CheckpointWriter", "resume_settings"]

LOG_COLUMNS = ("step", "episode", "return", "length", "complete", "intrinsic_return", "intrinsic_mean",
               "prediction_gain_mean", "epsilon", "td_loss", "wall_seconds", "distinct_cells", "first_success_step",
               "density_updates")
CHECKPOINT, POLICY, LOG, SETTINGS = "checkpoint.pt", "policy.pt", "log.csv", "settings.json"
FORMAT = 2  # 2: replay in per-env shards, running episodes stored per env


def episode_seed(seed: int, episode: int) -> int:
    """The env seed of episode ``episode`` (0-based) of a run with seed ``seed``."""
    return int(np.random.SeedSequence([int(seed), int(episode), 0x5EED]).generate_state(1)[0])


# ---------------------------------------------------------------------------------------------- log
def read_log(out_dir: str | os.PathLike) -> dict[str, np.ndarray]:
    """``out_dir/log.csv`` as a dict of numpy columns (int64 for step/episode/length/complete, else float64)."""
    path = Path(out_dir) / LOG
    if not path.exists():
        raise FileNotFoundError(f"no training log at {path}: run train() with out_dir={str(out_dir)!r} first")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    ints = {"step", "episode", "length", "complete"}
    out = {}
    for name in LOG_COLUMNS:
        values = [r[name] for r in rows]
        if name in ints:
            out[name] = np.array([int(v) for v in values], dtype=np.int64)
        else:
            out[name] = np.array([float(v) if v not in ("", "nan") else np.nan for v in values], dtype=np.float64)
    return out


def truncate_log(path: Path, last_step: int, columns: tuple[str, ...] = LOG_COLUMNS) -> None:
    """Keep the header and the rows with step <= last_step (rewritten atomically); a fresh header if
    absent. ``columns``: the CSV's header (log.csv's by default; traces.csv gives its own)."""
    rows = []
    if path.exists():
        with open(path, newline="") as f:
            rows = [r for r in csv.DictReader(f) if int(r["step"]) <= last_step]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    write_text_atomic(path, buf.getvalue())


class CsvLog:
    """Appends one row per episode to ``log.csv`` (created with its header by :func:`truncate_log`)."""

    def __init__(self, path: Path):
        self.f = open(path, "a", newline="")
        self.w = csv.DictWriter(self.f, fieldnames=LOG_COLUMNS, lineterminator="\n")

    def write(self, row: dict) -> None:
        self.w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
        self.f.flush()

    def sync(self) -> None:
        """Put the rows written so far on disk (before a checkpoint commits: the log on disk then
        covers at least the checkpoint's steps)."""
        self.f.flush()
        os.fsync(self.f.fileno())

    def close(self) -> None:
        self.f.close()


# -------------------------------------------------------------------------------------- start/resume
@dataclass
class Resume:
    """Where a run starts: ``saved`` is the checkpoint to continue (None: a fresh run); ``finished``
    is True when a resumed run has already done ``cfg.steps`` (nothing to do)."""

    saved: dict | None
    step: int = 0
    finished: bool = False
    stamp: tuple | None = None  # (inode, bytes, mtime ns) of the checkpoint read: unchanged when the run locks its folder

    def check_unchanged(self, out_dir: str | os.PathLike) -> None:
        """Raise :class:`RunError` when ``out_dir`` changed since :func:`open_run` looked (another run
        wrote there meanwhile); called under the folder's lock, before the first write."""
        out = Path(out_dir)
        if self.saved is None:
            if (out / CHECKPOINT).exists() or (out / LOG).exists():
                raise RunError(f"{out} already holds a training run (written after this run checked it): "
                               "choose another --out")
        elif _stamp(out / CHECKPOINT) != self.stamp:
            raise RunError(f"cannot resume {out}: its checkpoint changed while this run read it (another run "
                           "wrote it): start again")


def _stamp(path: Path) -> tuple | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _check_writable(out: Path) -> None:
    """Raise :class:`RunError` (naming ``--out``) when ``out`` cannot be created or written."""
    target = out
    while not target.exists() and target != target.parent:
        target = target.parent
    reason = None
    if not target.is_dir():
        reason = f"{target} is a file, not a folder"
    elif hasattr(os, "statvfs") and os.statvfs(target).f_flag & os.ST_RDONLY:
        reason = "read-only file system"
    elif not os.access(target, os.W_OK | os.X_OK):
        reason = "permission denied"
    if reason is not None:
        raise RunError(f"{{out_dir}} {out}: cannot write there ({reason}): choose another {{out_dir}}")


def open_run(cfg: TrainConfig, resume: bool) -> Resume:
    """Check ``cfg.out_dir`` for a fresh start or a resumption; touch nothing. Raises :class:`RunError`.

    Fresh (``resume=False``): the folder must hold no run. Resume: the folder must hold a
    checkpoint whose checksum matches, made with the same settings (up to :data:`RESUMABLE_CHANGES`).
    Either way the folder must be writable and held by no other run (:mod:`pcnn_explore.run.lock`).
    """
    from pcnn_explore.run.lock import probe

    out = Path(cfg.out_dir)
    ckpt = out / CHECKPOINT
    if out.exists() and not out.is_dir():
        raise RunError(f"{out} is a file, not a folder: choose another --out")
    if (out / LOG).exists() and not ckpt.exists():
        raise RunError(f"{out} holds a log but no checkpoint (the run stopped before its first checkpoint, so "
                       "it cannot resume): remove the folder or choose another --out")
    if not resume:
        if ckpt.exists():
            raise RunError(f"{out} already holds a training run: add --resume (resume=True) to continue it, "
                           "or choose another --out")
        _check_writable(out)
        probe(out)
        return Resume(saved=None)
    if not ckpt.is_file():
        what = "does not exist" if not out.exists() else "holds no checkpoint"
        raise RunError(f"cannot resume: {out} {what}; start a fresh run with another --out (or without --resume)")
    probe(out)  # (before reading a checkpoint of gigabytes)
    stamp = _stamp(ckpt)
    reason = "corrupt, truncated or of another version"
    try:
        saved = load(ckpt, checksum=True)
        ok = isinstance(saved, dict) and saved.get("format") == FORMAT and isinstance(saved.get("config"), dict)
    except CorruptFile as e:
        ok, reason = False, e.reason
    if not ok:
        raise RunError(f"cannot resume: {ckpt} is not a readable pcnn-explore checkpoint ({reason}); "
                       "start a fresh run with another --out")
    _check_resumable(saved["config"], cfg)
    step = int(saved["step"])
    if step < cfg.steps:
        _check_writable(out)
    return Resume(saved=saved, step=step, finished=step >= cfg.steps, stamp=stamp)


def resume_settings(out_dir: str | os.PathLike) -> dict | None:
    """The settings stored with the checkpoint in ``out_dir`` (read from its header, cheaply; None
    if there is no readable one: :func:`open_run` then says why)."""
    meta = read_meta(Path(out_dir) / CHECKPOINT)
    config = meta.get("config") if meta else None
    return dict(config) if isinstance(config, dict) else None


def _check_resumable(saved: dict, cfg: TrainConfig) -> None:
    now = cfg.to_dict()
    if "mapping_seed" not in saved and isinstance(saved.get("env"), str) and saved["env"].startswith("DeepSea-"):
        saved = {**saved, "mapping_seed": 0}  # saved before the setting existed: DeepSea ran on mapping seed 0
    diff = sorted(k for k in now if k not in RESUMABLE_CHANGES and saved.get(k) != now[k])
    if diff:
        detail = ", ".join(f"{{{k}}}: checkpoint {saved.get(k)!r} vs now {now[k]!r}" for k in diff)
        raise RunError(f"cannot resume {cfg.out_dir}: settings differ from the checkpoint's ({detail}); "
                       "use the checkpoint's settings or another --out")


def write_settings(cfg: TrainConfig) -> None:
    """Store the resolved settings as ``out_dir/settings.json``."""
    write_text_atomic(Path(cfg.out_dir) / SETTINGS, json.dumps(cfg.to_dict(), indent=2, sort_keys=True) + "\n")


# ---------------------------------------------------------------------------------------------- RNG
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


# ------------------------------------------------------------------------------------- checkpoint
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

    def submit(self, payload: dict, policy: dict) -> None:
        self.wait()
        self.pending = self.pool.submit(save_checkpoint, self.out_dir, snapshot(payload), snapshot(policy), self.owner)

    def wait(self) -> None:
        """Block until the checkpoint in flight is on disk (re-raising its error, if any)."""
        if self.pending is not None:
            pending, self.pending = self.pending, None
            pending.result()

    def close(self) -> None:
        try:
            self.wait()
        finally:
            self.pool.shutdown(wait=True)


# ------------------------------------------------------------------------------------------- policy
class Policy:
    """Greedy (or epsilon-greedy) policy of a trained agent: ``policy(obs) -> action``.

    ``obs`` is an observation of the env built by :meth:`make_env` ((C, H, W) uint8).
    ``recurrent``: the agent is Reactor (``config["agent"] == "reactor"``): actions are sampled from
    its LSTM policy (``epsilon`` unused) and :meth:`reset` clears its state. ``step``: the agent step
    whose weights these are (None: not recorded).
    """

    def __init__(self, agent, config: dict, epsilon: float, seed: int, step: int | None = None):
        self.agent, self.config, self.epsilon, self.step = agent, config, float(epsilon), step
        self.recurrent = config.get("agent", "dqn") == "reactor"
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs: np.ndarray) -> int:
        if self.recurrent:
            return int(self.agent.act(obs, self.rng)[0])
        return self.agent.act(obs, self.epsilon, self.rng) if self.epsilon > 0 else self.agent.greedy_action(obs)

    def reset(self) -> None:
        """Call at each episode start (a recurrent policy forgets the last episode)."""
        if self.recurrent:
            self.agent.reset_state(0)

    @property
    def env_kwargs(self) -> dict:
        """The settings :func:`pcnn_explore.envs.make_env` rebuilds the trained env with; DeepSea's
        mapping seed too (settings saved before it was recorded ran on mapping seed 0)."""
        from pcnn_explore.envs import is_deep_sea

        c = self.config
        kwargs = dict(sticky_actions=c["sticky_actions"], terminal_on_life_loss=c["terminal_on_life_loss"],
                      frame_stack=c["frame_stack"], tile_size=c["tile_size"], view=c["view"], n_actions=c["n_actions"])
        if is_deep_sea(c["env"]):
            kwargs["mapping_seed"] = c.get("mapping_seed", 0)
        return kwargs

    def make_env(self, seed: int = 0, keep_rgb: bool = True):
        """The agent's environment, as trained (``info["rgb"]`` holds the RGB frame when ``keep_rgb``)."""
        from pcnn_explore.envs import make_env

        return make_env(self.config["env"], seed, keep_rgb=keep_rgb, **self.env_kwargs)


def load_policy(path: str | os.PathLike, epsilon: float = 0.0, device: str = "cpu", seed: int = 0):
    """``(env_id, policy)`` from a run's folder, its ``policy.pt`` or its ``checkpoint.pt``.

    Reads only ``policy.pt`` (the Q-network and its settings, kilobytes to megabytes), never the
    checkpoint with its replay buffer. ``policy(obs) -> action`` (epsilon-greedy);
    ``policy.make_env(seed)`` builds the env the agent was trained on; ``policy.step`` is the agent
    step it holds. When the run's ``checkpoint.pt`` beside it is at another step (the run stopped
    between writing the two), a warning says so: its resumption rewrites both.
    """
    given = Path(path)
    file = given / POLICY if given.is_dir() else (given.with_name(POLICY) if given.name == CHECKPOINT else given)
    if not file.is_file():
        raise FileNotFoundError(f"no checkpoint at {given}: pass a training run's out_dir, its policy.pt or its "
                                f"checkpoint.pt (the policy is saved with every checkpoint)")
    if not 0.0 <= float(epsilon) <= 1.0:
        raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
    saved = load(file)
    if not isinstance(saved, dict) or not ("q" in saved or "net" in saved) or "config" not in saved:
        raise ValueError(f"{file} is not a policy saved by pcnn-explore train")
    c = saved["config"]
    obs_shape, n_actions = tuple(saved["obs_shape"]), int(saved["n_actions"])
    network = saved.get("network", c["network"])  # the kind "auto" resolved to (absent before mlp: auto's own)
    if "net" in saved:  # Reactor: actions sampled from its recurrent policy
        from pcnn_explore.agents.reactor import ReactorAgent

        agent = ReactorAgent(obs_shape, n_actions, network=network, hidden=c["hidden"], device=device)
        agent.net.load_state_dict(saved["net"])
    else:
        from pcnn_explore.agents.dqn import DQNAgent

        agent = DQNAgent(obs_shape, n_actions, network=network, hidden=c["hidden"], device=device)
        agent.q.load_state_dict(saved["q"])
        agent.q.eval()
    step = int(saved["step"]) if "step" in saved else None
    beside = read_meta(file.with_name(CHECKPOINT)) if file.name == POLICY else None
    if step is not None and beside is not None and beside.get("step") not in (None, step):
        import warnings

        warnings.warn(f"{file} holds the policy at agent step {step}, {file.with_name(CHECKPOINT)} the run at step "
                      f"{beside['step']} (the run stopped between the two writes; resuming it rewrites both)",
                      stacklevel=2)
    return c["env"], Policy(agent, c, epsilon, seed, step=step)
