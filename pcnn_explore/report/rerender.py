"""Re-render a report from its stored metrics, re-deciding every verdict under the current rules.

``pcnn-explore reproduce --rerender DIR`` (:func:`rerender`) reads ``DIR/index.json`` and each
notebook's ``DIR/<notebook>/metrics.json``, decides each claim again from the per-seed values the
metrics hold (no notebook runs, no training), writes the claims back as ``claims`` records with the
notebook's new verdict sentence, and writes ``DIR/index.html`` and ``DIR/index.json`` again. A
notebook whose word changes keeps ``rerendered = {"rules", "was", "now", "because"}`` in its
metrics.json; the index shows it in the notebook's section and :func:`rerender` returns those lines
("verdict changed under the 0.3 rules: was partly, now not testable because ..."), which it also
writes into ``DIR/README.md`` between :data:`MARK_BEGIN` and :data:`MARK_END` when the README holds
them. The notebooks' own HTML renderings are left as they ran: they show the verdict of their time.
``--take RUN`` (:func:`take`) first brings a new run's notebooks into the report, folders and
index.json records (its time and commit) alike, so a notebook re-run on its own ships by one command.

Per notebook (:func:`redecide`): the density notebooks (00-06) from their ``*_per_seed`` summary
values through :mod:`pcnn_explore.experiments.density.density_verdicts`; 11 (one recorded episode)
as not testable; the agent notebooks 07-10 and 13 from their stored claims' per-seed ``values`` and
``values_b`` with each claim's test (:mod:`pcnn_explore.experiments.agents.preregistered` gives
the direction; an equivalence claim's positive control is the same notebook's progress claim on the
same quantity, else its two lines); 12 from the seed counts of its Fisher tests at the hard size; 14
holds no claim: its whole deep-sea protocol is read again from the report's committed bsuite logs
(:func:`whole_protocol_again`).
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Callable, Mapping

from pcnn_explore.atomic import write_text_atomic
from pcnn_explore.experiments.density import density_verdicts as dv
from pcnn_explore.report.records import folder_of, read_records
from pcnn_explore.report.take import KEPT_FOLDERS, take  # a re-run taken into a report, importable from here
from pcnn_explore.report.take import check_report, clear_staging, report_lock
from pcnn_explore.verdicts import (
    NOT_ON_THIS_TASK,
    NOT_TESTABLE,
    TOO_FEW_SEEDS,
    combine_verdicts,
    equivalence_verdict,
    not_testable,
    notebook_verdict,
    paired_verdict,
    progress_verdict,
    share_verdict,
    solved_verdict,
    word_of,
)

__all__ = ["rerender", "take", "KEPT_FOLDERS", "redecide", "whole_protocol_again", "RULES", "MARK_BEGIN", "MARK_END"]

#: the rules a re-render decides under
RULES = "0.3"
MARK_BEGIN = "<!-- verdict changes: written by pcnn-explore reproduce --rerender -->"
MARK_END = "<!-- end of verdict changes -->"
_SCHEDULES = ("inverse_sqrt", "inverse", "constant")


def _per_seed(summary: Mapping, key: str) -> list[float]:
    values = summary.get(key)
    if not isinstance(values, list):
        raise ValueError(f"metrics.json's summary has no per-seed list {key!r}: this notebook cannot be re-decided")
    return [math.nan if v is None else float(v) for v in values]


def _density_claims(name: str, s: Mapping) -> tuple[dict, tuple[str, ...]]:
    """(claims, kit names) of a density notebook 00-06 from its summary's per-seed values."""
    seeds = list(s.get("seeds") or [])
    if name.startswith("00"):
        return dv.pseudo_counts(_per_seed(s, "pixelcnn_repeat_pg_exponent_per_seed"), seeds,
                                count_slope=_per_seed(s, "cts_repeat_count_slope_per_seed")), ()
    if name.startswith("01"):
        orders = [k[len("heldout_area_"):-len("_nats_per_seed")] for k in s
                  if k.startswith("heldout_area_") and k.endswith("_nats_per_seed")]
        orders.sort(key=lambda m: m != "online")
        area = {m: _per_seed(s, f"heldout_area_{m}_nats_per_seed") for m in orders}
        rise = {m: _per_seed(s, f"worst_heldout_increase_{m}_nats_per_seed") for m in orders}
        return dv.training_orders(area, rise, seeds), ()
    if name.startswith("02"):
        return dv.episode_spikes(_per_seed(s, "spikes_near_start_fraction_per_seed"),
                                 _per_seed(s, "chance_fraction_per_seed"), seeds), ()
    if name.startswith("03"):
        runs: list[dict] = [{} for _ in seeds]
        for k in s:
            m = re.fullmatch(r"final_loss_(" + "|".join(_SCHEDULES) + r")_([0-9.e+-]+)_nats_per_seed", k)
            if m:
                for i, v in enumerate(_per_seed(s, k)):
                    runs[i][(m.group(1), float(m.group(2)))] = v
        return dv.lr_schedules(runs, seeds), ()
    if name.startswith("04"):
        return dv.samples({m: _per_seed(s, f"sample_distance_{m}_per_seed") for m in ("pixelcnn", "cts")}, seeds), ()
    if name.startswith("05"):
        stats = {m: [{"mean": a, "variability": b, "peak_quantile": c} for a, b, c in zip(
            _per_seed(s, f"{m}_mean_pg_nats_per_seed"), _per_seed(s, f"{m}_pg_variability_per_seed"),
            _per_seed(s, f"{m}_peak_quantile_per_seed"))] for m in ("pixelcnn", "cts")}
        return dv.pg_claims(stats, seeds), ()
    if name.startswith("06"):
        games = sorted({k.split("_")[0] for k in s if k.endswith("_heldout_loss_nats_per_seed")})
        held = {g: {m: _per_seed(s, f"{g}_{m}_heldout_loss_nats_per_seed") for m in ("cts", "convcts", "pixelcnn")}
                for g in games}
        claims = dv.conv_cts(held, seeds)
        return claims, dv.conv_cts_kit(claims)
    raise ValueError(f"no density rule for notebook {name}")


