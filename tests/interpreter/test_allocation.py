"""allocate_tensors(): shape propagation, constant folding, dtype checks, limits."""

import numpy as np
import pytest

from edgelite.interpreter import DTypeError, Interpreter, ShapeError, UnsupportedOpError
from tests.support import assert_close, rand

from .tflite_builder import ModelBuilder

I32, F32 = np.int32, np.float32


def test_all_constant_ops_are_folded():
    # (c1 + c2) is computed once in allocate_tensors(); only the final MUL runs per invoke.
    b = ModelBuilder()
    x = b.tensor("x", (3,))
    c1 = b.const("c1", np.array([1, 2, 3], np.float32))
    c2 = b.const("c2", np.array([10, 20, 30], np.float32))
    s = b.tensor("s", (3,))
    y = b.tensor("y", (3,))
    b.op("ADD", [c1, c2], [s])
    b.op("MUL", [x, s], [y])
    interp = Interpreter(model_content=b.build([x], [y]))
    interp.allocate_tensors()
    assert len(interp._steps) == 1
    np.testing.assert_array_equal(interp.get_tensor(s), [11, 22, 33])
    interp.set_tensor(x, np.array([1, 0, 2], np.float32))
    interp.invoke()
    np.testing.assert_array_equal(interp.get_tensor(y), [11, 0, 66])


def test_shape_plumbing_folds_to_constants(rng):
    # Keras-style: Shape(c) -> StridedSlice -> Pack -> Reshape, all on constants except x.
    b = ModelBuilder()
    x = b.tensor("x", (2, 12))
    c = b.const("c", np.zeros((2, 3, 4), F32))
    shape = b.tensor("shape", (3,), I32)
    b.op("SHAPE", [c], [shape], out_type="INT32")
    batch = b.tensor("batch", (), I32)
    b.op("STRIDED_SLICE", [shape, b.const("b", np.array([0], I32)),
                           b.const("e", np.array([1], I32)), b.const("s", np.array([1], I32))],
         [batch], shrink_axis_mask=1)
    new_shape = b.tensor("new_shape", (3,), I32)
    b.op("PACK", [batch, b.const("m1", np.array(-1, I32)), b.const("four", np.array(4, I32))],
         [new_shape], values_count=3)
    y = b.tensor("y", (2, 3, 4))
    b.op("RESHAPE", [x, new_shape], [y])
    model = b.build([x], [y])
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    assert len(interp._steps) == 1  # only RESHAPE runs per invoke
    xv = rand(rng, (2, 12))
    interp.set_tensor(interp.get_input_details()[0]["index"], xv)
    interp.invoke()
    out = interp.get_tensor(interp.get_output_details()[0]["index"])
    np.testing.assert_array_equal(out, xv.reshape(2, 3, 4))


def test_shapes_propagate_from_resized_input():
    b = ModelBuilder()
    x = b.tensor("x", (1, 4, 4, 2))
    h = b.tensor("h", (1, 2, 2, 2))
    axis = b.const("axis", np.array([1, 2], np.int32))
    y = b.tensor("y", (1, 2))
    b.op("MAX_POOL_2D", [x], [h], padding="VALID", stride_w=2, stride_h=2, filter_width=2,
         filter_height=2)
    b.op("MEAN", [h, axis], [y], keep_dims=False)
    interp = Interpreter(model_content=b.build([x], [y]))
    interp.resize_tensor_input(x, (3, 8, 6, 2))
    interp.allocate_tensors()
    assert interp.get_output_details()[0]["shape"].tolist() == [3, 2]
    assert interp.get_tensor_details()[h]["shape"].tolist() == [3, 4, 3, 2]
    xv = np.random.default_rng(0).uniform(size=(3, 8, 6, 2)).astype(np.float32)
    interp.set_tensor(x, xv)
    interp.invoke()
    expected = xv.reshape(3, 4, 2, 3, 2, 2).max(axis=(2, 4)).mean(axis=(1, 2))
    assert_close(interp.get_tensor(y), expected)


