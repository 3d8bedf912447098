"""QUANTIZE float -> int8 / uint8 / int16 (per tensor and per channel) and int8 / uint8 ->
int8 / uint8, bit-exact with both LiteRT kernel sets. (quantize_model builds DEQUANTIZE
too: test_dequantize.py.)"""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import ShapeError

from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, full_range, random_qparams

DTYPES = [np.int8, np.uint8]
# Odd sizes and sizes around the optimized int16 kernel's 8-value blocks (and 4 / 16).
SIZES16 = [1, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 23, 24, 25, 31, 32, 33, 64, 127, 250]
SPECIALS = np.array([1e9, -1e9, np.inf, -np.inf, np.nan, 3e38, -3e38, 0.0, -0.0], np.float32)


def quantize_model(in_dtype, out_dtype, shape, q_in, q_out):
    m = QuantModel()
    x = m.input("x", shape, in_dtype, *(q_in or ()))
    y = m.output("y", shape, out_dtype, *q_out)
    m.op("QUANTIZE" if out_dtype != np.float32 else "DEQUANTIZE", [x], [y], version=2)
    return m.build()


@pytest.mark.parametrize("dtype", DTYPES)
def test_quantize_float(rng, dtype):
    for q_out in (random_qparams(rng, dtype), (0.25, 0 if dtype == np.int8 else 128)):
        # Multiples of s/2 put half of the values exactly on rounding ties.
        x = (rng.integers(-700, 700, size=(5, 200)) * q_out[0] / 2).astype(np.float32)
        x[0, :7] = [np.inf, -np.inf, 1e30, -1e30, 0.0, np.nan, -np.nan]
        assert_bit_exact(quantize_model(np.float32, dtype, x.shape, None, q_out), [x])


@pytest.mark.parametrize("in_dtype,out_dtype", [(np.int8, np.uint8), (np.uint8, np.int8),
                                                (np.int8, np.int8), (np.uint8, np.uint8)])
@pytest.mark.parametrize("size", [256 * 4, 250, 7])
def test_requantize(rng, in_dtype, out_dtype, size):
    for _ in range(3):
        q_in = random_qparams(rng, in_dtype, 0.01, 0.1)
        q_out = random_qparams(rng, out_dtype, 0.01, 0.3)
        x = full_range(rng, (size,), in_dtype)
        assert_bit_exact(quantize_model(in_dtype, out_dtype, x.shape, q_in, q_out), [x])


def _ties(rng, n, scale, specials=0.1):
    """n float32 values at rounding ties (k + 0.5) * s of int16's range and beyond, a few
    arbitrary values, and a fraction ``specials`` of out-of-range / infinite / NaN ones."""
    x = ((rng.integers(-40000, 40000, n) + 0.5) * scale).astype(np.float32)
    pick = rng.random(n)
    x[pick < 0.1] = rng.uniform(-50, 50, int((pick < 0.1).sum()))
    x[pick > 1 - specials] = rng.choice(SPECIALS, int((pick > 1 - specials).sum()))
    return x


@pytest.mark.parametrize("size", SIZES16)
def test_quantize_float_int16(rng, size):
    # Default set: optimized_ops::AffineQuantize<int16_t> -- NEON_2_SSE half-to-even on
    # blocks of 8, double-precision round-half-away on the rest; reference: AffineQuantize.
    # A power-of-two scale puts the ties exactly on .5 in float32 and double alike.
    for zp, scale in ((0, float(np.float32(rng.uniform(1e-4, 0.01)))),
                      (5, float(np.float32(rng.uniform(1e-4, 0.01)))),
                      (int(rng.integers(-32768, 32768)), 2.0**-9)):
        shape = (size,) if zp else (1, size, 1)
        x = _ties(rng, size, scale).reshape(shape)
        assert_bit_exact(quantize_model(np.float32, np.int16, shape, None, (scale, zp)), [x])


def per_channel_model(shape, dtype, scales, zps, axis):
    m = QuantModel()
    x = m.input("x", shape, np.float32)
    y = m.b.tensor("y", shape, dtype, scale=scales, zero_point=zps, quantized_dimension=axis)
    m.outputs.append(y)
    m.op("QUANTIZE", [x], [y], version=3)
    return m.build()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16])
@pytest.mark.parametrize("shape,axis", [((3, 5), 0), ((2, 7, 4), 2), ((4, 3, 3, 6), 0),
                                        ((1, 9, 2), 1)])
def test_quantize_float_per_channel(rng, dtype, shape, axis):
    # reference_ops::PerChannelQuantize in both kernel sets: float32 x / s[c], half away.
    info = np.iinfo(dtype)
    channels = shape[axis]
    scales = rng.uniform(0.002, 0.05, channels).astype(np.float32)
    zps = rng.integers(info.min // 2, info.max // 2 + 1, channels) if dtype != np.int16 else \
        np.zeros(channels, np.int64)
    bshape = [1] * len(shape)
    bshape[axis] = channels
    # Ties of each channel's own scale, plus out-of-range, infinite and NaN values.
    k = rng.integers(-300, 300, shape) + 0.5
    x = (k * scales.reshape(bshape)).astype(np.float32)
    x.reshape(-1)[:len(SPECIALS)] = SPECIALS[:x.size]
    assert_bit_exact(per_channel_model(shape, dtype, scales, zps, axis), [x])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [5, 8, 16, 23])
def test_quantize_float_single_scale_off_axis_0(rng, dtype, size):
    # One scale but quantized_dimension 1: XNNPACK refuses the output, so the default set
    # runs TFLite's optimized_ops::AffineQuantize (blocks of 8 + scalar tail).
    info = np.iinfo(dtype)
    scale, zp = 2.0**-7, int(rng.integers(info.min, info.max + 1))
    # Exact ties (k + 0.5) * 2^-7: half to even in the blocks, half away in the tail.
    x = ((rng.integers(-200, 200, (2, size)) + 0.5) * scale).astype(np.float32)
    x.reshape(-1)[rng.permutation(x.size)[:5]] = SPECIALS[:5]
    assert_bit_exact(per_channel_model((2, size), dtype, [scale], [zp], 1), [x])


@pytest.mark.parametrize("dtype", DTYPES)
def test_requantize_off_axis_0(rng, dtype):
    # XNNPACK refuses tensors quantized along another dimension than 0: TFLite's
    # optimized Requantize runs instead of the delegate's convert.
    m = QuantModel()
    x = m.b.tensor("x", (3, 90), dtype, scale=0.05, zero_point=3, quantized_dimension=1)
    y = m.b.tensor("y", (3, 90), dtype, scale=0.07, zero_point=-5 if dtype == np.int8 else 120,
                   quantized_dimension=1)
    m.inputs.append(x)
    m.outputs.append(y)
    m.op("QUANTIZE", [x], [y], version=2)
    assert_bit_exact(m.build(), [full_range(rng, (3, 90), dtype)])


def test_quantize_per_channel_bad_axis():
    model = per_channel_model((3, 4), np.int8, [0.1, 0.2, 0.3, 0.4], [0, 0, 0, 0], axis=0)
    with pytest.raises(ShapeError, match="4 scales / 4 zero points on dimension 0; expected 3"):
        Interpreter(model_content=model).allocate_tensors()
