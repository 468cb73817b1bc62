"""Comparing a run's ``log.csv`` with one stored in ``tests/data``, made by the kit before (a golden log).

The rows are written with 6 significant digits (``f"{v:.6g}"``, :mod:`pcnn_explore.run.log`). What
another CPU may change, column by column, and so what is compared how:

* Exact, as written: the integer columns (``step``, ``episode``, ``length``, ``complete``,
  ``distinct_cells``, ``first_success_step``, ``density_updates``) and the columns that Python
  computes from the actions and the step count in scalar float64 arithmetic, which IEEE 754 makes
  the same on every CPU (``return``, ``epsilon``, ``epsilon_used``). A difference here means the
  runs took other actions: no tolerance hides that (a golden test whose integer column diverged
  under some kernel set would be shortened to the rows before it).
* Within one unit of the last written digit: the CTS model's numbers (``intrinsic_return``,
  ``intrinsic_mean``, ``prediction_gain_mean``), float64 sums and logarithms in numba, whose order
  and contraction may follow the CPU (a relative 1e-15 or so, far below the 6 written digits): the
  written values agree but where a value lies within that of a rounding boundary of its 6th digit,
  where they differ by one unit.
* Within ``TD_LOSS_UNITS`` units of the last written digit: ``td_loss``, the episode's mean of float32
  Huber losses from torch's kernels, whose rounding follows the CPU's vector width and feeds every
  later step of the run. Measured on an AMD EPYC with AVX-512 against the three logs of tests/data,
  under torch's AVX-512 kernels, its AVX2 ones (ATEN_CPU_CAPABILITY=avx2) and its portable ones with
  numba's generic CPU (ATEN_CPU_CAPABILITY=default NUMBA_CPU_NAME=generic): one unit at most, in at
  most 3 rows of a log (0.138713 against 0.138712 in the MiniGrid log, 0.00931367 against 0.00931368
  in DeepSea-8's, both with the portable kernels; 0.000823202 against 0.000823201 in the 0741ac3
  resume with every kernel set: the file was made on another CPU), 7.2e-6 relative at most; every
  other column exact. Two written values differ by their two roundings (half a unit each) plus the
  drift of the float32 values; two units allow a drift of one unit (1e-6 to 1e-5 relative), over
  twice the 4.3e-7 that 400 steps of the numpy and torch learn steps drift apart (tests/test_mlp_step.py).

Floats are compared as floats; "nan" only with "nan".
"""
from __future__ import annotations

import math

EXACT = ("step", "episode", "return", "length", "complete", "epsilon", "distinct_cells", "first_success_step",
         "density_updates", "epsilon_used")
#: columns compared within a number of units of their last written (6th significant) digit
WRITTEN_UNITS = {"intrinsic_return": 1, "intrinsic_mean": 1, "prediction_gain_mean": 1, "td_loss": 2}
TD_LOSS_UNITS = WRITTEN_UNITS["td_loss"]
DIGITS = 6


def last_digit_unit(written: str) -> float:
    """One unit of the last significant digit of a value written with ``.6g`` (0 for 0)."""
    value = abs(float(written))
    return 0.0 if value == 0 else 10.0 ** (math.floor(math.log10(value)) - DIGITS + 1)


def assert_logs_agree(got: list[list[str]], want: list[list[str]], skip: tuple[str, ...] = ("wall_seconds",)) -> dict:
    """Assert two logs (csv rows, the header first) agree column by column as the module docstring says:
    the same rows, every column of ``want`` but ``skip`` in ``got``, exact columns as written, the others
    as floats within their units. Returns {column: largest difference in units} for the float columns."""
    head_got, head_want = got[0], want[0]
    assert len(got) == len(want), f"{len(got) - 1} rows against the stored log's {len(want) - 1}"
    missing = [c for c in head_want if c not in head_got and c not in skip]
    assert not missing, f"columns {missing} of the stored log are not in this one"
    worst = {}
    for name in head_want:
        if name in skip:
            continue
        assert name in EXACT or name in WRITTEN_UNITS, f"column {name!r}: say how it is compared (golden_logs.py)"
        i, j = head_got.index(name), head_want.index(name)
        for row, (a, b) in enumerate(zip(got[1:], want[1:]), start=1):
            where = f"column {name}, row {row} (step {b[head_want.index('step')]}): {a!r} against the stored {b!r}"
            if name in EXACT:
                assert a[i] == b[j], where
                continue
            x, y = float(a[i]), float(b[j])
            if math.isnan(y):
                assert math.isnan(x), where
                continue
            unit = max(last_digit_unit(a[i]), last_digit_unit(b[j]))
            off = abs(x - y) / unit if unit else (0.0 if x == y else math.inf)
            assert off <= WRITTEN_UNITS[name] * (1 + 1e-9), f"{where}: {off:.3g} units of its last digit apart"
            worst[name] = max(worst.get(name, 0.0), 0.0 if x == y else off)
    return worst
