"""Reactor and the bonus (notebook 13; the paper's Sec. 4.2, Fig. 7, 8) on bsuite's deep-sea protocol.

The lines (:data:`LINES`, each a :class:`~pcnn_explore.experiments.agents.deep_sea_study.StudyVariant`
whose overrides state every setting of its method, with a ``kind``):

- ``reactor`` (baseline): Reactor without a bonus; it samples its actions from its policy (no epsilon);
- ``reactor_cts`` (paper): Reactor with the paper's CTS form of the bonus (c = 1 constant, beta 0.05:
  :func:`pcnn_explore.experiments.agents.lines.paper_bonus`), the state acted in scored, the bonus and
  the density model's update on a seeded random 25% of steps (as in the paper), no MMC (Reactor
  evaluates its policy with Retrace);
- ``cts_mmc`` (paper): the paper's DQN-CTS line (:data:`pcnn_explore.experiments.agents.lines.LINES`
  ``paper_cts``): the same CTS form on every step, MMC beta 0.1, epsilon-greedy;
- ``reactor_pixelcnn_pos``, ``pixelcnn_pos_mmc`` (kit): the same two agents with the kit's
  position-biased PixelCNN in the paper's PixelCNN form (c = 0.1 n^-1/2, beta 1).

Why CTS. The paper's headline model is PixelCNN, but its translation-invariant PixelCNN reads the
same context around the agent's one pixel in every DeepSea cell and cannot count cells (notebook
12). CTS is a model the paper uses and counts DeepSea's cells, so every paper claim compares the CTS
form with the CTS form; the kit's PixelCNN lines get kit findings only.

The runs: each line x seed on DeepSea-N for the sizes and episode cap of the profile (a subset of
bsuite's protocol, :mod:`pcnn_explore.envs.deep_sea_protocol`: sizes up to N = 33, one Reactor
sequence, so a replayed sequence from an episode's start holds the whole episode). The seed is the
unit.

Per run (:func:`run_values`), over its complete episodes: ``auc``, the share of episodes that found
DeepSea's +1 (the mean of the success curve: the paper's area-under-the-curve measure, as a share);
``late``, the same over the last quarter; ``solve_episode`` (bsuite's rule checked at every episode),
``bsuite_solve_episode`` (the first of bsuite's logged episodes at which it holds, as bsuite finds
it) and ``solved`` (that logged episode in time for the deep-sea score). Per seed: the mean over the
sizes.

The claims (:data:`CLAIMS`, :func:`decide`); each records its kind, the lines it compares, its test,
the one-sided p and n:

- ``bonus_helps_reactor`` (paper, Fig. 7/8): Reactor-CTS above Reactor in ``auc``;
- ``dqn_mmc_above_reactor_bonus`` (paper, Sec. 4.2: Reactor "seems unable to make full use of" the
  bonus on sparse games): DQN-CTS + MMC above Reactor-CTS in ``auc``;
- ``traces_cut`` (kit: the paper states the hypothesis, the kit measures it): Retrace carries a
  reward r_k back to a sequence's first state x_0 with weight gamma^k prod_{s=1}^{k} c_s,
  c_s = lambda min(1, pi(a_s|x_s) / mu(a_s|x_s)); the MMC target carries it with beta gamma^k whatever
  the policy. Measured on Reactor-CTS with the policy that was learning when the sequence was
  replayed: each run's ``traces.csv`` (:mod:`pcnn_explore.run.trace_log`), over the replayed
  sequences that start at an episode's first step and hold a large reward: a clipped reward above
  0.5 as the learner saw it, DeepSea's +1 or a bonus that large (the sequence replay keeps the sum
  only), with k its last such step. Per seed: the mean product over all such replays of the run.
  Claim: below the beta of the DQN-CTS runs (the exact sign flip of beta - product,
  :func:`pcnn_explore.verdicts.progress_verdict`);
- ``position_bias_helps_reactor``, ``kit_dqn_above_reactor_bonus`` (kit): the two paper comparisons
  with the kit's position-biased PixelCNN on both sides.

Per-seed AUC values are near all-or-nothing on a size where an agent fails, so the paired claims are
decided by the exact sign-flip test paired by seed id (:func:`pcnn_explore.verdicts.paired_verdict`;
no claim's quantity is the solved flag). The paper verdict combines the paper claims by
:func:`pcnn_explore.verdicts.combine_verdicts`; the kit verdict, beside it, the kit claims; a kit
claim never enters the paper verdict.

Seeds: the study profile runs the verdict seeds 401-410
(:data:`pcnn_explore.experiments.agents.preregistered.VERDICT_SEEDS`) and refuses, before any
training, a tuning seed or fewer seeds than the sign-flip test needs to reach its level
(:func:`pcnn_explore.verdicts.seeds_needed`, 6 at 0.95). The smoke profile's 2 seeds are "not
testable at this profile" by the tests' own arithmetic.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from pcnn_explore.envs.deep_sea import deep_sea_id
from pcnn_explore.envs.deep_sea_protocol import bsuite_solve_episode, solve_episode, solved_in_time, successes_from_log
from pcnn_explore.experiments.agents.agent_runs import RunSpec, run_specs
from pcnn_explore.experiments.agents.deep_sea_study import StudyVariant, study_variant
from pcnn_explore.experiments.agents.lines import PAPER_METHOD, line as named_line, paper_bonus
from pcnn_explore.experiments.agents.preregistered import LEVEL, TUNING_SEEDS, VERDICT_SEEDS
from pcnn_explore.run.variants import MMC_BETA, check_variant, variant_agent
from pcnn_explore.profiles import ExperimentSettings, check_profile
from pcnn_explore.verdicts import (
    Verdict,
    binomial_interval,
    combine_verdicts,
    paired_verdict,
    progress_verdict,
    seeds_needed,
)

__all__ = ["ReactorStudySettings", "PAPER", "STUDY_SEEDS", "LINES", "ReactorClaim", "CLAIMS", "NOT_TESTABLE",
           "settings_for", "specs", "run", "line_labels", "run_values", "run_traces", "collect", "decide",
           "overall", "kit_overall", "summary", "paper_rows", "metrics"]

NOT_TESTABLE = "not testable at this profile"

PAPER = {
    "fig7_fig8": "Reactor-PixelCNN improves on Reactor on a large fraction of the 57 games, in area under the "
                 "curve (Fig. 8); Reactor beats DQN in about 50 of 57 games (Fig. 7, 16)",
    "sec4_2": "on hard, sparse-reward games Reactor seems unable to make full use of the bonus; the authors' "
              "hypothesis: Retrace's truncated importance ratios cut the propagation of reward over long horizons, "
              "which MMC keeps (no numbers given)",
    "mmc_beta": MMC_BETA,
    "bonus_fraction": "the bonus (and the density model's update) on a random 25% of Reactor's steps",
    # the claim the report shows beside the verdict
    "verdict": "the bonus helps Reactor (Fig. 7, 8), yet on hard, sparse-reward games DQN with the bonus and MMC "
               "makes more of it (Sec. 4.2); decided with the paper's CTS bonus form on both sides",
}
#: the study profile's seeds: the verdict seeds 401-410, used for no tuning
STUDY_SEEDS = VERDICT_SEEDS
_LONGEST = 33  # one Reactor sequence (pcnn_explore.agents.sequence_replay.SEQ_LEN)
#: the study profile's test: every claim is decided by the exact sign flip
_STUDY_TEST = "sign_flip"


def _reactor_line(model: str, key: str, label: str, kind: str) -> StudyVariant:
    """Reactor with ``model``'s paper bonus form, every setting stated: the state acted in scored, the
    bonus on a random 25% of steps, no MMC (Retrace), no novelty-scaled exploration."""
    fields = {**paper_bonus(model), "scored_frame": "state", "bonus_fraction": 0.25, "mmc_beta": 0.0,
              "novelty_epsilon": 0.0, "intrinsic_only": False}
    return study_variant(f"reactor_{model}", key, label, kind=kind, **fields)


#: the lines of notebook 13 by key (the key is the variant's name), each with its kind and every setting
LINES: dict[str, StudyVariant] = {v.key: v for v in (
    study_variant("reactor", "reactor", "Reactor", kind="baseline", mmc_beta=0.0, novelty_epsilon=0.0),
    _reactor_line("cts", "reactor_cts", "Reactor-CTS", "paper"),
    dataclasses.replace(named_line("paper_cts"), key="cts_mmc", label="DQN-CTS + MMC"),
    _reactor_line("pixelcnn_pos", "reactor_pixelcnn_pos", "Reactor-PixelCNN, position bias (kit)", "kit"),
    dataclasses.replace(named_line("kit_pixelcnn_pos"), key="pixelcnn_pos_mmc",
                        label="DQN-PixelCNN, position bias + MMC (kit)"),
)}
assert dict(LINES["cts_mmc"].overrides)["mmc_beta"] == PAPER_METHOD["mmc_beta"]


@dataclasses.dataclass(frozen=True)
class ReactorClaim:
    """One claim: ``lines`` (a, b) compared as a - b > 0 in ``quantity`` (per seed) by ``test``; ``kind``
    "paper" (the paper's lines and baselines only) or "kit"; ``paper``: what the paper says."""

    name: str
    kind: str
    sentence: str
    lines: tuple[str, ...]
    quantity: str
    test: str
    paper: str


CLAIMS: tuple[ReactorClaim, ...] = (
    ReactorClaim("bonus_helps_reactor", "paper", "the bonus helps Reactor: Reactor-CTS above Reactor in AUC (Fig. 7, 8)",
                 ("reactor_cts", "reactor"), "auc", "sign_flip", "improves on many of 57 games (Fig. 8)"),
    ReactorClaim("dqn_mmc_above_reactor_bonus", "paper", "Reactor cannot make full use of the bonus: DQN-CTS + MMC "
                 "above Reactor-CTS in AUC (Sec. 4.2)", ("cts_mmc", "reactor_cts"), "auc", "sign_flip",
                 "Reactor cannot make full use of the bonus on sparse games (Sec. 4.2)"),
    ReactorClaim("traces_cut", "kit", "Retrace's trace product from x_0 to a large reward on Reactor-CTS lies below "
                 "the MMC beta of DQN-CTS (the kit's measure of Sec. 4.2's hypothesis)", ("reactor_cts", "cts_mmc"),
                 "from_start_product", "sign_flip", "hypothesis: truncated traces cut long-horizon reward (no numbers)"),
    ReactorClaim("position_bias_helps_reactor", "kit", "does the kit's position-biased PixelCNN bonus lift Reactor's "
                 "AUC?", ("reactor_pixelcnn_pos", "reactor"), "auc", "sign_flip", "the paper's PixelCNN, not this one"),
    ReactorClaim("kit_dqn_above_reactor_bonus", "kit", "with the kit's position-biased PixelCNN, does DQN + MMC reach "
                 "a higher AUC than Reactor with the same bonus?", ("pixelcnn_pos_mmc", "reactor_pixelcnn_pos"), "auc",
                 "sign_flip", "the paper's PixelCNN, not this one"),
)
for _c in CLAIMS:  # a paper claim compares the paper's lines and baselines only
    assert _c.kind == "kit" or all(LINES[k].kind != "kit" for k in _c.lines), _c.name


@dataclasses.dataclass
class ReactorStudySettings(ExperimentSettings):
    """Settings of notebook 13: every line x seed runs ``episodes`` episodes of DeepSea-N (N agent
    steps each) for each N in ``sizes``."""

    profile: str = "study"
    seeds: tuple[int, ...] = STUDY_SEEDS
    sizes: tuple[int, ...] = (10,)
    episodes: int = 400
    #: keys of :data:`LINES`: the paper's (Reactor, Reactor-CTS, DQN-CTS + MMC) and the kit's PixelCNN lines
    variants: tuple[str, ...] = ("reactor", "reactor_cts", "cts_mmc", "reactor_pixelcnn_pos", "pixelcnn_pos_mmc")
    #: TrainConfig fields for every run, under each line's own settings
    overrides: tuple[tuple[str, Any], ...] = (("tensorboard", False),)
    late_fraction: float = 0.25  # the last quarter of a run's episodes is "late in training"
    window: int = 50  # episodes per point of the success curves
    workers: int = 2

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "smoke": dict(seeds=(0, 1), sizes=(4,), episodes=25, window=5,
                      overrides=(("learning_starts", 20), ("tensorboard", False))),
        "study": dict(),
        "paper": dict(sizes=tuple(range(10, _LONGEST, 2)), episodes=10_000, window=500),
    }

    def check(self) -> None:
        """Raise ValueError/TypeError on bad settings, before any run starts; at the study profile also
        for a tuning seed or fewer seeds than the claims' exact test needs."""
        from pcnn_explore.envs.deep_sea import DEEP_SEA_SIZES

        check_profile(self.profile)
        for name in ("seeds", "sizes", "variants"):
            v = getattr(self, name)
            if isinstance(v, str) or not isinstance(v, (tuple, list)) or not v:
                raise TypeError(f"{name} must be a non-empty tuple, got {v!r}")
            if len(set(v)) != len(v):
                raise ValueError(f"{name} repeat: {v!r}")
        for v in self.variants:
            check_variant(v)
            if v not in LINES:
                raise ValueError(f"variants: {v!r} is not a line of notebook 13: choose from {', '.join(LINES)}")
        if not any(variant_agent(v) == "reactor" for v in self.variants):
            raise ValueError(f"variants: name at least one Reactor line (reactor, reactor_cts, ...), "
                             f"got {self.variants!r}")
        for n in self.sizes:
            if n not in DEEP_SEA_SIZES or n > _LONGEST:
                raise ValueError(f"sizes: DeepSea-N with N in 3..{_LONGEST} (an episode must fit one {_LONGEST}-step "
                                 f"Reactor sequence), got {n!r}")
        for s in self.seeds:
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
                raise ValueError(f"seeds must be non-negative integers, got {self.seeds!r}")
        for name in ("episodes", "window", "workers"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not 0 < self.late_fraction <= 1:
            raise ValueError(f"late_fraction must be in (0, 1], got {self.late_fraction!r}")
        if self.profile == "study":
            tuned = sorted(set(self.seeds) & set(TUNING_SEEDS))
            if tuned:
                raise ValueError(f"seeds {tuned} are tuning seeds (preregistered.TUNING_SEEDS): no verdict is decided on "
                                 f"them; use {STUDY_SEEDS[0]}..{STUDY_SEEDS[-1]} (seed=None)")
            need = seeds_needed(_STUDY_TEST, LEVEL)
            if len(self.seeds) < need:
                raise ValueError(f"{len(self.seeds)} seeds cannot decide notebook 13's claims at the study profile: "
                                 f"the exact sign-flip test needs at least {need}; give n_seeds >= {need}")

    def steps(self, size: int) -> int:
        """Agent steps per run on DeepSea-``size``: ``episodes`` x N."""
        return int(self.episodes) * int(size)


def settings_for(profile: str, seed: int | None = None, n_seeds: int | None = None, **given: Any) -> ReactorStudySettings:
    """The preset of ``profile``; ``seed``/``n_seeds`` pick seeds ``seed, seed + 1, ...`` (None: the
    preset's first seed / number of seeds); any other setting given (None: the preset's). The study
    profile's settings are checked here (:meth:`ReactorStudySettings.check`), before any run."""
    if seed is None and n_seeds is None:
        s = ReactorStudySettings.preset(profile, **given)
    else:
        first = ReactorStudySettings.preset(profile).seeds[0] if seed is None else seed
        s = ReactorStudySettings.for_notebook(profile, seed=first, n_seeds=n_seeds, **given)
    if profile == "study":
        s.check()
    return s


def line_labels(variants) -> dict[str, str]:
    """Each line's label (kit lines say so)."""
    return {v: LINES[v].display for v in variants}


# ------------------------------------------------------------------------------------- runs
def specs(settings: ReactorStudySettings, out_root: str | os.PathLike) -> list[RunSpec]:
    """One RunSpec per size x line x seed, under ``out_root/<env>/<line>_s<seed>``: the settings'
    ``overrides`` with the line's own settings on top."""
    out = []
    for n in settings.sizes:
        for v in settings.variants:
            over = tuple(sorted({**dict(settings.overrides), **dict(LINES[v].overrides)}.items()))
            out += [RunSpec(v, deep_sea_id(n), int(s), settings.steps(n), settings.profile,
                            str(Path(out_root) / deep_sea_id(n) / f"{v}_s{s}"), over, v, LINES[v].display)
                    for s in settings.seeds]
    return out


def run(settings: ReactorStudySettings, output_dir: str | os.PathLike, progress: bool = False) -> list[RunSpec]:
    """Train (or read back finished, resume unfinished) every run under ``output_dir/runs``; their specs."""
    settings.check()
    todo = specs(settings, Path(output_dir) / "runs")
    run_specs(todo, settings.workers, progress=progress)
    return todo


def run_values(out_dir: str | os.PathLike, size: int, late_fraction: float = 0.25) -> dict[str, Any]:
    """One run's values from its ``log.csv``: ``success`` (E,) 0/1 per complete episode; ``auc`` (their
    mean; NaN with none), ``late`` (mean over the last ``late_fraction`` of them), ``solve_episode``
    (1-based, bsuite's rule at every episode; None: never), ``bsuite_solve_episode`` (the first of
    bsuite's logged episodes at which the rule holds; None: none), ``solved`` (that logged episode in
    time for the score, within the episodes run), ``first_success`` (1-based; None), ``episodes``."""
    from pcnn_explore.run.log import read_log

    won = successes_from_log(read_log(out_dir))
    e = len(won)
    late = won[int(round(e * (1.0 - late_fraction))):]
    seen = bsuite_solve_episode(won)
    return {"success": won.astype(int).tolist(), "episodes": e, "auc": float(won.mean()) if e else math.nan,
            "late": float(late.mean()) if len(late) else math.nan, "solve_episode": solve_episode(won),
            "bsuite_solve_episode": seen, "solved": bool(solved_in_time(size, seen, max(e, 1))),
            "first_success": int(np.flatnonzero(won)[0]) + 1 if won.any() else None}


def run_traces(out_dir: str | os.PathLike, bins: int = 10) -> dict[str, Any]:
    """A Reactor run's ``traces.csv`` summed over its learn calls: ``from_start`` (replayed sequences
    that start at an episode's first step and hold a clipped reward above 0.5, the +1 or a large
    bonus), ``from_start_product`` (their mean trace product, NaN with none) and ``from_start_span``
    (their mean last large-reward step k, in steps), ``rewarded`` / ``rewarded_product`` (every replayed sequence
    holding such a reward, any start), ``c_mean`` (mean over learn calls of the mean c), ``learn_calls``,
    and ``curve``: (``bins`` agent steps (end of each bin), from-start product per bin, NaN where none)."""
    from pcnn_explore.run.trace_log import read_traces

    t = read_traces(out_dir)

    def weighted(count, value):
        w = np.nan_to_num(t[count])
        return float(np.nansum(w * np.nan_to_num(t[value])) / w.sum()) if w.sum() else math.nan

    edges = np.linspace(0, t["step"].max() if len(t["step"]) else 1, bins + 1)
    which = np.clip(np.searchsorted(edges, t["step"], side="left") - 1, 0, bins - 1)
    w = np.nan_to_num(t["from_start"]) * 1.0
    p = w * np.nan_to_num(t["from_start_product_mean"])
    num, den = np.bincount(which, p, bins), np.bincount(which, w, bins)
    return {"learn_calls": int(len(t["step"])), "from_start": int(np.nansum(t["from_start"])),
            "from_start_product": weighted("from_start", "from_start_product_mean"),
            "from_start_span": weighted("from_start", "from_start_span_mean"),
            "rewarded": int(np.nansum(t["rewarded"])), "rewarded_product": weighted("rewarded", "product_mean"),
            "c_mean": float(np.nanmean(t["c_mean"])) if len(t["c_mean"]) else math.nan,
            "curve": (edges[1:].tolist(), np.where(den > 0, num / np.maximum(den, 1e-300), np.nan).tolist())}


def _mean_of_known(values) -> float:
    known = [x for x in values if x == x]
    return float(np.mean(known)) if known else math.nan


def collect(settings: ReactorStudySettings, todo: list[RunSpec]) -> dict[str, Any]:
    """Every run's values and traces, and per line the per-seed values (seeds order; the mean over
    the sizes): ``{"runs": [...], "per_seed": {line: {"auc", "late", "solved", "solve_episode",
    "bsuite_solve_episode" (both censored at episodes + 1)}}, "traces": {Reactor line:
    {"from_start_product", "from_start", "from_start_span", "c_mean", per seed}}, "dqn_mmc_beta": the
    MMC beta of the DQN-CTS runs (else of the first DQN line run; the paper's 0.1 without any)}``."""
    from pcnn_explore.envs.deep_sea import deep_sea_size

    runs = []
    for s in todo:
        n = deep_sea_size(s.env)
        row = {"variant": s.variant, "size": n, "seed": s.seed, **run_values(s.out_dir, n, settings.late_fraction)}
        if variant_agent(s.variant) == "reactor":
            row["traces"] = run_traces(s.out_dir)
        runs.append(row)

    def per_seed(v, f):
        out = []
        for seed in settings.seeds:
            vals = [r[f] for r in runs if r["variant"] == v and r["seed"] == seed]
            if f in ("solve_episode", "bsuite_solve_episode"):
                vals = [settings.episodes + 1 if x is None else x for x in vals]
            out.append(float(np.mean(vals)))
        return out

    fields = ("auc", "late", "solved", "solve_episode", "bsuite_solve_episode")
    per = {v: {f: per_seed(v, f) for f in fields} for v in settings.variants}
    traces = {}
    for v in settings.variants:
        if variant_agent(v) != "reactor":
            continue
        traces[v] = {f: [_mean_of_known([r["traces"][f] for r in runs if r["variant"] == v and r["seed"] == s])
                         for s in settings.seeds] for f in ("from_start_product", "from_start_span", "from_start", "c_mean")}
    dqn = sorted((s for s in todo if variant_agent(s.variant) == "dqn"), key=lambda s: s.variant != "cts_mmc")
    beta = json.loads((Path(dqn[0].out_dir) / "settings.json").read_text())["mmc_beta"] if dqn else MMC_BETA
    return {"runs": runs, "per_seed": per, "traces": traces, "dqn_mmc_beta": float(beta)}


# ------------------------------------------------------------------------------- verdicts
def _fields(v: Verdict) -> dict[str, Any]:
    return {"word": v.word, "estimate": v.estimate, "interval": list(v.interval), "p_value": v.p_value, "n": v.n,
            "test": v.test, "values": list(v.values), "values_b": list(v.values_b), "method": v.method,
            "sentence": v.sentence}


def _by_seed(values, seeds) -> dict[int, float]:
    return {int(s): float(x) for s, x in zip(seeds, values)}


def decide(study: dict[str, Any], seeds, variants, level: float = LEVEL) -> dict[str, dict[str, Any]]:
    """Each claim of :data:`CLAIMS` whose lines were all run, as ``{"kind", "claim", "lines", "labels",
    "quantity", "test", "word", "p_value", "n", "estimate", "interval", "values", "values_b",
    "sentence", ...}``. Paired claims: :func:`~pcnn_explore.verdicts.paired_verdict` of a's and b's
    per-seed values keyed by seed id. ``traces_cut``: the exact sign flip of beta - product over the
    seeds whose Reactor-CTS runs replayed a large reward from an episode's first step
    (``inconclusive`` with fewer than 2 such seeds)."""
    per, seeds, out = study["per_seed"], list(seeds), {}
    for c in CLAIMS:
        if not all(k in variants for k in c.lines):
            continue
        labels = [LINES[k].display for k in c.lines]
        head = {"kind": c.kind, "claim": c.sentence, "lines": list(c.lines), "labels": labels,
                "quantity": c.quantity, "test": c.test}
        if c.quantity == "from_start_product":
            beta = float(study["dqn_mmc_beta"])
            got = {s: p for s, p in _by_seed(study["traces"][c.lines[0]]["from_start_product"], seeds).items() if p == p}
            extra = {"mmc_beta": beta, "seeds_with_replays": len(got), "products": list(got.values()),
                     "product_seeds": list(got)}
            if len(got) < 2:
                out[c.name] = {**head, "word": "inconclusive", "p_value": math.nan, "n": len(got),
                               "sentence": f"inconclusive: {len(got)} seed(s) replayed a large reward from an "
                                           "episode's first step (the test needs 2 or more)", **extra}
            else:
                v = progress_verdict([beta - p for p in got.values()], 0.0, level,
                                     claim=f"MMC beta {beta:g} - prod c from x_0 ({labels[0]})")
                out[c.name] = {**head, **_fields(v), **extra}
            continue
        a, b = (_by_seed(per[k][c.quantity], seeds) for k in c.lines)
        v = paired_verdict(a, b, "greater", level, claim=f"{c.quantity.upper()} {labels[0]} - {labels[1]}")
        out[c.name] = {**head, **_fields(v)}
    return out


def _words(claims: dict[str, dict[str, Any]], kind: str) -> list[str]:
    for name, c in claims.items():
        if c.get("kind") not in ("paper", "kit"):
            raise ValueError(f"claim {name!r}: kind must be paper or kit, got {c.get('kind')!r}")
    return [c["word"] for c in claims.values() if c["kind"] == kind]


def overall(profile: str, claims: dict[str, dict[str, Any]]) -> str:
    """The paper verdict: the paper claims' words combined by
    :func:`pcnn_explore.verdicts.combine_verdicts` (the one rule); kit claims never enter it; smoke or
    no paper claim: not testable at this profile."""
    words = _words(claims, "paper")
    if profile == "smoke" or not words:
        return NOT_TESTABLE
    return combine_verdicts(words)


def kit_overall(profile: str, claims: dict[str, dict[str, Any]]) -> str | None:
    """The kit verdict, beside the paper's: the kit claims' words combined by the same rule (None: no
    kit claim; smoke: not testable at this profile)."""
    words = _words(claims, "kit")
    if not words:
        return None
    return NOT_TESTABLE if profile == "smoke" else combine_verdicts(words)


def _exploration(v: str) -> str:
    return "samples from its policy" if variant_agent(v) == "reactor" else (
        "novelty-scaled epsilon" if dict(LINES[v].overrides).get("novelty_epsilon") else "epsilon-greedy")


def summary(settings: ReactorStudySettings, study: dict[str, Any]) -> dict[str, Any]:
    """The paper verdict (:func:`overall`), the kit verdict (:func:`kit_overall`), the claims
    (:func:`decide`) and one line each with its numbers."""
    claims = decide(study, settings.seeds, settings.variants)
    sizes = ", ".join(str(n) for n in settings.sizes)
    lines = [f"DeepSea-N, N = {sizes}, {settings.episodes} episodes, {len(settings.seeds)} seeds "
             f"({', '.join(map(str, settings.seeds))}); a uniformly random policy finds the +1 in 2^-N of its "
             f"episodes ({0.5 ** min(settings.sizes):.2g} at N = {min(settings.sizes)}):"]
    for v, row in study["per_seed"].items():
        k, n = sum(x == 1.0 for x in row["solved"]), len(row["solved"])
        lo, hi = binomial_interval(k, n, LEVEL)
        lines.append(f"  {LINES[v].display} ({LINES[v].kind}, {_exploration(v)}): AUC per seed "
                     f"{', '.join(f'{x:.3f}' for x in row['auc'])} (mean {np.mean(row['auc']):.3f}); solved in time "
                     f"at bsuite's logged episode on every size: {k}/{n} seeds [{lo:.2f}, {hi:.2f}] (95% Clopper-Pearson)")
    for c in claims.values():
        p = "" if not c.get("p_value") == c.get("p_value") else f"; p = {c['p_value']:.3g}"
        lines.append(f"{c['kind']}: {c['claim']}: {c['sentence']} (test {c['test']}, n = {c['n']}{p})")
    return {"verdict": overall(settings.profile, claims), "kit_verdict": kit_overall(settings.profile, claims),
            "claims": claims, "lines": lines}


def paper_rows(summ: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(kind and quantity, the paper, this run: verdict, estimate, 95% interval, p, n) per claim, for
    :func:`pcnn_explore.report.paper_vs_run`."""
    paper = {c.name: c.paper for c in CLAIMS}
    rows = []
    for name, c in summ["claims"].items():
        what = f"{c['kind']}: {c['quantity']} " + " - ".join(c["labels"])
        if "estimate" in c:
            lo, hi = c["interval"]
            got = (f"{c['word']}: {c['estimate']:+.3f} [{lo:+.3f}, {hi:+.3f}], p = {c['p_value']:.3g}, "
                   f"n = {c['n']}")
        else:
            got = c["word"]
        rows.append((what, paper[name], got))
    return rows


def metrics(settings: ReactorStudySettings, study: dict[str, Any], summ: dict[str, Any],
            wall_s: float | None = None) -> dict[str, Any]:
    """What notebook 13 writes to ``metrics.json`` (with each line's kind, label and settings)."""
    lines = {v: {"kind": LINES[v].kind, "label": LINES[v].display, "variant": LINES[v].variant,
                 "settings": dict(LINES[v].overrides), "exploration": _exploration(v)} for v in settings.variants}
    return {"profile": settings.profile, "seeds": list(settings.seeds), "sizes": list(settings.sizes),
            "episodes": settings.episodes, "settings": settings.to_dict(), "lines": lines,
            "per_seed": study["per_seed"], "runs": study["runs"], "traces": study["traces"],
            "dqn_mmc_beta": study["dqn_mmc_beta"], "summary": summ, "paper": PAPER, "wall_s": wall_s,
            "main_figure": "reactor_deep_sea.png"}
