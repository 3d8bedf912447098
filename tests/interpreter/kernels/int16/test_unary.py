"""16x8 RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH (int16, zero point 0): every int16 input
value, bit-exact with both LiteRT kernel sets (LOGISTIC / TANH: the power-of-two input
scales, where the kernel sets differ, and general ones)."""

import numpy as np
import pytest

from edgelite.errors import UnsupportedOpError

from tests.interpreter.tflite_builder import QuantModel
from tests.support import KERNEL_SETS, assert_bit_exact, run_edgelite

ALL = np.arange(-32768, 32768, dtype=np.int64).astype(np.int16).reshape(2, 128, 256)


def _model(op, in_scale, out_scale, **options):
    m = QuantModel()
    x = m.input("x", ALL.shape, np.int16, in_scale, 0)
    y = m.output("y", ALL.shape, np.int16, out_scale, 0)
    m.op(op, [x], [y], **options)
    return m.build()


@pytest.mark.parametrize("op", ["RELU", "RELU6"])
@pytest.mark.parametrize("scales", [(1e-3, 1e-3), (3e-4, 2e-4), (2e-4, 5e-4), (1e-2, 3e-4)])
def test_relu16(op, scales):
    assert_bit_exact(_model(op, *scales), [ALL])


@pytest.mark.parametrize("alpha", [0.2, 0.01, -0.35, 1.7])
@pytest.mark.parametrize("scales", [(1e-3, 1e-3), (3e-4, 2e-4), (2e-4, 5e-4)])
def test_leaky_relu16(alpha, scales):
    assert_bit_exact(_model("LEAKY_RELU", *scales, alpha=alpha), [ALL])


# 2^-12 / 2^-11: the power-of-two scales (optimized gemmlowp kernels on the default set).
IN_SCALES = [2.0**-12, 2.0**-11, 2.0**-13, 1e-4, 3.1e-4, 1.7e-3, 4e-5]


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
@pytest.mark.parametrize("in_scale", IN_SCALES)
def test_logistic_tanh16(op, in_scale):
    assert_bit_exact(_model(op, in_scale, 2.0**-15), [ALL])


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
def test_logistic_tanh16_output_scale_refused(op):
    model = _model(op, 1e-3, 1.0 / 30000)
    for kernels in KERNEL_SETS:
        with pytest.raises(UnsupportedOpError, match="needs output scale 2\\^-15"):
            run_edgelite(model, [ALL], kernels)
