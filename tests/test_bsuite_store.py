"""The bsuite store: finished deep-sea logs kept across sessions, so bsuite's whole protocol can be done
in parts. A log is finished when bsuite's rule holds at a logged row within the cap or it reaches the
cap; only finished logs enter; a run whose log is there is not run again; another cap or training
profile is refused; the store reads back as scaling rows bsuite would score alike. Notebook 14's paper
profile plans all 21 sizes at bsuite's 10,000 episodes and runs through the store; the sweep does the
same with --bsuite-store."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pcnn_explore.envs.bsuite_log import read_bsuite_log, score_bsuite_logs
from pcnn_explore.envs.deep_sea_protocol import PROTOCOL_EPISODES, PROTOCOL_SIZES
from pcnn_explore.run.log import LOG_COLUMNS
from pcnn_explore.sweep import bsuite_store as bs

S, F = True, False


def _log(folder: Path, size: int, episodes: list[bool]) -> Path:
    """A DeepSea run's log.csv as the loop writes it: N steps an episode, return 0.99 with the +1."""
    folder.mkdir(parents=True, exist_ok=True)
    lines, step = [",".join(LOG_COLUMNS)], 0
    for i, s in enumerate(episodes):
        step += size
        v = dict(step=step, episode=i, length=size, complete=1, epsilon=0.05, wall_seconds=1.0, intrinsic_return=0.0,
                 intrinsic_mean=0.0, distinct_cells=3, density_updates=0)
        v["return"] = 0.99 if s else 0.0
        lines.append(",".join(str(v.get(c, "nan")) for c in LOG_COLUMNS))
    (folder / "log.csv").write_text("\n".join(lines) + "\n")
    return folder


def test_a_log_is_finished_when_bsuites_rule_holds_within_the_cap_or_it_reaches_the_cap():
    cols = lambda episode, bad: {"episode": np.array(episode), "total_bad_episodes": np.array(bad)}  # noqa: E731
    assert bs.finished(cols([1, 2, 10, 12], [1, 2, 9, 9]), cap=100)  # 9 / 12 < 0.9 at the last row
    assert not bs.finished(cols([1, 2, 10, 12], [1, 2, 10, 12]), cap=100)  # cut before the cap, never solved
    assert bs.finished(cols([1, 2, 10], [1, 2, 10]), cap=10)  # ran to its cap
    assert not bs.finished(cols([], []), cap=10)


def test_keep_takes_finished_runs_only_and_records_what_made_them(tmp_path):
    store = tmp_path / "store"
    solved = _log(tmp_path / "a", 10, [F] * 9 + [S] * 3)  # 9 / 12 < 0.9: bsuite finds it at its logged 12
    cut = _log(tmp_path / "b", 12, [F] * 30)  # stopped at 30 of 100 episodes, never solved: not finished
    capped = _log(tmp_path / "c", 12, [F] * 100)  # ran its 100 episodes
    path = bs.keep(store, "kit", 701, 10, solved, cap=100, profile="study")
    assert path == store / "kit" / "seed701" / "bsuite_id_-_deep_sea-0.csv"
    assert list(read_bsuite_log(path)["episode"])[-3:] == [9, 10, 12]
    assert bs.keep(store, "kit", 701, 12, cut, cap=100, profile="study") is None
    assert bs.keep(store, "dqn", 701, 12, capped, cap=100, profile="study") is not None
    assert bs.keep(store, "kit", 702, 10, tmp_path / "nothing", cap=100, profile="study") is None  # no log yet
    assert sorted(bs.stored(store, 100)) == [("dqn", 701, 12), ("kit", 701, 10)]
    assert json.loads((store / "store.json").read_text())["episodes"] == 100
    # per line, the profile and the settings that made its logs (these folders have no settings.json: the named line's)
    lines = json.loads((store / "store.json").read_text())["lines"]
    assert lines == {"dqn": {"profile": "study", "settings": bs.named_settings("dqn")},
                     "kit": {"profile": "study", "settings": bs.named_settings("kit")}}
    assert (lines["dqn"]["settings"]["lr"], lines["kit"]["settings"]["mmc_beta"]) == (0.001, 0.5)
    assert not set(bs.OUTSIDE_RESULTS) & set(lines["kit"]["settings"])  # no device, threads, folder, ...
    # another cap, or the same line from another training profile, is refused, not mixed in
    with pytest.raises(ValueError, match="holds runs of 100 episodes and these run 200"):
        bs.keep(store, "kit", 702, 10, solved, cap=200, profile="study")
    with pytest.raises(ValueError, match="holds line 'kit' trained with the 'study' profile and these runs use 'paper'"):
        bs.keep(store, "kit", 702, 10, solved, cap=100, profile="paper")
    with pytest.raises(ValueError, match="N = 10, 12, ..., 50"):
        bs.keep(store, "kit", 702, 11, solved, cap=100, profile="study")
    # what is in the store is not run again; the rest is, in the order asked
    keys = [("kit", 701, 10), ("kit", 701, 12), ("dqn", 701, 12), ("dqn", 701, 10)]
    assert bs.pending(keys, store, 100) == [1, 3]


