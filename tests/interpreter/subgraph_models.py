"""Small models with several subgraphs and resource variables (test helper).

Each builder returns .tflite bytes made with tflite_builder.ModelBuilder; subgraph 0 is
the entry. Subgraph indices in the options are the order the subgraphs are finished in.
"""

from __future__ import annotations

import numpy as np

from tests.interpreter.tflite_builder import ModelBuilder

RESOURCE = 13  # TensorType.RESOURCE
F32 = np.float32


def _while_main(b: ModelBuilder, specs, cond: int, body: int, name="main") -> list[int]:
    """Subgraph 0: inputs as ``specs`` [(name, shape, dtype, quant kwargs)], one WHILE,
    its outputs are the model's. Returns the input tensors."""
    ins = [b.tensor(n, s, d, **q) for n, s, d, q in specs]
    outs = [b.tensor(f"{n}_out", s, d, **q) for n, s, d, q in specs]
    b.op("WHILE", ins, outs, cond_subgraph_index=cond, body_subgraph_index=body)
    b.finish_subgraph(ins, outs, name)
    return ins


def _less_than_cond(b: ModelBuilder, specs, limit: int) -> int:
    """A cond subgraph: input 0 (int32 counter) < ``limit``."""
    ins = [b.tensor(f"c_{n}", s, d, **q) for n, s, d, q in specs]
    lim = b.const("limit", np.array(limit, np.int32))
    flag = b.tensor("keep_going", [], np.bool_)
    b.op("LESS", [ins[0], lim], [flag])
    return b.finish_subgraph(ins, [flag], "cond")


def counting_while(limit: int = 5, grow: bool = False) -> bytes:
    """(i, x) -> while i < limit: (i + 1, x + x) -- or, ``grow``, (i + 1, concat(x, x)):
    the carried tensor doubles in length per iteration (dynamic shapes)."""
    b = ModelBuilder()
    specs = [("i", [], np.int32, {}), ("x", [2], F32, {})]
    _while_main(b, specs, cond=1, body=2)
    _less_than_cond(b, specs, limit)
    i, x = b.tensor("b_i", [], np.int32), b.tensor("b_x", [2])
    i2, x2 = b.tensor("b_i2", [], np.int32), b.tensor("b_x2", [4] if grow else [2])
    b.op("ADD", [i, b.const("one", np.array(1, np.int32))], [i2])
    if grow:
        b.op("CONCATENATION", [x, x], [x2], axis=0)
    else:
        b.op("ADD", [x, x], [x2])
    return b.build([i, x], [i2, x2])


def grow_then_consume(limit: int = 3) -> bytes:
    """A growing WHILE whose outputs feed more ops of subgraph 0 (prepared at invoke):
    y = |x_out| * 2 and the sum over its length."""
    b = ModelBuilder()
    specs = [("i", [], np.int32, {}), ("x", [2], F32, {})]
    i, x = b.tensor("i", [], np.int32), b.tensor("x", [2])
    i_out, x_out = b.tensor("i_out", [], np.int32), b.tensor("x_out", [2])
    b.op("WHILE", [i, x], [i_out, x_out], cond_subgraph_index=1, body_subgraph_index=2)
    t, y = b.tensor("t", [2]), b.tensor("y", [2])
    total = b.tensor("total", [])
    b.op("ABS", [x_out], [t])
    b.op("MUL", [t, b.const("two", np.array([2.0], F32))], [y])
    b.op("SUM", [x_out, b.const("axes", np.array([0], np.int32))], [total])
    b.finish_subgraph([i, x], [y, total])
    _less_than_cond(b, specs, limit)
    bi, bx = b.tensor("b_i", [], np.int32), b.tensor("b_x", [2])
    bi2, bx2 = b.tensor("b_i2", [], np.int32), b.tensor("b_x2", [4])
    b.op("ADD", [bi, b.const("one", np.array(1, np.int32))], [bi2])
    half = b.tensor("half", [2])
    b.op("MUL", [bx, b.const("k", np.array([0.5], F32))], [half])
    b.op("CONCATENATION", [bx, half], [bx2], axis=0)
    return b.build([bi, bx], [bi2, bx2])


