import math
import warnings

import gymnasium as gym
import numpy as np
import pytest

from pcnn_explore.bonus import (
    PseudoCountBonus,
    PseudoCountReward,
    exploration_bonus,
    pg_decay,
    prediction_gain,
    pseudo_count,
    pseudo_count_from_pg,
)
from pcnn_explore.density import EmpiricalDensity
from pcnn_explore.envs.frames import to_density_frame


@pytest.fixture(autouse=True)
def warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or divide-by-zero warnings anywhere
        yield


def test_prediction_gain():
    assert prediction_gain(math.log(0.1), math.log(0.2)) == pytest.approx(math.log(2))
    assert prediction_gain(-5.0, -7.0) == -2.0


def test_pseudo_count_exact_formula():
    # rho = 0.1, rho' = 0.2: 0.1 * 0.8 / 0.1 = 0.8
    assert pseudo_count(math.log(0.1), math.log(0.2)) == pytest.approx(0.8)
    # rho = 1/3, rho' = 1/2 (a count of 1 out of 3 becoming 2 out of 4): (1/3)(1/2)/(1/6) = 1
    assert pseudo_count(math.log(1 / 3), math.log(1 / 2)) == pytest.approx(1.0)
    # tiny probabilities of whole frames (log rho ~ -2000 nats) do not underflow to 0/0
    assert pseudo_count(-2000.0, -2000.0 + math.log(2)) == pytest.approx(1.0, rel=1e-9)  # = 1 - rho'
    # PG <= 0: not learning-positive, infinite count; rho = 0: count 0; rho' = 1: count 0
    assert pseudo_count(-3.0, -3.0) == math.inf
    assert pseudo_count(-3.0, -4.0) == math.inf
    assert pseudo_count(-math.inf, math.log(0.5)) == 0.0
    assert pseudo_count(math.log(0.5), 0.0) == 0.0
    np.testing.assert_allclose(pseudo_count(np.log([0.1, 1 / 3]), np.log([0.2, 0.5])), [0.8, 1.0])


def test_pseudo_count_rejects_bad_log_probabilities():
    with pytest.raises(ValueError, match="NaN"):
        pseudo_count(float("nan"), -1.0)
    with pytest.raises(ValueError, match="<= 0"):
        pseudo_count(-1.0, 0.5)


def test_pseudo_count_from_pg():
    assert pseudo_count_from_pg(math.log(2)) == pytest.approx(1.0)  # 1 / (2 - 1)
    assert pseudo_count_from_pg(math.log(1.5)) == pytest.approx(2.0)  # 1 / 0.5
    assert pseudo_count_from_pg(0.0) == math.inf
    assert pseudo_count_from_pg(-1.0) == math.inf
    assert pseudo_count_from_pg(1e6) == 0.0
    assert pseudo_count_from_pg(math.inf) == 0.0
    # it approximates the exact count when rho is small: rho = 1e-6, rho' = 2e-6 -> N ~ 1
    exact = pseudo_count(math.log(1e-6), math.log(2e-6))
    assert pseudo_count_from_pg(math.log(2)) == pytest.approx(exact, rel=1e-5)


def test_pg_decay_schedules():
    assert pg_decay(4, "inverse_sqrt") == 0.5
    assert pg_decay(4, "inverse") == 0.25
    assert pg_decay(4, "constant") == 1.0
    assert pg_decay(1, "inverse_sqrt") == 1.0
    with pytest.raises(ValueError, match="starting at 1"):
        pg_decay(0)
    with pytest.raises(ValueError, match="schedule"):
        pg_decay(3, "n^-2")


def test_exploration_bonus_hand_computed():
    # n = 1, c = 0.1, PG = 10 log 2: scaled PG = log 2, expm1 = 1, bonus 1
    assert exploration_bonus(10 * math.log(2), 1) == pytest.approx(1.0)
    # n = 4: decay 1/2, PG = 20 log 2 -> scaled log 2 -> 1
    assert exploration_bonus(20 * math.log(2), 4) == pytest.approx(1.0)
    # PG = 10 log 5 at n = 1: sqrt(5 - 1) = 2
    assert exploration_bonus(10 * math.log(5), 1) == pytest.approx(2.0)
    # schedule n^-1 at n = 4, c = 1: PG = 4 log 2 -> log 2 -> 1
    assert exploration_bonus(4 * math.log(2), 4, scale=1.0, schedule="inverse") == pytest.approx(1.0)
    # bonus = (scaled pseudo-count) ** -1/2
    pg, n = 3.7, 9
    scaled = 0.1 * 3.7 / 3
    assert exploration_bonus(pg, n) == pytest.approx(pseudo_count_from_pg(scaled) ** -0.5)