def test_the_store_reads_back_as_bsuite_scores_it(tmp_path):
    store = tmp_path / "store"
    for n, episodes in ((10, [F] * 9 + [S] * 3), (12, [F] * 100), (14, [S] * 2)):
        bs.keep(store, "kit", 701, n, _log(tmp_path / f"r{n}", n, episodes), cap=100, profile="study")
    rows = bs.scaling_rows(store, 100)
    assert [(r["size"], r["solved"], r["bsuite_solve_episode"], r["counts_for_score"], r["episodes_run"]) for r in rows] == [
        (10, 1, 12, 1, 12), (12, 0, None, 0, 100), (14, 1, 1, 1, 2)]
    # bsuite's own reading of the same folder: 2 of 3 sizes solved in time
    score, solves = score_bsuite_logs(store / "kit" / "seed701", episodes=100)
    assert score == pytest.approx(2 / 3) and solves == {10: 12, 12: None, 14: 1}
    # a damaged or unfinished file is left out (run again), never read as a result
    (store / "kit" / "seed701" / "bsuite_id_-_deep_sea-3.csv").write_text("steps,episode\n1,1\n")
    assert [r["size"] for r in bs.scaling_rows(store, 100)] == [10, 12, 14]
    (store / "store.json").write_text("{")
    with pytest.raises(ValueError, match="store.json is not readable JSON"):
        bs.check_manifest(store, {"kit": "study"}, 100)


def test_the_whole_protocol_read_from_a_store_counts_what_it_holds(tmp_path):
    from pcnn_explore.experiments.agents import deep_sea_scaling as dss

    store = tmp_path / "protocol"
    for line, seed, episodes in (("kit", 701, [F] * 9 + [S] * 3), ("dqn", 701, [F] * 10_000)):
        bs.keep(store, line, seed, 10, _log(tmp_path / f"{line}{seed}", 10, episodes), cap=10_000, profile="study")
    whole = dss.whole_protocol(store)
    assert (whole["done"], whole["planned"]) == (2, 504)
    assert whole["part"] == "partial protocol: 2 of 504 runs of the whole protocol in the store"
    assert whole["sizes_done"] == {"kit": [], "paper_cts": [], "paper_cts_horizon": [], "dqn": []}  # 1 seed of 6
    kit = whole["lines"]["kit"]
    assert (kit["sizes"], kit["seeds"], kit["per_seed_score"], kit["largest_n_solved"]) == ([10], [701], [1.0], [10])
    assert whole["lines"]["dqn"]["per_seed_score"] == [0.0]
    # over the 21 sizes: kit's seed 701 solved 1 and has 20 to run, its 5 other seeds have all 21 to run
    p = kit["protocol_score"]
    assert not p["complete"] and p["sizes_in"] == []
    assert p["per_seed_lower"] == [1 / 21] + [0.0] * 5 and p["per_seed_upper"] == [1.0] * 6
    assert p["lower_mean"] == pytest.approx(1 / 126) and p["upper_mean"] == 1.0
    assert p["interval"] == [0.0, 1.0]  # [min, max] of 6 seeds' bounds: the exact interval at n = 6
    assert "between 0.01 and 1.00 [0.00, 1.00] over 6 seeds, 0 of 21 sizes in" in dss.whole_protocol_text(whole)
    assert dss.whole_protocol_text(None) == "no bsuite log of the whole protocol in the store"


