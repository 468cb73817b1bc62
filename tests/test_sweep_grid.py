"""Sweep grids without Ray: trials and their folders, --set values typed like train's flags, the
shipped TOML grids, and bad sweeps rejected in one line before Ray starts (nothing written)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pcnn_explore.cli import main
from pcnn_explore.experiments.agents import agent_figures as af
from pcnn_explore.experiments.agents.agent_figures import HARD_GAMES
from pcnn_explore.sweep import grid as sg
from pcnn_explore.sweep import folders, plan, ray_cluster as ray_module, records as sweep_records, trial as trial_task

ENV = "MiniGrid-Serpentine-7x7-v0"


@pytest.fixture
def no_ray(monkeypatch):
    """Any attempt to start or join Ray fails the test."""
    monkeypatch.setattr(ray_module, "connect", lambda *a, **k: pytest.fail("Ray was started"))


def test_trial_folders_name_env_line_and_seed(tmp_path):
    g = sg.Grid(envs=("ALE/Pong-v5", ENV), variants=("pixelcnn_mmc",), seeds=(0, 2), profile="smoke", out=str(tmp_path),
                set={"pg_scale": (0.1, 10.0), "steps": (600,)})
    names = [t.name for t in g.trials()]
    assert names[:4] == ["ALE_Pong-v5/pixelcnn_mmc,pg_scale=0.1/seed0", "ALE_Pong-v5/pixelcnn_mmc,pg_scale=0.1/seed2",
                         "ALE_Pong-v5/pixelcnn_mmc,pg_scale=10/seed0", "ALE_Pong-v5/pixelcnn_mmc,pg_scale=10/seed2"]
    assert len(names) == 8 and names[4].startswith(f"{ENV}/")
    t = g.trials()[2]
    assert Path(t.out_dir) == tmp_path.resolve() / t.name  # steps is the same for all: not in the name
    cfg = t.config()
    assert (cfg.bonus, cfg.mmc_beta, cfg.pg_scale, cfg.steps, cfg.seed, cfg.profile) == ("pixelcnn", 0.1, 10.0, 600, 0, "smoke")
    assert sg.folder_safe("ALE/Pong-v5") == "ALE_Pong-v5"


def test_gpu_trials_train_on_cuda(tmp_path):
    g = sg.Grid(envs=(ENV,), variants=("dqn",), profile="smoke", out=str(tmp_path), gpus_per_trial=0.25)
    assert g.trials()[0].config().device == "cuda"


def test_set_values_are_typed_like_train_flags():
    s = sg.parse_set(["pg_scale=0.1,1,10", "steps=600", "tensorboard=false", "hidden=auto", "optimizer=rmsprop"])
    assert s == {"pg_scale": (0.1, 1.0, 10.0), "steps": (600,), "tensorboard": (False,), "hidden": (None,),
                 "optimizer": ("rmsprop",)}
    assert isinstance(s["steps"][0], int) and isinstance(s["pg_scale"][1], float)


def test_shipped_grids_are_the_papers():
    grids = {name: sg.load_grid(path) for name, path in sg.shipped_grids().items()}
    assert set(grids) == {"fig5", "fig6", "fig8", "fig11", "fig12", "fig13", "fig14", "deep_sea"}
    assert len(grids["fig6"].envs) == 57 and len(grids["fig6"].trials()) == 57 * 3 * 3
    # Fig. 8: Reactor-PixelCNN over Reactor in Fig. 6's 57 games, 3 seeds, the bonus on 25% of steps
    fig8 = grids["fig8"]
    assert fig8.envs == grids["fig6"].envs and fig8.seeds == (0, 1, 2) and fig8.profile == "paper"
    assert fig8.variants == ("reactor", "reactor_pixelcnn") and len(fig8.trials()) == 57 * 2 * 3
    cfgs = [t.config() for t in fig8.trials()[:6:3]]  # seed 0 of each variant
    assert [(c.agent, c.bonus, c.mmc_beta, c.bonus_fraction, c.steps) for c in cfgs] == [
        ("reactor", "none", 0.0, 0.25, 37_500_000), ("reactor", "pixelcnn", 0.0, 0.25, 37_500_000)]
    assert set(HARD_GAMES) <= set(grids["fig5"].envs)
    for fig, settings in (("fig5", af.DqnBonusSettings), ("fig11", af.MmcAblationSettings),
                          ("fig12", af.PgScaleSettings), ("fig13", af.IntrinsicOnlySettings)):
        g, paper = grids[fig], settings.preset("paper")
        assert set(paper.envs) <= set(g.envs) and set(paper.seeds) <= set(g.seeds), fig
        # every line the notebook draws at the paper profile has its trials in the grid
        assert {sg.line_name(a.variant, a.overrides) for a in paper.arms()} <= {t.line for t in g.trials()}, fig
        assert all(t.profile == "paper" and t.config().steps == 37_500_000 for t in g.trials()[:3])
    assert grids["fig12"].set == {"pg_scale": (0.1, 1.0, 10.0), "density_optimizer": ("tf1",), "rmsprop": ("dqn3",)}
    assert grids["fig12"].seeds == (0, 1, 2, 3, 4)
    # every paper grid names the paper's optimizer readings (the PixelCNN's; DQN's RMSProp where DQN learns)
    for name, g in grids.items():
        if name != "deep_sea":
            assert g.set["density_optimizer"] == ("tf1",) and g.set.get("rmsprop", ("dqn3",)) == ("dqn3",), name
            assert all(t.config().density_optimizer == "tf1" for t in g.trials()[:3]), name
    assert "convcts_mmc" in grids["fig14"].variants
    assert sg.grid_path("fig12") == sg.grid_path("fig12.toml") == sg.shipped_grids()["fig12"]


def test_grid_file_keys_and_values_are_checked(tmp_path):
    f = tmp_path / "g.toml"
    f.write_text('envs = ["%s"]\nvariants = ["dqn"]\nprofile = "smoke"\nworkers = 3\n' % ENV)
    with pytest.raises(sg.SweepError, match="unknown key.*workers"):
        sg.load_grid(f)
    f.write_text('envs = ["%s"]\nvariants = ["dqn"]\n[set]\nsteps = "many"\n' % ENV)
    with pytest.raises(sg.SweepError, match="steps"):
        sg.load_grid(f)
    f.write_text('envs = ["%s"]\nvariants = ["dqn"]\n[set]\npg_scale = [1, 10]\n' % ENV)
    assert sg.load_grid(f).set == {"pg_scale": (1.0, 10.0)}
    with pytest.raises(sg.SweepError, match="no grid file"):
        sg.grid_path(str(tmp_path / "missing.toml"))


def _sweep(capsys, *args) -> tuple[int, str, str]:
    try:
        code = main(["sweep", *args])
    except SystemExit as e:  # argparse's own errors (one line too: pcnn_explore.cli.OneLineParser)
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


BASE = ["--envs", ENV, "--variants", "dqn", "--profile", "smoke"]


@pytest.mark.parametrize("args, message", [
    (["--envs", ENV, "--variants", "dqn,ppo"], "unknown variant 'ppo'"),
    (["--envs", ENV, "--variants", "dqn_intrinsic"], "'_intrinsic' needs a bonus"),
    (["--envs", "MiniGrid-Nope-v0", "--variants", "dqn"], "unknown env id"),
    ([*BASE, "--set", "epsilon_decay=5"], "unknown field 'epsilon_decay' in --set"),
    ([*BASE, "--set", "steps=-3"], "bad value for steps: expected a positive integer"),
    ([*BASE, "--set", "pg_scale=big"], "bad value for pg_scale"),
    ([*BASE, "--set", "optimizer=sgd"], "unknown optimizer 'sgd'"),
    ([*BASE, "--set", "bonus=cts"], "the variant name decides it"),
    ([*BASE, "--set", "agent=reactor"], "the variant name decides it"),
    ([*BASE, "--set", "seed=3"], "comes from the grid's 'seeds'"),
    ([*BASE, "--set", "steps"], "FIELD=VALUE"),
    ([*BASE, "--set", "steps=7", "--set", "num_envs=2"], "multiple of"),
    ([*BASE, "--seeds", "0,x"], "--seeds"),
    ([*BASE, "--gpus-per-trial", "-1"], "--gpus-per-trial"),
    ([*BASE, "--episodes", "10"], f"{ENV} has no fixed episode length"),
    (["--envs", "DeepSea-10-v0", "--variants", "dqn", "--episodes", "10", "--set", "steps=5"], "keep one"),
    (["--envs", "DeepSea-10-v0", "--variants", "dqn", "--episodes", "0"], "--episodes"),
    (["--variants", "dqn"], "name a grid file"),
    (["nogrid.toml"], "no grid file 'nogrid.toml'"),
    (["--report", "/nonexistent/sweep"], "no sweep at /nonexistent/sweep"),
    ([*BASE, "--baseline", "dqn"], "--baseline goes with --report DIR"),
])
def test_bad_sweeps_are_one_line_errors_before_ray(capsys, tmp_path, no_ray, args, message):
    code, out, err = _sweep(capsys, *args, *([] if "--report" in args else ["--out", str(tmp_path / "s")]))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("pcnn-explore sweep: error: ") and message in err, err
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
@pytest.mark.parametrize("args, message", [
    (["--envs", ENV, "--variants", "reactor", "--profile", "smoke", "--set", "replay_capacity=100", "--set",
      "num_envs=2"], "replay_capacity 100 over num_envs 2 gives each env's replay 50 slots"),
    (["--envs", ENV, "--variants", "dqn,reactor", "--profile", "smoke", "--set", "replay_capacity=16,200"],
     "reactor,replay_capacity=16/seed0: replay_capacity 16 over num_envs 1"),
    ([*BASE, "--set", "n_actions=4"], "n_actions 4 is more than the 3 actions of MiniGrid-Serpentine-7x7-v0"),
    (["--envs", "DeepSea-6-v0", "--variants", "dqn", "--profile", "smoke", "--set", "n_actions=2"],
     "leave n_actions at auto"),
])
def test_settings_that_can_never_run_are_refused_by_sweep_and_its_dry_run(capsys, tmp_path, no_ray, dry_run, args,
                                                                          message):
    code, out, err = _sweep(capsys, *args, *dry_run, "--out", str(tmp_path / "s"))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("pcnn-explore sweep: error: ") and message in err, err
    assert not (tmp_path / "s").exists()


def test_a_trial_folder_with_other_settings_is_never_reused(capsys, tmp_path, no_ray):
    out = tmp_path / "s"
    folder = out / ENV / "dqn" / "seed0"
    folder.mkdir(parents=True)
    old = sg.Grid(envs=(ENV,), variants=("dqn",), profile="smoke", out=str(out), set={"steps": (300,)}).trials()[0]
    folders.prepare(old, old.config().to_dict())
    before = (folder / folders.TRIAL_FILE).read_text()
    code, _, err = _sweep(capsys, *BASE, "--set", "steps=500", "--set", "lr=0.01", "--out", str(out))
    assert code == 2 and err.count("\n") == 1
    assert f"trial folder {folder} holds other settings" in err
    assert "lr: stored 0.001, requested 0.01" in err and "steps: stored 300, requested 500" in err
    assert (folder / folders.TRIAL_FILE).read_text() == before and not (out / sweep_records.SWEEP_FILE).exists()
    # a folder holding a plain training run (settings.json, no trial.json) is checked the same way
    other = tmp_path / "t"
    plain = other / ENV / "dqn" / "seed0"
    plain.mkdir(parents=True)
    (plain / "settings.json").write_text(json.dumps({**old.config().to_dict(), "gamma": 0.9}))
    code, _, err = _sweep(capsys, *BASE, "--set", "steps=300", "--out", str(other))
    assert code == 2 and "gamma: stored 0.9, requested 0.99" in err and "settings.json" in err


def test_dry_run_lists_the_trials(capsys, tmp_path, no_ray):
    code, out, _ = _sweep(capsys, "fig12", "--dry-run", "--out", str(tmp_path / "s"))
    lines = out.splitlines()
    assert code == 0 and lines[-1] == f"60 trials in {tmp_path / 's'}"
    assert lines[0] == "ALE_Gravitar-v5/pixelcnn_mmc,pg_scale=0.1/seed0"
    assert not (tmp_path / "s").exists()


def test_the_live_view_is_a_table_on_a_terminal_and_lines_elsewhere():
    import io

    from pcnn_explore.sweep.view import SweepView, table_lines

    recs = [{"name": "E/dqn/seed0", "status": "running", "steps": 120, "steps_total": 300, "steps_per_s": 40.0,
             "attempts": 1}, {"name": "E/dqn/seed1", "status": "queued", "steps": 0, "steps_total": 300,
                              "steps_per_s": None, "attempts": 0}]
    lines = table_lines(recs)
    assert lines[0] == "2 trials: 1 queued, 1 running, 0 done, 0 failed"
    assert lines[2].split() == ["E/dqn/seed0", "running", "120/300", "40.0", "1"]
    term = io.StringIO()
    view = SweepView(term, tty=True)
    view.update(recs)
    view.update(recs)
    assert term.getvalue().count("\x1b[4F") == 1  # the second table is drawn over the first
    plain = io.StringIO()
    view = SweepView(plain, tty=False, every_s=1e9)
    view.update(recs, force=True)
    view.update([recs[0], {**recs[1], "status": "failed", "error": "boom"}])
    out = plain.getvalue().splitlines()
    assert len(out) == 2 and out[0].endswith("2 trials: 1 queued, 1 running, 0 done, 0 failed")
    assert out[1].split()[1:3] == ["failed", "E/dqn/seed1"] and out[1].endswith("boom")


def test_the_deep_sea_grid_runs_bsuites_protocol(capsys, tmp_path, no_ray):
    from pcnn_explore.envs.deep_sea_protocol import PROTOCOL_EPISODES, PROTOCOL_SIZES

    from pcnn_explore.experiments.agents import deep_sea_scaling as dss
    from pcnn_explore.run.lines import horizon_bonus_scale

    g = sg.load_grid(sg.grid_path("deep_sea"))
    assert g.envs == tuple(f"DeepSea-{n}-v0" for n in PROTOCOL_SIZES) and g.episodes == PROTOCOL_EPISODES
    # notebook 14's paper profile: its lines and its verdict seeds (701-706), none a tuning seed
    paper = dss.settings("paper")
    assert g.lines == dss.LINE_KEYS["paper"] == ("kit", "paper_cts", "paper_cts_horizon", "dqn") and not g.variants
    assert g.seeds == paper.seeds == (701, 702, 703, 704, 705, 706) and g.profile == paper.train_profile
    assert g.set == {"stop_when_solved": (True,), "tensorboard": (False,)}
    code, out, _ = _sweep(capsys, "deep_sea", "--dry-run", "--out", str(tmp_path / "s"))
    lines = out.splitlines()
    assert code == 0 and lines[-1] == f"{21 * 4 * 6} trials in {tmp_path / 's'}"
    assert lines[0] == "DeepSea-10-v0/kit/seed701" and lines[-2] == "DeepSea-50-v0/dqn/seed706"
    assert not (tmp_path / "s").exists()  # a dry run runs and writes nothing
    g.out = str(tmp_path / "s")
    trials = g.trials()
    for t in (trials[0], trials[-1]):  # N x 10K agent steps: 10K episodes of N steps; bsuite's mapping seed
        n = int(t.env.split("-")[1])
        cfg = t.config()
        assert cfg.steps == n * 10_000 and cfg.mapping_seed == 42 and cfg.profile == "study" and cfg.stop_when_solved
    assert "steps" not in trials[0].name  # one line per variant: the steps follow the size
    horizon = [t for t in trials if t.line == "paper_cts_horizon" and t.seed == 701]
    assert [t.config().bonus_scale for t in horizon] == [horizon_bonus_scale(n) for n in PROTOCOL_SIZES]


def test_axis_values_that_round_alike_get_folders_of_their_own(capsys, tmp_path, no_ray):
    code, out, err = _sweep(capsys, *BASE, "--set", "pg_scale=0.1,0.1000001,10", "--dry-run", "--out", str(tmp_path / "s"))
    assert code == 0, err
    assert out.splitlines() == [f"{ENV}/dqn,pg_scale=0.1/seed0", f"{ENV}/dqn,pg_scale=0.1000001/seed0",
                                f"{ENV}/dqn,pg_scale=10/seed0", f"3 trials in {tmp_path / 's'}"]
    assert not (tmp_path / "s").exists()
    # exact where :g rounds, short where :g is exact (the shipped grids' names stay as they are)
    assert sg.line_name("dqn", {"pg_scale": 1 / 3}) == "dqn,pg_scale=0.3333333333333333"
    assert sg.line_name("dqn", {"pg_scale": 1e-5, "lr": 0.00025}) == "dqn,lr=0.00025,pg_scale=1e-05"


def test_trials_that_would_share_a_folder_are_refused(capsys, tmp_path, no_ray):
    # "cuda:1" and "cuda_1" are both valid device strings; made folder-safe both read cuda_1
    code, out, err = _sweep(capsys, *BASE, "--set", "device=cuda:1,cuda_1", "--dry-run", "--out", str(tmp_path / "s"))
    assert code == 2 and err.count("\n") == 1 and out == ""
    assert f"two trials would share the folder {ENV}/dqn,device=cuda_1/seed0" in err
    assert "device='cuda:1'; device='cuda_1'" in err
    assert not (tmp_path / "s").exists()


def test_dry_run_makes_the_checks_a_run_makes(capsys, tmp_path, no_ray, monkeypatch):
    out = tmp_path / "s"
    folder = out / ENV / "dqn" / "seed0"
    old = sg.Grid(envs=(ENV,), variants=("dqn",), profile="smoke", out=str(out), set={"lr": (0.01,)}).trials()[0]
    folders.prepare(old, old.config().to_dict())
    before = sorted(p.name for p in folder.iterdir())
    code, stdout, err = _sweep(capsys, *BASE, "--dry-run", "--out", str(out))  # the folder holds lr 0.01
    assert code == 2 and stdout == "" and err.count("\n") == 1 and "lr: stored 0.01, requested 0.001" in err
    assert sorted(p.name for p in folder.iterdir()) == before and not (out / sweep_records.SWEEP_FILE).exists()
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    code, stdout, err = _sweep(capsys, *BASE, "--gpus-per-trial", "0.5", "--dry-run", "--out", str(tmp_path / "g"))
    assert code == 2 and "asks for a GPU, but this machine has none" in err and not (tmp_path / "g").exists()


def test_a_larger_steps_extends_a_finished_sweep(capsys, tmp_path, no_ray):
    """The same sweep again with more steps resumes each trial from its checkpoint (as train --resume
    --steps does); its log then covers every step once, as one run of the larger budget would."""
    from pcnn_explore.run.log import read_log
    from pcnn_explore.run import TrainConfig, train

    def grid(steps):
        return sg.Grid(envs=(ENV,), variants=("dqn",), profile="smoke", out=str(tmp_path / "s"),
                       set={"steps": (steps,), "tensorboard": (False,), "checkpoint_every": (0,)})

    (trial,) = grid(150).trials()
    ((_, settings, finished),) = plan.check_trials([trial])
    assert not finished
    folders.prepare(trial, settings)
    assert trial_task.train_trial(settings)["steps"] == 150
    assert plan.check_trials([trial])[0][2] is True  # finished: skipped
    (longer,) = grid(300).trials()
    assert longer.out_dir == trial.out_dir  # steps is not an axis: the same folder
    ((_, settings, finished),) = plan.check_trials([longer])
    assert not finished and settings["steps"] == 300
    folders.prepare(longer, settings)
    assert (Path(trial.out_dir) / "checkpoint.pt").is_file()  # kept to resume from
    result = trial_task.train_trial(settings)
    assert result["resumed"] is True and result["steps"] == 300
    assert json.loads((Path(trial.out_dir) / folders.TRIAL_FILE).read_text())["settings"]["steps"] == 300
    log = read_log(trial.out_dir)
    assert int(log["step"][-1]) == 300 and int(log["length"].sum()) == 300
    fresh = tmp_path / "fresh"
    train(TrainConfig(**{**settings, "out_dir": str(fresh)}), progress=False)
    assert read_log(fresh)["return"].tolist() == log["return"].tolist()
    # fewer steps than stored stays a mismatch; as an axis, a new steps value is a new trial
    code, _, err = _sweep(capsys, *BASE, "--set", "steps=150", "--set", "tensorboard=false",
                          "--set", "checkpoint_every=0", "--dry-run", "--out", str(tmp_path / "s"))
    assert code == 2 and "steps: stored 300, requested 150" in err
    names = [t.name for t in sg.Grid(envs=(ENV,), variants=("dqn",), profile="smoke", out=str(tmp_path / "s"),
                                     set={"steps": (300, 600)}).trials()]
    assert names == [f"{ENV}/dqn,steps=300/seed0", f"{ENV}/dqn,steps=600/seed0"]
