"""16x8 ADD, SUB, MUL (int16, zero point 0): general scales and the power-of-two path,
broadcasting, fused activations; bit-exact with both LiteRT kernel sets."""

import numpy as np
import pytest

from edgelite.errors import UnsupportedOpError

from tests.interpreter.tflite_builder import QuantModel
from tests.support import KERNEL_SETS, assert_bit_exact, full_range, run_edgelite

ACTS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]
SHAPES = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((1, 3, 1), (2, 1, 5)), ((7,), ())]


def _model(op, shape1, shape2, scales, **options):
    m = QuantModel()
    a = m.input("a", shape1, np.int16, scales[0], 0)
    b = m.input("b", shape2, np.int16, scales[1], 0)
    y = m.output("y", np.broadcast_shapes(shape1, shape2), np.int16, scales[2], 0)
    m.op(op, [a, b], [y], **options)
    return m.build()


def _feeds(rng, shape1, shape2):
    return [full_range(rng, shape1, np.int16), full_range(rng, shape2, np.int16)]


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("seed", range(4))
def test_general_scales(op, shapes, seed):
    rng = np.random.default_rng(seed)
    scales = [float(np.float32(s)) for s in rng.uniform(1e-5, 1e-3, 3)]
    if op == "MUL":
        scales[2] = float(np.float32(scales[0] * scales[1] * rng.uniform(500, 20000)))
    options = {"fused_activation_function": ACTS[seed]}
    if op != "MUL":
        options["pot_scale_int16"] = False
    model = _model(op, *shapes, scales, **options)
    for _ in range(2):
        assert_bit_exact(model, _feeds(rng, *shapes))


@pytest.mark.parametrize("op", ["ADD", "SUB"])
@pytest.mark.parametrize("logs", [(-12, -12, -12), (-12, -14, -12), (-15, -13, -13),
                                  (-10, -10, -10)])
@pytest.mark.parametrize("seed", range(2))
def test_power_of_two_scales(op, logs, seed):
    """pot_scale_int16 true (the option's default) with power-of-two scales."""
    rng = np.random.default_rng(10 + seed)
    shapes = SHAPES[0]
    model = _model(op, *shapes, [2.0**e for e in logs],
                   fused_activation_function=ACTS[seed * 2])
    assert_bit_exact(model, _feeds(rng, *shapes))


@pytest.mark.parametrize("op", ["ADD", "SUB"])
def test_power_of_two_default_option_general_scales(op):
    """pot_scale_int16 true but a scale that is no power of two: the general path."""
    rng = np.random.default_rng(3)
    model = _model(op, (3, 5), (3, 5), [3e-4, 2.0**-12, 2.0**-11])
    assert_bit_exact(model, _feeds(rng, (3, 5), (3, 5)))


@pytest.mark.parametrize("scales, shape2, message", [
    ([2.0**-14, 2.0**-13, 2.0**-12], (4,), "one input at the output's scale"),
    ([2.0**-12] * 3, (1,), "does not broadcast"),
])
def test_power_of_two_refused(scales, shape2, message):
    """Cases LiteRT's power-of-two kernel refuses or reads out of bounds."""
    model = _model("ADD", (4,), shape2, scales)
    for kernels in KERNEL_SETS:
        with pytest.raises(UnsupportedOpError, match=message):
            run_edgelite(model, [np.zeros(4, np.int16), np.zeros(shape2, np.int16)], kernels)