def test_exploration_bonus_edge_cases():
    assert exploration_bonus(0.0, 1) == 0.0
    assert exploration_bonus(-50.0, 1) == 0.0  # PG thresholded at 0
    # a huge PG neither overflows with a warning nor becomes NaN
    assert exploration_bonus(1e300, 1) == math.inf
    assert exploration_bonus(math.inf, 1) == math.inf
    # just beyond expm1's range it is still exact: sqrt(e^800 - 1) = e^400
    assert exploration_bonus(800.0, 1, scale=1.0, schedule="constant") == pytest.approx(math.exp(400.0))
    with pytest.raises(ValueError, match="starting at 1"):
        exploration_bonus(1.0, 0)
    with pytest.raises(ValueError, match="NaN"):
        exploration_bonus(float("nan"), 1)
    with pytest.raises(ValueError, match="scale"):
        exploration_bonus(1.0, 1, scale=-1.0)


def frames_2x2(*rows):
    return [np.array(r, np.uint8).reshape(2, 2) for r in rows]


def test_pseudo_count_bonus_records():
    a, b = frames_2x2([0, 0, 0, 0], [1, 1, 1, 1])
    bonus = PseudoCountBonus(EmpiricalDensity(2, 2, 2), scale=1.0)
    r1 = bonus.step(a)  # before: uniform 1/16; after: rho' = 1
    assert r1.n == 1 and r1.log_rho == pytest.approx(math.log(1 / 16)) and r1.log_rho_prime == 0.0
    assert r1.prediction_gain == pytest.approx(math.log(16))
    assert r1.bonus == pytest.approx(math.sqrt(15.0))  # sqrt(expm1(1 * 1 * log 16))
    r2 = bonus.step(b)  # unseen: rho = 0 -> pseudo-count 0, PG = inf, bonus inf
    assert r2.n == 2 and r2.pseudo_count == 0.0 and r2.bonus == math.inf
    r3 = bonus.step(a)  # rho = 1/2, rho' = 2/3: count 1, PG log(4/3), decay 1/sqrt(3)
    assert r3.pseudo_count == pytest.approx(1.0)
    assert r3.bonus == pytest.approx(math.sqrt(math.expm1(math.log(4 / 3) / math.sqrt(3))))
    assert r3.bonus == pytest.approx(r3.scaled_pseudo_count ** -0.5)


def test_beta_scales_the_bonus_added_to_the_reward():
    # r+ = beta * PC^-1/2: PG = log 16 at n = 1, c = 1 constant: PC^-1/2 = sqrt(15); CTS's beta 0.05
    assert exploration_bonus(math.log(16), 1, scale=1.0, schedule="constant", beta=0.05) == pytest.approx(
        0.05 * math.sqrt(15.0), rel=1e-15)
    assert exploration_bonus(math.log(5), 1, scale=1.0, schedule="constant", beta=0.05) == pytest.approx(0.1)
    assert exploration_bonus(math.inf, 1, 1.0, "constant", beta=0.0) == 0.0  # beta 0: none, even for PG = inf
    a, b = frames_2x2([0, 0, 0, 0], [1, 1, 1, 1])
    bonus = PseudoCountBonus(EmpiricalDensity(2, 2, 2), scale=1.0, schedule="constant", beta=0.05)
    r1 = bonus.step(a)
    assert r1.bonus == pytest.approx(0.05 * math.sqrt(15.0)) and r1.scaled_pseudo_count == pytest.approx(1 / 15)
    assert r1.bonus == pytest.approx(0.05 * r1.scaled_pseudo_count ** -0.5)
    zero = PseudoCountBonus(EmpiricalDensity(2, 2, 2), scale=1.0, beta=0.0)
    r0, r_unseen, r_again = zero.step(a), zero.step(b), zero.step(a)
    assert r0.bonus == 0.0 and r0.scaled_pseudo_count == pytest.approx(1 / 15)
    assert r_unseen.bonus == 0.0 and r_unseen.pseudo_count == 0.0  # PG = inf: 0, not NaN
    assert r_again.bonus == 0.0 and r_again.pseudo_count == pytest.approx(1.0)  # the model still trains and counts
    for bad in (-0.1, math.inf, math.nan, True, "1"):
        with pytest.raises(ValueError, match="beta .bonus_scale. must be a finite number >= 0"):
            PseudoCountBonus(EmpiricalDensity(2, 2, 2), beta=bad)


