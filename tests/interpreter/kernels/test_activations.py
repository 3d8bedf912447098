"""RELU / RELU6 / RELU_N1_TO_1 / RELU_0_TO_1, LOGISTIC, TANH, HARD_SWISH, LEAKY_RELU, ELU
and GELU: float against LiteRT's reference kernels (its default kernels where the
reference resolver lacks the op, and where they compute differently); int8 / uint8
bit-exact with both LiteRT kernel sets, every input value fed, so the whole 256-entry
table is checked."""

import numpy as np
import pytest

from ..op_models import NOT_IN_REF_RESOLVER, check_op, check_op_default
from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, assert_matches_litert, rand, random_qparams
from ..tflite_builder import single_op_model

F32 = np.float32


@pytest.mark.parametrize("op", ["RELU", "RELU6", "RELU_N1_TO_1", "TANH", "LOGISTIC"])
def test_activation(rng, op):
    x = rand(rng, (2, 3, 50), low=-10, high=10)
    assert_matches_litert(single_op_model(op, [x.shape], x.shape), [x])


def test_logistic_tails(rng):
    # Both reference cut-offs: e^x below -9, exactly 1 above 16.619...
    x = np.concatenate([np.linspace(-120, 120, 481), [-9.0, -9.0001, 16.619047, 16.62, 0.0],
                        rand(rng, (100,), low=-20, high=20)]).astype(np.float32)
    (out,) = assert_matches_litert(single_op_model("LOGISTIC", [x.shape], x.shape), [x],
                                   rtol=1e-6, atol_factor=0)
    assert out[x > 16.62].min() == 1.0


@pytest.mark.parametrize("alpha", [0.2, 0.01, 1.5, -0.3])
def test_leaky_relu(rng, alpha):
    x = rand(rng, (2, 5, 7), low=-4, high=4)
    x[0, 0, :2] = [0.0, -0.0]
    check_op("LEAKY_RELU", [x], [(x.shape, F32)], alpha=alpha)


@pytest.mark.parametrize("op", ["ELU", "HARD_SWISH", "RELU_0_TO_1"])
def test_activation_float(rng, op):
    x = np.concatenate([rand(rng, (200,), low=-8, high=8),
                        np.array([-3, 3, 0, -1e-5, 1e-5, -20, 20], F32)])
    check = check_op_default if op in NOT_IN_REF_RESOLVER else check_op
    check(op, [x], [(x.shape, F32)])


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu(rng, approximate):
    x = np.concatenate([rand(rng, (300,), low=-6, high=6), np.linspace(-12, 12, 97, dtype=F32),
                        np.array([0.0, -30.0, 30.0, 1e-4], F32)])
    check_op("GELU", [x], [(x.shape, F32)], approximate=approximate, rtol=2e-6)


@pytest.mark.parametrize("op,options,low,high", [
    ("HARD_SWISH", {}, -8, 8), ("GELU", dict(approximate=False), -6, 6),
    ("GELU", dict(approximate=True), -6, 6), ("LEAKY_RELU", dict(alpha=0.1), -3, 3),
])
def test_against_default_kernels(rng, op, options, low, high):
    # LiteRT's optimized kernels (Eigen / XNNPACK) round differently from its reference
    # kernels: still within rtol 1e-5 relative to the tensor's magnitude.
    x = rand(rng, (4, 64), low=low, high=high)
    check_op_default(op, [x], [(x.shape, F32)], **options)


# --------------------------------------------------------------------------- int8 / uint8

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
def test_quantized_leaky_relu(rng, dtype, alpha):
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
