"""converter/lower/tensor_lists.py: TensorList ops and the TF1 TensorArrayV3 family as dense
tensors, straight-line here (tests/models/test_rnn_convert.py runs them inside real loops)."""

import numpy as np
import pytest

from edgelite.errors import UnsupportedOpError

from .lowering import F32, I32, check, floats, graph, rng, run

COVERED = {"TensorListReserve", "TensorListFromTensor", "TensorListGetItem",
           "TensorListSetItem", "TensorListStack", "TensorListGather", "TensorListLength",
           "TensorArrayV3", "TensorArrayScatterV3", "TensorArrayGatherV3", "TensorArrayReadV3",
           "TensorArrayWriteV3", "TensorArraySizeV3"}


def _list_graph(index_input: bool):
    """x [3, 1, 4] as a list; item `i` replaced by y; item 2 read; the list stacked."""
    g = graph(x=(3, 1, 4), y=(1, 4), **({"i": ((), I32)} if index_input else {}))
    g.const("es", np.array([1, 4], np.int32))
    if not index_input:
        g.const("i", np.int32(1))
    g.const("two", np.int32(2))
    g.node("l", "TensorListFromTensor", ["x", "es"], element_dtype=F32, shape_type=I32)
    g.node("l2", "TensorListSetItem", ["l", "i", "y"], element_dtype=F32)
    g.node("item", "TensorListGetItem", ["l2", "two", "es"], element_dtype=F32)
    g.node("stacked", "TensorListStack", ["l2", "es"], element_dtype=F32, num_elements=3)
    return g


@pytest.mark.parametrize("index_input", [False, True], ids=["constant", "computed"])
def test_set_get_and_stack_a_list(index_input):
    r = rng()
    x, y = floats(r, 3, 1, 4), floats(r, 1, 4)
    feeds = {"x": x, "y": y, **({"i": np.int32(1)} if index_input else {})}
    want = x.copy()
    want[1] = y
    result = run(_list_graph(index_input), feeds, ["item", "stacked"])
    np.testing.assert_array_equal(result.outputs[0], x[2])
    np.testing.assert_array_equal(result.outputs[1], want)
    # the write is one DYNAMIC_UPDATE_SLICE of y given a leading dim at [i, 0, 0] (a
    # constant, or RESHAPE + CONCATENATION of a computed index)
    start = ["RESHAPE", "CONCATENATION"] if index_input else []
    assert result.ops == ["EXPAND_DIMS", *start, "DYNAMIC_UPDATE_SLICE", "GATHER"]


def test_reserve_gather_and_length():
    r = rng()
    y = floats(r, 1, 4)
    g = graph(y=(1, 4), i=((), I32))
    g.const("es", np.array([-1, 4], np.int32))  # an unknown batch: the batch size (1)
    g.const("n", np.int32(3))
    g.const("which", np.array([2, 0], np.int32))
    g.node("l", "TensorListReserve", ["es", "n"], element_dtype=F32, shape_type=I32)
    g.node("l2", "TensorListSetItem", ["l", "i", "y"], element_dtype=F32)
    g.node("picked", "TensorListGather", ["l2", "which", "es"], element_dtype=F32)
    g.node("len", "TensorListLength", ["l2"])
    g.node("lenf", "Cast", ["len"], SrcT=I32, DstT=F32)
    g.node("scaled", "Mul", ["picked", "lenf"], T=F32)
    want = np.zeros((2, 1, 4), np.float32)
    want[0] = y * 3  # item 2 was written, item 0 is still zeros
    # the length folds to 3 once shapes are known
    check(g, {"y": y, "i": np.int32(2)}, want, outputs=["scaled"], ops=[
        "EXPAND_DIMS", "RESHAPE", "CONCATENATION", "DYNAMIC_UPDATE_SLICE", "GATHER", "MUL"])


def _array_graph(scatter_indices=(0, 1, 2), dynamic_size=False):
    """TF1: x [3, 1, 4] scattered into a TensorArray, item 1 overwritten with y, item 0
    read, everything gathered back, the size used."""
    g = graph(x=(3, 1, 4), y=(1, 4))
    g.const("size", np.int32(3))
    g.const("where", np.array(scatter_indices, np.int32))
    g.const("one", np.int32(1))
    g.const("zero", np.int32(0))
    g.const("all", np.arange(3, dtype=np.int32))
    g.node("ta", "TensorArrayV3", ["size"], dtype=F32, dynamic_size=dynamic_size)
    node = g.gd.node[-1]
    for d in (1, 4):
        node.attr["element_shape"].shape.dim.add(size=d)
    g.node("scatter", "TensorArrayScatterV3", ["ta", "where", "x", "ta:1"], T=F32)
    g.node("write", "TensorArrayWriteV3", ["ta", "one", "y", "scatter"], T=F32)
    g.node("read", "TensorArrayReadV3", ["ta", "zero", "write"], dtype=F32)
    g.node("gathered", "TensorArrayGatherV3", ["ta", "all", "write"], dtype=F32)
    g.node("size_out", "TensorArraySizeV3", ["ta", "write"])
    g.node("sizef", "Cast", ["size_out"], SrcT=I32, DstT=F32)
    g.node("scaled", "Mul", ["gathered", "sizef"], T=F32)
    return g


def test_tensor_array_v3_family_without_flex():
    r = rng()
    x, y = floats(r, 3, 1, 4), floats(r, 1, 4)
    want = x.copy()
    want[1] = y
    result = run(_array_graph(), {"x": x, "y": y}, ["read", "scaled"])
    np.testing.assert_array_equal(result.outputs[0], x[0])
    np.testing.assert_allclose(result.outputs[1], want * 3, rtol=1e-6)
    # read and gather are GATHERs (the gather of all items too: its flow's shape is not
    # known while lowering), the size folds to 3
    assert result.ops == ["EXPAND_DIMS", "DYNAMIC_UPDATE_SLICE", "GATHER", "GATHER", "MUL"]


@pytest.mark.parametrize("case,message", [
    ("resize", r"grows the list \(resize_if_index_out_of_bounds\)"),
    ("dynamic", r"has dynamic_size=True \(the array grows\)"),
    ("scatter", r"scatters to indices other than 0\.\.size-1"),
    ("unknown_dims", r"element shape \[1, -1\] has unknown dims other than the batch"),
    ("unknown_rank", r"element shape has unknown rank"),
])
def test_lists_edgelite_cannot_hold_are_refused_in_one_line(case, message):
    x, y = np.zeros((3, 1, 4), np.float32), np.zeros((1, 4), np.float32)
    if case in ("dynamic", "scatter"):
        g = _array_graph(scatter_indices=(1, 0, 2), dynamic_size=case == "dynamic")
        feeds, outs = {"x": x, "y": y}, ["read"]
    else:
        g = graph(y=(1, 4))
        shape = {"unknown_dims": [-1, -1], "unknown_rank": -1}.get(case, [1, 4])
        g.const("es", np.array(shape, np.int32))
        g.const("n", np.int32(3))
        g.const("i", np.int32(0))
        g.node("l", "TensorListReserve", ["es", "n"], element_dtype=F32, shape_type=I32)
        g.node("l2", "TensorListSetItem", ["l", "i", "y"], element_dtype=F32,
               resize_if_index_out_of_bounds=case == "resize")
        g.node("s", "TensorListStack", ["l2", "es"], element_dtype=F32, num_elements=3)
        feeds, outs = {"y": y}, ["s"]
    with pytest.raises(UnsupportedOpError, match=r"^node '.*' \(Tensor\w+\): .*" + message):
        run(g, feeds, outs)
