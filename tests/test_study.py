"""The study layer: one claim, one decision, one path through pcnn_explore.verdicts, one record.

Each test form the notebooks use is decided on hand-computed cases; every decision's record survives
JSON and is decided again to the same decision; a report written before the record is refused.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from pcnn_explore.study import (
    DEPENDS_ON_SCALE,
    SCHEMA,
    Claim,
    Decision,
    Design,
    combine_readings,
    decide,
    decide_again,
    decisions_of,
    metrics_record,
    notebook_words,
)
from pcnn_explore.verdicts import LINES_DO_NOT_MOVE, NOT_ON_THIS_TASK, NOT_TESTABLE, TOO_FEW_SEEDS

ROOT = Path(__file__).resolve().parents[1]


def claim(test: str, kind: str = "paper", name: str = "c", **kw) -> Claim:
    return Claim("99_test", name, kind, f"the claim {name}", test, measure="a - b", **kw)


def again(d: Decision) -> Decision:
    """``d`` through metrics.json (strict JSON) and decided again from its record."""
    record = json.loads(json.dumps(d.to_record(), allow_nan=False))
    back = Decision.from_record(record)
    assert back == d
    return decide_again(back)


# ------------------------------------------------------------------------------ each test form
def test_paired_sign_flip_ten_of_ten_has_p_two_to_the_minus_ten():
    d = decide(claim("sign_flip"), [1.0] * 10, [0.0] * 10, seeds=range(100, 110))
    assert (d.word, d.p, d.estimate, d.n, d.test) == ("agrees", 2.0 ** -10, 1.0, 10, "sign_flip")
    assert d.seeds == tuple(range(100, 110)) and d.values == (1.0,) * 10 and d.values_b == (0.0,) * 10
    assert again(d) == d


def test_paired_sign_flip_in_the_less_direction():
    d = decide(claim("sign_flip", direction="less"), [0.0] * 6, [1.0] * 6)
    assert (d.word, d.p, d.estimate) == ("agrees", 2.0 ** -6, -1.0)
    other = decide(claim("sign_flip"), [0.0] * 6, [1.0] * 6)  # the opposite claim: shown the other way
    assert (other.word, other.p) == ("differs", 1.0)


def test_unpaired_permutation_six_against_six_has_p_one_in_924():
    d = decide(claim("permutation"), [1.0] * 6, [0.0] * 6)
    assert (d.word, d.test, d.n) == ("agrees", "permutation", 12)
    assert d.p == pytest.approx(1 / math.comb(12, 6), rel=1e-12)
    assert again(d) == d


def test_progress_against_a_threshold():
    up = decide(claim("progress"), [1.0] * 6)
    assert (up.word, up.p, up.estimate, up.n) == ("agrees", 2.0 ** -6, 1.0, 6)
    down = decide(claim("progress", threshold=0.5), [0.0] * 10)
    assert (down.word, down.p, down.estimate) == ("differs", 1.0, 0.0)
    assert again(down) == down


def test_fisher_on_solved_flags_ten_of_ten_against_none():
    d = decide(claim("fisher"), [1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [0] * 10)
    assert (d.word, d.test, d.n, d.estimate, d.interval) == ("agrees", "fisher", 20, 1.0, (None, None))
    assert d.p == pytest.approx(1 / math.comb(20, 10), rel=1e-12)
    low = 0.025 ** (1 / 10)  # Clopper-Pearson's lower bound of 10 of 10 at 95%: 0.025^(1/n)
    assert d.intervals[0] == (pytest.approx(low, rel=1e-9), 1.0)
    assert again(d) == d
    with pytest.raises(ValueError, match="solved flags"):
        decide(claim("fisher"), [0.5] * 10, [0.0] * 10)


def test_share_of_seeds_against_chance():
    d = decide(claim("share", threshold=0.1), [1.0] * 10)
    assert (d.word, d.test, d.n, d.estimate) == ("agrees", "binomial", 10, 1.0)
    assert d.p == pytest.approx(0.1 ** 10, rel=1e-12)  # P(X >= 10) for X ~ Binomial(10, 0.1)
    assert d.interval[0] == pytest.approx(0.025 ** (1 / 10), rel=1e-9)
    assert again(d) == d


def test_tost_equivalence_agrees_when_both_one_sided_tests_pass():
    # identical lines that leave the floor 0: each one-sided sign flip of d -+ margin has p = 2^-6
    d = decide(claim("sign_flip_tost", margin=0.5, floor=0.0), [1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6])
    assert (d.word, d.test, d.p, d.estimate) == ("agrees", "sign_flip_tost", 2.0 ** -6, 0.0)
    assert again(d) == d


def test_the_lines_do_not_move():
    d = decide(claim("sign_flip_tost", margin=0.1, floor=0.0), [0.0] * 10, [0.0] * 10)
    assert (d.word, d.reason) == (NOT_TESTABLE, LINES_DO_NOT_MOVE)
    assert d.why == "neither line leaves the floor 0 at one-sided 0.025"
    assert d.sentence.startswith(f"not testable: {LINES_DO_NOT_MOVE} ({d.why})")
    # a positive control that stays at the floor: not testable, though the lines themselves move
    c = decide(claim("sign_flip_tost", margin=0.5, floor=0.0), [1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6],
               control=[0.0] * 6)
    assert (c.word, c.reason, c.control) == (NOT_TESTABLE, LINES_DO_NOT_MOVE, (0.0,) * 6)
    assert c.why == "the positive control leaves the floor 0 at one-sided 0.025"
    assert again(c) == c


def test_too_few_seeds():
    d = decide(claim("sign_flip"), [1, 2, 3], [0, 0, 0])
    assert (d.word, d.reason, d.why, d.n, d.p) == (NOT_TESTABLE, TOO_FEW_SEEDS, "needs 6 per line, has 3", 3, 0.125)
    one = decide(claim("progress"), [1.0])
    assert (one.word, one.reason, one.why, one.p) == (NOT_TESTABLE, TOO_FEW_SEEDS, "needs 6 per line, has 1", None)
    assert again(one) == one


def test_a_value_that_is_not_finite_leaves_the_claim_undecided():
    d = decide(claim("sign_flip"), [1, None, 3, 4, 5, 6], [0] * 6)
    assert d.word == "inconclusive" and d.p is None and d.estimate is None
    assert d.sentence == ("inconclusive: not decided: 5 of 6 seeds give a finite value, a test needs all and at "
                          "least 2")
    assert again(d) == d


def test_declared_not_testable_with_its_reason():
    d = decide(claim("not_testable", reason=NOT_ON_THIS_TASK, note="a density notebook runs no agent"))
    assert (d.word, d.reason, d.sentence) == (NOT_TESTABLE, NOT_ON_THIS_TASK,
                                              f"{NOT_ON_THIS_TASK}: a density notebook runs no agent")
    assert d.estimate is None and d.n is None
    episode = decide(claim("not_testable", reason=TOO_FEW_SEEDS, note="one recorded episode, no seeds",
                           n_unit="episode"), [2.65], detail="in this episode the bonus peaks")
    assert (episode.estimate, episode.n) == (2.65, 1)
    assert episode.sentence == ("not testable: too few seeds at this profile (one recorded episode, no seeds): in "
                                "this episode the bonus peaks")
    two = decide(claim("not_testable", reason=TOO_FEW_SEEDS, note="needs 104 per line"), [1.0] * 40, [0.0] * 40)
    assert two.estimate is None and two.n is None and two.values == (1.0,) * 40  # kept, deciding nothing
    assert again(episode) == episode and again(two) == two


def test_a_reading_has_no_verdict():
    d = decide(claim("reading", kind="kit"), detail="ratios 1.3 and 1.1")
    assert (d.word, d.sentence) == ("no verdict", "a reading with no test: ratios 1.3 and 1.1")
    assert again(d) == d


def test_a_monte_carlo_p_is_decided_again_from_the_values_in_their_order():
    a, b = [float((7 * i) % 11) for i in range(25)], [3.0] * 25
    d = decide(claim("sign_flip"), a, b)
    assert d.draws > 0  # 25 seeds: a seeded Monte Carlo
    assert again(d).p == d.p and again(d) == d


def test_values_that_do_not_fit_the_test_are_refused():
    with pytest.raises(ValueError, match="give values_b"):
        decide(claim("sign_flip"), [1.0] * 6)
    with pytest.raises(ValueError, match="values_b must be empty"):
        decide(claim("progress"), [1.0] * 6, [0.0] * 6)
    with pytest.raises(ValueError, match="one value per seed"):
        decide(claim("sign_flip"), [1.0] * 6, [0.0] * 5)


def test_a_claim_declares_what_its_test_needs():
    with pytest.raises(ValueError, match="positive margin"):
        claim("sign_flip_tost")
    with pytest.raises(ValueError, match="needs its reason"):
        claim("not_testable")
    with pytest.raises(ValueError, match="kind must be"):
        claim("sign_flip", kind="both")
    with pytest.raises(ValueError, match="test must be"):
        claim("t_test")


# ------------------------------------------------------------------ readings, words, the record
def test_a_claim_whose_word_depends_on_the_bonus_scale():
    first = decide(claim("sign_flip"), [1.0] * 10, [0.0] * 10)
    second = decide(claim("sign_flip"), [1.0, 0.0] * 5, [0.0] * 10)  # 5 of 10 differences 1: p = 2^-5
    both = combine_readings(first, second)
    assert both.word == DEPENDS_ON_SCALE and [k for k, _ in both.readings] == ["bonus scale 0.05", "horizon bonus scale"]
    assert second.word == "inconclusive" and second.p == 2.0 ** -5
    assert again(both) == both
    # the notebook word counts both readings: one agrees, one undecided
    assert notebook_words([both]) == ("partly", None)
    same = combine_readings(first, first)
    assert same.word == "agrees" and same.sentence.endswith(f"(the horizon reading of the bonus scale too: "
                                                            f"{first.sentence})")


def test_notebook_and_kit_words():
    agree = decide(claim("sign_flip", name="a"), [1.0] * 10, [0.0] * 10)
    few = decide(claim("sign_flip", name="b"), [1.0] * 3, [0.0] * 3)
    kit = decide(claim("sign_flip", kind="kit", name="k"), [0.0] * 10, [1.0] * 10)
    reading = decide(claim("reading", kind="kit", name="r"), detail="x")
    assert notebook_words([agree, few, kit, reading]) == ("agrees", "differs")
    assert notebook_words([few]) == (f"{NOT_TESTABLE}: {TOO_FEW_SEEDS}", None)
    assert notebook_words([kit]) == ("no verdict", "differs")  # the kit's questions alone: no verdict on the paper


def test_the_metrics_record_round_trips_through_json():
    ds = [decide(Claim("01_x", "p", "paper", "s", "sign_flip_tost", margin=0.1, floor=0.0, unit="nats",
                       design=Design((1, 3, 5, 7, 9, 11), (), "25K frames", 0.05)),
                 [0.01 * i for i in range(6)], [0.0] * 6, seeds=[1, 3, 5, 7, 9, 11], control=[1.0] * 6),
          decide(claim("permutation", name="q"), [1.0] * 3, [0.0] * 3)]  # its interval unbounded: None in JSON
    record = metrics_record(ds)
    text = json.dumps(record, allow_nan=False)
    back = json.loads(text)
    assert back["schema"] == SCHEMA and [r["name"] for r in back["claims"]] == ["p", "q"]
    assert back["word"] == notebook_words(ds)[0]
    assert decisions_of(back) == ds
    assert ds[0].claim.design == Design((1, 3, 5, 7, 9, 11), (), "25K frames", 0.05)


def test_metrics_without_the_record_are_refused_naming_where():
    with pytest.raises(ValueError, match=r"^runs/01/metrics.json holds no claims record of schema 1 .*re-run"):
        decisions_of({"summary": {"verdict": "agrees"}}, "runs/01/metrics.json")


# ------------------------------------------------------------------------------- --rerender
def _report(tmp_path: Path, metrics: dict) -> Path:
    out = tmp_path / "report"
    (out / "01_online_vs_shuffled").mkdir(parents=True)
    (out / "01_online_vs_shuffled" / "metrics.json").write_text(json.dumps(metrics))
    (out / "index.json").write_text(json.dumps({"profile": "study", "notebooks": [
        {"name": "01_online_vs_shuffled", "status": "ok", "seconds": 1.0, "output_dir": "01_online_vs_shuffled"}]}))
    return out


def test_rerender_refuses_a_report_without_schema_in_one_line(tmp_path):
    out = _report(tmp_path, {"profile": "study", "summary": {"verdict": "agrees over 8 seeds: x"}})
    before = sorted(p.name for p in out.rglob("*"))
    proc = subprocess.run([sys.executable, "-m", "pcnn_explore", "reproduce", "--rerender", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert len(lines) == 1
    assert str(out / "01_online_vs_shuffled") in lines[0] and "no schema" in lines[0] and "re-run" in lines[0]
    assert sorted(p.name for p in out.rglob("*")) == before  # nothing written


def test_rerender_decides_every_record_again_with_the_same_function(tmp_path):
    from pcnn_explore.report.rerender import rerender

    d = decide(claim("sign_flip"), [1.0] * 10, [0.0] * 10)
    metrics = {"profile": "study", **metrics_record([d])}
    out = _report(tmp_path, metrics)
    assert rerender(out) == []
    written = json.loads((out / "01_online_vs_shuffled" / "metrics.json").read_text())
    assert decisions_of(written) == [d] and written["word"] == "agrees"
    assert (out / "index.html").is_file()
