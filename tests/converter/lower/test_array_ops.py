"""converter/lower/array_ops.py: shape and layout ops, one node each; references from TF's op
docs (tensorflow/core/ops/array_ops.cc and the tf.* API docs), written in numpy."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from edgelite.errors import GraphError, ShapeError

from .lowering import (BOOL, F32, I32, I64, check, floats, graph, rng, run,
                       runs_in_edgelite_and_litert)

COVERED = {"Reshape", "Squeeze", "ExpandDims", "Transpose", "Pack", "Unpack", "Split",
           "SplitV", "Slice", "StridedSlice", "Tile", "Pad", "PadV2", "MirrorPad", "ConcatV2",
           "GatherV2", "Gather", "ResourceGather", "Shape", "Fill", "Range", "BroadcastTo",
           "SelectV2", "Select", "ReverseV2", "OneHot"}


def x234():
    return floats(rng(), 2, 3, 4)


def outputs(name, n):
    return [f"{name}:{k}" for k in range(n)]


# -- reshape family -----------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [np.array([4, 6], np.int32), np.array([-1, 3], np.int32),
                                   np.array([2, -1, 2], np.int64), np.array([24], np.int32)],
                         ids=lambda s: str(s.tolist()))
def test_reshape(shape):
    """Reshape: same elements in row-major order; one -1 takes the remaining size."""
    x = x234()
    g = graph(x=x.shape)
    g.const("shape", shape)
    g.node("y", "Reshape", ["x", "shape"], T=F32, Tshape=shape.dtype)
    check(g, {"x": x}, x.reshape(shape.tolist()), ["RESHAPE"])


def test_reshape_to_a_scalar():
    g = graph(x=(1,))
    g.const("shape", np.array([], np.int32))
    g.node("y", "Reshape", ["x", "shape"], T=F32, Tshape=I32)
    check(g, {"x": np.array([3.5], np.float32)}, np.float32(3.5), ["RESHAPE"])


def test_reshape_to_the_shape_of_another_tensor():
    """A shape computed from known shapes (Shape of another input) folds to a constant."""
    x = x234()
    g = graph(x=x.shape, z=(6, 4))
    g.node("s", "Shape", ["z"], T=F32)
    g.node("r", "Reshape", ["x", "s"], T=F32, Tshape=I32)
    g.node("y", "AddV2", ["r", "z"], T=F32)
    z = floats(rng(), 6, 4)
    check(g, {"x": x, "z": z}, x.reshape(6, 4) + z, ["RESHAPE", "ADD"])


@pytest.mark.parametrize("dims, want_shape", [([], (3, 4)), ([0], (3, 1, 4)), ([-2], (1, 3, 4)),
                                              ([0, 2], (3, 4))])
def test_squeeze(dims, want_shape):
    """Squeeze removes the listed size-1 dimensions (negative from the end), or all size-1
    dimensions when squeeze_dims is empty (array_ops.cc "Squeeze")."""
    x = floats(rng(), 1, 3, 1, 4)
    g = graph(x=x.shape)
    g.node("y", "Squeeze", ["x"], T=F32, squeeze_dims=dims)
    check(g, {"x": x}, x.reshape(want_shape), ["SQUEEZE"])


@pytest.mark.parametrize("axis", [np.int32(0), np.int32(2), np.int32(-1), np.int64(-3),
                                  np.array([1], np.int32)], ids=lambda a: repr(a))
def test_expand_dims(axis):
    """ExpandDims inserts a 1 at `axis`; -1 - input.dims() <= axis <= input.dims(), negative
    counting from the end of the output (array_ops.cc "ExpandDims")."""
    x = floats(rng(), 2, 3)
    g = graph(x=x.shape)
    g.const("axis", axis)
    g.node("y", "ExpandDims", ["x", "axis"], T=F32, Tdim=np.asarray(axis).dtype)
    check(g, {"x": x}, np.expand_dims(x, int(np.asarray(axis).reshape(-1)[0])), ["EXPAND_DIMS"])


@pytest.mark.parametrize("perm", [np.array([2, 0, 1], np.int32), np.array([0, 2, 1], np.int64),
                                  np.array([1, 0, 2], np.int32)], ids=lambda p: str(p.tolist()))
def test_transpose(perm):
    """Transpose: y.shape[i] == x.shape[perm[i]] (array_ops.cc "Transpose")."""
    x = x234()
    g = graph(x=x.shape)
    g.const("perm", perm)
    g.node("y", "Transpose", ["x", "perm"], T=F32, Tperm=perm.dtype)
    check(g, {"x": x}, np.transpose(x, perm), ["TRANSPOSE"])


@pytest.mark.parametrize("axis", [None, 1, 2, -1, -3])
def test_pack(axis):
    """Pack stacks N rank-R tensors into rank R+1 along axis, in [-(R+1), R+1) (default 0)."""
    r = rng()
    xs = [floats(r, 2, 3) for _ in range(3)]
    g = graph(a=(2, 3), b=(2, 3), c=(2, 3))
    g.node("y", "Pack", ["a", "b", "c"], T=F32, N=3, **({} if axis is None else {"axis": axis}))
    check(g, dict(zip("abc", xs)), np.stack(xs, axis=axis or 0), ["PACK"])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unpack(axis):
    x = x234()
    g = graph(x=x.shape)
    n = x.shape[axis]
    g.node("y", "Unpack", ["x"], T=F32, num=n, axis=axis)
    want = [np.take(x, k, axis=axis) for k in range(n)]
    check(g, {"x": x}, want, ["UNPACK"], outputs=outputs("y", n))


@pytest.mark.parametrize("axis, n", [(2, 2), (-1, 4), (0, 2), (np.int64(1), 3)])
def test_split(axis, n):
    """Split(axis, value): num_split equal parts along axis (the axis comes first)."""
    x = x234()
    g = graph(x=x.shape)
    axis = np.asarray(axis, np.int64 if isinstance(axis, np.int64) else np.int32)
    g.const("axis", axis)
    g.node("y", "Split", ["axis", "x"], T=F32, num_split=n)
    check(g, {"x": x}, np.split(x, n, axis=int(axis)), ["SPLIT"], outputs=outputs("y", n))


@pytest.mark.parametrize("sizes, axis", [([1, 3], 2), ([1, -1, 2], -1), ([2, 1], 1)])
def test_split_v(sizes, axis):
    """SplitV: parts of the given sizes along axis; one size may be -1 (the remainder)."""
    x = floats(rng(), 2, 3, 4)
    g = graph(x=x.shape)
    g.const("sizes", np.array(sizes, np.int32))
    g.const("axis", np.int32(axis))
    g.node("y", "SplitV", ["x", "sizes", "axis"], T=F32, Tlen=I32, num_split=len(sizes))
    known = [s for s in sizes if s >= 0]
    full = [s if s >= 0 else x.shape[axis] - sum(known) for s in sizes]
    want = np.split(x, np.cumsum(full)[:-1], axis=axis)
    check(g, {"x": x}, want, ["SPLIT_V"], outputs=outputs("y", len(sizes)))


@pytest.mark.parametrize("begin, size", [([0, 1, 0], [2, 2, 4]), ([1, 0, 2], [-1, -1, -1]),
                                         ([0, 2, 1], [1, 1, 2])])
def test_slice(begin, size):
    """Slice: size[i] elements from begin[i]; size -1 means all remaining (array_ops.cc)."""
    x = x234()
    g = graph(x=x.shape)
    g.const("begin", np.array(begin, np.int32))
    g.const("size", np.array(size, np.int32))
    g.node("y", "Slice", ["x", "begin", "size"], T=F32, Index=I32)
    index = tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))
    check(g, {"x": x}, x[index], ["SLICE"])


# -- StridedSlice -------------------------------------------------------------------------------
def strided_slice_reference(x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0,
                            new_axis_mask=0, shrink_axis_mask=0):
    """tf.strided_slice's documented semantics: spec i is Python's begin[i]:end[i]:strides[i]
    with bit i of begin_mask / end_mask dropping that bound, of ellipsis_mask meaning `...`,
    of new_axis_mask meaning `tf.newaxis` (begin/end/stride ignored) and of shrink_axis_mask
    meaning the single index begin[i] (the dimension is removed). Dimensions after the specs
    are taken whole. (tf.strided_slice docstring, array_ops.py.)"""
    index = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit:
            index.append(Ellipsis)
        elif new_axis_mask & bit:
            index.append(np.newaxis)
        elif shrink_axis_mask & bit:
            index.append(b)
        else:
            index.append(slice(None if begin_mask & bit else b, None if end_mask & bit else e,
                               s))
    return x[tuple(index)]


STRIDED = {  # name: (begin, end, strides, masks)
    "x[1:3, :, ::2]": ([1, 0, 0], [3, 0, 0], [1, 1, 2], dict(begin_mask=6, end_mask=6)),
    "x[::-1, 3:0:-2]": ([0, 3], [0, 0], [-1, -2], dict(begin_mask=1, end_mask=1)),
    "x[-2:, -4:-1]": ([-2, -4], [0, -1], [1, 1], dict(end_mask=1)),
    "x[1, :, 2]": ([1, 0, 2], [2, 0, 3], [1, 1, 1], dict(begin_mask=2, end_mask=2,
                                                          shrink_axis_mask=5)),
    "x[-1]": ([-1], [0], [1], dict(shrink_axis_mask=1)),
    "x[..., 1:3]": ([0, 1], [0, 3], [1, 1], dict(ellipsis_mask=1)),
    "x[:, newaxis, 1:]": ([0, 0, 1], [0, 0, 0], [1, 1, 1], dict(begin_mask=1, end_mask=5,
                                                                 new_axis_mask=2)),
    "x[newaxis, ..., 0]": ([0, 0, 0], [0, 0, 1], [1, 1, 1], dict(ellipsis_mask=2,
                                                                 new_axis_mask=1,
                                                                 shrink_axis_mask=4)),
    "x[1:2]": ([1], [2], [1], {}),
    "x[::-2, ..., ::-1]": ([0, 0, 0], [0, 0, 0], [-2, 1, -1], dict(begin_mask=5, end_mask=5,
                                                                   ellipsis_mask=2)),
    "x[3:0:-1, 2]": ([3, 2], [0, 3], [-1, 1], dict(shrink_axis_mask=2)),
    "x[..., newaxis]": ([0, 0], [0, 0], [1, 1], dict(ellipsis_mask=1, new_axis_mask=2)),
    "x[1:-1:2, newaxis, ..., -1]": ([1, 0, 0, -1], [-1, 0, 0, 0], [2, 1, 1, 1],
                                    dict(new_axis_mask=2, ellipsis_mask=4,
                                         shrink_axis_mask=8)),
    "x[-10:10, 1:100:3]": ([-10, 1], [10, 100], [1, 3], {}),
}
# An empty result: a zero-element activation tensor (buffer 0) is not a constant.
STRIDED["x[2:0]"] = ([2], [0], [1], {})


@pytest.mark.parametrize("case", sorted(STRIDED))
def test_strided_slice(case):
    begin, end, strides, masks = STRIDED[case]
    x = floats(rng(), 4, 5, 6)
    g = graph(x=x.shape)
    for name, v in (("begin", begin), ("end", end), ("strides", strides)):
        g.const(name, np.array(v, np.int32))
    g.node("y", "StridedSlice", ["x", "begin", "end", "strides"], T=F32, Index=I32, **masks)
    # a slice that only adds axes is a RESHAPE (passes/collapse_strided_slices.py); one that
    # adds axes and slices is a RESHAPE and a STRIDED_SLICE, as TF writes it
    # (passes/spell_out_new_axes.py)
    ops = ["RESHAPE"] if case == "x[..., newaxis]" else \
        ["RESHAPE", "STRIDED_SLICE"] if masks.get("new_axis_mask") else ["STRIDED_SLICE"]
    check(g, {"x": x}, strided_slice_reference(x, begin, end, strides, **masks), ops)


# -- tile, pad, concat --------------------------------------------------------------------------
def test_tile():
    x = floats(rng(), 2, 1, 3)
    g = graph(x=x.shape)
    g.const("m", np.array([2, 3, 1], np.int64))
    g.node("y", "Tile", ["x", "m"], T=F32, Tmultiples=I64)
    check(g, {"x": x}, np.tile(x, (2, 3, 1)), ["TILE"])


PADDINGS = np.array([[1, 2], [0, 1], [2, 0]])


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_pad(dtype):
    """Pad: paddings[D] = [before, after] zeros in dimension D (array_ops.cc "Pad")."""
    x = x234()
    g = graph(x=x.shape)
    g.const("p", PADDINGS.astype(dtype))
    g.node("y", "Pad", ["x", "p"], T=F32, Tpaddings=np.dtype(dtype))
    check(g, {"x": x}, np.pad(x, PADDINGS), ["PAD"])


@pytest.mark.parametrize("value, ops", [(0.0, ["PAD"]), (-1.5, ["PADV2"])])
def test_pad_v2(value, ops):
    x = x234()
    g = graph(x=x.shape)
    g.const("p", PADDINGS.astype(np.int32))
    g.const("v", np.float32(value))
    g.node("y", "PadV2", ["x", "p", "v"], T=F32, Tpaddings=I32)
    check(g, {"x": x}, np.pad(x, PADDINGS, constant_values=value), ops)


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
def test_mirror_pad(mode):
    """MirrorPad: REFLECT mirrors without the border value, SYMMETRIC with it (tf.pad docs:
    [1, 2, 3] padded by 2 is [3, 2, 1, 2, 3, 2, 1] vs [2, 1, 1, 2, 3, 3, 2]); numpy's
    'reflect' / 'symmetric' modes are the same."""
    x = x234()
    paddings = np.array([[1, 0], [2, 1], [0, 3]], np.int32)  # REFLECT: each below the size
    g = graph(x=x.shape)
    g.const("p", paddings)
    g.node("y", "MirrorPad", ["x", "p"], T=F32, Tpaddings=I32, mode=mode)
    check(g, {"x": x}, np.pad(x, paddings, mode=mode.lower()), ["MIRROR_PAD"])


@pytest.mark.parametrize("axis", [0, 1, -1, np.int64(-2)])
def test_concat_v2(axis):
    r = rng()
    shapes = {0: [(1, 3, 4), (2, 3, 4)], 1: [(2, 1, 4), (2, 3, 4)], -1: [(2, 3, 1), (2, 3, 4)],
              -2: [(2, 2, 4), (2, 3, 4)]}[int(axis)]
    xs = [floats(r, *s) for s in shapes]
    g = graph(a=shapes[0], b=shapes[1])
    axis = np.asarray(axis, np.int64 if isinstance(axis, np.int64) else np.int32)
    g.const("axis", axis)
    g.node("y", "ConcatV2", ["a", "b", "axis"], T=F32, N=2, Tidx=axis.dtype)
    check(g, {"a": xs[0], "b": xs[1]}, np.concatenate(xs, axis=int(axis)), ["CONCATENATION"])


# -- gather -------------------------------------------------------------------------------------
INDICES = np.array([[2, 0], [1, 1]], np.int32)


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_gather_v2(axis):
    """GatherV2: output shape params.shape[:axis] + indices.shape + params.shape[axis + 1:]."""
    x = floats(rng(), 3, 3, 4)
    g = graph(x=x.shape)
    g.const("i", INDICES)
    g.const("axis", np.int32(axis))
    g.node("y", "GatherV2", ["x", "i", "axis"], Tparams=F32, Tindices=I32, Taxis=I32)
    check(g, {"x": x}, np.take(x, INDICES, axis=axis), ["GATHER"])


def _batched_take(x, idx, axis, batch_dims):
    """tf.gather with batch_dims: the first batch_dims dimensions of params and indices are
    batch dimensions, gathered in lockstep (tf.gather docs, "batch_dims")."""
    if batch_dims == 0:
        return np.take(x, idx, axis=axis)
    return np.stack([_batched_take(x[b], idx[b], axis - 1, batch_dims - 1)
                     for b in range(x.shape[0])])


@pytest.mark.parametrize("axis, batch_dims", [(1, 1), (2, 1), (-1, -1)])
def test_gather_v2_batch_dims(axis, batch_dims):
    """A negative batch_dims counts from indices' rank (tf.gather docs)."""
    x = floats(rng(), 2, 3, 4)
    idx = np.array([[2, 0, 1], [1, 1, 0]], np.int32)
    g = graph(x=x.shape)
    g.const("i", idx)
    g.const("axis", np.int32(axis))
    g.node("y", "GatherV2", ["x", "i", "axis"], Tparams=F32, Tindices=I32, Taxis=I32,
           batch_dims=batch_dims)
    b = batch_dims % idx.ndim
    check(g, {"x": x}, _batched_take(x, idx, axis % x.ndim, b), ["GATHER"])