def _direction(plan_claim, record: Mapping) -> str:
    if plan_claim is not None and plan_claim.direction in ("greater", "less"):
        return plan_claim.direction
    return "less" if re.search(r"the claim is .* < 0", str(record.get("sentence") or "")) else "greater"


def _plan_claim(name: str, key: str):
    from pcnn_explore.experiments.agents.preregistered import PLANS

    plan = PLANS.get(name[:2])
    if plan is None:
        return None
    return next((c for c in plan.claims if c.name == key), None)


def _agent_claim(name: str, key: str, c: Mapping, control: list[float] | None) -> dict[str, Any]:
    """One stored agent claim decided again from its per-seed values."""
    from pcnn_explore.experiments.agents.deep_sea_claims import verdict_dict

    test = str(c.get("test") or "")
    head = {k: c[k] for k in ("kind", "claim", "lines", "labels", "quantity", "margin", "note", "chance") if k in c}
    plan = _plan_claim(name, key)
    if plan is not None:  # the plan's words of the claim, as the notebook writes them today
        head["claim"] = plan.sentence
    # (a plan's "too few seeds", its power analysis for its own design, says nothing of stored runs of another)
    kept = {k: c[k] for k in ("values", "values_b", "seeds") if k in c}
    on_this_task = plan is not None and plan.test == "not_testable" and plan.reason == "on this task"
    if test == "not_testable" and not on_this_task and c.get("reason") == TOO_FEW_SEEDS:
        # too few seeds for the run's own design (its power analysis): the stored words stand
        return {**head, **kept, **{k: c[k] for k in ("verdict", "reason", "test", "sentence", "n") if k in c}}
    if test == "not_testable" or on_this_task:
        # the plan's why first (a claim the plan made not testable after its run keeps a stale note); the
        # stored per-seed values stay, deciding nothing
        why = str((plan.note if plan is not None else "") or c.get("note") or "the task cannot test it")
        return {**head, **kept, "note": why, "verdict": NOT_TESTABLE, "reason": NOT_ON_THIS_TASK,
                "test": "not_testable", "sentence": not_testable(NOT_ON_THIS_TASK, why)}
    a = [float(v) for v in c.get("values") or []]
    b = [float(v) for v in c.get("values_b") or []]
    labels = list(c.get("labels") or [])
    what = str(c.get("quantity") or "").replace("_", " ")
    text = f"{what} {' - '.join(labels)}".strip()
    if name.startswith("13") and len(labels) == 2:  # 13 writes its measures its own way
        from pcnn_explore.experiments.agents.reactor_claims import measure_text

        text = measure_text(str(c.get("quantity")), labels, c.get("mmc_beta"))
    direction = _direction(plan, c)
    if test == "fisher":
        v = solved_verdict({i: x >= 0.5 for i, x in enumerate(a)}, {i: x >= 0.5 for i, x in enumerate(b)}, direction,
                           claim=f"solved {' - '.join(labels)}")
    elif test in ("share", "binomial"):  # (the plan's test name, and the name its verdict records)
        k = sum(1 for x in a if x >= 0.5)
        v = share_verdict(k, len(a), float(c.get("chance") or 0.0), claim=f"seeds of {labels[0] if labels else 'the line'} "
                                                                       "that found the +1")
    elif test.endswith("tost"):
        seeds = list(range(len(a)))
        v = equivalence_verdict(a, b, float(c["margin"]), seeds_a=seeds, seeds_b=seeds, claim=text, control=control,
                                floor=0.0)
    elif b:
        v = paired_verdict(dict(enumerate(a)), dict(enumerate(b)), direction, claim=text)
    else:
        v = progress_verdict(a, 0.0, claim=text)
    # the record's own fields (13's trace products and MMC mix, say) stay, so a re-render can run again
    return {**c, **head, **verdict_dict(v), "reason": v.reason}


