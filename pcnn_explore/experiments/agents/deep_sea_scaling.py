"""Notebook 14, "Deep sea: does the bonus scale?": bsuite's deep-sea scaling and score for the named lines.

The lines (:data:`pcnn_explore.experiments.agents.lines.LINES`; :data:`LINE_KEYS` per profile): the
paper's CTS line (``paper_cts``, bonus scale 0.05), the kit's line (``kit``), DQN (``dqn``); at the
study profile the paper's PixelCNN line (``paper_pixelcnn``); at the paper profile
(:data:`PROTOCOL_LINES`) the paper's CTS line under the bonus scale's second reading too
(``paper_cts_horizon``: beta_N = 0.05 x 100 / sum of 0.99^t over DeepSea's N steps, one per size). Every run stops at the first of bsuite's logged episodes where bsuite's rule
holds (``stop_when_solved``), so its log holds what bsuite's logger would have written up to the solve;
a run that does not solve runs to the cap.

What it computes from the scaling rows (bsuite's score per seed with its exact interval, the largest N
solved, the seeds that solve each size; over the whole protocol's 21 sizes as far as its runs are in):
:mod:`pcnn_explore.experiments.agents.deep_sea_summary`, re-exported here.

Profiles (:func:`settings`): ``smoke`` (DeepSea-4 and -5, 10 episodes, 2 seeds: plumbing, the numbers
mean nothing), ``study`` (a partial protocol: N = 10, 12, 14, 16, 20, at most 2,500 episodes each,
seeds 401-410, the first study's; :func:`budget` gives its worst case) and ``paper`` (bsuite's whole
protocol, :func:`plan`: 21 sizes, 10K episodes each, :data:`PROTOCOL_LINES` on the verdict seeds
701-706, :data:`PROTOCOL_SEEDS`, each run from the study preset's DQN as the grid
``data/grids/deep_sea.toml`` runs it). :func:`read_sweep_report` reads a finished ``pcnn-explore sweep
deep_sea --out DIR`` instead (its ``report/deep_sea_scaling.csv`` and ``deep_sea_score.csv``).

The whole protocol takes core-hours per line and seed, so it is done over sessions or machines:
:func:`run_into_store` runs only the line, seed and size triples whose finished bsuite log is not yet
in a store folder (:mod:`pcnn_explore.sweep.bsuite_store`; the report keeps it in
``14_deep_sea_scaling/protocol``), through the sweep executors (local worker processes or Ray:
:func:`pcnn_explore.experiments.agents.agent_runs.run_specs`), and adds each run's log there as it
finishes, on an interruption too; :func:`read_store` scores what the store holds, saying how much of
the plan it covers.

The notebook's claims, the kit's own question with no paper claim (the kit's line against DQN, the
paper's DQN-CTS and its horizon reading over the whole protocol), are declared in
:mod:`pcnn_explore.study.preregistered.deep_sea_scaling` and decided by :func:`decisions`.
"""
from __future__ import annotations

import csv
import math
import os
from pathlib import Path
from typing import Mapping, Sequence

from pcnn_explore.envs.deep_sea_protocol import PROTOCOL_EPISODES, PROTOCOL_SIZES
from pcnn_explore.experiments.agents.deep_sea_study import (STUDY_SEEDS, DeepSeaStudy, DeepSeaStudySettings,
                                                            StudyVariant, run_study)
from pcnn_explore.experiments.agents.deep_sea_summary import (next_logged_episode, protocol_score, scaling_figure,
                                                              score_figure, summarise, summary_text, whole_protocol_text)
from pcnn_explore.study import Decision, decide, metrics_record
from pcnn_explore.study.preregistered import deep_sea_scaling as pre
from pcnn_explore.study.preregistered.deep_sea import VERDICT_SEED_POOL

__all__ = ["LINE_KEYS", "PROTOCOL_LINES", "PROTOCOL_SEEDS", "PRESETS", "RATES", "settings", "lines", "plan",
           "protocol_part", "budget", "budget_text", "run", "run_into_store", "read_store", "STORE_NAME", "store_folder",
           "protocol_score", "whole_protocol", "decisions", "whole_protocol_text", "whole_protocol_figure",
           "whole_protocol_record", "WHOLE_PROTOCOL_FIGURE", "collect",
           "next_logged_episode", "summarise", "read_sweep_report", "summary_text", "scaling_figure", "score_figure",
           "metrics"]

