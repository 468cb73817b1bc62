"""The study layer: every notebook's claims, decided one way, recorded one way.

A :class:`Claim` is fixed before the runs (the paper's sentence and where it is, the quantity and its
unit, the test with its direction or margin, the lines compared, the design); :func:`decide` decides it
on per-seed values through :mod:`pcnn_explore.verdicts` and returns a :class:`Decision`, whose record
(:meth:`Decision.to_record`) is what metrics.json keeps (:func:`metrics_record`: ``schema``,
``claims``, ``word``, ``kit_word``). The report reads those records (:func:`decisions_of`) and
``--rerender`` decides each again from its stored values with the same function (:func:`decide_again`).

This package imports only :mod:`pcnn_explore.verdicts`, numpy and the standard library.
"""
from __future__ import annotations

from pcnn_explore.study.claim import KINDS, PAIRED, TESTS, TWO_LINES, Claim, Design
from pcnn_explore.study.decision import DEPENDS_ON_OPTIMIZER, DEPENDS_ON_SCALE, OPTIMIZER_READINGS, SCHEMA, Decision
from pcnn_explore.study.decide import (
    NO_VERDICT,
    READINGS,
    combine_readings,
    decide,
    decide_again,
    decisions_of,
    headline,
    join_readings,
    metrics_record,
    notebook_words,
)

__all__ = ["Claim", "Design", "Decision", "TESTS", "KINDS", "PAIRED", "TWO_LINES", "SCHEMA", "DEPENDS_ON_SCALE",
           "DEPENDS_ON_OPTIMIZER", "OPTIMIZER_READINGS", "NO_VERDICT", "READINGS", "decide", "decide_again",
           "combine_readings", "join_readings", "headline", "notebook_words", "metrics_record", "decisions_of"]