def swapping_while(limit: int = 3) -> bytes:
    """A body that returns its inputs permuted (i + 1, b, a): LiteRT copies body outputs
    to body inputs one by one, so the swap reads an already overwritten input."""
    b = ModelBuilder()
    specs = [("i", [], np.int32, {}), ("a", [2], F32, {}), ("b", [2], F32, {})]
    _while_main(b, specs, cond=1, body=2)
    _less_than_cond(b, specs, limit)
    i, a, c = b.tensor("b_i", [], np.int32), b.tensor("b_a", [2]), b.tensor("b_b", [2])
    i2 = b.tensor("b_i2", [], np.int32)
    b.op("ADD", [i, b.const("one", np.array(1, np.int32))], [i2])
    return b.build([i, a, c], [i2, c, a])


def nested_while(outer: int = 3, inner: int = 4) -> bytes:
    """for i < outer: (for j < inner: x = x * 0.5 + 1); x = x - 0.25 -- a WHILE inside
    a WHILE body. Subgraphs: 0 main, 1 outer cond, 2 outer body, 3 inner cond, 4 inner
    body."""
    b = ModelBuilder()
    specs = [("i", [], np.int32, {}), ("x", [3], F32, {})]
    _while_main(b, specs, cond=1, body=2)
    _less_than_cond(b, specs, outer)
    i, x = b.tensor("o_i", [], np.int32), b.tensor("o_x", [3])
    zero = b.tensor("o_zero", [], np.int32)
    b.op("MUL", [i, b.const("o_nought", np.array(0, np.int32))], [zero])
    j_out, x_in = b.tensor("o_j_out", [], np.int32), b.tensor("o_x_inner", [3])
    b.op("WHILE", [zero, x], [j_out, x_in], cond_subgraph_index=3, body_subgraph_index=4)
    i2, x2 = b.tensor("o_i2", [], np.int32), b.tensor("o_x2", [3])
    b.op("ADD", [i, b.const("o_one", np.array(1, np.int32))], [i2])
    b.op("SUB", [x_in, b.const("o_quarter", np.array([0.25], F32))], [x2])
    b.finish_subgraph([i, x], [i2, x2], "outer_body")
    _less_than_cond(b, specs, inner)
    j, y = b.tensor("i_j", [], np.int32), b.tensor("i_x", [3])
    j2, y1, y2 = b.tensor("i_j2", [], np.int32), b.tensor("i_x1", [3]), b.tensor("i_x2", [3])
    b.op("ADD", [j, b.const("i_one", np.array(1, np.int32))], [j2])
    b.op("MUL", [y, b.const("i_half", np.array([0.5], F32))], [y1])
    b.op("ADD", [y1, b.const("i_plus", np.array([1.0], F32))], [y2])
    return b.build([j, y], [j2, y2])


def int8_while(limit: int = 4) -> bytes:
    """An int8 loop-carried tensor (scale 0.05, zero point -3): x = x + c, requantized by
    the int8 ADD on every iteration; the counter is int32."""
    b = ModelBuilder()
    q = {"scale": 0.05, "zero_point": -3}
    specs = [("i", [], np.int32, {}), ("x", [1, 6], np.int8, q)]
    _while_main(b, specs, cond=1, body=2)
    _less_than_cond(b, specs, limit)
    i, x = b.tensor("b_i", [], np.int32), b.tensor("b_x", [1, 6], np.int8, **q)
    i2, x2 = b.tensor("b_i2", [], np.int32), b.tensor("b_x2", [1, 6], np.int8, **q)
    c = b.tensor("c", [1, 6], np.int8, np.array([[7, -20, 33, 1, 90, -128]], np.int8),
                 scale=0.031, zero_point=5)
    b.op("ADD", [i, b.const("one", np.array(1, np.int32))], [i2])
    mid = b.tensor("b_mid", [1, 6], np.int8, scale=0.07, zero_point=2)
    b.op("ADD", [x, c], [mid])
    b.op("MUL", [mid, b.tensor("m", [1], np.int8, np.array([100], np.int8), scale=0.01,
                                zero_point=0)], [x2])
    return b.build([i, x], [i2, x2])