def _agent_claims(name: str, records: Mapping[str, Mapping]) -> dict[str, dict]:
    """Every stored claim of an agent notebook (07-10, 13) decided again; an equivalence claim's positive
    control: the values of the same notebook's paper claim of progress on the same quantity, if any."""
    from pcnn_explore.experiments.agents.deep_sea_claims import combine_readings

    def control_of(c: Mapping, reading: str | None) -> list[float] | None:
        if not str(c.get("test") or "").endswith("tost"):
            return None
        for other in records.values():
            if (other is not c and other.get("kind") == "paper" and other.get("quantity") == c.get("quantity")
                    and not str(other.get("test") or "").endswith("tost") and other.get("values")):
                same = (other.get("readings") or {}).get(reading) if reading else other
                return [float(v) for v in (same or other)["values"]]
        return None

    out = {}
    for key, c in records.items():
        readings = c.get("readings") if isinstance(c.get("readings"), Mapping) else {}
        if len(readings) == 2:  # the CTS bonus scale's two readings (07-10): each decided again, then combined
            first, second = (_agent_claim(name, key, r, control_of(c, k)) for k, r in readings.items())
            out[key] = combine_readings(first, second)
        else:
            out[key] = _agent_claim(name, key, c, control_of(c, None))
    return out


_COUNTS = re.compile(r"(\d+)/(\d+) \[[^\]]*\] vs (\d+)/(\d+)")


def _laptop_claims(metrics: Mapping) -> dict[str, dict]:
    """12: the paper's claim, per paper line, and the kit's position-biased line, by Fisher's exact test on
    the seeds reaching the +1 late at the hard size (counts read from its stored tests); the kit's other
    findings (a ratio of means, a measurement of one run) are readings with no test: ``no verdict``."""
    from pcnn_explore.experiments.agents.deep_sea_claims import verdict_dict
    from pcnn_explore.report.claims import _FINDINGS

    s = metrics.get("summary") or {}
    goals = s.get("goals") or {}
    out: dict[str, dict] = {}
    for goal_name, kind in (("deep_sea", "paper"), ("deep_sea_kit", "kit")):
        goal = goals.get(goal_name) or {}
        for n in goal.get("hard") or []:
            for line, t in ((goal.get("seed_tests") or {}).get(str(n)) or {}).items():
                m = _COUNTS.search(str(t.get("sentence") or ""))
                label = re.search(r"late, (.*?) - DQN:", str(t.get("sentence") or ""))
                if not m:
                    continue
                ka, na, kb, nb = map(int, m.groups())
                who = label.group(1) if label else line
                v = solved_verdict({i: i < ka for i in range(na)}, {i: i < kb for i in range(nb)}, "greater",
                                   claim=f"seeds reaching the +1 late at N = {n}, {who} - DQN")
                out[f"{line} N{n}"] = {"kind": kind, "claim": f"the bonus makes DQN reach DeepSea-{n}'s +1 where DQN "
                                       f"does not ({who})", "quantity": "solved", **verdict_dict(v), "reason": v.reason}
    lines = [str(x) for x in s.get("lines") or [] if isinstance(x, str) and x.startswith("kit")]
    for f in s.get("findings") or []:
        name = str(f.get("name")) if isinstance(f, Mapping) else ""
        if not name or f.get("kind") != "kit" or name == "deep_sea_kit":
            continue
        answer = str(f.get("answer") or "")
        line = next((x for x in lines if f": {answer}" in x), "")
        if answer == "not run at this profile":
            word, reason = NOT_TESTABLE, TOO_FEW_SEEDS
            sentence = not_testable(TOO_FEW_SEEDS, "the sizes it needs are not run at this profile")
        else:
            word, reason, sentence = "no verdict", "", f"a reading with no test: {line or answer}"
        out[name] = {"kind": "kit", "claim": _FINDINGS.get(name, name), "verdict": word, "reason": reason,
                     "sentence": sentence}
    return out


