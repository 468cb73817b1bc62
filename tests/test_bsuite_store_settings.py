"""The bsuite store knows what made its logs: per line, the resolved settings that change results (not the
device, threads, output folder or TensorBoard). A sweep whose settings differ from the stored line's is
refused in one line naming each difference (``setting: stored -> given``), exit 2, before any run; a store
from before settings were recorded (the report's committed one) has its lines taken as today's named
lines, said once, and recorded; 14's whole protocol names a line's settings that differ from the named
line's."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pcnn_explore.run.config import TrainConfig
from pcnn_explore.run.lines import LINES, horizon_bonus_scale
from pcnn_explore.run.variants import variant_overrides
from pcnn_explore.sweep import bsuite_store as bs

from test_bsuite_store import F, S, _log

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_STORE = ROOT / "docs" / "study-report" / "14_deep_sea_scaling" / "protocol"


def _sweep(cwd: Path, *flags: str) -> subprocess.CompletedProcess:
    """``pcnn-explore sweep`` in a process of its own (the package this interpreter imports)."""
    return subprocess.run([sys.executable, "-m", "pcnn_explore", "sweep", *flags], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _config(line: str, size: int, **changed) -> dict:
    """The resolved TrainConfig of a run of the named line on DeepSea-``size`` (``changed``: settings given on top)."""
    env, v = f"DeepSea-{size}-v0", LINES[line]
    return TrainConfig.preset("study", env=env, steps=10 * size, **{**variant_overrides(v.variant), **v.fields_for(env),
                                                                    **changed}).to_dict()


def test_a_lines_record_leaves_out_what_does_not_change_results_and_holds_for_every_size():
    dqn = bs.result_settings(_config("dqn", 10), "dqn")
    assert (dqn["lr"], dqn["bonus"], dqn["mapping_seed"], dqn["mapping_rule"], dqn["train_every"]) == (
        0.001, "none", 42, "bsuite", 2)
    assert not {"env", "seed", "steps", "device", "num_threads", "out_dir", "tensorboard", "learn_step"} & set(dqn)
    # where and how the run goes changes nothing: the same record
    assert bs.result_settings(_config("dqn", 50, device="cuda", num_threads=4, tensorboard=False, out_dir="x",
                                      stop_when_solved=True, checkpoint_every=0, log_every=7), "dqn") == dqn
    assert bs.named_settings("dqn") == dqn
    # the horizon reading's bonus scale is one per size: its rule, the same record at N = 10 and 50
    h10, h50 = (bs.result_settings(_config("paper_cts_horizon", n), "paper_cts_horizon") for n in (10, 50))
    assert _config("paper_cts_horizon", 10)["bonus_scale"] == horizon_bonus_scale(10) != horizon_bonus_scale(50)
    assert h10 == h50 == bs.named_settings("paper_cts_horizon") and h10["bonus_scale"] == "per size N: cts_horizon"
    fixed = bs.result_settings(_config("paper_cts_horizon", 14, bonus_scale=0.5), "paper_cts_horizon")
    assert bs.settings_differences(h10, fixed) == {"bonus_scale": ("per size N: cts_horizon", 0.5)}
    # each difference named, stored -> given
    lr = bs.settings_differences(dqn, bs.result_settings(_config("dqn", 10, lr=0.5, hidden=64), "dqn"))
    assert lr == {"hidden": (None, 64), "lr": (0.001, 0.5)}
    assert bs.differences_text(lr) == "hidden: auto -> 64; lr: 0.001 -> 0.5"
    # a sweep's line name with an axis value is that variant with the setting
    assert bs.named_settings("dqn,lr=0.5") == bs.result_settings(_config("dqn", 10, lr=0.5), "dqn")
    with pytest.raises(ValueError):
        bs.named_settings("no_such_line")


def _legacy_store(tmp_path: Path) -> Path:
    """The report's committed store.json (no settings recorded) with one of its logs: DQN, seed 701, N = 10."""
    store = tmp_path / "protocol"
    (store / "dqn").mkdir(parents=True)
    shutil.copy2(SHIPPED_STORE / "store.json", store / "store.json")
    shutil.copytree(SHIPPED_STORE / "dqn" / "seed701", store / "dqn" / "seed701")
    assert "settings" not in json.dumps(json.loads((store / "store.json").read_text()))
    return store


