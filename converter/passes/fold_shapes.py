"""Fold shape computations (Shape -> StridedSlice -> Pack -> Reshape) once input shapes are known.

Keras writes `tf.reshape(x, [tf.shape(x)[0], -1])` and friends. Walking the ops in order with
every shape known, SHAPE of a tensor with a static shape is a constant, and whatever is
computed only from constants folds (fold_constants.try_fold) -- so RESHAPE, TRANSPOSE_CONV
and FILL end up with constant shape operands, as TFLite kernels need.
"""

from __future__ import annotations

import numpy as np

from .. import value_shapes
from ..shape_inference import infer_op_shapes
from ..ir import PSEUDO_OPS, Graph
from .fold_constants import try_fold


def run(graph: Graph) -> int:
    if not graph.has_ops("SHAPE"):
        return 0
    n = 0
    for op in list(graph.ops):
        if op.type == "SHAPE" and op.inputs[0].shape is not None \
                and not graph.is_output(op.outputs[0]) and not _values_tell(graph, op.inputs[0]):
            out = op.outputs[0]
            out.data = np.asarray(op.inputs[0].shape, dtype=out.dtype)
            out.shape = tuple(out.data.shape)
            graph.remove_op(op)
            n += 1
        elif try_fold(graph, op):
            n += 1
        elif any(t.shape is None for t in op.outputs) and op.type != "CUSTOM" \
                and op.type not in PSEUDO_OPS:
            infer_op_shapes(op)
    return n


def _values_tell(graph: Graph, t) -> bool:
    """A tensor with a dim only values tell (WHERE's rows): its shape is not a constant."""
    return t in value_shapes.VALUE_DIMS and t.shape_signature is not None \
        and -1 in t.shape_signature
