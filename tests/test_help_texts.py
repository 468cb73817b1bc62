"""Help texts and printed settings say what the code does."""
from __future__ import annotations

import re

import pytest

from pcnn_explore.cli import main


def _help(capsys, *args) -> str:
    with pytest.raises(SystemExit) as e:
        main([*args, "--help"])
    assert e.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse's line breaks undone


def test_top_level_help_names_both_agents_in_plain_text(capsys):
    text = _help(capsys)
    assert "train a DQN or Reactor agent" in text
    assert "``" not in text and ":class:" not in text and ":mod:" not in text


def test_train_help_says_the_default_profile_and_what_the_flags_do(capsys):
    text = _help(capsys, "train")
    assert re.search(r"--profile \{smoke,study,paper\} [^-]*\(default study\)", text)
    every = text[text.index("--checkpoint-every N|auto agent steps"):]
    every = every[:every.index("--device")]
    assert "episode end" not in every and "mid-episode too" in every
    network = " ".join(text[text.index("--network {auto,nature,small,mlp} "):].split())
    network = network[:network.index("--hidden")]
    assert "small (a small CNN" in network and "mlp (two dense layers of 50" in network  # small is no MLP
    assert "``" not in text


def test_printed_settings_say_auto_where_the_flag_takes_auto():
    from pcnn_explore.run.config import TrainConfig
    from pcnn_explore.run.loop import describe

    cfg = TrainConfig.preset("study", env="MiniGrid-Empty-5x5-v0")
    text = " ".join(describe(cfg).split())
    assert "None" not in text
    for name in ("checkpoint_every", "hidden", "frame_stack", "n_actions", "bonus_thread"):
        assert f" {name}=auto " in f" {text} ", name
    assert " mmc_beta=0.0 " in text and " bonus_fraction=1.0 " in text  # resolved, not auto


def test_sweep_help_says_where_trials_run(capsys):
    text = _help(capsys, "sweep")
    executor = text[text.rindex("--executor {auto,local,ray}"):]  # (its help, not the usage line)
    executor = executor[:executor.index("--max-concurrent")]
    assert "local (worker processes on this machine, reused across trials, no Ray)" in executor
    assert "ray (Ray tasks" in executor and "(ray where a cluster is given, else local; default)" in executor
    assert "--max-concurrent N trials running at once" in text
    assert "--address auto|HOST:PORT run the trials on a running Ray cluster (default: on this machine)" in text
