"""``pcnn-explore train --line NAME``: a named line of ``experiments/agents/lines.py`` as the run's
settings, printed at the start; a flag given beside it overrides that one setting; an unknown name is
refused in one line, before anything is written."""
from __future__ import annotations

import pytest

from pcnn_explore.cli import main
from pcnn_explore.experiments.agents.lines import LINES

#: the kit's DeepSea method as six flags (README, docs/training.md before --line existed)
KIT_FLAGS = ["--pg-scale", "0.1", "--pg-schedule", "constant", "--bonus-scale", "1", "--scored-frame", "next_state",
             "--mmc", "0.5", "--novelty-epsilon", "1"]


def _check(capsys, tmp_path, *flags: str) -> tuple[int, str, str]:
    code = main(["train", "--env", "DeepSea-10-v0", "--out", str(tmp_path / "run"), "--check", *flags])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _settings(out: str) -> dict[str, str]:
    """The ``settings:`` block of --check's output, as name -> value text."""
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("settings: "))
    block = [lines[first][len("settings: "):]]
    block += [line.strip() for line in lines[first + 1:] if line.startswith("  ")]
    return dict(item.split("=", 1) for item in " ".join(block).split())


def test_line_kit_is_the_kits_six_flags(capsys, tmp_path):
    code, out, err = _check(capsys, tmp_path, "--line", "kit")
    assert code == 0 and err == ""
    settings = _settings(out)
    assert {k: settings[k] for k in ("bonus", "pg_scale", "pg_schedule", "bonus_scale", "scored_frame", "mmc_beta",
                                     "novelty_epsilon", "intrinsic_only")} == {
        "bonus": "cts", "pg_scale": "0.1", "pg_schedule": "constant", "bonus_scale": "1.0",
        "scored_frame": "next_state", "mmc_beta": "0.5", "novelty_epsilon": "1.0", "intrinsic_only": "False"}
    code, flags_out, _ = _check(capsys, tmp_path, "--bonus", "cts", *KIT_FLAGS)
    assert code == 0 and _settings(flags_out) == settings  # every setting, not only those six


def test_the_line_and_its_settings_are_printed(capsys, tmp_path):
    code, out, _ = _check(capsys, tmp_path, "--line", "kit")
    assert code == 0
    assert out.splitlines()[0] == (
        "line kit (DQN-CTS + all the kit's additions (kit)): bonus=cts mmc_beta=0.5 bonus_scale=1.0 "
        "intrinsic_only=False novelty_epsilon=1.0 pg_scale=0.1 pg_schedule=constant scored_frame=next_state")


def test_a_flag_beside_the_line_overrides_that_setting_alone(capsys, tmp_path):
    code, out, _ = _check(capsys, tmp_path, "--line", "kit", "--mmc", "0.3")
    assert code == 0
    assert "mmc_beta=0.3 (--mmc given; the line's 0.5)" in out.splitlines()[0]
    _, kit, _ = _check(capsys, tmp_path, "--line", "kit")
    changed = {k: (v, _settings(out)[k]) for k, v in _settings(kit).items() if _settings(out)[k] != v}
    assert changed == {"mmc_beta": ("0.5", "0.3")}
    # a boolean given off beside a line that turns it on
    code, out, _ = _check(capsys, tmp_path, "--line", "paper_cts_intrinsic", "--no-intrinsic-only")
    assert code == 0 and _settings(out)["intrinsic_only"] == "False"
    assert "intrinsic_only=False (--intrinsic-only given; the line's True)" in out.splitlines()[0]
    _, out, _ = _check(capsys, tmp_path, "--line", "paper_cts_intrinsic")
    assert _settings(out)["intrinsic_only"] == "True"


def test_the_paper_cts_line_is_the_papers_cts_form(capsys, tmp_path):
    _, out, _ = _check(capsys, tmp_path, "--line", "paper_cts")
    settings = _settings(out)
    assert {k: settings[k] for k in ("bonus", "pg_scale", "pg_schedule", "bonus_scale", "scored_frame", "mmc_beta",
                                     "novelty_epsilon")} == {
        "bonus": "cts", "pg_scale": "1.0", "pg_schedule": "constant", "bonus_scale": "0.05", "scored_frame": "state",
        "mmc_beta": "0.1", "novelty_epsilon": "0.0"}