#: the whole protocol's lines: the kit's, the paper's CTS line under both readings of the bonus scale, DQN
PROTOCOL_LINES = ("kit", "paper_cts", "paper_cts_horizon", "dqn")
#: the whole protocol's seeds: the first 6 verdict seeds (701-706), the fewest whose exact interval of a
#: line's mean score is narrower than [0, 1]; bsuite's map 42 for every run, as bsuite scores
PROTOCOL_SEEDS = VERDICT_SEED_POOL[:6]
#: the notebook's lines, by profile (PixelCNN where the profile allows)
LINE_KEYS = {"smoke": ("paper_cts", "kit", "dqn"), "study": ("paper_cts", "kit", "dqn", "paper_pixelcnn"),
             "paper": PROTOCOL_LINES}
_EVERY_RUN = (("stop_when_solved", True), ("tensorboard", False))
#: the part of bsuite's protocol each profile runs
PRESETS = {
    "smoke": dict(sizes=(4, 5), episodes=(10,), seeds=(0, 1), workers=2, train_overrides=_EVERY_RUN),
    "study": dict(sizes=(10, 12, 14, 16, 20), episodes=(2_500,), seeds=STUDY_SEEDS, workers=2,
                  train_overrides=_EVERY_RUN),
    "paper": dict(sizes=PROTOCOL_SIZES, episodes=(PROTOCOL_EPISODES,), seeds=PROTOCOL_SEEDS, workers=2,
                  train_profile="study", train_overrides=_EVERY_RUN),
}
#: measured agent steps per second on DeepSea-12, one core of a 2-core x86_64 machine beside a busy one
#: (``pcnn-explore train --env DeepSea-12-v0 [--bonus cts|pixelcnn] --steps 30000 --no-tensorboard``, the
#: numpy learn step; PixelCNN over 12,000 steps): 7,025, 1,262 and 9,091, rounded down
RATES = {"cts": 7_000, "pixelcnn": 1_250, "dqn": 9_000}


def settings(profile: str, seed: int | None = None, n_seeds: int | None = None, sizes=None, episodes=None,
             workers: int | None = None) -> DeepSeaStudySettings:
    """The profile's part of the protocol (:data:`PRESETS`), every run with ``stop_when_solved``;
    ``seed``/``n_seeds`` pick seeds ``seed, seed + 1, ...``, any other setting given replaces the preset's."""
    from pcnn_explore.profiles import check_profile

    base = dict(PRESETS[check_profile(profile)])
    given = {k: v for k, v in dict(sizes=sizes, episodes=episodes, workers=workers).items() if v is not None}
    if seed is not None or n_seeds is not None:
        first = base["seeds"][0] if seed is None else int(seed)
        given["seeds"] = tuple(range(first, first + (len(base["seeds"]) if n_seeds is None else int(n_seeds))))
    s = DeepSeaStudySettings(profile=profile, **{**base, **given})
    s.check()
    return s


def lines(profile: str) -> list[StudyVariant]:
    """The named lines the profile runs (:data:`LINE_KEYS`)."""
    from pcnn_explore.run.lines import line

    return [line(k) for k in LINE_KEYS[profile]]


def plan(s: DeepSeaStudySettings, variants: Sequence[StudyVariant]) -> list[tuple[str, int, int, int]]:
    """Every run of the profile's part of the protocol, ``(line, seed, N, episode cap)``, size-major as
    the runs are made (the paper profile: 21 sizes x 4 lines x 6 seeds, 10,000 episodes each)."""
    return [(v.key, int(seed), int(n), s.episode_cap(n)) for n in s.sizes for v in variants for seed in s.seeds]


def protocol_part(s: DeepSeaStudySettings) -> str:
    """"whole protocol" where ``s`` runs bsuite's 21 sizes for 10K episodes, else "partial protocol"."""
    whole = tuple(s.sizes) == PROTOCOL_SIZES and all(s.episode_cap(n) >= PROTOCOL_EPISODES for n in s.sizes)
    return "whole protocol" if whole else "partial protocol"


def _model(v: StudyVariant) -> str:
    return "pixelcnn" if v.variant.startswith("pixelcnn") else "cts" if v.variant.startswith("cts") else "dqn"


