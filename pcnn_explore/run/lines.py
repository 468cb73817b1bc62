"""Named lines: the paper's method per density model, its baselines, and each of the kit's additions
named apart, as ``pcnn-explore train --line NAME`` and ``sweep --lines`` run them and the deep-sea
agent notebooks (07-10) compare them.

A line is a :class:`StudyVariant` whose overrides
state every setting of the method (never left to an auto default, so a later change of a default
cannot change a line), with a ``kind``:

- ``"baseline"``: the paper's baselines, DQN (regular Q-learning, epsilon-greedy) and DQN + MMC;
- ``"paper"``: the paper's method (:data:`PAPER_METHOD` with the density model's bonus form,
  :func:`paper_bonus`);
- ``"kit"``: the paper's line plus something the paper does not specify (:data:`KIT_ADDITIONS`).
  A kit line gets a kit verdict, never a place in a paper verdict.

The paper's method, each choice cited:

- the bonus r+ = s PC_n(x)^-1/2, s the bonus scale (TrainConfig ``bonus_scale``), is added to the
  reward at every step, PG computed at every density-model update, online (Sec. 4, "we augment the
  environment reward with a pseudo-count exploration bonus, yielding the combined reward r(x, a) +
  PC_n(x)^-1/2"; Sec. 3.3, the pseudo-count with c_n);
- PixelCNN: PG scaled by c_n = 0.1 n^-1/2 (Sec. 3.3: the decay c n^-1/2 "obtains the best
  exploration results", c = 0.1 "a sensible configuration"), bonus scale 1; trained under the paper's
  optimizer reading, ``density_optimizer`` tf1 (App. A names TensorFlow 1's ``RMSPropOptimizer``
  arguments; the paper group's public PixelCNN bonus trains with it on the per-pixel mean
  cross-entropy), with the torch reading as the sensitivity line ``paper_pixelcnn_torch`` (and
  ``kit_pixelcnn_pos_torch`` for the kit's position-biased PixelCNN, ``kit_pixelcnn_pos``);
- CTS: the paper states no scale and no c_n for CTS. No c_n is an inference from its assumption
  (b) (CTS's PG decays as n^-1 on its own, Sec. 3 and 3.3); bonus scale 0.05 is a declared assumption
  (Bellemare et al. 2016's scale), with a sensitivity line at :data:`CTS_SCALE_SENSITIVITY`; a second
  reading, declared after 0.05 and 0.5 were seen on seeds 401-410, is the line ``paper_cts_horizon``
  (:func:`horizon_bonus_scale`, one bonus scale per DeepSea size, resolved when a run's env is known:
  :meth:`StudyVariant.fields_for`);
- the frame scored is the state acted in, x_t (Bellemare et al. 2016; the paper says only that the
  model "receives a single frame");
- MMC with the MMC mix 0.1 (TrainConfig ``mmc_beta``, the paper's beta) for every intrinsically
  motivated agent (Sec. 4.1: "we always use the mixed Monte Carlo update (MMC) for the
  intrinsically motivated agents ... but regular Q-Learning for the baseline DQN"; the value 0.1 is
  inherited from Bellemare et al. 2016, the paper gives only the mix in [0, 1]);
- DQN's epsilon-greedy exploration (``novelty_epsilon`` 0).

The settings that adapt DQN to DeepSea's scale (:data:`pcnn_explore.envs.deep_sea.DEEP_SEA_DEFAULTS`:
a gradient step every 2 agent steps, target every 50, Adam 1e-3, epsilon 1 -> 0.01 over 2,000
steps, the MLP) apply to every line, baseline included, through the env's defaults.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from pcnn_explore.bonus import PAPER_BONUS_FORM
from pcnn_explore.envs.deep_sea import DEEP_SEA_MMC_BETA, DEEP_SEA_NOVELTY_EPSILON

__all__ = ["StudyVariant", "study_variant", "takes_optimizer_reading", "reading_free", "PAPER_METHOD", "PAPER_BONUS", "PAPER_DENSITY_OPTIMIZER", "KIT_ADDITIONS", "CTS_SCALE_SENSITIVITY", "FIG12_SCALES", "KINDS", "paper_bonus",
           "horizon_bonus_scale", "SIZE_RULES", "ATARI_HORIZON", "HORIZON_GAMMA", "baseline_line", "paper_line", "kit_line", "line", "LINES", "exploration_rule", "resolved_settings"]

KINDS = ("baseline", "paper", "kit")


@dataclasses.dataclass(frozen=True)
class StudyVariant:
    """One line of a study (see the module docstring)."""

    variant: str
    key: str
    overrides: tuple[tuple[str, Any], ...] = ()
    label: str = ""
    kind: str = "paper"  # "baseline", "paper" or "kit" (pcnn_explore.experiments.agents.lines)
    #: (TrainConfig field, rule of :data:`SIZE_RULES`) pairs: settings that depend on DeepSea's size N,
    #: resolved by :meth:`fields_for` when the env is known (never in ``overrides``)
    per_size: tuple[tuple[str, str], ...] = ()

    @property
    def display(self) -> str:
        from pcnn_explore.run.variants import variant_label

        return self.label or variant_label(self.variant)

    def fields_for(self, env: str | None) -> dict[str, Any]:
        """The line's TrainConfig fields on ``env``: ``overrides`` plus each ``per_size`` setting
        resolved for DeepSea-N (``DeepSea-14-v0`` -> the rule's value at N = 14). ValueError for a line
        with per-size settings on another env (or none given)."""
        fields = dict(self.overrides)
        if not self.per_size:
            return fields
        from pcnn_explore.envs.deep_sea import deep_sea_size

        if env is None or deep_sea_size(env) is None:
            raise ValueError(f"line {self.key!r} sets {', '.join(k for k, _ in self.per_size)} per DeepSea size N: "
                             f"run it on a DeepSea-N-v0 env, got {env!r}")
        n = int(deep_sea_size(env))
        return {**fields, **{k: SIZE_RULES[rule](n) for k, rule in self.per_size}}


def study_variant(variant: str, key: str = "", label: str = "", kind: str = "paper",
                  per_size: tuple[tuple[str, str], ...] = (), **overrides: Any) -> StudyVariant:
    """A :class:`StudyVariant` (key: the variant's name unless given); ValueError for an unknown variant,
    kind or per-size rule, or a setting given both fixed and per size."""
    from pcnn_explore.run.variants import check_variant

    if kind not in ("baseline", "paper", "kit"):
        raise ValueError(f"kind must be baseline, paper or kit, got {kind!r}")
    per_size = tuple(sorted((str(k), str(r)) for k, r in per_size))
    for k, rule in per_size:
        if rule not in SIZE_RULES:
            raise ValueError(f"per_size {k}: unknown rule {rule!r}: choose one of {', '.join(SIZE_RULES)}")
        if k in overrides:
            raise ValueError(f"{k} is given both fixed ({overrides[k]!r}) and per size ({rule}): give one")
    return StudyVariant(check_variant(variant), key or variant, tuple(sorted(overrides.items())), label, kind, per_size)


#: the paper's method, shared by every density model (module docstring for the citations)
PAPER_METHOD: dict[str, Any] = {"mmc_beta": 0.1, "scored_frame": "state", "novelty_epsilon": 0.0,
                                "intrinsic_only": False}
#: the paper's reading of the PixelCNN's optimizer (TrainConfig ``density_optimizer``) and the named other
PAPER_DENSITY_OPTIMIZER, OTHER_DENSITY_OPTIMIZER = "tf1", "torch"
#: the paper's bonus form per density model as TrainConfig fields (c of c_n, its schedule over density
#: updates n, bonus scale), from :data:`pcnn_explore.bonus.PAPER_BONUS_FORM` (cited there); a PixelCNN's
#: with the paper's optimizer reading (:data:`PAPER_DENSITY_OPTIMIZER`)
PAPER_BONUS: dict[str, dict[str, Any]] = {
    m: {"pg_scale": f["scale"], "pg_schedule": f["schedule"], "bonus_scale": f["beta"],
        **({"density_optimizer": PAPER_DENSITY_OPTIMIZER} if m.startswith("pixelcnn") else {})}
    for m, f in PAPER_BONUS_FORM.items() if m in ("pixelcnn", "pixelcnn_pos", "cts")}

#: the sensitivity line of the CTS scale assumption: the bonus scale 10 times the declared 0.05
CTS_SCALE_SENSITIVITY = 0.5
#: Fig. 12's scales c of c n^-1/2 (Sec. 6)
FIG12_SCALES = (0.1, 1.0, 10.0)
#: the discount of the horizon transfer (Bellemare et al. 2016's and the paper's DQN, gamma 0.99)
HORIZON_GAMMA = 0.99
#: Atari's effective horizon in agent steps, 1 / (1 - gamma) at gamma 0.99
ATARI_HORIZON = 100


def horizon_bonus_scale(size: int, gamma: float = HORIZON_GAMMA, scale: float | None = None) -> float:
    """The CTS bonus scale's second reading on DeepSea-N, beta_N = 0.05 x 100 / sum_{t=0}^{N-1} gamma^t:
    Bellemare et al. 2016's 0.05 over Atari's effective horizon of 1 / (1 - gamma) = 100 agent steps,
    transferred so that the discounted bonus of an episode novel at every step is the same over
    DeepSea's N steps (0.523 at N = 10, 0.381 at N = 14, 0.275 at N = 20; dimensionless, a multiplier
    of PC^-1/2). Declared after the scales 0.05 and 0.5 were seen on seeds 401-410 (notebook 07);
    ``scale``: the Atari scale (None: the paper's CTS 0.05, :data:`PAPER_BONUS`)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be a positive integer N of DeepSea-N, got {size!r}")
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"gamma must lie in (0, 1), got {gamma!r}")
    base = PAPER_BONUS["cts"]["bonus_scale"] if scale is None else float(scale)
    return base * ATARI_HORIZON / sum(gamma ** t for t in range(size))


#: per-size rules a line may name (:attr:`StudyVariant.per_size`): rule -> value at DeepSea's N
SIZE_RULES = {"cts_horizon": horizon_bonus_scale}

#: the kit's additions, each on top of the paper's CTS line (the settings it changes)
KIT_ADDITIONS: dict[str, dict[str, Any]] = {
    # the kit's bonus form: c = 0.1 held constant, bonus scale 1 (the paper decays c for PixelCNN only and
    # gives CTS no scale)
    "kit_constant_c": {"pg_scale": 0.1, "pg_schedule": "constant", "bonus_scale": 1.0},
    # the frame reached by the action, x_{t+1}, scored instead of x_t
    "kit_next_state": {"scored_frame": "next_state"},
    # MMC mix 0.5 instead of 0.1
    "kit_mmc": {"mmc_beta": DEEP_SEA_MMC_BETA},
    # novelty-scaled exploration (kappa 1) on top of next-state scoring, which it needs
    "kit_novelty": {"scored_frame": "next_state", "novelty_epsilon": DEEP_SEA_NOVELTY_EPSILON},
    # the pseudo-count drives epsilon, no bonus in the reward (a control for kit_novelty)
    "novelty_only": {"scored_frame": "next_state", "novelty_epsilon": DEEP_SEA_NOVELTY_EPSILON, "bonus_scale": 0.0},
}
KIT_ADDITIONS["kit"] = {**KIT_ADDITIONS["kit_constant_c"], **KIT_ADDITIONS["kit_next_state"],
                        **KIT_ADDITIONS["kit_mmc"], **KIT_ADDITIONS["kit_novelty"]}

_KIT_LABELS = {"kit_constant_c": "c = 0.1 constant, bonus scale 1", "kit_next_state": "next state scored",
               "kit_mmc": "MMC mix 0.5", "kit_novelty": "novelty-scaled epsilon", "novelty_only":
               "novelty-scaled epsilon, no bonus in the reward", "kit": "all the kit's additions"}


def paper_bonus(model: str) -> dict[str, Any]:
    """The paper's bonus form of ``model`` (``pg_scale``, ``pg_schedule``, ``bonus_scale``; a PixelCNN's with
    the paper's optimizer reading, ``density_optimizer``)."""
    if model not in PAPER_BONUS:
        raise ValueError(f"no paper bonus form for {model!r}: choose one of {', '.join(PAPER_BONUS)}")
    return dict(PAPER_BONUS[model])


def _label(model: str) -> str:
    from pcnn_explore.density import label

    return label(model)


def baseline_line(mmc: bool = False) -> StudyVariant:
    """DQN (regular Q-learning) or DQN + MMC (MMC mix 0.1), epsilon-greedy."""
    if mmc:
        return study_variant("dqn_mmc", "dqn_mmc", "DQN + MMC", kind="baseline", mmc_beta=PAPER_METHOD["mmc_beta"],
                             novelty_epsilon=0.0)
    return study_variant("dqn", "dqn", "DQN", kind="baseline", mmc_beta=0.0, novelty_epsilon=0.0)


def paper_line(model: str = "cts", key: str = "", mmc: bool = True, intrinsic_only: bool = False, label: str = "",
               **changed: Any) -> StudyVariant:
    """The paper's line with ``model``'s bonus (``paper_<model>``); ``mmc`` False drops MMC (Fig. 11's
    bonus-alone line), ``intrinsic_only`` learns from r+ alone (Fig. 13); ``changed``: settings of the
    paper's form varied as the paper varies them (Fig. 12's c, the CTS scale's sensitivity line)."""
    fields = {**PAPER_METHOD, **paper_bonus(model), "intrinsic_only": bool(intrinsic_only),
              "mmc_beta": PAPER_METHOD["mmc_beta"] if mmc else 0.0, **changed}
    name = f"DQN-{_label(model)}" + ("" if mmc else " without MMC") + (", intrinsic reward only" if intrinsic_only else "")
    if changed and not label:
        name += " (" + ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in changed.items()) + ")"
    name = label or name
    variant = f"{model}{'_mmc' if mmc else ''}{'_intrinsic' if intrinsic_only else ''}"
    return study_variant(variant, key or f"paper_{model}", name, kind="paper", **fields)


