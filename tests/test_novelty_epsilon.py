"""The kit's novelty-scaled exploration (``novelty_epsilon``): its rate by hand, its settings, its
draws, and a mid-episode resume that gives the uninterrupted run."""
from __future__ import annotations

import math

import numpy as np
import pytest

from pcnn_explore.checks import SettingError
from pcnn_explore.run.config import TrainConfig
from pcnn_explore.run.loop import novelty_epsilon


def test_rate_is_the_larger_of_epsilon_and_kappa_over_root_visits():
    assert novelty_epsilon(0.01, 1.0, 0.0) == 1.0  # first visit: at random
    assert novelty_epsilon(0.01, 1.0, 3.0) == 0.5  # fourth visit: 1 / sqrt(4)
    assert novelty_epsilon(0.01, 1.0, 99.0) == pytest.approx(0.1)
    assert novelty_epsilon(0.01, 0.5, 24.0) == pytest.approx(0.1)
    assert novelty_epsilon(0.2, 1.0, 99.0) == 0.2  # never below the schedule's epsilon
    assert novelty_epsilon(0.01, 1.0, 1e8) == 0.01
    assert novelty_epsilon(0.01, 3.0, 1.0) == 1.0  # capped at 1
    assert novelty_epsilon(0.01, 1.0, -1e-9) == 1.0  # float noise below 0 counts as 0
    for unknown in (None, math.inf, math.nan):  # not scored on arrival, or PG <= 0
        assert novelty_epsilon(0.05, 1.0, unknown) == 0.05
    assert novelty_epsilon(0.05, 0.0, 0.0) == 0.05  # off: the paper's epsilon-greedy


@pytest.mark.parametrize("settings, named", [
    (dict(bonus="none"), "bonus none"),
    (dict(bonus="cts", scored_frame="state"), "scored frame state"),
    (dict(bonus="cts", agent="reactor", scored_frame="next_state"), "agent reactor"),
])
def test_settings_it_cannot_work_with_are_refused(settings, named):
    with pytest.raises(SettingError, match=named) as e:
        TrainConfig.preset("smoke", env="DeepSea-6-v0", novelty_epsilon=1.0, **settings)
    assert "{novelty_epsilon}" in e.value.template if hasattr(e.value, "template") else True
    with pytest.raises(SettingError, match="novelty_epsilon"):
        TrainConfig.preset("smoke", env="DeepSea-6-v0", bonus="cts", scored_frame="next_state", novelty_epsilon=-1.0)


def test_per_env_rates_draw_like_one_act_per_env_at_its_rate():
    from pcnn_explore.agents.dqn import DQNAgent
    from pcnn_explore.run.learners import epsilon_greedy

    agent = DQNAgent((1, 5, 5), 2, network="mlp", hidden=8)
    obs = [np.random.default_rng(i).integers(0, 255, (1, 5, 5), dtype=np.uint8) for i in range(6)]
    rates = [0.0, 1.0, 0.5, 0.0, 1.0, 0.3]
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    want = [agent.act(o, e, a) for o, e in zip(obs, rates)]
    assert epsilon_greedy(agent, obs, rates, b) == want
    assert a.random() == b.random()


