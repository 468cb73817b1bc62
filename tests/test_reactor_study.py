"""Notebook 13's pieces on hand-made values: the lines (the paper's CTS form on both sides of every
paper claim, the kit's lines apart), each claim decided by the exact sign flip paired by seed id
(agrees, differs, inconclusive, not testable) by the study layer, the kit's traces_cut never in the
paper verdict, one
run's values from a hand-made log (the score counts bsuite's logged solve episode), the trace summary
from a hand-made traces.csv, and the settings' checks (the study profile refuses too few seeds and
tuning seeds before any training)."""
from __future__ import annotations

import csv
import dataclasses
import math

import pytest

from pcnn_explore.experiments.agents import reactor_study as rs
from pcnn_explore.study import notebook_words
from pcnn_explore.run.log import LOG_COLUMNS
from pcnn_explore.run.trace_log import TRACE_COLUMNS

PAPER_LINES = ("reactor", "reactor_cts", "cts_mmc")
ALL_LINES = PAPER_LINES + ("reactor_pixelcnn_pos", "pixelcnn_pos_mmc")
SEEDS = tuple(range(401, 411))


def _study(base, bonus, dqn, products, beta=0.1, kit=None):
    """Per-seed AUCs of Reactor, Reactor-CTS and DQN-CTS + MMC; ``products``: Reactor-CTS's trace
    products per seed (NaN: no replay); ``kit``: (Reactor-PixelCNN-pos, DQN-PixelCNN-pos) AUCs."""
    lines = dict(zip(PAPER_LINES, (base, bonus, dqn)))
    if kit is not None:
        lines.update(zip(ALL_LINES[3:], kit))
    n = len(base)
    per = {v: {"auc": list(a), "late": list(a), "solved": [0.0] * n, "solve_episode": [401.0] * n,
               "bsuite_solve_episode": [401.0] * n} for v, a in lines.items()}
    traces = {v: {"from_start_product": [math.nan] * n} for v in lines if v.startswith("reactor")}
    traces["reactor_cts"] = {"from_start_product": list(products)}
    return {"per_seed": per, "dqn_mmc_beta": beta, "runs": [], "traces": traces}


def _decide(study, seeds=SEEDS, lines=PAPER_LINES):
    """Each claim decided (:func:`rs.decisions`) by its name."""
    return {d.name: d for d in rs.decisions(study, seeds, lines)}


def _words(decided):
    """(the notebook's word, its kit word) of the decided claims."""
    return notebook_words(list(decided.values()))


def test_every_paper_claim_compares_the_papers_cts_form_on_both_sides():
    from pcnn_explore.run.config import TrainConfig

    paper = [c for c in rs.CLAIMS if c.kind == "paper"]
    assert [(c.name, c.lines) for c in paper] == [("bonus_helps_reactor", ("reactor_cts", "reactor")),
                                                  ("dqn_mmc_above_reactor_bonus", ("cts_mmc", "reactor_cts"))]
    assert {c.name: c.kind for c in rs.CLAIMS if c.kind == "kit"} == {
        "traces_cut": "kit", "position_bias_helps_reactor": "kit", "kit_dqn_above_reactor_bonus": "kit"}
    smoke = rs.settings_for("smoke", variants=ALL_LINES)
    configs = {x.variant: TrainConfig.preset("smoke", env=x.env, **x.config_fields()) for x in rs.specs(smoke, "/x")}
    forms = {}
    for c in paper:
        for k in c.lines:
            assert rs.LINES[k].kind in ("paper", "baseline")
            cfg = configs[k]
            if cfg.bonus != "none":
                forms[k] = (cfg.bonus, cfg.pg_scale, cfg.pg_schedule, cfg.bonus_scale, cfg.scored_frame, cfg.novelty_epsilon)
                assert cfg.mmc_beta == (0.1 if cfg.agent == "dqn" else 0.0)
                assert cfg.bonus_fraction == (0.25 if cfg.agent == "reactor" else 1.0)
    # the same density model and the paper's CTS form (c = 1 constant, beta 0.05), the state acted in scored
    assert forms == {"reactor_cts": ("cts", 1.0, "constant", 0.05, "state", 0.0),
                     "cts_mmc": ("cts", 1.0, "constant", 0.05, "state", 0.0)}
    assert {k: v.kind for k, v in rs.LINES.items()} == {"reactor": "baseline", "reactor_cts": "paper", "cts_mmc": "paper",
                                                        "reactor_pixelcnn_pos": "kit", "pixelcnn_pos_mmc": "kit"}