def horizon_line(mmc: bool = True) -> StudyVariant:
    """The paper's CTS line under the bonus scale's second reading (``paper_cts_horizon``; without MMC
    ``paper_cts_no_mmc_horizon``, Fig. 11's bonus-alone line): bonus scale beta_N of
    :func:`horizon_bonus_scale` on DeepSea-N, every other setting the paper's CTS line's."""
    base = paper_line("cts", mmc=mmc)
    fields = {k: v for k, v in base.overrides if k != "bonus_scale"}
    key = "paper_cts_horizon" if mmc else "paper_cts_no_mmc_horizon"
    label = "DQN-CTS" + ("" if mmc else " without MMC") + ", bonus scale 0.05 x 100 / sum gamma^t over N (horizon reading)"
    return study_variant(base.variant, key, label, kind="paper", per_size=(("bonus_scale", "cts_horizon"),), **fields)


def kit_line(addition: str, model: str = "cts", key: str = "", density_optimizer: str = "") -> StudyVariant:
    """The paper's ``model`` line with the kit's ``addition`` (a key of :data:`KIT_ADDITIONS`), or the
    kit's position-biased PixelCNN with the paper's PixelCNN form (``addition="pixelcnn_pos"``; with
    ``density_optimizer`` another optimizer reading than the paper's, its sensitivity line)."""
    if addition == "pixelcnn_pos":
        fields = {**PAPER_METHOD, **paper_bonus("pixelcnn_pos")}
        label = "DQN-PixelCNN with position bias (the kit's model)"
        if density_optimizer and density_optimizer != fields.get("density_optimizer"):
            fields["density_optimizer"] = density_optimizer
            label += f", {density_optimizer} reading of its optimizer (sensitivity)"
        return study_variant("pixelcnn_pos_mmc", key or "kit_pixelcnn_pos", label, kind="kit", **fields)
    if density_optimizer:
        raise ValueError(f"density_optimizer is a setting of the PixelCNN lines, not of kit addition {addition!r}")
    if addition not in KIT_ADDITIONS:
        raise ValueError(f"unknown kit addition {addition!r}: choose pixelcnn_pos or one of {', '.join(KIT_ADDITIONS)}")
    fields = {**PAPER_METHOD, **paper_bonus(model), **KIT_ADDITIONS[addition]}
    return study_variant(f"{model}_mmc", key or addition, f"DQN-{_label(model)} + {_KIT_LABELS[addition]} (kit)",
                         kind="kit", **fields)