def budget(s: DeepSeaStudySettings, variants: Sequence[StudyVariant], rates: Mapping[str, float] = RATES) -> dict:
    """The worst case (no run solves, so every run goes to its cap): per line, agent steps
    (sum over sizes of N x cap, times the seeds) and core-seconds at its model's rate (:data:`RATES`);
    in all, wall minutes on ``s.workers`` cores."""
    per_line = {}
    for v in variants:
        steps = sum(n * s.episode_cap(n) for n in s.sizes) * len(s.seeds)
        per_line[v.key] = {"model": _model(v), "steps": steps, "rate": rates[_model(v)],
                           "core_s": steps / rates[_model(v)]}
    core = sum(x["core_s"] for x in per_line.values())
    return {"lines": per_line, "core_s": core, "workers": s.workers, "wall_min": core / s.workers / 60}


def budget_text(b: dict) -> str:
    """The arithmetic of :func:`budget`, one line per line and the total."""
    out = [f"{k}: {x['steps']:,} agent steps at most / {x['rate']:,} steps/s ({x['model']}) = {x['core_s'] / 60:.1f} core-min"
           for k, x in b["lines"].items()]
    out.append(f"worst case (nothing solves): {b['core_s'] / 60:.1f} core-min / {b['workers']} cores = "
               f"{b['wall_min']:.1f} min; runs that solve stop early")
    return "\n".join(out)


def _check_stops_when_solved(s: DeepSeaStudySettings) -> None:
    if dict(s.train_overrides).get("stop_when_solved") is not True:
        raise ValueError("notebook 14's runs stop when solved: give train_overrides with stop_when_solved=True")


def run(s: DeepSeaStudySettings, variants: Sequence[StudyVariant], output_dir: str | os.PathLike,
        progress: bool = False) -> DeepSeaStudy:
    """Train (or read back) every run under ``output_dir/runs`` (:func:`~pcnn_explore.experiments.agents.deep_sea_study.run_study`)."""
    _check_stops_when_solved(s)
    return run_study(s, variants, output_dir, progress=progress)


def _store_cap(s: DeepSeaStudySettings) -> int:
    """The one episode cap of a store-backed run (ValueError where the sizes have several, or the runs
    are not on bsuite's map)."""
    caps = {s.episode_cap(n) for n in s.sizes}
    if len(caps) != 1:
        raise ValueError(f"a bsuite store holds runs of one episode cap; these sizes have {sorted(caps)}: give one "
                         "episodes value")
    if any(s.mapping_of(seed) not in (None, 42) for seed in s.seeds):
        raise ValueError("bsuite's logs are of bsuite's map (mapping seed 42): leave mapping_seed unset")
    return caps.pop()


def run_into_store(s: DeepSeaStudySettings, variants: Sequence[StudyVariant], output_dir: str | os.PathLike,
                   store: str | os.PathLike, progress: bool = False) -> dict:
    """Run the runs of :func:`plan` whose finished bsuite log is not in ``store`` under
    ``output_dir/runs`` (resuming any unfinished one from its checkpoint), through the sweep executors
    (:func:`~pcnn_explore.experiments.agents.agent_runs.run_specs`: ``$PCNN_EXPLORE_EXECUTOR`` local
    or ray), adding each finished run's log to the store (:func:`pcnn_explore.sweep.bsuite_store.keep`)
    as it finishes. Returns ``{"planned", "in_store_before", "ran", "kept", "wall_s"}``.
    Everything is checked before any run: the stop rule, one episode cap, bsuite's map, the store's
    record: cap, profiles and settings (ValueError naming each difference), and that no other process
    holds the store (RunError naming its PID; the store is held until this returns)."""
    from pcnn_explore.experiments.agents.deep_sea_study import study_specs
    from pcnn_explore.run.config import TrainConfig
    from pcnn_explore.sweep import bsuite_store
    from pcnn_explore.sweep.store_lock import StoreLock

    _check_stops_when_solved(s)
    cap = _store_cap(s)
    profile = s.train_profile or s.profile
    specs = study_specs(s, variants, Path(output_dir) / "runs")
    settings = {sp.key: bsuite_store.result_settings(TrainConfig.preset(sp.profile, env=sp.env, seed=sp.seed,
                                                                        steps=sp.steps, **sp.config_fields()).to_dict(),
                                                     sp.key) for sp in specs}
    lock = StoreLock(store).acquire()  # the store is this call's until it returns
    try:
        bsuite_store.adopt(store)
        bsuite_store.check_manifest(store, {v.key: profile for v in variants}, cap, settings)
        return _run_into_store(specs, s.workers, store, cap, profile, progress)
    finally:
        lock.release()


