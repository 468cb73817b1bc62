"""The lines of the deep-sea agent notebooks (07-10): :mod:`pcnn_explore.run.lines`, where
``pcnn-explore train --line`` and ``sweep --lines`` find them too; every name is re-exported here."""
from pcnn_explore.run.lines import *  # noqa: F401,F403
from pcnn_explore.run.lines import __all__  # noqa: F401
