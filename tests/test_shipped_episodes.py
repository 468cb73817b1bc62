"""The shipped episodes (data/episodes) are what the commands in data/episodes/README.md make today.

The commands are read from the README and run as written, with ``--out`` in a temporary folder.
Frames, actions and every other track of the emulator and the policies are compared exactly, and
so are the CTS model's numbers (integer counts, deterministic arithmetic). The PixelCNN's numbers
are compared within ``PIXELCNN_ATOL`` nats when the episode was recorded with the running PyTorch
build, CPU instruction set and thread count (its metadata says which); see PIXELCNN_ATOL.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from pcnn_explore.record import BONUS_FIELDS, SHIPPED_DIR, load_episode

README = Path(__file__).resolve().parents[1] / "data" / "episodes" / "README.md"
#: Tracks that do not depend on the density model: the emulator's and the policy's.
PLAY_FIELDS = ("rgb", "density", "actions", "rewards", "life_loss", "episode_start", "room", "n")
#: Tolerance on the PixelCNN's log rho, log rho' and PG (nats). One CPU thread runs the float32
#: PixelCNN deterministically: remade twice with one build, every number came out bit for bit
#: the same. A difference in rounding anywhere (another PyTorch build or instruction set, a
#: rewritten update) does not stay in the last digits: over the 2,000+ online updates before the
#: recorded episode it grows into tens of nats (6e-5 nats at the first update grew to 38 nats at
#: the episode's first step and 275 at its first room change, between the arithmetic of two
#: commits). So the numbers agree to the float64 rounding of their sums, or not at all; 1e-6
#: nats of ~1,000-nat values leaves room for the former only.
PIXELCNN_ATOL = 1e-6

pytestmark = pytest.mark.slow


def documented_commands() -> dict[str, list[str]]:
    """Shipped file name -> the argument list of its command in the README's "Remaking them" block."""
    text = README.read_text()
    block = re.search(r"## Remaking them.*?```\n(.*?)```", text, re.S)
    assert block, f"{README} has no 'Remaking them' code block"
    commands = {}
    for line in block.group(1).splitlines():
        argv = shlex.split(line)
        if not argv:
            continue
        assert argv[:2] == ["pcnn-explore", "record"], line
        out = argv[argv.index("--out") + 1]
        assert Path(out).parent == Path("data/episodes"), line
        commands[Path(out).name] = argv[1:]
    return commands


@pytest.fixture(scope="module")
def remade(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """Shipped file name -> (shipped path, remade path): every documented command run as written
    (in parallel, each a fresh process) with its --out in a temporary folder."""
    folder = tmp_path_factory.mktemp("remade")
    procs = {}
    for name, argv in documented_commands().items():
        argv = list(argv)
        argv[argv.index("--out") + 1] = str(folder / name)
        procs[name] = subprocess.Popen([sys.executable, "-m", "pcnn_explore", *argv], stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, env={**os.environ, "PYTHONHASHSEED": "0"})
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, f"{name}: {err.decode()[-2000:]}"
        assert out.decode().startswith(f"wrote {folder / name}")
    return {name: (SHIPPED_DIR / name, folder / name) for name in procs}


def test_the_readme_has_a_command_for_every_shipped_episode():
    commands = documented_commands()
    assert sorted(commands) == sorted(p.name for p in SHIPPED_DIR.glob("*.npz"))
    for name, argv in commands.items():
        settings = load_episode(SHIPPED_DIR / name).metadata["settings"]
        assert argv[argv.index("--seed") + 1] == str(settings["seed"])
        assert argv[argv.index("--warmup-frames") + 1] == str(settings["warmup_frames"])
        assert argv[argv.index("--max-steps") + 1] == str(settings["max_steps"])


def test_remade_episodes_have_the_shipped_frames_actions_and_settings(remade):
    for name, (shipped_path, remade_path) in remade.items():
        shipped, again = load_episode(shipped_path), load_episode(remade_path)
        assert len(again) == len(shipped), name
        for field in PLAY_FIELDS:
            np.testing.assert_array_equal(getattr(again, field), getattr(shipped, field), err_msg=f"{name}: {field}")
        for key in ("env_id", "density_model", "model", "height", "width", "levels", "settings"):
            assert again.metadata[key] == _reading_named(shipped.metadata[key], key), (name, key)


def _reading_named(value, key: str):
    """A shipped PixelCNN's ``model`` as today's repr writes it: one recorded before the optimizer readings
    were named ran under ``torch`` (its README command says ``--density-optimizer torch``)."""
    if key != "model" or not str(value).startswith("PixelCNNDensity(") or "rmsprop=" in value:
        return value
    return value.replace(", n_updates=", ", rmsprop='torch', n_updates=")


@pytest.mark.cpu_kernels
def test_remade_cts_episodes_have_the_shipped_numbers_exactly(remade):
    cts = {name: paths for name, paths in remade.items() if load_episode(paths[0]).density_model == "cts"}
    assert cts, "no shipped CTS episode"
    for name, (shipped_path, remade_path) in cts.items():
        shipped, again = load_episode(shipped_path), load_episode(remade_path)
        for field in (*BONUS_FIELDS, "surprise"):
            np.testing.assert_array_equal(getattr(again, field), getattr(shipped, field), err_msg=f"{name}: {field}")


@pytest.mark.cpu_kernels
def test_remade_pixelcnn_episodes_have_the_shipped_numbers(remade):
    pixelcnn = {name: paths for name, paths in remade.items()
                if load_episode(paths[0]).density_model == "pixelcnn"}
    assert pixelcnn, "no shipped PixelCNN episode"
    build = dict(torch_version=torch.__version__, cpu_capability=torch.backends.cpu.get_cpu_capability(),
                 torch_threads=1)
    for name, (shipped_path, remade_path) in pixelcnn.items():
        shipped, again = load_episode(shipped_path), load_episode(remade_path)
        assert {k: again.metadata[k] for k in build} == build, name  # the command records on one thread
        assert set(build) <= set(shipped.metadata), f"{name} does not say which build recorded it; record it again"
        recorded_with = {k: shipped.metadata[k] for k in build}
        if recorded_with != build:
            pytest.skip(f"{name} was recorded with {recorded_with}, this is {build}: its PixelCNN numbers are "
                        "remade bit for bit only by that build (frames and actions were compared)")
        for field in ("log_rho", "log_rho_prime", "prediction_gain"):
            np.testing.assert_allclose(getattr(again, field), getattr(shipped, field), rtol=0, atol=PIXELCNN_ATOL,
                                       err_msg=f"{name}: {field} (nats)")
        # pseudo_count and bonus are PseudoCountBonus's functions of these and n (test_record checks them)
        np.testing.assert_allclose(again.surprise.astype(np.float32), shipped.surprise.astype(np.float32),
                                   rtol=1e-3, atol=1e-3, err_msg=f"{name}: surprise (float16 nats)")