def test_int8_and_16x8_inputs_go_to_the_integer_kernel_raw_int16_is_unsupported():
    b = ModelBuilder()
    x = b.tensor("x", (1, 4, 4, 1), np.int8, scale=0.1, zero_point=0)
    w = b.tensor("w", (1, 1, 1, 1), np.int8, data=[[[[10]]]], scale=0.1)
    y = b.tensor("y", (1, 4, 4, 1), np.int8, scale=0.1)
    b.op("CONV_2D", [x, w], [y], stride_w=1, stride_h=1)
    interp = Interpreter(model_content=b.build([x], [y]))
    interp.allocate_tensors()
    interp.set_tensor(x, np.arange(16, dtype=np.int8).reshape(1, 4, 4, 1))
    interp.invoke()  # 0.1 * q * (0.1 * 10) / 0.1 = q
    np.testing.assert_array_equal(interp.get_tensor(y).reshape(-1), np.arange(16))

    def int16_conv(scale):  # 16x8 with quantization parameters, raw int16 without
        b = ModelBuilder()
        zp = None if scale is None else 0
        x = b.tensor("x", (1, 4, 4, 1), np.int16, scale=scale, zero_point=zp)
        w = b.tensor("w", (1, 1, 1, 1), np.int8, data=[[[[10]]]], scale=0.1)
        bias = b.tensor("b", (1,), np.int64, data=[0], scale=0.01)
        y = b.tensor("y", (1, 4, 4, 1), np.int16, scale=scale)
        b.op("CONV_2D", [x, w, bias], [y], stride_w=1, stride_h=1)
        return Interpreter(model_content=b.build([x], [y])), x, y

    interp, x, y = int16_conv(0.1)
    interp.allocate_tensors()
    interp.set_tensor(x, np.arange(-8, 8, dtype=np.int16).reshape(1, 4, 4, 1) * 1000)
    interp.invoke()
    np.testing.assert_array_equal(interp.get_tensor(y).reshape(-1), np.arange(-8, 8) * 1000)
    interp, _, _ = int16_conv(None)
    with pytest.raises(UnsupportedOpError, match="operator 0 \\(CONV_2D.*'x' has type int16"):
        interp.allocate_tensors()


def test_declared_output_dtype_must_match():
    b = ModelBuilder()
    x = b.tensor("x", (2,))
    y = b.tensor("y", (2,), np.int32)
    b.op("RELU", [x], [y])
    with pytest.raises(DTypeError, match="computes float32 but the file declares tensor 'y'"):
        Interpreter(model_content=b.build([x], [y])).allocate_tensors()


def test_unknown_input_dimension_needs_resize():
    b = ModelBuilder()
    x = b.tensor("x", (-1, 3), shape_signature=(-1, 3))
    y = b.tensor("y", (-1, 3))
    b.op("RELU", [x], [y])
    interp = Interpreter(model_content=b.build([x], [y]))
    with pytest.raises(ShapeError, match="unknown dimensions \\[-1, 3\\]; call resize"):
        interp.allocate_tensors()
    interp.resize_tensor_input(x, (5, 3))
    interp.allocate_tensors()
    assert interp.get_output_details()[0]["shape"].tolist() == [5, 3]


def test_huge_resize_is_refused_without_allocating():
    b = ModelBuilder()
    x = b.tensor("x", (1, 3))
    y = b.tensor("y", (1, 3))
    b.op("RELU", [x], [y])
    interp = Interpreter(model_content=b.build([x], [y]))
    interp.resize_tensor_input(x, (2**20, 2**20))
    with pytest.raises(ShapeError, match="over the 2147483648-byte limit"):
        interp.allocate_tensors()


def test_feed_forward_allocations_build_nothing_for_subgraphs_or_dynamic_tensors():
    # The flat step list of a graph without dynamic tensors is what it always was: a
    # tuple of (eval, record, input arrays, output arrays), the arrays fixed arena views --
    # or a native step bound to them (native.module.run_native_step, NativeStep, None, None).
    from edgelite.interpreter import native
    from edgelite.interpreter.dynamic import run_dynamic
    b = ModelBuilder()
    x, y, z = b.tensor("x", (2, 3)), b.tensor("y", (2, 3)), b.tensor("z", (2, 3))
    b.op("RELU", [x], [y])
    b.op("ADD", [y, x], [z])
    interp = Interpreter(model_content=b.build([x], [z]))
    interp.allocate_tensors()
    alloc = interp._alloc
    assert type(alloc.arrays) is tuple and alloc.dynamic == frozenset()
    native_run = getattr(native.module, "run_native_step", None)
    assert all(step[0] is not run_dynamic and (type(step[2]) is tuple or step[0] is native_run)
               for step in alloc.steps)
    assert interp._program.current == {0: alloc}


STATE_INIT = np.array([[0.5, -0.25, 1.0, 2.0]], F32)
RNN_W = (0.5 * np.random.default_rng(3).normal(size=(2, 4, 4))).astype(F32)  # w: [:, :3]


