"""ADD / SUB / MUL: float32, int32 and int64 against LiteRT's reference kernels; int8 /
uint8 bit-exact with both LiteRT kernel sets."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError

from tests.interpreter.tflite_builder import QuantModel
from tests.support import (assert_bit_exact, assert_float_native_steps, assert_matches_litert,
                           full_range, rand, random_qparams, run_edgelite)
from ..tflite_builder import single_op_model

BROADCASTS = [
    ((2, 3, 4), (2, 3, 4)),
    ((2, 3, 4), (4,)),
    ((2, 1, 4), (1, 3, 1)),
    ((1, 5, 5, 3), (3,)),
    ((3,), ()),
    ((2, 1, 3, 1, 2), (1, 4, 1, 5, 1)),
]


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("a_shape,b_shape", BROADCASTS)
def test_binary_broadcast(rng, op, a_shape, b_shape):
    a, b = rand(rng, a_shape), rand(rng, b_shape)
    out_shape = np.broadcast_shapes(a_shape, b_shape)
    assert_matches_litert(single_op_model(op, [a_shape, b_shape], out_shape), [a, b])


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("act", ["RELU", "RELU6", "RELU_N1_TO_1"])
def test_binary_activation(rng, op, act):
    a, b = rand(rng, (4, 5), low=-4, high=4), rand(rng, (5,), low=-4, high=4)
    model = single_op_model(op, [a.shape, b.shape], (4, 5), fused_activation_function=act)
    assert_matches_litert(model, [a, b])


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_binary_integers(rng, op, dtype):
    a = rand(rng, (3, 4), dtype, low=-1000, high=1000)
    b = rand(rng, (4,), dtype, low=-1000, high=1000)
    model = single_op_model(op, [a.shape, b.shape], (3, 4), dtype=dtype)
    assert_matches_litert(model, [a, b])


def test_binary_constant_operand(rng):
    a = rand(rng, (2, 3))
    model = single_op_model("ADD", [a.shape, 1], (2, 3), consts={1: rand(rng, (3,))})
    assert_matches_litert(model, [a])


def test_binary_incompatible_shapes(rng):
    model = single_op_model("ADD", [(2, 3), (4,)], (2, 3))
    with pytest.raises(ShapeError, match=r"operator 0 \(ADD.*\[2, 3\] and \[4\]"):
        run_edgelite(model, [rand(rng, (2, 3)), rand(rng, (4,))])


# --------------------------------------------------------------------------- int8 / uint8

SHAPES = [((4, 8, 8, 16), (4, 8, 8, 16)), ((2, 5, 5, 3), (3,)), ((2, 1, 4), (1, 3, 1)),
          ((3, 4), ())]


def binary_model(rng, op, dtype, shape1, shape2, act="NONE", scales=None):
    (s1, z1), (s2, z2), (so, zo) = scales or [random_qparams(rng, dtype, 0.01, 0.1)
                                              for _ in range(3)]
    if op == "MUL" and scales is None:
        so = float(np.float32(s1 * s2 * rng.uniform(20, 80)))
    m = QuantModel()
    a = m.input("a", shape1, dtype, s1, z1)
    b = m.input("b", shape2, dtype, s2, z2)
    y = m.output("y", np.broadcast_shapes(shape1, shape2), dtype, so, zo)
    m.op(op, [a, b], [y], version=2, fused_activation_function=act)
    return m.build(), [full_range(rng, shape1, dtype), full_range(rng, shape2, dtype)]


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("shape1,shape2", SHAPES)
def test_binary(rng, op, dtype, shape1, shape2):
    model, feeds = binary_model(rng, op, dtype, shape1, shape2)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("act", ["RELU", "RELU6", "RELU_N1_TO_1"])
def test_quantized_binary_activation(rng, op, dtype, act):
    zo = 0 if dtype == np.int8 else 128
    scales = [(0.05, 3), (0.03, -7 if dtype == np.int8 else 120), (0.02, zo)]
    model, feeds = binary_model(rng, op, dtype, (6, 7), (7,), act=act, scales=scales)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_binary_exhaustive_pairs(rng, op, dtype):
    # Every (a, b) pair once, with power-of-two scale ratios that put results on ties.
    info = np.iinfo(dtype)
    vals = np.arange(info.min, info.max + 1)
    a, b = np.meshgrid(vals, vals)
    a, b = a.astype(dtype).reshape(256, 256), b.astype(dtype).reshape(256, 256)
    zo = 0 if dtype == np.int8 else 128
    out_scale = 2.0 if op == "MUL" else 0.5
    model, _ = binary_model(rng, op, dtype, (256, 256), (256, 256),
                            scales=[(0.25, zo), (0.125, zo), (out_scale, zo)])
    assert_bit_exact(model, [a, b])


@pytest.mark.parametrize("op,scales", [
    ("ADD", [(0.0001, 0), (0.5, 3), (1.0, 0)]),  # s1 / s_out < 2^-10
    ("SUB", [(0.3, 1), (0.9, -2), (0.0011, 5)]),  # s2 / s_out > 2^8
    ("MUL", [(0.001, 0), (0.001, 3), (10.0, 0)]),  # s1 s2 / s_out < 2^-16
])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_binary_scales_xnnpack_refuses(rng, op, scales, dtype):
    from tests.support import litert_delegates
    z = 0 if dtype == np.int8 else 128
    scales = [(s, zp + z) for s, zp in scales]
    model, _ = binary_model(rng, op, dtype, (8, 64), (8, 64), scales=scales)
    assert not litert_delegates(model)
    # Inputs near the zero points keep the results in range.
    feeds = [(rng.integers(-2, 3, size=(8, 64)) + q[1]).astype(dtype) for q in scales[:2]]
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("act", ["NONE", "RELU", "RELU6"])
@pytest.mark.parametrize("a_shape,b_shape", BROADCASTS + [((1, 64, 64, 96), (1, 1, 1, 96)),
                                                          ((1, 64, 64, 96), (1, 64, 64, 96))])
def test_float_binary_native_step_is_the_ufunc_bit_for_bit(rng, op, act, a_shape, b_shape):
    # float32 ADD / SUB / MUL on the native backend: one C step (native/binary_f32.c) at
    # 1, 2 and 3 threads (the 393,216-value ones split over the C pool): the numpy
    # kernel's values, and LiteRT reference's bits wherever it does not clamp an infinity
    # to +-FLT_MAX (it does without an activation; the numpy kernel and XNNPACK do not) --
    # -0 kept by a RELU as std::max keeps it, where the numpy clamp makes +0; NaN, +-inf,
    # -0 and overflowing values among the inputs
    a = rand(rng, a_shape, low=-8, high=8)
    b = rand(rng, b_shape, low=-8, high=8)
    specials = np.float32([np.nan, np.inf, -np.inf, -0.0, 3e38, -3e38])
    a.reshape(-1)[:min(a.size, 6)] = specials[:min(a.size, 6)]
    b.reshape(-1)[-min(b.size, 6):] = specials[:min(b.size, 6)]
    out_shape = np.broadcast_shapes(a_shape, b_shape)
    model = single_op_model(op, [a_shape, b_shape], out_shape, fused_activation_function=act)
    assert_float_native_steps(model, [a, b])


def test_binary_f32_step_refuses_bad_arguments():
    from edgelite.interpreter import native
    from tests.conftest import missing
    if not native.built():
        missing("the native extension (python setup.py build_ext --inplace)")
    bind = native.module.binary_f32_step
    a, b, out = np.zeros(6, np.float32), np.zeros(3, np.float32), np.zeros(6, np.float32)
    dims = np.array([2, 3, 3, 1, 0, 1], np.int64)  # (2, 3) + (3,)
    assert bind(a, b, out, 0, dims, False, 0.0, 0.0, 1, 1) is not None
    for op, threads, tasks in ((3, 1, 1), (0, 0, 1), (0, 1, 0)):
        with pytest.raises(ValueError, match="bad op, dims or split"):
            bind(a, b, out, op, dims, False, 0.0, 0.0, threads, tasks)
    with pytest.raises(ValueError, match="the second input holds 12 bytes, needs 16"):
        bind(a, b, out, 0, np.array([2, 4, 0, 1, 0, 1], np.int64), False, 0.0, 0.0, 1, 1)
    with pytest.raises(ValueError, match="bad op, dims or split"):
        bind(a, b, out, 0, np.array([2, 3, 3, 1, 0], np.int64), False, 0.0, 0.0, 1, 1)
