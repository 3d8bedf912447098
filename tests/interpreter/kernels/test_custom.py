"""Kernels for CUSTOM ops through the public API (interpreter/kernels/custom/__init__.py):
Interpreter(custom_kernels=...), register_custom_kernel, what prepare() sees of the op's
custom options, and the errors a bad kernel or bad option bytes give."""

import numpy as np
import pytest
from flatbuffers import flexbuffers

from edgelite.interpreter import (Interpreter, Kernel, ModelFormatError, OutputSpec,
                                  ShapeError, UnsupportedOpError, register_custom_kernel,
                                  unregister_custom_kernel)

from ..tflite_builder import ModelBuilder
from tests.conftest import MODELS, litert_module


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
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    return interp.get_tensor(interp.get_output_details()[0]["index"])


X = np.arange(6, dtype=np.float32).reshape(2, 3)


def test_custom_kernels_argument_runs_the_op_and_sees_its_options():
    options = flexbuffers.Dumps({"factor": 2.5})
    seen = []
    got = run(scaled_model(options), X, custom_kernels={"Scale": scale_kernel(seen)})
    np.testing.assert_array_equal(got, X * np.float32(2.5))
    assert seen == [("Scale", options, {"factor": 2.5})]


def test_registered_kernel_and_per_interpreter_override():
    data = scaled_model(flexbuffers.Dumps({"factor": 3.0}))
    with pytest.raises(UnsupportedOpError, match=r"CUSTOM 'Scale' .*\[custom: "):
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


# ---------------------------------------------------------------- files TensorFlow wrote
# models/builders/zoo_custom.py

def unary_kernel(fn) -> Kernel:
    """A float32 elementwise custom op computed by numpy ``fn`` (the file's options are
    TensorFlow's node attributes, {"T": 0} here: float)."""

    def prepare(ctx):
        assert ctx.flexbuffer_options() == {"T": 0}
        x = ctx.input(0)
        ctx.require_dtype(x, (np.float32,), "input")
        return (OutputSpec(x.shape, x.dtype),), None

    def eval(_, inputs, outputs):
        fn(inputs[0], out=outputs[0])

    return Kernel(prepare, eval)


def test_tensorflow_custom_ops_run_with_registered_kernels():
    """tf.math.asinh and tf.math.sinh, converted with allow_custom_ops: CUSTOM "Asinh" and
    "Sinh"; with numpy kernels registered the file matches TensorFlow's own outputs."""
    data = (MODELS / "custom_asinh.tf.tflite").read_bytes()
    with pytest.raises(UnsupportedOpError) as info:
        Interpreter(model_content=data).allocate_tensors()
    assert str(info.value).count("[custom: ") == 2
    kernels = {"Asinh": unary_kernel(np.arcsinh), "Sinh": unary_kernel(np.sinh)}
    golden = np.load(MODELS / "custom_asinh.golden.npz")
    for x, y in zip(golden["x"], golden["y"]):
        np.testing.assert_allclose(run(data, x, custom_kernels=kernels), y, rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.parametrize("name", ["custom_ssd_postprocess", "custom_ssd_postprocess_regular"])
def test_tensorflow_ssd_postprocess_matches_litert(name):
    """An SSD head whose TFLite_Detection_PostProcess TensorFlow's converter fused (as the
    Object Detection API exports it): edgelite's built-in kernel against LiteRT's, both
    kernel sets, 20 random feature vectors; detections identical, boxes and scores within
    float rounding of the dense layers before them."""
    data = (MODELS / f"{name}.tf.tflite").read_bytes()
    litert = litert_module()
    refs = [litert.Interpreter(model_content=data, experimental_op_resolver_type=kind)
            for kind in (litert.OpResolverType.BUILTIN_REF, litert.OpResolverType.AUTO)]
    ours = Interpreter(model_content=data)
    ours.allocate_tensors()
    for ref in refs:
        ref.allocate_tensors()
    rng = np.random.default_rng(0)
    found = 0
    for _ in range(20):
        x = rng.normal(0, 1, (1, 8)).astype(np.float32)
        got = outputs(ours, x)
        for ref in refs:
            want = outputs(ref, x)
            n = int(want[3][0])
            np.testing.assert_array_equal(got[3], want[3])
            np.testing.assert_array_equal(got[1][:, :n], want[1][:, :n])
            for a, b in ((got[0], want[0]), (got[2], want[2])):
                np.testing.assert_allclose(a[:, :n], b[:, :n], rtol=1e-5, atol=1e-6)
        found += n
    assert found > 20  # the heads do detect things


def outputs(interp, x):
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    return [interp.get_tensor(i) for i in sorted(d["index"]
                                                 for d in interp.get_output_details())]
