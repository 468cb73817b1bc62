"""Notebook 07 (Fig. 5) under the PixelCNN's two optimizer readings, as the preregistration
(:mod:`pcnn_explore.study.preregistered.pixelcnn_readings`) fixes it: each reading's lines, claims and seeds at
the study profile (read from the settings and plan objects, nothing trained), the seeds and lines it refuses
before any training, the claims of the two runs joined into one record (:func:`pcnn_explore.study.join_readings`,
on hand-made decisions: 6 seeds, the paired sign-flip test, every difference one way gives p = 1/64 that way and
1 the other), the reading each run's metrics.json records, and two smoke runs of the notebook, one per reading,
taken into a report as one notebook."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from pcnn_explore.experiments.agents import deep_sea_figures as dsf
from pcnn_explore.experiments.agents import deep_sea_study as study
from pcnn_explore.report.take import joined_metrics
from pcnn_explore.run.lines import reading_free
from pcnn_explore.study import DEPENDS_ON_OPTIMIZER, Claim, decide, decisions_of, join_readings
from pcnn_explore.study.preregistered import deep_sea as pre
from pcnn_explore.study.preregistered import pixelcnn_readings as rerun
from pcnn_explore.study.preregistered.deep_sea_power import DESIGNS

from test_claims_snapshot import check_agent_rerun
from test_deep_sea_study import _log
from test_reproduce_reading import take_both_readings

SEEDS = tuple(range(801, 841))
PIXELCNN_CLAIMS = ("pixelcnn_bonus_explores", "pixelcnn_beats_cts", "position_bias_helps")
TF1_LINES = (*DESIGNS["07"]["lines"], "paper_pixelcnn", "kit_pixelcnn_pos")
TORCH_LINES = ("dqn", "paper_pixelcnn_torch", "kit_pixelcnn_pos_torch")
_BIN = Path(sys.executable).parent / "pcnn-explore"
_CLI = [str(_BIN)] if _BIN.is_file() else [sys.executable, "-m", "pcnn_explore"]


# ------------------------------------------------------------------ each reading's plan and settings
def test_the_paper_readings_run_decides_every_claim_on_the_new_seeds_with_both_pixelcnn_lines():
    p = dsf.plan("fig5")
    assert p == dsf.plan("fig5", "tf1")
    assert p.lines == TF1_LINES == dict(rerun.PLANS["07"].lines)["tf1"]
    assert p.seeds == SEEDS and (p.sizes, p.episodes) == ((10,), (1000,))
    assert [c.name for c in p.claims] == [c.name for c in pre.PLANS["07"].claims]
    by = {c.name: c for c in p.claims}
    # the first plan declared both PixelCNN claims "not testable: too few seeds" (their lines did not fit); the
    # readings' re-run fits them at 40 seeds (39 needed): decided, as 07 declared them
    for name, lines in (("pixelcnn_bonus_explores", ("paper_pixelcnn", "dqn")),
                        ("position_bias_helps", ("kit_pixelcnn_pos", "paper_pixelcnn"))):
        assert pre.PLANS["07"].claim(name).test == "not_testable"
        assert (by[name].test, by[name].reason, by[name].lines, by[name].direction) == ("sign_flip", "", lines, "greater")
        assert by[name].design.smallest_effect == 0.2 and rerun.seeds_needed(name) == 39 <= len(p.seeds)
    assert by["pixelcnn_beats_cts"].test == "not_testable" and by["pixelcnn_beats_cts"].reason == "not testable on this task"
    # every other claim as 07's plan has it, on the new seeds
    for c in p.claims:
        assert c.design.seeds == SEEDS and c.design.sizes == (10,)
        if c.name not in ("pixelcnn_bonus_explores", "position_bias_helps"):
            old = pre.PLANS["07"].claim(c.name)
            assert c == dataclasses.replace(old, design=dataclasses.replace(old.design, seeds=SEEDS))
    assert [v.key for v in dsf.variants("fig5")] == list(TF1_LINES)


def test_the_torch_run_takes_dqn_and_the_torch_pixelcnn_lines_and_the_claims_that_compare_them():
    p = dsf.plan("fig5", "torch")
    assert p.lines == TORCH_LINES and p.seeds == SEEDS and (p.sizes, p.episodes) == ((10,), (1000,))
    tf1 = dsf.plan("fig5", "tf1")
    assert [c.name for c in p.claims] == list(PIXELCNN_CLAIMS)
    lines = {c.name: c.lines for c in p.claims}
    assert lines == {"pixelcnn_bonus_explores": ("paper_pixelcnn_torch", "dqn"),
                     "pixelcnn_beats_cts": ("paper_pixelcnn_torch", "paper_cts"),
                     "position_bias_helps": ("kit_pixelcnn_pos_torch", "paper_pixelcnn_torch")}
    for c in p.claims:  # the same claim, the same test: only the lines differ
        assert c == dataclasses.replace(tf1.claim(c.name), lines=c.lines)
    variants = {v.key: v for v in dsf.variants("fig5", "torch")}
    assert list(variants) == list(TORCH_LINES)
    assert [dict(variants[k].overrides)["density_optimizer"] for k in TORCH_LINES[1:]] == ["torch", "torch"]
    assert variants["paper_pixelcnn_torch"].kind == "paper" and variants["kit_pixelcnn_pos_torch"].kind == "kit"


@pytest.mark.parametrize("reading", [None, "tf1", "torch"])
def test_the_study_settings_name_the_reading_and_take_the_new_seeds(reading):
    s = dsf.settings("fig5", "study", density_optimizer=reading)
    assert s.density_optimizer == (reading or "tf1") and s.seeds == SEEDS
    assert (s.sizes, s.episodes, s.mapping_seed) == ((10,), (1000,), "per_seed")
    assert s.to_dict()["density_optimizer"] == (reading or "tf1")
    assert dsf.settings("fig5", "study", density_optimizer=reading, n_seeds=10).seeds == SEEDS[:10]
    smoke = dsf.settings("fig5", "smoke", density_optimizer=reading)  # smoke keeps its tiny part
    assert (smoke.seeds, smoke.sizes, smoke.episodes, smoke.density_optimizer) == ((0, 1), (4,), (12,), reading or "tf1")


@pytest.mark.parametrize("seed, n_seeds, match", [
    (701, 40, r"verdict seeds must be the declared new seeds 801-840; got seen \[701, 702, "),
    (7, 6, r"got seen \[7, 8, 11\]; undeclared \[9, 10, 12\]"),
    (835, 10, r"got undeclared \[841, 842, 843, 844\]"),
    (401, 10, r"seeds \[401, .* are the seen seeds 401-410"),
    (301, 10, r"seeds \[301, 302, 303, 304, 305\] are tuning seeds"),
    (801, 5, r"5 seeds cannot decide claim (cts|pixelcnn)_bonus_explores at the study profile: .* n_seeds >= 6"),
])
@pytest.mark.parametrize("reading", ["tf1", "torch"])
def test_the_study_profile_refuses_any_other_seeds_in_one_line(seed, n_seeds, match, reading):
    with pytest.raises(ValueError, match=match) as e:
        dsf.settings("fig5", "study", seed=seed, n_seeds=n_seeds, density_optimizer=reading)
    assert "\n" not in str(e.value)


def test_a_reading_that_is_none_or_a_figure_without_pixelcnn_is_refused():
    with pytest.raises(ValueError, match=r"density_optimizer must be one of tf1, torch .* got 'adam'"):
        dsf.settings("fig5", "smoke", density_optimizer="adam")
    with pytest.raises(ValueError, match=r"Fig. 11 trains no PixelCNN line: its plan takes no optimizer reading"):
        dsf.settings("fig11", "study", density_optimizer="torch")
    with pytest.raises(ValueError, match="setting rmsprop must be one of tf1, torch"):
        study.DeepSeaStudySettings(density_optimizer="sgd").check()
    assert dsf.settings("fig11", "study").density_optimizer is None  # 08-10 name none


@pytest.mark.parametrize("reading, other", [("torch", "paper_pixelcnn"), ("tf1", "kit_pixelcnn_pos_torch")])
def test_a_line_of_the_other_reading_is_refused_before_any_training(tmp_path, reading, other):
    from pcnn_explore.run.lines import line

    s = dsf.settings("fig5", "smoke", density_optimizer=reading)
    lines = [*dsf.variants("fig5", reading), line(other)]
    with pytest.raises(ValueError, match=rf"a {reading} run .* cannot run {other} \((tf1|torch)\): give each "
                                          "reading's own lines") as e:
        dsf.run("fig5", s, lines, tmp_path)
    assert "\n" not in str(e.value) and not any(tmp_path.iterdir())


# ------------------------------------------------------------------ the two runs' claims joined
SIX = [801, 802, 803, 804, 805, 806]


def _decided(name: str, lines: tuple[str, ...], gap: float, kind: str = "paper"):
    """A 07-like claim on 6 seeds whose per-seed differences (a - b) are all ``gap``."""
    b = [0.1, 0.2, 0.0, 0.3, 0.1, 0.2]
    return decide(Claim("07_dqn_pixelcnn", name, kind, name, "sign_flip", quantity="score", lines=lines),
                  [x + gap for x in b], b, seeds=SIX)


def _tf1():
    return [_decided("cts_bonus_explores", ("paper_cts", "dqn"), 0.5),
            _decided("pixelcnn_bonus_explores", ("paper_pixelcnn", "dqn"), 0.4),
            _decided("kit_novelty_helps", ("kit_novelty", "paper_cts"), -0.2, "kit"),
            _decided("position_bias_helps", ("kit_pixelcnn_pos", "paper_pixelcnn"), 0.3, "kit"),
            _decided("horizon", ("paper_cts_horizon", "dqn_mmc"), 0.1)]


def _torch():
    return [_decided("pixelcnn_bonus_explores", ("paper_pixelcnn_torch", "dqn"), -0.4),
            _decided("position_bias_helps", ("kit_pixelcnn_pos_torch", "paper_pixelcnn_torch"), 0.3, "kit")]


def test_join_keeps_the_claims_of_no_pixelcnn_line_and_joins_the_others_in_the_paper_runs_order():
    tf1, torch = _tf1(), _torch()
    assert [d.word for d in tf1] == ["agrees", "agrees", "differs", "agrees", "agrees"]
    assert [d.word for d in torch] == ["differs", "agrees"]
    joined = join_readings(tf1, torch, reading_free=reading_free)
    assert [d.name for d in joined] == [d.name for d in tf1]
    # a claim none of whose lines trains a PixelCNN (DQN, DQN + MMC, the CTS lines, a CTS kit line) is kept as it is
    for i in (0, 2, 4):
        assert joined[i] == tf1[i] and joined[i].readings == ()
    px, pos = joined[1], joined[3]
    # +0.4 under tf1 (p = 1/64, agrees), -0.4 under torch (differs): the word depends on the reading, tf1's numbers
    assert px.word == DEPENDS_ON_OPTIMIZER and px.estimate == pytest.approx(0.4) and px.p == pytest.approx(1 / 64)
    assert [(k, d.word, d.estimate) for k, d in px.readings] == [("tf1", "agrees", pytest.approx(0.4)),
                                                                 ("torch", "differs", pytest.approx(-0.4))]
    assert pos.word == "agrees" and [k for k, _ in pos.readings] == ["tf1", "torch"]
    assert pos.sentence == f"{tf1[3].sentence} (the torch reading of the PixelCNN's optimizer too: {torch[1].sentence})"


@pytest.mark.parametrize("case, named", [
    ("pixelcnn claim missing", "position_bias_helps"),  # compares the kit's PixelCNN line: the torch run must decide it
    ("claim the paper run lacks", "extra"),
    ("unnamed lines missing", "rates"),  # lines that are no named line (a density notebook's): nothing is known of them
    ("no lines missing", "lineless"),
    ("reactor line missing", "reactor_pos"),  # 13's lines are not 07's named lines
])
def test_join_refuses_any_other_difference_naming_the_claims(case, named):
    tf1, torch = _tf1(), _torch()
    if case == "pixelcnn claim missing":
        torch = torch[:1]
    elif case == "claim the paper run lacks":
        torch = [*torch, _decided("extra", ("paper_pixelcnn_torch", "dqn"), 0.1)]
    elif case == "unnamed lines missing":
        tf1 = [*tf1, _decided("rates", ("constant 1e-3", "0.1 n^-1/2"), 0.1)]
    elif case == "no lines missing":
        tf1 = [*tf1, _decided("lineless", (), 0.1)]
    else:
        tf1 = [*tf1, _decided("reactor_pos", ("reactor_pixelcnn_pos", "reactor"), 0.1, "kit")]
    with pytest.raises(ValueError, match=rf"the tf1 and torch runs decide different claims \({named}\): run the same "
                                         "notebook, at the same profile, under each reading$"):
        join_readings(tf1, torch, reading_free=reading_free)


def test_join_without_a_reading_free_rule_asks_every_claim_of_both_runs():
    """The study layer knows no lines: only the caller's rule (the run layer's, which the report passes) lets the
    sensitivity run leave a claim out."""
    with pytest.raises(ValueError, match=r"decide different claims \(cts_bonus_explores, kit_novelty_helps, horizon\)"):
        join_readings(_tf1(), _torch())


def test_join_refuses_the_torch_runs_claims_in_another_order_or_joined_twice():
    tf1, torch = _tf1(), _torch()
    with pytest.raises(ValueError, match=r"decide different claims \(the same claims in another order\)"):
        join_readings(tf1, torch[::-1], reading_free=reading_free)
    with pytest.raises(ValueError, match="already: take each reading's own run"):
        join_readings(join_readings(tf1, torch, reading_free=reading_free), torch, reading_free=reading_free)


# ------------------------------------------------------------------ each run's metrics.json and the take
def _study(tmp_path: Path, reading: str, found: dict[str, list[bool]], cap: int = 8):
    """A study of 07's lines under ``reading`` from hand-made DeepSea-4 logs on 6 seeds: per key, every seed's
    episodes' +1s (a key not in ``found`` never finds the +1)."""
    settings = study.DeepSeaStudySettings(profile="study", sizes=(4,), episodes=(cap,), seeds=tuple(SIX), workers=1,
                                          density_optimizer=reading)
    lines, runs = dsf.variants("fig5", reading), []
    for v in lines:
        for seed in SIX:
            folder = tmp_path / reading / v.key / str(seed)
            _log(folder, 4, found.get(v.key, [False] * cap), list(range(1, cap + 1)))
            runs.append(study.read_run(folder, v.key, 4, seed, cap))
    return study.DeepSeaStudy(settings, lines, runs, wall_s=60.0)


