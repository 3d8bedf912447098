"""fold_shapes on small graphs: exact op counts after, the same numbers before and after."""

import numpy as np

from edgelite.converter.passes import fold_shapes

from ..irgraph import input_graph, rand, run_ir, then


def test_fold_shapes_collapses_dynamic_reshape():
    g, x = input_graph((1, 4, 6))
    shape = then(g, "SHAPE", [x], "shape", out_type=2)
    shape.dtype = np.dtype(np.int32)
    batch = then(g, "STRIDED_SLICE", [shape, g.const("b", np.int32([0])),
                                      g.const("e", np.int32([1])), g.const("s", np.int32([1]))],
                 "batch", begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                 shrink_axis_mask=1)
    batch.dtype = np.dtype(np.int32)
    new_shape = then(g, "PACK", [batch, g.const("m1", np.int32(-1))], "new_shape",
                     values_count=2, axis=0)
    new_shape.dtype = np.dtype(np.int32)
    g.outputs = [then(g, "RESHAPE", [x, new_shape], "flat")]
    assert fold_shapes.run(g) == 3
    assert g.op_counts() == {"RESHAPE": 1}
    np.testing.assert_array_equal(g.ops[0].inputs[1].data, [1, -1])
    xv = rand(1, 4, 6)
    np.testing.assert_array_equal(run_ir(g, xv)[0], xv.reshape(1, -1))
