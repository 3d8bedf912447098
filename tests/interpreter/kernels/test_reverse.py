"""REVERSE_V2 (interpreter/kernels/reverse.py) bit-exact with both LiteRT kernel sets: every
element type LiteRT takes (quantized int8 / uint8 too), one or several contiguous axes,
negative, constant and computed axes; and what edgelite does where LiteRT refuses."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError, UnsupportedOpError
from edgelite.interpreter.kernels.versions import T, TensorSig

from ..op_models import const, op_model, run_op
from tests.interpreter.tflite_builder import QuantModel
from tests.support import assert_bit_exact, full_range, random_qparams

AXES = np.int32
SHAPE = (2, 3, 4)
DTYPES = [np.float32, np.float16, np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_]


def values(rng, shape, dtype) -> np.ndarray:
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return full_range(rng, shape, dtype)


def reverse(x, axes, constant=True) -> np.ndarray:
    """Both kernel sets against LiteRT's; returns edgelite's output."""
    axes = np.array(axes, AXES)
    model, feeds = op_model("REVERSE_V2", [x, const(axes) if constant else axes],
                            [(x.shape, x.dtype)])
    return assert_bit_exact(model, feeds)["reference"][0]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axes", [[0], [1], [2], [-1], [-3]])
def test_one_axis(rng, dtype, axes):
    x = values(rng, SHAPE, dtype)
    np.testing.assert_array_equal(reverse(x, axes), np.flip(x, axes))


@pytest.mark.parametrize("axes", [[0, 1], [2, 1], [-1, -2], [1, -1], [0, 1, 2], [2, 0, 1]])
def test_contiguous_axes(rng, axes):
    x = values(rng, SHAPE, np.float32)
    np.testing.assert_array_equal(reverse(x, axes), np.flip(x, axes))


@pytest.mark.parametrize("axes", [[1], [2, -2]])
def test_computed_axes(rng, axes):
    x = values(rng, SHAPE, np.int32)
    np.testing.assert_array_equal(reverse(x, axes, constant=False), np.flip(x, axes))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_quantized_values_move_unchanged(rng, dtype):
    q = random_qparams(rng, dtype)
    m = QuantModel()
    x = m.input("x", (3, 5, 2), dtype, *q)
    axes = m.const("axes", [1], AXES)
    m.op("REVERSE_V2", [x, axes], [m.output("y", (3, 5, 2), dtype, *q)])
    feed = full_range(rng, (3, 5, 2), dtype)
    (out,) = assert_bit_exact(m.build(), [feed])["default"]
    np.testing.assert_array_equal(out, feed[:, ::-1])


def test_where_litert_refuses_edgelite_does_what_tf_does(rng):
    """Non-contiguous axes (LiteRT: "Non-contiguous `axes` not supported") are each
    reversed; no axes at all (LiteRT crashes) copies the input."""
    x = values(rng, SHAPE, np.float32)
    out = run_op("REVERSE_V2", [x, const([0, 2], AXES)], [(SHAPE, np.float32)])[0]
    np.testing.assert_array_equal(out, x[::-1, :, ::-1])
    out = run_op("REVERSE_V2", [x, const(np.zeros(0, AXES))], [(SHAPE, np.float32)])[0]
    np.testing.assert_array_equal(out, x)


def test_refusals(rng):
    x = values(rng, SHAPE, np.float32)
    with pytest.raises(ShapeError, match=r"REVERSE_V2.*axes \[1, -2\] name a dimension more "
                       "than once"):
        run_op("REVERSE_V2", [x, const([1, -2], AXES)], [(SHAPE, np.float32)])
    with pytest.raises(ShapeError, match=r"REVERSE_V2.*axis 3 is out of range for a rank-3 "
                       r"input \(valid: -3 to 2\)"):  # computed: found by invoke()
        run_op("REVERSE_V2", [x, np.array([3], AXES)], [(SHAPE, np.float32)])
    with pytest.raises(ShapeError, match=r"axes 'const1' must be 1-D with at most one entry per "
                       r"input dimension; has shape \[\] for a rank-3 input"):
        run_op("REVERSE_V2", [x, const(np.int32(1))], [(SHAPE, np.float32)])
    with pytest.raises(UnsupportedOpError, match=r"axes tensor 'const1' has type int64"):
        run_op("REVERSE_V2", [x, const([1], np.int64)], [(SHAPE, np.float32)])
    with pytest.raises(UnsupportedOpError, match=r"input tensor 'input0' has type uint32"):
        run_op("REVERSE_V2", [x.astype(np.uint32), const([1], AXES)], [(SHAPE, np.uint32)])

# Version cases (tests/interpreter/kernels/test_versions.py collects them): op_version.cc.
_I8, _U8, _I32, _F32, _BOOL = (TensorSig(t) for t in (T.INT8, T.UINT8, T.INT32, T.FLOAT32,
                                                    T.BOOL))
VERSION_CASES = [("REVERSE_V2", [_I8, _I32], 3), ("REVERSE_V2", [_BOOL, _I32], 2),
                 ("REVERSE_V2", [_U8, _I32], 1), ("REVERSE_V2", [_F32, _I32], 1)]