def test_gather_with_computed_indices():
    x = floats(rng(), 5, 3)
    idx = np.array([4, 0, 2, 2], np.int64)
    g = graph(x=x.shape, i=(idx.shape, I64))
    g.node("y", "Gather", ["x", "i"], Tparams=F32, Tindices=I64)
    check(g, {"x": x, "i": idx}, x[idx], ["GATHER"])


@pytest.mark.parametrize("op", ["Gather", "ResourceGather"])
def test_gather_axis_0(op):
    """Gather and ResourceGather gather along axis 0 (params as a frozen constant)."""
    r = rng()
    params = floats(r, 5, 3)
    g = graph(i=((2, 2), I32))
    g.const("p", params)
    attrs = dict(dtype=F32) if op == "ResourceGather" else dict(Tparams=F32)
    g.node("y", op, ["p", "i"], Tindices=I32, **attrs)
    check(g, {"i": INDICES}, params[INDICES], ["GATHER"])


# -- shape, fill, range, broadcast, select ------------------------------------------------------
@pytest.mark.parametrize("out_type", [None, I32, I64])
def test_shape(out_type):
    """Shape: the input's shape as a vector, int32 unless out_type says int64."""
    x = x234()
    g = graph(x=x.shape)
    g.node("y", "Shape", ["x"], T=F32, **({} if out_type is None else {"out_type": out_type}))
    check(g, {"x": x}, np.array(x.shape, out_type or I32), ["SHAPE"])


