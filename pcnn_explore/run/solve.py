"""bsuite's deep-sea rule, followed episode by episode: :class:`SolveWatch`.

Every DeepSea run follows it (its counts go into each checkpoint), so that ``stop_when_solved`` may
be turned on at a resume; the rule stops the run only where that flag is on, and then at the first of
bsuite's logged episodes where it holds, so that the run's bsuite log (and bsuite's score of it) holds
the solve exactly as a run on to the cap would have logged it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from pcnn_explore.envs.deep_sea_protocol import (SUCCESS_RETURN, below_bad_ratio, bsuite_solve_episode, is_bsuite_logged,
                                                 solve_episode, successes_from_log)
from pcnn_explore.run.log import read_log

__all__ = ["SolveWatch"]


class SolveWatch:
    """bsuite's deep-sea rule, followed episode by episode: solved at the first episode e where
    (bad episodes so far) / e < 0.9 (``solved_at``, as :func:`pcnn_explore.envs.deep_sea_protocol.solve_episode`
    decides it on the log), and at the first of bsuite's logged episodes where it holds
    (``bsuite_solved_at``, as :func:`~pcnn_explore.envs.deep_sea_protocol.bsuite_solve_episode` decides
    it): there ``stop_when_solved`` stops the run. ``*_step``: the agent step at which that episode ended."""

    def __init__(self, episodes: int = 0, bad: int = 0):
        self.episodes, self.bad, self.solved_at, self.solved_step = episodes, bad, None, None
        self.bsuite_solved_at, self.bsuite_solved_step = None, None

    @classmethod
    def for_run(cls, cfg, saved: dict | None) -> "SolveWatch | None":
        """The watch of a run (``cfg``) starting from checkpoint ``saved`` (None: a fresh run); None
        where the env is not DeepSea."""
        if not (isinstance(cfg.env, str) and cfg.env.startswith("DeepSea-")):
            return None
        return cls.from_saved(saved, Path(cfg.out_dir)) if saved is not None else cls()

    def state(self) -> dict:
        """The counts, for a checkpoint (a resumed run takes them from there, not from its log)."""
        return {"episodes": self.episodes, "bad": self.bad,
                **{key: -1 if getattr(self, key) is None else getattr(self, key) for key in _POINTS}}

    @classmethod
    def from_saved(cls, saved: dict, out: Path) -> "SolveWatch":
        """The counts of a checkpoint ``saved``; one written before they were all kept: from the log's
        episodes up to its step (which :func:`pcnn_explore.run.resume.check_log` has matched with it)."""
        st = saved.get("solve")
        if not isinstance(st, dict) or not all(key in st for key in _POINTS):
            return cls.from_log(out, int(saved["step"]))
        watch = cls(int(st["episodes"]), int(st["bad"]))
        for key in _POINTS:
            setattr(watch, key, int(st[key]) if int(st[key]) >= 0 else None)
        return watch

    @classmethod
    def from_log(cls, out: Path, step: int) -> "SolveWatch":
        """The counts of the episodes a resumed run's log holds up to ``step`` (its checkpoint)."""
        wins, ends = np.zeros(0, bool), np.zeros(0, np.int64)
        if (out / "log.csv").exists():
            log = read_log(out)
            kept = np.asarray(log["step"]) <= step  # rows past the checkpoint are dropped when the run resumes
            wins = successes_from_log({k: np.asarray(log[k])[kept] for k in ("return", "complete")})
            ends = np.asarray(log["step"])[kept][np.asarray(log["complete"])[kept] == 1]
        watch = cls(int(wins.size), int((~wins).sum()))
        watch.solved_at, watch.bsuite_solved_at = solve_episode(wins), bsuite_solve_episode(wins)
        if watch.solved_at is not None:
            watch.solved_step = int(ends[watch.solved_at - 1])
        if watch.bsuite_solved_at is not None:
            watch.bsuite_solved_step = int(ends[watch.bsuite_solved_at - 1])
        return watch

    def trained_past(self, step: int) -> bool:
        """Whether a run at agent step ``step`` had trained on past the vector step that reached
        bsuite's solve point (``bsuite_solved_step``): only a run that went on with ``stop_when_solved``
        off does. Several envs may end episodes in the vector step that reaches it, so the episode
        count may pass ``bsuite_solved_at`` in that same step: the step, not the count, tells."""
        return self.bsuite_solved_step is not None and step > self.bsuite_solved_step

    def add(self, episode_return: float, step: int | None = None) -> None:
        """Count one complete episode (its extrinsic return), which ended at agent step ``step``."""
        self.episodes += 1
        self.bad += not episode_return > SUCCESS_RETURN
        if below_bad_ratio(self.bad, self.episodes):
            if self.solved_at is None:
                self.solved_at, self.solved_step = self.episodes, step
            if self.bsuite_solved_at is None and is_bsuite_logged(self.episodes):
                self.bsuite_solved_at, self.bsuite_solved_step = self.episodes, step


#: the solve points a checkpoint keeps (-1: not reached)
_POINTS = ("solved_at", "solved_step", "bsuite_solved_at", "bsuite_solved_step")
