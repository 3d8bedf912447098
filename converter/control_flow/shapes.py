"""Shapes through WHILE / IF subgraphs, including loop-carried tensors whose shape changes.

edgelite's interpreter prepares one op at a time for the converter (shape_inference.py);
it cannot run a WHILE, so a graph calling subgraphs is inferred op by op here:
  - IF: each branch is inferred with the op's arguments' shapes; a result's dim on which
    the branches disagree is dynamic.
  - WHILE: the body is inferred with the loop variables' shapes; a body result whose dim
    differs from the variable's makes that dim dynamic, and the body is inferred again with
    it, until nothing changes (each round makes at least one more dim dynamic, so at most
    1 + the total rank rounds). A rank change is refused, as TFLite's WHILE does.
A dynamic dim is -1 in `shape_signature` (TFLite's "unknown"), with the first iteration's
value in `shape`; LiteRT resizes such tensors at run time. An op reading a dynamic tensor is
prepared twice, with the dynamic dims at their value and one larger, and its output dims
that move with them become dynamic too.
"""

from __future__ import annotations

from edgelite.errors import EdgeliteError, ShapeError
from edgelite.names import quoted
from ..ir import PSEUDO_OPS, Graph, Op, Tensor
from .. import value_shapes


def infer_graph(graph: Graph, single_op, strict: bool, static: frozenset = frozenset()) -> None:
    """Shapes of every op of `graph` in order. `single_op(op)` prepares one builtin op;
    `static`: ids of tensors whose -1 dims are user-facing (the model's inputs), not loop
    dynamics. strict=False leaves what cannot be inferred yet (inputs unknown) as it is."""
    for op in graph.ops:
        if any(t is not None and t.shape is None for t in op.inputs):
            if strict:
                unknown = next(t for t in op.inputs if t is not None and t.shape is None)
                raise EdgeliteError(f"internal: {op.type} ({quoted(op.name)}) reads "
                                    f"{quoted(unknown.name)}, whose shape is unknown")
            continue
        try:
            infer_op(op, single_op, strict, static)
        except EdgeliteError:
            if strict:
                raise


def infer_op(op: Op, single_op, strict: bool, static: frozenset = frozenset()) -> None:
    if op.type == "WHILE":
        _infer_while(op, single_op, strict, static)
    elif op.type == "IF":
        _infer_if(op, single_op, strict, static)
    elif op.type == "CUSTOM":
        for t in op.outputs:
            if t.shape is None:
                t.shape = op.inputs[0].shape if op.inputs and op.inputs[0] else ()
    elif op.type in PSEUDO_OPS:
        _infer_pseudo(op, static)
    else:
        _infer_builtin(op, single_op, static)


def signature(t: Tensor, static: frozenset = frozenset()) -> tuple[int, ...]:
    if t.shape_signature is None or id(t) in static:
        return tuple(t.shape)
    return tuple(t.shape_signature)


def _set(t: Tensor, shape, sig) -> None:
    t.shape = tuple(int(d) for d in shape)
    t.shape_signature = tuple(int(d) for d in sig) if -1 in sig else None


def _infer_builtin(op: Op, single_op, static: frozenset) -> None:
    dynamic = [t for t in op.inputs if t is not None and not t.is_const
               and -1 in signature(t, static)]
    varying = [t for t in op.inputs if t is not None and value_shapes.moving(t)]
    value_shapes.use(op, bumped=False)  # shape operands computed from -1 dims (WHERE's)
    _prepare_fitting(op, single_op, dynamic)
    values, bumped_values = value_shapes.taken(), None
    first = [t.shape for t in op.outputs]
    own = [t.shape_signature for t in op.outputs]  # -1 where only values tell the dim
    sigs = [f if o is None else o for f, o in zip(first, own)]
    if dynamic or varying:
        saved = [(t, t.shape) for t in dynamic]
        for t in dynamic:
            t.shape = tuple(d + 1 if s == -1 else d for d, s in zip(t.shape, t.shape_signature))
        try:
            value_shapes.use(op, bumped=True)
            single_op(op)
            bumped_values = value_shapes.taken()
            second = [t.shape for t in op.outputs]
            sigs = [tuple(-1 if a != b or g == -1 else a for a, b, g in zip(f, s, o))
                    if len(f) == len(s) == len(o) else o for f, s, o in zip(first, second, sigs)]
        except EdgeliteError:
            pass  # the bumped shapes do not fit together: take the dims as static
        finally:
            for t, shape in saved:
                t.shape = shape
    for t, shape, sig in zip(op.outputs, first, sigs):
        _set(t, shape, sig)
    value_shapes.settle(op, values, bumped_values)
    value_shapes.mark(op, own, dynamic + varying)


