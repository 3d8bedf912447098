"""interpreter/views.py: the arrays tensor() hands out are counted while they or any slice
of them live, so the interpreter can refuse to move its memory under them (LiteRT's
_ensure_safe rule)."""

import gc

import numpy as np
import pytest

from edgelite.errors import InterpreterStateError
from edgelite.interpreter.views import ViewTracker


def test_a_view_shares_memory_and_is_held_while_it_or_a_slice_lives():
    tracker, arena = ViewTracker(), np.zeros(6, np.float32)
    view = tracker.hand_out(arena)
    assert np.shares_memory(view, arena)
    view[2] = 5.0
    assert arena[2] == 5.0  # writes reach the interpreter's buffer
    part = view[1:3]
    del view
    assert tracker.held()
    with pytest.raises(InterpreterStateError, match=r"^There is at least 1 reference to "
                                                    r"internal data .*: invoke\(\) would"):
        tracker.check("invoke()")
    del part
    assert not tracker.held()
    tracker.check("invoke()")  # nothing held: no error


def test_a_view_in_a_reference_cycle_is_not_held():
    tracker = ViewTracker()
    cycle = [tracker.hand_out(np.zeros(3, np.int8))]
    cycle.append(cycle)
    del cycle
    assert not tracker.held()  # held() collects the cycle first
    gc.collect()


def test_object_arrays_are_returned_as_they_are():
    tracker, strings = ViewTracker(), np.array([b"a", b"bc"], dtype=object)
    assert tracker.hand_out(strings) is strings
    assert not tracker.held()