def _run_into_store(specs, workers: int, store, cap: int, profile: str, progress: bool) -> dict:
    import time

    from pcnn_explore.envs.deep_sea import deep_sea_size
    from pcnn_explore.experiments.agents.agent_runs import run_specs
    from pcnn_explore.sweep import bsuite_store

    keys = [(sp.key, sp.seed, int(deep_sea_size(sp.env))) for sp in specs]
    todo = [(specs[i], keys[i]) for i in bsuite_store.pending(keys, store, cap)]
    start, kept = time.monotonic(), set()

    def keep(i: int) -> None:
        sp, (line, seed, n) = todo[i]
        if bsuite_store.keep(store, line, seed, n, sp.out_dir, cap, profile) is not None:
            kept.add(i)

    try:  # each log as its run finishes (a process killed later loses none)
        run_specs([sp for sp, _ in todo], workers, progress=progress, on_done=keep)
    finally:  # the runs read back from their folders, and those left on an interruption
        for i in range(len(todo)):
            if i not in kept:
                keep(i)
    return {"planned": len(specs), "in_store_before": len(specs) - len(todo), "ran": len(todo), "kept": len(kept),
            "wall_s": time.monotonic() - start}


def read_store(s: DeepSeaStudySettings, variants: Sequence[StudyVariant], store: str | os.PathLike) -> dict:
    """What ``store`` holds of :func:`plan`: ``{"rows" (:func:`pcnn_explore.sweep.bsuite_store.scaling_rows`,
    in the plan's order), "caps", "labels", "source", "part", "done", "planned", "sizes_done"
    ({line: sizes with every seed's log}), "settings_differ" ({line: {setting: {"named line", "runs"}}}
    for a line whose runs took settings other than the named line's; its label names them)}``; ``part``
    is "whole protocol" only where the store holds every run of a whole-protocol plan, else it says how
    much it holds."""
    from pcnn_explore.sweep import bsuite_store

    cap = _store_cap(s)
    held = bsuite_store.read_manifest(store).get("episodes")
    if held not in (None, cap):
        raise ValueError(f"the store {store} holds runs of {held} episodes and this plan caps them at {cap}: give the "
                         "store of this plan's runs")
    keys = [(k, seed, n) for k, seed, n, _ in plan(s, variants)]
    rows = bsuite_store.scaling_rows(store, cap, keys)
    have = {(r["variant"], r["seed"], r["size"]) for r in rows}
    sizes_done = {v.key: [n for n in s.sizes if all((v.key, seed, n) in have for seed in s.seeds)] for v in variants}
    part = protocol_part(s)
    if len(rows) < len(keys):
        part = f"partial protocol: {len(rows)} of {len(keys)} runs of the {part} in the store"
    differ = {k: d for k, d in bsuite_store.named_line_differences(store).items() if k in {v.key for v in variants}}
    return {"rows": rows, "caps": {n: cap for n in s.sizes},
            "labels": {v.key: bsuite_store.label_with_differences(v.display, differ.get(v.key)) for v in variants},
            "source": f"bsuite logs in {store}", "part": part, "done": len(rows), "planned": len(keys),
            "sizes_done": sizes_done,
            "settings_differ": {k: {name: {"named line": a, "runs": b} for name, (a, b) in d.items()}
                                for k, d in differ.items()}}


#: the store's folder in the notebook's output folder (the report's ``14_deep_sea_scaling/protocol``)
STORE_NAME = "protocol"
#: the whole protocol's figure in the notebook's output folder
WHOLE_PROTOCOL_FIGURE = "deep_sea_whole_protocol.png"


def store_folder(output_dir: str | os.PathLike, store: str | os.PathLike | None = None) -> Path:
    """The bsuite store the notebook uses: ``store`` where given, else ``output_dir/protocol``."""
    return Path(store) if store is not None else Path(output_dir) / STORE_NAME


