"""PAD, PADV2 and MIRROR_PAD against LiteRT's reference kernels; int8 / uint8 PAD and
PADV2 bit-exact with both LiteRT kernel sets."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError

from ..op_models import check_op, const, run_op
from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, assert_matches_litert, full_range, rand, random_qparams
from ..tflite_builder import single_op_model

I32, F32 = np.int32, np.float32


@pytest.mark.parametrize("paddings", [[[0, 0], [1, 2], [2, 1], [0, 0]],
                                      [[1, 0], [0, 0], [0, 3], [2, 2]]])
def test_pad(rng, paddings):
    x = rand(rng, (1, 3, 4, 2))
    p = np.array(paddings, np.int32)
    out_shape = tuple(np.array(x.shape) + p.sum(axis=1))
    model = single_op_model("PAD", [x.shape, 1], out_shape, consts={1: p})
    assert_matches_litert(model, [x])


def test_padv2_constant_value(rng):
    x = rand(rng, (2, 3))
    p = np.array([[1, 1], [0, 2]], np.int32)
    model = single_op_model("PADV2", [x.shape, 1, 2], (4, 5),
                            consts={1: p, 2: np.array([7.5], np.float32)})
    (out,) = assert_matches_litert(model, [x])
    assert out[0, 0] == 7.5


def test_pad_int64_paddings(rng):
    x = rand(rng, (2, 2))
    p = np.array([[0, 1], [1, 0]], np.int64)
    model = single_op_model("PAD", [x.shape, 1], (3, 3), consts={1: p})
    assert_matches_litert(model, [x])


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
@pytest.mark.parametrize("paddings", [[[0, 0], [1, 2], [2, 1], [0, 0]],
                                      [[1, 0], [2, 2], [0, 3], [1, 1]],
                                      [[0, 0], [0, 0], [0, 0], [0, 0]]])
@pytest.mark.parametrize("dtype", [F32, I32])
def test_mirror_pad(rng, mode, paddings, dtype):
    x = rand(rng, (2, 4, 5, 3), low=-50, high=50).astype(dtype)
    expected = np.pad(x, paddings, mode=mode.lower())
    (out,) = check_op("MIRROR_PAD", [x, const(paddings, I32)], [(expected.shape, dtype)],
                      mode=mode)
    np.testing.assert_array_equal(out, expected)


def test_mirror_pad_limits(rng):
    x = rand(rng, (3, 4))
    check_op("MIRROR_PAD", [x, const([[3, 3], [4, 4]], np.int64)], [((9, 12), F32)],
             mode="SYMMETRIC")
    with pytest.raises(ShapeError, match="exceeds 2, the most REFLECT"):
        run_op("MIRROR_PAD", [x, const([[3, 0], [0, 0]], I32)], [((6, 4), F32)],
               mode="REFLECT")


# --------------------------------------------------------------------------- int8 / uint8

DTYPES = [np.int8, np.uint8]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["PAD", "PADV2"])
def test_quantized_pad(rng, dtype, op):
    q = random_qparams(rng, dtype)
    m = QuantModel()
    x = m.input("x", (1, 4, 5, 3), dtype, *q)
    pads = m.const("pads", np.array([[0, 0], [1, 2], [2, 0], [0, 1]], np.int32), np.int32)
    inputs = [x, pads]
    if op == "PADV2":
        inputs.append(m.const("value", np.array([7], dtype), dtype, *q))
    y = m.output("y", (1, 7, 7, 4), dtype, *q)
    m.op(op, inputs, [y], version=2)
    assert_bit_exact(m.build(), [full_range(rng, (1, 4, 5, 3), dtype)])