def test_fill_with_a_computed_value():
    """Fill(dims, value): a tensor of shape dims filled with the scalar value."""
    g = graph(v=((), F32))
    g.const("dims", np.array([2, 3], np.int32))
    g.node("y", "Fill", ["dims", "v"], T=F32, index_type=I32)
    check(g, {"v": np.float32(2.5)}, np.full((2, 3), 2.5, np.float32), ["FILL"])


@pytest.mark.parametrize("start, limit, delta, dtype", [
    (0, 5, 1, I32), (3, -4, -2, I32), (0.5, 2.0, 0.4, F32), (-1.0, 1.0, 3.0, F32),
])
def test_range(start, limit, delta, dtype):
    """Range: start, start + delta, ... up to but excluding limit; ceil((limit - start) /
    delta) elements (math_ops.cc "Range"). Its operands must be constants (the output's
    size depends on them), so it folds to a constant at conversion."""
    g = graph()
    for name, v in (("start", start), ("limit", limit), ("delta", delta)):
        g.const(name, np.asarray(v, dtype))
    g.node("y", "Range", ["start", "limit", "delta"], Tidx=dtype)
    n = int(np.ceil((limit - start) / delta))
    want = (np.float32(start) + np.arange(n, dtype=np.float32) * np.float32(delta)
            ).astype(dtype)
    check(g, {}, want, [], lowered={})


