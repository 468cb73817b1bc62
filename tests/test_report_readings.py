"""A notebook run under the PixelCNN's two optimizer readings (tf1, the paper's; torch, the sensitivity reading)
is one notebook in the report: its claims are the tf1 run's, each carrying the torch run's decision beside it
(``Decision.readings``), the notebook word is tf1's, and a claim whose two words differ reads "depends on the
optimizer reading" with both numbers, in its row and on the first screen; ``--take RUN --take-reading torch=RUN2``
takes the two runs in as one, all or nothing, and ``--rerender`` decides both again from the stored values.

Hand-made values, 6 seeds, the paired sign-flip test (direction ``less``): with every difference one way, p is
1/64 = 0.0156 in that direction (agrees) and 1 the other way (differs); constant differences give the estimate
exactly."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pcnn_explore import cli
from pcnn_explore.report.claims import claims_of
from pcnn_explore.report.first_screen import notebook_row
from pcnn_explore.report.rerender import redecide, rerender, take
from pcnn_explore.study import (DEPENDS_ON_OPTIMIZER, OPTIMIZER_READINGS, Decision, decide, decide_again,
                                join_readings, metrics_record, notebook_words)
from pcnn_explore.study.preregistered import density as prereg
from pcnn_explore.study.preregistered import lr_schedules as plan

SEEDS = [801, 803, 805, 807, 809, 811]
NB = "03_lr_schedules"


def _decisions(caption_gap: float, text_gap: float) -> list[Decision]:
    """03's caption and text claims on 6 seeds whose per-seed gaps (a - b, nats) are all ``caption_gap`` and
    ``text_gap``."""
    b = [130.0, 131.0, 129.0, 132.0, 128.0, 130.0]
    return [decide(plan.caption_smallest(SEEDS), [x + caption_gap for x in b], b, seeds=SEEDS),
            decide(plan.text_lowest(SEEDS), [x + text_gap for x in b], b, seeds=SEEDS)]


def test_the_study_names_the_readings_and_the_word_as_the_preregistration_does():
    assert OPTIMIZER_READINGS == prereg.READINGS == ("tf1", "torch")
    assert DEPENDS_ON_OPTIMIZER == prereg.DEPENDS_ON_READING == "depends on the optimizer reading"


def test_same_words_give_one_word_and_different_words_depend_on_the_reading():
    tf1, torch = _decisions(-10.0, -20.0), _decisions(+5.0, -4.0)
    assert [d.word for d in tf1] == ["agrees", "agrees"] and [d.word for d in torch] == ["differs", "agrees"]
    caption, text = join_readings(tf1, torch)
    # the caption: -10 on every seed under tf1 (p = 1/64), +5 under torch (p = 1): the word depends on the reading,
    # the numbers those of the tf1 run, both readings kept
    assert caption.word == DEPENDS_ON_OPTIMIZER and caption.estimate == pytest.approx(-10.0)
    assert caption.p == pytest.approx(1 / 64)
    assert [(k, d.word, d.estimate) for k, d in caption.readings] == [("tf1", "agrees", pytest.approx(-10.0)),
                                                                      ("torch", "differs", pytest.approx(5.0))]
    assert caption.sentence == (f"depends on the optimizer reading: under tf1 (the paper's), {tf1[0].sentence}; "
                                f"under torch, {torch[0].sentence}")
    # the text: agrees under both: one word, tf1's numbers, the torch reading beside it
    assert text.word == "agrees" and text.estimate == pytest.approx(-20.0)
    assert text.sentence == f"{tf1[1].sentence} (the torch reading of the PixelCNN's optimizer too: {torch[1].sentence})"
    # the notebook's word is the tf1 run's (both claims agree: agrees), not the torch run's (mixed)
    assert notebook_words(tf1)[0] == "agrees" and notebook_words(torch)[0] == "mixed"
    assert notebook_words([caption, text]) == notebook_words(tf1)
    # the record round-trips and is decided again to the same words, each reading from its own values
    for d in (caption, text):
        again = decide_again(Decision.from_record(json.loads(json.dumps(d.to_record()))))
        assert again == d


def test_joining_refuses_runs_of_other_claims_or_claims_joined_already():
    tf1, torch = _decisions(-10.0, -20.0), _decisions(+5.0, -4.0)
    with pytest.raises(ValueError, match=r"decide different claims \(constant 1e-3 or 0.1 n\^-1/2 lowest \(text\)\)"):
        join_readings(tf1, torch[:1])
    with pytest.raises(ValueError, match="in another order"):
        join_readings(tf1, torch[::-1])
    joined = join_readings(tf1, torch)
    with pytest.raises(ValueError, match="already: take each reading's own run"):
        join_readings(joined, torch)


def _metrics(decisions, reading: str, profile: str = "study") -> dict:
    return {"profile": profile, "settings": {"rmsprop": reading, "seed": 801}, "summary": {"best": reading},
            "paper": {"verdict": "lowest loss"}, **metrics_record(decisions)}


def test_the_claim_row_and_the_first_screen_give_both_readings_numbers():
    m = {**_metrics(_decisions(-10.0, -20.0), "tf1"),
         **metrics_record(join_readings(_decisions(-10.0, -20.0), _decisions(+5.0, -4.0)))}
    caption, text = claims_of(NB, m)
    assert caption.word == DEPENDS_ON_OPTIMIZER and caption.p is None
    label = "constant 1e-3 - best other run (nats)"  # (every seed's gap the same: the interval is that gap)
    assert caption.number == (f"tf1, {label} -10 (nats), 95% [-10, -10], p = 0.0156, n = 6 (agrees); "
                              f"torch, {label} 5 (nats), 95% [5, 5], p = 1, n = 6 (differs)")
    assert text.word == "agrees" and text.number.startswith("tf1, min(constant 1e-3, 0.1 n^-1/2) - best unnamed rate")
    assert "; torch, " in text.number and text.number.endswith("p = 0.0156, n = 6 (agrees)")
    row = notebook_row(NB, m, m["word"])
    assert m["word"].startswith("agrees") and row.word == m["word"]  # the notebook word: tf1's
    assert row.number == f"{caption.claim}: {DEPENDS_ON_OPTIMIZER}: {caption.number}"
    assert f"{DEPENDS_ON_OPTIMIZER}: {caption.claim}: {caption.number}" in row.reason
    # the same words under both readings: the one word, both numbers, and nothing said of the reading
    same = {**m, **metrics_record(join_readings(_decisions(-10.0, -20.0), _decisions(-4.0, -4.0)))}
    row = notebook_row(NB, same, same["word"])
    assert [c.word for c in claims_of(NB, same)] == ["agrees", "agrees"] and row.reason == ""
    assert DEPENDS_ON_OPTIMIZER not in row.number and "; torch, " in row.number and row.number.count("n = 6") == 2


def _run(folder: Path, reading: str, caption_gap: float, text_gap: float, names=(NB,), profile="study",
         commit="c") -> Path:
    """A report folder as reproduce writes it, of notebooks run under ``reading``."""
    records = []
    for name in names:
        nb = folder / name
        nb.mkdir(parents=True)
        (nb / "metrics.json").write_text(json.dumps(_metrics(_decisions(caption_gap, text_gap), reading, profile)))
        (nb / f"{name}.html").write_text(f"<p>{reading}</p>")
        records.append({"name": name, "status": "ok", "seconds": 60.0 if reading == "tf1" else 75.0, "error": None,
                        "failed_cell": None, "html": f"{name}/{name}.html", "output_dir": name, "profile": profile,
                        "commit": commit})
    (folder / "index.json").write_text(json.dumps({"profile": profile, "notebooks": records}))
    return folder


def _files(folder: Path) -> dict:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_take_joins_the_two_readings_runs_and_rerender_keeps_both(tmp_path, capsys):
    out = _run(tmp_path / "report", "torch", -1.0, -1.0, names=(NB, "01_other"))  # the report before: one reading
    paper, sensitivity = _run(tmp_path / "tf1", "tf1", -10.0, -20.0), _run(tmp_path / "torch", "torch", 5.0, -4.0)
    assert cli.main(["reproduce", "--rerender", str(out), "--take", str(paper), "--take-reading",
                     f"torch={sensitivity}"]) == 0
    assert f"took {NB} into {out}" in capsys.readouterr().out
    m = json.loads((out / NB / "metrics.json").read_text())
    assert m["word"] == notebook_words(_decisions(-10.0, -20.0))[0]  # tf1's
    assert [c["word"] for c in m["claims"]] == [DEPENDS_ON_OPTIMIZER, "agrees"]
    assert [[k for k, _ in c["readings"]] for c in m["claims"]] == [["tf1", "torch"]] * 2
    assert m["claims"][0]["readings"][1][1]["estimate"] == pytest.approx(5.0)
    assert m["settings"]["rmsprop"] == "tf1" and m["sensitivity_reading"] == {
        "reading": "torch", "seconds": 75.0, "commit": "c", "settings": {"rmsprop": "torch", "seed": 801},
        "summary": {"best": "torch"}, "paper": {"verdict": "lowest loss"}}
    assert (out / NB / f"{NB}.html").read_text() == "<p>tf1</p>"  # the paper run's folder
    page = (out / "index.html").read_text()
    assert DEPENDS_ON_OPTIMIZER in page and "torch, constant 1e-3 - best other run (nats) 5 (nats)" in page
    # a re-render decides both readings again from the stored values: nothing changes
    before = _files(out)
    assert rerender(out) == []
    assert _files(out) == before
    assert redecide(NB, m) == m


@pytest.mark.parametrize("case, match", [
    ("swapped", "the run taken as the tf1 reading trained under torch"),
    ("missing", "each reading's run holds the same notebooks"),
    ("profile", "take runs of the report's own profile"),
    ("claims", "decide different claims"),
    ("reading", "--take-reading takes one sensitivity run, READING=RUN with READING torch; got tf1"),
    ("unrecorded", "the run taken as the torch reading records no optimizer reading in its settings"),
])
def test_a_take_of_two_readings_that_do_not_fit_is_refused_before_anything_moves(tmp_path, case, match):
    out = _run(tmp_path / "report", "tf1", -1.0, -1.0)
    paper = _run(tmp_path / "tf1", "torch" if case == "swapped" else "tf1", -10.0, -20.0)
    sensitivity = _run(tmp_path / "torch", "torch", 5.0, -4.0, names=("01_other",) if case == "missing" else (NB,),
                       profile="paper" if case == "profile" else "study")
    if case in ("claims", "unrecorded"):
        m = json.loads((sensitivity / NB / "metrics.json").read_text())
        if case == "claims":
            m["claims"] = m["claims"][:1]
        else:  # (a run whose metrics.json names no reading cannot be shown to be the one it is taken as)
            del m["settings"]
        (sensitivity / NB / "metrics.json").write_text(json.dumps(m))
    before = _files(out)
    with pytest.raises(ValueError, match=match):
        take(paper, out, readings={"tf1" if case == "reading" else "torch": sensitivity})
    assert _files(out) == before


def test_take_reading_needs_take_and_the_form_reading_equals_run(tmp_path, capsys):
    out = _run(tmp_path / "report", "tf1", -1.0, -1.0)
    paper = _run(tmp_path / "tf1", "tf1", -10.0, -20.0)
    before = _files(out)
    assert cli.main(["reproduce", "--rerender", str(out), "--take-reading", f"torch={paper}"]) == 2
    assert "--take-reading READING=RUN needs --take RUN" in capsys.readouterr().err
    for bad in (str(paper), f"adam={paper}", "torch="):
        assert cli.main(["reproduce", "--rerender", str(out), "--take", str(paper), "--take-reading", bad]) == 2
        err = capsys.readouterr().err
        assert "--take-reading must be READING=RUN with READING torch" in err and len(err.strip().splitlines()) == 1
    assert _files(out) == before