def _lines() -> dict[str, StudyVariant]:
    out = [baseline_line(), baseline_line(mmc=True), paper_line("cts"), paper_line("pixelcnn"),
           paper_line("pixelcnn", "paper_pixelcnn_torch", density_optimizer=OTHER_DENSITY_OPTIMIZER,
                      label="DQN-PixelCNN, torch reading of its optimizer (sensitivity)"),
           paper_line("cts", "paper_cts_no_mmc", mmc=False),
           paper_line("cts", "paper_cts_intrinsic", intrinsic_only=True),
           paper_line("cts", "paper_cts_scale", label=f"DQN-CTS, bonus scale {CTS_SCALE_SENSITIVITY:g} (sensitivity)",
                      bonus_scale=CTS_SCALE_SENSITIVITY),
           horizon_line(), horizon_line(mmc=False),
           *(paper_line("cts", f"c{c:g}", label=f"DQN-CTS, c = {c:g} n^-1/2 (Fig. 12's form)", pg_scale=c,
                        pg_schedule="inverse_sqrt", bonus_scale=1.0) for c in FIG12_SCALES),
           kit_line("pixelcnn_pos"),
           kit_line("pixelcnn_pos", key="kit_pixelcnn_pos_torch", density_optimizer=OTHER_DENSITY_OPTIMIZER),
           *(kit_line(a) for a in KIT_ADDITIONS)]
    return {v.key: v for v in out}


