"""Every check before a sweep writes anything or starts a worker: :func:`plan` (each trial's
settings against what its folder holds) and :func:`check_trials` (that, the executor and the shares
asked for, and no other process running in an unfinished trial's folder)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from pcnn_explore.checks import RunError
from pcnn_explore.sweep.executors import check_shares, choose_executor
from pcnn_explore.sweep.folders import RESULT_FILE, differences, extends, read_json, stored_settings, sweep_error
from pcnn_explore.sweep.grid import SweepError, Trial

__all__ = ["plan", "check_trials"]


def plan(trials: Sequence[Trial], on_mismatch: str = "error") -> list[tuple[Trial, dict, bool]]:
    """Check every trial before anything runs: ``[(trial, resolved settings, finished)]``.

    A folder holding another trial's settings raises :class:`SweepError` naming both
    (``on_mismatch="error"``) or has its run files replaced (``"replace"``, what the notebooks ask).
    A folder holding the same trial with fewer ``steps`` is the trial to extend: it resumes from its
    checkpoint (a larger ``--set steps=N`` on a finished sweep runs its trials on).
    """
    if on_mismatch not in ("error", "replace"):
        raise ValueError(f"on_mismatch must be 'error' or 'replace', got {on_mismatch!r}")
    seen: dict[str, str] = {}
    out = []
    for t in trials:
        key = str(Path(t.out_dir).resolve())
        if key in seen:
            raise SweepError(f"two trials share the folder {key} ({seen[key]} and {t.name}): give each its own")
        seen[key] = t.name
        cfg = t.config()
        wanted = cfg.to_dict()
        out.append((t, wanted, _finished(t, cfg, wanted, on_mismatch)))
    return out


def _finished(t: Trial, cfg, wanted: dict, on_mismatch: str) -> bool:
    """Whether the folder of ``t`` holds this trial finished (its steps done, or solved where it
    stops when solved); raises SweepError for another trial's folder (``on_mismatch="error"``)."""
    folder = Path(t.out_dir)
    if folder.exists() and not folder.is_dir():
        raise SweepError(f"{folder} is a file, not a trial folder: remove it or choose another --out")
    stored, where = stored_settings(folder)
    if stored is None:
        return False
    diff = differences(stored, wanted) if stored else ["no readable settings"]
    if extends(stored, wanted):
        diff = []
    if diff and on_mismatch == "error":
        raise SweepError(f"trial folder {folder} holds other settings than {t.name} asks for "
                         f"({'; '.join(diff[:6])}{'; ...' if len(diff) > 6 else ''}; stored in {where}): "
                         "choose another --out, or remove that folder to run it afresh")
    result = read_json(folder / RESULT_FILE)
    return not diff and isinstance(result, dict) and (
        result.get("steps", -1) >= cfg.steps  # a run stopped once solved does no more either
        or (cfg.stop_when_solved and result.get("solved_episode") is not None))


def check_trials(trials: Sequence[Trial], *, address: str | None = None, cpus_per_trial: float = 1.0,
                 gpus_per_trial: float = 0.0, max_concurrent: int | None = None,
                 on_mismatch: str = "error", executor: str = "auto") -> list[tuple[Trial, dict, bool]]:
    """Every check :func:`pcnn_explore.sweep.runner.run_trials` makes before it writes anything or
    starts a worker (the executor, the shares asked for, a GPU where one is asked for, each trial's
    settings and folder: :func:`plan`, no other process running in an unfinished trial's folder);
    writes nothing.

    Returns :func:`plan`'s ``[(trial, resolved settings, finished)]``; raises :class:`SweepError`.
    """
    from pcnn_explore.run.lock import probe

    kind = choose_executor(executor, address)
    check_shares(kind, address, cpus_per_trial, gpus_per_trial, max_concurrent)
    planned = plan(trials, on_mismatch)
    for t, _, finished in planned:
        if not finished:
            try:
                probe(t.out_dir)
            except RunError as e:
                raise sweep_error(e) from None
    return planned