def _paper_sentences(records: Mapping[str, Mapping]) -> list[str]:
    """The paper claims' sentences, a claim that depends on the bonus scale with both readings' (07-10)."""
    from pcnn_explore.experiments.agents.deep_sea_claims import DEPENDS_ON_SCALE

    paper = []
    for c in records.values():
        if c.get("kind") != "kit":
            paper += ([str(r.get("sentence")) for r in c["readings"].values()] if c.get("verdict") == DEPENDS_ON_SCALE
                      else [str(c.get("sentence") or c.get("verdict"))])
    return paper


def _word_of_claims(records: Mapping[str, Mapping]) -> tuple[str, str | None]:
    """(the paper word with its reason, the kit word or None) of claim records."""
    paper = _paper_sentences(records)
    kit = [str(c.get("verdict")) for c in records.values() if c.get("kind") == "kit" and word_of(str(c.get("verdict")))]
    word = notebook_verdict(paper) if paper else not_testable(NOT_ON_THIS_TASK, "no paper claim")
    return word, (combine_verdicts(kit) if kit else None)


def _because(old_word: str, new_word: str, records: Mapping[str, Mapping]) -> str:
    paper = [c for c in records.values() if c.get("kind") != "kit"]
    n_few = sum(c.get("reason") == TOO_FEW_SEEDS for c in paper)
    n_still = sum(c.get("reason") == "the lines do not move" for c in paper)
    n_task = sum(c.get("reason") == NOT_ON_THIS_TASK for c in paper)
    parts = []
    if n_few:
        parts.append(f"{n_few} of {len(paper)} paper claims rest on fewer than 6 seeds (too few seeds at this profile)")
    if n_still:
        parts.append(f"{n_still} equivalence claim{'s' if n_still > 1 else ''} rest on lines that do not move")
    if n_task:
        parts.append(f"{n_task} claim{'s' if n_task > 1 else ''} not testable on this task")
    if not parts:
        parts.append("exact tests at one-sided 0.025 replace the t intervals")
    return "; ".join(parts)


def redecide(name: str, metrics: Mapping) -> dict | None:
    """``metrics`` with its claims decided again under the current rules (see the module docstring),
    or None for a notebook with no claim to decide (14) or a smoke run."""
    metrics = json.loads(json.dumps(metrics))
    if metrics.get("profile") == "smoke":
        return None
    s = metrics.get("summary") if isinstance(metrics.get("summary"), dict) else {}
    old = str(s.get("verdict") or "")
    n = len(s.get("seeds") or [])
    if name[:2] in ("00", "01", "02", "03", "04", "05", "06"):
        claims, kit = _density_claims(name, s)
        s["verdict"] = dv.verdict_line(metrics.get("profile", "study"), claims, n, kit=kit)
        records = dv.claim_records(claims, kit=kit)
        s["claims"] = records
    elif name.startswith("11"):
        from pcnn_explore.experiments.density import milestones

        head = not_testable(TOO_FEW_SEEDS, "one recorded episode, no seeds")
        rest, prefix = old, re.compile(r"^(?:" + re.escape(head) + r"|\w+):\s*(?:one recorded episode, no seeds, so no "
                                       r"test decides;\s*)?")
        while prefix.match(rest):  # every verdict word a run or an earlier re-render put in front
            rest = prefix.sub("", rest, count=1)
        s["verdict"] = f"{head}: {rest}"
        ratio = metrics.get("room_change_to_median", s.get("room_change_to_median"))
        records = milestones.claim_records(s["verdict"], ratio, metrics.get("density_model", "pixelcnn"))
        s["claims"] = records
    elif name[:2] in ("07", "08", "09", "10"):
        records = _agent_claims(name, metrics.get("claims") or {})
        metrics["claims"] = records
        word, kit_word = _word_of_claims(records)
        shown = "; ".join(f"{c['claim']}: {c['verdict']}" for c in records.values() if c.get("kind") != "kit")
        scope = old.split(": ", 1)[1].split(": ", 1)[0] if ": " in old else ""
        s["verdict"] = f"{word}: {scope + ': ' if scope else ''}{shown}"
        metrics["verdict"] = word_of(word) or word
        if kit_word is not None:
            s["kit_verdict"] = metrics["kit_verdict"] = f"{kit_word} (the kit's lines)"
    elif name.startswith("13"):
        records = _agent_claims(name, s.get("claims") or {})
        for k, c in records.items():
            c["word"] = c["verdict"]
        s["claims"] = records
        word, kit_word = _word_of_claims(records)
        s["verdict"] = word
        if kit_word is not None:
            s["kit_verdict"] = kit_word
    elif name.startswith("12"):
        records = _laptop_claims(metrics)
        metrics["claims"] = records
        word, _ = _word_of_claims(records)
        s["verdict"] = word
    else:
        return None
    metrics["summary"] = s
    prev = metrics.get("rerendered") if isinstance(metrics.get("rerendered"), dict) else {}
    if prev.get("rules") == RULES and prev.get("was"):  # re-rendered before: the verdict of the run stays the one it was
        old = str(prev["was"])
    was, now = word_of(old) or "no verdict", word_of(s["verdict"]) or "no verdict"
    if was != now:
        paper = _paper_sentences(records)
        now_text = notebook_verdict(paper) if paper else now
        metrics["rerendered"] = {"rules": RULES, "was": old.split(":")[0].split(" over ")[0], "now": now_text,
                                 "because": _because(was, now, records)}
    else:
        metrics.pop("rerendered", None)
    return metrics


