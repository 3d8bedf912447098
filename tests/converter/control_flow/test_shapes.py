"""control_flow/shapes.py: shapes through WHILE bodies, loop-carried shapes that change."""

import numpy as np
import pytest

import edgelite
from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.errors import ShapeError

from ..tfgraph import GraphBuilder
from .library import F32, Function, call
from .models import run


def _growing_loop() -> GraphBuilder:
    """while i < 3: x = concat([x, x[:, :1] * 2], axis 1): x's second dim grows by one."""
    g = GraphBuilder()
    g.placeholder("x", [1, 2])
    g.const("zero", np.int32(0))
    cond = Function(g, "cond", {"i": np.int32, "x": F32}, {"out": "less:z:0"})
    cond.const("limit", np.int32(3))
    cond.node("less", "Less", ["i", "limit:output:0"], T=np.dtype(np.int32))
    body = Function(g, "body", {"i": np.int32, "x": F32}, {"i2": "inc:z:0", "x2": "cat:output:0"})
    body.const("one", np.int32(1))
    body.const("begin", np.array([0, 0], np.int32))
    body.const("size", np.array([1, 1], np.int32))
    body.const("two", np.float32(2))
    body.const("axis", np.int32(1))
    body.node("inc", "AddV2", ["i", "one:output:0"], T=np.dtype(np.int32))
    body.node("first", "Slice", ["x", "begin:output:0", "size:output:0"], T=F32,
              Index=np.dtype(np.int32))
    body.node("dbl", "Mul", ["first:output:0", "two:output:0"], T=F32)
    body.node("cat", "ConcatV2", ["x", "dbl:z:0", "axis:output:0"], T=F32, N=2,
              Tidx=np.dtype(np.int32))
    call(g, "loop", "StatelessWhile", ["zero", "x"], cond="cond", body="body")
    g.node("y", "Identity", ["loop:1"], T=F32)
    return g


def test_a_loop_carried_shape_that_grows_is_dynamic():
    result = convert_detailed(_growing_loop().bytes(), ConvertOptions(outputs=["y"]))
    loop = result.graph.ops[0]
    assert loop.type == "WHILE"
    assert loop.outputs[1].shape_signature == (1, -1)
    body = loop.subgraphs["body"]
    assert body.inputs[1].shape_signature == (1, -1)
    assert body.outputs[1].shape_signature == (1, -1)
    x = np.array([[1.5, -1.0]], np.float32)
    for runtime in ("litert", "edgelite"):
        y = run(result.model, {"x": x}, runtime)["y"]
        np.testing.assert_array_equal(y, [[1.5, -1.0, 3.0, 3.0, 3.0]])


def test_a_loop_variable_changing_rank_is_refused():
    g = _growing_loop()
    body = next(f for f in g.gd.library.function if f.signature.name == "body")
    n = body.node_def.add(name="up", op="ExpandDims", input=["x", "axis:output:0"])
    n.attr["T"].type = 1
    n.attr["Tdim"].type = 3
    body.ret["x2"] = "up:output:0"
    with pytest.raises(ShapeError, match=r"loop variable .* changes rank \(\[1, 2\] -> "
                       r"\[1, 1, 2\]\) between iterations"):
        edgelite.convert(g.bytes(), outputs=["y"])