def whole_protocol(store: str | os.PathLike) -> dict | None:
    """The paper profile's protocol as far as ``store`` holds it, beside a study run: ``{"part",
    "source", "done", "planned", "sizes_done", "lines" (:func:`summarise` per line, over the sizes run,
    with ``protocol_score``: :func:`protocol_score`, over all 21)}``; None where the store holds no log of it.
    The kit's line against each other line: :func:`decisions`."""
    s, variants = settings("paper"), lines("paper")
    if not Path(store).is_dir():
        return None
    data = read_store(s, variants, store)
    if not data["rows"]:
        return None
    summary = summarise(data["rows"], data["caps"], data["labels"])
    for key, x in summary.items():
        x["protocol_score"] = protocol_score([r for r in data["rows"] if r["variant"] == key], s.seeds, s.sizes)
        if key in data["settings_differ"]:  # (a line run with settings other than the named line's)
            x["settings_differ"] = data["settings_differ"][key]
    return {"part": data["part"], "source": data["source"], "done": data["done"], "planned": data["planned"],
            "sizes_done": data["sizes_done"], "rows": data["rows"], "lines": summary}


def decisions(whole: Mapping | None) -> list[Decision]:
    """Notebook 14's claims (:mod:`pcnn_explore.study.preregistered.deep_sea_scaling`) decided on the whole
    protocol as far as it is in (:func:`whole_protocol`; None: not run, each claim not testable; a line
    whose runs differ from its named line in some setting is named with them): the kit's
    per-seed score, sizes not yet run counted as not solved, against the other line's, counted as solved,
    paired by seed (:func:`pcnn_explore.study.decide`)."""
    s = settings("paper")
    held = (whole or {}).get("lines") or {}
    labels = {v.key: v.label for v in lines("paper")}
    # (a line run with settings other than its named line's is named so, with them: 14's claims say it)
    labels.update({k: x["label"] for k, x in held.items() if x.get("settings_differ")})
    out = []
    for claim in pre.claims(labels, s.seeds, s.sizes):
        kit, other = (held.get(k, {}).get("protocol_score") for k in claim.lines)
        if kit is None or other is None:
            out.append(decide(claim))
            continue
        out.append(decide(claim, kit["per_seed_lower"], other["per_seed_upper"], seeds=s.seeds))
    return out


def whole_protocol_figure(whole: Mapping | None, output_dir: str | os.PathLike | None = None):
    """Episodes to solve against N for what the store holds of the whole protocol (:func:`whole_protocol`),
    2^N dashed, saved as ``output_dir/deep_sea_whole_protocol.png`` where given; None without a store."""
    if not whole:
        return None
    labels = {k: x.get("label", k) for k, x in whole["lines"].items()}
    fig = scaling_figure(whole["rows"], labels, f"bsuite's whole protocol, {whole['done']} of {whole['planned']} runs in: "
                                                 "episodes to solve against N")
    if output_dir is not None:
        fig.savefig(Path(output_dir) / WHOLE_PROTOCOL_FIGURE, dpi=110)
    return fig


def collect(s: DeepSeaStudySettings, variants: Sequence[StudyVariant], output_dir: str | os.PathLike,
            sweep_dir: str | os.PathLike | None = None, progress: bool = False,
            store: str | os.PathLike | None = None) -> dict:
    """The scaling rows to summarise: ``{"rows", "caps" ({N: episode cap}), "labels", "source", "part"}``,
    from the notebook's own runs (:func:`run`), or, with ``sweep_dir``, from a finished sweep's report
    (:func:`read_sweep_report`: its variants and seeds, the protocol's 10K cap, its sizes' part of the
    protocol), or, with ``store``, from the bsuite logs of a store after running what it lacks
    (:func:`run_into_store`, :func:`read_store`; ``"ran"`` says what this call ran)."""
    if store is not None:
        if sweep_dir is not None:
            raise ValueError("give a store or a sweep's folder, not both")
        ran = run_into_store(s, variants, output_dir, store, progress=progress)
        return {**read_store(s, variants, store), "ran": ran, "wall_min": ran["wall_s"] / 60}
    if sweep_dir is not None:
        rows = read_sweep_report(sweep_dir)["rows"]
        sizes = tuple(sorted({r["size"] for r in rows}))
        from pcnn_explore.sweep.grid import line_label

        return {"rows": rows, "caps": {}, "labels": {v: line_label(v) for v in dict.fromkeys(r["variant"] for r in rows)},
                "source": f"sweep report {Path(sweep_dir) / 'report'}",
                "part": "whole protocol" if sizes == PROTOCOL_SIZES else "partial protocol"}
    study = run(s, variants, output_dir, progress=progress)
    return {"rows": study.scaling_rows(), "caps": {n: s.episode_cap(n) for n in s.sizes}, "labels": study.labels,
            "source": f"runs under {Path(output_dir) / 'runs'}", "part": protocol_part(s), "table": study.table(),
            "wall_min": study.wall_s / 60}