def test_a_bonus_state_saved_before_beta_existed_loads_with_beta_1():
    a = PseudoCountBonus(EmpiricalDensity(2, 2, 2), scale=1.0, beta=0.05)
    state = a.state_dict()
    assert state["beta"] == 0.05
    del state["beta"]  # as PseudoCountBonus.state_dict wrote it before 0.2.0
    b = PseudoCountBonus(EmpiricalDensity(2, 2, 2), beta=0.05)
    b.load_state_dict(state)
    assert b.beta == 1.0


def test_the_papers_bonus_form_of_each_density_model_is_the_auto_setting():
    from pcnn_explore.bonus import PAPER_BONUS_FORM
    from pcnn_explore.density import BONUS_MODELS
    from pcnn_explore.run.config import TrainConfig

    assert PAPER_BONUS_FORM["pixelcnn"] == PAPER_BONUS_FORM["pixelcnn_pos"] == {
        "scale": 0.1, "schedule": "inverse_sqrt", "beta": 1.0}  # paper Sec. 3.3 and 4
    assert PAPER_BONUS_FORM["cts"] == PAPER_BONUS_FORM["convcts"] == PAPER_BONUS_FORM["empirical"] == {
        "scale": 1.0, "schedule": "constant", "beta": 0.05}  # no c_n; Bellemare et al. 2016's beta
    assert set(BONUS_MODELS) | {"none"} <= set(PAPER_BONUS_FORM)
    want = {"pixelcnn": (0.1, "inverse_sqrt", 1.0), "pixelcnn_pos": (0.1, "inverse_sqrt", 1.0),
            "cts": (1.0, "constant", 0.05), "convcts": (1.0, "constant", 0.05), "none": (0.1, "inverse_sqrt", 1.0)}
    for env in ("DeepSea-10-v0", "MiniGrid-Empty-5x5-v0"):
        for model, form in want.items():
            cfg = TrainConfig.preset("study", env=env, bonus=model)
            assert (cfg.pg_scale, cfg.pg_schedule, cfg.bonus_scale) == form, (env, model)
    # explicit values win, one at a time
    cfg = TrainConfig.preset("study", env="DeepSea-10-v0", bonus="cts", pg_scale=0.1)
    assert (cfg.pg_scale, cfg.pg_schedule, cfg.bonus_scale) == (0.1, "constant", 0.05)
    cfg = TrainConfig.preset("smoke", env="DeepSea-10-v0", bonus="pixelcnn", pg_schedule="constant", bonus_scale=0.0)
    assert (cfg.pg_scale, cfg.pg_schedule, cfg.bonus_scale) == (0.1, "constant", 0.0)


def test_a_run_builds_its_bonus_with_the_resolved_form():
    from pcnn_explore.run.config import TrainConfig
    from pcnn_explore.run.loop import build

    for model, form in (("cts", (1.0, "constant", 0.05)), ("pixelcnn", (0.1, "inverse_sqrt", 1.0))):
        envs, _, bonus = build(TrainConfig.preset("smoke", env="DeepSea-5-v0", bonus=model))
        envs.close()
        assert (bonus.scale, bonus.schedule, bonus.beta) == form, model
    envs, _, bonus = build(TrainConfig.preset("smoke", env="DeepSea-5-v0", bonus="cts", bonus_scale=0.0))
    envs.close()
    assert bonus.beta == 0.0


def test_pseudo_count_bonus_state_round_trip():
    frames = frames_2x2([0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1])
    a = PseudoCountBonus(EmpiricalDensity(2, 2, 2))
    for f in frames[:2]:
        a.step(f)
    b = PseudoCountBonus(EmpiricalDensity(2, 2, 2))
    b.load_state_dict(a.state_dict())
    assert a.step(frames[2]) == b.step(frames[2])


