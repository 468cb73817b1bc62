"""``pcnn_explore.reproduce`` is :mod:`pcnn_explore.report.reproduce` (``pcnn-explore reproduce``),
kept at its old import path: importing this module gives that module itself, so
``from pcnn_explore.reproduce import reproduce`` and attributes set on either name are the same."""
import sys

from pcnn_explore.report import reproduce as _reproduce

sys.modules[__name__] = _reproduce
