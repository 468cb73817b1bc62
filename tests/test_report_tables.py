"""Every value of a notebook's summary is written as a reader reads it (never JSON, never Python's
repr), and the paper's entries stand beside this run's of the same name, nested groups included."""
from __future__ import annotations

from pcnn_explore.report.tables import comparison, value_html

DASH = '<span class="none">&ndash;</span>'


def test_plain_values():
    assert [value_html(v) for v in (True, False, None, 12000, 0.123456, 2.5e-06, "a < b")] == \
        ["yes", "no", DASH, "12,000", "0.1235", "2.5e-06", "a &lt; b"]


def test_lists_are_items_never_brackets():
    assert value_html([0, 2, 0.5]) == "0, 2, 0.5"
    assert value_html([None, True]) == f"{DASH}, yes"
    assert value_html([]) == "none" and value_html({}) == "none"
    sentence = "a sentence long enough to stand on a line of its own"
    assert value_html(["short", sentence]) == f'<ul class="items"><li>short</li><li>{sentence}</li></ul>'
    # records: one column per field (their union, in order), a row each
    assert value_html([{"name": "a", "holds": True}, {"name": "b", "n": 3}]) == (
        '<table class="sub"><tr><th>name</th><th>holds</th><th>n</th></tr>'
        "<tr><td>a</td><td>yes</td><td></td></tr><tr><td>b</td><td></td><td>3</td></tr></table>")
    assert value_html([[1, 2], [3, None]]) == (
        f'<table class="sub"><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>{DASH}</td></tr></table>')


def test_dicts_are_tables():
    assert value_html({"a": 1, "b": {"c": [1, 2]}}) == (
        '<table class="sub"><tr><td>a</td><td>1</td></tr><tr><td>b</td><td>'
        '<table class="sub"><tr><td>c</td><td>1, 2</td></tr></table></td></tr></table>')
    # a dict of records: a row per name, a column per field
    assert value_html({"5": {"dqn": "1 of 1", "cts": "0 of 1"}}) == (
        '<table class="sub"><tr><th></th><th>dqn</th><th>cts</th></tr><tr><td>5</td><td>1 of 1</td><td>0 of 1</td></tr></table>')


def test_comparison_lines_up_the_papers_names_with_this_runs():
    html = comparison({"loss_nats": 2.5, "seeds": [0, 2], "verdict": "agrees: x", "goals": {"coverage": {"holds": False}}},
                      {"loss_nats": "about 2", "verdict": "the claim", "goals": {"coverage": {"holds": "yes, 2x"}},
                       "mmc_beta": 0.1})
    head = "<tr><th>quantity</th><th>this run</th><th>paper</th></tr>"
    assert html == (f'<table class="fig">{head}<tr><td>loss_nats</td><td>2.5</td><td>about 2</td></tr>'
                    "<tr><td>seeds</td><td>0, 2</td><td></td></tr><tr><td>mmc_beta</td><td></td><td>0.1</td></tr></table>"
                    f'<h4 class="group">goals / coverage</h4><table class="fig">{head}'
                    "<tr><td>holds</td><td>no</td><td>yes, 2x</td></tr></table>")
    # a group of records without the paper's: one table; the paper's sentence on the group above it
    html = comparison({"detail": {"5": {"dqn": 1, "cts": 0}, "10": {"dqn": 0}}}, {"detail": "bonus agents ahead"})
    assert html == ('<h4 class="group">detail</h4><p class="paper">the paper: bonus agents ahead</p>'
                    '<table class="sub"><tr><th>name</th><th>dqn</th><th>cts</th></tr>'
                    "<tr><td>5</td><td>1</td><td>0</td></tr><tr><td>10</td><td>0</td><td></td></tr></table>")
    assert comparison({"verdict": "agrees"}, {"verdict": "claim"}) == ""
