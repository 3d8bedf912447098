"""Shape and layout ops: Reshape, Squeeze, ExpandDims, Transpose, Pack/Unpack, Split/SplitV,
Slice/StridedSlice, Tile, Pad/PadV2/MirrorPad, ConcatV2, Gather, Shape/Fill/Range.

Index-like constant operands (shapes, axes, begin/end/strides, paddings) are stored as int32,
the type TFLite's kernels read them as.
"""

from __future__ import annotations

import numpy as np

from ...interpreter.errors import UnsupportedOpError
from ..ir import Activation
from .context import LowerCtx, attr_dtype, attr_int, attr_ints, attr_str


def _index_input(ctx: LowerCtx, node, i: int, what: str):
    """Operand i as an int32 tensor (constants converted; computed ones passed through)."""
    t = ctx.input(node, i)
    if t.is_const:
        return ctx.const(node, what, np.asarray(t.data).astype(np.int32))
    return t


def reshape(ctx: LowerCtx, node) -> None:
    x, shape = ctx.input(node, 0), ctx.input(node, 1)
    options = {}
    if shape.is_const:  # TFLite's converter stores the target shape in the options too
        shape = ctx.const(node, "shape", shape.data.astype(np.int32).reshape(-1))
        options["new_shape"] = [int(d) for d in shape.data]
    ctx.emit("RESHAPE", node, [x, shape], options, dtype=x.dtype)


def squeeze(ctx: LowerCtx, node) -> None:
    ctx.emit("SQUEEZE", node, [ctx.input(node, 0)],
             dict(squeeze_dims=attr_ints(node, "squeeze_dims", [])))


def expand_dims(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    ctx.emit("EXPAND_DIMS", node, [x, _index_input(ctx, node, 1, "axis")], dtype=x.dtype)


def transpose(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    ctx.emit("TRANSPOSE", node, [x, _index_input(ctx, node, 1, "perm")], dtype=x.dtype)


def pack(ctx: LowerCtx, node) -> None:
    inputs = ctx.inputs(node)
    ctx.emit("PACK", node, inputs, dict(values_count=len(inputs), axis=attr_int(node, "axis", 0)),
             dtype=inputs[0].dtype)


def unpack(ctx: LowerCtx, node) -> None:
    num = attr_int(node, "num")
    ctx.emit("UNPACK", node, [ctx.input(node, 0)], dict(num=num, axis=attr_int(node, "axis", 0)),
             n_outputs=num)


def split(ctx: LowerCtx, node) -> None:
    n = attr_int(node, "num_split")
    x = ctx.input(node, 1)
    ctx.emit("SPLIT", node, [_index_input(ctx, node, 0, "axis"), x], dict(num_splits=n),
             dtype=x.dtype, n_outputs=n)


def split_v(ctx: LowerCtx, node) -> None:
    n = attr_int(node, "num_split")
    x = ctx.input(node, 0)
    ctx.emit("SPLIT_V", node, [x, _index_input(ctx, node, 1, "size_splits"),
                               _index_input(ctx, node, 2, "axis")],
             dict(num_splits=n), dtype=x.dtype, n_outputs=n)


def slice_(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    ctx.emit("SLICE", node, [x, _index_input(ctx, node, 1, "begin"),
                             _index_input(ctx, node, 2, "size")], dtype=x.dtype)


def strided_slice(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    ctx.emit("STRIDED_SLICE", node, [x] + [_index_input(ctx, node, i, what) for i, what in
                                           ((1, "begin"), (2, "end"), (3, "strides"))],
             dict(begin_mask=attr_int(node, "begin_mask", 0),
                  end_mask=attr_int(node, "end_mask", 0),
                  ellipsis_mask=attr_int(node, "ellipsis_mask", 0),
                  new_axis_mask=attr_int(node, "new_axis_mask", 0),
                  shrink_axis_mask=attr_int(node, "shrink_axis_mask", 0)), dtype=x.dtype)


def tile(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    ctx.emit("TILE", node, [x, _index_input(ctx, node, 1, "multiples")], dtype=x.dtype)


def pad(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    paddings = ctx.const(node, "paddings",
                         ctx.const_input(node, 1, "the paddings").astype(np.int32))
    if node.op == "PadV2":
        value = ctx.input(node, 2)
        if not (value.is_const and float(np.asarray(value.data).reshape(-1)[0]) == 0.0):
            ctx.emit("PADV2", node, [x, paddings, value], dtype=x.dtype)
            return
    ctx.emit("PAD", node, [x, paddings], dtype=x.dtype)


def mirror_pad(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    mode = attr_str(node, "mode")
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise UnsupportedOpError(f"node {node.name!r} (MirrorPad): mode {mode!r}")
    paddings = ctx.const(node, "paddings",
                         ctx.const_input(node, 1, "the paddings").astype(np.int32))
    ctx.emit("MIRROR_PAD", node, [x, paddings], dict(mode=0 if mode == "REFLECT" else 1),
             dtype=x.dtype)


def concat_v2(ctx: LowerCtx, node) -> None:
    inputs = ctx.inputs(node)
    axis = int(ctx.const_input(node, len(inputs) - 1, "the axis"))
    ctx.emit("CONCATENATION", node, inputs[:-1],
             dict(axis=axis, fused_activation_function=Activation.NONE), dtype=inputs[0].dtype)


def gather(ctx: LowerCtx, node) -> None:
    """GatherV2(params, indices, axis); Gather and ResourceGather gather along axis 0."""
    params, indices = ctx.input(node, 0), ctx.input(node, 1)
    axis = int(ctx.const_input(node, 2, "the axis")) if node.op == "GatherV2" else 0
    if indices.is_const:
        indices = ctx.const(node, "indices", indices.data.astype(np.int32))
    ctx.emit("GATHER", node, [params, indices],
             dict(axis=axis, batch_dims=attr_int(node, "batch_dims", 0)), dtype=params.dtype)


def shape(ctx: LowerCtx, node) -> None:
    out = attr_dtype(node, "out_type", np.dtype(np.int32))
    ctx.emit("SHAPE", node, [ctx.input(node, 0)], dict(out_type=2 if out == np.int32 else 4),
             dtype=out)


def fill(ctx: LowerCtx, node) -> None:
    value = ctx.input(node, 1)
    ctx.emit("FILL", node, [_index_input(ctx, node, 0, "dims"), value], dtype=value.dtype)


def range_(ctx: LowerCtx, node) -> None:
    ins = ctx.inputs(node)
    ctx.emit("RANGE", node, ins[:3], dtype=ins[0].dtype)


def broadcast_to(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    ctx.emit("BROADCAST_TO", node, [x, _index_input(ctx, node, 1, "shape")], dtype=x.dtype)


def select_v2(ctx: LowerCtx, node) -> None:
    ins = ctx.inputs(node)
    ctx.emit("SELECT_V2", node, ins[:3], dtype=ins[1].dtype)


RULES = {
    "Reshape": reshape,
    "Squeeze": squeeze,
    "ExpandDims": expand_dims,
    "Transpose": transpose,
    "Pack": pack,
    "Unpack": unpack,
    "Split": split,
    "SplitV": split_v,
    "Slice": slice_,
    "StridedSlice": strided_slice,
    "Tile": tile,
    "Pad": pad,
    "PadV2": pad,
    "MirrorPad": mirror_pad,
    "ConcatV2": concat_v2,
    "GatherV2": gather,
    "Gather": gather,
    "ResourceGather": gather,
    "Shape": shape,
    "Fill": fill,
    "Range": range_,
    "BroadcastTo": broadcast_to,
    "SelectV2": select_v2,
    "Select": select_v2,
}