def test_broadcast_to():
    x = floats(rng(), 3, 1)
    g = graph(x=x.shape)
    g.const("s", np.array([2, 3, 4], np.int32))
    g.node("y", "BroadcastTo", ["x", "s"], T=F32, Tidx=I32)
    check(g, {"x": x}, np.broadcast_to(x, (2, 3, 4)), ["BROADCAST_TO"])


def _select_feeds(cond_shape):
    r = rng()
    return {"c": r.random(cond_shape) < 0.5, "a": floats(r, 3, 3), "b": floats(r, 3, 3)}


@pytest.mark.parametrize("cond_shape", [(3, 3), (3,), (3, 1), ()])
def test_select_v2_broadcasts(cond_shape):
    """SelectV2: condition, t and e broadcast against each other (array_ops.cc)."""
    feeds = _select_feeds(cond_shape)
    g = graph(c=(cond_shape, BOOL), a=(3, 3), b=(3, 3))
    g.node("y", "SelectV2", ["c", "a", "b"], T=F32)
    check(g, feeds, np.where(feeds["c"], feeds["a"], feeds["b"]), ["SELECT_V2"])


@pytest.mark.parametrize("cond_shape", [(3, 3), (3,)])
def test_select(cond_shape):
    """Select (v1) does not broadcast: the condition has t's shape, or is a vector that picks
    whole rows -- "If condition is rank 1, x may have higher rank, but its first dimension
    must match the size of condition" (array_ops.cc "Select"; tf.compat.v1.where)."""
    feeds = _select_feeds(cond_shape)
    g = graph(c=(cond_shape, BOOL), a=(3, 3), b=(3, 3))
    g.node("y", "Select", ["c", "a", "b"], T=F32)
    c = feeds["c"] if len(cond_shape) == 2 else feeds["c"][:, None]   # rows
    check(g, feeds, np.where(c, feeds["a"], feeds["b"]), ["SELECT"])


