"""spell_out_ellipsis: a StridedSlice's `...` becomes full-range entries, as TF's converter
writes it (no ellipsis_mask: STRIDED_SLICE version 6 is missing from LiteRT's reference
kernels), with the same values (tf.strided_slice's documented semantics)."""

import numpy as np
import pytest

from ..lower.lowering import F32, I32, check, floats, graph, rng
from ..lower.test_array_ops import strided_slice_reference

CASES = {  # TF slice: ((begin, end, strides, masks), (the same, spelled out on a rank-3 x))
    "x[..., 1:3]": (([0, 1], [0, 3], [1, 1], dict(ellipsis_mask=1)),
                    ([0, 0, 1], [0, 0, 3], [1, 1, 1], dict(begin_mask=3, end_mask=3))),
    "x[::-2, ..., ::-1]": (([0, 0, 0], [0, 0, 0], [-2, 1, -1],
                            dict(begin_mask=5, end_mask=5, ellipsis_mask=2)),
                           ([0, 0, 0], [0, 0, 0], [-2, 1, -1], dict(begin_mask=7, end_mask=7))),
    "x[..., 0]": (([0, 0], [0, 1], [1, 1], dict(ellipsis_mask=1, shrink_axis_mask=2)),
                  ([0, 0, 0], [0, 0, 1], [1, 1, 1], dict(begin_mask=3, end_mask=3,
                                                         shrink_axis_mask=4))),
    "x[1, ...]": (([1, 0], [2, 0], [1, 1], dict(ellipsis_mask=2, shrink_axis_mask=1)),
                  ([1, 0, 0], [2, 0, 0], [1, 1, 1], dict(begin_mask=6, end_mask=6,
                                                         shrink_axis_mask=1))),
    "x[1:, ..., 2:4, 0]": (([1, 0, 2, 0], [0, 0, 4, 1], [1, 1, 1, 1],
                            dict(end_mask=1, ellipsis_mask=2, shrink_axis_mask=8)),
                           None),  # 4 entries for 3 dims: the ellipsis stands for none
}
CASES["x[1:, ..., 2:4, 0]"] = (CASES["x[1:, ..., 2:4, 0]"][0],
                               ([1, 2, 0], [0, 4, 1], [1, 1, 1],
                                dict(end_mask=1, shrink_axis_mask=4)))


def _slice_graph(x, begin, end, strides, masks):
    g = graph(x=x.shape)
    for name, v in (("begin", begin), ("end", end), ("strides", strides)):
        g.const(name, np.array(v, np.int32))
    g.node("y", "StridedSlice", ["x", "begin", "end", "strides"], T=F32, Index=I32, **masks)
    return g


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_ellipsis_is_spelled_out(case):
    (begin, end, strides, masks), (w_begin, w_end, w_strides, w_masks) = CASES[case]
    x = floats(rng(), 4, 5, 6)
    result = check(_slice_graph(x, begin, end, strides, masks), {"x": x},
                   strided_slice_reference(x, begin, end, strides, **masks), ["STRIDED_SLICE"])
    (op,) = result.graph.ops
    assert [t.data.tolist() for t in op.inputs[1:]] == [w_begin, w_end, w_strides]
    assert op.options == {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0,
                          "new_axis_mask": 0, "shrink_axis_mask": 0, **w_masks}


def test_an_ellipsis_with_a_new_axis_is_kept():
    """x[..., newaxis]: this pass keeps the masks (version 6); TF's converter turns the new
    axis into a reshape, as spell_out_new_axes and collapse_strided_slices do."""
    x = floats(rng(), 4, 5, 6)
    masks = dict(ellipsis_mask=1, new_axis_mask=2)
    result = check(_slice_graph(x, [0, 0], [0, 0], [1, 1], masks), {"x": x},
                   x[..., np.newaxis], ["STRIDED_SLICE"],
                   passes=frozenset({"collapse_strided_slices", "spell_out_new_axes"}))
    assert result.graph.ops[0].options["ellipsis_mask"] == 1
    check(_slice_graph(x, [0, 0], [0, 0], [1, 1], masks), {"x": x}, x[..., np.newaxis],
          ["RESHAPE"])


def test_disabled_keeps_the_ellipsis():
    x = floats(rng(), 4, 5, 6)
    (begin, end, strides, masks), _ = CASES["x[..., 0]"]
    result = check(_slice_graph(x, begin, end, strides, masks), {"x": x}, x[..., 0],
                   ["STRIDED_SLICE"], passes=frozenset({"spell_out_ellipsis"}))
    assert result.graph.ops[0].options["ellipsis_mask"] == 1


def test_on_the_ir_with_shapes_to_infer():
    """x -> RELU -> x[..., 0]: the RELU's output shape is inferred first; same numbers."""
    from edgelite.converter.passes import spell_out_ellipsis

    from ..irgraph import input_graph, rand, run_ir, then

    g, x = input_graph((2, 5, 7))
    r = then(g, "RELU", [x], "relu")
    out = g.tensor("y", np.float32)
    g.add_op("STRIDED_SLICE", [r, g.const("b", np.array([0, 0], np.int32)),
                               g.const("e", np.array([0, 1], np.int32)),
                               g.const("s", np.array([1, 1], np.int32))], [out],
             dict(begin_mask=0, end_mask=0, ellipsis_mask=1, new_axis_mask=0,
                  shrink_axis_mask=2))
    g.outputs = [out]
    assert r.shape is None
    assert spell_out_ellipsis.run(g) == 1
    data = rand(2, 5, 7)
    np.testing.assert_array_equal(run_ir(g, data)[0], np.maximum(data, 0)[..., 0])
    (op,) = [op for op in g.ops if op.type == "STRIDED_SLICE"]
    assert (op.options["ellipsis_mask"], op.options["shrink_axis_mask"]) == (0, 4)
    assert op.inputs[2].data.tolist() == [0, 0, 1]