#: every named line, by key
LINES: dict[str, StudyVariant] = _lines()


def line(key: str) -> StudyVariant:
    """The line named ``key`` (:data:`LINES`); ValueError naming the choices."""
    if key not in LINES:
        raise ValueError(f"unknown line {key!r}: choose one of {', '.join(LINES)}")
    return LINES[key]


def exploration_rule(v: StudyVariant) -> str:
    """"epsilon-greedy" or "novelty-scaled epsilon" (the kit's), from the line's settings."""
    return "novelty-scaled epsilon" if dict(v.overrides).get("novelty_epsilon", 0.0) else "epsilon-greedy"


def takes_optimizer_reading(key: str) -> bool:
    """Whether ``key`` may train a density model under an optimizer reading: False only for a named line
    (:data:`LINES`) whose bonus model takes none (no ``rmsprop`` option in its registry entry,
    :data:`pcnn_explore.density.REGISTRY`: DQN, the CTS lines); True for a PixelCNN line and for any name that is no
    named line (a density notebook's runs, 13's Reactor lines), of which nothing is known."""
    from pcnn_explore.density import REGISTRY
    from pcnn_explore.run.variants import variant_overrides

    v = LINES.get(key)
    if v is None:
        return True
    bonus = {**variant_overrides(v.variant), **dict(v.overrides)}.get("bonus", "none")
    return bonus != "none" and (bonus not in REGISTRY or "rmsprop" in REGISTRY[bonus].options)


def reading_free(claim) -> bool:
    """Whether a claim (:class:`pcnn_explore.study.Claim`) compares named lines none of which takes an optimizer
    reading (:func:`takes_optimizer_reading`): the sensitivity run of the PixelCNN's optimizer need not decide it
    (:func:`pcnn_explore.study.join_readings`' ``reading_free``; 07's torch run takes only its PixelCNN lines)."""
    return bool(claim.lines) and not any(takes_optimizer_reading(k) for k in claim.lines)


def resolved_settings(v: StudyVariant, env: str, profile: str) -> dict[str, Any]:
    """Every TrainConfig setting a run of line ``v`` on ``env`` resolves to (metrics.json's record of the line)."""
    from pcnn_explore.run.variants import variant_overrides
    from pcnn_explore.run.config import TrainConfig

    cfg = TrainConfig.preset(profile, env=env, **{**variant_overrides(v.variant), **v.fields_for(env)})
    return {k: val for k, val in cfg.to_dict().items() if k not in ("out_dir", "steps", "seed")}