# -- reverse, one-hot ---------------------------------------------------------------------------
@pytest.mark.parametrize("axes, ops", [
    ([1], ["REVERSE_V2"]),
    ([-1], ["REVERSE_V2"]),
    ([2, 1], ["REVERSE_V2"]),              # contiguous once sorted: one op
    ([0, 2], ["REVERSE_V2", "REVERSE_V2"]),  # LiteRT refuses these together: one op each
    ([0, 1, 2], ["REVERSE_V2"]),
])
def test_reverse_v2(axes, ops):
    """ReverseV2 reverses the order of the elements along each listed axis; negative axes
    count from the end (array_ops.cc "ReverseV2")."""
    x = x234()
    g = graph(x=x.shape)
    g.const("axes", np.array(axes, np.int64))
    g.node("y", "ReverseV2", ["x", "axes"], T=F32, Tidx=I64)
    check(g, {"x": x}, np.flip(x, axes), ops)


@pytest.mark.parametrize("axes, n_ops", [([0, -1], 2), ([-1, -2], 1), ([1, 0], 1)])
def test_reverse_v2_of_a_computed_tensor(axes, n_ops):
    """While lowering, an op's output has no known rank yet: a negative axis cannot join a
    run of non-negative ones, so [0, -1] takes two ops (still correct on any rank)."""
    x = x234()
    g = graph(x=x.shape)
    g.node("r", "Relu", ["x"], T=F32)
    g.const("axes", np.array(axes, np.int32))
    g.node("y", "ReverseV2", ["r", "axes"], T=F32, Tidx=I32)
    check(g, {"x": x}, np.flip(np.maximum(x, 0), axes), ["RELU"] + ["REVERSE_V2"] * n_ops,
          lowered={"RELU": 1, "REVERSE_V2": n_ops})