def test_an_unknown_line_is_refused_in_one_line(capsys, tmp_path):
    code, out, err = _check(capsys, tmp_path, "--line", "kit_everything")
    assert code == 2 and out == ""
    assert err == ("pcnn-explore train: error: unknown --line 'kit_everything': choose one of "
                   + ", ".join(LINES) + "\n")
    assert {"paper_cts", "kit", "dqn"} <= set(LINES)
    assert not (tmp_path / "run").exists()
    # refused before a run starts, too (not only by --check)
    assert main(["train", "--env", "DeepSea-10-v0", "--out", str(tmp_path / "run"), "--line", "nope"]) == 2
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("name", sorted(LINES))
def test_every_named_line_resolves(capsys, tmp_path, name):
    from pcnn_explore.experiments.agents.lines import resolved_settings

    code, out, _ = _check(capsys, tmp_path, "--line", name)
    assert code == 0 and out.splitlines()[0].startswith(f"line {name} (")
    want = resolved_settings(LINES[name], "DeepSea-10-v0", "study")
    got = _settings(out)
    assert {k: got[k] for k in want} == {k: "auto" if v is None else str(v) for k, v in want.items()}


# ------------------------------------------------------------------------------------ sweep --lines
def test_sweep_lines_run_each_named_line_with_set_overriding_one_setting(tmp_path):
    from pcnn_explore.sweep.grid import Grid

    grid = Grid(envs=("DeepSea-6-v0",), variants=("dqn_mmc",), lines=("paper_cts", "kit"), seeds=(0, 1),
                set={"steps": (600,), "pg_scale": (0.2,)}, out=str(tmp_path / "sweep"))
    trials = grid.trials()
    assert [t.name for t in trials] == ["DeepSea-6-v0/dqn_mmc/seed0", "DeepSea-6-v0/dqn_mmc/seed1",
                                        "DeepSea-6-v0/paper_cts/seed0", "DeepSea-6-v0/paper_cts/seed1",
                                        "DeepSea-6-v0/kit/seed0", "DeepSea-6-v0/kit/seed1"]
    kit = trials[4].config()
    assert (kit.bonus, kit.pg_scale, kit.pg_schedule, kit.bonus_scale, kit.scored_frame, kit.mmc_beta,
            kit.novelty_epsilon, kit.steps) == ("cts", 0.2, "constant", 1.0, "next_state", 0.5, 1.0, 600)
    paper = trials[2].config()
    assert (paper.bonus, paper.pg_scale, paper.pg_schedule, paper.bonus_scale, paper.scored_frame,
            paper.mmc_beta) == ("cts", 0.2, "constant", 0.05, "state", 0.1)


def test_sweep_lines_are_the_train_lines(capsys, tmp_path):
    from pcnn_explore.sweep.grid import Grid

    trial = Grid(envs=("DeepSea-10-v0",), lines=("kit",), out=str(tmp_path / "s")).trials()[0]
    _, out, _ = _check(capsys, tmp_path, "--line", "kit")
    got = {k: "auto" if v is None else str(v) for k, v in trial.config().to_dict().items()}
    want = _settings(out)
    assert {k: v for k, v in got.items() if k != "out_dir"} == {k: v for k, v in want.items() if k != "out_dir"}


def test_sweep_refuses_an_unknown_line_and_a_line_named_as_a_variant(capsys, tmp_path):
    out = str(tmp_path / "s")
    assert main(["sweep", "--envs", "DeepSea-6-v0", "--lines", "kit,nope", "--out", out, "--dry-run"]) == 2
    assert capsys.readouterr().err == ("pcnn-explore sweep: error: unknown line 'nope' in lines: choose one of "
                                       + ", ".join(LINES) + "\n")
    assert main(["sweep", "--envs", "DeepSea-6-v0", "--variants", "dqn", "--lines", "dqn", "--out", out,
                 "--dry-run"]) == 2
    assert "dqn is both a variant and a line of the grid" in capsys.readouterr().err
    assert main(["sweep", "--envs", "DeepSea-6-v0", "--lines", "kit", "--set", "steps=600", "--out", out,
                 "--dry-run"]) == 0
    assert capsys.readouterr().out == f"DeepSea-6-v0/kit/seed0\n1 trials in {out}\n"
    assert not (tmp_path / "s").exists()


def test_a_named_lines_label_and_colour_in_reports():
    from pcnn_explore.run.variants import variant_colour
    from pcnn_explore.sweep.grid import line_colour, line_label

    assert line_label("kit") == "DQN-CTS + all the kit's additions (kit)"
    assert line_label("kit,steps=600") == "DQN-CTS + all the kit's additions (kit), steps=600"
    assert line_label("dqn") == "DQN" and line_label("cts_mmc") == "DQN-CTS"
    assert line_colour("kit") == variant_colour("cts_mmc") and line_colour("paper_pixelcnn") == variant_colour("pixelcnn")


def test_a_grid_file_takes_lines(tmp_path):
    from pcnn_explore.sweep.grid import load_grid

    path = tmp_path / "g.toml"
    path.write_text('envs = ["DeepSea-6-v0"]\nlines = ["kit", "paper_cts"]\n[set]\nsteps = 600\n')
    grid = load_grid(path)
    assert grid.lines == ("kit", "paper_cts") and grid.variants == ()
    assert [t.line for t in grid.trials()] == ["kit", "paper_cts"]
