"""RESHAPE, SQUEEZE, CONCATENATION, PAD, PADV2, DEQUANTIZE against LiteRT."""

import numpy as np
import pytest

from edgelite.interpreter import Interpreter, ShapeError

from .oracle import assert_close, assert_matches_litert, rand, run_edgelite
from .tflite_builder import ModelBuilder, single_op_model


def reshape_model(x_shape, out_shape, *, shape_tensor=None, new_shape=None):
    b = ModelBuilder()
    x = b.tensor("x", x_shape)
    inputs = [x]
    if shape_tensor is not None:
        inputs.append(b.const("shape", np.array(shape_tensor, np.int32)))
    y = b.tensor("y", out_shape)
    options = {} if new_shape is None else {"new_shape": new_shape}
    b.op("RESHAPE", inputs, [y], **options)
    return b.build([x], [y])


@pytest.mark.parametrize("requested,expected", [([6, 4], (6, 4)), ([-1, 8], (3, 8)),
                                                ([2, -1, 2], (2, 6, 2)), ([24], (24,))])
def test_reshape_from_shape_tensor(rng, requested, expected):
    x = rand(rng, (2, 3, 4))
    (out,) = assert_matches_litert(reshape_model(x.shape, expected, shape_tensor=requested), [x])
    assert out.shape == expected


def test_reshape_from_options(rng):
    x = rand(rng, (2, 3, 4))
    (out,) = assert_matches_litert(reshape_model(x.shape, (4, 6), new_shape=[4, -1]), [x])
    assert out.shape == (4, 6)


def test_reshape_shape_tensor_wins_over_options(rng):
    x = rand(rng, (2, 6))
    model = reshape_model(x.shape, (3, 4), shape_tensor=[3, 4], new_shape=[12])
    (out,) = assert_matches_litert(model, [x])
    assert out.shape == (3, 4)


def test_reshape_bad_count(rng):
    with pytest.raises(ShapeError, match="cannot reshape 6 elements into \\[4, 2\\]"):
        run_edgelite(reshape_model((2, 3), (4, 2), shape_tensor=[4, 2]), [rand(rng, (2, 3))])
    with pytest.raises(ShapeError, match="more than one -1"):
        run_edgelite(reshape_model((2, 3), (6,), shape_tensor=[-1, -1]), [rand(rng, (2, 3))])


@pytest.mark.parametrize("dims,expected", [([], (3, 4)), ([0], (3, 1, 4)), ([-2, 0], (3, 4))])
def test_squeeze(rng, dims, expected):
    x = rand(rng, (1, 3, 1, 4))
    model = single_op_model("SQUEEZE", [x.shape], expected, squeeze_dims=dims)
    (out,) = assert_matches_litert(model, [x])
    assert out.shape == expected


def test_squeeze_non_unit_dimension(rng):
    model = single_op_model("SQUEEZE", [(1, 3)], (1,), squeeze_dims=[1])
    with pytest.raises(ShapeError, match="cannot squeeze dimension 1 of size 3"):
        run_edgelite(model, [rand(rng, (1, 3))])


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


def test_dequantize_float16(rng):
    w = rand(rng, (4, 5)).astype(np.float16)
    b = ModelBuilder()
    x = b.tensor("x", (4, 5))
    wt = b.tensor("w16", w.shape, np.float16, data=w)
    wf = b.tensor("w32", w.shape)
    y = b.tensor("y", (4, 5))
    b.op("DEQUANTIZE", [wt], [wf])
    b.op("ADD", [x, wf], [y])
    model = b.build([x], [y])
    xv = rand(rng, (4, 5))
    (out,) = assert_matches_litert(model, [xv])
    assert_close(out, xv + w.astype(np.float32))
    # The all-constant DEQUANTIZE is evaluated once in allocate_tensors().
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    assert len(interp._steps) == 1


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16])
def test_dequantize_per_tensor(rng, dtype):
    b = ModelBuilder()
    info = np.iinfo(dtype)
    zp = 0 if dtype == np.int16 else 5
    x = b.tensor("x", (3, 7), dtype, scale=0.037, zero_point=zp)
    y = b.tensor("y", (3, 7))
    b.op("DEQUANTIZE", [x], [y])
    xv = rng.integers(info.min, info.max, size=(3, 7), endpoint=True).astype(dtype)
    assert_matches_litert(b.build([x], [y]), [xv], rtol=0, atol_factor=0)


def test_dequantize_per_channel_constant(rng):
    scales = np.array([0.1, 0.02, 0.5], np.float32)
    q = rng.integers(-127, 128, size=(3, 4)).astype(np.int8)
    b = ModelBuilder()
    x = b.tensor("x", (3, 4))
    wq = b.tensor("wq", q.shape, np.int8, data=q, scale=scales, zero_point=[0, 0, 0],
                  quantized_dimension=0)
    wf = b.tensor("wf", q.shape)
    y = b.tensor("y", q.shape)
    b.op("DEQUANTIZE", [wq], [wf])
    b.op("ADD", [x, wf], [y])
    xv = np.zeros((3, 4), np.float32)
    (out,) = assert_matches_litert(b.build([x], [y]), [xv], rtol=0, atol_factor=0)
    assert_close(out, q.astype(np.float32) * scales[:, None])