def test_each_runs_metrics_record_its_reading_and_the_take_joins_them(tmp_path):
    learnt = [False] * 4 + [True] * 4
    tf1 = _study(tmp_path, "tf1", {"paper_cts": learnt, "paper_cts_horizon": learnt, "paper_pixelcnn": learnt})
    torch = _study(tmp_path, "torch", {})
    m = {r: dsf.metrics("fig5", s, dsf.decide("fig5", s)) for r, s in (("tf1", tf1), ("torch", torch))}
    for r in ("tf1", "torch"):
        assert m[r]["settings"]["density_optimizer"] == r and tuple(m[r]["plan"]["lines"]) == dsf.plan("fig5", r).lines
    assert "the PixelCNN's optimizer reading torch" in dsf.closing_note("fig5", torch, decisions_of(m["torch"]))
    # DQN-PixelCNN scores 1 on all 6 seeds under tf1 against DQN's 0 (p = 1/64, agrees), 0 under torch (every pair a
    # tie: inconclusive): the claim depends on the reading; the notebook's word is tf1's
    joined = joined_metrics(m["tf1"], m["torch"], "torch", {"seconds": 75.0, "commit": "c"}, "07_dqn_pixelcnn")
    claims = {d.name: d for d in decisions_of(joined)}
    assert list(claims) == [c.name for c in dsf.plan("fig5").claims]
    px = claims["pixelcnn_bonus_explores"]
    assert px.word == DEPENDS_ON_OPTIMIZER and px.p == pytest.approx(1 / 64)
    assert [(k, d.word) for k, d in px.readings] == [("tf1", "agrees"), ("torch", "inconclusive")]
    assert dict(px.readings)["torch"].claim.lines == ("paper_pixelcnn_torch", "dqn")
    assert {n for n, d in claims.items() if d.readings and d.readings[0][0] == "tf1"} == set(PIXELCNN_CLAIMS)
    assert claims["cts_bonus_explores"] == decisions_of(m["tf1"])[0]  # kept as the tf1 run decided it
    assert joined["word"] == m["tf1"]["word"] and joined["sensitivity_reading"]["reading"] == "torch"
    assert joined["sensitivity_reading"]["settings"]["density_optimizer"] == "torch"