def if_model(shapes_differ: bool = False) -> bytes:
    """pred = sum(x) > 0; then: x * 2; else: x - 1 -- or, ``shapes_differ``, else:
    concat(x, x) (the IF's output is dynamic), followed by a RELU in subgraph 0."""
    b = ModelBuilder()
    x = b.tensor("x", [3])
    total, pred = b.tensor("total", []), b.tensor("pred", [], np.bool_)
    b.op("SUM", [x, b.const("axes", np.array([0], np.int32))], [total])
    b.op("GREATER", [total, b.const("zero", np.array(0.0, F32))], [pred])
    y, z = b.tensor("y", [3]), b.tensor("z", [3])
    b.op("IF", [pred, x], [y], then_subgraph_index=1, else_subgraph_index=2)
    b.op("RELU", [y], [z])
    b.finish_subgraph([x], [z])
    tx, ty = b.tensor("t_x", [3]), b.tensor("t_y", [3])
    b.op("MUL", [tx, b.const("two", np.array([2.0], F32))], [ty])
    b.finish_subgraph([tx], [ty], "then")
    ex = b.tensor("e_x", [3])
    if shapes_differ:
        ey = b.tensor("e_y", [6])
        b.op("CONCATENATION", [ex, ex], [ey], axis=0)
    else:
        ey = b.tensor("e_y", [3])
        b.op("SUB", [ex, b.const("one", np.array([1.0], F32))], [ey])
    return b.build([ex], [ey])


def accumulator(scalar_read: bool = False) -> bytes:
    """CALL_ONCE initialises variable "acc" to [10, 20] (subgraph 1); each invoke reads it,
    adds the input, stores and returns the sum. ``scalar_read``: the READ_VARIABLE output
    is declared with rank 0 (dynamic: it takes the variable's shape)."""
    b = ModelBuilder()
    x = b.tensor("x", [2])
    h, v, s = b.tensor("h", [], type_code=RESOURCE), b.tensor("v", [] if scalar_read else [2]), \
        b.tensor("s", [2])
    b.op("CALL_ONCE", [], [], init_subgraph_index=1)
    b.op("VAR_HANDLE", [], [h], container="", shared_name="acc")
    b.op("READ_VARIABLE", [h], [v])
    b.op("ADD", [v, x], [s])
    b.op("ASSIGN_VARIABLE", [h, s], [])
    b.finish_subgraph([x], [s])
    h1 = b.tensor("h", [], type_code=RESOURCE)
    b.op("VAR_HANDLE", [], [h1], container="", shared_name="acc")
    b.op("ASSIGN_VARIABLE", [h1, b.const("init", np.array([10, 20], F32))], [])
    return b.build([], [])


def two_variables() -> bytes:
    """Two variables, "a" and "b", each updated every invoke; a third VAR_HANDLE names
    "a" again (the same variable). Without CALL_ONCE the first READ fails."""
    b = ModelBuilder()
    x = b.tensor("x", [1])
    ha, hb, ha2 = (b.tensor(n, [], type_code=RESOURCE) for n in ("ha", "hb", "ha2"))
    b.op("VAR_HANDLE", [], [ha], shared_name="a")
    b.op("VAR_HANDLE", [], [hb], shared_name="b")
    b.op("VAR_HANDLE", [], [ha2], shared_name="a")
    b.op("ASSIGN_VARIABLE", [ha, x], [])
    va, y = b.tensor("va", [1]), b.tensor("y", [1])
    b.op("READ_VARIABLE", [ha2], [va])
    b.op("MUL", [va, b.const("three", np.array([3.0], F32))], [y])
    b.op("ASSIGN_VARIABLE", [hb, y], [])
    vb = b.tensor("vb", [1])
    b.op("READ_VARIABLE", [hb], [vb])
    return b.build([x], [vb])
