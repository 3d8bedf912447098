"""Shapes after ops whose output shape only values tell (WHERE, UNIQUE, segment reductions).

The converter infers shapes by preparing each op in edgelite's interpreter
(shape_inference.py). Behind a WHERE the row count is a value: such a dim has shape 1 here
and -1 in its signature (TFLite's "unknown", written to the file), and the ops after it
see it move by preparing them twice (control_flow/shapes.py). Graphs then compute shapes
from those tensors -- SHAPE, STRIDED_SLICE, PACK, CONCATENATION feeding a RESHAPE or a
FILL (tf.nn.embedding_lookup_sparse does) -- whose values are not constants, so those ops
could not be prepared at all.

A small integer tensor computed from constants and shapes gets a *representative value*
here: its value with every -1 dim at its shape (1), and its value with those dims one
larger. Preparing the reader once with each (as constants) gives its output shape and
which of its dims move: the same two-pass probe shapes.py runs for dynamic dims. Nothing
is folded: the file keeps computing these values at run time.
"""

from __future__ import annotations

import weakref

import numpy as np

from .ir import Op, Tensor

MAX_ELEMENTS = 64  # shape vectors and scalars, not data
# (value, value with the moving dims one larger), per computed small int tensor
REPS: "weakref.WeakKeyDictionary[Tensor, tuple[np.ndarray, np.ndarray]]" = \
    weakref.WeakKeyDictionary()
# Tensors whose -1 dims come from values (not from a dynamic dim of the model's inputs,
# which the converter fixes): their SHAPE is never a constant (passes/fold_shapes.py).
VALUE_DIMS: "weakref.WeakSet[Tensor]" = weakref.WeakSet()
_now: "weakref.WeakKeyDictionary[Tensor, np.ndarray]" = weakref.WeakKeyDictionary()
_current: "weakref.WeakKeyDictionary[Tensor, np.ndarray]" = weakref.WeakKeyDictionary()


def moving(t: Tensor) -> bool:
    """t has a representative value that changes with the moving dims."""
    rep = REPS.get(t)
    return rep is not None and (rep[0].shape != rep[1].shape or not np.array_equal(*rep))


def value(t: Tensor, bumped: bool) -> np.ndarray | None:
    rep = REPS.get(t)
    return None if rep is None else rep[1 if bumped else 0]


def small_int(t: Tensor) -> bool:
    return np.dtype(t.dtype).kind in "iu" and t.shape is not None and \
        int(np.prod(t.shape)) <= MAX_ELEMENTS


def with_values(op: Op) -> Op:
    """A copy of op whose inputs with a current representative value are constants."""
    copy = op.copy()
    for i, t in enumerate(copy.inputs):
        v = None if t is None or t.is_const else _current.get(t)
        if v is not None:
            copy.inputs[i] = Tensor(t.name, t.dtype, tuple(v.shape), v)
    return copy


def note(op: Op, evaluate) -> None:
    """After op (a with_values copy) was prepared: the values of its small int outputs, if
    every input is a constant."""
    for t in op.outputs:
        _now.pop(t, None)
    if not all(small_int(t) for t in op.outputs):
        return
    if op.type == "SHAPE":
        x = op.inputs[0]
        _now[op.outputs[0]] = np.asarray(x.shape, np.dtype(op.outputs[0].dtype))
        return
    if op.type in ("RANK",):
        _now[op.outputs[0]] = np.asarray(len(op.inputs[0].shape), np.int32)
        return
    if not op.inputs or not all(t is None or t.is_const for t in op.inputs):
        return
    try:
        values = evaluate(op)
    except Exception:  # noqa: BLE001 -- no value: the reader is prepared at run time only
        return
    for t, v in zip(op.outputs, values):
        _now[t] = np.asarray(v)


def use(op: Op, bumped: bool) -> None:
    """Make the representative values of op's inputs current for its next prepare."""
    _current.clear()
    for t in op.inputs:
        if t is not None and not t.is_const:
            v = value(t, bumped)
            if v is not None:
                _current[t] = v


def current(t: Tensor) -> np.ndarray | None:
    return _current.get(t)


def settle(op: Op, first: dict, second: dict | None) -> None:
    """Record the outputs' values from the plain prepare and the bumped one."""
    for t in op.outputs:
        a = first.get(t)
        if a is None:
            REPS.pop(t, None)
            continue
        b = second.get(t) if second is not None else None
        REPS[t] = (a, a if b is None else b)


def taken() -> dict:
    """The outputs' values noted by the last prepare."""
    return dict(_now)


def mark(op: Op, own: list, moved_by: list) -> None:
    """After op's shapes were set: its outputs with a -1 dim have it from values when the
    op itself said so (own signatures) or an input moving it has one from values."""
    from_values = any(t in VALUE_DIMS for t in moved_by)
    for t, sig in zip(op.outputs, own):
        if t.shape_signature is not None and -1 in t.shape_signature and \
                (from_values or (sig is not None and -1 in sig)):
            VALUE_DIMS.add(t)
        else:
            VALUE_DIMS.discard(t)
