"""index_arithmetic: within one TF node's ops, the float arithmetic that computes an index
(a path into a float -> int32 CAST, and what reads only that) stays float in int8; the ops
mixing it with other data, and every other node's ops, are quantized as usual."""

import numpy as np

from edgelite.converter.ir import Graph
from edgelite.converter.quantize import QuantizeOptions, quantize
from edgelite.converter.quantize.index_arithmetic import index_arithmetic
from edgelite.converter.shape_inference import infer_shapes

from ..irgraph import NONE


def _op(g: Graph, node: str, type_: str, inputs, out: str, dtype=np.float32, **options):
    t = g.tensor(out, dtype)
    g.add_op(type_, inputs, [t], options or None, name=node)
    return t


def _sampler() -> Graph:
    """Node "sample": p = x * 3 + 1 (from the input x), index = CAST(FLOOR(p)), weight
    p - FLOOR(p), outside = p > 5; the weight scales GATHER(table, index) (the node's data).
    Node "scaled": a plain MUL of x, then a TF Cast node of it."""
    g = Graph()
    x = g.tensor("x", np.float32, (1, 4))
    table = g.tensor("table", np.float32, (6, 4))
    g.inputs = [x, table]
    p = _op(g, "sample", "ADD", [_op(g, "sample", "MUL", [x, g.const("three", np.float32(3))],
                                     "p3", **NONE), g.const("one", np.float32(1))], "p", **NONE)
    down = _op(g, "sample", "FLOOR", [p], "down")
    index = _op(g, "sample", "CAST", [down], "index", np.int32)
    weight = _op(g, "sample", "SUB", [p, down], "weight", **NONE)
    outside = _op(g, "sample", "GREATER", [p, g.const("five", np.float32(5))], "outside",
                  np.bool_)
    rows = _op(g, "sample", "GATHER", [table, index], "rows", axis=0)
    picked = _op(g, "sample", "MUL", [rows, weight], "picked", **NONE)
    scaled = _op(g, "scaled", "MUL", [x, g.const("two", np.float32(2))], "scaled", **NONE)
    cast = _op(g, "Cast", "CAST", [scaled], "cast", np.int32)
    g.outputs = [picked, outside, cast]
    infer_shapes(g)
    return g


def test_the_index_path_and_its_companions_are_kept():
    """(the lone Cast node's CAST counts too: it has no integer kernel anyway)"""
    assert index_arithmetic(_sampler()) == {"p3", "p", "down", "index", "weight", "outside",
                                            "cast"}


def test_in_int8_the_positions_stay_float_and_the_data_is_quantized():
    g = _sampler()
    quantize(g, QuantizeOptions(input_ranges={"x": (0.0, 1.6), "table": (-1.0, 1.0)},
                                default_range=(-8.0, 8.0)))
    f32, i8, i32 = np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.int32)
    assert [(op.type, op.name, op.outputs[0].dtype) for op in g.ops
            if op.type not in ("QUANTIZE", "DEQUANTIZE")] == [
        ("MUL", "sample", f32), ("ADD", "sample", f32), ("FLOOR", "sample", f32),
        ("CAST", "sample", i32), ("SUB", "sample", f32), ("GREATER", "sample", np.bool_),
        ("GATHER", "sample", i8), ("MUL", "sample", i8),  # the weight quantized for it
        ("MUL", "scaled", i8), ("CAST", "Cast", i32)]
