"""spell_out_new_axes: a StridedSlice's new axes become a RESHAPE in front of it, as TF's
converter writes it (no new_axis_mask: STRIDED_SLICE version 6 is missing from LiteRT's
reference kernels, so such a file does not load there), with the same values
(tf.strided_slice's documented semantics)."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, QuantizeOptions, convert_detailed
from edgelite.interpreter.loader.model import load_model
from tests.support import run_edgelite, run_litert

from ..lower.lowering import check, floats, rng
from ..lower.test_array_ops import strided_slice_reference
from .test_spell_out_ellipsis import _slice_graph

CASES = {  # TF slice on a [4, 5, 6] x: (begin, end, strides, masks), exported op types
    "x[:, newaxis, 1:4]": (([0, 0, 1], [0, 0, 4], [1, 1, 1], dict(begin_mask=1, end_mask=1,
                                                                  new_axis_mask=2)),
                           ["RESHAPE", "STRIDED_SLICE"]),
    "x[:, newaxis, :]": (([0, 0, 0], [0, 0, 0], [1, 1, 1], dict(begin_mask=5, end_mask=5,
                                                                new_axis_mask=2)),
                         ["RESHAPE"]),
    "x[newaxis, ..., 0]": (([0, 0, 0], [0, 0, 1], [1, 1, 1], dict(ellipsis_mask=2,
                                                                  new_axis_mask=1,
                                                                  shrink_axis_mask=4)),
                           ["RESHAPE", "STRIDED_SLICE"]),
    "x[1:3, newaxis, ::-2, newaxis]": (([1, 0, 0, 0], [3, 0, 0, 0], [1, 1, -2, 1],
                                        dict(begin_mask=4, end_mask=4, new_axis_mask=10)),
                                       ["RESHAPE", "STRIDED_SLICE"]),
    # bit 1 is both new axis and shrink: the new axis wins (TF's BuildDenseSpec)
    "x[-1, newaxis]": (([-1, 0], [0, 0], [1, 1], dict(new_axis_mask=2, shrink_axis_mask=3)),
                       ["RESHAPE", "STRIDED_SLICE"]),
}


def _no_new_axes(model: bytes) -> None:
    for sg in load_model(model).subgraphs:
        slices = [op for op in sg.operators if op.name == "STRIDED_SLICE"]
        assert not any(op.options["new_axis_mask"] or op.options["ellipsis_mask"]
                       for op in slices)


@pytest.mark.parametrize("case", sorted(CASES))
def test_new_axes_become_a_reshape(case):
    (begin, end, strides, masks), ops = CASES[case]
    x = floats(rng(), 4, 5, 6)
    want = strided_slice_reference(x, begin, end, strides, **masks)
    if case == "x[-1, newaxis]":
        assert want.shape == (1, 5, 6)
    result = check(_slice_graph(x, begin, end, strides, masks), {"x": x}, want, ops)
    _no_new_axes(result.model)
    # the file loads in LiteRT's reference kernels and gives the same numbers
    np.testing.assert_array_equal(run_litert(result.model, [x], "reference")[0], want)


def test_disabled_keeps_the_new_axis():
    (begin, end, strides, masks), _ = CASES["x[:, newaxis, 1:4]"]
    x = floats(rng(), 4, 5, 6)
    result = check(_slice_graph(x, begin, end, strides, masks), {"x": x},
                   x[:, np.newaxis, 1:4], ["STRIDED_SLICE"],
                   passes=frozenset({"spell_out_new_axes"}))
    assert result.graph.ops[0].options["new_axis_mask"] == 2


def test_a_dynamic_batch_is_minus_one_in_the_reshape():
    """Keras' `mask[:, None, :]` on a [None, 5, 6] input: RESHAPE [-1, 1, 5, 6], then the
    int8 model runs bit-exact in LiteRT's reference kernels (it would not load with the
    new axis) on each of three samples."""
    x = floats(rng(), 3, 5, 6)
    g = _slice_graph(x[:1], [0, 0, 1], [0, 0, 4], [1, 1, 1],
                     dict(begin_mask=1, end_mask=1, new_axis_mask=2))
    g.gd.node[0].attr["shape"].shape.dim[0].size = -1
    result = convert_detailed(g.bytes(), ConvertOptions(
        outputs=["y"], quantize=QuantizeOptions(calib={"x": x[:, None]})))
    _no_new_axes(result.model)
    reshape = [op for op in result.graph.ops if op.type == "RESHAPE"]
    assert [op.options["new_shape"] for op in reshape] == [[-1, 1, 5, 6]]
    for i in range(3):
        feed = [x[i:i + 1]]
        ours = run_edgelite(result.model, feed, kernels="reference")
        np.testing.assert_array_equal(ours[0], run_litert(result.model, feed, "reference")[0])
        np.testing.assert_allclose(ours[0], x[i:i + 1, None, 1:4], atol=0.02)


def _ir_slice(signature):
    """x (shape [2, 5, 7], `signature`) -> x[:, newaxis, 1:] on the IR."""
    from ..irgraph import input_graph
    g, x = input_graph((2, 5, 7))
    x.shape_signature = signature
    out = g.tensor("y", np.float32, (2, 1, 4, 7))
    g.add_op("STRIDED_SLICE", [x, g.const("b", np.array([0, 0, 1], np.int32)),
                               g.const("e", np.array([0, 0, 0], np.int32)),
                               g.const("s", np.array([1, 1, 1], np.int32))], [out],
             dict(begin_mask=1, end_mask=5, ellipsis_mask=0, new_axis_mask=2,
                  shrink_axis_mask=0))
    g.outputs = [out]
    return g


def test_on_the_ir_one_dynamic_dim_at_most():
    from edgelite.converter.passes import spell_out_new_axes

    from ..irgraph import rand, run_ir
    g = _ir_slice((-1, 5, 7))
    assert spell_out_new_axes.run(g) == 1
    reshape, strided = g.ops
    assert reshape.options["new_shape"] == [-1, 1, 5, 7] and reshape.outputs[0].shape == \
        (2, 1, 5, 7)
    assert strided.inputs[1].data.tolist() == [0, 0, 1]
    data = rand(2, 5, 7)
    np.testing.assert_array_equal(run_ir(g, data)[0], data[:, None, 1:])
    assert spell_out_new_axes.run(_ir_slice((-1, -1, 7))) == 0   # two unknown dims: kept

