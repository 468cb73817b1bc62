"""``stop_when_solved``: a DeepSea run ends at the first of bsuite's logged episodes where bsuite's rule
holds (so bsuite's log of it scores as a run to the cap would), agrees with the rule read from its log,
resumes and extends to nothing more, and only DeepSea takes it."""
from __future__ import annotations

import numpy as np
import pytest

from pcnn_explore.checks import SettingError
from pcnn_explore.envs.deep_sea_protocol import (bsuite_logged_episodes, bsuite_solve_episode, is_bsuite_logged,
                                                 solve_episode, successes_from_log)
from pcnn_explore.run.config import TrainConfig
from pcnn_explore.run.loop import train
from pcnn_explore.run.solve import SolveWatch
from pcnn_explore.run.log import read_log


def test_watch_follows_the_rule_episode_by_episode():
    for wins in ([False] * 9 + [True], [False] * 9 + [True, True], [True], [False, False, True, False, True] * 3):
        watch = SolveWatch()
        for w in wins:
            watch.add(0.99 if w else -0.01)
        assert watch.solved_at == solve_episode(np.array(wins)), wins
        assert watch.bsuite_solved_at == bsuite_solve_episode(np.array(wins)), wins
    # the rule first holds at 11, which bsuite does not log: bsuite finds it at 12
    watch = SolveWatch()
    for w in [False] * 9 + [True, True]:
        watch.add(0.99 if w else -0.01)
    assert (watch.solved_at, watch.bsuite_solved_at) == (11, None)  # 9 bad of 10 is not below 0.9; 11 is not logged
    watch = SolveWatch()
    for k, w in enumerate([False] * 9 + [True, True, True]):
        watch.add(0.99 if w else -0.01, step=4 * (k + 1))
    assert (watch.solved_at, watch.solved_step, watch.bsuite_solved_at, watch.bsuite_solved_step) == (11, 44, 12, 48)
    watch = SolveWatch()
    for r in (0.0, -0.004, 0.5):  # a return of 0.5 is not the +1 (SUCCESS_RETURN is exclusive)
        watch.add(r)
    assert (watch.episodes, watch.bad, watch.solved_at) == (3, 3, None)


def test_one_episodes_logged_test_is_bsuites_schedule():
    logged = set(bsuite_logged_episodes(100_000).tolist())
    assert [e for e in range(0, 100_001) if is_bsuite_logged(e)] == sorted(logged)
    assert [is_bsuite_logged(e) for e in (1, 10, 11, 12, 13, 17, 25, 120, 125, 1700, 2500)] == [
        True, True, False, True, False, True, True, True, False, True, True]


def test_a_checkpoint_from_before_the_logged_stop_takes_its_points_from_the_log(tmp_path):
    full = train(_cfg(tmp_path, "full", 1_200, stop=False, every=400), progress=False)
    wins = successes_from_log(read_log(full.out_dir))
    old = {"step": 1_200, "solve": {"episodes": len(wins), "bad": int((~wins).sum()), "solved_at": -1, "solved_step": -1}}
    watch = SolveWatch.from_saved(old, tmp_path / "full")
    assert (watch.solved_at, watch.bsuite_solved_at) == (solve_episode(wins), bsuite_solve_episode(wins))
    assert watch.bsuite_solved_at is not None and watch.bsuite_solved_step == 4 * watch.bsuite_solved_at


def test_only_deep_sea_takes_it():
    with pytest.raises(SettingError, match="stop_when_solved"):
        TrainConfig.preset("smoke", env="MiniGrid-Empty-5x5-v0", stop_when_solved=True)
    assert TrainConfig.preset("smoke", env="DeepSea-4-v0", stop_when_solved=True).stop_when_solved


def _cfg(tmp_path, name, steps, stop=True, every=0):
    # DeepSea-4 with the bonus: the +1 comes within a few hundred steps
    return TrainConfig.preset("study", env="DeepSea-4-v0", bonus="cts", seed=3, steps=steps, learning_starts=40,
                              replay_capacity=1_000, checkpoint_every=every, out_dir=str(tmp_path / name),
                              tensorboard=False, stop_when_solved=stop)


def test_a_run_stops_where_its_log_says_it_was_solved_and_resuming_adds_nothing(tmp_path):
    full = train(_cfg(tmp_path, "full", 4_000, stop=False), progress=False)
    wins = successes_from_log(read_log(full.out_dir))
    first, solved = solve_episode(wins), bsuite_solve_episode(wins)
    assert solved is not None and solved * 4 < 4_000  # solved well within the budget
    stopped = train(_cfg(tmp_path, "stop", 4_000), progress=False)
    assert stopped.solved_episode == first and stopped.bsuite_solved_episode == solved
    assert stopped.steps == solved * 4  # one env: 4 steps per episode
    assert bsuite_solve_episode(successes_from_log(read_log(stopped.out_dir))) == solved  # bsuite sees the solve
    log, ref = read_log(stopped.out_dir), read_log(full.out_dir)
    assert len(log["step"]) == solved
    for name in log:  # the same run up to the stop
        if name != "wall_seconds":
            np.testing.assert_array_equal(log[name], ref[name][:solved], err_msg=name)
    before = (tmp_path / "stop" / "checkpoint.pt").read_bytes()
    again = train(_cfg(tmp_path, "stop", 8_000), resume=True, progress=False)  # a larger budget: still solved
    assert again.steps == stopped.steps and again.bsuite_solved_episode == solved
    assert (tmp_path / "stop" / "checkpoint.pt").read_bytes() == before
    on = train(_cfg(tmp_path, "stop", 4_000, stop=False), resume=True, progress=False)  # turned off: trains on
    assert on.steps == 4_000 and on.solved_episode is None
    np.testing.assert_array_equal(read_log(on.out_dir)["return"], ref["return"])


def test_the_cli_says_where_it_stopped(tmp_path, capsys):
    from pcnn_explore.cli import main

    out = tmp_path / "cli"
    code = main(["train", "--env", "DeepSea-4-v0", "--bonus", "cts", "--seed", "3", "--steps", "4000",
                 "--learning-starts", "40", "--replay-capacity", "1000", "--no-tensorboard", "--stop-when-solved",
                 "--no-progress", "--out", str(out)])
    assert code in (0, None)
    text = capsys.readouterr().out
    assert "solved by bsuite's deep-sea rule at episode" in text and "of 4000 (--stop-when-solved)" in text
