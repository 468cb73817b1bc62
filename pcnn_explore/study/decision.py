"""A decided claim (:class:`Decision`) and its record in metrics.json (:meth:`Decision.to_record`,
:meth:`Decision.from_record`, :data:`SCHEMA`).

A notebook's metrics.json holds ``schema`` (:data:`SCHEMA`), ``claims`` (the list of its decisions'
records, in the order the claims were made), ``word`` (its notebook word) and ``kit_word`` (the word of
its kit claims, None without one): :func:`pcnn_explore.study.metrics_record`. A record holds the claim
as declared (:meth:`pcnn_explore.study.Claim.to_record`) and the values it was decided on, so that a
re-render decides it again with the same function (:func:`pcnn_explore.study.decide_again`).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

from pcnn_explore.study.claim import Claim

__all__ = ["Decision", "SCHEMA", "DEPENDS_ON_SCALE", "DEPENDS_ON_OPTIMIZER", "OPTIMIZER_READINGS"]

#: the version of the claims record in metrics.json
SCHEMA = 1
#: the word of a claim whose verdict differs between the CTS bonus scale's two readings (07-10)
DEPENDS_ON_SCALE = "depends on the bonus scale"
#: the PixelCNN's two optimizer readings, the paper's (the headline word) first: a claim decided under each carries
#: both in ``readings`` under these names (:data:`pcnn_explore.study.preregistered.density.READINGS`)
OPTIMIZER_READINGS = ("tf1", "torch")
#: the word of a claim whose verdict differs between the PixelCNN's two optimizer readings
#: (:data:`pcnn_explore.study.preregistered.density.DEPENDS_ON_READING`)
DEPENDS_ON_OPTIMIZER = "depends on the optimizer reading"


def _number(x: Any) -> float | None:
    """A float, or None for None, NaN and the infinities (JSON has none of them)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _numbers(xs) -> tuple:
    return tuple(_number(x) for x in xs)


@dataclasses.dataclass(frozen=True)
class Decision:
    """One claim decided (:func:`pcnn_explore.study.decide`).

    ``word``: one of :data:`pcnn_explore.verdicts.CLAIM_WORDS`, ``no verdict`` (a reading) or
    :data:`DEPENDS_ON_SCALE` or :data:`DEPENDS_ON_OPTIMIZER`; ``reason``: a ``not testable`` word's reason
    (:data:`pcnn_explore.verdicts.REASONS`), else ""; ``why``: that reason's detail (``needs 6 per
    line, has 3``); ``estimate``, ``interval`` (two-sided ``level``; (None, None) where the test gives
    none, e.g. Fisher's), ``p`` (the one-sided p of the claim's direction; TOST's p), ``n`` (the seeds
    the test used: pairs, or n_a + n_b), all None where nothing was decided; ``test``: the test that
    decided (:attr:`pcnn_explore.verdicts.Verdict.test`, or the claim's); ``method`` and ``sentence``:
    its words; ``values``, ``values_b``, ``seeds``, ``control``: the per-seed values it was decided on
    (line a, line b, their seed ids, the positive control's; NaN as None), in the order given, which a
    seeded Monte Carlo p depends on; ``detail``: what the notebook added to a sentence no test makes (11's
    episode); ``intervals``: each line's interval where the test has them; ``draws`` and ``mc_error``: a
    Monte Carlo p's draws and standard error (0: exact); ``readings``: (reading, decision) of a claim
    decided under each reading of the bonus scale (07-10), or under each of the PixelCNN's optimizer readings
    (:data:`OPTIMIZER_READINGS`, the word :data:`DEPENDS_ON_OPTIMIZER` where theirs differ).
    """

    claim: Claim
    word: str
    sentence: str
    test: str
    reason: str = ""
    why: str = ""
    estimate: float | None = None
    interval: tuple[float | None, float | None] = (None, None)
    p: float | None = None
    n: int | None = None
    method: str = ""
    level: float = 0.95
    values: tuple[float | None, ...] = ()
    values_b: tuple[float | None, ...] = ()
    seeds: tuple[int, ...] = ()
    control: tuple[float | None, ...] | None = None
    detail: str = ""
    intervals: tuple[tuple[float | None, float | None], ...] = ()
    draws: int = 0
    mc_error: float = 0.0
    readings: tuple[tuple[str, "Decision"], ...] = ()

    def __post_init__(self):
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (normalised once: a record round-trips exactly)
        set_("estimate", _number(self.estimate))
        set_("interval", _numbers(self.interval) if self.interval is not None else (None, None))
        set_("p", _number(self.p))
        set_("values", _numbers(self.values))
        set_("values_b", _numbers(self.values_b))
        set_("seeds", tuple(int(s) for s in self.seeds))
        set_("control", None if self.control is None else _numbers(self.control))
        set_("intervals", tuple(_numbers(i) for i in self.intervals))
        set_("readings", tuple((str(k), d) for k, d in self.readings))

    @property
    def name(self) -> str:
        return self.claim.name

    @property
    def kind(self) -> str:
        return self.claim.kind

    def to_record(self) -> dict[str, Any]:
        """The decision as plain JSON values: ``{"name", "kind", "claim": {...}, "word", "reason", "why",
        "estimate", "interval", "p", "n", "test", "method", "level", "sentence", "values", "values_b",
        "seeds", "control", "detail", "intervals", "draws", "mc_error", "readings"}`` (``readings``: a list
        of ``[reading, record]``)."""
        out: dict[str, Any] = {"name": self.claim.name, "kind": self.claim.kind, "claim": self.claim.to_record()}
        for f in dataclasses.fields(self):
            if f.name in ("claim", "readings"):
                continue
            v = getattr(self, f.name)
            out[f.name] = ([list(i) for i in v] if f.name == "intervals" else list(v) if isinstance(v, tuple) else v)
        out["readings"] = [[k, d.to_record()] for k, d in self.readings]
        return out

    @classmethod
    def from_record(cls, r: Mapping[str, Any]) -> "Decision":
        """The decision of :meth:`to_record`'s record; ValueError for a record of another shape."""
        if not isinstance(r, Mapping) or not isinstance(r.get("claim"), Mapping):
            raise ValueError(f"a claims record must be a mapping with its claim, got {str(r)[:80]!r}")
        names = {f.name for f in dataclasses.fields(cls)} - {"claim", "readings"}
        kw = {k: r[k] for k in names if k in r}
        for k in ("interval", "values", "values_b", "seeds"):
            if k in kw:
                kw[k] = tuple(kw[k] or ())
        if kw.get("control") is not None:
            kw["control"] = tuple(kw["control"])
        kw["intervals"] = tuple(tuple(i) for i in r.get("intervals") or ())
        readings = tuple((str(k), cls.from_record(d)) for k, d in r.get("readings") or ())
        return cls(claim=Claim.from_record(r["claim"]), readings=readings, **kw)
