"""Common-subexpression elimination: two ops of the same type, options and inputs compute the
same thing; the later one's readers read the earlier one's outputs instead -- except ops
with state (variables, CALL_ONCE, control flow) or a variable operand: two READ_VARIABLEs of
one handle differ when an ASSIGN_VARIABLE runs between them.
"""

from __future__ import annotations

from enum import Enum

import numpy as np

from ...interpreter.kernels import OPS
from ..ir import Graph


# Option values that are their own exact, hashable key (with their type: True != 1 here).
_PLAIN = (int, str, bool, bytes, type(None))


def _frozen(value):
    """A hashable, exact stand-in for an option value: arrays by dtype, shape and bytes (their
    repr abbreviates large arrays with '...', so two different ones could compare equal)."""
    if type(value) in _PLAIN or isinstance(value, Enum):  # (most options: no repr made)
        return (type(value).__name__, value)
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_frozen(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _frozen(v)) for k, v in value.items())))
    if isinstance(value, (float, np.floating)):
        return ("float", np.float64(value).tobytes())  # NaN options equal, -0.0 != 0.0
    return (type(value).__name__, repr(value))


def _key(op):
    return (op.type, op.custom_code, tuple(id(t) for t in op.inputs), _frozen(op.options))


def _has_state(op) -> bool:
    record = OPS.get(op.type)
    return (record is not None and record.stateful) \
        or any(t is not None and t.is_variable for t in op.inputs)


def run(graph: Graph) -> int:
    n = 0
    seen = {}
    for op in list(graph.ops):
        if op.type == "CUSTOM" or op.subgraphs or _has_state(op):
            continue  # a custom kernel may have side effects; subgraphs are not compared
        first = seen.setdefault(_key(op), op)
        if first is op or any(graph.is_output(t) for t in op.outputs):
            continue
        graph.remove_op(op)
        for old, new in zip(op.outputs, first.outputs):
            graph.replace_uses(old, new)
        n += 1
    return n
