"""The paper's four agent experiments as one table: Fig. 5, 11, 12 and 13.

Each entry of :data:`FIGURES` (an :class:`AgentFigure`) says what the paper ran: its lines
(:class:`Arm`: a variant named by the rule of :mod:`pcnn_explore.run.variants`,
the line's metrics key, extra TrainConfig fields and legend text), the paper's games, what the
paper says of each line, and the seeds of the presets. Each figure has a settings dataclass
(smoke / study / paper presets built from its entry) that picks which of its lines to run, and
one :func:`run` trains any of them; :func:`pcnn_explore.experiments.agents.agent_summary.summary` and
``paper`` (given the entry's name, ``"fig5"`` ...) give its metrics.
"""
from __future__ import annotations

import csv
import dataclasses
import os
from pathlib import Path
from typing import Any, ClassVar, Mapping, NamedTuple

from pcnn_explore.experiments.agents.agent_curves import AgentExperimentResults
from pcnn_explore.experiments.agents.agent_runs import (
    PAPER_AGENT_STEPS,
    SMOKE_TASK,
    STUDY_TASK,
    STUDY_TRAIN_OVERRIDES,
    AgentSettings,
    make_specs,
    run_experiment,
)
from pcnn_explore.run.variants import check_variant, variant_label
from pcnn_explore.resources import data_path

__all__ = [
    "Arm", "arm", "AgentFigure", "FIGURES", "FigureSettings", "DqnBonusSettings", "MmcAblationSettings",
    "PgScaleSettings", "IntrinsicOnlySettings", "run", "scale_key", "scale_arm", "PAPER_SCALES",
    "HARD_GAMES", "PAPER_TABLE", "PAPER_AGENTS", "load_paper_table", "paper_claims",
]


class Arm(NamedTuple):
    """One line of a figure, in the form :func:`~pcnn_explore.experiments.agents.agent_runs.make_specs` takes."""

    variant: str  # a name of the variant rule ("pixelcnn_mmc")
    key: str  # metrics key and run folder name ("pixelcnn_mmc", "c10", ...)
    overrides: Mapping[str, Any]  # TrainConfig fields beyond the variant's own (e.g. pg_scale)
    label: str  # legend text; "" for the paper's name of the variant


def arm(variant: str, key: str = "", label: str = "", **overrides: Any) -> Arm:
    """An :class:`Arm` (key: the variant's name unless given); ValueError for an unknown variant."""
    return Arm(check_variant(variant), key or variant, overrides, label)


def scale_key(c: float) -> str:
    """Metrics key of a PG scale: 0.1 -> "c0.1", 10 -> "c10"."""
    return f"c{c:g}"


def scale_arm(c: float) -> Arm:
    """DQN-PixelCNN (with MMC) with the prediction-gain scale ``c``: Fig. 12's lines."""
    return arm("pixelcnn_mmc", scale_key(c), f"{variant_label('pixelcnn_mmc')}, c = {c:g}", pg_scale=float(c))


#: the 7 hard-exploration, sparse-reward games of the paper's appendix table
HARD_GAMES = ("ALE/Freeway-v5", "ALE/Gravitar-v5", "ALE/MontezumaRevenge-v5", "ALE/Pitfall-v5",
              "ALE/PrivateEye-v5", "ALE/Solaris-v5", "ALE/Venture-v5")
#: Fig. 12's PG scales c
PAPER_SCALES = (0.1, 1.0, 10.0)


@dataclasses.dataclass(frozen=True)
class AgentFigure:
    """One agent figure of the paper: what it ran, on which games, and what the paper says."""

    figure: str  # "Fig. 5"
    notebook: str  # its notebook; runs go under output/<notebook>/runs unless told otherwise
    arms: tuple[Arm, ...]  # the paper's lines, in legend order
    games: tuple[str, ...]  # the paper's games (the paper preset's envs)
    claims: dict[str, str]  # arm key -> what the paper says of that line
    study_seeds: tuple[int, ...] = (0, 1, 2)
    paper_seeds: tuple[int, ...] = (0, 1, 2)
    #: arm key -> the boolean setting that turns the line on (lines not named here always run)
    optional: dict[str, str] = dataclasses.field(default_factory=dict)
    paper_extra: dict[str, Any] = dataclasses.field(default_factory=dict)  # more paper-preset settings

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(a.key for a in self.arms)

    @property
    def default_out_dir(self) -> str:
        return f"output/{self.notebook}"

    def arm(self, key: str) -> Arm:
        """The figure's line ``key``; a variant name the figure does not draw makes a plain line of it."""
        for a in self.arms:
            if a.key == key:
                return a
        return arm(key)

    def presets(self) -> dict[str, dict[str, Any]]:
        """The smoke / study / paper presets of the figure's settings.

        smoke: a few hundred steps of one seed (plumbing only). study: sized to about 15 min on
        2 cores (per-process speeds in data/task_search.json). paper: the paper's games and budget.
        """
        return {
            "smoke": dict(envs=(SMOKE_TASK,), seeds=(0,), steps=300, workers=1, curve_window=75, window=5,
                          train_overrides=(("tensorboard", False),)),
            "study": dict(envs=(STUDY_TASK,), seeds=self.study_seeds, steps=12_000, workers=2, curve_window=750,
                          window=10, train_overrides=STUDY_TRAIN_OVERRIDES),
            # the paper: a point per 1M frames (250K agent steps); its runs: pcnn-explore sweep <grid>
            "paper": dict(envs=self.games, seeds=self.paper_seeds, steps=PAPER_AGENT_STEPS, workers=1,
                          curve_window=250_000, window=100, **self.paper_extra),
        }


