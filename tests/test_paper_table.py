"""``data/paper_hard_games.csv`` holds every cell of the paper's hard-exploration table.

The reference is a verbatim copy of the table's LaTeX source in ``tests/data/``, so the check runs
in any clone (it does not need the paper beside the repository).
"""
from __future__ import annotations

import re
from pathlib import Path

from pcnn_explore.experiments.agents import agent_figures

TABLE_TEX = Path(__file__).resolve().parent / "data" / "paper_hard_games_table.tex"


def _tex_rows() -> dict[str, list[float]]:
    tex = TABLE_TEX.read_text()
    body = tex[tex.index(r"& DQN & A3C-CTS & Prior. Duel & DQN-CTS & DQN-PixelCNN"):tex.index(r"\label{table:hard_games_results}")]
    rows = {}
    for line in body.splitlines():
        m = re.match(r"\s*\\textsc\{(.+?)\}\s*&(.*)\\\\", line)
        if m:
            cells = [re.sub(r"\\textbf\{(.*?)\}", r"\1", c).replace(",", "").strip() for c in m.group(2).split("&")]
            rows[m.group(1).replace(r"\ ", " ")] = [float(c) for c in cells]
    return rows


def test_paper_table_matches_every_cell_of_the_tex():
    rows = _tex_rows()
    t = agent_figures.load_paper_table()
    assert len(rows) == 7 == len(t)
    assert list(t) == list(rows)
    for game, cells in rows.items():
        assert [t[game][a] for a in agent_figures.PAPER_AGENTS] == cells, game
