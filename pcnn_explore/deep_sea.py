"""DeepSea's old home: the env lives in :mod:`pcnn_explore.envs.deep_sea` (importing this module
registers the ``DeepSea-{N}-v0`` ids as before)."""
from pcnn_explore.envs.deep_sea import *  # noqa: F401,F403
from pcnn_explore.envs.deep_sea import __all__  # noqa: F401
