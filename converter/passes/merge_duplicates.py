"""Common-subexpression elimination: two ops of the same type, options and inputs compute the
same thing; the later one's readers read the earlier one's outputs instead -- except ops
with state (variables, CALL_ONCE, control flow) or a variable operand: two READ_VARIABLEs of
one handle differ when an ASSIGN_VARIABLE runs between them.
"""

from __future__ import annotations

from ...interpreter.kernels import OPS
from ..ir import Graph


def _key(op):
    return (op.type, op.custom_code, tuple(id(t) for t in op.inputs),
            repr(sorted(op.options.items())))


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
