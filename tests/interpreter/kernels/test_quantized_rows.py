"""Quantized ops over the last axis -- L2_NORMALIZATION and LOG_SOFTMAX -- bit-exact
with both LiteRT kernel sets: random rows under random input parameters, several seeds,
rows of zeros and rows of one repeated value."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.interpreter.errors import EdgeliteError

from ..quant_oracle import QuantModel, assert_bit_exact, full_range, random_qparams


def row_model(op, dtype, shape, q_in, q_out, version=2, **options):
    m = QuantModel()
    x = m.input("x", shape, dtype, *q_in)
    y = m.output("y", shape, dtype, *q_out)
    m.op(op, [x], [y], version=version, **options)
    return m.build()


def rows_with_corners(rng, shape, dtype, zero_point):
    x = full_range(rng, shape, dtype)
    x[0, 0] = zero_point  # a row of zeros (sum 0)
    x[0, 1] = zero_point + 1  # one small value, repeated
    x[0, 2, :1] = np.iinfo(dtype).max  # a single large value among random ones
    return x


# the output parameters each op fixes, and the input scales tried
CASES = {"L2_NORMALIZATION": ({np.int8: (1 / 128, 0), np.uint8: (1 / 128, 128)}, 0.01, 0.1),
         "LOG_SOFTMAX": ({np.int8: (16 / 256, 127), np.uint8: (16 / 256, 255)}, 0.01, 0.3)}


@pytest.mark.parametrize("op", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("depth", [1, 10, 100])
@pytest.mark.parametrize("seed", range(3))
def test_row_ops(op, dtype, depth, seed):
    rng = np.random.default_rng(seed)
    q_out, low, high = CASES[op]
    q_in = random_qparams(rng, dtype, low, high)
    x = rows_with_corners(rng, (2, 5, depth), dtype, q_in[1])
    assert_bit_exact(row_model(op, dtype, x.shape, q_in, q_out[dtype]), [x])


def test_l2_normalization_needs_fixed_output():
    model = row_model("L2_NORMALIZATION", np.int8, (2, 4), (0.1, 0), (0.01, 0))
    with pytest.raises(EdgeliteError, match="needs 1/128 and 0"):
        Interpreter(model_content=model).allocate_tensors()

