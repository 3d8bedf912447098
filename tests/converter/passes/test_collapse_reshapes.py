"""collapse_reshapes on small graphs: exact op counts after, the same numbers before and after."""

import numpy as np

from edgelite.converter.export import export_tflite
from edgelite.converter.passes import collapse_reshapes
from edgelite.converter.shape_inference import infer_shapes
from edgelite.interpreter import Interpreter

from ..irgraph import check, input_graph, rand, then


def test_collapse_reshapes():
    g, x = input_graph((2, 3, 4))
    a = then(g, "RESHAPE", [x, g.const("s1", np.int32([6, 4]))], "a", new_shape=[6, 4])
    b = then(g, "RESHAPE", [a, g.const("s2", np.int32([24]))], "b", new_shape=[24])
    same = then(g, "RESHAPE", [b, g.const("s3", np.int32([24]))], "same", new_shape=[24])
    g.outputs = [then(g, "RELU", [same], "out")]
    check(g, collapse_reshapes.run, rand(2, 3, 4), 2, {"RELU": 1, "RESHAPE": 1})


def test_collapse_reshape_into_keep_dims_mean():
    g, x = input_graph((1, 4, 4, 8))
    m = then(g, "MEAN", [x, g.const("axes", np.int32([1, 2]))], "mean", keep_dims=False)
    g.outputs = [then(g, "RESHAPE", [m, g.const("s", np.int32([1, 1, 1, 8]))], "se",
                      new_shape=[1, 1, 1, 8])]
    check(g, collapse_reshapes.run, rand(1, 4, 4, 8), 1, {"MEAN": 1})
    assert g.ops[0].options["keep_dims"] is True and g.outputs[0].name == "se"


def test_arg_max_then_reshape_is_left_alone():
    # ARG_MAX reduces along a constant axis too, but has no keep_dims option to set.
    g, x = input_graph((2, 5))
    i = g.tensor("argmax", np.int32)
    g.add_op("ARG_MAX", [x, g.const("axis", np.int32([1]))], [i], {"output_type": 2})
    kept = g.tensor("kept", np.int32)
    g.add_op("RESHAPE", [i, g.const("s", np.int32([2, 1]))], [kept], {"new_shape": [2, 1]})
    g.outputs = [kept]
    check(g, collapse_reshapes.run, rand(2, 5), 0, {"ARG_MAX": 1, "RESHAPE": 1})


def test_squeeze_then_expand_dims_back_is_removed():
    # a Conv1D's SQUEEZE and the next Conv1D's EXPAND_DIMS on the same axis
    g, x = input_graph((1, 1, 8, 4))
    s = then(g, "SQUEEZE", [then(g, "RELU", [x], "r")], "squeeze", squeeze_dims=[1])
    e = then(g, "EXPAND_DIMS", [s, g.const("axis", np.int32(1))], "expand")
    g.outputs = [then(g, "RELU6", [e], "out")]
    check(g, collapse_reshapes.run, rand(1, 1, 8, 4), 1, {"RELU": 1, "RELU6": 1})


def test_squeeze_then_expand_dims_elsewhere_is_one_reshape():
    # the conv's SQUEEZE of axis 1, a MaxPool1D's EXPAND_DIMS of axis 2
    g, x = input_graph((1, 1, 8, 4))
    s = then(g, "SQUEEZE", [then(g, "RELU", [x], "r")], "squeeze", squeeze_dims=[1])
    e = then(g, "EXPAND_DIMS", [s, g.const("axis", np.int32(2))], "expand")
    g.outputs = [then(g, "RELU6", [e], "out")]
    check(g, collapse_reshapes.run, rand(1, 1, 8, 4), 1, {"RELU": 1, "RELU6": 1, "RESHAPE": 1})
    reshape = g.ops[1]
    assert reshape.options["new_shape"] == [1, 8, 1, 4] and reshape.outputs[0].name == "expand"


def test_merged_reshape_keeps_a_dynamic_batch():
    g, x = input_graph((2, 1, 8, 4))
    x.shape_signature = (-1, 1, 8, 4)  # a dynamic batch: -1 on axis 0
    s = then(g, "SQUEEZE", [then(g, "RELU", [x], "r")], "squeeze", squeeze_dims=[1])
    e = then(g, "EXPAND_DIMS", [s, g.const("axis", np.int32(2))], "expand")
    g.outputs = [then(g, "RELU6", [e], "out")]
    infer_shapes(g)
    assert collapse_reshapes.run(g) == 1
    assert g.ops[1].options["new_shape"] == [-1, 8, 1, 4]
    interp = Interpreter(model_content=export_tflite(g))
    interp.resize_tensor_input(0, [3, 1, 8, 4])
    interp.allocate_tensors()
    x3 = rand(3, 1, 8, 4)
    interp.set_tensor(interp.get_input_details()[0]["index"], x3)
    interp.invoke()
    out = interp.get_tensor(interp.get_output_details()[0]["index"])
    np.testing.assert_array_equal(out, np.clip(x3, 0, 6).reshape(3, 8, 1, 4))
