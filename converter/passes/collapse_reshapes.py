"""Remove RESHAPEs that do nothing and merge reshape chains.

  RESHAPE to the input's own shape         -> removed
  RESHAPE(RESHAPE(x))                       -> one RESHAPE of x (the inner one may be an
                                               EXPAND_DIMS or a SQUEEZE)
  MEAN/SUM/REDUCE_MAX(keep_dims=False) then RESHAPE that re-inserts the reduced axes as 1s
                                            -> the reduction with keep_dims=True
(Keras' GlobalAveragePooling2D(keepdims=True) in squeeze-excite blocks is written as the
last pattern.)
"""

from __future__ import annotations

import numpy as np

from ...interpreter.kernels import OPS
from ...schema import ops as schema_ops
from ..ir import Graph
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


def run(graph: Graph) -> int:
    reshapes = [op for op in graph.ops if op.type == "RESHAPE"]
    if not reshapes:
        return 0
    if any(t.shape is None for op in reshapes for t in (op.inputs[0], op.outputs[0])):
        infer_shapes(graph)
    n = 0
    for op in reshapes:
        x, y = op.inputs[0], op.outputs[0]
        if x.shape is None or y.shape is None:
            continue  # (a subgraph whose caller's shapes are not known yet)
        if x.shape == y.shape and not (graph.is_output(y) and graph.is_output(x)):
            graph.bypass(op, x)
            n += 1
            continue
        inner = sole_producer(graph, x, {"RESHAPE", "EXPAND_DIMS", "SQUEEZE"})
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