def test_a_run_with_novelty_scaled_exploration_resumes_mid_episode_bit_for_bit(tmp_path, monkeypatch):
    """DeepSea-5, novelty_epsilon 1: a run that crashes after its checkpoint at step 203 (mid-episode:
    the checkpoint keeps the state's pseudo-count) and resumes to 400 gives the log and the weights of
    400 steps at once; and the rule changes the run."""
    import torch

    from pcnn_explore.checkpoint import load
    from pcnn_explore.envs.deep_sea import DeepSeaEnv
    from pcnn_explore.run.loop import train
    from pcnn_explore.run.log import read_log

    def cfg(name, kappa=1.0, every=0):
        return TrainConfig.preset("study", env="DeepSea-5-v0", bonus="cts", seed=7, steps=400, learning_starts=60,
                                  replay_capacity=1_000, checkpoint_every=every, out_dir=str(tmp_path / name),
                                  tensorboard=False, scored_frame="next_state", novelty_epsilon=kappa,
                                  epsilon_decay_steps=100)

    train(cfg("once"), progress=False)
    real_step, calls = DeepSeaEnv.step, [0]

    def crashing_step(self, action):
        calls[0] += 1
        if calls[0] > 206:
            raise RuntimeError("simulated crash")
        return real_step(self, action)

    monkeypatch.setattr(DeepSeaEnv, "step", crashing_step)
    with pytest.raises(RuntimeError, match="simulated crash"):
        train(cfg("split", every=203), progress=False)
    monkeypatch.setattr(DeepSeaEnv, "step", real_step)
    saved = load(tmp_path / "split" / "checkpoint.pt")
    assert saved["step"] == 203 and len(saved["running"][0]["actions"]) == 3  # mid-episode
    assert saved["running"][0]["pseudo_count"] >= 0
    train(cfg("split", every=203), resume=True, progress=False)
    once, split = read_log(tmp_path / "once"), read_log(tmp_path / "split")
    for name in once:
        if name != "wall_seconds":
            np.testing.assert_array_equal(once[name], split[name], err_msg=name)
    a, b = load(tmp_path / "once" / "policy.pt"), load(tmp_path / "split" / "policy.pt")
    assert all(torch.equal(a["q"][k], b["q"][k]) for k in a["q"])
    train(cfg("off", kappa=0.0), progress=False)
    assert not np.array_equal(read_log(tmp_path / "off")["return"], once["return"])


def test_it_needs_a_bonus_model_not_a_positive_beta():
    """bonus_scale (beta) 0: no bonus in the reward, but the density model trains and its pseudo-counts
    drive novelty-scaled exploration; it is no longer a default anywhere (the paper's epsilon-greedy)."""
    cfg = TrainConfig.preset("smoke", env="DeepSea-6-v0", bonus="cts", scored_frame="next_state", bonus_scale=0.0,
                             novelty_epsilon=1.0)
    assert (cfg.bonus_scale, cfg.novelty_epsilon) == (0.0, 1.0)
    with pytest.raises(SettingError, match=r"needs a bonus model \(bonus_scale 0 allowed\).*here: bonus none"):
        TrainConfig.preset("smoke", env="DeepSea-6-v0", bonus="none", novelty_epsilon=1.0)
    assert TrainConfig.preset("study", env="DeepSea-6-v0", bonus="cts", scored_frame="next_state").novelty_epsilon == 0
    with pytest.raises(SettingError, match="intrinsic_only.*bonus_scale 0 makes it 0"):
        TrainConfig.preset("smoke", env="DeepSea-6-v0", bonus="cts", bonus_scale=0.0, intrinsic_only=True)


def test_a_run_with_beta_0_adds_no_bonus_and_still_explores_by_count(tmp_path):
    from pcnn_explore.run.log import read_log
    from pcnn_explore.run.loop import train

    def run(name, kappa):
        train(TrainConfig.preset("study", env="DeepSea-5-v0", bonus="cts", seed=7, steps=300, learning_starts=60,
                                 replay_capacity=1_000, checkpoint_every=0, out_dir=str(tmp_path / name),
                                 tensorboard=False, scored_frame="next_state", bonus_scale=0.0,
                                 novelty_epsilon=kappa, epsilon_decay_steps=100), progress=False)
        return read_log(tmp_path / name)

    on, off = run("on", 1.0), run("off", 0.0)
    for log in (on, off):
        assert (log["intrinsic_return"] == 0).all() and (log["intrinsic_mean"] == 0).all()  # r+ = 0 * PC^-1/2
        assert log["density_updates"][-1] == 300 and np.isfinite(log["prediction_gain_mean"]).all()
    assert not np.array_equal(on["return"], off["return"])  # the counts changed how it explored