# ------------------------------------------------------------------ the notebook, both readings, one report
@pytest.mark.slow
def test_two_smoke_runs_of_07_one_per_reading_are_taken_into_a_report_as_one(tmp_path):
    """``reproduce --only 07 --reading R`` (papermill, the smoke profile) under each reading: each metrics.json
    records its reading, lines and claims; ``--take RUN --take-reading torch=RUN2`` takes the two as one 07."""
    runs, nb = {}, "07_dqn_pixelcnn"
    for reading, lines in (("tf1", TF1_LINES), ("torch", TORCH_LINES)):
        out = tmp_path / reading
        done = subprocess.run([*_CLI, "reproduce", "--only", "07", "--reading", reading, "--out", str(out)],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        m = json.loads((out / nb / "metrics.json").read_text())
        assert m["profile"] == "smoke" and m["settings"]["density_optimizer"] == reading
        assert (m["settings"]["seeds"], m["settings"]["sizes"]) == ([0, 1], [4])
        assert set(m["lines"]) == set(lines)
        assert [c["name"] for c in m["claims"]] == [c.name for c in dsf.plan("fig5", reading).claims]
        runs[reading] = out
    report = take_both_readings(runs, tmp_path / "report")
    taken = json.loads((report / nb / "metrics.json").read_text())
    assert taken["settings"]["density_optimizer"] == "tf1"
    assert taken["sensitivity_reading"]["settings"]["density_optimizer"] == "torch"
    joined = [c["name"] for c in taken["claims"] if [k for k, _ in c["readings"] or ()] == ["tf1", "torch"]]
    assert joined == list(PIXELCNN_CLAIMS)
    assert "07_dqn_pixelcnn" in (report / "index.html").read_text()
    # the check the shipped report's re-run 07 is held to (test_claims_snapshot), on the smoke profile's seeds
    check_agent_rerun(nb, taken, types.SimpleNamespace(seeds=(0, 1)))
