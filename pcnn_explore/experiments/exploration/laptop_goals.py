"""Notebook 12's goals and verdict: the paper's claim on DeepSea (:func:`deep_sea_goal`, decided by
Fisher's exact test on the seeds that reached the goal late), the kit's questions
(:func:`deep_sea_kit_goal`, :func:`strict_goal`, :func:`coverage_goal`, :func:`location_goal`), the
verdict on the paper (:func:`verdict`) and each goal's answer (:func:`findings`)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pcnn_explore.run.variants import variant_label as label  # the paper's name of a variant
from pcnn_explore.experiments.exploration.laptop_runs import coverage_table

if TYPE_CHECKING:
    from pcnn_explore.experiments.exploration.count_maps import CountMaps

__all__ = ["PAPER_AGENTS", "KIT_AGENTS", "BONUS_AGENTS", "BASELINES", "GOAL_N", "PAPER", "KINDS", "NOT_TESTABLE",
           "deep_sea_goal", "deep_sea_kit_goal", "strict_goal", "coverage_goal", "location_goal", "verdict",
           "findings"]

#: the paper's lines whose claim notebook 12 decides: the paper's bonus agents against DQN
PAPER_AGENTS = ("cts_mmc", "pixelcnn_mmc")
#: the kit's line, decided the same way as a kit finding
KIT_AGENTS = ("pixelcnn_pos_mmc",)
BONUS_AGENTS = ("cts_mmc", "pixelcnn_pos_mmc")  # the kit's strict goal: these reach DeepSea's +1 in every seed
BASELINES = ("dqn", "dqn_mmc")  # ... and these in none
GOAL_N = 20  # ... on DeepSea-N with N >= GOAL_N (the kit's strict goal)
#: the paper's claim that notebook 12 decides (metrics.json's ``paper``, shown by the report index)
PAPER = {"verdict": "the pseudo-count bonus (with MMC) makes DQN explore: it reaches a sparse reward that "
                    "epsilon-greedy DQN does not (hard exploration games), decided on the paper's DQN-CTS and "
                    "DQN-PixelCNN; notebook 12's other findings are the kit's own"}
#: what a finding is about: "paper" (a claim of the paper, decided into a verdict word) or "kit" (the
#: kit's own question, answered "holds" / "does not hold" / "undecided"; never counted as agreement
#: with the paper)
KINDS = ("paper", "kit")
NOT_TESTABLE = "not testable"  # the word of pcnn_explore.verdicts


def _combine(words: list[str]) -> str | None:
    """One verdict word for several decided words (None: nothing decided), by the one combining rule
    :func:`pcnn_explore.verdicts.combine_verdicts`."""
    from pcnn_explore.verdicts import combine_verdicts

    return combine_verdicts(words) if words else None


def _hard(table: dict[str, dict[int, dict[str, Any]]]) -> list[int]:
    """The sizes where DQN reached the goal late in no seed (the claim is about tasks epsilon-greedy does not solve)."""
    return [n for n in sorted(table.get("dqn", {})) if table["dqn"][n]["reached_late"] == 0]


def _reached_tests(table: dict[str, dict[int, dict[str, Any]]], agents) -> dict[int, dict[str, dict[str, Any]]]:
    """Per N where both ran and per agent of ``agents``: the agent's seeds that reached the goal late
    against DQN's, by Fisher's exact test (:func:`pcnn_explore.verdicts.solved_verdict`, each seed keyed
    by its id); "not testable: too few seeds at this profile" with fewer seeds per line than
    :func:`pcnn_explore.verdicts.seeds_needed` gives for it."""
    from pcnn_explore.verdicts import TOO_FEW_SEEDS, not_testable, seeds_needed, solved_verdict

    need = seeds_needed("fisher")
    tests: dict[int, dict[str, dict[str, Any]]] = {}
    for n, base in sorted(table.get("dqn", {}).items()):
        for v in agents:
            row = table.get(v, {}).get(n)
            if row is None:
                continue
            a = {s: x > 0 for s, x in zip(row["seed_ids"], row["late_successes"])}
            b = {s: x > 0 for s, x in zip(base["seed_ids"], base["late_successes"])}
            claim = f"seeds reaching the +1 late, {label(v)} - DQN"
            if min(len(a), len(b)) < need:
                tests.setdefault(n, {})[v] = {
                    "word": NOT_TESTABLE, "test": "fisher", "p_value": None, "n": len(a) + len(b),
                    "reason": TOO_FEW_SEEDS, "sentence": not_testable(
                        TOO_FEW_SEEDS, f"needs {need} per line, has {min(len(a), len(b))}") + f": {claim}: "
                        f"{sum(a.values())}/{len(a)} vs {sum(b.values())}/{len(b)}"}
                continue
            t = solved_verdict(a, b, "greater", claim=claim)
            tests.setdefault(n, {})[v] = {"word": t.word, "reason": t.reason, "test": t.test, "p_value": t.p_value, "n": t.n,
                                          "intervals": [list(i) for i in t.intervals], "sentence": t.sentence}
    return tests


def deep_sea_goal(table: dict[str, dict[int, dict[str, Any]]]) -> dict[str, Any]:
    """The paper's claim on DeepSea (kind "paper"): the pseudo-count bonus makes DQN reach a reward
    that epsilon-greedy DQN does not, decided on the paper's lines (:data:`PAPER_AGENTS`) alone.

    Per N and paper line: the seeds that reached the goal late against DQN's (:func:`_reached_tests`).
    ``seed_tests``: {N: {variant: {"word", "test", "p_value", "n", "sentence", ...}}}; ``word``: those
    words combined over the sizes ``hard`` where DQN reached the goal late in no seed (None: no such
    N decided, e.g. no DQN run, or DQN solves every size run); ``detail``: {N: {variant: "k of n seeds"}}."""
    sizes = sorted({n for rows in table.values() for n in rows})
    detail = {n: {v: f"{table[v][n]['reached_late']} of {table[v][n]['seeds']} seeds"
                  for v in table if n in table[v]} for n in sizes}
    tests, hard = _reached_tests(table, PAPER_AGENTS), _hard(table)
    return {"kind": "paper", "lines": [v for v in PAPER_AGENTS if v in table], "detail": detail, "seed_tests": tests,
            "hard": hard, "word": _combine([t["word"] for n in hard for t in tests.get(n, {}).values()])}


def deep_sea_kit_goal(table: dict[str, dict[int, dict[str, Any]]]) -> dict[str, Any]:
    """The kit's question (kind "kit"): does the kit's line (:data:`KIT_AGENTS`, the position-biased
    PixelCNN) reach the goal late where DQN does not? The same test as :func:`deep_sea_goal`; ``word``
    its words combined over the ``hard`` sizes; ``holds``: True where that word agrees, False where it
    differs, None otherwise (not run or undecided)."""
    tests, hard = _reached_tests(table, KIT_AGENTS), _hard(table)
    word = _combine([t["word"] for n in hard for t in tests.get(n, {}).values()])
    return {"kind": "kit", "lines": [v for v in KIT_AGENTS if v in table], "seed_tests": tests, "hard": hard,
            "word": word, "holds": True if word == "agrees" else False if word == "differs" else None}


def strict_goal(table: dict[str, dict[int, dict[str, Any]]]) -> dict[str, Any]:
    """The kit's strict goal (kind "kit", not the paper's claim): on DeepSea-N with N >= :data:`GOAL_N`
    DQN-CTS and DQN-PixelCNN with the position bias (:data:`BONUS_AGENTS`) reach the goal late in every
    seed, DQN and DQN + MMC in none. ``holds`` (None: no N >= GOAL_N run); ``sizes`` those N;
    ``largest_separated``: the largest N (any size) where that holds (None: no such N)."""
    sizes = sorted({n for rows in table.values() for n in rows})
    big = [n for n in sizes if n >= GOAL_N]

    def separated(n: int) -> bool:
        bonus = [table[v][n] for v in BONUS_AGENTS if v in table and n in table[v]]
        base = [table[v][n] for v in BASELINES if v in table and n in table[v]]
        return bool(bonus) and bool(base) and all(r["reached_late"] == r["seeds"] for r in bonus) \
            and all(r["reached_late"] == 0 for r in base)

    ok = [n for n in sizes if separated(n)]
    return {"kind": "kit", "sizes": big, "holds": (all(separated(n) for n in big) if big else None),
            "largest_separated": max(ok) if ok else None}


def coverage_goal(rooms: dict[str, Any], baseline: str = "dqn", factor: float = 2.0) -> dict[str, Any]:
    """The kit's question (kind "kit") on the egocentric task: every intrinsic-only variant's mean
    distinct cells at the end is at least ``factor`` times the baseline's.
    ``{"kind": "kit", "ratios": {variant: ratio}, "holds": bool or None}``."""
    final = coverage_table(rooms)
    if baseline not in final:
        return {"kind": "kit", "ratios": {}, "holds": None}
    base = final[baseline]["final_cells_mean"]
    ratios = {v: (f["final_cells_mean"] / base if base > 0 else float("inf"))
              for v, f in final.items() if v.endswith("_intrinsic")}
    return {"kind": "kit", "ratios": ratios, "holds": (all(r >= factor for r in ratios.values()) if ratios else None)}


def location_goal(maps: "CountMaps", paper: str = "pixelcnn", located: tuple[str, ...] = ("cts", "pixelcnn_pos"),
                  min_spearman: float = 0.5, max_spread: float = 0.5) -> dict[str, Any]:
    """The kit's question (kind "kit"; the paper does not discuss it): the paper's PixelCNN cannot tell
    the cells of a row apart (log rho spreads less than ``max_spread`` nats over a row, mean over rows)
    while the located models rank cells by their visits (Spearman >= ``min_spearman``).
    ``{"kind": "kit", "holds": bool or None, "summary": CountMaps.summary()}``."""
    summ = maps.summary()
    if paper not in summ or not any(m in summ for m in located):
        return {"kind": "kit", "holds": None, "summary": summ}
    holds = summ[paper]["row_spread_nats"] < max_spread and all(
        summ[m]["spearman_log_rho_vs_visits"] >= min_spearman for m in located if m in summ)
    return {"kind": "kit", "holds": bool(holds), "summary": summ}


def _check_kinds(goals: dict[str, dict[str, Any]]) -> None:
    for name, g in goals.items():
        if g.get("kind") not in KINDS:
            raise ValueError(f"goal {name!r}: kind must be one of {KINDS}, got {g.get('kind')!r}")


def verdict(profile: str, goals: dict[str, dict[str, Any]]) -> str:
    """The notebook's verdict on the paper, from the goals of kind "paper" alone (their ``word``s
    combined: agrees, partly, mixed, differs, inconclusive or not testable); "not testable: too few seeds
    at this profile" for smoke or when no paper goal was decided. Goals of kind "kit" never enter it.
    Every goal needs a kind."""
    from pcnn_explore.verdicts import TOO_FEW_SEEDS, not_testable

    _check_kinds(goals)
    word = _combine([g["word"] for g in goals.values() if g["kind"] == "paper" and g.get("word") is not None])
    if profile == "smoke" or word is None or word == NOT_TESTABLE:
        return not_testable(TOO_FEW_SEEDS)
    return word


def _status(h: bool | None) -> str:
    return "not run at this profile" if h is None else ("holds" if h else "does not hold")


def findings(profile: str, goals: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per goal: ``{"name", "kind", "answer"}``; a paper goal's answer is its verdict word
    (smoke or undecided: "not testable"), a kit goal's "holds", "does not hold",
    "undecided" (run, but its test decided neither way) or "not run at this profile" (never a verdict
    word on the paper)."""
    _check_kinds(goals)
    out = []
    for name, g in goals.items():
        if g["kind"] == "paper":
            answer = NOT_TESTABLE if profile == "smoke" or g.get("word") is None else g["word"]
        elif g.get("holds") is None and g.get("word") is not None:
            answer = "undecided"
        else:
            answer = _status(g.get("holds"))
        out.append({"name": name, "kind": g["kind"], "answer": answer})
    return out
