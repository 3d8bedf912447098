"""int8 / uint8 SOFTMAX, bit-exact with both LiteRT kernel sets (they differ: fixed point
in the reference kernels, a float table in the optimized ones)."""

import numpy as np
import pytest

from .quant_oracle import QuantModel, assert_bit_exact, full_range, random_qparams


def softmax_model(dtype, shape, q_in, beta):
    m = QuantModel()
    x = m.input("x", shape, dtype, *q_in)
    y = m.output("y", shape, dtype, 1 / 256, -128 if dtype == np.int8 else 0)
    m.op("SOFTMAX", [x], [y], version=2, beta=beta)
    return m.build()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("shape", [(64, 10), (4, 3, 100), (7, 1), (2, 1001)])
@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_softmax(rng, dtype, shape, beta):
    q_in = random_qparams(rng, dtype, 0.02, 0.2)
    assert_bit_exact(softmax_model(dtype, shape, q_in, beta), [full_range(rng, shape, dtype)])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_softmax_small_and_large_input_scale(rng, dtype):
    for scale in (0.001, 0.5):
        q_in = (scale, 0 if dtype == np.int8 else 128)
        x = full_range(rng, (50, 12), dtype)
        assert_bit_exact(softmax_model(dtype, x.shape, q_in, 1.0), [x])
