"""The agent experiments' pieces: the paper's table, the corridor task, run bookkeeping, settings, figures."""
from __future__ import annotations

import dataclasses
import json
import re

import gymnasium as gym
import numpy as np
import pytest

from pcnn_explore.experiments.agents import agent_figures, agent_summary
from pcnn_explore.envs import minigrid_tasks as tasks
from pcnn_explore.experiments.agents.agent_runs import (
    AgentExperimentResults,
    RunResult,
    RunSpec,
    curves_by_variant,
    load_run,
    make_specs,
    run_grid,
    summarise_runs,
)



# ------------------------------------------------------------------------------ the paper's table
def test_paper_table_cells_typed_from_the_tex():
    t = agent_figures.load_paper_table()
    assert list(t) == ["Freeway", "Gravitar", "Montezuma's Revenge", "Pitfall!", "Private Eye", "Solaris", "Venture"]
    assert t["Montezuma's Revenge"]["DQN-CTS"] == 3705.5
    assert t["Montezuma's Revenge"]["DQN-PixelCNN"] == 2514.3
    assert t["Private Eye"]["DQN-PixelCNN"] == 15806.5
    assert t["Pitfall!"]["DQN"] == -286.1
    assert t["Solaris"]["DQN"] == 3482.8  # "3,482.8" in the tex
    assert t["Venture"]["DQN-PixelCNN"] == 1356.25
    assert t["Gravitar"]["A3C-CTS"] == 238.68
    assert t["Freeway"]["Prior. Duel"] == 33.0
    assert t["Venture"]["ale_id"] == "ALE/Venture-v5"


def test_paper_table_rejects_a_file_without_the_columns(tmp_path):
    bad = tmp_path / "t.csv"
    bad.write_text("game,DQN\nVenture,1\n")
    with pytest.raises(ValueError, match="missing column"):
        agent_figures.load_paper_table(bad)


def test_paper_claims_quote_the_table():
    c = agent_figures.paper_claims()
    assert c["pixelcnn_mmc"] == "Montezuma 2,514.30, Private Eye 15,806.50, Venture 1,356.25"
    assert c["dqn"].startswith("Montezuma 0.00")


# ------------------------------------------------------------------------------ the corridor task
def test_serpentine_7x7_layout():
    env = tasks.SerpentineEnv(7)
    env.reset(seed=0)
    kinds = env.unwrapped.grid.encode()[:, :, 0].T  # (y, x) object ids: 1 empty, 2 wall, 8 goal
    assert kinds.tolist() == [
        [2, 2, 2, 2, 2, 2, 2],
        [2, 1, 1, 1, 1, 1, 2],
        [2, 2, 2, 2, 2, 1, 2],
        [2, 1, 1, 1, 1, 1, 2],
        [2, 1, 2, 2, 2, 2, 2],
        [2, 1, 1, 1, 1, 8, 2],
        [2, 2, 2, 2, 2, 2, 2],
    ]
    assert tuple(env.unwrapped.agent_pos) == (1, 1) and env.unwrapped.agent_dir == 0
    assert env.action_space.n == 3 and env.unwrapped.max_steps == 4 * 7 * 7


