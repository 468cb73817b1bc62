"""Where a run stands between vector steps (:class:`RunState`), restored from a checkpoint at the
start, and saved into one by :class:`Checkpointer` (besides the learner's and the bonus's own state).
A checkpoint's files: see :mod:`pcnn_explore.run.checkpoints`."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pcnn_explore.exploration import ExplorationTracker
from pcnn_explore.run.checkpoints import CHECKPOINT, CheckpointWriter, restore_rng_states, rng_states
from pcnn_explore.run.envs import Slot
from pcnn_explore.run.metrics import EpisodeStats, crossed
from pcnn_explore.run.resume import RunError, episode_seed

__all__ = ["RunState", "Checkpointer"]


@dataclass
class RunState:
    """The run's counters, RNGs and running episodes. ``rng`` draws the learner's actions and
    batches, ``scored_rng`` which steps get a bonus; ``slots``: each env's running episode (None once
    the budget cut it); ``density_updates``: the density model's updates so far (counted here: a
    worker thread may be ahead of the loop)."""

    step: int
    episodes: int
    rng: np.random.Generator
    scored_rng: np.random.Generator
    tracker: ExplorationTracker
    watch: object = None  # the run's SolveWatch (DeepSea), or None
    density_updates: int = 0
    slots: list = field(default_factory=list)
    saved_slots: list | None = None  # each env's running episode as the checkpoint saved it (None: start the next)

    @classmethod
    def restore(cls, cfg, saved: dict | None, envs, learner, bonus, watch) -> "RunState":
        """A fresh run's state (``saved`` None), or the checkpoint's, loaded into ``learner`` and
        ``bonus`` as well; a checkpoint that cannot be read closes ``envs`` and raises RunError."""
        state = cls(0, 0, np.random.default_rng(np.random.SeedSequence([cfg.seed, 0xA6E7])),
                    np.random.default_rng(np.random.SeedSequence([cfg.seed, 0xB0B5])), ExplorationTracker(), watch,
                    saved_slots=[None] * cfg.num_envs)
        if saved is not None:
            try:
                state.tracker.load_state_dict(saved["exploration"])
                learner.load_state_dict(saved)
                if bonus is not None:
                    bonus.load_state_dict(saved["bonus"])
                restore_rng_states(state.rng, saved["rng"], scored=state.scored_rng)
                state.step, state.episodes, state.saved_slots = int(saved["step"]), int(saved["episodes"]), saved["running"]
            except (ValueError, KeyError, TypeError, RuntimeError) as e:  # (its checksum matched: a damaged write)
                envs.close()
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                raise RunError(f"cannot resume: {Path(cfg.out_dir) / CHECKPOINT} is not a readable pcnn-explore "
                               f"checkpoint ({first}); start a fresh run with another {{out_dir}}") from None
        state.density_updates = bonus.n if bonus is not None else 0
        return state

    def start_episodes(self, cfg, envs, device) -> None:
        """Start each env's running episode: the saved one (its actions replayed), or the next one."""
        for i, r in enumerate(self.saved_slots):
            fresh = r is None
            if fresh:
                r, self.episodes = {"episode": self.episodes, "actions": [], "stats": None}, self.episodes + 1
            obs, info = envs.start(i, episode_seed(cfg.seed, r["episode"]), r["actions"])
            if fresh:  # a resumed episode's states were counted before the checkpoint
                self.tracker.update(info, self.step)
            stats = EpisodeStats.from_state(r["stats"], device) if r["stats"] else EpisodeStats(device)
            self.slots.append(Slot(int(r["episode"]), obs, info.get("density_frame"), stats,
                                   [int(a) for a in r["actions"]], r.get("pseudo_count")))
        self.saved_slots = None

    def advance(self, i: int, action, rate: float, reward: float, record, next_obs, info, count_next: bool) -> None:
        """Env i took ``action`` (at exploration rate ``rate``), got ``reward`` and reached ``next_obs``;
        ``record``: the bonus's record of the scored frame (None: not scored); ``count_next``: that
        frame was the next state, whose pseudo-count the next action's rate reads."""
        slot = self.slots[i]
        self.density_updates += record is not None
        slot.stats.add_rate(rate)
        slot.stats.add_step(reward, record)
        self.tracker.update(info, self.step)
        slot.obs, slot.frame = next_obs, info.get("density_frame")
        slot.pseudo_count = record.pseudo_count if record is not None and count_next else None
        slot.actions.append(int(action))

    def next_episode(self, i: int, cfg, envs, device) -> None:
        """Env i's episode ended: start the run's next one there, or (at the budget) none, which a
        longer resumed run starts."""
        if self.step >= cfg.steps:
            self.slots[i] = None
            return
        obs, info = envs.start(i, episode_seed(cfg.seed, self.episodes))
        self.tracker.update(info, self.step)
        self.slots[i], self.episodes = Slot(self.episodes, obs, info.get("density_frame"),
                                            EpisodeStats(device)), self.episodes + 1


class Checkpointer:
    """Saves the run between vector steps: the log on disk is synced first, then the checkpoint
    (:class:`RunState`, learner, bonus) and the policy file are written in the background, and only
    while this run still owns the folder (``lock``). ``last``: the step of the last save."""

    def __init__(self, cfg, lock, learner, bonus, logger, shapes: dict, step: int):
        self.cfg, self.lock, self.learner, self.bonus, self.logger, self.shapes = cfg, lock, learner, bonus, logger, shapes
        self.writer = CheckpointWriter(Path(cfg.out_dir), owner=lock.check_owner)
        self.last = step

    def due(self, step: int) -> bool:
        """True when ``step`` crossed a multiple of the checkpoint interval since the last save."""
        return crossed(self.last, step, self.cfg.checkpoint_interval)

    def save(self, state: RunState) -> None:
        self.lock.check_owner()
        self.logger.sync()  # the log on disk covers the checkpoint's steps before the checkpoint commits
        config = self.cfg.to_dict()
        self.writer.submit({"config": config, "step": state.step, "episodes": state.episodes, **self.shapes,
                            "running": [s.state() if s is not None else None for s in state.slots],
                            **self.learner.state_dict(defer=True), "rng": rng_states(state.rng, scored=state.scored_rng),
                            "exploration": state.tracker.state_dict(),
                            "solve": state.watch.state() if state.watch is not None else None,
                            "bonus": self.bonus.state_dict() if self.bonus is not None else None},
                           {"config": config, "step": state.step, **self.shapes, **self.learner.policy_state()})
        self.last = state.step
