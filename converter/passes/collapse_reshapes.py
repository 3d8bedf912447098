"""Remove RESHAPEs that do nothing and merge reshape chains.

  RESHAPE to the input's own shape         -> removed
  RESHAPE(RESHAPE(x))                       -> one RESHAPE of x
  two of RESHAPE / SQUEEZE / EXPAND_DIMS in a row (a Conv1D's SQUEEZE, the next layer's
  EXPAND_DIMS)                              -> nothing if they give x's shape back, else one
                                               RESHAPE (-1 for a dynamic batch on axis 0)
  MEAN/SUM/REDUCE_MAX(keep_dims=False) then RESHAPE that re-inserts the reduced axes as 1s
                                            -> the reduction with keep_dims=True
(Keras' GlobalAveragePooling2D(keepdims=True) in squeeze-excite blocks is written as the
last pattern.)
"""

from __future__ import annotations

import numpy as np

from ...interpreter.kernels import OPS
from ...schema import ops as schema_ops
from ..ir import Graph, Op
from ..shape_inference import infer_shapes
from .patterns import sole_producer

# Reductions over constant axes with a keep_dims option (ARG_MAX / CUMSUM reduce or scan
# along axes too, but have no keep_dims).
REDUCTIONS = frozenset(n for n, op in OPS.items() if op.reduction
                       and "keep_dims" in schema_ops.default_options(n))


def _set_shape(graph: Graph, op, shape) -> None:
    op.inputs[1] = graph.const(f"{op.outputs[0].name}/shape", np.asarray(shape, np.int32))
    op.options["new_shape"] = [int(d) for d in shape]


def _keep_dims_shape(red, x_shape) -> tuple[int, ...]:
    axes = {int(a) % len(x_shape) for a in np.asarray(red.inputs[1].data).reshape(-1)}
    return tuple(1 if i in axes else d for i, d in enumerate(x_shape))


LAYOUT = frozenset(n for n, op in OPS.items() if op.reshapes)  # RESHAPE, SQUEEZE, EXPAND_DIMS


def _dynamic(graph: Graph) -> bool:
    """A graph input with a dynamic dimension (inner tensors carry no signature)."""
    return any(-1 in (t.shape_signature or ()) for t in graph.inputs)


def _keeps_batch(op) -> bool:
    """A SQUEEZE / EXPAND_DIMS that leaves axis 0 where it is."""
    rank = len(op.inputs[0].shape)
    if op.type == "SQUEEZE":
        dims = [int(d) % rank for d in op.options.get("squeeze_dims") or []]
        return bool(dims) and 0 not in dims
    if op.type == "EXPAND_DIMS" and op.inputs[1].is_const:
        return int(np.asarray(op.inputs[1].data).reshape(-1)[0]) % (rank + 1) != 0
    return False


def _merge_layout_pair(graph: Graph, op) -> bool:
    """SQUEEZE / EXPAND_DIMS after another layout op read only by it: both removed when
    they give the first one's input shape back, else one RESHAPE."""
    inner = sole_producer(graph, op.inputs[0], LAYOUT)
    if inner is None:
        return False
    src, y = inner.inputs[0], op.outputs[0]
    if src.shape is None or y.shape is None:
        return False
    if tuple(src.shape) == tuple(y.shape) and not (
            graph.is_output(y) and (graph.is_output(src) or graph.is_input(src))):
        graph.remove_op(inner)
        graph.bypass(op, src)
        return True
    shape = np.asarray(y.shape, np.int32)
    if _dynamic(graph):
        # a dynamic batch: only ops that keep it on axis 0, written -1
        if not (_keeps_batch(inner) and _keeps_batch(op)):
            return False
        shape[0] = -1
    reshape = Op("RESHAPE", [src, graph.const(f"{y.name}/shape", shape)], [y],
                 {"new_shape": [int(d) for d in shape]}, op.name, origin=op.origin)
    graph.replace_op(op, reshape)
    graph.remove_op(inner)
    return True


def run(graph: Graph) -> int:
    n = 0
    for op in graph.ops_of("SQUEEZE", "EXPAND_DIMS"):
        if op in graph.ops:
            n += _merge_layout_pair(graph, op)
    reshapes = graph.ops_of("RESHAPE")
    if not reshapes:
        return n
    if any(t.shape is None for op in reshapes for t in (op.inputs[0], op.outputs[0])):
        infer_shapes(graph)
    dynamic = _dynamic(graph)  # merged reshapes get static shapes: only RESHAPE chains then
    for op in reshapes:
        x, y = op.inputs[0], op.outputs[0]
        if x.shape is None or y.shape is None:
            continue  # (a subgraph whose caller's shapes are not known yet)
        if x.shape == y.shape and not (graph.is_output(y) and graph.is_output(x)):
            graph.bypass(op, x)
            n += 1
            continue
        inner = sole_producer(graph, x, {"RESHAPE"} if dynamic else LAYOUT)
        if inner is not None:
            op.inputs[0] = inner.inputs[0]
            _set_shape(graph, op, y.shape)
            graph.remove_op(inner)
            n += 1
            continue
        red = sole_producer(graph, x, REDUCTIONS)
        if red is not None and not red.options.get("keep_dims") and red.inputs[1].is_const \
                and red.inputs[0].shape is not None \
                and _keep_dims_shape(red, red.inputs[0].shape) == tuple(y.shape):
            red.options["keep_dims"] = True
            red.outputs[0].shape = tuple(y.shape)
            graph.bypass(op, red.outputs[0])
            n += 1
    return n