def test_score_bounds_and_the_protocol_score_by_hand():
    """bsuite's score over all sizes while some are missing, against hand counts; once all are in, the
    bounds meet at the score."""
    from pcnn_explore.envs.deep_sea_protocol import score_bounds
    from pcnn_explore.experiments.agents.deep_sea_summary import protocol_score

    assert score_bounds({10: True, 12: False}, (10, 12, 14)) == (1 / 3, 2 / 3)
    assert score_bounds({10: True, 12: False, 14: True}, (10, 12, 14)) == (2 / 3, 2 / 3)
    assert score_bounds({}, PROTOCOL_SIZES) == (0.0, 1.0)
    with pytest.raises(ValueError, match=r"\[11\] are not among"):
        score_bounds({11: True}, (10, 12))
    sizes = (10, 12, 14, 16)
    rows = [{"seed": s, "size": n, "counts_for_score": int(n <= 10 + 2 * (s - 700))} for s in range(701, 707)
            for n in sizes]  # seed 701 solves N = 10 and 12, seed 702 up to 14, seeds 703-706 all four
    p = protocol_score(rows, range(701, 707), sizes)
    assert p["complete"] and p["sizes_in"] == list(sizes)
    assert p["per_seed_lower"] == p["per_seed_upper"] == [0.5, 0.75, 1.0, 1.0, 1.0, 1.0]
    assert p["lower_mean"] == p["upper_mean"] == pytest.approx(5.25 / 6)
    assert p["interval"][0] == pytest.approx(0.5, abs=1e-6) and p["interval"][1] == 1.0  # n = 6: [min, max]
    missing = protocol_score(rows[:-1], range(701, 707), sizes)  # seed 706's N = 16 not yet run
    assert not missing["complete"] and missing["sizes_in"] == [10, 12, 14]
    assert missing["per_seed_lower"][-1] == 0.75 and missing["per_seed_upper"][-1] == 1.0


def test_the_paper_profiles_plan_is_bsuites_whole_protocol():
    from pcnn_explore.experiments.agents import deep_sea_scaling as dss

    s, lines = dss.settings("paper"), dss.lines("paper")
    plan = dss.plan(s, lines)
    assert sorted({n for _, _, n, _ in plan}) == list(PROTOCOL_SIZES) and len(PROTOCOL_SIZES) == 21
    assert {cap for *_, cap in plan} == {PROTOCOL_EPISODES} == {10_000}
    assert [v.key for v in lines] == ["kit", "paper_cts", "paper_cts_horizon", "dqn"]
    assert s.seeds == (701, 702, 703, 704, 705, 706) and len(plan) == 21 * 4 * 6
    assert s.train_profile == "study" and s.mapping_seed is None and dict(s.train_overrides)["stop_when_solved"]
    assert dss.protocol_part(s) == "whole protocol"


