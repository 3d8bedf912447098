"""converter/lower/context.py: what a lowering rule reads -- typed attributes, NHWC pairs,
axes -- and the one-line errors naming the node (the rules themselves: the other modules
here, through lowering.check)."""

import numpy as np
import pytest

from edgelite.converter.lower.context import (attr_bool, attr_dtype, attr_float, attr_int,
                                              attr_ints, attr_shape, attr_str, attr_tensor,
                                              axis_in_rank, fail, nhwc_pair, node_prefix,
                                              require_nhwc)
from edgelite.errors import GraphError, ShapeError, UnsupportedOpError

from ..tfgraph import GraphBuilder


def _node(**attrs):
    g = GraphBuilder()
    g.node("conv", "Conv2D", ["x", "w"], **attrs)
    return g.gd.node[0]


def test_typed_attributes():
    node = _node(T=np.dtype(np.float32), strides=[1, 2, 3, 1], padding="SAME", alpha=0.5,
                 flag=True, count=7, value=np.int32([[1, 2]]))
    assert attr_int(node, "count") == 7 and attr_float(node, "alpha") == 0.5
    assert attr_bool(node, "flag") is True and attr_str(node, "padding") == "SAME"
    assert attr_ints(node, "strides") == [1, 2, 3, 1] and attr_dtype(node) == np.float32
    np.testing.assert_array_equal(attr_tensor(node), [[1, 2]])
    assert attr_int(node, "absent", 4) == 4 and attr_shape(node, "shape", None) is None
    assert attr_dtype(node, "absent", np.int8) == np.int8


def test_attribute_errors_name_the_node():
    node = _node(count=7)
    assert node_prefix(node) == "node 'conv' (Conv2D)"
    with pytest.raises(GraphError, match=r"^node 'conv' \(Conv2D\): lacks attribute T$"):
        attr_dtype(node)
    with pytest.raises(GraphError, match=r"attribute count should be of kind 'f', found 'i'$"):
        attr_float(node, "count")
    err = fail(UnsupportedOpError, node, "no rule")
    assert isinstance(err, UnsupportedOpError) and str(err) == "node 'conv' (Conv2D): no rule"


def test_nhwc_pairs_and_layout():
    assert nhwc_pair(_node(strides=[1, 2, 3, 1]), "strides") == (2, 3)
    assert nhwc_pair(_node(), "dilations") == (1, 1)
    with pytest.raises(ShapeError, match=r"strides=\[2, 1, 1, 1\] is not supported; only "
                                         r"\[1, h, w, 1\]"):
        nhwc_pair(_node(strides=[2, 1, 1, 1]), "strides")
    require_nhwc(_node(data_format="NHWC"))
    with pytest.raises(UnsupportedOpError, match=r"uses data_format 'NCHW'; TFLite kernels "
                                                 r"are NHWC"):
        require_nhwc(_node(data_format="NCHW"))


def test_axis_in_rank():
    node = _node()
    assert axis_in_rank(node, -3, 3) == -3 and axis_in_rank(node, 3, 3, extra=1) == 3
    assert axis_in_rank(node, 99, None) == 99  # unknown rank: checked later
    with pytest.raises(ShapeError, match=r"split_dim 3 is out of range for rank 3 "
                                         r"\(valid: -3 to 2\)$"):
        axis_in_rank(node, 3, 3, "split_dim")