@pytest.mark.parametrize("size, moves, steps", [(5, 6, 8), (7, 16, 20), (9, 30, 36), (11, 48, 56)])
def test_serpentine_path_length_and_optimal_steps(size, moves, steps):
    # moves: cells along the snake; steps add two turns at each of the (size-1)/2 - 1 bends' pair
    assert tasks.serpentine_path_length(size) == moves
    env = tasks.SerpentineEnv(size)
    env.reset(seed=0)
    assert tasks.optimal_steps(env) == steps == moves + 2 * ((size - 1) // 2 - 1)


def test_optimal_steps_on_an_empty_room_by_hand():
    env = gym.make("MiniGrid-Empty-5x5-v0")
    env.reset(seed=0)
    # start (1,1) facing right, goal (3,3): forward, forward, right, forward, forward
    assert tasks.optimal_steps(env) == 5


def test_walking_the_corridor_pays_minigrids_reward():
    env = gym.make("MiniGrid-Serpentine-7x7-v0")
    env.reset(seed=0)
    L, R, F = 0, 1, 2
    plan = [F] * 4 + [R, F, F, R] + [F] * 4 + [L, F, F, L] + [F] * 4
    assert len(plan) == 20
    for i, a in enumerate(plan):
        _, reward, terminated, truncated, _ = env.step(a)
        assert terminated == (i == len(plan) - 1) and not truncated
    assert reward == pytest.approx(1 - 0.9 * 20 / 196)


def test_corridor_ids_are_registered_and_work_with_make_env():
    from pcnn_explore.envs import make_env

    assert set(tasks.TASK_IDS) <= set(gym.registry)
    env = make_env("MiniGrid-Serpentine-7x7-v0", seed=0)
    obs, info = env.reset()
    assert obs.shape == (3, 28, 28) and obs.dtype == np.uint8
    assert info["density_frame"].shape == (42, 42) and info["density_frame"].max() <= 7


@pytest.mark.parametrize("size, err", [(6, ValueError), (3, ValueError), (9.0, TypeError), (True, TypeError)])
def test_serpentine_rejects_bad_sizes(size, err):
    with pytest.raises(err, match="size"):
        tasks.SerpentineEnv(size)


# ------------------------------------------------------------------------------ run bookkeeping
def _result(variant, seed, ends, rets, steps=100, key="", env="MiniGrid-Serpentine-7x7-v0", profile="smoke"):
    spec = RunSpec(variant, env, seed, steps, profile, "/nonexistent", (), key)
    ends = np.asarray(ends, np.int64)
    return RunResult(spec, ends, np.asarray(rets, float), np.zeros(len(ends)), wall_s=2.0, steps_done=steps)


def test_curves_are_the_papers_windows():
    """Each point: the mean return of the episodes ending in the window; an empty window is missing
    (NaN), never the previous value; the partial last window is dropped."""
    c = curves_by_variant([_result("dqn", 0, [10, 20, 60], [0.0, 1.0, 1.0], steps=100)], window=50)["DQN"]
    assert c["steps"].tolist() == [50, 100] and c["mean"].tolist() == [0.5, 1.0]
    c = curves_by_variant([_result("dqn", 0, [25, 100], [0.4, 0.8], steps=110)], window=25)["DQN"]
    assert c["steps"].tolist() == [25, 50, 75, 100]  # 100..110 is a partial window
    assert [None if np.isnan(v) else v for v in c["mean"]] == [0.4, None, None, 0.8]
    c = curves_by_variant([_result("dqn", 0, [], [], steps=90)], window=30)["DQN"]
    assert np.isnan(c["mean"]).all() and c["mean"].size == 3
    with pytest.raises(ValueError, match="window"):
        curves_by_variant([_result("dqn", 0, [1], [1.0])], window=0)


def test_curves_mean_and_spread_over_seeds():
    runs = [_result("dqn", 0, [50, 100], [0.0, 1.0]), _result("dqn", 1, [50, 100], [0.5, 0.0])]
    c = curves_by_variant(runs, window=50)["DQN"]
    assert c["mean"].tolist() == [0.25, 0.5]
    assert c["low"].tolist() == [0.0, 0.0] and c["high"].tolist() == [0.5, 1.0]
    assert c["runs"].shape == (2, 2)


def test_summary_rows_by_hand():
    r = _result("pixelcnn_mmc", 3, [30, 60, 90, 100], [0.0, 0.7, 0.0, 0.9])
    (row,) = summarise_runs([r], window=2)
    assert row["first_success_step"] == 60
    assert row["successes"] == 2 and row["episodes"] == 4
    assert row["final_success_rate"] == 0.5 and row["solved"] is True
    assert row["mean_return_last"] == pytest.approx(0.45)
    assert row["steps_per_s"] == 50.0
    (never,) = summarise_runs([_result("dqn", 0, [50, 100], [0.0, 0.0])])
    assert never["first_success_step"] is None and never["solved"] is False


def test_results_by_key_and_metrics():
    runs = [_result("dqn", 0, [50, 100], [0.0, 0.0]), _result("dqn", 1, [50, 100], [0.0, 0.6]),
            _result("pixelcnn_mmc", 0, [40, 80], [0.5, 0.5]), _result("pixelcnn_mmc", 1, [40, 80], [0.0, 0.5])]
    res = AgentExperimentResults(runs, window=1, curve_window=50)
    d = res.by_key()
    assert d["dqn"]["solved_seeds"] == 1 and d["dqn"]["final_success_rate"] == 0.5
    assert d["dqn"]["median_first_success_step"] == 100.0 and d["dqn"]["seeds_with_a_success"] == 1
    assert d["pixelcnn_mmc"]["median_first_success_step"] == 60.0  # seeds first succeed at 40 and 80
    m = res.metrics()
    assert m["runs"] == 4 and m["env"] == "MiniGrid-Serpentine-7x7-v0"
    assert m["pixelcnn_mmc/final_success_rate"] == 1.0
    rows = res.paper_rows({"dqn": "no progress"})
    assert rows[0][:2] == ("DQN", "no progress") and rows[1][1] == "-"
    assert "solved 2 of 2 seeds" in res.run_column("pixelcnn_mmc")
    assert res.run_column("cts_mmc") == "not run"
    lines = res.table().splitlines()
    assert len(lines) == 4 and lines[2].split()[:4] == ["DQN", "1", "of", "2"]
    assert lines[3].split()[-1] == "60"


def test_load_run_reads_a_log_and_cuts_at_a_step(tmp_path):
    from pcnn_explore.run import LOG_COLUMNS

    spec = RunSpec("dqn", "MiniGrid-Serpentine-7x7-v0", 0, 500, "smoke", str(tmp_path), (("lr", 0.001),))
    (tmp_path / "run_spec.json").write_text(json.dumps(dataclasses.asdict(spec)))
    rows = [(100, 0, 0.0, 100, 1, 10.0), (150, 1, 0.8, 50, 1, 20.0), (300, 2, 0.0, 150, 1, 30.0), (320, 3, 0.0, 20, 0, 31.0)]
    lines = [",".join(LOG_COLUMNS)]
    for step, ep, ret, length, complete, wall in rows:
        vals = dict(step=step, episode=ep, length=length, complete=complete, epsilon=0.1, wall_seconds=wall,
                    intrinsic_return=0.0, intrinsic_mean=0.0, prediction_gain_mean="nan", td_loss="nan")
        vals["return"] = ret
        lines.append(",".join(str(vals.get(c, "nan")) for c in LOG_COLUMNS))
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    r = load_run(tmp_path)
    assert r.spec == spec
    assert r.episode_end_step.tolist() == [100, 150, 300]  # the incomplete last episode is left out
    assert r.steps_done == 320 and r.wall_s == 31.0
    cut = load_run(tmp_path, max_step=200)
    assert cut.episode_end_step.tolist() == [100, 150] and cut.spec.steps == 200 and cut.wall_s == 20.0


# ------------------------------------------------------------------------------ settings
ALL = [agent_figures.DqnBonusSettings, agent_figures.MmcAblationSettings, agent_figures.PgScaleSettings,
       agent_figures.IntrinsicOnlySettings]


@pytest.mark.parametrize("cls", ALL)
def test_presets(cls):
    smoke, study, paper = (cls.preset(p) for p in ("smoke", "study", "paper"))
    for s in (smoke, study):
        s.check()
        assert s.envs == ("MiniGrid-Serpentine-7x7-v0",)
    assert smoke.steps <= 400 and smoke.seeds == (0,) and smoke.workers == 1
    assert study.workers == 2 and len(study.seeds) >= 2
    assert ("epsilon_decay_steps", 2500) in study.train_overrides
    assert paper.steps == 37_500_000  # 150M frames at frame skip 4
    assert all(e.startswith("ALE/") and e.endswith("-v5") for e in paper.envs)
    assert len(paper.seeds) == (5 if cls is agent_figures.PgScaleSettings else 3)


def test_for_notebook_seeds():
    s = agent_figures.MmcAblationSettings.for_notebook("study", seed=4, n_seeds=3, steps=None)
    assert s.seeds == (4, 5, 6) and s.steps == 12_000
    assert agent_figures.MmcAblationSettings.for_notebook("study").seeds == (0, 1)
    with pytest.raises(ValueError, match="n_seeds"):
        agent_figures.MmcAblationSettings.for_notebook("study", n_seeds=0)
    with pytest.raises(ValueError, match="seed"):
        agent_figures.MmcAblationSettings.for_notebook("study", seed=-1)
    with pytest.raises(ValueError, match="profile"):
        agent_figures.MmcAblationSettings.for_notebook("huge")


@pytest.mark.parametrize("change, err, match", [
    (dict(envs="MiniGrid-Serpentine-7x7-v0"), TypeError, "tuple of env ids"),
    (dict(envs=()), ValueError, "envs is empty"),
    (dict(envs=("MiniGrid-Nope-v0",)), ValueError, "unknown env id"),
    (dict(seeds=()), ValueError, "seeds is empty"),
    (dict(seeds=(0, 0)), ValueError, "repeat"),
    (dict(seeds=(-1,)), ValueError, "non-negative"),
    (dict(steps=0), ValueError, "steps"),
    (dict(workers=0), ValueError, "workers"),
    (dict(train_overrides=(("epsilon_decay", 5),)), ValueError, "no field 'epsilon_decay'"),
    (dict(train_overrides=(("seed", 5),)), ValueError, "may not set 'seed'"),
    (dict(train_overrides=("lr",)), TypeError, "pairs"),
])
def test_bad_settings_rejected_before_any_run(tmp_path, change, err, match):
    s = dataclasses.replace(agent_figures.MmcAblationSettings.preset("smoke"), **change)
    with pytest.raises(err, match=match):
        agent_figures.run(s, tmp_path)
    assert not (tmp_path / "runs").exists()


def test_bad_variant_and_scales_rejected(tmp_path):
    s = dataclasses.replace(agent_figures.MmcAblationSettings.preset("smoke"), variants=("dqn", "ppo"))
    with pytest.raises(ValueError, match="unknown variant 'ppo'"):
        agent_figures.run(s, tmp_path)
    for bad in ((), (0.1, 0.0), (-1.0,)):
        p = dataclasses.replace(agent_figures.PgScaleSettings.preset("smoke"), scales=bad)
        with pytest.raises(ValueError, match="scale"):
            agent_figures.run(p, tmp_path)
    assert not (tmp_path / "runs").exists()
    with pytest.raises(ValueError, match="workers"):
        run_grid("MiniGrid-Serpentine-7x7-v0", ["dqn"], [0], 10, "smoke", tmp_path, workers=0)


def test_specs_merge_overrides_and_get_their_own_folders(tmp_path):
    s = dataclasses.replace(agent_figures.PgScaleSettings.preset("study"), seeds=(0, 1), scales=(0.1, 10.0))
    variants = [("pixelcnn_mmc", agent_figures.scale_key(c), {"pg_scale": c}, f"c = {c:g}") for c in s.scales]
    specs = make_specs(s, tmp_path, variants)
    assert [sp.key for sp in specs] == ["c0.1", "c0.1", "c10", "c10"]
    assert dict(specs[2].overrides) == {"epsilon_decay_steps": 2500, "pg_scale": 10.0}
    assert specs[2].config_fields() == {"bonus": "pixelcnn", "mmc_beta": 0.1, "epsilon_decay_steps": 2500, "pg_scale": 10.0}
    assert len({sp.out_dir for sp in specs}) == 4
    io = agent_figures.IntrinsicOnlySettings.preset("paper")
    keys = [sp.key for sp in make_specs(io, tmp_path, [("pixelcnn_mmc", "intrinsic_only", {"intrinsic_only": True}, "")])]
    assert len(keys) == len(io.envs) * len(io.seeds)


# ------------------------------------------------------------------------------ figures
def test_training_curve_figure_is_labelled():
    from matplotlib.figure import Figure

    from pcnn_explore.plots.agents import plot_curve_panels, plot_paper_scores, plot_training_curves

    runs = [_result("dqn", 0, [50, 100], [0.0, 1.0]), _result("dqn", 1, [50, 100], [0.5, 0.0])]
    fig = plot_training_curves(curves_by_variant(runs, 50), title="t")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "agent steps" and "return" in ax.get_ylabel()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["DQN (2 seeds)"]
    assert len(plot_curve_panels({"a": curves_by_variant(runs, 50), "b": curves_by_variant(runs, 50)}).axes) == 2
    assert isinstance(plot_paper_scores(agent_figures.load_paper_table()), Figure)
    with pytest.raises(ValueError):
        plot_training_curves({})


# ------------------------------------------------------------------------------ variant names
from pcnn_explore import density  # noqa: E402
from pcnn_explore.experiments.agents import agent_curves, agent_runs  # noqa: E402
from pcnn_explore.run import variants as agent_variants  # noqa: E402
from pcnn_explore.run.variants import (  # noqa: E402
    VARIANTS,
    check_variant,
    variant_agent,
    variant_colour,
    variant_label,
    variant_overrides,
)


@pytest.mark.parametrize("name, fields, label", [
    ("dqn", dict(bonus="none", mmc_beta=0.0), "DQN"),
    ("dqn_mmc", dict(bonus="none", mmc_beta=0.1), "DQN + MMC"),
    ("cts_mmc", dict(bonus="cts", mmc_beta=0.1), "DQN-CTS"),
    ("pixelcnn", dict(bonus="pixelcnn", mmc_beta=0.0), "DQN-PixelCNN without MMC"),
    ("pixelcnn_mmc", dict(bonus="pixelcnn", mmc_beta=0.1), "DQN-PixelCNN"),
    ("convcts_mmc", dict(bonus="convcts", mmc_beta=0.1), "DQN-ConvCTS"),
    ("pixelcnn_mmc_intrinsic", dict(bonus="pixelcnn", mmc_beta=0.1, intrinsic_only=True),
     "DQN-PixelCNN, intrinsic reward only"),
    ("cts_intrinsic", dict(bonus="cts", mmc_beta=0.0, intrinsic_only=True), "DQN-CTS without MMC, intrinsic reward only"),
    ("reactor", dict(agent="reactor", bonus="none", mmc_beta=0.0), "Reactor"),
    ("reactor_pixelcnn", dict(agent="reactor", bonus="pixelcnn", mmc_beta=0.0), "Reactor-PixelCNN"),
    ("reactor_cts", dict(agent="reactor", bonus="cts", mmc_beta=0.0), "Reactor-CTS"),
    ("reactor_pixelcnn_pos", dict(agent="reactor", bonus="pixelcnn_pos", mmc_beta=0.0),
     "Reactor-PixelCNN (position bias)"),
    ("reactor_cts_intrinsic", dict(agent="reactor", bonus="cts", mmc_beta=0.0, intrinsic_only=True),
     "Reactor-CTS, intrinsic reward only"),
])
def test_variant_names_parse_by_the_rule(name, fields, label):
    assert variant_overrides(name) == fields
    assert variant_label(name) == label
    assert VARIANTS[name] == fields and agent_runs.LABELS[name] == label


@pytest.mark.parametrize("name", ["ppo", "dqn_intrinsic", "dqn_mmc_intrinsic", "empirical_mmc", "pixelcnn_intrinsic_mmc",
                                  "mmc", "", "PixelCNN_mmc", "pixelcnn_mmc_mmc", "cts-mmc"])
def test_bad_variant_names_are_rejected_naming_the_choices(name):
    with pytest.raises(ValueError, match=f"unknown variant {name!r}") as e:
        variant_overrides(name)
    assert "choose one of dqn, dqn_mmc, pixelcnn, pixelcnn_mmc," in str(e.value)
    assert all(v in str(e.value) for v in VARIANTS)
    with pytest.raises(ValueError, match="unknown variant"):
        variant_label(name)
    with pytest.raises(TypeError, match="string"):
        variant_overrides(None)


def test_intrinsic_without_a_bonus_says_why():
    with pytest.raises(ValueError, match="'_intrinsic' needs a bonus"):
        variant_overrides("dqn_intrinsic")


@pytest.mark.parametrize("name", ["reactor_mmc", "reactor_pixelcnn_mmc", "reactor_cts_mmc_intrinsic"])
def test_reactor_with_mmc_is_rejected_saying_why(name):
    with pytest.raises(ValueError, match=f"unknown variant {name!r}: '_mmc' is DQN's mixed Monte Carlo target "
                                         "and Reactor evaluates its policy with Retrace") as e:
        variant_overrides(name)
    assert "reactor, reactor_pixelcnn" in str(e.value)


@pytest.mark.parametrize("name, match", [
    ("reactor_intrinsic", "'_intrinsic' needs a bonus: name a density model after 'reactor_'"),
    ("reactor_dqn", "or with 'reactor', then '_' and a density model"),
    ("reactor_", "or with 'reactor', then '_' and a density model"),
    ("reactorpixelcnn", "or with 'reactor', then '_' and a density model"),
    ("pixelcnn_reactor", "or with 'reactor', then '_' and a density model"),
])
def test_bad_reactor_names_are_rejected(name, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        check_variant(name)


def test_reactor_variants_come_from_the_registry_and_build_configs():
    from pcnn_explore.run import TrainConfig

    assert {n for n in VARIANTS if n.startswith("reactor")} == {"reactor"} | {
        f"reactor_{m}{i}" for m in density.BONUS_MODELS for i in ("", "_intrinsic")}
    assert list(VARIANTS)[:4] == ["dqn", "dqn_mmc", "pixelcnn", "pixelcnn_mmc"]  # the DQN names keep their order
    for model in density.BONUS_MODELS:
        assert variant_label(f"reactor_{model}") == f"Reactor-{density.label(model)}"
        assert variant_colour(f"reactor_{model}") == density.colour(model)
    assert variant_colour("reactor") is None
    assert variant_agent("reactor_pixelcnn") == "reactor" and variant_agent("pixelcnn_mmc") == "dqn"
    cfg = TrainConfig.preset("smoke", env="DeepSea-5-v0", **variant_overrides("reactor_pixelcnn"))
    assert (cfg.agent, cfg.bonus, cfg.mmc_beta, cfg.bonus_fraction) == ("reactor", "pixelcnn", 0.0, 0.25)
    spec = RunSpec("reactor_cts", "DeepSea-5-v0", 0, 10, "smoke", "/nonexistent")
    assert spec.config_fields() == dict(agent="reactor", bonus="cts", mmc_beta=0.0)
    assert spec.display == "Reactor-CTS"


def test_variants_come_from_the_density_registry(monkeypatch):
    bases = {"dqn"} | set(density.BONUS_MODELS)
    # no variant of a model agents cannot use (model names may hold "_", e.g. pixelcnn_pos)
    assert {VARIANTS[n]["bonus"].replace("none", "dqn") for n in VARIANTS} == bases
    for model in density.BONUS_MODELS:
        assert {f"{model}", f"{model}_mmc", f"{model}_intrinsic", f"{model}_mmc_intrinsic"} <= set(VARIANTS)
        assert variant_label(f"{model}_mmc") == f"DQN-{density.label(model)}"
        assert variant_colour(f"{model}_mmc") == density.colour(model)
    assert variant_colour("dqn_mmc") is None
    # a model added to the registry has its variants with no change here
    toy = density.DensitySpec("toy", density.CTSDensity, "Toy", "tab:red")
    monkeypatch.setitem(density.REGISTRY, "toy", toy)
    monkeypatch.setattr(density, "BONUS_MODELS", density.BONUS_MODELS + ("toy",))
    assert variant_overrides("toy_mmc") == dict(bonus="toy", mmc_beta=0.1)
    assert variant_label("toy") == "DQN-Toy without MMC" and variant_colour("toy_mmc") == "tab:red"


def test_run_specs_use_the_rule():
    spec = RunSpec("pixelcnn_mmc_intrinsic", "MiniGrid-Serpentine-7x7-v0", 0, 10, "smoke", "/nonexistent")
    assert spec.config_fields() == dict(bonus="pixelcnn", mmc_beta=0.1, intrinsic_only=True)
    assert spec.display == "DQN-PixelCNN, intrinsic reward only"
    with pytest.raises(ValueError, match="unknown variant 'dqn_intrinsic'"):
        agent_runs.run_specs([dataclasses.replace(spec, variant="dqn_intrinsic")])


def test_agent_runs_still_names_the_moved_parts():
    for name in ("curves_by_variant", "summarise_runs", "final_success_rate", "AgentExperimentResults"):
        assert getattr(agent_runs, name) is getattr(agent_curves, name)
    assert agent_runs.VARIANTS is agent_variants.VARIANTS and agent_runs.variant_label is variant_label
    assert set(agent_runs.__all__) <= set(dir(agent_runs))


# ------------------------------------------------------------------------------ the figures' table
FIGURE_SETTINGS = {"fig5": agent_figures.DqnBonusSettings, "fig11": agent_figures.MmcAblationSettings,
                   "fig12": agent_figures.PgScaleSettings, "fig13": agent_figures.IntrinsicOnlySettings}


@pytest.mark.parametrize("fig", sorted(FIGURE_SETTINGS))
def test_each_figure_is_one_table_entry(fig):
    entry, settings_cls = agent_figures.FIGURES[fig], FIGURE_SETTINGS[fig]
    assert set(entry.claims) == set(entry.keys)
    for a in entry.arms:
        assert a.variant in VARIANTS and a.key
    assert len(set(entry.keys)) == len(entry.keys)
    assert settings_cls.figure() is entry
    assert settings_cls.preset("paper").envs == entry.games
    assert set(entry.optional) <= set(entry.keys)
    assert all(hasattr(settings_cls.preset("smoke"), flag) for flag in entry.optional.values())
    assert all(a.variant.split("_")[0] in {"dqn", *density.BONUS_MODELS} for a in entry.arms)


def test_figure_lines_keep_their_keys_and_labels():
    assert agent_figures.FIGURES["fig11"].keys == ("dqn", "dqn_mmc", "pixelcnn", "pixelcnn_mmc")
    assert agent_figures.DqnBonusSettings().variants == ("dqn", "cts_mmc", "pixelcnn_mmc")
    assert agent_figures.HARD_GAMES == agent_figures.FIGURES["fig5"].games
    pg = [tuple(a) for a in agent_figures.PgScaleSettings(scales=(0.1, 10.0)).arms()]
    assert pg == [("pixelcnn_mmc", "c0.1", {"pg_scale": 0.1}, "DQN-PixelCNN, c = 0.1"),
                  ("pixelcnn_mmc", "c10", {"pg_scale": 10.0}, "DQN-PixelCNN, c = 10")]
    io = agent_figures.IntrinsicOnlySettings
    assert [a.key for a in io.preset("smoke").arms()] == ["intrinsic_only", "dqn"]
    assert [a.key for a in io.preset("paper").arms()] == ["intrinsic_only", "pixelcnn_mmc"]
    assert [a.key for a in io(with_dqn=False).arms()] == ["intrinsic_only"]
    (first,) = io(with_dqn=False).arms()
    assert first.variant == "pixelcnn_mmc_intrinsic" and first.overrides == {}
    # a Fig. 5 or Fig. 11 run may name any variant of the rule
    arms = agent_figures.DqnBonusSettings(variants=("dqn", "convcts_mmc")).arms()
    assert [(a.variant, a.key) for a in arms] == [("dqn", "dqn"), ("convcts_mmc", "convcts_mmc")]


@pytest.mark.parametrize("settings, err, match", [
    (agent_figures.PgScaleSettings.preset("smoke", scales=(1.0, 1.0)), ValueError, "repeat"),
    (agent_figures.MmcAblationSettings.preset("smoke", variants=("dqn", "dqn")), ValueError, "repeat"),
    (agent_figures.MmcAblationSettings.preset("smoke", variants="dqn"), TypeError, "tuple of names"),
    (agent_figures.DqnBonusSettings.preset("smoke", variants=()), ValueError, "variants is empty"),
    (agent_figures.DqnBonusSettings.preset("smoke", variants=("dqn_intrinsic",)), ValueError, "needs a bonus"),
])
def test_bad_figure_choices_rejected_before_any_run(tmp_path, settings, err, match):
    with pytest.raises(err, match=match):
        agent_figures.run(settings, tmp_path)
    assert not (tmp_path / "runs").exists()


def test_run_takes_a_figures_settings(tmp_path):
    from pcnn_explore.experiments.agents.agent_runs import AgentSettings

    with pytest.raises(TypeError, match="settings of one figure"):
        agent_figures.run(AgentSettings.preset("smoke"), tmp_path)


# ------------------------------------------------------------------------------ the paper's evaluation
def _study(variant, seed, rets, key=""):
    """A study-profile run of 4 windows of 25 steps, one episode ending in each window with ``rets``."""
    return _result(variant, seed, [20, 45, 70, 95], rets, steps=100, key=key, profile="study")


def test_summary_numbers_and_verdicts_by_hand():
    runs = [_study("dqn", 0, [0, 0, 0, 0]), _study("dqn", 1, [0, 0, 0, 0.4]),
            _study("cts_mmc", 0, [0, 0.2, 0.2, 0.2]), _study("pixelcnn_mmc", 0, [0, 0.4, 0.8, 0.8])]
    res = AgentExperimentResults(runs, window=2, curve_window=25)
    s = agent_summary.summary("fig5", res)
    # dqn: mean curve [0, 0, 0, 0.2] -> AUC 0.05; peaks 0 and 0.4 -> max score 0.2
    assert s["dqn_auc"] == pytest.approx(0.05) and s["dqn_max_score"] == pytest.approx(0.2) and s["dqn_best_peak"] == 0.4
    assert s["pixelcnn_mmc_auc"] == pytest.approx(0.5) and s["pixelcnn_mmc_auc_vs_dqn_pct"] == pytest.approx(900.0)
    assert s["cts_mmc_auc_vs_dqn_pct"] == pytest.approx(200.0) and "dqn_auc_vs_dqn_pct" not in s
    assert s["verdict"].startswith("agrees: AUC over DQN: DQN-PixelCNN +900%, DQN-CTS +200%")
    assert s["curve_window_steps"] == 25
    p = agent_summary.paper("fig5", res)  # the paper's rows carry the summary's names
    assert set(p) == {"verdict", "dqn_auc", "cts_mmc_auc", "pixelcnn_mmc_auc"} and set(p) <= set(s)
    worse = [runs[0], runs[1], _study("cts_mmc", 0, [0, 0.8, 0.8, 0.8]), runs[3]]
    assert agent_summary.summary("fig5", AgentExperimentResults(worse, curve_window=25))["verdict"].startswith("partly")
    flat = [runs[0], runs[1], runs[2], _study("pixelcnn_mmc", 0, [0, 0, 0, 0])]
    assert agent_summary.summary("fig5", AgentExperimentResults(flat, curve_window=25))["verdict"].startswith("differs")
    smoke = AgentExperimentResults([_result("dqn", 0, [50], [0.0])], curve_window=25)
    assert agent_summary.summary("fig5", smoke)["verdict"].startswith("not testable at this profile")
    assert agent_summary.verdict("fig5", {"dqn": {}}, "study", 100).startswith("not testable at this profile: the lines")
    # Fig. 13: the intrinsic-only agent scores, below DQN -> partly
    io = [_study("pixelcnn_mmc_intrinsic", 0, [0, 0.1, 0, 0], key="intrinsic_only"), _study("dqn", 0, [0.5] * 4)]
    assert agent_summary.summary("fig13", AgentExperimentResults(io, curve_window=25))["verdict"].startswith("partly")
    # Fig. 12: every scale scores and the largest c's peak is not below the smallest's -> agrees
    pg = [_study("pixelcnn_mmc", 0, [0, 0.1, 0, 0], key="c0.1"), _study("pixelcnn_mmc", 0, [0, 0.3, 0, 0], key="c10")]
    assert agent_summary.summary("fig12", AgentExperimentResults(pg, curve_window=25))["verdict"].startswith("agrees")


def test_the_verdict_covers_every_game_not_the_first():
    """Fig. 5 on two games: the first (Freeway) ties, the second agrees; the verdict counts both
    (it read the first env alone before)."""
    def game(env, dqn, cts, pc):
        return [_result("dqn", 0, [20, 45, 70, 95], dqn, env=env, profile="study"),
                _result("cts_mmc", 0, [20, 45, 70, 95], cts, env=env, profile="study"),
                _result("pixelcnn_mmc", 0, [20, 45, 70, 95], pc, env=env, profile="study")]

    tie = game("ALE/Freeway-v5", [0.3] * 4, [0.3] * 4, [0.3] * 4)
    win = game("ALE/Venture-v5", [0, 0, 0, 0.4], [0, 0.2, 0.2, 0.2], [0, 0.4, 0.8, 0.8])
    s = agent_summary.summary("fig5", AgentExperimentResults(tie + win, curve_window=25))
    assert s["verdict"] == "partly: agrees in 1 of 2 games (ALE/Freeway-v5 differs; ALE/Venture-v5 agrees)"
    assert s["verdict_by_game"]["ALE/Venture-v5"].startswith("agrees: AUC over DQN")
    both = agent_summary.summary("fig5", AgentExperimentResults(win + [r for r in game("ALE/Gravitar-v5", [0, 0, 0, 0.4],
                                                    [0, 0.2, 0.2, 0.2], [0, 0.4, 0.8, 0.8])], curve_window=25))
    assert both["verdict"].startswith("agrees: agrees in 2 of 2 games")
    flat = agent_summary.summary("fig5", AgentExperimentResults(tie + game("ALE/Gravitar-v5", [0.3] * 4, [0.3] * 4, [0.3] * 4),
                                                    curve_window=25))
    assert flat["verdict"].startswith("differs: agrees in 0 of 2 games")


def test_paper_entries_quote_the_paper_for_the_env():
    venture = [_result("dqn", 0, [50], [0.0], env="ALE/Venture-v5"),
               _result("pixelcnn_mmc", 0, [50], [0.0], env="ALE/Venture-v5")]
    p = agent_summary.paper("fig5", AgentExperimentResults(venture, curve_window=25))
    assert p["pixelcnn_mmc_max_score"] == 1356.25 and p["dqn_max_score"] == 163.0 and p["cts_mmc_max_score"] == 82.2
    assert p["dqn_auc"] == agent_figures.FIGURES["fig5"].claims["dqn"] and p["verdict"].startswith("DQN-PixelCNN > DQN-CTS > DQN")
    p = agent_summary.paper("fig12", AgentExperimentResults([_result("pixelcnn_mmc", 0, [50], [0.0], env="ALE/Venture-v5", key="c10")],
                                              curve_window=25))
    assert p["c10_best_peak"].startswith("record peak 1,500") and "c0.1_best_peak" not in p
    corridor = agent_summary.paper("fig5", AgentExperimentResults([_result("dqn", 0, [50], [0.0])], curve_window=25))
    assert "dqn_max_score" not in corridor  # the paper gives no numbers for the corridor


def _write_log(folder, episodes, steps):
    from pcnn_explore.run import LOG_COLUMNS

    folder.mkdir(parents=True)
    lines, last = [",".join(LOG_COLUMNS)], 0
    for i, (step, ret) in enumerate(episodes):
        v = dict(step=step, episode=i, length=step - last, complete=int(step < steps or i < len(episodes) - 1),
                 epsilon=0.1, wall_seconds=1.0, intrinsic_return=0.0, intrinsic_mean=0.0,
                 prediction_gain_mean="nan", td_loss="nan")
        v["return"] = ret
        lines.append(",".join(str(v.get(c, "nan")) for c in LOG_COLUMNS))
        last = step
    (folder / "log.csv").write_text("\n".join(lines) + "\n")


def test_figures_read_their_runs_from_a_sweep(tmp_path):
    """A notebook given ``sweep_dir`` reads the figure's runs from the sweep's trial folders."""
    s = agent_figures.PgScaleSettings.preset("smoke")
    env_dir = tmp_path / "MiniGrid-Serpentine-7x7-v0"
    for i, c in enumerate(("0.1", "1", "10")):
        _write_log(env_dir / f"pixelcnn_mmc,pg_scale={c}" / "seed0", [(100, 0.0), (150, 0.5 * i), (300, 0.0)], 300)
    res = agent_figures.run(s, tmp_path / "unused", sweep_dir=tmp_path)
    assert [r.key for r in res.runs] == ["c0.1", "c1", "c10"]
    assert res.runs[2].episode_return.tolist() == [0.0, 1.0] and res.runs[2].steps_done == 300
    assert res.evaluation()["c10"]["max_score"] == 0.5  # window 75: the episodes ending at 100 and 150 share [75, 150)
    assert not (tmp_path / "unused").exists()
    (env_dir / "pixelcnn_mmc,pg_scale=10" / "seed0" / "log.csv").unlink()
    with pytest.raises(ValueError, match=r"lacks 1 of the 3 runs .*pg_scale=10/seed0.*pcnn-explore sweep"):
        agent_figures.run(s, sweep_dir=tmp_path)
    with pytest.raises(ValueError, match="not a folder"):
        agent_figures.run(s, sweep_dir=tmp_path / "nope")

