"""Shape and layout ops: Reshape, Squeeze, ExpandDims, Transpose, Pack/Unpack, Split/SplitV,
Slice/StridedSlice, Tile, Pad/PadV2/MirrorPad, ConcatV2, Gather, Shape/Fill/Range, ReverseV2,
OneHot.

Index-like constant operands (shapes, axes, begin/end/strides, paddings) are stored as int32,
the type TFLite's kernels read them as (spec.validate has checked they fit).
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import ShapeError
from ..ir import Activation
from .context import LowerCtx, attr_dtype, attr_int, attr_ints, attr_str, axis_in_rank, fail
from .spec import (ANY, BOOL, INDEX, MAX_OUTPUTS, REAL, Attr, In, Lowering, scalar_input, spec,
                   vector_input)


def _rank(t) -> int | None:
    return None if t.shape is None else len(t.shape)


def _index_input(ctx: LowerCtx, node, i: int, what: str):
    """Operand i as an int32 tensor (constants converted; computed ones passed through)."""
    t = ctx.input(node, i)
    if t.is_const:
        return ctx.const(node, what, np.asarray(t.data).astype(np.int32))
    return t


def _scalar(ctx: LowerCtx, node, i: int, what: str) -> int:
    """A constant scalar operand (spec: one element) as a Python int."""
    return int(np.asarray(ctx.const_input(node, i, what)).reshape(-1)[0])


def reshape(ctx: LowerCtx, node) -> None:
    x, shape = ctx.input(node, 0), ctx.input(node, 1)
    options = {}
    if shape.is_const:  # TFLite's converter stores the target shape in the options too
        dims = shape.data.astype(np.int32).reshape(-1)
        if np.any(dims < -1) or np.count_nonzero(dims == -1) > 1:
            raise fail(ShapeError, node, f"target shape {dims.tolist()[:8]} is invalid: "
                       "dimensions must be >= 0, with at most one -1")
        shape = ctx.const(node, "shape", dims)
        options["new_shape"] = [int(d) for d in dims]
    ctx.emit("RESHAPE", node, [x, shape], options, dtype=x.dtype)


def squeeze(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    dims = attr_ints(node, "squeeze_dims", [])
    for d in dims:
        axis_in_rank(node, d, _rank(x), "squeeze dimension")
    ctx.emit("SQUEEZE", node, [x], dict(squeeze_dims=dims))


def expand_dims(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    ctx.emit("EXPAND_DIMS", node, [x, _index_input(ctx, node, 1, "axis")], dtype=x.dtype)


def transpose(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    ctx.emit("TRANSPOSE", node, [x, _index_input(ctx, node, 1, "perm")], dtype=x.dtype)


def pack(ctx: LowerCtx, node) -> None:
    inputs = ctx.inputs(node)
    axis = axis_in_rank(node, attr_int(node, "axis", 0), _rank(inputs[0]), extra=1)
    ctx.emit("PACK", node, inputs, dict(values_count=len(inputs), axis=axis),
             dtype=inputs[0].dtype)


def unpack(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    num = attr_int(node, "num")
    axis = axis_in_rank(node, attr_int(node, "axis", 0), _rank(x))
    if x.shape is not None and x.shape[axis] != num:
        raise fail(ShapeError, node, f"num={num} but the input's dimension {axis} is "
                   f"{x.shape[axis]} (input shape {list(x.shape)})")
    ctx.emit("UNPACK", node, [x], dict(num=num, axis=axis), n_outputs=num)


def split(ctx: LowerCtx, node) -> None:
    n = attr_int(node, "num_split")
    x = ctx.input(node, 1)
    ctx.emit("SPLIT", node, [_index_input(ctx, node, 0, "axis"), x], dict(num_splits=n),
             dtype=x.dtype, n_outputs=n)


def split_v(ctx: LowerCtx, node) -> None:
    n = attr_int(node, "num_split")
    x, sizes = ctx.input(node, 0), ctx.input(node, 1)
    if sizes.shape is not None and sizes.shape != (n,):
        raise fail(ShapeError, node, f"size_splits has shape {list(sizes.shape)} but "
                   f"num_split={n}")
    ctx.emit("SPLIT_V", node, [x, _index_input(ctx, node, 1, "size_splits"),
                               _index_input(ctx, node, 2, "axis")],
             dict(num_splits=n), dtype=x.dtype, n_outputs=n)


def slice_(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    ctx.emit("SLICE", node, [x, _index_input(ctx, node, 1, "begin"),
                             _index_input(ctx, node, 2, "size")], dtype=x.dtype)


def strided_slice(ctx: LowerCtx, node) -> None:
    x, strides = ctx.input(node, 0), ctx.input(node, 3)
    if strides.is_const and np.any(strides.data == 0):
        raise fail(ShapeError, node, f"strides {strides.data.tolist()[:8]} contain 0; every "
                   "stride must be non-zero")
    ctx.emit("STRIDED_SLICE", node, [x] + [_index_input(ctx, node, i, what) for i, what in
                                           ((1, "begin"), (2, "end"), (3, "strides"))],
             {mask: attr_int(node, mask, 0) for mask in _MASKS}, dtype=x.dtype)


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def tile(ctx: LowerCtx, node) -> None:
    x, multiples = ctx.input(node, 0), ctx.input(node, 1)
    if multiples.is_const and np.any(multiples.data < 0):
        raise fail(ShapeError, node, f"multiples {multiples.data.tolist()[:8]} contain a "
                   "negative value")
    ctx.emit("TILE", node, [x, _index_input(ctx, node, 1, "multiples")], dtype=x.dtype)


def _paddings(ctx: LowerCtx, node, x):
    """The constant [rank, 2] paddings, non-negative, as int32."""
    p = np.asarray(ctx.const_input(node, 1, "the paddings"))
    rank = _rank(x)
    if p.ndim != 2 or p.shape[1] != 2 or (rank is not None and p.shape[0] != rank):
        raise fail(ShapeError, node, f"paddings have shape {list(p.shape)}; expected "
                   f"[{rank if rank is not None else 'rank'}, 2]")
    if np.any(p < 0):
        raise fail(ShapeError, node, f"paddings {p.tolist()[:8]} contain a negative value")
    return ctx.const(node, "paddings", p.astype(np.int32))


def pad(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    paddings = _paddings(ctx, node, x)
    if node.op == "PadV2":
        value = ctx.input(node, 2)
        if not (value.is_const and float(np.asarray(value.data).reshape(-1)[0]) == 0.0):
            ctx.emit("PADV2", node, [x, paddings, value], dtype=x.dtype)
            return
    ctx.emit("PAD", node, [x, paddings], dtype=x.dtype)


def mirror_pad(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    mode = attr_str(node, "mode")
    paddings = _paddings(ctx, node, x)
    ctx.emit("MIRROR_PAD", node, [x, paddings], dict(mode=0 if mode == "REFLECT" else 1),
             dtype=x.dtype)


def concat_v2(ctx: LowerCtx, node) -> None:
    inputs = ctx.inputs(node)
    axis = _scalar(ctx, node, len(inputs) - 1, "the axis")
    axis_in_rank(node, axis, _rank(inputs[0]))
    ctx.emit("CONCATENATION", node, inputs[:-1],
             dict(axis=axis, fused_activation_function=Activation.NONE), dtype=inputs[0].dtype)


def gather(ctx: LowerCtx, node) -> None:
    """GatherV2(params, indices, axis); Gather and ResourceGather gather along axis 0."""
    params, indices = ctx.input(node, 0), ctx.input(node, 1)
    axis = _scalar(ctx, node, 2, "the axis") if node.op == "GatherV2" else 0
    axis_in_rank(node, axis, _rank(params))
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
    ctx.emit("RANGE", node, ins, dtype=ins[0].dtype)


def broadcast_to(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    ctx.emit("BROADCAST_TO", node, [x, _index_input(ctx, node, 1, "shape")], dtype=x.dtype)


def reverse_v2(ctx: LowerCtx, node) -> None:
    """ReverseV2(x, axes) reverses x along each listed axis (array_ops.cc "ReverseV2"; an
    axis listed twice is an error there). LiteRT's REVERSE_V2 takes only axes that are
    contiguous once sorted (kernels/reverse.cc), so each contiguous run gets its own op;
    no axes at all is the identity (and LiteRT crashes on an empty axes list)."""
    x = ctx.input(node, 0)
    rank = _rank(x)
    axes = [axis_in_rank(node, int(a), rank) for a in
            np.asarray(ctx.const_input(node, 1, "the axes")).reshape(-1)]
    if rank is not None:
        axes = [a % rank for a in axes]
    if len(set(axes)) != len(axes):
        raise fail(ShapeError, node, f"axes {axes[:8]} name a dimension more than once")
    runs = _contiguous_runs(axes)
    if not runs:
        ctx.alias(node, x)
        return
    for i, run in enumerate(runs):
        axes_t = ctx.const(node, f"axes{i}" if len(runs) > 1 else "axes", np.int32(run))
        if i == len(runs) - 1:
            ctx.emit("REVERSE_V2", node, [x, axes_t], dtype=x.dtype)
        else:
            y = ctx.graph.tensor(f"{node.name}/reverse{i}", x.dtype)
            ctx.graph.add_op("REVERSE_V2", [x, axes_t], [y], name=node.name)
            x = y


def _contiguous_runs(axes: list[int]) -> list[list[int]]:
    """Sorted axes split into runs of adjacent dimensions. Negative axes (rank unknown)
    count from the end: they never join a run of non-negative ones."""
    runs: list[list[int]] = []
    for a in sorted(axes):
        if runs and a == runs[-1][-1] + 1 and (a < 0) == (runs[-1][-1] < 0):
            runs[-1].append(a)
        else:
            runs.append([a])
    return runs


def one_hot(ctx: LowerCtx, node) -> None:
    """OneHot(indices, depth, on, off): a new axis of size depth at `axis` (-1: last), on
    where the index equals the position, off elsewhere -- an index outside [0, depth) gives
    a row of off values (array_ops.cc "OneHot"). TFLite's ONE_HOT does exactly that."""
    indices, on = ctx.input(node, 0), ctx.input(node, 2)
    depth = _scalar(ctx, node, 1, "the depth")
    if depth < 0:
        raise fail(ShapeError, node, f"depth {depth} must be >= 0")
    axis = attr_int(node, "axis", -1)  # spec: >= -1
    if axis != -1:
        axis_in_rank(node, axis, _rank(indices), extra=1)  # 0 <= axis <= rank
    ctx.emit("ONE_HOT", node, [indices, ctx.const(node, "depth", np.int32(depth)), on,
                               ctx.input(node, 3)], dict(axis=axis), dtype=on.dtype)


