"""The 16x8 dispatch (OpDef.choose / requantize.is_quantized16): int16 tensors with
quantization parameters reach the integer kernels that take them -- pools, RESIZE_*,
QUANTIZE -- and the type-generic kernels of CONCATENATION, DEQUANTIZE and the value-moving
ops (RESHAPE, SQUEEZE, EXPAND_DIMS, PAD, ...) otherwise: bit-exact with both LiteRT kernel
sets. (The other 16x8 kernels: int16/test_affine.py, int16/test_arith.py, int16/test_unary.py,
int16/test_softmax.py.)"""

import numpy as np
import pytest

from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, full_range

ACTS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]
S = 3.0517578e-4  # an int16 activation scale


def _unary_model(op, in_shape, out_shape, consts=(), in_type=np.int16, out_type=np.int16,
                 in_q=(S, 0), out_q=(S, 0), **options):
    m = QuantModel()
    x = m.input("x", in_shape, in_type, *in_q)
    inputs = [x] + [m.const(f"c{i}", v, v.dtype) for i, v in enumerate(consts)]
    y = m.output("y", out_shape, out_type, *out_q)
    m.op(op, inputs, [y], **options)
    return m.build()


def _feed(rng, shape, dtype=np.int16):
    if dtype == np.float32:
        return (rng.standard_normal(shape) * 4).astype(np.float32)
    return full_range(rng, shape, dtype)


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("seed", range(6))
def test_pool16(op, seed):
    rng = np.random.default_rng(seed)
    n, h, w, c = 1 + seed % 2, 5 + seed, 7 - seed % 3, 1 + seed % 3
    k, stride = (2 + seed % 2, 1 + seed % 3), (1 + seed % 2, 2)
    padding = ["SAME", "VALID"][seed % 2]
    oh = -(-h // stride[0]) if padding == "SAME" else (h - k[0] + stride[0]) // stride[0]
    ow = -(-w // stride[1]) if padding == "SAME" else (w - k[1] + stride[1]) // stride[1]
    model = _unary_model(op, (n, h, w, c), (n, oh, ow, c), padding=padding,
                         stride_h=stride[0], stride_w=stride[1], filter_height=k[0],
                         filter_width=k[1], fused_activation_function=ACTS[seed % 4])
    for _ in range(2):
        assert_bit_exact(model, [_feed(rng, (n, h, w, c))])


@pytest.mark.parametrize("op", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
@pytest.mark.parametrize("size", [(7, 9), (3, 2), (8, 8)])
@pytest.mark.parametrize("mode", [{}, {"align_corners": True}, {"half_pixel_centers": True}])
def test_resize16(op, size, mode):
    rng = np.random.default_rng(size[0] * 3 + len(mode))
    model = _unary_model(op, (2, 4, 5, 3), (2,) + size + (3,), [np.array(size, np.int32)],
                         **mode)
    assert_bit_exact(model, [_feed(rng, (2, 4, 5, 3))])


@pytest.mark.parametrize("scales", [(S, S, S), (S, 2 * S, 1.5 * S)])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenation16(scales, axis):
    """int16 CONCATENATION copies the values (the converter gives every input the
    output's scale; LiteRT does not rescale int16)."""
    rng = np.random.default_rng(axis + 5)
    shapes = [(2, 3, 4), (2, 3, 4), (2, 3, 4)]
    m = QuantModel()
    xs = [m.input(f"x{i}", s, np.int16, scales[i], 0) for i, s in enumerate(shapes)]
    out_shape = list(shapes[0])
    out_shape[axis] *= 3
    y = m.output("y", out_shape, np.int16, S, 0)
    m.op("CONCATENATION", xs, [y], axis=axis)
    assert_bit_exact(m.build(), [_feed(rng, s) for s in shapes])


@pytest.mark.parametrize("in_type, in_q, out_q", [
    (np.float32, (0.0, 0), (S, 0)),             # float -> int16
    (np.float32, (0.0, 0), (1e-5, 0)),          # saturating
    (np.int16, (S, 0), (2.7 * S, 0)),           # int16 -> int16
    (np.int16, (S, 0), (0.37 * S, 0)),
    (np.int8, (0.02, 3), (S, 0)),               # int8 -> int16
])
def test_quantize_to_int16(in_type, in_q, out_q):
    rng = np.random.default_rng(1)
    model = _unary_model("QUANTIZE", (3, 50), (3, 50), in_type=in_type,
                         in_q=in_q if in_type != np.float32 else (None, None), out_q=out_q)
    assert_bit_exact(model, [_feed(rng, (3, 50), in_type)])


@pytest.mark.parametrize("out_q", [(0.05, -7), (0.003, 0)])
def test_quantize_int16_to_int8(out_q):
    rng = np.random.default_rng(2)
    model = _unary_model("QUANTIZE", (4, 33), (4, 33), out_type=np.int8, out_q=out_q)
    assert_bit_exact(model, [_feed(rng, (4, 33))])


def test_dequantize16():
    from tests.support import run_edgelite, run_litert
    rng = np.random.default_rng(3)
    model = _unary_model("DEQUANTIZE", (5, 7), (5, 7), out_type=np.float32,
                         out_q=(None, None))
    x = _feed(rng, (5, 7))
    for kernels in ("reference", "default"):
        np.testing.assert_array_equal(run_edgelite(model, [x], kernels)[0],
                                      run_litert(model, [x], kernels)[0])


@pytest.mark.parametrize("op, in_shape, out_shape, consts, options", [
    ("RESHAPE", (2, 3, 4), (6, 4), [np.array([6, 4], np.int32)], {"new_shape": [6, 4]}),
    ("SQUEEZE", (1, 3, 1, 4), (3, 4), [], {"squeeze_dims": [0, 2]}),
    ("EXPAND_DIMS", (3, 4), (3, 1, 4), [np.array(1, np.int32)], {}),
    ("PAD", (2, 3, 4), (3, 6, 4), [np.array([[1, 0], [2, 1], [0, 0]], np.int32)], {}),
    ("TRANSPOSE", (2, 3, 4), (4, 2, 3), [np.array([2, 0, 1], np.int32)], {}),
])
def test_value_moving_ops16(op, in_shape, out_shape, consts, options):
    rng = np.random.default_rng(4)
    model = _unary_model(op, in_shape, out_shape, consts, **options)
    assert_bit_exact(model, [_feed(rng, in_shape)])
