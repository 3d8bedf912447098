"""A TRANSPOSE that only moves axes of size 1 becomes a RESHAPE, as TF's converter writes it.

    TRANSPOSE(x [1, T, F], perm [1, 0, 2]) -> RESHAPE(x, [T, 1, F])

When the permutation keeps the axes longer than 1 in their order, the elements stay in
memory order and only the shape changes (TF: ConvertTrivialTransposeOpToReshapeOp,
compiler/mlir/lite/transforms/optimize_patterns.td). Keras' RNN layers transpose their
[batch, time, features] input to time-major this way; as a RESHAPE it merges with the
reshapes around it (collapse_reshapes). A tensor with a dimension known only at run time
(-1 in its shape signature, e.g. a dynamic batch) keeps its TRANSPOSE.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph


def _moves_only_unit_axes(shape, perm) -> bool:
    longer = [p for p in perm if shape[p] != 1]
    return longer == sorted(longer)


def run(graph: Graph) -> int:
    n = 0
    for op in graph.ops_of("TRANSPOSE"):
        x, perm, y = op.inputs[0], op.inputs[1], op.outputs[0]
        if not perm.is_const or x.shape is None or y.shape is None:
            continue
        order = [int(p) for p in np.asarray(perm.data).reshape(-1)]
        dynamic = x.shape_signature is not None and -1 in x.shape_signature
        if dynamic or sorted(order) != list(range(len(x.shape))) or \
                not _moves_only_unit_axes(x.shape, order):
            continue
        shape = [int(d) for d in y.shape]
        op.type = "RESHAPE"
        op.inputs[1] = graph.const(f"{y.name}/shape", np.asarray(shape, np.int32))
        op.options = {"new_shape": shape}
        n += 1
    return n
