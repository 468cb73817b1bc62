"""Notebook 13's pieces: the claims and verdict on hand-made numbers, the settings' checks, and the
trace products of a tiny Reactor run recomputed step by step with the actor's own LSTM."""
from __future__ import annotations

import numpy as np
import pytest

from pcnn_explore.experiments import reactor_study as rs

V = ("reactor", "reactor_pixelcnn_pos", "pixelcnn_pos_mmc")


def _rates(base, bonus, dqn):
    return {v: {"auc_mean": a, "late_mean": late, "reached_late": 0, "seeds": 1}
            for v, (a, late) in zip(V, (base, bonus, dqn))}


def _traces(products):
    return {"reactor": [{"products": [], "steps": []}], "reactor_pixelcnn_pos": [{"products": products, "steps": []}]}


def test_roles_follow_the_variant_rule():
    assert rs.roles(V) == {"reactor": "reactor", "reactor_bonus": "reactor_pixelcnn_pos", "dqn_bonus": "pixelcnn_pos_mmc"}
    assert rs.roles(("reactor",)) == {"reactor": "reactor", "reactor_bonus": None, "dqn_bonus": None}


@pytest.mark.parametrize("rates, products, holds, verdict", [
    (_rates((0.1, 0.0), (0.2, 0.1), (0.5, 0.9)), [0.01, 0.05, 0.5], (True, True, True), "agrees"),
    (_rates((0.2, 0.0), (0.1, 0.1), (0.5, 0.9)), [0.5, 0.9, 1.0], (False, True, False), "partly"),
    (_rates((0.2, 0.0), (0.2, 0.5), (0.5, 0.1)), [0.5], (False, False, False), "differs"),
    (_rates((0.0, 0.0), (0.1, 0.0), (0.0, 0.0)), [], (True, False, None), "partly"),
])
def test_claims_and_verdict_by_hand(rates, products, holds, verdict):
    g = rs.goals(rates, _traces(products), V)
    assert tuple(g[k]["holds"] for k in ("bonus_helps_reactor", "dqn_bonus_above_reactor_bonus", "traces_cut")) == holds
    assert rs.verdict("study", g) == verdict and rs.verdict("smoke", g) == "not testable at this profile"
    if products:
        assert g["traces_cut"]["median_product"] == pytest.approx(float(np.median(products)))
        assert g["traces_cut"]["below_mmc_beta"] == pytest.approx(np.mean(np.array(products) < 0.1))
    base, bonus = rates["reactor"]["auc_mean"], rates["reactor_pixelcnn_pos"]["auc_mean"]
    pct = g["bonus_helps_reactor"]["improvement_percent"]
    assert pct is None if base == 0 else pct == pytest.approx(100 * (bonus - base) / base)


def test_nothing_run_is_not_testable():
    g = rs.goals({}, {}, ("reactor",))
    assert all(x["holds"] is None for x in g.values()) and rs.verdict("study", g) == "not testable at this profile"


@pytest.mark.parametrize("given, match", [
    (dict(size=40), "one 33-step Reactor sequence"), (dict(variants=("reactor_mmc",)), "unknown variant"),
    (dict(variants=("reactor", "reactor")), "repeat"), (dict(episodes=0), "episodes"), (dict(seeds="0"), "tuple"),
])
def test_bad_settings_fail_before_any_run(tmp_path, given, match):
    with pytest.raises((ValueError, TypeError), match=match):
        rs.run(rs.ReactorStudySettings.preset("smoke", **given), tmp_path)


def test_presets():
    s = rs.ReactorStudySettings.for_notebook("study")
    assert s.env == "DeepSea-8-v0" and s.steps == 8 * 600 and s.seeds == (0, 1, 2) and s.variants == V
    assert rs.ReactorStudySettings.for_notebook("smoke", seed=3, n_seeds=2).seeds == (3, 4)


def test_trace_products_match_the_actor_step_by_step(tmp_path):
    from pcnn_explore.agents.replay_storage import unpack
    from pcnn_explore.checkpoint import load
    from pcnn_explore.train import TrainConfig, load_policy, read_log, train

    cfg = TrainConfig.preset("smoke", env="DeepSea-3-v0", agent="reactor", steps=120, learning_starts=30,
                             out_dir=str(tmp_path / "run"), tensorboard=False)
    train(cfg)
    got = rs.trace_products(cfg.out_dir)
    log = read_log(cfg.out_dir)
    won = [int(e) for e, r in zip(log["episode"], log["return"]) if r > 0.5]
    assert got["episodes"] == won and got["successes"] == len(won) > 0 and got["replayed"] == 40
    (shard,) = load(tmp_path / "run" / "checkpoint.pt")["replay"]["shards"]
    agent = load_policy(cfg.out_dir)[1].agent
    for e, product in zip(got["episodes"], got["products"]):
        slots = np.flatnonzero(np.asarray(shard["episode_id"]) == e)
        slots = slots[np.argsort(np.asarray(shard["episode_step"])[slots])]
        frames = np.zeros((int(shard["filled"]), *shard["obs_shape"]), np.uint8)
        unpack(shard["frames_z"], out=frames)
        agent.reset_state(0)  # the actor starts each episode from a zero LSTM state
        c = []
        for t, slot in enumerate(slots[:-1]):  # the last slot holds the final observation only
            pi = agent.policy([frames[slot]], [0])[0]
            a, mu = int(shard["action"][slot]), float(shard["mu"][slot])
            c.append(min(1.0, pi[a] / np.float64(np.float32(mu))))
        assert len(c) == 3 and product == pytest.approx(float(np.prod(c[1:])), rel=1e-5)
    with pytest.raises(ValueError, match="Reactor run"):
        cfg2 = TrainConfig.preset("smoke", env="DeepSea-3-v0", steps=30, out_dir=str(tmp_path / "dqn"), tensorboard=False)
        train(cfg2)
        rs.trace_products(cfg2.out_dir)