def test_claims_that_hold_on_every_seed_agree_with_p_two_to_the_minus_ten():
    base, bonus = [0.0] * 10, [0.5] * 5 + [0.7] * 5  # Reactor-CTS above Reactor on every seed
    dqn = [0.9] * 10  # DQN-CTS + MMC above Reactor-CTS on every seed
    c = _decide(_study(base, bonus, dqn, [0.01] * 10))
    assert set(c) == {"bonus_helps_reactor", "dqn_mmc_above_reactor_bonus", "traces_cut"}
    helps = c["bonus_helps_reactor"]
    assert (helps.word, helps.kind, helps.claim.lines, helps.test, helps.n) == (
        "agrees", "paper", ("reactor_cts", "reactor"), "sign_flip", 10)
    assert helps.p == 2.0 ** -10 and helps.estimate == pytest.approx(0.6)  # only all-plus reaches 6.0
    assert helps.claim.labels == ("Reactor-CTS", "Reactor") and helps.values == tuple(bonus) and helps.values_b == tuple(base)
    assert helps.seeds == SEEDS and helps.claim.measure == "AUC Reactor-CTS - Reactor"
    sec42 = c["dqn_mmc_above_reactor_bonus"]
    assert (sec42.word, sec42.claim.lines, sec42.p, sec42.n) == ("agrees", ("cts_mmc", "reactor_cts"),
                                                                            2.0 ** -10, 10)
    assert sec42.estimate == pytest.approx(0.3)
    # traces_cut: beta - product = 0.09 on all 10 seeds: p = 2^-10, and it is the kit's
    t = c["traces_cut"]
    assert (t.word, t.kind, t.p, t.n, t.test) == ("agrees", "kit", 2.0 ** -10, 10, "sign_flip")
    assert t.values == pytest.approx((0.09,) * 10) and t.claim.measure == "MMC mix 0.1 - prod c from x_0 (Reactor-CTS)"
    assert _words(c)[0] == "agrees" and _words(c)[1] == "agrees"


def test_traces_cut_is_the_kits_and_never_changes_the_paper_verdict():
    base, bonus, dqn = [0.0] * 10, [0.6] * 10, [0.9] * 10
    below = _decide(_study(base, bonus, dqn, [0.01] * 10))
    above = _decide(_study(base, bonus, dqn, [0.5] * 10))  # every product above beta 0.1
    assert below["traces_cut"].word == "agrees" and above["traces_cut"].word == "differs"
    assert above["traces_cut"].p == 1.0  # beta - product = -0.4 on every seed
    assert _words(below)[0] == _words(above)[0] == "agrees"
    assert _words(below)[1] == "agrees" and _words(above)[1] == "differs"
    # without the paper claims the traces alone give no paper verdict
    only = {"traces_cut": below["traces_cut"]}
    assert _words(only)[0] == _words({})[0] and _words(only)[0] not in ("agrees", "differs")  # as if none were made
    assert _words(only)[1] == "agrees"
    # fewer than 2 seeds with a replay: not testable (too few seeds), still the kit's
    one = _decide(_study(base, bonus, dqn, [0.01] + [math.nan] * 9))["traces_cut"]
    assert one.word == "not testable" and one.kind == "kit" and one.why == "needs 6 per line, has 1"
    assert one.sentence.startswith("not testable: too few seeds at this profile")
    assert one.seeds == (401,) and one.values == pytest.approx((0.09,))


def test_claims_that_go_the_other_way_differ():
    base, bonus = [0.3] * 10, [0.1] * 10  # Reactor-CTS below Reactor on every seed
    dqn = [0.0] * 10  # DQN-CTS + MMC below Reactor-CTS
    c = _decide(_study(base, bonus, dqn, [0.5] * 10))
    assert {k: x.word for k, x in c.items()} == {"bonus_helps_reactor": "differs",
                                                     "dqn_mmc_above_reactor_bonus": "differs", "traces_cut": "differs"}
    assert c["bonus_helps_reactor"].p == 1.0 and c["bonus_helps_reactor"].estimate == pytest.approx(-0.2)
    assert _words(c)[0] == "differs"


