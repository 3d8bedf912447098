"""CONCATENATION and PACK against LiteRT's reference kernels; int8 / uint8 CONCATENATION
bit-exact with both LiteRT kernel sets."""

import numpy as np
import pytest

from edgelite.interpreter import ShapeError

from ..op_models import check_op, const
from tests.interpreter.tflite_builder import QuantModel
from tests.support import (assert_bit_exact, assert_close, assert_matches_litert, full_range, rand,
                          random_qparams, run_edgelite)
from ..tflite_builder import single_op_model

I32, I64, F32 = np.int32, np.int64, np.float32


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_concatenation(rng, axis):
    base, sizes = (2, 3, 4), [1, 2, 3]  # three inputs of sizes 1, 2, 3 along the axis
    a = axis % 3
    shapes = [tuple(n if d == a else base[d] for d in range(3)) for n in sizes]
    xs = [rand(rng, s) for s in shapes]
    out_shape = tuple(sum(sizes) if d == a else base[d] for d in range(3))
    model = single_op_model("CONCATENATION", shapes, out_shape, axis=axis)
    assert_matches_litert(model, xs)


def test_concatenation_fused_relu(rng):
    # LiteRT refuses a fused activation on CONCATENATION; edgelite applies it.
    xs = [rand(rng, (2, 3)), rand(rng, (2, 2))]
    model = single_op_model("CONCATENATION", [(2, 3), (2, 2)], (2, 5), axis=1,
                            fused_activation_function="RELU6")
    (out,) = run_edgelite(model, [x * 10 for x in xs])
    assert_close(out, np.clip(np.concatenate(xs, axis=1) * 10, 0, 6))


def test_concatenation_mismatched_shapes(rng):
    model = single_op_model("CONCATENATION", [(2, 3), (3, 3)], (2, 6), axis=1)
    with pytest.raises(ShapeError, match="does not match"):
        run_edgelite(model, [rand(rng, (2, 3)), rand(rng, (3, 3))])


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("count", [1, 3])
def test_pack(rng, axis, count):
    xs = [rand(rng, (2, 4)) for _ in range(count)]
    expected = np.stack(xs, axis=axis)
    (out,) = check_op("PACK", xs, [(expected.shape, F32)], axis=axis, values_count=count)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", [I32, I64])
def test_pack_int_scalars(dtype):
    # The usual shape plumbing: Pack(batch, -1, 4) of scalars.
    parts = [np.array(7, dtype), const(-1, dtype), const(4, dtype)]
    (out,) = check_op("PACK", parts, [((3,), dtype)], values_count=3)
    np.testing.assert_array_equal(out, [7, -1, 4])


# --------------------------------------------------------------------------- int8 / uint8

DTYPES = [np.int8, np.uint8]


def concat_model(rng, dtype, shapes, axis, qs, q_out):
    m = QuantModel()
    ins = [m.input(f"x{i}", s, dtype, *q) for i, (s, q) in enumerate(zip(shapes, qs))]
    out_shape = list(shapes[0])
    out_shape[axis] = sum(s[axis] for s in shapes)
    y = m.output("y", out_shape, dtype, *q_out)
    m.op("CONCATENATION", ins, [y], version=2, axis=axis)
    return m.build(), [full_range(rng, s, dtype) for s in shapes]


@pytest.mark.parametrize("axis", [3, 1, 0])
def test_concat_uint8_requantizes(rng, axis):
    shapes = [(2, 3, 4, 5), (2, 3, 4, 5), (2, 3, 4, 5)]
    shapes = [tuple(d + i if a == axis else d for a, d in enumerate(s))
              for i, s in enumerate(shapes)]
    q_out = random_qparams(rng, np.uint8)
    qs = [random_qparams(rng, np.uint8), q_out, random_qparams(rng, np.uint8, 0.1, 0.3)]
    model, feeds = concat_model(rng, np.uint8, shapes, axis, qs, q_out)
    assert_bit_exact(model, feeds)


@pytest.mark.parametrize("dtype", DTYPES)
def test_concat_equal_params(rng, dtype):
    q = random_qparams(rng, dtype)
    model, feeds = concat_model(rng, dtype, [(2, 4, 3), (2, 4, 5)], -1, [q, q], q)
    assert_bit_exact(model, feeds)


def test_concat_int8_different_params_is_edgelite_only(rng):
    # LiteRT refuses int8 inputs with other parameters than the output; edgelite
    # requantizes them like uint8.
    from tests.support import run_edgelite
    qs = [(0.1, 3), (0.05, -10)]
    model, feeds = concat_model(rng, np.int8, [(4, 2), (4, 3)], 1, qs, (0.1, 3))
    out = run_edgelite(model, feeds, "reference")[0]
    np.testing.assert_array_equal(out[:, :2], feeds[0])
    expected = np.clip(np.floor(np.abs((feeds[1] + 10.0) * 0.5) + 0.5)
                       * np.sign(feeds[1] + 10.0) + 3, -128, 127)
    np.testing.assert_array_equal(out[:, 2:], expected.astype(np.int8))


def test_unquantized_int8_concat_stays_a_plain_copy(rng):
    from tests.support import run_edgelite
    m = QuantModel()
    a, b = m.input("a", (2, 3), np.int8), m.input("b", (2, 2), np.int8)
    y = m.output("y", (2, 5), np.int8)
    m.op("CONCATENATION", [a, b], [y], axis=1)
    feeds = [full_range(rng, (2, 3), np.int8), full_range(rng, (2, 2), np.int8)]
    out = run_edgelite(m.build(), feeds, "default")[0]
    np.testing.assert_array_equal(out, np.concatenate(feeds, axis=1))
