"""Comparisons, LOGICAL_AND / LOGICAL_OR, SELECT / SELECT_V2 against LiteRT's reference
kernels; quantized comparisons (int8 / uint8, and int16, which LiteRT rescales for EQUAL /
NOT_EQUAL only) and SELECT / SELECT_V2 bit-exact with both LiteRT kernel sets over random
parameters (inputs with different scales and zero points), broadcasting shapes and values
on the rescaling ties."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import EdgeliteError

from ..op_models import check_op
from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, full_range, rand, random_qparams

I32, I64, F32 = np.int32, np.int64, np.float32


@pytest.mark.parametrize("op", ["LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL",
                                "NOT_EQUAL"])
@pytest.mark.parametrize("dtype", [F32, I32, I64])
def test_comparisons(rng, op, dtype):
    a = rand(rng, (3, 4), dtype, low=-3, high=3).round().astype(dtype)
    b = rand(rng, (4,), dtype, low=-3, high=3).round().astype(dtype)
    check_op(op, [a, b], [((3, 4), np.bool_)])


@pytest.mark.parametrize("op", ["LOGICAL_AND", "LOGICAL_OR"])
def test_logical_binary(rng, op):
    a, b = rand(rng, (3, 4)) > 0, rand(rng, (3, 1)) > 0
    check_op(op, [a, b], [((3, 4), np.bool_)])


@pytest.mark.parametrize("c_shape,x_shape,y_shape", [((3, 4), (3, 4), (3, 4)),
                                                     ((3, 1), (1, 4), (3, 4)),
                                                     ((), (2, 3), (3,)), ((4,), (3, 4), ())])
@pytest.mark.parametrize("dtype", [F32, I32])
def test_select_v2(rng, c_shape, x_shape, y_shape, dtype):
    cond = rand(rng, c_shape) > 0
    x = rand(rng, x_shape, low=-9, high=9).astype(dtype)
    y = rand(rng, y_shape, low=-9, high=9).astype(dtype)
    out_shape = np.broadcast_shapes(c_shape, x_shape, y_shape)
    (out,) = check_op("SELECT_V2", [cond, x, y], [(out_shape, dtype)])
    np.testing.assert_array_equal(out, np.where(cond, x, y))


@pytest.mark.parametrize("c_shape", [(3, 4), (3,)])
def test_select(rng, c_shape):
    cond = rand(rng, c_shape) > 0
    x, y = rand(rng, (3, 4)), rand(rng, (3, 4))
    (out,) = check_op("SELECT", [cond, x, y], [((3, 4), F32)])
    np.testing.assert_array_equal(out, np.where(cond.reshape(3, -1), x, y))


# --------------------------------------------------------------------------- quantized

COMPARISONS = ["LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "EQUAL", "NOT_EQUAL"]
SHAPES = [((2, 3, 8), (2, 3, 8)), ((2, 3, 8), (8,)), ((4, 1, 5), (1, 3, 1)), ((), (3, 4))]


def binary_model(op, dtype, shapes, qa, qb, out_dtype, qo=(None, None), version=2):
    m = QuantModel()
    a = m.input("a", shapes[0], dtype, *qa)
    b = m.input("b", shapes[1], dtype, *qb)
    out_shape = np.broadcast_shapes(*shapes)
    y = m.output("y", out_shape, out_dtype, *qo)
    m.op(op, [a, b], [y], version=version)
    return m.build()


@pytest.mark.parametrize("op", COMPARISONS)
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("seed", range(3))
def test_quantized_comparison(op, dtype, seed):
    rng = np.random.default_rng(seed)
    shapes = SHAPES[seed % len(SHAPES)]
    qa = random_qparams(rng, dtype, 0.01, 0.2)
    # seed 0: the same parameters (raw comparison); else different ones, rescaled
    qb = qa if seed == 0 else random_qparams(rng, dtype, 0.01, 0.2)
    model = binary_model(op, dtype, shapes, qa, qb, np.bool_)
    feeds = [full_range(rng, s, dtype) for s in shapes]
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("op", ["LESS", "EQUAL", "GREATER_EQUAL"])
def test_quantized_comparison_ties(op):
    # b's scale is twice a's: every even a meets a b exactly, so EQUAL / LESS see the
    # rescaled values' ties (and the rounding of odd ones).
    a = np.arange(-128, 128).astype(np.int8).reshape(16, 16)
    b = np.clip(np.arange(-128, 128) // 2 + 3, -128, 127).astype(np.int8).reshape(16, 16)
    model = binary_model(op, np.int8, [(16, 16)] * 2, (0.0125, -4), (0.025, 1), np.bool_)
    out = assert_bit_exact(model, [a, b])["reference"][0]
    if op == "EQUAL":
        assert out.any() and not out.all()


# LiteRT's NOT_EQUAL has no case for unquantized int16 and leaves the output unwritten.
INT16_CASES = [(op, True) for op in COMPARISONS] + [(op, False) for op in COMPARISONS
                                                    if op != "NOT_EQUAL"]


@pytest.mark.parametrize("op,quantized", INT16_CASES)
@pytest.mark.parametrize("qb", [(0.001, 0), (0.003, 0)])
def test_int16_comparison(rng, op, qb, quantized):
    # LiteRT rescales quantized int16 for EQUAL / NOT_EQUAL only (-1, 0, 1 at scale 0.001
    # all become 0: equal); the others, and unquantized int16, compare raw.
    shapes = ((3, 8), (8,))
    params = ((0.001, 0), qb) if quantized else ((None, None), (None, None))
    model = binary_model(op, np.int16, shapes, *params, np.bool_)
    feeds = [rng.integers(-3, 3, s).astype(np.int16) for s in shapes]
    assert_bit_exact(model, feeds)


def test_comparison_scale_above_one():
    model = binary_model("LESS", np.int8, [(4,)] * 2, (2.0, 0), (0.5, 0), np.bool_)
    interp = Interpreter(model_content=model)
    with pytest.raises(EdgeliteError, match="scale 2.0; a quantized comparison needs"):
        interp.allocate_tensors()


@pytest.mark.parametrize("v2,c_shape,x_shape,y_shape", [
    (True, (3, 4), (3, 4), (3, 4)), (True, (3, 1), (1, 4), (3, 4)), (False, (3,), (3, 4), (3, 4)),
])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_quantized_select(rng, v2, c_shape, x_shape, y_shape, dtype):
    q = random_qparams(rng, dtype)
    m = QuantModel()
    c = m.input("c", c_shape, np.bool_)
    x = m.input("x", x_shape, dtype, *q)
    y = m.input("y", y_shape, dtype, *q)
    out_shape = np.broadcast_shapes(c_shape, x_shape, y_shape) if v2 else x_shape
    out = m.output("out", out_shape, dtype, *q)
    m.op("SELECT_V2" if v2 else "SELECT", [c, x, y], [out])
    feeds = [rng.random(c_shape) > 0.5, full_range(rng, x_shape, dtype),
             full_range(rng, y_shape, dtype)]
    assert_bit_exact(m.build(), feeds)
