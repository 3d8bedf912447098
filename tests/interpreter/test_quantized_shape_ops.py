"""int8 / uint8 RESHAPE, SQUEEZE, PAD, CONCATENATION, RESIZE_*, QUANTIZE and DEQUANTIZE,
bit-exact with both LiteRT kernel sets."""

import numpy as np
import pytest

from .quant_oracle import QuantModel, assert_bit_exact, full_range, random_qparams

DTYPES = [np.int8, np.uint8]


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_squeeze(rng, dtype):
    q = random_qparams(rng, dtype)
    m = QuantModel()
    x = m.input("x", (2, 1, 6, 1), dtype, *q)
    r = m.b.tensor("r", (3, 4), dtype, scale=q[0], zero_point=q[1])
    shape = m.const("shape", np.array([3, 4], np.int32), np.int32)
    m.op("RESHAPE", [x, shape], [r])
    s = m.output("s", (2, 6), dtype, *q)
    x2 = m.input("x2", (2, 1, 6, 1), dtype, *q)
    m.op("SQUEEZE", [x2], [s], squeeze_dims=[1, 3])
    m.outputs.insert(0, r)
    feeds = [full_range(rng, (2, 1, 6, 1), dtype) for _ in range(2)]
    assert_bit_exact(m.build(), feeds)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["PAD", "PADV2"])
def test_pad(rng, dtype, op):
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
    from .quant_oracle import run_ours
    qs = [(0.1, 3), (0.05, -10)]
    model, feeds = concat_model(rng, np.int8, [(4, 2), (4, 3)], 1, qs, (0.1, 3))
    out = run_ours(model, feeds, "reference")[0]
    np.testing.assert_array_equal(out[:, :2], feeds[0])
    expected = np.clip(np.floor(np.abs((feeds[1] + 10.0) * 0.5) + 0.5)
                       * np.sign(feeds[1] + 10.0) + 3, -128, 127)
    np.testing.assert_array_equal(out[:, 2:], expected.astype(np.int8))


def resize_model(op, dtype, x_shape, size, q, **options):
    m = QuantModel()
    x = m.input("x", x_shape, dtype, *q)
    sz = m.const("size", np.array(size, np.int32), np.int32)
    y = m.output("y", (x_shape[0], size[0], size[1], x_shape[3]), dtype, *q)
    m.op(op, [x, sz], [y], version=2 if op == "RESIZE_BILINEAR" else 1, **options)
    return m.build()


@pytest.mark.parametrize("op", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [(9, 13), (3, 2), (10, 14)])
@pytest.mark.parametrize("mode", ["legacy", "align_corners", "half_pixel_centers"])
def test_resize(rng, op, dtype, size, mode):
    options = {} if mode == "legacy" else {mode: True}
    q = random_qparams(rng, dtype)
    x = full_range(rng, (2, 5, 7, 3), dtype)
    assert_bit_exact(resize_model(op, dtype, x.shape, size, q, **options), [x])


def quantize_model(in_dtype, out_dtype, shape, q_in, q_out):
    m = QuantModel()
    x = m.input("x", shape, in_dtype, *(q_in or ()))
    y = m.output("y", shape, out_dtype, *q_out)
    m.op("QUANTIZE" if out_dtype != np.float32 else "DEQUANTIZE", [x], [y], version=2)
    return m.build()


@pytest.mark.parametrize("dtype", DTYPES)
def test_quantize_float(rng, dtype):
    for q_out in (random_qparams(rng, dtype), (0.25, 0 if dtype == np.int8 else 128)):
        # Multiples of s/2 put half of the values exactly on rounding ties.
        x = (rng.integers(-700, 700, size=(5, 200)) * q_out[0] / 2).astype(np.float32)
        x[0, :5] = [np.inf, -np.inf, 1e30, -1e30, 0.0]
        assert_bit_exact(quantize_model(np.float32, dtype, x.shape, None, q_out), [x])


@pytest.mark.parametrize("in_dtype,out_dtype", [(np.int8, np.uint8), (np.uint8, np.int8),
                                                (np.int8, np.int8), (np.uint8, np.uint8)])
@pytest.mark.parametrize("size", [256 * 4, 250, 7])
def test_requantize(rng, in_dtype, out_dtype, size):
    for _ in range(3):
        q_in = random_qparams(rng, in_dtype, 0.01, 0.1)
        q_out = random_qparams(rng, out_dtype, 0.01, 0.3)
        x = full_range(rng, (size,), in_dtype)
        assert_bit_exact(quantize_model(in_dtype, out_dtype, x.shape, q_in, q_out), [x])


@pytest.mark.parametrize("dtype", DTYPES)
def test_dequantize(rng, dtype):
    q = random_qparams(rng, dtype)
    x = full_range(rng, (300,), dtype)
    assert_bit_exact(quantize_model(dtype, np.float32, x.shape, q, ()), [x])


def test_unquantized_int8_concat_stays_a_plain_copy(rng):
    from .quant_oracle import run_ours
    m = QuantModel()
    a, b = m.input("a", (2, 3), np.int8), m.input("b", (2, 2), np.int8)
    y = m.output("y", (2, 5), np.int8)
    m.op("CONCATENATION", [a, b], [y], axis=1)
    feeds = [full_range(rng, (2, 3), np.int8), full_range(rng, (2, 2), np.int8)]
    out = run_ours(m.build(), feeds, "default")[0]
    np.testing.assert_array_equal(out, np.concatenate(feeds, axis=1))
