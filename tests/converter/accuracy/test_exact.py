"""ExactSum: sums of doubles independent of the order and grouping of their terms."""

import math
import random

import numpy as np

from edgelite.converter.accuracy.exact import ExactSum


def test_exact_sum_does_not_depend_on_order_or_grouping():
    rng = np.random.default_rng(0)
    terms = list(rng.standard_normal(2000) * 10.0 ** rng.integers(-30, 30, 2000))
    whole = ExactSum()
    for t in terms:
        whole.add(t)
    assert whole.value == math.fsum(terms)  # the correctly rounded sum
    random.Random(1).shuffle(terms)
    left, right = ExactSum(), ExactSum()
    for t in terms[:700]:
        left.add(t)
    for t in terms[700:]:
        right.add(t)
    right.merge(left)
    assert right.value == whole.value
    odd = ExactSum()
    for t in (1.0, math.inf, 2.0):
        odd.add(t)
    assert odd.value == math.inf
    odd.add(-math.inf)
    assert math.isnan(odd.value)


def test_any_number_type_adds_its_double_value():
    import numpy as np
    from fractions import Fraction
    values = [0.1, np.float32(0.1), np.float64(-2.5e-310), 3, np.int64(-7), 5e-324,
              np.float16(0.3), 1e308, -1e308, True]
    s = ExactSum()
    for v in values:
        s.add(v)
    assert s.value == float(sum(Fraction(float(v)) for v in values))
    s.add(np.float64("nan"))
    assert math.isnan(s.value)
