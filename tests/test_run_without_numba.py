"""A run on an install where numba is missing, and an env whose reward is not a number.

numba is a base dependency; where it is missing all the same, the kit's kernels run as plain Python
(:mod:`pcnn_explore.jit`) and DQN's learn step takes its torch form, each said in one line, and a
DeepSea run finishes. A NaN reward is refused where the transition is stored, before the clip to
[-1, 1] (which would turn it into -1).
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

SCRIPT = """
import sys
sys.modules["numba"] = None  # as on an install without numba
import warnings
warnings.simplefilter("default")
from pcnn_explore.run import train
from pcnn_explore.run.config import TrainConfig
r = train(TrainConfig.preset("study", env="DeepSea-6-v0", bonus="cts", steps=600, out_dir=sys.argv[1],
                             tensorboard=False, seed=0))
print("steps", r.steps, "episodes", r.episodes)
"""


@pytest.mark.slow
def test_a_deep_sea_run_without_numba_runs_its_kernels_as_python_and_learns_with_torch(tmp_path):
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "steps 600 episodes 100" in done.stdout
    assert done.stderr.count("numba is not installed, so DQN learns with the torch step") == 1
    assert done.stderr.count("numba is not installed, so the kit's kernels") == 1
    assert json.loads((out / "settings.json").read_text())["learn_step"] == "torch"


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_reward_that_is_not_a_number_is_refused_where_it_is_stored(tmp_path, monkeypatch, bad):
    from pcnn_explore.envs.deep_sea import DeepSeaEnv
    from pcnn_explore.run import train
    from pcnn_explore.run.config import TrainConfig

    step = DeepSeaEnv.step

    def nan_step(self, action):
        obs, reward, terminated, truncated, info = step(self, action)
        return obs, bad, terminated, truncated, info

    monkeypatch.setattr(DeepSeaEnv, "step", nan_step)
    cfg = TrainConfig.preset("study", env="DeepSea-6-v0", bonus="none", steps=60, out_dir=str(tmp_path / "run"),
                             tensorboard=False, seed=0)
    with pytest.raises(ValueError, match=r"transition reward \(the env's reward plus the bonus\) (nan|inf) is not a "
                                         r"finite number"):
        train(cfg)