def test_the_paper_plan_on_two_small_sizes_at_the_smoke_budget_runs_into_the_store(tmp_path, monkeypatch):
    from pcnn_explore.experiments.agents import deep_sea_scaling as dss

    monkeypatch.setenv("PCNN_EXPLORE_EXECUTOR", "local")
    s = dss.settings("paper", sizes=(10, 12), episodes=(10,))  # the paper's lines and seeds; smoke's 10 episodes
    lines, store = dss.lines("paper"), tmp_path / "protocol"
    from pcnn_explore.experiments.agents import agent_runs

    seen, real = [], agent_runs.run_specs

    def watched(specs, *a, on_done, **kw):  # the store's size as each run finishes, while the others run
        return real(specs, *a, on_done=lambda i: (on_done(i), seen.append(len(bs.stored(store, 10)))), **kw)

    monkeypatch.setattr(agent_runs, "run_specs", watched)
    first = dss.collect(s, lines, tmp_path / "out", store=store)
    assert seen == list(range(1, 49))  # each log kept as its run finished, not only when all had
    assert first["ran"]["planned"] == first["ran"]["ran"] == first["ran"]["kept"] == 2 * 4 * 6
    assert first["done"] == first["planned"] == 48 and first["part"] == "partial protocol"
    assert sorted(p.name for p in store.iterdir()) == ["dqn", "kit", "paper_cts", "paper_cts_horizon", "store.json"]
    # the same call again runs nothing: every run's finished log is in the store
    again = dss.collect(s, lines, tmp_path / "elsewhere", store=store)
    assert again["ran"]["ran"] == 0 and again["ran"]["in_store_before"] == 48 and again["rows"] == first["rows"]
    assert not (tmp_path / "elsewhere" / "runs").exists()
    summary = dss.summarise(again["rows"], again["caps"], again["labels"])
    assert list(summary) == ["kit", "paper_cts", "paper_cts_horizon", "dqn"]
    assert all(len(x["per_seed_score"]) == 6 for x in summary.values())
    # the whole protocol's reading refuses a store of another cap (these runs stopped at 10 episodes, not 10K)
    with pytest.raises(ValueError, match="holds runs of 10 episodes and this plan caps them at 10000"):
        dss.whole_protocol(store)
    assert dss.whole_protocol(tmp_path / "no store") is None and dss.whole_protocol_figure(None) is None
    whole = {"rows": again["rows"], "part": again["part"], "done": again["done"], "planned": again["planned"],
             "lines": summary}
    assert dss.whole_protocol_figure(whole, tmp_path) is not None and (tmp_path / "deep_sea_whole_protocol.png").is_file()
    # a log lost from the store is run again (the run's own folder reads it back), and only it
    (store / "dqn" / "seed703" / "bsuite_id_-_deep_sea-1.csv").unlink()
    third = dss.collect(s, lines, tmp_path / "out", store=store)
    assert third["ran"]["ran"] == 1 and third["ran"]["kept"] == 1 and third["rows"] == first["rows"]


def test_the_sweep_keeps_its_deep_sea_trials_in_the_store(tmp_path, capsys, monkeypatch):
    from pcnn_explore.cli import main

    store, out = tmp_path / "protocol", tmp_path / "sweep"
    args = ["sweep", "--envs", "DeepSea-10-v0,DeepSea-12-v0", "--lines", "kit,dqn", "--seeds", "701", "--episodes", "10",
            "--set", "stop_when_solved=true", "--set", "tensorboard=false", "--executor", "local", "--no-progress",
            "--out", str(out), "--bsuite-store", str(store)]
    assert main(args) == 0
    assert "4 finished trial logs added" in capsys.readouterr().err
    assert len(bs.stored(store, 10)) == 4
    assert main(args + ["--dry-run"]) == 0
    assert capsys.readouterr().out.strip() == f"0 trials in {out} (4 more already in {store})"
    # not bsuite's: refused before anything runs
    assert main(args[:2] + ["DeepSea-11-v0"] + args[3:]) == 2
    assert "of N = 10, 12, ..., 50 only; DeepSea-11-v0 is not one" in capsys.readouterr().err


def test_the_sweep_keeps_each_finished_log_in_the_store_before_it_ends(tmp_path, capsys, monkeypatch):
    """A sweep killed (SIGKILL: no ``finally``) after some trials finished must have kept their logs: the
    store grows trial by trial while the sweep still runs. The runner calls ``on_done`` for done trials
    only, once each."""
    from pcnn_explore.cli import main
    from pcnn_explore.sweep import runner

    store, out = tmp_path / "protocol", tmp_path / "sweep"
    seen, real = [], runner.run_trials

    def watched(trials, **kw):
        keep = kw["on_done"]

        def on_done(i):
            keep(i)
            seen.append((trials[i].env, len(bs.stored(store, 10))))  # the store, while the sweep runs
        return real(trials, **{**kw, "on_done": on_done, "max_concurrent": 1})

    monkeypatch.setattr(runner, "run_trials", watched)
    args = ["sweep", "--envs", "DeepSea-10-v0,DeepSea-12-v0", "--lines", "dqn", "--seeds", "701", "--episodes", "10",
            "--set", "tensorboard=false", "--executor", "local", "--no-progress", "--out", str(out),
            "--bsuite-store", str(store)]
    assert main(args) == 0
    assert seen == [("DeepSea-10-v0", 1), ("DeepSea-12-v0", 2)]
    assert "2 finished trial logs added" in capsys.readouterr().err