def test_all_or_nothing_seeds_are_decided_by_the_exact_sign_flip():
    # Reactor-CTS finds the +1 on 5 of 10 seeds (AUC 1), Reactor on none: differences five 1s and five 0s;
    # the sign flip moves only the five 1s: p = P(all five +) = 2^-5 = 0.03125 > 0.025: inconclusive
    # (a paired t interval, mean 0.5, sd 0.527, would call it: t = 3.0 > 2.262)
    base, dqn = [0.0] * 10, [1.0] * 10
    five = _decide(_study(base, [1.0, 0.0] * 5, dqn, [math.nan] * 10))["bonus_helps_reactor"]
    assert five.word == "inconclusive" and five.p == 2.0 ** -5 and five.n == 10
    # six of ten: p = 2^-6 = 0.015625 <= 0.025: agrees
    six = _decide(_study(base, [1.0] * 6 + [0.0] * 4, dqn, [math.nan] * 10))
    assert six["bonus_helps_reactor"].word == "agrees" and six["bonus_helps_reactor"].p == 2.0 ** -6
    # DQN-CTS 1 on every seed against Reactor-CTS's [1, 0] * 5 / six ones: the same arithmetic
    assert six["dqn_mmc_above_reactor_bonus"].p == 2.0 ** -4  # four seeds where DQN leads
    assert six["dqn_mmc_above_reactor_bonus"].word == "inconclusive"
    assert _words(six)[0] == "partly"


def test_two_seeds_are_not_testable():
    two = _decide(_study([0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [0.01, 0.02]), seeds=(0, 1))
    # min p over 2 seeds: 2^-2 = 0.25 > 0.025
    assert {k: x.word for k, x in two.items()} == {k: "not testable" for k in two}
    assert two["bonus_helps_reactor"].p == 0.25 and two["bonus_helps_reactor"].n == 2
    assert _words(two)[0].startswith("not testable: too few seeds at this profile")


def test_kit_lines_get_kit_claims_only():
    base, bonus, dqn = [0.0] * 10, [0.0] * 10, [0.0] * 10  # the paper's lines show nothing
    kit = ([0.8] * 10, [0.9] * 10)  # the kit's PixelCNN lines lead on every seed
    c = _decide(_study(base, bonus, dqn, [math.nan] * 10, kit=kit), lines=ALL_LINES)
    assert c["position_bias_helps_reactor"].kind == "kit" and c["position_bias_helps_reactor"].word == "agrees"
    assert c["kit_dqn_above_reactor_bonus"].claim.lines == ("pixelcnn_pos_mmc", "reactor_pixelcnn_pos")
    assert c["kit_dqn_above_reactor_bonus"].word == "agrees"
    # differences all 0 on the paper's lines: p = 1 both ways: inconclusive; the kit's agreement never lifts it
    assert c["bonus_helps_reactor"].word == "inconclusive" and c["bonus_helps_reactor"].p == 1.0
    assert _words(c)[0] == "inconclusive"
    # two kit claims agree; traces_cut had no replay: not testable (too few seeds), so every testable one agrees
    assert c["traces_cut"].word == "not testable" and _words(c)[1] == "agrees"
    assert all(x.kind == "kit" for k, x in c.items() if set(x.claim.lines) & {"reactor_pixelcnn_pos", "pixelcnn_pos_mmc"})
    # each claim's design: the study profile's declared seeds, the PixelCNN readings' re-run's 801-820
    assert {x.claim.design.seeds for x in c.values()} == {tuple(range(801, 821))}
    with pytest.raises(ValueError, match="kind must be one of"):
        dataclasses.replace(rs.CLAIMS[0], kind="reactor")


def test_claims_not_run_are_left_out():
    c = _decide(_study([0.1] * 10, [0.2] * 10, [0.3] * 10, [math.nan] * 10), lines=("reactor",))
    assert c == {} and not _words(c)[0].startswith(("agrees", "differs")) and _words(c)[1] is None


def test_summary_and_rows_say_each_claims_kind_test_p_and_n():
    s = rs.ReactorStudySettings.preset("study", variants=PAPER_LINES, seeds=SEEDS)
    summ = rs.summary(s, _study([0.0] * 10, [0.6] * 10, [0.9] * 10, [0.5] * 10))
    assert summ["word"] == "agrees" and summ["kit_word"] == "differs"
    assert any(line.startswith("paper: the bonus helps Reactor") and "test sign_flip, n = 10" in line
               for line in summ["lines"])
    assert any(line.startswith("kit: Retrace's trace product") for line in summ["lines"])
    assert any("Reactor (baseline, samples from its policy)" in line for line in summ["lines"])
    assert any("DQN-CTS + MMC (paper, epsilon-greedy)" in line for line in summ["lines"])
    rows = rs.paper_rows(summ)
    assert rows[0][0] == "paper: auc Reactor-CTS - Reactor" and "p = 0.000977, n = 10" in rows[0][2]
    assert rows[2][0].startswith("kit: from_start_product")


def _log(path, returns, complete=None):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=LOG_COLUMNS)
        w.writeheader()
        for i, r in enumerate(returns):
            w.writerow({k: 0 for k in LOG_COLUMNS} | {"step": 4 * (i + 1), "episode": i, "return": r, "length": 4,
                                                       "complete": 1 if complete is None else complete[i]})