def _select(tfl_type: str):
    """SelectV2 broadcasts its three operands; Select (v1) does not, but a rank-1 condition
    picks whole rows of higher-rank operands (array_ops.cc "Select"). TFLite's SELECT and
    SELECT_V2 (select.cc) implement exactly these two rules."""
    def rule(ctx: LowerCtx, node) -> None:
        ins = ctx.inputs(node)
        ctx.emit(tfl_type, node, ins, dtype=ins[1].dtype)
    rule.__name__ = tfl_type.lower()
    return rule


# -- specs (TF op definitions: array_ops.cc, math_ops.cc) -------------------------------------
_X = In("the input", ANY)
_AXIS_ATTR = Attr("axis", "i")
_NUM_SPLIT = Attr("num_split", "i", True, lo=1, hi=MAX_OUTPUTS)
_PADDINGS = In("the paddings", INDEX, "Tpaddings", const=True, ranks=(2,))
_GATHER_ATTRS = (Attr("batch_dims", "i"),)
# What TFLite's REVERSE_V2 moves (kernels/reverse.cc; bfloat16 has no numpy type).
_REVERSIBLE = frozenset(map(np.dtype, (np.float32, np.float16, np.int8, np.uint8, np.int16,
                                       np.int32, np.int64, np.bool_)))
