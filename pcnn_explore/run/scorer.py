"""The bonus of each agent step, computed now or in one worker thread: :class:`BonusScorer`."""
from __future__ import annotations

import torch

__all__ = ["BonusScorer", "draw_scored"]


class _Done:
    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


class BonusScorer:
    """Runs ``bonus.step(frame)`` now, or (``threaded``) in one worker thread, in submission order.

    PyTorch releases the GIL inside its operators, so the density update overlaps the env step and
    the DQN gradient step. Results are identical either way: the density model sees the same frames
    in the same order, and nothing else touches it. On CUDA the worker uses its own stream.
    """

    def __init__(self, bonus, threaded: bool, device: str):
        self.bonus = bonus
        self.pool = None
        self.stream = None
        if threaded:
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="density")
            if str(device).startswith("cuda"):
                self.stream = torch.cuda.Stream(device=device)
                # the model's weights (built or loaded on the default stream) must be ready first
                self.stream.wait_stream(torch.cuda.current_stream(device))

    @classmethod
    def for_run(cls, cfg, bonus) -> "BonusScorer | None":
        """The run's scorer (None without a bonus): in a worker thread where ``cfg.bonus_thread`` says
        so, by default on CUDA."""
        if bonus is None:
            return None
        threaded = cfg.bonus_thread if cfg.bonus_thread is not None else cfg.device.startswith("cuda")
        return cls(bonus, threaded=threaded, device=cfg.device)

    def _step(self, frame):
        if self.stream is not None:
            with torch.cuda.stream(self.stream):
                record = self.bonus.step(frame)
            # Nothing of this update is left in flight: checkpoints read the weights from the
            # main thread's stream.
            self.stream.synchronize()
            return record
        return self.bonus.step(frame)

    def submit(self, frame):
        """A handle whose ``result()`` is the bonus record of ``frame``."""
        if self.pool is None:
            return _Done(self.bonus.step(frame))
        return self.pool.submit(self._step, frame)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)


def draw_scored(scorer: BonusScorer | None, fraction: float, rng, n: int) -> list[bool]:
    """Which of the ``n`` envs' agent steps get a bonus: every one (``fraction`` >= 1), or each with
    probability ``fraction`` (Reactor's sub-sampling, drawn from ``rng``); none without a scorer."""
    return [scorer is not None and (fraction >= 1.0 or rng.random() < fraction) for _ in range(n)]