# Sizes tried for dims only values tell when their representative size (1) does not fit
# the op (a RESHAPE of WHERE-selected rows back to a static shape).
_FIT_SIZES = range(2, 257)


def _prepare_fitting(op: Op, single_op, dynamic: list) -> None:
    """single_op(op); if it refuses the inputs' representative shapes, the -1 dims take
    the first size it accepts (the same for all: at run time the values decide)."""
    try:
        single_op(op)
        return
    except EdgeliteError:
        if not dynamic:
            raise
    saved = [(t, t.shape) for t in dynamic]
    try:
        for size in _FIT_SIZES:
            for t, shape in saved:
                t.shape = tuple(size if s == -1 else d for d, s in zip(shape,
                                                                      t.shape_signature))
            try:
                single_op(op)
                return
            except EdgeliteError:
                continue
    finally:
        for t, shape in saved:
            t.shape = shape
    single_op(op)  # none fits: the original error


def _infer_pseudo(op: Op, static: frozenset) -> None:
    if op.type == "IDENTITY":
        src, out = op.inputs[0], op.outputs[0]
        _set(out, src.shape, signature(src, static))
        return
    a, b = op.inputs[0], op.inputs[1]  # MATMUL: rank-2 a @ b, either side transposed
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise ShapeError(f"MatMul {quoted(op.name)} needs rank-2 operands")
    sa, sb = signature(a, static), signature(b, static)
    m = 1 if op.options.get("transpose_a") else 0
    n = 0 if op.options.get("transpose_b") else 1
    _set(op.outputs[0], (a.shape[m], b.shape[n]), (sa[m], sb[n]))


def _bind(graph: Graph, shapes, sigs) -> None:
    for t, shape, sig in zip(graph.inputs, shapes, sigs):
        _set(t, shape, sig)


def _infer_while(op: Op, single_op, strict: bool, static: frozenset) -> None:
    cond, body = op.subgraphs["cond"], op.subgraphs["body"]
    shapes = [tuple(t.shape) for t in op.inputs]
    sigs = [signature(t, static) for t in op.inputs]
    for _ in range(2 + sum(len(s) for s in shapes)):
        _bind(body, shapes, sigs)
        infer_graph(body, single_op, strict)
        widened = []
        for t, shape, sig in zip(body.outputs, shapes, sigs):
            if t.shape is None:
                widened.append(sig)
                continue
            if len(t.shape) != len(shape):
                raise ShapeError(f"WHILE {quoted(op.name)}: loop variable {quoted(t.name)} "
                                 f"changes rank ({list(shape)} -> {list(t.shape)}) between "
                                 "iterations; TFLite's WHILE keeps ranks")
            out_sig = signature(t)
            widened.append(tuple(-1 if s == -1 or o == -1 or d != s_val else s
                                 for s, o, d, s_val in zip(sig, out_sig, t.shape, shape)))
        if widened == sigs:
            break
        sigs = widened
    _bind(cond, shapes, sigs)
    infer_graph(cond, single_op, strict)
    for t, shape, sig in zip(op.outputs, shapes, sigs):
        _set(t, shape, sig)


def _infer_if(op: Op, single_op, strict: bool, static: frozenset) -> None:
    args = op.inputs[1:]
    shapes = [tuple(t.shape) for t in args]
    sigs = [signature(t, static) for t in args]
    branches = (op.subgraphs["then"], op.subgraphs["else"])
    for g in branches:
        _bind(g, shapes, sigs)
        infer_graph(g, single_op, strict)
    for out, a, b in zip(op.outputs, *(g.outputs for g in branches)):
        if a.shape is None or b.shape is None:
            continue
        if len(a.shape) != len(b.shape):
            raise ShapeError(f"IF {quoted(op.name)}: the branches return {quoted(a.name)} and "
                             f"{quoted(b.name)} with ranks {len(a.shape)} and {len(b.shape)}")
        sa, sb = signature(a), signature(b)
        _set(out, a.shape, tuple(-1 if x != y or -1 in (p, q) else x
                                 for x, y, p, q in zip(a.shape, b.shape, sa, sb)))