def whole_protocol_again(folder: Path, metrics: Mapping) -> dict:
    """14's metrics with the whole protocol read again from the report's committed bsuite logs
    (``folder/protocol``, :func:`pcnn_explore.experiments.agents.deep_sea_scaling.whole_protocol`) and its
    figure written beside them, so the report follows the logs as sizes finish, with no run of the
    notebook; as they were for a smoke run or where the folder holds no log."""
    from pcnn_explore.experiments.agents import deep_sea_scaling as dss

    metrics = json.loads(json.dumps(metrics))
    whole = dss.whole_protocol(folder / dss.STORE_NAME) if metrics.get("profile") != "smoke" else None
    if whole is None:
        return metrics
    dss.whole_protocol_figure(whole, folder)
    return {**metrics, **dss.whole_protocol_record(whole)}


def rerender(out: str | Path, say: Callable[[str], None] | None = None) -> list[str]:
    """Re-decide every notebook of the report in ``out`` from its stored metrics (:func:`redecide`),
    write their metrics.json, ``out/index.html`` and ``out/index.json`` again, and return one line per
    notebook whose verdict changed; with the markers in ``out/README.md``, those lines go between them.
    The report is held for the while (:func:`pcnn_explore.report.take.report_lock`), the staging folders
    of a killed take are cleared first (:func:`~pcnn_explore.report.take.clear_staging`, which says so
    through ``say``), and index.json and every metrics.json are checked before anything is written
    (:func:`~pcnn_explore.report.take.check_report`: ValueError naming the file and the field)."""
    out = Path(out)
    read_records(out)  # (FileNotFoundError before the report is locked)
    with report_lock(out):
        clear_staging(out, say)
        return _rerender(out)


def _rerender(out: Path) -> list[str]:
    from pcnn_explore.atomic import write_text_atomic as write
    from pcnn_explore.report import index
    from pcnn_explore.report.metrics import _plain

    stored, loaded = check_report(out)
    changes = []
    for rec in stored["notebooks"]:
        path = out / folder_of(rec) / "metrics.json"
        if rec["name"] not in loaded:  # (a failed notebook, or one that wrote no metrics.json)
            continue
        metrics = loaded[rec["name"]]
        if rec["name"].startswith("14"):
            again = whole_protocol_again(path.parent, metrics)
            if again != metrics:
                write(path, json.dumps(_plain(again), indent=2, allow_nan=False) + "\n")
        new = redecide(rec["name"], metrics)
        if new is None:
            continue
        write(path, json.dumps(_plain(new), indent=2, allow_nan=False) + "\n")
        r = new.get("rerendered")
        if r:
            changes.append(f"{rec['name'][:2]}: verdict changed under the {r['rules']} rules: was {r['was']}, now "
                           f"{r['now']}, because {r['because']}")
    index.write_index([], out, stored.get("profile") or "study")
    readme = out / "README.md"
    if readme.is_file():
        text = readme.read_text()
        if MARK_BEGIN in text and MARK_END in text:
            head, rest = text.split(MARK_BEGIN, 1)
            tail = rest.split(MARK_END, 1)[1]
            body = "\n".join(f"- {c}" for c in changes) or "- none"
            write_text_atomic(readme, f"{head}{MARK_BEGIN}\n{body}\n{MARK_END}{tail}")
    return changes