# ONE_HOT's on / off values (kernels/one_hot.cc; int16 passes its Prepare but not its Eval).
_ONE_HOT_VALUES = frozenset(map(np.dtype, (np.float32, np.int32, np.int64, np.int8, np.uint8,
                                           np.bool_)))

RULES = {
    "Reshape": Lowering(reshape, spec(_X, vector_input("the shape", "Tshape"))),
    "Squeeze": Lowering(squeeze, spec(_X, attrs=(Attr("squeeze_dims", "list"),))),
    "ExpandDims": Lowering(expand_dims, spec(_X, scalar_input("the axis", typed="Tdim",
                                                              const=False))),
    "Transpose": Lowering(transpose, spec(_X, vector_input("the permutation", "Tperm"))),
    "Pack": Lowering(pack, spec(variadic=In("value", ANY), n_attr="N",
                                attrs=(_AXIS_ATTR,))),
    "Unpack": Lowering(unpack, spec(_X, attrs=(Attr("num", "i", True, lo=1, hi=MAX_OUTPUTS),
                                               _AXIS_ATTR))),
    "Split": Lowering(split, spec(scalar_input("the axis", INDEX, const=False), _X,
                                  attrs=(_NUM_SPLIT,))),
    "SplitV": Lowering(split_v, spec(_X, vector_input("the split sizes", "Tlen"),
                                     scalar_input("the axis", const=False),
                                     attrs=(_NUM_SPLIT,))),
    "Slice": Lowering(slice_, spec(_X, vector_input("the begin", "Index"),
                                   vector_input("the size", "Index"))),
    "StridedSlice": Lowering(strided_slice, spec(
        _X, *(vector_input(what, "Index") for what in ("the begin", "the end", "the strides")),
        attrs=tuple(Attr(mask, "i") for mask in _MASKS))),
    "Tile": Lowering(tile, spec(_X, vector_input("the multiples", "Tmultiples"))),
    "Pad": Lowering(pad, spec(_X, _PADDINGS)),
    "PadV2": Lowering(pad, spec(_X, _PADDINGS, In("the pad value", ANY, scalar=True))),
    "MirrorPad": Lowering(mirror_pad, spec(_X, _PADDINGS, attrs=(
        Attr("mode", "s", True, choices=("REFLECT", "SYMMETRIC")),))),
    "ConcatV2": Lowering(concat_v2, spec(scalar_input("the axis", typed="Tidx"),
                                         variadic=In("value", ANY), n_attr="N", n_min=2)),
    "GatherV2": Lowering(gather, spec(In("the params", ANY, "Tparams"),
                                      In("the indices", INDEX, "Tindices"),
                                      scalar_input("the axis", typed="Taxis"),
                                      attrs=_GATHER_ATTRS)),
    "Gather": Lowering(gather, spec(In("the params", ANY, "Tparams"),
                                    In("the indices", INDEX, "Tindices"))),
    "ResourceGather": Lowering(gather, spec(In("the params", ANY, None),
                                            In("the indices", INDEX, "Tindices"),
                                            attrs=_GATHER_ATTRS)),
    "Shape": Lowering(shape, spec(In("the input", ANY, None), attrs=(
        Attr("out_type", "type", dtypes=INDEX),))),
    "Fill": Lowering(fill, spec(vector_input("the dims", "index_type"),
                                In("the value", ANY, scalar=True))),
    "Range": Lowering(range_, spec(*(In(what, REAL, "Tidx", scalar=True)
                                     for what in ("the start", "the limit", "the delta")))),
    "BroadcastTo": Lowering(broadcast_to, spec(_X, vector_input("the shape", "Tidx"))),
    "ReverseV2": Lowering(reverse_v2, spec(In("the input", _REVERSIBLE),
                                           In("the axes", INDEX, "Tidx", const=True,
                                              ranks=(1,)))),
    "OneHot": Lowering(one_hot, spec(In("the indices", INDEX, "TI"),
                                     scalar_input("the depth", frozenset({np.dtype(np.int32)})),
                                     In("the on value", _ONE_HOT_VALUES, scalar=True),
                                     In("the off value", _ONE_HOT_VALUES, scalar=True),
                                     attrs=(Attr("axis", "i", lo=-1),))),
    "SelectV2": Lowering(_select("SELECT_V2"), spec(In("the condition", BOOL, None), _X, _X)),
    "Select": Lowering(_select("SELECT"), spec(In("the condition", BOOL, None), _X, _X)),
}
