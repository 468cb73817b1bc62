"""tests/golden_logs.py: how a run's log is compared with a stored one (integer columns exact, floats as
floats within the units of their last written digit that the helper derives)."""
from __future__ import annotations

import pytest

from golden_logs import assert_logs_agree, last_digit_unit

HEAD = ["step", "episode", "return", "length", "complete", "intrinsic_mean", "td_loss", "wall_seconds"]
ROW = ["153", "1", "0", "100", "1", "0.154725", "0.138712", "0.33"]


def _log(**changed) -> list[list[str]]:
    row = list(ROW)
    for name, value in changed.items():
        row[HEAD.index(name)] = value
    return [HEAD, ["53", "0", "0.523", "53", "1", "0.638907", "nan", "0.1"], row]


def test_the_unit_of_the_last_written_digit():
    assert last_digit_unit("0.138712") == pytest.approx(1e-6)
    assert last_digit_unit("2.6794e-05") == pytest.approx(1e-10)  # .6g drops the trailing zero: 2.67940e-05
    assert last_digit_unit("84.9033") == pytest.approx(1e-4)
    assert last_digit_unit("0") == 0.0


def test_floats_agree_within_their_units_and_every_other_column_exactly():
    want = _log()
    worst = assert_logs_agree(_log(td_loss="0.138714", intrinsic_mean="0.154726", wall_seconds="9"), want)
    assert worst == {"td_loss": pytest.approx(2.0), "intrinsic_mean": pytest.approx(1.0)}
    assert assert_logs_agree(want, want) == {"intrinsic_mean": 0.0, "td_loss": 0.0}
    for bad in ({"td_loss": "0.138715"},  # 3 units
                {"intrinsic_mean": "0.154727"},  # 2 units of a float64 sum
                {"step": "154"}, {"return": "0.0"}, {"length": "101"}):  # exact as written, "0" is not "0.0"
        with pytest.raises(AssertionError, match=f"column {next(iter(bad))}, row 2"):
            assert_logs_agree(_log(**bad), want)
    nan_first = _log()
    nan_first[1][HEAD.index("td_loss")] = "0.5"
    with pytest.raises(AssertionError, match="column td_loss, row 1"):  # a number where the stored log has nan
        assert_logs_agree(nan_first, want)


def test_a_log_of_other_length_or_columns_is_refused():
    want = _log()
    with pytest.raises(AssertionError, match="1 rows against the stored log's 2"):
        assert_logs_agree(want[:2], want)
    with pytest.raises(AssertionError, match=r"columns \['td_loss'\] of the stored log are not in this one"):
        assert_logs_agree([r[:6] + r[7:] for r in want], want)
    odd = [HEAD[:-1] + ["mystery"], *(r for r in want[1:])]
    with pytest.raises(AssertionError, match="column 'mystery': say how it is compared"):
        assert_logs_agree(odd, odd)
