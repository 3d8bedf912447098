"""Sums of doubles that do not depend on the order or grouping of their terms.

A finite double is an integer multiple of 2^-1074 (the smallest subnormal), so a sum of
doubles is kept exactly as a Python integer count of that unit; reading it divides once
(int / int is correctly rounded in Python). Adding per-sample terms one by one, merging
per-shard sums in any order, or both, therefore gives the same double bit for bit -- which
is what lets compare's statistics from several processes or a Ray cluster equal a
single-process run's. Infinities and NaN are carried apart (their float sum is itself order
independent: inf + -inf is NaN whichever comes first).
"""

from __future__ import annotations

import math

_UNIT_BITS = 1074
_ONE = 1 << _UNIT_BITS


class ExactSum:
    """A running sum of doubles, exact (see module doc)."""

    __slots__ = ("units", "special")

    def __init__(self) -> None:
        self.units = 0        # the finite terms' sum, in units of 2^-1074
        self.special = 0.0    # the sum of the non-finite terms (0.0 when there are none)

    def add(self, x: float) -> None:
        try:
            num, den = x.as_integer_ratio()  # den is a power of two, at most 2^1074
        except (OverflowError, ValueError):  # inf, NaN
            self.special += float(x)
            return
        except AttributeError:               # a number without the method: as a double
            self.add(float(x))
            return
        self.units += num << (_UNIT_BITS + 1 - den.bit_length())  # num * (2^1074 / den)

    def merge(self, other: "ExactSum") -> None:
        self.units += other.units
        self.special += other.special

    @property
    def value(self) -> float:
        if self.special != 0.0 or math.isnan(self.special):
            return self.special
        try:
            return self.units / _ONE
        except OverflowError:
            return math.copysign(math.inf, self.units)

    def __getstate__(self):
        return self.units, self.special

    def __setstate__(self, state) -> None:
        self.units, self.special = state
