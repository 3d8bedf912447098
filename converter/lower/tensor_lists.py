"""Loop plumbing: TF2 TensorList ops and the TF1 TensorArrayV3 family, as plain tensors.

Keras RNNs and TF1 `dynamic_rnn` keep their per-step inputs and outputs in lists: the input
sequence is unstacked into one (TensorListFromTensor / TensorArrayScatterV3), each loop step
reads item t (GetItem / ReadV3) and writes its output to item t of another list (SetItem /
WriteV3), and the list is stacked after the loop (TensorListStack / TensorArrayGatherV3).
TFLite has no list type. As TensorFlow's converter does for TensorLists
(compiler/mlir/lite/transforms/lower_static_tensor_list.cc), a list of n items of shape S is
lowered to one dense tensor of shape [n, *S]:

  TensorListReserve(S, n) / TensorArrayV3(n)     zeros [n, *S] (a constant)
  TensorListFromTensor(x) / ScatterV3(0..n-1, x)  x itself
  GetItem(list, i) / ReadV3(i)                    GATHER(list, i)            -> [*S]
  SetItem(list, i, v) / WriteV3(i, v)             DYNAMIC_UPDATE_SLICE(list, v[None], [i, 0..])
  TensorListStack(list) / GatherV3(0..n-1)        the list itself (GatherV3: GATHER)
  TensorListLength / TensorArraySizeV3            SHAPE(list)[0]

so a loop carries its lists as ordinary loop variables and every op is a static-shaped
builtin (no Flex: TensorFlow's converter needs Flex for the TensorArrayV3 family).

The TF1 family threads a `flow` scalar through its ops to order them; here the flow *is* the
dense tensor, and the resource handle becomes a placeholder scalar nothing reads (dead-op
removal drops it outside loops). An element shape whose leading dim is unknown (-1, the
batch of a model frozen with batch None) takes the converter's batch size, as TensorFlow's
converter does with `default_to_single_batch`; any other unknown dim is refused.
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import ShapeError, UnsupportedOpError
from ..ir import Tensor
from .context import LowerCtx, attr_bool, attr_dtype, attr_shape, fail
from .spec import ANY, INDEX, In, Lowering, spec

MAX_LIST_ELEMENTS = 1 << 26  # a reserved list is a constant: bound what a file can ask for


# -- building blocks ------------------------------------------------------------------------
def _element_shape(ctx: LowerCtx, node, dims) -> tuple[int, ...]:
    """An element shape read from a file, with a leading -1 taken as the batch size."""
    if dims is None or np.ndim(dims) == 0:
        raise fail(UnsupportedOpError, node, "the list's element shape has unknown rank; "
                   "freeze the model with its input shapes set")
    dims = [int(d) for d in np.asarray(dims).reshape(-1)]
    if dims and dims[0] == -1:
        dims[0] = ctx.batch_size
    if any(d < 0 for d in dims):
        raise fail(UnsupportedOpError, node, f"the list's element shape {dims[:8]} has unknown "
                   "dims other than the batch; freeze the model with its input shapes set")
    return tuple(dims)


def _zeros_list(ctx: LowerCtx, node, n: int, shape: tuple[int, ...], dtype, index: int):
    if n < 0:
        raise fail(ShapeError, node, f"the list's size is {n}; it must be >= 0")
    if n * int(np.prod(shape, dtype=np.int64)) > MAX_LIST_ELEMENTS:
        raise fail(ShapeError, node, f"a list of {n} items of shape {list(shape)[:8]} is "
                   f"larger than {MAX_LIST_ELEMENTS} elements")
    ctx.alias(node, ctx.const(node, "list", np.zeros((n, *shape), dtype)), index)


def _read(ctx: LowerCtx, node, items: Tensor, index: Tensor, out: int = 0) -> None:
    """Item `index` (or items, for a vector of indices) of the dense list."""
    if index.is_const:
        index = ctx.const(node, "index", np.asarray(index.data).astype(np.int32))
    ctx.alias(node, ctx.emit("GATHER", node, [items, index], dict(axis=0, batch_dims=0),
                             dtype=items.dtype), out)


def _write(ctx: LowerCtx, node, items: Tensor, index: Tensor, value: Tensor, out: int = 0):
    """The dense list with item `index` replaced by `value`: DYNAMIC_UPDATE_SLICE of value
    (given a leading dim of 1) at [index, 0, ..., 0]. The zeros after the index have the
    value's rank: known now when the value is a constant or the list's shape is, else
    computed (SHAPE(SHAPE(value)) -> FILL), which folds once shapes are inferred."""
    g, name = ctx.graph, node.name
    idx_dtype = np.int64 if index.dtype == np.int64 else np.int32
    if index.is_const:
        index = ctx.const(node, "index", np.asarray(index.data, idx_dtype))
    row = g.tensor(f"{name}/item", value.dtype)
    g.add_op("EXPAND_DIMS", [value, ctx.const(node, "axis", np.int32(0))], [row], name=name)
    head = g.tensor(f"{name}/index1", index.dtype)
    g.add_op("RESHAPE", [index, ctx.const(node, "one", np.array([1], np.int32))], [head],
             dict(new_shape=[1]), name=name)
    rank = len(items.shape) - 1 if items.shape is not None else \
        value.data.ndim if value.is_const else None
    if rank is not None:
        tail = ctx.const(node, "zeros", np.zeros(rank, idx_dtype))
    else:
        shape = g.tensor(f"{name}/shape", np.int32)
        g.add_op("SHAPE", [value], [shape], dict(out_type=2), name=name)
        rank_t = g.tensor(f"{name}/rank", np.int32)
        g.add_op("SHAPE", [shape], [rank_t], dict(out_type=2), name=name)
        tail = g.tensor(f"{name}/zeros", idx_dtype)
        g.add_op("FILL", [rank_t, ctx.const(node, "zero", np.zeros((), idx_dtype))], [tail],
                 name=name)
    start = g.tensor(f"{name}/start", idx_dtype)
    g.add_op("CONCATENATION", [head, tail], [start], dict(axis=0), name=name)
    ctx.alias(node, ctx.emit("DYNAMIC_UPDATE_SLICE", node, [items, row, start],
                             dtype=items.dtype), out)


def _length(ctx: LowerCtx, node, items: Tensor) -> None:
    shape = ctx.graph.tensor(f"{node.name}/shape", np.int32)
    ctx.graph.add_op("SHAPE", [items], [shape], dict(out_type=2), name=node.name)
    ctx.emit("GATHER", node, [shape, ctx.const(node, "first", np.int32(0))],
             dict(axis=0, batch_dims=0), dtype=np.int32)


def _is_range(t: Tensor, n: int | None = None) -> bool:
    """A constant 0, 1, ..., n-1 (any n when not given)."""
    if not t.is_const or np.ndim(t.data) != 1:
        return False
    data = np.asarray(t.data)
    return (n is None or len(data) == n) and np.array_equal(data, np.arange(len(data)))


# -- TF2 TensorList ops ---------------------------------------------------------------------
def list_reserve(ctx: LowerCtx, node) -> None:
    shape = _element_shape(ctx, node, ctx.const_input(node, 0, "the element shape"))
    n = int(np.asarray(ctx.const_input(node, 1, "the number of elements")).reshape(-1)[0])
    _zeros_list(ctx, node, n, shape, attr_dtype(node, "element_dtype"), 0)


def list_from_tensor(ctx: LowerCtx, node) -> None:
    x = ctx.input(node, 0)
    if x.shape is not None and len(x.shape) == 0:
        raise fail(ShapeError, node, "the tensor to unstack is a scalar; it needs a leading "
                   "dimension")
    ctx.alias(node, x)


def list_get_item(ctx: LowerCtx, node) -> None:
    _read(ctx, node, ctx.input(node, 0), ctx.input(node, 1))


def list_set_item(ctx: LowerCtx, node) -> None:
    if attr_bool(node, "resize_if_index_out_of_bounds", False):
        raise fail(UnsupportedOpError, node, "grows the list (resize_if_index_out_of_bounds); "
                   "only lists of a fixed size convert")
    _write(ctx, node, ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2))


def list_stack(ctx: LowerCtx, node) -> None:
    ctx.alias(node, ctx.input(node, 0))


def list_gather(ctx: LowerCtx, node) -> None:
    items, indices = ctx.input(node, 0), ctx.input(node, 1)
    if _is_range(indices, None if items.shape is None else items.shape[0]) \
            and items.shape is not None:
        ctx.alias(node, items)
        return
    _read(ctx, node, items, indices)


def list_length(ctx: LowerCtx, node) -> None:
    _length(ctx, node, ctx.input(node, 0))


# -- TF1 TensorArrayV3 family ---------------------------------------------------------------
def array_v3(ctx: LowerCtx, node) -> None:
    if attr_bool(node, "dynamic_size", False):
        raise fail(UnsupportedOpError, node, "has dynamic_size=True (the array grows); only "
                   "TensorArrays of a fixed size convert")
    n = int(np.asarray(ctx.const_input(node, 0, "the size")).reshape(-1)[0])
    shape = _element_shape(ctx, node, attr_shape(node, "element_shape", None))
    ctx.alias(node, ctx.const(node, "handle", np.int32(0)), 0)
    _zeros_list(ctx, node, n, shape, attr_dtype(node, "dtype"), 1)


def array_scatter(ctx: LowerCtx, node) -> None:
    indices, value, flow = ctx.input(node, 1), ctx.input(node, 2), ctx.input(node, 3)
    n = flow.shape[0] if flow.shape else None
    if not _is_range(indices, n):
        raise fail(UnsupportedOpError, node, "scatters to indices other than 0..size-1; only "
                   "unstacking a whole tensor into the array converts")
    ctx.alias(node, value)


def array_gather(ctx: LowerCtx, node) -> None:
    flow, indices = ctx.input(node, 2), ctx.input(node, 1)
    if _is_range(indices) and flow.shape is not None and flow.shape[0] == len(indices.data):
        ctx.alias(node, flow)
        return
    _read(ctx, node, flow, indices)


def array_read(ctx: LowerCtx, node) -> None:
    _read(ctx, node, ctx.input(node, 2), ctx.input(node, 1))


def array_write(ctx: LowerCtx, node) -> None:
    _write(ctx, node, ctx.input(node, 3), ctx.input(node, 1), ctx.input(node, 2))


def array_size(ctx: LowerCtx, node) -> None:
    _length(ctx, node, ctx.input(node, 1))


_LIST = In("the list", ANY, None)
_HANDLE = In("the TensorArray handle", ANY, None)
_FLOW = In("the flow", ANY, None)
_SHAPE = In("the element shape", INDEX, None)
_INDEX = In("the index", INDEX, None, scalar=True)
_INDICES = In("the indices", INDEX, None, ranks=(1,))
_ITEM = In("the item", ANY, None)
RULES = {
    "TensorListReserve": Lowering(list_reserve, spec(
        In("the element shape", INDEX, None, const=True),
        In("the number of elements", INDEX, None, const=True, scalar=True))),
    "TensorListFromTensor": Lowering(list_from_tensor, spec(_ITEM, _SHAPE)),
    "TensorListGetItem": Lowering(list_get_item, spec(_LIST, _INDEX, _SHAPE)),
    "TensorListSetItem": Lowering(list_set_item, spec(_LIST, _INDEX, _ITEM)),
    "TensorListStack": Lowering(list_stack, spec(_LIST, _SHAPE)),
    "TensorListGather": Lowering(list_gather, spec(_LIST, _INDICES, _SHAPE)),
    "TensorListLength": Lowering(list_length, spec(_LIST)),
    "TensorArrayV3": Lowering(array_v3, spec(
        In("the size", INDEX, None, const=True, scalar=True))),
    "TensorArrayScatterV3": Lowering(array_scatter, spec(_HANDLE, _INDICES, _ITEM, _FLOW)),
    "TensorArrayGatherV3": Lowering(array_gather, spec(_HANDLE, _INDICES, _FLOW)),
    "TensorArrayReadV3": Lowering(array_read, spec(_HANDLE, _INDEX, _FLOW)),
    "TensorArrayWriteV3": Lowering(array_write, spec(_HANDLE, _INDEX, _ITEM, _FLOW)),
    "TensorArraySizeV3": Lowering(array_size, spec(_HANDLE, _FLOW)),
}
