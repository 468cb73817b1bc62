"""Repository-level pytest set-up, shared by tests/ and by nbval's run over notebooks/.

Notebooks executed by ``pytest --nbval-lax`` read their profile from PCNN_EXPLORE_PROFILE, so
every kernel the test session starts runs the fast ``smoke`` profile.
"""
import os

os.environ["PCNN_EXPLORE_PROFILE"] = "smoke"