def test_bonus_rejects_bad_settings():
    with pytest.raises(ValueError, match="schedule"):
        PseudoCountBonus(EmpiricalDensity(2, 2, 2), schedule="linear")
    with pytest.raises(ValueError, match="scale"):
        PseudoCountBonus(EmpiricalDensity(2, 2, 2), scale=float("nan"))


class TwoRoomEnv(gym.Env):
    """A toy env whose RGB observation is one of two flat colours; reward 0.5 every step."""

    def __init__(self):
        self.observation_space = gym.spaces.Box(0, 255, (8, 8, 3), np.uint8)
        self.action_space = gym.spaces.Discrete(2)

    def _obs(self):
        return np.full((8, 8, 3), 40 if self.room == 0 else 220, np.uint8)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.room = 0
        return self._obs(), {}

    def step(self, action):
        self.room = int(action)
        return self._obs(), 0.5, False, False, {}


def test_reward_wrapper_scores_the_state_the_action_was_taken_in():
    model = EmpiricalDensity(42, 42, 8)
    env = PseudoCountReward(TwoRoomEnv(), density=model, scale=1.0)
    obs, _ = env.reset(seed=0)
    start = to_density_frame(obs)
    _, reward, _, _, info = env.step(1)  # scores the start frame (room 0), not room 1
    assert model.count(start) == 1
    assert model.count(to_density_frame(np.full((8, 8, 3), 220, np.uint8))) == 0
    assert info["extrinsic_reward"] == 0.5
    assert reward == 1.0  # 0.5 + bonus(first frame) clipped to 1
    _, reward, _, _, info = env.step(1)  # scores room 1 for the first time: unseen frame
    assert info["intrinsic_reward"] == math.inf and reward == 1.0
    _, reward, _, _, info = env.step(0)  # room 1 again: seen 1 of 2 -> count 1
    assert info["pseudo_count"] == pytest.approx(1.0)
    expected = min(0.5 + math.sqrt(math.expm1(info["prediction_gain"] / math.sqrt(3))), 1.0)
    assert reward == pytest.approx(expected)


def test_reward_wrapper_next_state_and_no_clip():
    model = EmpiricalDensity(42, 42, 8)
    env = PseudoCountReward(TwoRoomEnv(), density=model, scale=0.0, score="next_state", clip=None)
    env.reset(seed=0)
    _, reward, _, _, info = env.step(1)
    assert reward == 0.5 and info["intrinsic_reward"] == 0.0  # scale 0: no bonus, no clipping
    assert model.count(to_density_frame(np.full((8, 8, 3), 220, np.uint8))) == 1


def test_reward_wrapper_bad_settings():
    with pytest.raises(ValueError, match="score"):
        PseudoCountReward(TwoRoomEnv(), density="cts", score="action")
    with pytest.raises(ValueError, match="density"):
        PseudoCountReward(TwoRoomEnv(), density="vae")
    with pytest.raises(ValueError, match="clip"):
        PseudoCountReward(TwoRoomEnv(), density="cts", clip=(1, -1))


def test_reward_wrapper_on_a_non_image_env_says_how_to_fix():
    env = PseudoCountReward(gym.make("CartPole-v1"), density="cts")
    with pytest.raises(ValueError, match="frame_fn"):
        env.reset(seed=0)


@pytest.mark.parametrize("density", ["pixelcnn", "cts", "convcts"])
def test_reward_wrapper_on_atari(density):
    import ale_py

    gym.register_envs(ale_py)
    env = PseudoCountReward(gym.make("ALE/MontezumaRevenge-v5"), density=density)
    env.reset(seed=0)
    for _ in range(3):
        _, reward, _, _, info = env.step(0)
        assert -1.0 <= reward <= 1.0
        assert info["intrinsic_reward"] >= 0 and math.isfinite(info["prediction_gain"])
    assert env.bonus.model.n_updates == 3
    env.close()


def test_reward_wrapper_on_minigrid_pixels():
    import minigrid  # noqa: F401  (registers the envs)
    from minigrid.wrappers import RGBImgObsWrapper

    env = PseudoCountReward(RGBImgObsWrapper(gym.make("MiniGrid-Empty-5x5-v0")), density="cts")
    env.reset(seed=0)
    _, reward, _, _, info = env.step(2)
    assert info["intrinsic_reward"] > 0 and -1 <= reward <= 1
    env.close()
