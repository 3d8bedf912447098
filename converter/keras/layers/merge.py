"""Merge layers: Add, Subtract, Multiply, Average, Maximum, Minimum (a chain of binary ops
over the inputs, broadcasting as numpy) and Concatenate."""

from __future__ import annotations

import numpy as np

from ..context import KTensor, LayerCtx


def _broadcast_shape(ctx: LayerCtx, shapes) -> tuple:
    rank = max(len(s) for s in shapes)
    out = []
    for dims in zip(*[(1,) * (rank - len(s)) + tuple(s) for s in shapes]):
        known = {d for d in dims if d not in (None, 1)}
        if len(known) > 1:
            ctx.fail(f"input shapes {[list(s) for s in shapes]} do not broadcast")
        out.append(known.pop() if known else (None if None in dims else 1))
    return tuple(out)


def _mask(ctx: LayerCtx, inputs) -> KTensor | None:
    """The merged mask (Merge.compute_mask): the inputs' masks ORed by Keras 3, ANDed by
    Keras 2; one mask (or the same one on every input) passes as it is."""
    masks = list({t.mask.ref: t.mask for t in inputs if t.mask is not None}.values())
    if len(masks) <= 1:
        return masks[0] if masks else None
    op_type = "LogicalAnd" if ctx.keras2 else "LogicalOr"
    ref = masks[0].ref
    for k, m in enumerate(masks[1:]):
        ref = ctx.op(f"mask_{k}", op_type, [ref, m.ref], dtype=None)
    return KTensor(ref, masks[0].shape, masks[0].dtype)


def elementwise(op_type: str, scale_by_count: bool = False):
    def rule(ctx: LayerCtx) -> KTensor:
        inputs = ctx.inputs()
        if len(inputs) < 2 or (op_type == "Sub" and len(inputs) != 2):
            ctx.fail(f"called on {len(inputs)} tensors")
        y = inputs[0].ref
        for k, t in enumerate(inputs[1:]):
            y = ctx.op(op_type if k == 0 else f"{op_type}_{k}", op_type, [y, t.ref])
        if scale_by_count:
            y = ctx.op("truediv", "RealDiv",
                       [y, ctx.g.const(f"{ctx.prefix}/count", np.float32(len(inputs)))])
        shape = _broadcast_shape(ctx, [t.shape for t in inputs])
        return KTensor(y, shape, inputs[0].dtype, _mask(ctx, inputs))
    return rule


def concatenate(ctx: LayerCtx) -> KTensor:
    inputs = ctx.inputs()
    if not inputs:
        ctx.fail("called on no tensors")
    rank = inputs[0].rank
    axis = int(ctx.cfg("axis", -1)) % rank
    if axis == 0 or any(t.rank != rank for t in inputs):
        ctx.fail(f"concatenates shapes {[list(t.shape) for t in inputs]} on axis {axis}")
    sizes = [t.shape[axis] for t in inputs]
    shape = list(inputs[0].shape)
    shape[axis] = None if None in sizes else sum(sizes)
    y = ctx.op("concat", "ConcatV2",
               [t.ref for t in inputs] + [ctx.int_const("axis", axis)],
               N=len(inputs), Tidx=np.dtype(np.int32))
    return KTensor(y, tuple(shape), inputs[0].dtype, _mask(ctx, inputs))


RULES = {
    "Add": elementwise("AddV2"),
    "Subtract": elementwise("Sub"),
    "Multiply": elementwise("Mul"),
    "Average": elementwise("AddV2", scale_by_count=True),
    "Maximum": elementwise("Maximum"),
    "Minimum": elementwise("Minimum"),
    "Concatenate": concatenate,
}
