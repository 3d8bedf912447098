"""QUANTIZE float -> int8 / uint8 and int8 / uint8 -> int8 / uint8, bit-exact with both
LiteRT kernel sets. (quantize_model builds DEQUANTIZE too: test_dequantize.py.)"""

import numpy as np
import pytest

from ..quant_oracle import QuantModel, assert_bit_exact, full_range, random_qparams

DTYPES = [np.int8, np.uint8]


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
        x[0, :5] = [np.inf, -np.inf, 1e30, -1e30, 0.0]
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
