"""lut.py's tables: quantized elementwise math on one input -- EXP, LOG, SQRT, RSQRT, ABS
(unary.py), GELU and ELU (activations.py) -- bit-exact with both LiteRT kernel sets: every
input value fed (the whole table checked; int8 and int16) under random parameters, several
seeds, and the parameter corners where a table entry overflows or sits on a rounding tie."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import EdgeliteError

from tests.interpreter.tflite_builder import QuantModel
from tests.support import (assert_bit_exact, litert_delegates, random_qparams, run_edgelite,
                           run_litert)

# LiteRT registers ELU at version 1 only; the others take their op_version.cc version.
VERSION = {"ELU": 1, "ABS": 2, "EXP": 2, "LOG": 2, "SQRT": 2, "RSQRT": 2, "GELU": 2}


def all_values(dtype):
    info = np.iinfo(dtype)
    return np.tile(np.arange(info.min, info.max + 1), 2).astype(dtype).reshape(-1, 16)


def unary_model(op, dtype, q_in, q_out, x_value=None, **options):
    x_value = all_values(dtype) if x_value is None else x_value
    m = QuantModel()
    x = m.input("x", x_value.shape, dtype, *q_in)
    y = m.output("y", x_value.shape, dtype, *q_out)
    m.op(op, [x], [y], version=VERSION[op], **options)
    return m.build(), [x_value]


def params(seed, dtype=np.int8, low=0.01, high=0.1):
    rng = np.random.default_rng(seed)
    return random_qparams(rng, dtype, low, high), random_qparams(rng, dtype, 0.01, 0.2)


@pytest.mark.parametrize("op", ["EXP", "LOG", "ABS"])
@pytest.mark.parametrize("seed", range(5))
def test_table_ops(op, seed):
    q_in, q_out = params(seed)
    assert_bit_exact(*unary_model(op, np.int8, q_in, q_out))


@pytest.mark.parametrize("op,q_in,q_out", [
    ("EXP", (0.25, 0), (0.05, -128)),     # e^31 overflows the output: clamped to 127
    ("EXP", (0.9, 0), (0.5, 0)),          # e^114 is inf in float32: int32(inf) -> -128
    ("LOG", (0.05, 10), (0.02, 5)),       # log of values <= 0: the lowest output
    ("ABS", (0.05, 3), (0.05, -7)),       # equal scales: no rescaling
    ("ABS", (0.05, 0), (0.1, 0)),         # s_in / s_out = 1/2: every odd |q| on a tie
])
def test_table_corners(op, q_in, q_out):
    assert_bit_exact(*unary_model(op, np.int8, q_in, q_out))


@pytest.mark.parametrize("op", ["SQRT", "RSQRT"])
@pytest.mark.parametrize("seed", range(5))
def test_sqrt_rsqrt(op, seed):
    # defined for inputs >= the zero point only: feed exactly those
    rng = np.random.default_rng(seed)
    z_in = int(rng.integers(-128, 0))
    scale = float(np.float32(rng.uniform(0.005, 0.5)))
    q_out = random_qparams(rng, np.int8, 0.01, 0.3)
    x = np.tile(np.arange(z_in, 128), 2).astype(np.int8).reshape(1, -1)
    assert_bit_exact(*unary_model(op, np.int8, (scale, z_in), q_out, x))


@pytest.mark.parametrize("op", ["SQRT", "RSQRT"])
def test_sqrt_rsqrt_negative_input_fails(op):
    model, _ = unary_model(op, np.int8, (0.1, 0), (0.1, 0))
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], all_values(np.int8))
    with pytest.raises(EdgeliteError, match=f"{op}.*negative value.*zero point 0"):
        interp.invoke()


@pytest.mark.parametrize("op", ["EXP", "SQRT", "ABS"])
def test_uint8_refused(op):
    model, _ = unary_model(op, np.uint8, (0.1, 128), (0.1, 128))
    with pytest.raises(EdgeliteError, match="uint8"):
        Interpreter(model_content=model).allocate_tensors()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("approximate", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_gelu(dtype, approximate, seed):
    q_in, q_out = params(seed, dtype, 0.01, 0.08)
    assert_bit_exact(*unary_model("GELU", dtype, q_in, q_out, approximate=approximate))


@pytest.mark.parametrize("seed", range(5))
def test_elu(seed):
    # LiteRT's reference resolver has no ELU: its default kernels (XNNPACK) are the oracle
    q_in, q_out = params(seed)
    model, feeds = unary_model("ELU", np.int8, q_in, q_out)
    assert litert_delegates(model)
    assert_bit_exact(model, feeds, kernels=("default",))


@pytest.mark.parametrize("q_in,q_out", [((0.05, 0), (0.1, 0)), ((0.02, 10), (0.04, -100))])
def test_elu_ties(q_in, q_out):
    # s_in / s_out = 1/2: the positive half sits on ties, which XNNPACK rounds to even
    assert_bit_exact(*unary_model("ELU", np.int8, q_in, q_out), kernels=("default",))


@pytest.mark.parametrize("seed", range(3))
def test_elu_builtin_kernel(seed):
    # kernels="reference" runs TFLite's builtin ELU table: LiteRT's builtin kernels
    # without the XNNPACK delegate compute it
    q_in, q_out = params(seed)
    model, feeds = unary_model("ELU", np.int8, q_in, q_out)
    runs = [run_litert(model, feeds, "optimized")[0], run_edgelite(model, feeds, "reference")[0]]
    np.testing.assert_array_equal(runs[1], runs[0])


# --------------------------------------------------------------------------- int16 (16x8)

INT16_ALL = np.arange(-32768, 32768).astype(np.int16).reshape(16, -1)


@pytest.mark.parametrize("op,options", [("EXP", {}), ("LOG", {}), ("ABS", {}),
                                        ("GELU", dict(approximate=False)),
                                        ("GELU", dict(approximate=True))])
@pytest.mark.parametrize("seed", range(2))
def test_int16(op, options, seed):
    # every int16 value: LUTPopulateInt16's 513 samples and the interpolation between them
    rng = np.random.default_rng(seed)
    q_in = (float(np.float32(rng.uniform(1e-4, 5e-4))), 0)
    q_out = (float(np.float32(rng.uniform(1e-4, 2e-3))), 0)
    assert_bit_exact(*unary_model(op, np.int16, q_in, q_out, INT16_ALL, **options))


@pytest.mark.parametrize("op", ["SQRT", "RSQRT"])
@pytest.mark.parametrize("seed", range(2))
def test_int16_sqrt_rsqrt(op, seed):
    rng = np.random.default_rng(seed)
    q_in = (float(np.float32(rng.uniform(1e-4, 5e-4))), 0)
    q_out = (float(np.float32(rng.uniform(1e-3, 5e-2))), 0)
    x = np.arange(0, 32768).astype(np.int16).reshape(8, -1)
    assert_bit_exact(*unary_model(op, np.int16, q_in, q_out, x))


def test_int16_needs_zero_point_0():
    model, _ = unary_model("EXP", np.int16, (1e-3, 5), (1e-3, 0), INT16_ALL)
    with pytest.raises(EdgeliteError, match="int16 zero points 5 / 0"):
        Interpreter(model_content=model).allocate_tensors()
