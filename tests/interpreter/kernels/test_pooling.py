"""MAX_POOL_2D and AVERAGE_POOL_2D: float against LiteRT's reference kernels, int8 / uint8
bit-exact with both LiteRT kernel sets."""

import numpy as np
import pytest

from tests.interpreter.tflite_builder import QuantModel
from tests.support import (assert_bit_exact, assert_close, assert_float_native_steps,
                           assert_folded_alike, assert_matches_litert,
                           assert_native_fits_where_numpy_does_not, assert_native_steps,
                           full_range, rand, random_qparams, run_edgelite)
from ..tflite_builder import single_op_model


def pool_model(op, x_shape, filt, stride, padding, act="NONE"):
    n, h, w, c = x_shape
    if padding == "SAME":
        oh, ow = -(-h // stride[0]), -(-w // stride[1])
    else:
        oh, ow = (h - filt[0] + stride[0]) // stride[0], (w - filt[1] + stride[1]) // stride[1]
    return single_op_model(op, [x_shape], (n, oh, ow, c), padding=padding,
                           stride_h=stride[0], stride_w=stride[1], filter_height=filt[0],
                           filter_width=filt[1], fused_activation_function=act)


@pytest.mark.parametrize("op", ["MAX_POOL_2D", "AVERAGE_POOL_2D"])
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("filt,stride", [((2, 2), (2, 2)), ((3, 3), (2, 2)), ((3, 2), (1, 1)),
                                         ((3, 3), (3, 1)), ((7, 7), (1, 1))])
def test_pool(rng, op, padding, filt, stride):
    x = rand(rng, (2, 7, 9, 3))
    assert_matches_litert(pool_model(op, x.shape, filt, stride, padding), [x])


@pytest.mark.parametrize("op", ["MAX_POOL_2D", "AVERAGE_POOL_2D"])
@pytest.mark.parametrize("act", ["RELU", "RELU6", "RELU_N1_TO_1"])
def test_pool_activation(rng, op, act):
    x = rand(rng, (1, 6, 6, 4), low=-8, high=8)
    assert_matches_litert(pool_model(op, x.shape, (2, 2), (1, 1), "SAME", act), [x])


def test_average_pool_same_divides_by_valid_count():
    # 3x3 all-ones input, 3x3 window, SAME: every average is exactly 1, although the
    # corner windows contain only 4 real pixels out of 9.
    x = np.ones((1, 3, 3, 1), np.float32)
    (out,) = run_edgelite(pool_model("AVERAGE_POOL_2D", x.shape, (3, 3), (1, 1), "SAME"), [x])
    assert_close(out, np.ones((1, 3, 3, 1), np.float32))


def test_max_pool_all_negative_with_padding():
    # Padding must never win the max (TFLite starts from lowest(), not 0).
    x = -np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1)
    model = pool_model("MAX_POOL_2D", x.shape, (2, 2), (2, 2), "SAME")
    (out,) = assert_matches_litert(model, [x])
    assert (out < 0).all()


@pytest.mark.parametrize("op", ["MAX_POOL_2D", "AVERAGE_POOL_2D"])
@pytest.mark.parametrize("shape,filt,stride,padding,act", [
    ((2, 7, 9, 3), (3, 3), (2, 2), "SAME", "NONE"),
    ((1, 6, 5, 4), (2, 3), (1, 2), "VALID", "RELU6"),
    ((1, 8, 8, 2), (8, 8), (1, 1), "VALID", "NONE"),       # the whole image
    ((1, 112, 112, 64), (3, 3), (2, 2), "SAME", "NONE"),   # split over the C pool
    ((1, 35, 35, 96), (3, 3), (1, 1), "SAME", "RELU")])
def test_float_pool_native_step(rng, op, shape, filt, stride, padding, act):
    # float pools on the native backend: one C step (native/pool_f32.c) from the unpadded
    # input at 1, 2 and 3 threads, the numpy kernel's values and LiteRT reference's bits
    # (a NaN pixel never wins a max, as std::max; it spreads through an average)
    x = rand(rng, shape, low=-5, high=5)
    x.reshape(-1)[[0, 7, 40]] = [np.nan, np.inf, -np.inf]
    assert_float_native_steps(pool_model(op, shape, filt, stride, padding, act), [x])


