"""BATCH_MATMUL against LiteRT's reference kernels."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError
from tests.support import rand

from ..op_models import check_op, const, run_op

F32 = np.float32


@pytest.mark.parametrize("a_shape,b_shape", [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)),
                                             ((2, 3, 4), (4, 5)), ((1, 3, 4), (6, 4, 2)),
                                             ((2, 1, 3, 4), (1, 5, 4, 2)),
                                             ((4, 2, 3, 4), (4, 5))])
@pytest.mark.parametrize("adj_x", [False, True])
@pytest.mark.parametrize("adj_y", [False, True])
@pytest.mark.parametrize("rhs_const", [False, True])
def test_batch_matmul(rng, a_shape, b_shape, adj_x, adj_y, rhs_const):
    a, b = rand(rng, a_shape), rand(rng, b_shape)
    if adj_x:
        a = np.ascontiguousarray(a.swapaxes(-1, -2))
    if adj_y:
        b = np.ascontiguousarray(b.swapaxes(-1, -2))
    expected = np.matmul(a.swapaxes(-1, -2) if adj_x else a, b.swapaxes(-1, -2) if adj_y else b)
    (out,) = check_op("BATCH_MATMUL", [a, const(b) if rhs_const else b],
                      [(expected.shape, F32)], adj_x=adj_x, adj_y=adj_y)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_batch_matmul_mismatch(rng):
    with pytest.raises(ShapeError, match="different inner dimensions"):
        run_op("BATCH_MATMUL", [rand(rng, (2, 3)), rand(rng, (2, 3))], [((2, 3), F32)])


# --------------------------------------------------------------------------- int8 / int16

QUANT_CASES = [  # (lhs shape, rhs shape, adj_x, adj_y)
    ((2, 3, 5), (5, 4), False, False),
    ((2, 3, 5), (2, 4, 5), False, True),
    ((1, 5, 3), (5, 4), True, False),
    ((2, 5, 3), (2, 4, 5), True, True),
    ((2, 1, 4, 6), (3, 6, 5), False, False),
    ((3, 40), (40, 20), False, False),
    ((64, 300), (300, 8), False, False),
]


@pytest.mark.parametrize("case", QUANT_CASES)
@pytest.mark.parametrize("dtype", [np.int8, np.int16])
@pytest.mark.parametrize("rhs_const", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_batch_matmul_quantized(case, dtype, rhs_const, seed):
    """Full-integer BATCH_MATMUL, bit-exact with both LiteRT kernel sets (int8 with any
    zero points, int16 with zero points 0; output scales from fine to saturating).
    Measured beyond these: 1200 random shape / adjoint / broadcast / constant cases, 75
    of them XNNPACK's, all bit-exact."""
    from tests.support import assert_bit_exact, full_range
    from tests.interpreter.tflite_builder import QuantModel

    lhs, rhs, adj_x, adj_y = case
    rng = np.random.default_rng(seed)
    int8 = dtype == np.int8

    def params(low, high):
        zp = int(rng.integers(-60, 60)) if int8 else 0
        return float(np.float32(rng.uniform(low, high))), zp

    depth = lhs[-2] if adj_x else lhs[-1]
    (sa, za), (sb, zb) = params(0.01, 0.05), params(0.01, 0.05)
    if seed == 0:
        zb = 0  # a symmetric rhs: XNNPACK takes int8 (test_xnnpack_takes_symmetric_int8)
    typical = sa * sb * np.sqrt(depth) * (128 if int8 else 32768) ** 2 / np.iinfo(dtype).max
    so, zo = params(typical * 0.3, typical * 3)
    m = QuantModel()
    a = m.input("a", lhs, dtype, scale=sa, zp=za)
    bv = full_range(rng, rhs, dtype)
    b = m.const("b", bv, dtype, scale=sb, zp=zb) if rhs_const else \
        m.input("b", rhs, dtype, scale=sb, zp=zb)
    za_, zb_ = np.zeros(lhs), np.zeros(rhs)
    out_shape = np.matmul(za_.swapaxes(-1, -2) if adj_x else za_,
                          zb_.swapaxes(-1, -2) if adj_y else zb_).shape
    y = m.output("y", out_shape, dtype, scale=so, zp=zo)
    m.op("BATCH_MATMUL", [a, b], [y], version=2 if int8 else 3, adj_x=adj_x, adj_y=adj_y)
    feeds = [full_range(rng, lhs, dtype)] + ([] if rhs_const else [bv])
    assert_bit_exact(m.build(), feeds)


@pytest.mark.parametrize("zp_rhs, delegated", [(0, True), (5, False)])
def test_xnnpack_takes_symmetric_int8(zp_rhs, delegated):
    """LiteRT's default resolver gives int8 BATCH_MATMUL to XNNPACK when the rhs zero point
    is 0 (its fp32 requantization, which edgelite's default kernel set reproduces)."""
    from tests.support import assert_bit_exact, full_range, litert_delegates
    from tests.interpreter.tflite_builder import QuantModel

    rng = np.random.default_rng(7)
    m = QuantModel()
    a = m.input("a", (3, 1, 27, 3), np.int8, scale=0.02, zp=-7)
    b = m.const("b", full_range(rng, (3, 28), np.int8), np.int8, scale=0.03, zp=zp_rhs)
    m.output("y", (3, 1, 27, 28), np.int8, scale=0.05, zp=4)
    m.op("BATCH_MATMUL", [a, b], m.outputs, version=2)
    model = m.build()
    assert litert_delegates(model) is delegated
    for seed in range(5):
        assert_bit_exact(model, [full_range(np.random.default_rng(seed), (3, 1, 27, 3), np.int8)])


def test_uint8_is_refused_like_litert(litert):
    """batch_matmul.cc takes float32, int8 and int16 only: a uint8 BATCH_MATMUL fails to
    prepare in LiteRT and in edgelite, and the record says so (the quantizer's uint8 mode
    keeps it float)."""
    from edgelite.interpreter import Interpreter, UnsupportedOpError
    from edgelite.interpreter.kernels import OPS

    from tests.interpreter.tflite_builder import QuantModel

    m = QuantModel()
    a = m.input("a", (2, 3), np.uint8, scale=0.02, zp=128)
    b = m.input("b", (3, 4), np.uint8, scale=0.02, zp=128)
    y = m.output("y", (2, 4), np.uint8, scale=0.05, zp=128)
    m.op("BATCH_MATMUL", [a, b], [y], version=1, adj_x=False, adj_y=False)
    model = m.build()
    ref = litert.Interpreter(model_content=model,
                             experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    with pytest.raises(RuntimeError, match="BATCH_MATMUL"):
        ref.allocate_tensors()
    with pytest.raises(UnsupportedOpError, match="has type uint8"):
        Interpreter(model_content=model).allocate_tensors()
    assert OPS["BATCH_MATMUL"].uint8 is False