def test_run_values_from_a_hand_made_log(tmp_path):
    # 12 complete episodes and one cut: wins at episodes 3, 4 (1-based) -> 2 bad of 3 at e = 3 < 0.9
    _log(tmp_path / "log.csv", [0, 0, 0.99, 0.99, 0, 0, 0, 0, 0, 0, 0, 0.99, 0.99], [1] * 12 + [0])
    got = rs.run_values(tmp_path, 4)
    assert got["episodes"] == 12 and got["success"] == [0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1]
    assert got["auc"] == pytest.approx(3 / 12) and got["late"] == pytest.approx(1 / 3)  # episodes 10-12
    assert got["solve_episode"] == got["bsuite_solve_episode"] == 3 and got["solved"] and got["first_success"] == 3
    _log(tmp_path / "log.csv", [0] * 20)
    got = rs.run_values(tmp_path, 4)
    assert got["solve_episode"] is None and got["bsuite_solve_episode"] is None and not got["solved"]
    assert got["first_success"] is None and got["auc"] == 0


def test_the_score_counts_bsuites_logged_solve_episode(tmp_path):
    # 9 misses, then 2 wins: 9 bad of 11 = 0.818 < 0.9 at every-episode 11, but bsuite logs 10, 12, 14, ...:
    # at 10, 9 bad of 10 = 0.9 (not below); at 12, 10 bad of 12 = 0.833: bsuite finds it solved at 12
    _log(tmp_path / "log.csv", [0] * 9 + [0.99, 0.99, 0])
    got = rs.run_values(tmp_path, 4)
    assert got["solve_episode"] == 11 and got["bsuite_solve_episode"] == 12 and got["solved"] is True
    # the same run cut after episode 11: bsuite never logged a solved episode, so it does not count
    _log(tmp_path / "log.csv", [0] * 9 + [0.99, 0.99])
    got = rs.run_values(tmp_path, 4)
    assert got["solve_episode"] == 11 and got["bsuite_solve_episode"] is None and got["solved"] is False


