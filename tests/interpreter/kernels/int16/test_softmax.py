"""16x8 SOFTMAX (int16, output scale 2^-15): bit-exact with both LiteRT kernel sets over
random rows, several input scales and betas, odd depths."""

import numpy as np
import pytest

from edgelite.errors import UnsupportedOpError

from tests.interpreter.tflite_builder import QuantModel
from tests.support import KERNEL_SETS, assert_bit_exact, full_range, run_edgelite


def _model(shape, in_scale, beta, out_scale=2.0**-15):
    m = QuantModel()
    x = m.input("x", shape, np.int16, in_scale, 0)
    y = m.output("y", shape, np.int16, out_scale, 0)
    m.op("SOFTMAX", [x], [y], beta=beta)
    return m.build()


@pytest.mark.parametrize("shape", [(3, 10), (1, 1), (2, 3, 37), (5,), (4, 1000)])
@pytest.mark.parametrize("in_scale, beta", [(1e-3, 1.0), (3.1e-4, 1.0), (2.0**-12, 1.0),
                                            (5e-5, 2.5), (1e-2, 0.3)])
def test_softmax16(shape, in_scale, beta):
    rng = np.random.default_rng(len(shape) * 7 + int(beta * 10))
    model = _model(shape, in_scale, beta)
    for spread in (np.int16, None):
        x = full_range(rng, shape, np.int16) if spread else \
            rng.integers(-300, 300, shape).astype(np.int16)
        assert_bit_exact(model, [x])


def test_softmax16_output_scale_refused():
    model = _model((2, 4), 1e-3, 1.0, out_scale=1.0 / 256)
    for kernels in KERNEL_SETS:
        with pytest.raises(UnsupportedOpError, match="needs output scale 2\\^-15"):
            run_edgelite(model, [np.zeros((2, 4), np.int16)], kernels)
