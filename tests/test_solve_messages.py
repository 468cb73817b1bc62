"""The solve messages of ``--stop-when-solved`` with several envs (``--num-envs 3``).

Three DeepSea-4 envs step together, so their episodes end in the same vector step, three at a time:
the vector step that reaches bsuite's solve point may end episodes after it, and the watch's episode
count then passes the solve point in that very step. A run that stopped there did not train past it;
only a run resumed from a checkpoint that had gone on with the flag off did (``ran_past``).
"""
from __future__ import annotations

import numpy as np
import pytest

from pcnn_explore.cli import main
from pcnn_explore.envs.deep_sea_protocol import bsuite_solve_episode, solve_episode, successes_from_log
from pcnn_explore.run.log import read_log

#: DeepSea-4 with the CTS bonus, seed 1, three envs: solved at bsuite's logged episode 140, in a vector
#: step that ends episodes 139, 140 and 141 (the test checks this from the log)
_FLAGS = ["--env", "DeepSea-4-v0", "--bonus", "cts", "--seed", "1", "--num-envs", "3", "--learning-starts", "40",
          "--replay-capacity", "1000", "--checkpoint-every", "0", "--no-tensorboard", "--no-progress"]


def _train(out, steps: int, *extra: str, resume: bool = False) -> int:
    return main(["train", *_FLAGS, "--steps", str(steps), "--out", str(out), *extra,
                 *(["--resume"] if resume else [])])


def _solve_points(out):
    """(first episode where the rule holds, its end step, bsuite's logged solve episode, its end step,
    the episodes logged in all), read from the run's log."""
    log = read_log(out)
    wins = successes_from_log(log)
    ends = np.asarray(log["step"])[np.asarray(log["complete"]) == 1]
    first, logged = solve_episode(wins), bsuite_solve_episode(wins)
    return first, int(ends[first - 1]), logged, int(ends[logged - 1]), int(wins.size)


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """A fresh run with --stop-when-solved (its folder and what it printed)."""
    out = tmp_path_factory.mktemp("solve") / "stopped"
    import contextlib
    import io

    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert _train(out, 3000, "--stop-when-solved") == 0
    return out, text.getvalue()


def test_a_fresh_run_with_three_envs_says_it_stopped(stopped):
    out, text = stopped
    first, first_step, logged, logged_step, episodes = _solve_points(out)
    assert episodes > logged  # the case itself: episodes ended after the solve point in its vector step
    assert logged_step == read_log(out)["step"][-1]  # the run stopped in that vector step
    assert episodes - logged < 3  # ... with the other envs' episodes of it, no more
    expected = (f"solved by bsuite's deep-sea rule at episode {first} (step {first_step}), and at bsuite's logged "
                f"episode {logged}: stopped at step {logged_step} of 3000 (--stop-when-solved)")
    assert expected in text.splitlines()
    assert "trained on past it" not in text


def test_a_stopped_run_resumed_with_a_larger_budget_says_it_stopped_there(stopped, tmp_path, capsys):
    import shutil

    out = tmp_path / "again"
    shutil.copytree(stopped[0], out)
    before = (out / "checkpoint.pt").read_bytes()
    assert _train(out, 6000, "--stop-when-solved", resume=True) == 0
    text = capsys.readouterr().out
    first, first_step, logged, logged_step, _ = _solve_points(out)
    assert (f"solved by bsuite's deep-sea rule at episode {first} (step {first_step}), and at bsuite's logged "
            f"episode {logged}: stopped at step {logged_step} of 6000 (--stop-when-solved)") in text.splitlines()
    assert "trained on past it" not in text
    assert (out / "checkpoint.pt").read_bytes() == before  # nothing more was run


def test_a_run_trained_past_the_solve_point_then_resumed_with_the_flag_says_it_ran_past(stopped, tmp_path, capsys):
    out = tmp_path / "past"
    assert _train(out, 1200) == 0  # the flag off: trains on past the solve point to step 1200
    capsys.readouterr()
    first, first_step, logged, logged_step, _ = _solve_points(out)
    assert logged_step < 1200 and (logged, logged_step) == _solve_points(stopped[0])[2:4]  # the same run up to there
    assert _train(out, 3000, "--stop-when-solved", resume=True) == 0
    text = capsys.readouterr().out
    assert (f"solved by bsuite's deep-sea rule at episode {first} (step {first_step}), and at bsuite's logged "
            f"episode {logged}, but this run had trained on past it to step 1200 with --stop-when-solved off: "
            "nothing more was run (turn --stop-when-solved off to train on)") in text.splitlines()
    assert "stopped at step" not in text
    assert int(read_log(out)["step"][-1]) == 1200


def test_the_watch_tells_the_solve_step_from_a_later_one():
    from pcnn_explore.run.solve import SolveWatch

    watch = SolveWatch()
    # three envs: each vector step of 3 agent steps ends three episodes, one win in the second
    for step, wins in ((3, (False, False, False)), (6, (False, True, False)), (9, (True, True, True))):
        for w in wins:
            watch.add(0.99 if w else -0.01, step)
    # episode 5, the first win: 4 bad of 5 = 0.8 < 0.9, and bsuite logs episodes 1 ... 10: both points at 5
    assert (watch.solved_at, watch.solved_step, watch.bsuite_solved_at, watch.bsuite_solved_step) == (5, 6, 5, 6)
    assert watch.episodes == 9
    assert not watch.trained_past(6) and watch.trained_past(9)
    assert not SolveWatch().trained_past(100)  # not solved: nothing to have run past