def test_run_traces_weights_each_learn_call_by_its_replays(tmp_path):
    rows = [  # step, from_start, from_start_product_mean, rewarded, product_mean, c_mean, from_start_span_mean
        (10, 0, "", 0, "", 0.9, ""), (20, 2, 0.5, 3, 0.6, 0.8, 9), (30, 1, 0.2, 1, 0.2, 0.7, 6), (40, 0, "", 2, 0.9, 0.6, "")]
    with open(tmp_path / "traces.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=TRACE_COLUMNS)
        w.writeheader()
        for step, fs, fsp, rw, p, c, span in rows:
            w.writerow({k: "" for k in TRACE_COLUMNS} | {"step": step, "sequences": 8, "from_start": fs,
                                                         "from_start_product_mean": fsp, "rewarded": rw,
                                                         "product_mean": p, "c_mean": c, "from_start_span_mean": span})
    got = rs.run_traces(tmp_path, bins=2)
    assert got["learn_calls"] == 4 and got["from_start"] == 3 and got["rewarded"] == 6
    assert got["from_start_product"] == pytest.approx((2 * 0.5 + 0.2) / 3)
    assert got["from_start_span"] == pytest.approx((2 * 9 + 6) / 3)
    assert got["rewarded_product"] == pytest.approx((3 * 0.6 + 0.2 + 2 * 0.9) / 6)
    assert got["c_mean"] == pytest.approx(0.75)
    steps, curve = got["curve"]  # bins (0, 20] and (20, 40]
    assert steps == [20.0, 40.0] and curve == pytest.approx([0.5, 0.2])


@pytest.mark.parametrize("given, match", [
    (dict(sizes=(40,)), "one 33-step Reactor sequence"), (dict(variants=("reactor_mmc",)), "unknown variant"),
    (dict(variants=("reactor_pixelcnn",)), "not a line of notebook 13"),
    (dict(variants=("reactor", "reactor")), "repeat"), (dict(episodes=0), "episodes"), (dict(seeds="0"), "tuple"),
    (dict(variants=("cts_mmc",)), "at least one Reactor line"), (dict(seeds=(1, 1)), "repeat"),
])
def test_bad_settings_fail_before_any_run(tmp_path, given, match):
    with pytest.raises((ValueError, TypeError), match=match):
        rs.run(rs.ReactorStudySettings.preset("smoke", **given), tmp_path)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("seeds, match", [
    (tuple(range(801, 806)), "5 seeds cannot decide .* needs at least 6"),  # 2^-5 = 0.031 > 0.025
    # 701-720 decided the verdicts before the PixelCNN's optimizer readings were named: seen now
    (tuple(range(701, 721)), r"notebook 13: verdict seeds must be the declared new seeds 801-840; got seen \[701, "),
    (tuple(range(841, 851)), r"notebook 13: .* got undeclared \[841, "),
    (tuple(range(301, 311)), r"seeds \[301, 302, 303, 304, 305\] are tuning seeds"),
    ((0, 1, 2, 3, 4, 5, 6, 7, 8, 9), r"seeds \[0, 1, 2, 3, 4\] are tuning seeds"),
    (tuple(range(405, 415)), r"seeds \[405, 406, 407, 408, 409, 410\] are seen seeds, pilot data now"),
])
def test_the_study_profile_refuses_before_any_training(tmp_path, seeds, match):
    with pytest.raises(ValueError, match=match) as e:
        rs.run(rs.ReactorStudySettings.preset("study", seeds=seeds), tmp_path)
    assert "\n" not in str(e.value)  # one line
    assert not any(tmp_path.iterdir())
    with pytest.raises(ValueError, match=match):
        rs.settings_for("study", seed=seeds[0], n_seeds=len(seeds))
    # the smoke profile keeps its 2 seeds (0, 1): plumbing, never a verdict
    assert rs.settings_for("smoke").seeds == (0, 1)


def test_presets():
    # the study profile's seeds are the PixelCNN readings' re-run's new verdict seeds, 801-820 (401-410 and 701-740
    # are seen); the PixelCNN lines under the paper's reading unless the settings name the other
    s = rs.settings_for("study")
    assert s.seeds == tuple(range(801, 821)) and s.sizes == (10,) and s.steps(10) == 10 * s.episodes
    assert s.density_optimizer == "tf1" and rs.settings_for("study", density_optimizer="torch").seeds == s.seeds
    assert s.variants == ALL_LINES
    assert max(rs.settings_for("paper").sizes) <= 33
    assert rs.settings_for("smoke", seed=3, n_seeds=2).seeds == (3, 4)
    specs = rs.specs(s, "/x")
    assert len(specs) == 5 * 20 and specs[0].env == "DeepSea-10-v0" and specs[0].steps == 10 * s.episodes
    cts = [x for x in specs if x.variant == "reactor_cts"][0]
    assert dict(cts.overrides) == {"tensorboard": False, "bonus_fraction": 0.25, "bonus_scale": 0.05,
                                   "intrinsic_only": False, "mmc_beta": 0.0, "novelty_epsilon": 0.0,
                                   "pg_scale": 1.0, "pg_schedule": "constant", "scored_frame": "state",
                                   "mapping_seed": 10801}
    # each verdict seed on its own declared map (seed + 10,000); the smoke profile keeps bsuite's 42
    assert [dict(x.overrides)["mapping_seed"] for x in specs if x.variant == "reactor"] == list(range(10801, 10821))
    assert all("mapping_seed" not in dict(x.overrides) for x in rs.specs(rs.settings_for("smoke"), "/x"))
    assert [dict(x.overrides)["mapping_seed"] for x in rs.specs(rs.settings_for("smoke", mapping_seed=5), "/x")
            if x.variant == "reactor"] == [5, 5]
    with pytest.raises(ValueError, match="mapping_seed must be a non-negative integer, 'per_seed'"):
        rs.settings_for("smoke", mapping_seed=-1).check()
    assert cts.display == "Reactor-CTS" and rs.line_labels(("pixelcnn_pos_mmc",)) == {
        "pixelcnn_pos_mmc": "DQN-PixelCNN, position bias + MMC (kit)"}


def test_the_papers_claim_is_the_reports_claim():
    """The report index shows ``paper.verdict`` as the notebook's claim: 13 states both of its claims."""
    assert "Fig. 7, 8" in rs.PAPER["verdict"] and "Sec. 4.2" in rs.PAPER["verdict"] and "CTS" in rs.PAPER["verdict"]
