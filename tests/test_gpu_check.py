"""benchmarks/gpu_check.py's comparisons, run on the CPU with the eager path on both sides: the
harness itself (state round trips, threads, both replay kinds) works and finds no difference, so on
a GPU any difference it reports comes from the CUDA graphs."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
import gpu_check  # noqa: E402


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)


def synthetic_frames(n: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.integers(0, 8, (n, 42, 42)).astype(np.uint8)


@pytest.mark.parametrize("rmsprop", ["tf1", "torch"])
@pytest.mark.parametrize("schedule", ["constant", "inverse_sqrt"])
def test_pixelcnn_comparison_on_the_cpu(schedule, rmsprop):
    r = gpu_check.pixelcnn_graph_vs_eager(synthetic_frames(9), "cpu", schedule, graph=False, rmsprop=rmsprop)
    assert r.pop("exact") is True and r.pop("counts") is True
    assert len(r) == 5 and all(v == 0.0 for v in r.values()), r


def test_pixelcnn_in_a_thread_on_the_cpu():
    assert gpu_check.pixelcnn_in_a_thread(synthetic_frames(6), "cpu", graph=False, dqn_steps=2) == 0.0


@pytest.mark.parametrize("optimizer, rmsprop", [("adam", "dqn3"), ("rmsprop", "dqn3"), ("rmsprop", "torch")])
@pytest.mark.parametrize("device_replay", [True, False])
def test_dqn_comparison_on_the_cpu(monkeypatch, device_replay, optimizer, rmsprop):
    monkeypatch.setattr(gpu_check, "filled_replay", _small_replay(gpu_check.filled_replay))
    r = gpu_check.dqn_graph_vs_eager("cpu", optimizer, device_replay, graph=False, steps=4, rmsprop=rmsprop)
    assert set(r) == {"losses", "weights", "resume: fresh graphed", "resume: same graphed"}
    assert all(v == 0.0 for v in r.values()), r


def _small_replay(fill):
    return lambda device, device_replay, seed=0: fill(device, device_replay, n=60, capacity=100, seed=seed)


def test_density_frames_fall_back_to_synthetic_ones(monkeypatch):
    monkeypatch.setitem(sys.modules, "_frames", None)  # as if ale-py were missing
    frames, source = gpu_check.density_frames(5)
    assert frames.shape == (5, 42, 42) and frames.max() <= 7 and "synthetic" in source


def test_density_frames_from_a_file(tmp_path):
    path = tmp_path / "frames.npy"
    np.save(path, synthetic_frames(12))
    frames, source = gpu_check.density_frames(10, str(path))
    assert frames.shape == (10, 42, 42) and "real frames" in source
    with pytest.raises(SystemExit, match="at least 20"):
        gpu_check.density_frames(20, str(path))


def test_density_checks_pass_on_the_cpu_against_itself(capsys):
    failures = []
    gpu_check.density_checks("cpu", synthetic_frames(100), failures)
    assert failures == [], capsys.readouterr().out