def test_the_rerendered_report_reads_14s_whole_protocol_again_from_its_committed_logs(tmp_path):
    """A log committed into the report's store after 14 ran shows in the report by a re-render alone (no
    notebook run): 14's metrics, its figure and the first screen's row; the same re-render again changes
    nothing."""
    from pcnn_explore.report import index
    from pcnn_explore.report.rerender import rerender

    from pcnn_explore.experiments.agents import deep_sea_scaling as dss
    from pcnn_explore.study import metrics_record

    out, nb = tmp_path / "report", tmp_path / "report" / "14_deep_sea_scaling"
    nb.mkdir(parents=True)
    line = {"score_mean": 0.5, "score_interval": [0.0, 1.0], "seeds": [401, 402]}
    study = {"profile": "study", "protocol": {"part": "partial protocol", "sizes": [10]},
             "lines": {"paper_cts": {"label": "DQN-CTS", **line}, "dqn": {"label": "DQN", **line}},
             **metrics_record(dss.decisions(None))}  # a study run with no store: its claims not testable
    (nb / "metrics.json").write_text(json.dumps(study))
    (out / index.RECORDS).write_text(json.dumps({"profile": "study", "notebooks": [
        {"name": "14_deep_sea_scaling", "status": "ok", "seconds": 1.0, "error": None, "failed_cell": None,
         "html": None, "output_dir": "14_deep_sea_scaling", "profile": "study", "commit": "a"}]}))
    rerender(out)
    assert json.loads((nb / "metrics.json").read_text()) == study  # no store: left as it ran
    store = nb / "protocol"
    for seed in range(701, 707):  # every seed of the kit's line solves N = 10 at episode 12 (bsuite logs 12)
        bs.keep(store, "kit", seed, 10, _log(tmp_path / f"kit{seed}", 10, [F] * 9 + [S] * 3), cap=10_000,
                profile="study")
    rerender(out)
    m = json.loads((nb / "metrics.json").read_text())
    assert m["lines"] == study["lines"] and m["protocol"] == study["protocol"]  # the study run's own values stay
    kit = m["whole_protocol"]["lines"]["kit"]["protocol_score"]
    assert (m["whole_protocol"]["done"], kit["sizes_in"], kit["per_seed_lower"]) == (6, [10], [1 / 21] * 6)
    assert m["main_figure"] == "deep_sea_whole_protocol.png" and (nb / "deep_sea_whole_protocol.png").is_file()
    assert any(t.startswith("DQN-CTS + all the kit's additions (kit): between 0.05 and 1.00")
               for t in m["whole_protocol"]["text"])
    page = (out / "index.html").read_text()
    assert "6 of 504 runs in: DQN-CTS + all the kit's additions (kit) between 0.05 and 1.00 [0.05, 1.00] (1 of 21" in page
    assert "deep_sea_whole_protocol.png" in page and "largest N solved 10, 10, 10, 10, 10, 10" in page
    # the claims decided again from the logs: the kit's line alone is in, so none is testable yet
    assert [(c["name"], c["word"], c["values"]) for c in m["claims"]] == [
        ("kit against dqn", "not testable", []), ("kit against paper_cts", "not testable", []),
        ("kit against paper_cts_horizon", "not testable", [])]
    before = (nb / "metrics.json").read_text()
    rerender(out)
    assert (nb / "metrics.json").read_text() == before