def test_a_sweep_with_other_settings_than_the_stored_lines_is_refused_naming_them(tmp_path):
    """The review's case: ``--set lr=0.5`` on a store of lr = 0.001 logs skipped them as "already in S" and
    would have added lr = 0.5 logs under the same line. Refused now, before anything runs; the settings that
    change nothing (threads, device, checkpoints) are accepted."""
    store = _legacy_store(tmp_path)
    base = ["--envs", "DeepSea-10-v0", "--lines", "dqn", "--seeds", "701", "--episodes", "10000", "--set",
            "stop_when_solved=true", "--set", "tensorboard=false", "--executor", "local", "--no-progress",
            "--bsuite-store", str(store)]
    logs = {p: p.read_bytes() for p in store.rglob("*.csv")}
    dry = _sweep(tmp_path, *base, "--out", "dry", "--dry-run")
    said = (f"{store} records no settings for its lines (a store from before they were recorded): dqn, kit, "
            "paper_cts, paper_cts_horizon taken as today's named lines")
    assert dry.returncode == 0, dry.stderr
    assert dry.stderr.splitlines() == [said + " (a run records them)"]
    assert dry.stdout.splitlines()[-1] == f"0 trials in dry (1 more already in {store})"
    assert "settings" not in (store / "store.json").read_text()  # a dry run writes nothing
    first = _sweep(tmp_path, *base, "--out", "first")
    assert first.returncode == 0, first.stderr
    assert first.stderr.splitlines()[0] == said + "; their settings recorded in store.json"  # said once
    record = json.loads((store / "store.json").read_text())
    assert record["episodes"] == 10_000 and sorted(record["lines"]) == ["dqn", "kit", "paper_cts", "paper_cts_horizon"]
    assert all(r == {"profile": "study", "settings": bs.named_settings(k)} for k, r in record["lines"].items())
    before = (store / "store.json").read_bytes()
    for given, named in ((["--set", "lr=0.5"], "(lr: 0.001 -> 0.5)"),
                         (["--set", "mapping_rule=kit_v1"], "mapping seed 42, rule kit_v1"),
                         (["--set", "hidden=64", "--set", "gamma=0.9"], "(gamma: 0.99 -> 0.9; hidden: auto -> 64)")):
        out = _sweep(tmp_path, *base, *given, "--out", "other")
        assert out.returncode == 2, out.stderr
        (line,) = out.stderr.splitlines()
        assert line.startswith("pcnn-explore sweep: error: ") and named in line, line
        assert not (tmp_path / "other").exists()  # refused before any trial
    assert (store / "store.json").read_bytes() == before and {p: p.read_bytes() for p in store.rglob("*.csv")} == logs
    same = _sweep(tmp_path, *base, "--out", "same", "--set", "num_threads=2", "--set", "checkpoint_every=0",
                  "--dry-run")
    assert same.returncode == 0 and same.stderr == "", same.stderr  # nothing more to say: recorded
    assert same.stdout.splitlines()[-1] == f"0 trials in same (1 more already in {store})"


def test_keep_refuses_a_run_of_other_settings_and_14_names_a_line_run_with_other_settings(tmp_path):
    from pcnn_explore.experiments.agents import deep_sea_scaling as dss

    store = tmp_path / "protocol"

    def run(name: str, line: str, episodes, **changed) -> Path:
        folder = _log(tmp_path / name, 10, episodes)
        (folder / "settings.json").write_text(json.dumps(_config(line, 10, **changed)))
        return folder

    bs.keep(store, "dqn", 701, 10, run("d1", "dqn", [F] * 9 + [S] * 3, lr=0.5, tensorboard=False), cap=10_000,
            profile="study")
    bs.keep(store, "kit", 701, 10, run("k1", "kit", [S] * 3, device="cuda"), cap=10_000, profile="study")
    assert json.loads((store / "store.json").read_text())["lines"]["dqn"]["settings"]["lr"] == 0.5
    with pytest.raises(ValueError, match=r"holds line 'dqn' made with other settings than these runs' "
                                         r"\(lr: 0.5 -> 0.001\)"):
        bs.keep(store, "dqn", 702, 10, run("d2", "dqn", [S] * 3), cap=10_000, profile="study")
    assert not (store / "dqn" / "seed702").exists()
    assert bs.named_line_differences(store) == {"dqn": {"lr": (0.001, 0.5)}}
    whole = dss.whole_protocol(store)
    dqn, kit = whole["lines"]["dqn"], whole["lines"]["kit"]
    assert dqn["label"] == "DQN (run with lr 0.5, the named line's 0.001)"
    assert dqn["settings_differ"] == {"lr": {"named line": 0.001, "runs": 0.5}}
    assert kit["label"] == LINES["kit"].display and "settings_differ" not in kit
    record = dss.whole_protocol_record(whole)["whole_protocol"]  # what 14's metrics.json holds
    assert record["lines"]["dqn"]["settings_differ"] == {"lr": {"named line": 0.001, "runs": 0.5}}
    assert any(t.startswith("DQN (run with lr 0.5, the named line's 0.001): ") for t in record["text"])
    against_dqn = next(d for d in dss.decisions(whole) if d.claim.lines == ("kit", "dqn"))  # 14's claim names it too
    assert against_dqn.claim.sentence == ("the kit's line scores higher than DQN (run with lr 0.5, the named line's "
                                          "0.001) over bsuite's whole deep-sea protocol")
    # notebook 14 runs into the store: refused before any run, naming the difference
    s = dss.settings("paper", sizes=(10,), episodes=(10_000,), n_seeds=1)
    with pytest.raises(ValueError, match=r"\(lr: 0.5 -> 0.001\)"):
        dss.run_into_store(s, [LINES["dqn"]], tmp_path / "nb", store)
    assert not (tmp_path / "nb").exists()