@pytest.mark.parametrize("dtype", [BOOL, np.dtype(np.int8), I64])
def test_reverse_v2_moves_any_type(dtype):
    x = (rng().integers(-50, 50, (2, 5)) > 0 if dtype == BOOL
         else rng().integers(-50, 50, (2, 5))).astype(dtype)
    g = graph(x=(x.shape, dtype))
    g.const("axes", np.array([1], np.int32))
    g.node("y", "ReverseV2", ["x", "axes"], T=dtype, Tidx=I32)
    check(g, {"x": x}, x[:, ::-1], ["REVERSE_V2"])


def test_reverse_v2_without_axes_is_the_identity():
    x = x234()
    g = graph(x=x.shape)
    g.const("axes", np.array([], np.int32))
    g.node("r", "ReverseV2", ["x", "axes"], T=F32, Tidx=I32)
    g.node("y", "Relu", ["r"], T=F32)
    check(g, {"x": x}, np.maximum(x, 0), ["RELU"], lowered={"RELU": 1})


def test_reverse_v2_refuses_an_axis_named_twice():
    g = graph(x=(2, 3, 4))
    g.const("axes", np.array([1, -2], np.int32))
    g.node("y", "ReverseV2", ["x", "axes"], T=F32, Tidx=I32)
    with pytest.raises(ShapeError, match=r"^node 'y' \(ReverseV2\): axes \[1, 1\] name a "
                       "dimension more than once"):
        run(g, {"x": x234()}, ["y"])


