"""fold_dense_reshapes on small graphs: Keras' Tensordot dense layer becomes one
FULLY_CONNECTED(keep_num_dims); exact op counts after, the same numbers before and after."""

import numpy as np
import pytest

from edgelite.converter.passes import fold_dense_reshapes
from edgelite.converter.shape_inference import infer_shapes

from ..irgraph import NONE, check, input_graph, rand, then


def _tensordot(g, x, k=6, n=5, identity=True, back=None):
    """Dense over x's last axis as tf.tensordot writes it."""
    rows = int(np.prod(x.shape[:-1]))
    if identity:
        x = then(g, "TRANSPOSE", [x, g.const("perm", np.arange(len(x.shape), dtype=np.int32))],
                 "transpose")
    flat = then(g, "RESHAPE", [x, g.const("flat", np.int32([rows, k]))], "reshape",
                new_shape=[rows, k])
    y = then(g, "FULLY_CONNECTED", [flat, g.const("w", rand(n, k)), g.const("b", rand(n))],
             "matmul", keep_num_dims=False, **NONE)
    back = back or list(g.inputs[0].shape[:-1]) + [n]
    return then(g, "RESHAPE", [y, g.const("back", np.int32(back))], "dense", new_shape=back)


@pytest.mark.parametrize("identity", [True, False])
def test_tensordot_becomes_one_fully_connected(identity):
    g, x = input_graph((2, 3, 6))
    g.outputs = [then(g, "RELU", [_tensordot(g, x, identity=identity)], "out")]
    infer_shapes(g)
    check(g, fold_dense_reshapes.run, rand(2, 3, 6), 2 if identity else 1,
          {"FULLY_CONNECTED": 1, "RELU": 1})
    fc = next(op for op in g.ops if op.type == "FULLY_CONNECTED")
    assert fc.options["keep_num_dims"] is True and fc.inputs[0] is x
    assert fc.outputs[0].name == "dense"


def test_a_reshape_to_other_rows_is_left_alone():
    """The output is reshaped to another layout than x's leading dims: keep it."""
    g, x = input_graph((2, 3, 6))
    g.outputs = [_tensordot(g, x, identity=False, back=[3, 2, 5])]
    infer_shapes(g)
    check(g, fold_dense_reshapes.run, rand(2, 3, 6), 0,
          {"FULLY_CONNECTED": 1, "RESHAPE": 2})


def test_an_identity_transpose_that_is_an_output_stays():
    g, x = input_graph((2, 3))
    g.outputs = [then(g, "TRANSPOSE", [x, g.const("perm", np.int32([0, 1]))], "t")]
    check(g, fold_dense_reshapes.run, rand(2, 3), 0, {"TRANSPOSE": 1})