def test_the_kit_against_each_other_line_over_the_whole_protocol_by_hand():
    """14's claims, paired by seed: the kit's per-seed score, sizes not yet run counted as not solved,
    against the other line's, counted as solved; 'agrees' only when every one of 6 seeds differs upward
    (the exact interval at n = 6 is [min, max], one-sided p = 1/64)."""
    from pcnn_explore.experiments.agents import deep_sea_scaling as dss

    def line(lower, upper=None):
        return {"protocol_score": {"per_seed_lower": lower, "per_seed_upper": upper or lower}}

    kit = line([0.9, 0.9, 0.8, 1.0, 0.9, 0.9])
    whole = {"lines": {"kit": kit, "dqn": line([0.1] * 6), "paper_cts": line([0.1] * 6, [0.1, 0.1, 0.85, 0.1, 0.1, 0.1]),
                       "paper_cts_horizon": line([0.95] * 6)}}
    dqn, cts, horizon = dss.decisions(whole)
    assert [d.name for d in (dqn, cts, horizon)] == ["kit against dqn", "kit against paper_cts",
                                                     "kit against paper_cts_horizon"]
    assert (dqn.word, dqn.p, dqn.n) == ("agrees", 1 / 64, 6) and dqn.estimate == pytest.approx(0.8)
    assert dqn.interval == (pytest.approx(0.7, abs=1e-6), pytest.approx(0.9, abs=1e-6))
    assert dqn.seeds == (701, 702, 703, 704, 705, 706) and dqn.values == (0.9, 0.9, 0.8, 1.0, 0.9, 0.9)
    # one seed of the other line could still reach 0.85 with its sizes to run: the kit's 0.8 no longer clears
    # it, the differences 0.8, 0.8, -0.05, 0.9, 0.8, 0.8: the flips at least as large are the all-plus one and
    # the one that flips -0.05 alone, p = 2/64 > 0.025
    assert cts.values_b[2] == 0.85 and cts.word == "inconclusive" and cts.p == 2 / 64
    # the other line above the kit's on every seed: no agreement
    assert horizon.word != "agrees" and horizon.estimate == pytest.approx(-0.05)
    # no whole protocol: each claim not testable, too few seeds at this profile
    assert [d.word for d in dss.decisions(None)] == ["not testable"] * 3


ROOT = Path(__file__).resolve().parents[1]
SHIPPED_STORE = ROOT / "docs" / "study-report" / "14_deep_sea_scaling" / "protocol"


def test_the_shipped_whole_protocol_is_complete_and_every_score_quoted_is_what_its_logs_give():
    """The report's committed bsuite logs hold all 504 runs; each seed's score is bsuite's rule applied to
    its folder (score_bsuite_logs, which reads the csv files alone, not the scaling rows); 14's shipped
    metrics hold what the logs give now, and the README and the report's README quote those scores."""
    from pcnn_explore.experiments.agents import deep_sea_scaling as dss
    from pcnn_explore.experiments.agents.deep_sea_summary import protocol_score_text

    whole = dss.whole_protocol(SHIPPED_STORE)
    assert (whole["done"], whole["planned"]) == (504, 504)
    shipped = json.loads((SHIPPED_STORE.parent / "metrics.json").read_text())["whole_protocol"]
    assert shipped["text"] == dss.whole_protocol_text(whole).split("\n")
    readmes = [(ROOT / "README.md").read_text(), (ROOT / "docs" / "study-report" / "README.md").read_text()]
    for key, line in whole["lines"].items():
        p = line["protocol_score"]
        assert p["complete"] and p["per_seed_lower"] == p["per_seed_upper"], key
        by_rule = [score_bsuite_logs(SHIPPED_STORE / key / f"seed{s}")[0] for s in line["seeds"]]
        assert p["per_seed_lower"] == by_rule, key  # both are k / 21 from the same solves: equal, not close
        assert shipped["lines"][key]["protocol_score"] == p, key
        assert shipped["lines"][key]["largest_n_solved"] == line["largest_n_solved"], key
        assert all(protocol_score_text(p) in " ".join(r.split()) for r in readmes), key
    # 14's claims in its shipped record are what the logs give: the kit's line higher than each other line
    from pcnn_explore.study import decisions_of

    claims = decisions_of(json.loads((SHIPPED_STORE.parent / "metrics.json").read_text()))
    assert claims == dss.decisions(whole) and [d.word for d in claims] == ["agrees"] * 3