def test_pool_f32_step_refuses_bad_geometry():
    from edgelite.interpreter import native
    from tests.conftest import missing
    if not native.built():
        missing("the native extension (python setup.py build_ext --inplace)")
    bind = native.module.pool_f32_step
    x, out = np.zeros((1, 4, 4, 2), np.float32), np.zeros((1, 2, 2, 2), np.float32)
    window = (2, 2, 2, 2, 0, 0, 2, 2)
    assert bind(x, out, True, (1, 4, 4, 2), window, False, 0.0, 0.0, 1, 1) is not None
    with pytest.raises(ValueError, match="bad geometry or split"):
        bind(x, out, True, (1, 4, 4, 2), (0, 2, 2, 2, 0, 0, 2, 2), False, 0.0, 0.0, 1, 1)
    with pytest.raises(ValueError, match="bad geometry or split"):
        bind(x, out, True, (1, 4, 4, 2), window, False, 0.0, 0.0, 1, 0)
    with pytest.raises(ValueError, match="the input holds 128 bytes, needs 160"):
        bind(x, out, True, (1, 5, 4, 2), window, False, 0.0, 0.0, 1, 1)
    with pytest.raises(ValueError, match="the output holds 32 bytes, needs 48"):
        bind(x, out, True, (1, 4, 4, 2), (2, 2, 2, 2, 0, 0, 3, 2), False, 0.0, 0.0, 1, 1)


# --------------------------------------------------------------------------- int8 / uint8


def out_size(size, k, stride, padding):
    return -(-size // stride) if padding == "SAME" else (size - k + stride) // stride


def quant_pool_model(rng, op, dtype, x_shape, k, stride, padding, act="NONE", q=None):
    n, h, w, c = x_shape
    s, z = q or random_qparams(rng, dtype, 0.01, 0.1)
    m = QuantModel()
    x = m.input("x", x_shape, dtype, s, z)
    y = m.output("y", (n, out_size(h, k[0], stride[0], padding),
                       out_size(w, k[1], stride[1], padding), c), dtype, s, z)
    m.op(op, [x], [y], version=2, padding=padding, stride_h=stride[0], stride_w=stride[1],
         filter_height=k[0], filter_width=k[1], fused_activation_function=act)
    return m.build(), [full_range(rng, x_shape, dtype)]


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("k,stride,padding", [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME"),
                                              ((3, 2), (1, 1), "SAME"), ((4, 4), (3, 2), "VALID")])
def test_quantized_pool(rng, op, dtype, k, stride, padding):
    model, feeds = quant_pool_model(rng, op, dtype, (2, 9, 10, 8), k, stride, padding)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("k,stride,padding,act", [((3, 3), (2, 2), "SAME", "NONE"),
                                                  ((2, 3), (1, 2), "VALID", "RELU6")])
def test_quantized_average_pool_is_a_native_step(rng, dtype, k, stride, padding, act):
    # one AVERAGE_POOL_2D, run by the C loop (native/steps.c) at 1 and 2 threads (too
    # small to split): the same bytes as the numpy backend and LiteRT
    model, feeds = quant_pool_model(rng, "AVERAGE_POOL_2D", dtype, (2, 9, 10, 8), k, stride,
                                    padding, act)
    assert_native_steps(model, feeds, steps=1)


def test_average_pool_step_refuses_short_buffers():
    from edgelite.interpreter import native
    if not native.built():
        pytest.skip("native kernels not built")
    bind = native.module.avg_pool_step
    x, out = np.zeros((1, 4, 4, 8), np.int8), np.zeros((1, 2, 2, 8), np.int8)
    args = (x, out, (0, 0), (1, 4, 4, 8), (2, 2, 2, 2, 0, 0, 2, 2), -128, 127, 0, 2)
    assert bind(*args, np.zeros(8, np.int32)) is not None
    with pytest.raises(ValueError, match="avg_pool_step: the scratch holds 28 bytes, needs 32"):
        bind(*args, np.zeros(7, np.int32))
    with pytest.raises(ValueError, match="avg_pool_step: the output holds 24 bytes, needs 32"):
        bind(x, np.zeros(24, np.int8), *args[2:], np.zeros(8, np.int32))
    with pytest.raises(ValueError, match="avg_pool_step: bad geometry"):
        bind(*args[:7], 0, 3, np.zeros(8, np.int32))


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("act", ["RELU", "RELU6", "RELU_N1_TO_1"])
def test_quantized_pool_activation(rng, op, dtype, act):
    q = (0.05, 0 if dtype == np.int8 else 128)
    model, feeds = quant_pool_model(rng, op, dtype, (1, 8, 8, 4), (2, 2), (2, 2), "VALID", act, q)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("op", ["MAX_POOL_2D", "AVERAGE_POOL_2D"])
def test_float_pool_native_needs_no_numpy_buffers(rng, op):
    # With the native step the record keeps no padded tap buffer or divisor: a memory
    # limit a little above the arena (input + output) holds on the native backend and
    # refuses the numpy one (its buffer is about the input's size again). A constant input
    # is folded at allocate through the native eval: the numpy kernel's values.
    model = pool_model(op, (1, 112, 112, 64), (3, 3), (2, 2), "SAME")
    assert_native_fits_where_numpy_does_not(model, 5 * 2**20)  # arena: 3.06 + 0.77 MiB
    x = rand(rng, (1, 9, 7, 3), low=-5, high=5)
    assert_folded_alike(single_op_model(op, [0], (1, 5, 4, 3), consts={0: x}, padding="SAME",
                                        stride_h=2, stride_w=2, filter_height=3,
                                        filter_width=3))
