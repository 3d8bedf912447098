"""Kernels for CUSTOM ops through the public API (interpreter/kernels/custom/__init__.py):
Interpreter(custom_kernels=...), register_custom_kernel, what prepare() sees of the op's
custom options, and the errors a bad kernel or bad option bytes give."""

import numpy as np
import pytest
from flatbuffers import flexbuffers

from edgelite.interpreter import (Interpreter, Kernel, ModelFormatError, OutputSpec,
                                  ShapeError, UnsupportedOpError, register_custom_kernel,
                                  unregister_custom_kernel)

from .tflite_builder import ModelBuilder


def scaled_model(options: bytes | None, name="Scale") -> bytes:
    """y = CUSTOM name(x), x and y float32 [2, 3]."""
    b = ModelBuilder()
    x = b.tensor("x", (2, 3))
    y = b.tensor("y", (2, 3))
    i = b.op("CUSTOM", [x], [y], custom_code=name)
    if options is not None:
        b.operators[i].customOptions = list(options)
    return b.build([x], [y])


def scale_kernel(seen: list | None = None) -> Kernel:
    """y = x * factor, the factor from a flexbuffer map {"factor": f}."""

    def prepare(ctx):
        if seen is not None:
            seen.append((ctx.custom_code, ctx.custom_options, ctx.flexbuffer_options()))
        factor = np.float32(ctx.flexbuffer_options()["factor"])
        x = ctx.input(0)
        return (OutputSpec(x.shape, x.dtype),), factor

    def eval(factor, inputs, outputs):
        np.multiply(inputs[0], factor, out=outputs[0])

    return Kernel(prepare, eval)


def run(data: bytes, x, **kwargs) -> np.ndarray:
    interp = Interpreter(model_content=data, **kwargs)
    interp.allocate_tensors()
    interp.set_tensor(0, x)
    interp.invoke()
    return interp.get_tensor(1)


X = np.arange(6, dtype=np.float32).reshape(2, 3)


def test_custom_kernels_argument_runs_the_op_and_sees_its_options():
    options = flexbuffers.Dumps({"factor": 2.5})
    seen = []
    got = run(scaled_model(options), X, custom_kernels={"Scale": scale_kernel(seen)})
    np.testing.assert_array_equal(got, X * np.float32(2.5))
    assert seen == [("Scale", options, {"factor": 2.5})]


def test_registered_kernel_and_per_interpreter_override():
    data = scaled_model(flexbuffers.Dumps({"factor": 3.0}))
    with pytest.raises(UnsupportedOpError, match=r"CUSTOM 'Scale' .*\[custom\]"):
        Interpreter(model_content=data).allocate_tensors()
    register_custom_kernel("Scale", scale_kernel())
    try:
        np.testing.assert_array_equal(run(data, X), X * 3)

        def negate(ctx):
            return (OutputSpec(ctx.input(0).shape, ctx.input(0).dtype),), None

        override = Kernel(negate, lambda rec, ins, outs: np.negative(ins[0], out=outs[0]))
        np.testing.assert_array_equal(run(data, X, custom_kernels={"Scale": override}), -X)
    finally:
        unregister_custom_kernel("Scale")
    with pytest.raises(UnsupportedOpError, match="custom_kernels="):
        Interpreter(model_content=data).allocate_tensors()


def test_kernel_pair_is_accepted_and_other_values_refused():
    k = scale_kernel()
    data = scaled_model(flexbuffers.Dumps({"factor": 1.0}))
    np.testing.assert_array_equal(run(data, X, custom_kernels={"Scale": (k.prepare, k.eval)}),
                                  X)
    with pytest.raises(TypeError, match="must be edgelite.interpreter.Kernel"):
        Interpreter(model_content=data, custom_kernels={"Scale": k.prepare})
    with pytest.raises(TypeError, match="custom_kernels must be a dict"):
        Interpreter(model_content=data, custom_kernels=[k])
    with pytest.raises(TypeError, match="non-empty string"):
        register_custom_kernel("", k)


@pytest.mark.parametrize("options", [b"\x07\xff\xff\x01", b"\x00", bytes(range(40))])
def test_hostile_option_bytes_give_one_error_naming_the_op(options):
    with pytest.raises(ModelFormatError, match=r"operator 0 \(CUSTOM 'Scale', output 'y'\): "
                       r"its custom options \(\d+ bytes\) are not a valid flexbuffer"):
        run(scaled_model(options), X, custom_kernels={"Scale": scale_kernel()})


def test_no_options_read_as_an_empty_map():
    seen = []

    def prepare(ctx):
        seen.append((ctx.custom_options, ctx.flexbuffer_options()))
        return (OutputSpec(ctx.input(0).shape, ctx.input(0).dtype),), None

    run(scaled_model(None), X, custom_kernels={
        "Scale": Kernel(prepare, lambda r, i, o: np.copyto(o[0], i[0]))})
    assert seen == [(None, {})]


def test_kernel_bugs_name_the_op():
    def wrong_count(ctx):
        return (), None

    def crashes(ctx):
        raise ValueError("boom")

    data = scaled_model(None)
    with pytest.raises(ShapeError, match=r"operator 0 \(CUSTOM 'Scale', output 'y'\): "
                       r"prepare\(\) returned 0 value\(s\) for 1 output"):
        run(data, X, custom_kernels={"Scale": Kernel(wrong_count, print)})
    with pytest.raises(ShapeError, match=r"\(CUSTOM 'Scale'.*prepare failed: ValueError: boom"):
        run(data, X, custom_kernels={"Scale": Kernel(crashes, print)})
