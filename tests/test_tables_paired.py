"""The tables' paired comparison of two rows over the data sets (``eadct.tables._paired``)."""

from __future__ import annotations

import numpy as np
import pytest

from eadct.tables._paired import compare, effect, paired_differences


def test_paired_comparison():
    c = compare([0.9, 0.8, 0.7, 0.6, 0.5, 0.4], [0.8, 0.8, 0.6, 0.5, 0.4, 0.3], higher_is_better=True)
    assert (c["wins"], c["ties"], c["losses"], c["n"]) == (5, 1, 0, 6)
    assert c["p"] == pytest.approx(0.0625)  # exact two-sided test, 5 positive differences
    # errors compare relative to their scale: 1000 -> 900 weighs as 1.0 -> 0.9
    np.testing.assert_allclose(paired_differences([900, 0.9], [1000, 1.0], False), [2 / 19, 2 / 19])
    assert compare([1.0], [0.5], True)["p"] is None
    # the effect: mean accuracy difference; for errors the geometric mean of the ratios
    assert effect([0.9, 0.5], [0.8, 0.6], True) == "+0.000"
    assert effect([0.9, 0.7], [0.8, 0.6], True) == "+0.100"
    assert effect([2.0, 50.0], [1.0, 200.0], False) == "x0.707"  # sqrt(2 * 0.25)
    assert effect([], [], True) == "n/a"
