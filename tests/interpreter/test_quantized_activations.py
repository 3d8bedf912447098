"""int8 / uint8 LOGISTIC, TANH, HARD_SWISH, LEAKY_RELU, bit-exact with both LiteRT kernel
sets. Every input value is fed, so the whole 256-entry table is checked."""

import numpy as np
import pytest

from .quant_oracle import QuantModel, assert_bit_exact, random_qparams

FIXED_OUT = {  # TFLite's quantization spec
    "LOGISTIC": {np.int8: (1 / 256, -128), np.uint8: (1 / 256, 0)},
    "TANH": {np.int8: (1 / 128, 0), np.uint8: (1 / 128, 128)},
}


def all_values(dtype, repeat=1):
    info = np.iinfo(dtype)
    return np.tile(np.arange(info.min, info.max + 1), repeat).astype(dtype).reshape(-1, 16)


def unary_model(op, dtype, q_in, q_out, **options):
    x_value = all_values(dtype, 2)
    m = QuantModel()
    x = m.input("x", x_value.shape, dtype, *q_in)
    y = m.output("y", x_value.shape, dtype, *q_out)
    version_1 = ("HARD_SWISH", "RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1")
    m.op(op, [x], [y], version=1 if op in version_1 else 2, **options)
    return m.build(), [x_value]


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("seed", range(6))
def test_logistic_tanh(op, dtype, seed):
    rng = np.random.default_rng(seed)
    q_in = random_qparams(rng, dtype, 0.005, 0.12)
    model, feeds = unary_model(op, dtype, q_in, FIXED_OUT[op][dtype])
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("seed", range(6))
def test_hard_swish(dtype, seed):
    rng = np.random.default_rng(seed)
    q_in = random_qparams(rng, dtype, 0.01, 0.1)
    q_out = random_qparams(rng, dtype, 0.005, 0.08)
    model, feeds = unary_model("HARD_SWISH", dtype, q_in, q_out)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("alpha", [0.1, 0.2, 0.01, 0.5])
def test_leaky_relu(rng, dtype, alpha):
    q_in = random_qparams(rng, dtype, 0.01, 0.1)
    q_out = random_qparams(rng, dtype, 0.01, 0.1)
    model, feeds = unary_model("LEAKY_RELU", dtype, q_in, q_out, alpha=alpha)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("op", ["RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("same_params", [True, False])
def test_relu_family(rng, op, dtype, same_params):
    q_in = random_qparams(rng, dtype, 0.01, 0.1)
    q_out = q_in if same_params else random_qparams(rng, dtype, 0.01, 0.1)
    model, feeds = unary_model(op, dtype, q_in, q_out)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_relu_n1_to_1_rescaling_ties(dtype):
    # s_in / s_out = 1/4: a quarter of the values sit on ties, -0.5 among them.
    z = 0 if dtype == np.int8 else 128
    model, feeds = unary_model("RELU_N1_TO_1", dtype, (0.25, z), (1.0, z))
    assert_bit_exact(model, feeds)