FIGURES: dict[str, AgentFigure] = {
    "fig5": AgentFigure(
        figure="Fig. 5", notebook="07_dqn_pixelcnn",
        arms=(arm("dqn"), arm("cts_mmc"), arm("pixelcnn_mmc")),
        games=HARD_GAMES,
        # the appendix table's numbers for these lines: paper_claims()
        claims={
            "dqn": "far behind both bonus agents on Montezuma's Revenge",
            "cts_mmc": "vastly outperforms DQN on Montezuma's Revenge",
            "pixelcnn_mmc": "state of the art on Private Eye and Venture, well ahead of DQN and DQN-CTS",
        },
    ),
    "fig11": AgentFigure(
        figure="Fig. 11", notebook="08_mmc_ablation",
        arms=(arm("dqn"), arm("dqn_mmc"), arm("pixelcnn"), arm("pixelcnn_mmc")),
        # Bank Heist and Time Pilot (MMC explains the gain), H.E.R.O. (additive gains) and a hard
        # sparse-reward game, which the text does not name; Montezuma's Revenge stands in.
        games=("ALE/BankHeist-v5", "ALE/TimePilot-v5", "ALE/Hero-v5", "ALE/MontezumaRevenge-v5"),
        # bottom right (a hard, sparse-reward game), in the paper's words
        claims={
            "dqn": "no training progress",
            "dqn_mmc": "no significant benefit over DQN",
            "pixelcnn": "no significant benefit over DQN",
            "pixelcnn_mmc": "rapid training progress, high score",
        },
        study_seeds=(0, 1),
    ),
    "fig12": AgentFigure(
        figure="Fig. 12", notebook="09_pg_scale",
        arms=tuple(scale_arm(c) for c in PAPER_SCALES),
        # the games whose record peaks the text reports for large c (Fig. 12 shows three of them)
        games=("ALE/Gravitar-v5", "ALE/MontezumaRevenge-v5", "ALE/PrivateEye-v5", "ALE/Venture-v5"),
        claims={
            "c0.1": "the default; robust",
            "c1": "explores harder; fairly robust",
            "c10": "explores hardest: record peaks (Montezuma 6,600, Private Eye 39,000, Venture 1,500, "
                   "Gravitar 900), less stable later",
        },
        study_seeds=(0, 1), paper_seeds=(0, 1, 2, 3, 4),
    ),
    "fig13": AgentFigure(
        figure="Fig. 13", notebook="10_intrinsic_only",
        arms=(arm("pixelcnn_mmc_intrinsic", "intrinsic_only"), arm("pixelcnn_mmc"), arm("dqn")),
        # the text does not name Fig. 13's games
        games=("ALE/MontezumaRevenge-v5", "ALE/PrivateEye-v5"),
        claims={
            "intrinsic_only": "the bonus alone trains an agent that scores (extrinsic reward never seen)",
            "pixelcnn_mmc": "DQN-PixelCNN with both rewards (for comparison)",
            "dqn": "DQN: no progress on the hardest games",
        },
        optional={"pixelcnn_mmc": "with_full", "dqn": "with_dqn"},
        paper_extra=dict(with_dqn=False, with_full=True),
    ),
}


# ---------------------------------------------------------------------------------------------
# one settings dataclass per figure, and one run()

@dataclasses.dataclass
class FigureSettings(AgentSettings):
    """Settings of one figure of :data:`FIGURES`; see :class:`AgentSettings` for the shared fields.

    By default every line of the figure runs, less the optional ones whose setting is off.
    """

    FIGURE: ClassVar[str] = ""

    @classmethod
    def figure(cls) -> AgentFigure:
        return FIGURES[cls.FIGURE]

    def arms(self) -> list[Arm]:
        """The lines to train; ValueError for a choice the figure or the variant rule does not allow."""
        fig = self.figure()
        return [a for a in fig.arms if a.key not in fig.optional or getattr(self, fig.optional[a.key])]

    def check(self) -> None:
        super().check()
        keys = [a.key for a in self.arms()]
        if len(set(keys)) != len(keys):
            raise ValueError(f"runs repeat: {keys} (each line needs its own key)")


@dataclasses.dataclass
class _ChosenVariants(FigureSettings):
    """variants: which lines to train, by key (a figure's line or any name of the variant rule)."""

    variants: tuple[str, ...] = ()

    def arms(self) -> list[Arm]:
        if isinstance(self.variants, str):
            raise TypeError(f"variants must be a tuple of names, got the string {self.variants!r}")
        if not self.variants:
            raise ValueError("variants is empty: name at least one variant")
        return [self.figure().arm(v) for v in self.variants]


