"""converter/lower/einsum.py: Einsum as TRANSPOSE / RESHAPE / BATCH_MATMUL, FULLY_CONNECTED
for a dense layer, MEAN x count for summed indices; the reference is numpy.einsum (TF's Einsum
computes the same sums: linalg_ops.cc "Einsum", einsum_op_impl.h)."""

import re

import numpy as np
import pytest

from edgelite.errors import UnsupportedOpError

from .lowering import F32, check, floats, graph, rng, run

COVERED = {"Einsum"}

# equation, operand shapes, second operand constant?, exported ops (default passes)
CASES = [
    # batch matmul, and attention scores read transposed (adj_y)
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], False, ["BATCH_MATMUL"]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)], False, ["BATCH_MATMUL"]),
    # the output lists the second operand's free index first: operands swapped, both read
    # transposed, no TRANSPOSE op
    ("bij,bjk->bki", [(2, 3, 4), (2, 4, 5)], False, ["BATCH_MATMUL"]),
    # Keras MultiHeadAttention: scores (key, query) and probabilities x value
    ("aecd,abcd->acbe", [(1, 5, 2, 3), (1, 4, 2, 3)], False,
     ["TRANSPOSE", "TRANSPOSE", "BATCH_MATMUL"]),
    ("acbe,aecd->abcd", [(1, 2, 4, 5), (1, 5, 2, 3)], False,
     ["TRANSPOSE", "BATCH_MATMUL", "TRANSPOSE"]),
    # ellipsis: batch dims broadcast (1 against 3), and one only the first operand has
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (3, 4, 5)], False, ["BATCH_MATMUL"]),
    ("...ij,jk->...ik", [(2, 3, 4), (4, 5)], False, ["BATCH_MATMUL"]),
    ("abij,bjk->abik", [(2, 3, 4, 5), (3, 5, 6)], False, ["BATCH_MATMUL"]),
    ("b...d,bkd->b...k", [(2, 3, 4), (2, 5, 4)], False, ["BATCH_MATMUL"]),
    # implicit output (indices used once, sorted), outer product
    ("ij,jk", [(3, 4), (4, 5)], False, ["BATCH_MATMUL"]),
    ("i,j->ij", [(3,), (4,)], False, ["RESHAPE", "RESHAPE", "BATCH_MATMUL"]),
    # dense layers (EinsumDense / MHA projections): FULLY_CONNECTED
    ("abc,cd->abd", [(2, 3, 4), (4, 5)], True, ["FULLY_CONNECTED"]),
    ("abc,cde->abde", [(2, 3, 4), (4, 2, 3)], True, ["FULLY_CONNECTED", "RESHAPE"]),
    ("abcd,cde->abe", [(2, 3, 2, 4), (2, 4, 5)], True, ["FULLY_CONNECTED", "RESHAPE"]),
    ("bqd,nd->bnq", [(2, 3, 4), (5, 4)], True, ["FULLY_CONNECTED", "TRANSPOSE"]),
    # a constant with batch indices stays a BATCH_MATMUL operand
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], True, ["BATCH_MATMUL"]),
    # summed indices: n * MEAN (see einsum.py), one-operand transposes and sums
    ("bij,bjk->bk", [(2, 3, 4), (2, 4, 5)], False,
     ["MEAN", "MUL", "RESHAPE", "BATCH_MATMUL", "RESHAPE"]),
    ("bij->bji", [(2, 3, 4)], False, ["TRANSPOSE"]),
    ("bij->bj", [(2, 3, 4)], False, ["MEAN", "MUL"]),
    ("bij->j", [(2, 3, 4)], False, ["MEAN", "MUL"]),
]


def _graph(equation, shapes, const):
    r = rng()
    values = [floats(r, *s) for s in shapes]
    g = graph(**{f"x{i}": s for i, s in enumerate(shapes) if not (const and i == 1)})
    names = [f"x{i}" for i in range(len(shapes))]
    if const:
        g.const("x1", values[1])
    g.node("y", "Einsum", names, T=F32, N=len(names), equation=equation)
    feeds = {n: v for n, v in zip(names, values) if not (const and n == "x1")}
    return g, feeds, values


@pytest.mark.parametrize("equation, shapes, const, ops", CASES,
                         ids=[f"{c[0]}{'-const' if c[2] else ''}" for c in CASES])
