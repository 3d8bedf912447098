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


def dot(ctx: LayerCtx) -> KTensor:
    """keras Dot of two [B, n] or [B, T, n] tensors over their feature / step axes
    (`normalize`: l2-normalized first): BatchMatMulV2, or a product summed for rank 2."""
    inputs = ctx.inputs()
    if len(inputs) != 2 or inputs[0].rank != inputs[1].rank or inputs[0].rank not in (2, 3):
        ctx.fail(f"takes two rank-2 or rank-3 tensors, got {[list(t.shape) for t in inputs]}")
    rank = inputs[0].rank
    axes = ctx.cfg("axes", -1)
    axes = [axes, axes] if isinstance(axes, int) else list(axes)
    a_ax, b_ax = (int(v) % rank for v in axes)
    if 0 in (a_ax, b_ax):
        ctx.fail(f"dot over axes {axes}: the batch axis is not one")
    refs = [t.ref for t in inputs]
    if ctx.cfg("normalize", False):
        refs = [_l2_normalize(ctx, r, ax, k) for k, (r, ax) in enumerate(zip(refs, (a_ax, b_ax)))]
    a, b = inputs
    if rank == 2:
        y = ctx.op("Sum", "Sum", [ctx.op("mul", "Mul", refs), ctx.int_const("axis", [1])],
                   keep_dims=True, Tidx=np.dtype(np.int32))
        return KTensor(y, (a.shape[0], 1), a.dtype)
    y = ctx.op("MatMul", "BatchMatMulV2", refs, adj_x=a_ax == 1, adj_y=b_ax == 2)
    shape = (a.shape[0], a.shape[3 - a_ax], b.shape[3 - b_ax])
    return KTensor(y, shape, a.dtype)


def _l2_normalize(ctx: LayerCtx, ref: str, axis: int, k: int) -> str:
    """x / sqrt(max(sum(x^2, axis), 1e-12)) (tf.math.l2_normalize)."""
    sq = ctx.op(f"l2_{k}/Sum", "Sum", [ctx.op(f"l2_{k}/Square", "Square", [ref]),
                                       ctx.int_const(f"l2_{k}/axis", [axis])],
                keep_dims=True, Tidx=np.dtype(np.int32))
    inv = ctx.op(f"l2_{k}/Rsqrt", "Rsqrt", [ctx.op(f"l2_{k}/Maximum", "Maximum", [
        sq, ctx.g.const(f"{ctx.prefix}/l2_{k}/epsilon", np.float32(1e-12))])])
    return ctx.op(f"l2_{k}/mul", "Mul", [ref, inv])


RULES = {
    "Dot": dot,
    "Add": elementwise("AddV2"),
    "Subtract": elementwise("Sub"),
    "Multiply": elementwise("Mul"),
    "Average": elementwise("AddV2", scale_by_count=True),
    "Maximum": elementwise("Maximum"),
    "Minimum": elementwise("Minimum"),
    "Concatenate": concatenate,
}