@dataclasses.dataclass
class DqnBonusSettings(_ChosenVariants):
    """Fig. 5: DQN, DQN-CTS, DQN-PixelCNN (the default ``variants``)."""

    FIGURE: ClassVar[str] = "fig5"
    PRESETS: ClassVar[dict] = FIGURES["fig5"].presets()
    variants: tuple[str, ...] = FIGURES["fig5"].keys


@dataclasses.dataclass
class MmcAblationSettings(_ChosenVariants):
    """Fig. 11: DQN with and without the PixelCNN bonus, each with and without MMC."""

    FIGURE: ClassVar[str] = "fig11"
    PRESETS: ClassVar[dict] = FIGURES["fig11"].presets()
    variants: tuple[str, ...] = FIGURES["fig11"].keys


@dataclasses.dataclass
class PgScaleSettings(FigureSettings):
    """Fig. 12. scales: the PG scales c (positive floats), one DQN-PixelCNN line each."""

    FIGURE: ClassVar[str] = "fig12"
    PRESETS: ClassVar[dict] = FIGURES["fig12"].presets()
    scales: tuple[float, ...] = PAPER_SCALES

    def arms(self) -> list[Arm]:
        if not self.scales:
            raise ValueError("scales is empty: give at least one PG scale c")
        for c in self.scales:
            if isinstance(c, bool) or not isinstance(c, (int, float)) or not c > 0:
                raise ValueError(f"PG scales must be positive numbers, got {c!r}")
        return [scale_arm(c) for c in self.scales]


@dataclasses.dataclass
class IntrinsicOnlySettings(FigureSettings):
    """Fig. 13. with_dqn / with_full: also train those baselines (DQN; DQN-PixelCNN on both rewards)."""

    FIGURE: ClassVar[str] = "fig13"
    PRESETS: ClassVar[dict] = FIGURES["fig13"].presets()
    with_dqn: bool = True
    with_full: bool = False


def run(settings: FigureSettings, out_dir: str | os.PathLike | None = None,
        sweep_dir: str | os.PathLike | None = None, progress: bool = False) -> AgentExperimentResults:
    """Train the lines ``settings`` picks x seeds x envs (worker processes, or Ray on a cluster: see agent_runs.run_specs); runs are written under
    ``out_dir/runs`` (default ``output/<the figure's notebook>``). Bad settings raise before any run starts.

    ``sweep_dir``: read the runs from a sweep of the figure's grid instead of training (e.g. the
    paper's grid run on a cluster: ``pcnn-explore sweep fig5 --out DIR``); every line x env x seed
    the settings pick must have its trial folder there. ``progress``: a line per run that starts or ends.
    """
    if not isinstance(settings, FigureSettings):
        raise TypeError(f"run takes the settings of one figure ({', '.join(FIGURES)}), got {type(settings).__name__}")
    settings.check()
    if sweep_dir is not None:
        specs = make_specs(settings, Path(sweep_dir).resolve(), settings.arms(), sweep_layout=True)
        return run_experiment(settings, specs, sweep_dir=sweep_dir)
    out = Path(settings.figure().default_out_dir if out_dir is None else out_dir)
    return run_experiment(settings, make_specs(settings, out / "runs", settings.arms()), progress=progress)


# ---------------------------------------------------------------------------------------------
# Fig. 5's numbers: the paper's appendix table

PAPER_TABLE = data_path("paper_hard_games.csv")  # the package data, also in a non-editable install
PAPER_AGENTS = ("DQN", "A3C-CTS", "Prior. Duel", "DQN-CTS", "DQN-PixelCNN")


def load_paper_table(path: str | os.PathLike = PAPER_TABLE) -> dict[str, dict[str, float]]:
    """The paper's appendix table: {game: {agent: score}} (scores in game points).

    Agents: DQN, A3C-CTS, Prior. Duel, DQN-CTS, DQN-PixelCNN (the last two: maximum score over
    150M training frames, averaged over 3 seeds). Also {game: {"ale_id": id}} under key "ale_id".
    """
    table: dict[str, dict[str, float]] = {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = set(PAPER_AGENTS + ("game", "ale_id")) - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: missing column(s) {sorted(missing)}")
        for row in reader:
            table[row["game"]] = {a: float(row[a]) for a in PAPER_AGENTS}
            table[row["game"]]["ale_id"] = row["ale_id"]
    return table


def paper_claims(table: dict | None = None) -> dict[str, str]:
    """The paper's numbers per Fig. 5 line: appendix-table scores on three sparse-reward games."""
    t = table or load_paper_table()
    games = {"Montezuma's Revenge": "Montezuma", "Private Eye": "Private Eye", "Venture": "Venture"}
    col = {key: variant_label(FIGURES["fig5"].arm(key).variant) for key in FIGURES["fig5"].keys}
    return {k: ", ".join(f"{short} {t[g][a]:,.2f}" for g, short in games.items()) for k, a in col.items()}