def _cell(v: str):
    return None if v in ("", "nan") else int(v)


def read_sweep_report(sweep_dir: str | os.PathLike) -> dict:
    """A finished sweep's deep-sea report (``DIR/report/deep_sea_scaling.csv`` and ``deep_sea_score.csv``,
    :mod:`pcnn_explore.sweep.deep_sea_report`): ``{"rows": the scaling rows with numbers, "scores":
    {variant: {seed: score}} from deep_sea_score.csv}``. FileNotFoundError naming the command when
    the report is missing; ValueError when its per-seed scores disagree with its own rows."""
    report = Path(sweep_dir) / "report"
    paths = [report / "deep_sea_scaling.csv", report / "deep_sea_score.csv"]
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(f"no {p}: write the sweep's report first (pcnn-explore sweep --report {sweep_dir})")
    with open(paths[0], newline="") as f:
        rows = [{"size": int(r["size"]), "variant": r["variant"], "seed": int(r["seed"]),
                 "episodes_run": int(r["episodes_run"]), "solved": int(r["solved"]),
                 "solve_episode": _cell(r["solve_episode"]), "bsuite_solve_episode": _cell(r["bsuite_solve_episode"]),
                 "counts_for_score": int(r["counts_for_score"])} for r in csv.DictReader(f)]
    scores = {}
    with open(paths[1], newline="") as f:
        for r in csv.DictReader(f):
            scores[r["variant"]] = {int(s): float(v) for s, v in (x.split(":") for x in r["per_seed_scores"].split(";"))}
    mine = summarise(rows)
    for key, line in mine.items():
        want = [scores.get(key, {}).get(s) for s in line["seeds"]]
        if any(w is None or not math.isclose(w, v, rel_tol=1e-3, abs_tol=1e-4) for w, v in zip(want, line["per_seed_score"])):
            raise ValueError(f"{paths[1]}: {key}'s per-seed scores {want} disagree with deep_sea_scaling.csv's rows "
                             f"({line['per_seed_score']}): write the report again")
    return {"rows": rows, "scores": scores}


def metrics(profile: str, part: str, summary: Mapping[str, dict], source: str, s: DeepSeaStudySettings | None = None,
            variants: Sequence[StudyVariant] = (), b: dict | None = None, whole: Mapping | None = None) -> dict:
    """metrics.json: the profile, the part of the protocol (sizes, episodes, seeds; "partial protocol"
    or "whole protocol"), where the runs came from, each line's values (:func:`summarise`) with its
    kind, the worst-case budget and, beside a study run, the whole protocol as far as the store holds
    it (:func:`whole_protocol`, without its rows); and the claims record of the notebook's claims
    (:func:`decisions`: each not testable without the whole protocol)."""
    kinds = {v.key: v.kind for v in variants}
    protocol = {"part": part, "source": source}
    if s is not None:
        protocol.update(sizes=list(s.sizes), episodes=[s.episode_cap(n) for n in s.sizes], seeds=list(s.seeds),
                        stop_when_solved=bool(dict(s.train_overrides).get("stop_when_solved")))
    out = {"profile": profile, "protocol": protocol, "budget": b,
           "lines": {k: {**x, "kind": kinds.get(k)} for k, x in summary.items()}}
    if whole is not None:
        out.update(whole_protocol_record(whole))
    return {**out, **metrics_record(decisions(whole))}


def whole_protocol_record(whole: Mapping) -> dict:
    """metrics.json's entries for the whole protocol (:func:`whole_protocol`): ``whole_protocol``
    (without its rows, with ``text``: :func:`whole_protocol_text`'s lines), ``main_figure``, its
    figure (:func:`whole_protocol_figure`), the one the report shows for notebook 14, and the claims
    record of its claims (:func:`decisions`, :func:`pcnn_explore.study.metrics_record`)."""
    return {"whole_protocol": {**{k: v for k, v in whole.items() if k != "rows"},
                               "text": whole_protocol_text(whole).split("\n")},
            "main_figure": WHOLE_PROTOCOL_FIGURE, **metrics_record(decisions(whole))}
