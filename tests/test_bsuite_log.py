"""bsuite's own csv log of a DeepSea run (``pcnn_explore.envs.bsuite_log``): the rows bsuite's Logging
wrapper writes for the same actions on bsuite's own DeepSea, written and read back, scored by the
kit's rule to the kit's own score; and the sweep report's ``bsuite/`` folder."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from pcnn_explore.envs import bsuite_log as bl
from pcnn_explore.envs.deep_sea import DeepSeaEnv
from pcnn_explore.envs.deep_sea_protocol import bsuite_solve_episode, deep_sea_score, successes_from_log
from pcnn_explore.run.log import LOG, CsvLog, read_log, truncate_log


def _actions(size: int, plan: list[str]) -> list[list[int]]:
    """Per episode, N actions on bsuite's mapping (seed 42): "win" goes right at every step (the +1),
    "left" goes left at every step (bad at once), "late" goes right but left on the last step (bad on
    the last diagonal cell)."""
    mapping = DeepSeaEnv(size).right
    out = []
    for kind in plan:
        row, col, acts = 0, 0, []
        for t in range(size):
            right = kind == "win" or (kind == "late" and t < size - 1)
            acts.append(int(mapping[row, col]) if right else 1 - int(mapping[row, col]))
            col = min(col + 1, size - 1) if right else max(col - 1, 0)
            row += 1
        out.append(acts)
    return out


#: 25 episodes on DeepSea-10: 9 bad then 2 +1s (9 bad of 11: the rule holds at 11, bsuite logs 12), ...
PLAN = ["left"] * 5 + ["late"] * 4 + ["win", "win", "left", "late"] + ["win"] * 3 + ["left"] * 4 + ["win"] * 5


def _kit_log(tmp_path: Path, size: int, plan: list[str], cut: bool = False, name: str = "run") -> Path:
    """The kit's log.csv of these actions on the kit's DeepSeaEnv, written by the kit's CsvLog."""
    env, out = DeepSeaEnv(size), tmp_path / name
    out.mkdir(parents=True)
    truncate_log(out / LOG, 0)
    log, step = CsvLog(out / LOG), 0
    for e, acts in enumerate(_actions(size, plan)):
        env.reset()
        ret = 0.0
        for a in acts[: size // 2 if cut and e == len(plan) - 1 else size]:
            _, r, done, _, _ = env.step(a)
            ret += r
            step += 1
        log.write({"step": step, "episode": e, "return": ret, "length": len(acts), "complete": int(done)})
    log.close()
    return out


def _bsuite_log(tmp_path: Path, size: int, plan: list[str]) -> Path:
    """bsuite's own csv log: bsuite's Logging wrapper and csv Logger around bsuite's DeepSea."""
    from bsuite.environments.deep_sea import DeepSea
    from bsuite.logging import csv_logging

    env = csv_logging.wrap_environment(DeepSea(size, mapping_seed=42, seed=0), bl.bsuite_id(size),
                                       str(tmp_path / "bsuite"))
    for acts in _actions(size, plan):
        env.reset()
        for a in acts:
            env.step(a)
    return tmp_path / "bsuite"


def test_ids_and_file_names_are_bsuites():
    assert bl.bsuite_id(10) == "deep_sea/0" and bl.bsuite_id(24) == "deep_sea/7" and bl.bsuite_id(50) == "deep_sea/20"
    assert bl.bsuite_file_name(24) == "bsuite_id_-_deep_sea-7.csv"
    assert bl.size_of_bsuite_file("x/bsuite_id_-_deep_sea-20.csv") == 50
    for bad in (4, 11, 52, True):
        with pytest.raises(ValueError, match="bsuite_id"):
            bl.bsuite_id(bad)
    with pytest.raises(ValueError):
        bl.size_of_bsuite_file("bsuite_id_-_deep_sea-21.csv")


def test_rows_are_those_bsuites_logging_wrapper_writes_for_the_same_actions(tmp_path):
    theirs_dir = _bsuite_log(tmp_path, 10, PLAN)
    (path,) = theirs_dir.iterdir()
    assert path.name == bl.bsuite_file_name(10) == "bsuite_id_-_deep_sea-0.csv"
    with open(path) as f:
        assert next(csv.reader(f)) == list(bl.BSUITE_COLUMNS)
    theirs = bl.read_bsuite_log(path)
    ours = bl.bsuite_rows(read_log(_kit_log(tmp_path, 10, PLAN)))
    # logged at 1..10, 12, 14, 17, 20, 25
    assert [r["episode"] for r in ours] == list(theirs["episode"]) == [*range(1, 11), 12, 14, 17, 20, 25]
    for c in bl.BSUITE_COLUMNS:
        mine = [r[c] for r in ours]
        if c in ("total_return", "episode_return"):  # the kit's log holds 6 significant digits of each return
            np.testing.assert_allclose(mine, theirs[c], atol=1e-7, err_msg=c)
        else:
            np.testing.assert_array_equal(mine, theirs[c], err_msg=c)
    # by hand, at episode 12: 9 bad of the first 9, then win, win, left -> 10 bad; 2 +1s; 120 steps;
    # returns 10 x 0.99 - ... : 2 x 0.99, 4 "late" episodes of 9 rights (-0.009 each), 6 "left" of no right (0)
    row = ours[10]
    assert (row["steps"], row["episode"], row["total_bad_episodes"], row["denoised_return"]) == (120, 12, 10, 2.0)
    assert row["total_return"] == pytest.approx(2 * 0.99 - 4 * 0.009)
    assert (row["episode_len"], row["episode_return"]) == (10, 0.0)


def test_written_log_reads_back_and_scores_as_the_kit_does(tmp_path):
    run = _kit_log(tmp_path, 10, PLAN, cut=True)  # the last episode cut mid-way: no episode for bsuite
    log = read_log(run)
    path = bl.write_bsuite_log(run, tmp_path / "results", 10)
    assert path == tmp_path / "results" / "bsuite_id_-_deep_sea-0.csv"
    back = bl.read_bsuite_log(path)
    assert list(back["episode"]) == [*range(1, 11), 12, 14, 17, 20]  # 24 complete episodes: 25 is not logged
    successes = successes_from_log(log)
    assert len(successes) == 24
    # the rule: 9 bad of 10 is a tie (not solved), 9 of 11 holds at 11 (not logged), 10 of 12 < 0.9 x 12 at 12
    assert bsuite_solve_episode(successes) == bl.bsuite_log_solve_episode(back) == 12
    assert bl.bsuite_log_solve_episode(back, episodes=11) is None
    # a second size: DeepSea-12 never finds the +1 in 20 episodes
    log12 = read_log(_kit_log(tmp_path, 12, ["left"] * 20, name="run12"))
    assert bl.write_bsuite_log(log12, tmp_path / "results", 12).name == "bsuite_id_-_deep_sea-1.csv"
    score, solves = bl.score_bsuite_logs(tmp_path / "results")
    kit = deep_sea_score({10: bsuite_solve_episode(successes), 12: bsuite_solve_episode(successes_from_log(log12))})
    assert solves == {10: 12, 12: None} and score == kit == 0.5
    # the same rows the wrapper would write, so bsuite's own loader reads the folder
    from bsuite.logging import csv_load

    df = csv_load.load_one_result_set(str(tmp_path / "results"))
    assert sorted(set(df["bsuite_id"])) == ["deep_sea/0", "deep_sea/1"] and sorted(set(df["size"])) == [10, 12]


def test_a_run_without_a_complete_episode_writes_nothing(tmp_path):
    log = {"return": np.array([0.99]), "length": np.array([5]), "complete": np.array([0])}
    assert bl.bsuite_rows(log) == [] and bl.write_bsuite_log(log, tmp_path / "r", 10) is None
    assert not (tmp_path / "r").exists()
    with pytest.raises(ValueError, match="no bsuite_id"):
        bl.write_bsuite_log(log, tmp_path / "r", 4)


def test_the_sweep_report_writes_a_bsuite_results_folder_per_variant_and_seed(tmp_path):
    from pcnn_explore.sweep import deep_sea_report as dsr

    trials = []
    runs = {("cts_mmc", 10, 0): PLAN, ("cts_mmc", 12, 0): ["left"] * 20, ("cts_mmc", 10, 1): ["win"] * 3,
            ("dqn", 6, 0): ["left"] * 5,  # no bsuite id: no file
            ("pixelcnn_mmc,pg_scale=1", 10, 0): ["late"] * 3}
    for (variant, size, seed), plan in runs.items():
        folder = f"DeepSea-{size}-v0/{variant}/seed{seed}"
        _kit_log(tmp_path, size, plan, name=folder)
        trials.append({"env": f"DeepSea-{size}-v0", "variant": variant, "seed": seed, "line": variant,
                       "folder": folder, "overrides": {}})
    trials.append({"env": "DeepSea-10-v0", "variant": "dqn", "seed": 1, "line": "dqn", "folder": "other_map",
                   "overrides": {"mapping_seed": 7}})  # another mapping: not bsuite's task
    _kit_log(tmp_path, 10, ["win"], name="other_map")
    (tmp_path / "sweep.json").write_text(json.dumps({"trials": trials}))
    paths = dsr.write_deep_sea_report(tmp_path)
    root = tmp_path / "report" / "bsuite"
    assert paths[-1] == root
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert files == ["cts_mmc/seed0/bsuite_id_-_deep_sea-0.csv", "cts_mmc/seed0/bsuite_id_-_deep_sea-1.csv",
                     "cts_mmc/seed1/bsuite_id_-_deep_sea-0.csv",
                     "pixelcnn_mmc,pg_scale=1/seed0/bsuite_id_-_deep_sea-0.csv"]
    # seed 0 of cts_mmc: 10 solved at bsuite's 12 (< 2^10 + 100), 12 never: 0.5, as deep_sea_score.csv has it
    assert bl.score_bsuite_logs(root / "cts_mmc" / "seed0") == (0.5, {10: 12, 12: None})
    (score,) = [r for r in csv.DictReader(open(tmp_path / "report" / "deep_sea_score.csv")) if r["variant"] == "cts_mmc"]
    # seed 1 ran only DeepSea-10 (solved at 1): the report counts the variant's missing size 12 as not
    # solved (1 of 2); bsuite scores the sizes its folder holds (1 of 1)
    assert score["per_seed_scores"] == "0:0.5;1:0.5"
    assert bl.score_bsuite_logs(root / "cts_mmc" / "seed1") == (1.0, {10: 1})
    # the protocol's first episodes only: with 11, bsuite's rows stop at 10
    assert list(bl.read_bsuite_log(dsr.write_bsuite_logs(tmp_path, tmp_path / "cut", episodes=11)[0])["episode"]) == \
        list(range(1, 11))


_WHOLE = ("steps,episode,total_return,episode_len,episode_return,total_bad_episodes,denoised_return\n"
          "10,1,0.0,10,0.0,1,0.0\n20,2,0.99,10,0.99,1,1.0\n")


@pytest.mark.parametrize("data, said", [
    (_WHOLE[:_WHOLE.rindex(",") + 1].encode(), r"torn \(its last line has no line end"),  # cut at a comma
    (_WHOLE[:-1].encode(), r"torn \(its last line has no line end"),  # the whole last row, its line end not written
    (_WHOLE.replace("0.99,10,0.99,1,1.0", "0.99,").encode(), r"torn \(line 3 has 4 fields, the header 7\)"),
    (_WHOLE.replace("1,1.0\n", "1,1.0,7\n").encode(), r"torn \(line 3 has 8 fields, the header 7\)"),
    (_WHOLE.replace("20,2,0.99", "20,2,0.9x").encode(), r"line 3: total_return '0.9x' is not a finite number"),
    (_WHOLE.replace("20,2,", "20,2.5,").encode(), r"line 3: episode '2.5' is not an integer"),
    (_WHOLE.replace("20,2,0.99", "20,2,nan").encode(), r"line 3: total_return 'nan' is not a finite number"),
    (b"\xff\xfe\x00\x81 not text", r"not a bsuite deep_sea log \(not UTF-8 text"),
    (b"steps,episode\n1,1\n", r"missing columns total_return, episode_len"),
    (b"", r"missing columns steps, episode"),
])
def test_a_torn_partial_or_unreadable_log_is_a_valueerror_naming_the_file(tmp_path, data, said):
    """A write cut short (a last row cut at a comma gives DictReader a None; a last row without its line
    end may have its last number cut), garbage or missing columns: one ValueError naming the file and
    what is wrong, never a TypeError from float(None) or a log read as if whole."""
    path = tmp_path / "bsuite_id_-_deep_sea-0.csv"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=said) as e:
        bl.read_bsuite_log(path)
    assert str(e.value).startswith(f"{path}: ") and "\n" not in str(e.value)


def test_a_whole_log_reads_with_either_line_end(tmp_path):
    for name, text in (("lf.csv", _WHOLE), ("crlf.csv", _WHOLE.replace("\n", "\r\n"))):  # bsuite's csv writer: \r\n
        (tmp_path / name).write_bytes(text.encode())
        cols = bl.read_bsuite_log(tmp_path / name)
        assert cols["episode"].tolist() == [1, 2] and cols["total_bad_episodes"].dtype == np.int64
        assert cols["total_return"].tolist() == [0.0, 0.99] and cols["steps"].tolist() == [10, 20]