def test_reverse_v2_quantizes_with_its_input_parameters():
    """The record's rule (SAME_AS_INPUT, type-generic kernel): an int8 REVERSE_V2 whose
    output keeps the input's scale and zero point, as TFLite's quantizer does."""
    x = x234()
    g = graph(x=x.shape)
    g.const("axes", np.array([2], np.int32))
    g.node("y", "ReverseV2", ["x", "axes"], T=F32, Tidx=I32)
    q = QuantizeOptions(QuantMode.INT8, input_ranges={"x": (-2.0, 2.0)})
    result = convert_detailed(g.bytes(), ConvertOptions(quantize=q))
    rev = next(op for op in result.graph.ops if op.type == "REVERSE_V2")
    assert rev.inputs[0].dtype == rev.outputs[0].dtype == np.int8
    q_in, q_out = rev.inputs[0].quant, rev.outputs[0].quant
    assert np.array_equal(q_in.scale, q_out.scale)
    assert np.array_equal(q_in.zero_point, q_out.zero_point)
    assert result.graph.op_counts() == {"QUANTIZE": 1, "REVERSE_V2": 1, "DEQUANTIZE": 1}
    for (y,) in runs_in_edgelite_and_litert(result.model, [x]):
        np.testing.assert_allclose(y, x[..., ::-1], atol=float(q_in.scale[0]) / 2 + 1e-6)


def tf_one_hot(indices, depth, on, off, axis=-1):
    """tf.one_hot: a new axis of size depth (at `axis`, -1 = last) holding on where the index
    equals the position and off elsewhere; an index outside [0, depth) gives all off."""
    hit = np.asarray(indices)[..., None] == np.arange(depth)
    out = np.where(hit, on, off).astype(np.asarray(on).dtype)
    return out if axis == -1 else np.moveaxis(out, -1, axis)


ONE_HOT_INDICES = np.array([[0, 3, -1], [5, 1, 2]], np.int64)  # -1 and 5: out of range


@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
@pytest.mark.parametrize("index_type", [I32, I64])
def test_one_hot(axis, index_type):
    idx = ONE_HOT_INDICES.astype(index_type)
    g = graph(i=(idx.shape, index_type))
    g.const("depth", np.int32(4))
    g.const("on", np.float32(2.5))
    g.const("off", np.float32(-1.0))
    g.node("y", "OneHot", ["i", "depth", "on", "off"], T=F32, TI=index_type, axis=axis)
    check(g, {"i": idx}, tf_one_hot(idx, 4, np.float32(2.5), np.float32(-1.0), axis),
          ["ONE_HOT"])


@pytest.mark.parametrize("depth", [0, 1])
@pytest.mark.parametrize("on, off", [(np.int32(7), np.int32(-7)), (np.True_, np.False_),
                                     (np.int64(1), np.int64(0))], ids=["int32", "bool", "int64"])
def test_one_hot_values_of_any_type(on, off, depth):
    idx = ONE_HOT_INDICES.astype(np.int32)
    dtype = np.asarray(on).dtype
    g = graph(i=(idx.shape, I32))
    g.const("depth", np.int32(depth))
    g.const("on", on)
    g.const("off", off)
    g.node("y", "OneHot", ["i", "depth", "on", "off"], T=dtype, TI=I32)
    check(g, {"i": idx}, tf_one_hot(idx, depth, on, off), ["ONE_HOT"])


def test_one_hot_with_computed_on_and_off_values():
    idx = ONE_HOT_INDICES.astype(np.int32)
    g = graph(i=(idx.shape, I32), on=(), off=())
    g.const("depth", np.int32(3))
    g.node("y", "OneHot", ["i", "depth", "on", "off"], T=F32, TI=I32, axis=0)
    on, off = np.float32(0.75), np.float32(0.25)
    check(g, {"i": idx, "on": on, "off": off}, tf_one_hot(idx, 3, on, off, 0), ["ONE_HOT"])


@pytest.mark.parametrize("depth, axis, error, message", [
    (-1, -1, ShapeError, r"depth -1 must be >= 0"),
    (3, 3, ShapeError, r"axis 3 is out of range for rank 3"),
    (3, -2, GraphError, r"attribute axis=-2 is outside \[-1, "),
])
def test_one_hot_refuses(depth, axis, error, message):
    g = graph(i=((2, 3), I32))
    g.const("depth", np.int32(depth))
    g.const("on", np.float32(1))
    g.const("off", np.float32(0))
    g.node("y", "OneHot", ["i", "depth", "on", "off"], T=F32, TI=I32, axis=axis)
    with pytest.raises(error, match=r"^node 'y' \(OneHot\): " + message):
        run(g, {"i": ONE_HOT_INDICES.astype(np.int32)}, ["y"])