def test_einsum(equation, shapes, const, ops):
    g, feeds, values = _graph(equation, shapes, const)
    want = np.einsum(equation, *[v.astype(np.float64) for v in values]).astype(np.float32)
    check(g, feeds, want, ops, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("equation, shapes, why", [
    ("ii->i", [(3, 3)], "index 'i' appears twice in operand 0 (a diagonal or trace); TFLite "
     "has no op for it"),
    ("bij,bjj->bi", [(2, 3, 4), (2, 4, 4)], "index 'j' appears twice in operand 1"),
    ("ij,jk->iz", [(3, 4), (4, 5)], "output index 'z' is in no operand"),
    ("ij,jk->ii", [(3, 4), (4, 5)], "index 'i' appears twice in the output"),
    ("ijk,jk->ik", [(3, 4), (4, 5)], "operand 0 has rank 2 but 'ijk' names 3 indices"),
    ("i..j,jk->ik", [(3, 4), (4, 5)], "'i..j' is not a list of letters with at most one"),
    ("ij->ji", [(3, 4), (4, 5)], "names 1 operand(s) but the node has 2"),
])
def test_unsupported_equations_are_refused_in_one_line(equation, shapes, why):
    g, feeds, _ = _graph(equation, shapes, False)
    with pytest.raises(UnsupportedOpError, match="^" + re.escape(
            f"node 'y' (Einsum): equation '{equation}': {why}")):
        run(g, feeds, ["y"])


def test_three_operands_are_refused():
    g = graph(a=(2, 3), b=(3, 4), c=(4, 5))
    g.node("y", "Einsum", ["a", "b", "c"], T=F32, N=3, equation="ij,jk,kl->il")
    with pytest.raises(UnsupportedOpError, match=r"^node 'y' \(Einsum\): has 3 operands; "
                       r"TFLite's lowering takes one or two"):
        run(g, {k: np.zeros(s, np.float32) for k, s in
                (("a", (2, 3)), ("b", (3, 4)), ("c", (4, 5)))}, ["y"])


def test_mismatched_contraction_sizes_are_refused():
    g, feeds, _ = _graph("ij,jk->ik", [(3, 4), (5, 6)], False)
    with pytest.raises(Exception, match=r"^node 'y' \(Einsum\): index 'j' has size 4 and 5"):
        run(g, feeds, ["y"])


def test_operand_shapes_behind_shape_computations_are_worked_out():
    """An operand reshaped with a shape computed from tf.shape (as Keras writes it) gets its
    static shape before the einsum is lowered."""
    r = rng()
    x, w = floats(r, 2, 3, 4), floats(r, 4, 5)
    g = graph(x=(2, 12))
    g.const("three_four", np.array([3, 4], np.int32))
    g.const("zero", np.array([0], np.int32))
    g.const("one", np.array([1], np.int32))
    g.node("shape", "Shape", ["x"], T=F32, out_type=np.dtype(np.int32))
    g.node("batch", "StridedSlice", ["shape", "zero", "one", "one"], T=np.dtype(np.int32),
           Index=np.dtype(np.int32), shrink_axis_mask=0)
    g.const("axis", np.array(0, np.int32))
    g.node("dims", "ConcatV2", ["batch", "three_four", "axis"], T=np.dtype(np.int32), N=2,
           Tidx=np.dtype(np.int32))
    g.node("x3", "Reshape", ["x", "dims"], T=F32, Tshape=np.dtype(np.int32))
    g.const("w", w)
    g.node("y", "Einsum", ["x3", "w"], T=F32, N=2, equation="abc,cd->abd")
    want = np.einsum("abc,cd->abd", x.astype(np.float64), w).astype(np.float32)
    check(g, {"x": x.reshape(2, 12)}, want, ["RESHAPE", "FULLY_CONNECTED"], rtol=1e-5,
          atol=2e-6)


def test_an_operand_shaped_by_a_runtime_value_is_refused():
    """A reshape to a shape computed from an input's values has no static shape."""
    g = graph(x=(2, 12), dims=((3,), np.dtype(np.int32)))
    g.node("x3", "Reshape", ["x", "dims"], T=F32, Tshape=np.dtype(np.int32))
    g.const("w", np.ones((4, 5), np.float32))
    g.node("y", "Einsum", ["x3", "w"], T=F32, N=2, equation="abc,cd->abd")
    with pytest.raises(Exception, match=r"^node 'y' \(Einsum\): the shape of 'x3' is not "
                       r"static; give the model's input shapes"):
        run(g, {"x": np.zeros((2, 12), np.float32), "dims": np.array([2, 3, 4], np.int32)},
            ["y"])