def _state_model(writer: str) -> tuple[bytes, int]:
    """x [1, 2, 3] -> UNIDIRECTIONAL_SEQUENCE_RNN whose hidden state (a variable tensor) is
    written by an all-constant op: DEQUANTIZE of a float16 constant (as in TF's float16
    LSTMs) or ADD of two float32 constants. Returns (model, the state's tensor index)."""
    b = ModelBuilder()
    x = b.tensor("x", (1, 2, 3))
    h = b.tensor("h", (1, 4), is_variable=True)
    if writer == "DEQUANTIZE":
        b.op("DEQUANTIZE", [b.const("init16", STATE_INIT.astype(np.float16))], [h])
    else:
        b.op("ADD", [b.const("init", STATE_INIT), b.const("zero", np.zeros((1, 4), F32))], [h])
    y = b.tensor("y", (1, 2, 4))
    b.op("UNIDIRECTIONAL_SEQUENCE_RNN",
         [x, b.const("w", RNN_W[0, :, :3]), b.const("r", RNN_W[1]),
          b.const("bias", np.zeros(4, F32)), h], [y],
         fused_activation_function="TANH", time_major=False)
    return b.build([x], [y]), h


def _state_script(interp, h: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(inputs, seen): the state before the first invoke, then the output of invokes
    around reset_all_variables() and a resize (with the new allocate_tensors())."""
    rng = np.random.default_rng(5)
    interp.allocate_tensors()
    seen, xs = [interp.get_tensor(h).copy()], []

    def run(steps: int) -> None:
        xs.append(rng.uniform(-1, 1, (1, steps, 3)).astype(F32))
        interp.set_tensor(0, xs[-1])
        interp.invoke()
        seen.append(interp.get_tensor(interp.get_output_details()[0]["index"]).copy())

    run(2), run(2)
    interp.reset_all_variables()
    run(2), run(2)
    interp.resize_tensor_input(0, (1, 3, 3))
    interp.allocate_tensors()
    run(3), run(3)
    return xs, seen


@pytest.mark.parametrize("kernels,resolver", [("reference", "BUILTIN_REF"), ("default", "AUTO")])
@pytest.mark.parametrize("writer", ["DEQUANTIZE", "ADD"])
def test_an_op_writing_a_variable_is_not_folded(writer, kernels, resolver):
    # LiteRT runs a DEQUANTIZE of a constant on the first invoke only (the state then
    # carries; reset_all_variables() and a resize zero it for good), an ADD on every invoke.
    from tests.conftest import litert_module
    litert = litert_module()
    model, h = _state_model(writer)
    _, theirs = _state_script(litert.Interpreter(
        model_content=model, experimental_op_resolver_type=getattr(litert.OpResolverType,
                                                                   resolver)), h)
    interp = Interpreter(model_content=model, kernels=kernels)
    xs, ours = _state_script(interp, h)
    assert h not in interp._alloc.constants
    for a, b in zip(ours, theirs, strict=True):
        assert_close(a, b)
    np.testing.assert_array_equal(ours[0], 0)  # nothing ran before the first invoke
    # the first step of each invoke: tanh(x W^T + state R^T), the state the constant on the
    # first invoke; after a reset or resize 0 (DEQUANTIZE) or the constant again (ADD)
    for k in (0, 2, 4):
        state = STATE_INIT if k == 0 or writer == "ADD" else 0 * STATE_INIT
        first = np.tanh(xs[k][:, 0] @ RNN_W[0, :, :3].T + state @ RNN_W[1].T)
        assert_close(ours[k + 1][:, 0], first)


def test_propagate_shapes_is_allocate_tensors_shape_step_alone():
    # The converter's shape inference: every tensor's shape as allocate_tensors() finds it
    # (declared shapes overridden, SHAPE plumbing folded, a -1 dim only values tell), with
    # no arena and no invoke steps built.
    from edgelite.interpreter.allocation import propagate_shapes
    from edgelite.interpreter.loader.model import load_model
    b = ModelBuilder()
    x = b.tensor("x", (2, 12))
    s = b.tensor("s", (1,))  # declared wrong: prepare() finds (2, 12)
    b.op("MUL", [x, b.const("c", np.full((12,), 2, F32))], [s])
    shape = b.tensor("shape", (), I32)
    b.op("SHAPE", [b.const("k", np.zeros((3, 8), F32))], [shape], out_type="INT32")
    y = b.tensor("y", ())
    b.op("RESHAPE", [s, shape], [y])
    mask = b.tensor("mask", (3, 8), np.bool_)
    b.op("GREATER", [y, b.const("zero", np.array(0, F32))], [mask])
    idx = b.tensor("idx", (), np.int64)
    b.op("WHERE", [mask], [idx])
    model = b.build([x], [y, idx])
    shapes = propagate_shapes(load_model(model).subgraphs[0])
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    details = interp.get_tensor_details()
    assert [list(s) for s in shapes] == [d["shape"].tolist() for d in details]
    assert shapes[s] == (2, 12) and shapes[y] == (3, 8) and shapes[idx] == (-1, 2)
