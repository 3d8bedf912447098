"""Patterns over WHILE loops shared by the loop passes (fuse_lstm_loop, prune_loop_vars):
counters, static trip counts, the item a reader takes from a list the loop wrote.

A counter is a loop variable that starts at constant 0 and that the body steps by 1 (an
ADD of constant 1, no fused activation); a cond built of LOGICAL_AND of `counter < N`
(N constant) lets the loop run min(N) times.
"""

from __future__ import annotations

import numpy as np

from ..ir import Activation, Graph, Op, Tensor
from .patterns import other_input


def ints(t: Tensor) -> list[int] | None:
    """A constant's values as a flat list of ints (None if not constant)."""
    return None if not t.is_const else [int(v) for v in np.asarray(t.data).reshape(-1)]


def int_constant(t: Tensor | None) -> int | None:
    """The value of a one-element integer constant, else None."""
    if t is None or not t.is_const or t.data.size != 1 or t.data.dtype.kind != "i":
        return None
    return int(t.data.reshape(-1)[0])


def counters(loop: Op, body: Graph) -> frozenset[int]:
    """Loop variables starting at constant 0 that the body steps by 1."""
    found = set()
    for k, (init, new) in enumerate(zip(loop.inputs, body.outputs)):
        add = None if new.is_const else body.producer(new)
        if add is None or add.type != "ADD" or \
                add.options.get("fused_activation_function", Activation.NONE) != Activation.NONE:
            continue
        if int_constant(init) == 0 and body.inputs[k] in add.inputs and \
                int_constant(other_input(add, body.inputs[k])) == 1:
            found.add(k)
    return frozenset(found)


def trip_count(cond: Graph, counting: frozenset[int]) -> int | None:
    """How many times a cond built of LOGICAL_AND and `counter < N` lets the loop run."""
    position = {id(t): k for k, t in enumerate(cond.inputs)}
    bounds, stack = [], [cond.outputs[0]]
    while stack:   # (a stack, not recursion: a file may nest the ANDs deeply)
        op = cond.producer(stack.pop())
        if op is not None and op.type == "LOGICAL_AND":
            stack.extend(op.inputs)
        elif op is not None and op.type == "LESS" and \
                position.get(id(op.inputs[0])) in counting and \
                int_constant(op.inputs[1]) is not None:
            bounds.append(int_constant(op.inputs[1]))
        else:
            return None
    return min(bounds)


def takes_item(op: Op, item: int, count: int) -> bool:
    """op is STRIDED_SLICE(list, [k], [..], [1]) taking item k = item (or k = item - count,
    counted from the end) of axis 0, axis 0 shrunk."""
    if op.type != "STRIDED_SLICE" or any(not t.is_const for t in op.inputs[1:4]):
        return False
    o = op.options
    begin, strides = ints(op.inputs[1]), ints(op.inputs[3])
    return len(begin) == 1 and strides == [1] and begin[0] in (item, item - count) and \
        o.get("shrink_axis_mask") == 1 and not o.get("begin_mask") and \
        not o.get("ellipsis_mask") and not o.get("new_axis_mask") and not o.get("offset")
