"""fold_flatten_into_fc on small graphs: exact op counts after, the same numbers before and
after (and in LiteRT), and what it leaves alone."""

import numpy as np
import pytest

from edgelite.converter.export import export_tflite
from edgelite.converter.ir import Graph
from edgelite.converter.passes import fold_flatten_into_fc, run_passes
from edgelite.converter.shape_inference import infer_shapes

from ..irgraph import NONE, check, rand, then


def flatten_fc(x_shape, flat_shape, units=5, keep_num_dims=False):
    g = Graph()
    x = g.tensor("x", np.float32, x_shape)
    g.inputs = [x]
    pooled = then(g, "RELU", [x], "pool")
    flat = then(g, "RESHAPE", [pooled, g.const("shape", np.int32(flat_shape))], "flatten",
                new_shape=list(flat_shape))
    fc = then(g, "FULLY_CONNECTED", [flat, g.const("w", rand(units, flat_shape[-1])),
                                     g.const("b", rand(units))], "dense",
              keep_num_dims=keep_num_dims, **NONE)
    g.outputs = [fc]
    return g, flat


@pytest.mark.parametrize("x_shape,flat_shape", [
    ((2, 1, 1, 16), (2, 16)),     # a DS-CNN's pooled features
    ((2, 3, 4), (6, 4)),          # rows of K already
    ((2, 3, 4), (-1, 4)),
])
def test_flatten_before_fully_connected_is_dropped(x_shape, flat_shape):
    g, _ = flatten_fc(x_shape, flat_shape)
    check(g, fold_flatten_into_fc.run, rand(*x_shape), 1, {"FULLY_CONNECTED": 1, "RELU": 1})
    assert g.ops[1].inputs[0].name == "pool"


def test_left_alone_with_keep_num_dims_other_readers_or_a_new_last_axis():
    g, _ = flatten_fc((2, 3, 4), (2, 3, 4), keep_num_dims=True)
    infer_shapes(g)
    assert fold_flatten_into_fc.run(g) == 0
    g, flat = flatten_fc((3, 1, 1, 4), (3, 4))
    g.outputs = [g.outputs[0], flat]
    infer_shapes(g)
    assert fold_flatten_into_fc.run(g) == 0
    g, _ = flatten_fc((3, 2, 2, 4), (3, 16))  # Flatten of a spatial map: TF keeps it too
    infer_shapes(g)
    assert fold_flatten_into_fc.run(g) == 0


def test_dynamic_batch_still_resizes(litert):
    g, _ = flatten_fc((2, 1, 1, 16), (-1, 16))
    g.inputs[0].shape_signature = (-1, 1, 1, 16)
    infer_shapes(g)
    run_passes(g)
    assert g.op_counts() == {"FULLY_CONNECTED": 1, "RELU": 1}
    w, b = (t.data for t in g.ops[1].inputs[1:])
    x = rand(4, 1, 1, 16)
    interp = litert.Interpreter(model_content=export_tflite(g))
    interp.resize_tensor_input(0, [4, 1, 1, 16])
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    out = interp.get_tensor(interp.get_output_details()[0]["index"])
    np.testing.assert_allclose(out, np.maximum(x, 0).reshape(4, 16) @ w.T + b, rtol=1e-5,
                               atol=1e-5)


def test_switch():
    g, _ = flatten_fc((2, 1, 1, 16), (2, 16))
    infer_shapes(g)
    run_passes(g, disabled={"fold_flatten_into_fc"})
    assert g.op_counts() == {"FULLY_CONNECTED": 1, "RELU": 1, "RESHAPE": 1}
