"""The tf.lite-shaped API: details dicts, set/get_tensor, resize, signatures, errors;
get_dequantized_tensor: real = scale * (q - zero_point), per channel too."""

import numpy as np
import pytest

from edgelite.interpreter import (
    DTypeError,
    GraphError,
    Interpreter,
    InterpreterStateError,
    ResizeError,
    ShapeError,
    SignatureError,
)
from tests.conftest import MODELS
from tests.support import litert_interpreter

from .tflite_builder import ModelBuilder


def conv_softmax_model(signature=True):
    """input[1,8,8,1] (batch -1 in the signature) -> CONV_2D -> RESHAPE -> SOFTMAX, plus an
    int8 per-tensor and an int8 per-channel constant for the quantization fields."""
    rng = np.random.default_rng(0)
    b = ModelBuilder()
    x = b.tensor("input", (1, 8, 8, 1), shape_signature=(-1, 8, 8, 1))
    w = b.tensor("w", (4, 3, 3, 1), data=rng.uniform(-1, 1, (4, 3, 3, 1)))
    bias = b.tensor("bias", (4,), data=np.zeros(4))
    h = b.tensor("conv", (1, 8, 8, 4), shape_signature=(-1, 8, 8, 4))
    shape = b.const("shape", np.array([-1, 256], np.int32))
    flat = b.tensor("flat", (1, 256), shape_signature=(-1, 256))
    y = b.tensor("probs", (1, 256), shape_signature=(-1, 256))
    b.tensor("q_tensor", (2,), np.int8, data=[1, 2], scale=0.25, zero_point=-3)
    b.tensor("q_channel", (2, 1), np.int8, data=[[1], [2]], scale=[0.5, 0.125],
             zero_point=[0, 0], quantized_dimension=0)
    b.op("CONV_2D", [x, w, bias], [h], padding="SAME", stride_w=1, stride_h=1,
         fused_activation_function="RELU")
    b.op("RESHAPE", [h, shape], [flat])
    b.op("SOFTMAX", [flat], [y], beta=1.0)
    if signature:
        b.signature("serving_default", {"image": x}, {"scores": y, "features": h})
    return b.build([x], [y])


def _assert_details_equal(ours, ref):
    assert set(ours) == set(ref)
    for key in ref:
        a, b = ours[key], ref[key]
        if key == "quantization_parameters":
            assert set(a) == set(b)
            for k in b:
                if isinstance(b[k], np.ndarray):
                    assert a[k].dtype == b[k].dtype, k
                    np.testing.assert_array_equal(a[k], b[k])
                else:
                    assert a[k] == b[k], k
        elif isinstance(b, np.ndarray):
            assert a.dtype == b.dtype, key
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b, key
            assert type(a) is type(b), key


@pytest.fixture
def pair():
    model = conv_softmax_model()
    ours = Interpreter(model_content=model)
    ours.allocate_tensors()
    return ours, litert_interpreter(model)


def test_io_details_match_litert(pair):
    ours, ref = pair
    for mine, theirs in ((ours.get_input_details(), ref.get_input_details()),
                         (ours.get_output_details(), ref.get_output_details())):
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            _assert_details_equal(a, b)


def test_tensor_details_match_litert(pair):
    ours, ref = pair
    theirs = {d["index"]: d for d in ref.get_tensor_details()}
    mine = {d["index"]: d for d in ours.get_tensor_details()}
    assert set(mine) == set(theirs)
    for index in theirs:
        _assert_details_equal(mine[index], theirs[index])
    q = mine[7]
    assert q["quantization"] == (0.25, -3)
    assert mine[8]["quantization"] == (0.0, 0)  # per-channel: no single pair
    np.testing.assert_array_equal(mine[8]["quantization_parameters"]["scales"], [0.5, 0.125])


def test_ops_details_match_litert(pair):
    ours, ref = pair
    for a, b in zip(ours._get_ops_details(), ref._get_ops_details(), strict=True):
        _assert_details_equal(a, b)


def test_signatures_match_litert(pair):
    ours, ref = pair
    assert ours.get_signature_list() == ref.get_signature_list()
    assert ours._get_full_signature_list() == ref._get_full_signature_list()
    mine = ours.get_signature_runner().get_input_details()
    theirs = ref.get_signature_runner().get_input_details()
    assert list(mine) == list(theirs) == ["image"]
    _assert_details_equal(mine["image"], theirs["image"])


def test_signature_runner_resizes_and_runs(pair):
    ours, ref = pair
    x = np.random.default_rng(1).uniform(size=(3, 8, 8, 1)).astype(np.float32)
    out = ours.get_signature_runner("serving_default")(image=x)
    expected = ref.get_signature_runner("serving_default")(image=x)
    assert sorted(out) == ["features", "scores"]
    for name in out:
        np.testing.assert_allclose(out[name], expected[name], rtol=1e-5, atol=1e-6)
    assert out["scores"].shape == (3, 256)
    with pytest.raises(SignatureError, match="missing \\['image'\\], unknown \\['img'\\]"):
        ours.get_signature_runner()(img=x)
    with pytest.raises(SignatureError, match="no signature 'nope'"):
        ours.get_signature_runner("nope")


def test_no_signatures():
    interp = Interpreter(model_content=conv_softmax_model(signature=False))
    assert interp.get_signature_list() == {}
    with pytest.raises(SignatureError, match="no SignatureDefs"):
        interp.get_signature_runner()


def test_invoke_before_allocate():
    interp = Interpreter(model_content=conv_softmax_model())
    with pytest.raises(InterpreterStateError, match="allocate_tensors"):
        interp.invoke()
    with pytest.raises(InterpreterStateError, match="allocate_tensors"):
        interp.set_tensor(0, np.zeros((1, 8, 8, 1), np.float32))
    assert interp.arena_size == 0


def test_set_tensor_errors(pair):
    ours, _ = pair
    with pytest.raises(ShapeError) as info:
        ours.set_tensor(0, np.zeros((1, 8, 8), np.float32))
    assert str(info.value) == (
        "input tensor 'input' (index 0) expects shape [1, 8, 8, 1] float32, got [1, 8, 8] "
        "float32; call resize_tensor_input first to change it"
    )
    with pytest.raises(DTypeError, match=r"expects shape \[1, 8, 8, 1\] float32, got "
                                         r"\[1, 8, 8, 1\] float64; convert it"):
        ours.set_tensor(0, np.zeros((1, 8, 8, 1)))
    with pytest.raises(InterpreterStateError, match="'w' is a constant"):
        ours.set_tensor(1, np.zeros((4, 3, 3, 1), np.float32))
    with pytest.raises(GraphError, match="tensor index 99 is out of range"):
        ours.set_tensor(99, np.zeros(1))


def test_get_tensor_copy_and_live_view(pair):
    ours, _ = pair
    x = np.full((1, 8, 8, 1), 0.5, np.float32)
    ours.set_tensor(0, x)
    ours.invoke()
    out_index = ours.get_output_details()[0]["index"]
    copy = ours.get_tensor(out_index)
    view = ours.tensor(out_index)
    np.testing.assert_array_equal(view(), copy)
    copy[...] = 7
    assert not np.array_equal(ours.get_tensor(out_index), copy)
    ours.tensor(0)()[...] = 0.0  # write the input in place
    ours.invoke()
    np.testing.assert_allclose(view(), np.full((1, 256), 1 / 256, np.float32), rtol=1e-6)


def test_resize_tensor_input(pair):
    ours, ref = pair
    ours.resize_tensor_input(0, [2, 8, 8, 1])
    ref.resize_tensor_input(0, [2, 8, 8, 1])
    assert ours.get_input_details()[0]["shape"].tolist() == [2, 8, 8, 1]
    with pytest.raises(InterpreterStateError):
        ours.invoke()
    ours.allocate_tensors()
    ref.allocate_tensors()
    x = np.random.default_rng(2).uniform(size=(2, 8, 8, 1)).astype(np.float32)
    ours.set_tensor(0, x)
    ref.set_tensor(0, x)
    ours.invoke()
    ref.invoke()
    out = ours.get_output_details()[0]
    _assert_details_equal(out, ref.get_output_details()[0])
    np.testing.assert_allclose(ours.get_tensor(out["index"]), ref.get_tensor(out["index"]),
                               rtol=1e-5, atol=1e-7)


def test_resize_strict_and_errors(pair):
    ours, _ = pair
    ours.resize_tensor_input(0, [4, 8, 8, 1], strict=True)  # batch is -1 in the signature
    with pytest.raises(ShapeError, match="strict resizing may only change the -1"):
        ours.resize_tensor_input(0, [4, 9, 8, 1], strict=True)
    with pytest.raises(ResizeError, match="not an input"):  # a RuntimeError, as LiteRT's
        ours.resize_tensor_input(3, [1, 8, 8, 4])
    ours.resize_tensor_input(0, [1, 9, 8, 1])
    with pytest.raises(ShapeError, match="cannot infer the -1 in \\[-1, 256\\]"):
        ours.allocate_tensors()  # 9*8*4 = 288 elements do not split into rows of 256


def test_constructor_arguments():
    with pytest.raises(ValueError, match="exactly one"):
        Interpreter()
    with pytest.raises(ValueError, match="num_threads"):
        Interpreter(model_content=conv_softmax_model(), num_threads=0)
    interp = Interpreter(model_content=conv_softmax_model(), num_threads=2)
    interp.allocate_tensors()
    assert interp.arena_size > 0


# --------------------------------------------------------------------------- get_dequantized_tensor


def _model() -> bytes:
    """int8 input -> DEQUANTIZE -> float, plus a per-channel int8 constant (axis 1) and an
    int32 constant without quantization, both read by a second op so they stay live."""
    b = ModelBuilder()
    x = b.tensor("x", [2, 3], np.int8, scale=0.5, zero_point=-3)
    y = b.tensor("y", [2, 3], np.float32)
    b.op("DEQUANTIZE", [x], [y])
    w = b.tensor("w", [2, 3], np.int8, data=[[1, -2, 3], [-4, 5, -6]],
                 scale=[0.1, 0.2, 0.4], zero_point=[0, 0, 0], quantized_dimension=1)
    wf = b.tensor("w_float", [2, 3], np.float32)
    b.op("DEQUANTIZE", [w], [wf])
    axes = b.const("axes", np.array([1], np.int32))
    s = b.tensor("sum", [2], np.float32)
    b.op("SUM", [y, axes], [s])
    return b.build(inputs=[x], outputs=[s, wf])


@pytest.fixture
def interp():
    it = Interpreter(model_content=_model(), preserve_all_tensors=True)
    it.allocate_tensors()
    it.set_tensor(0, np.array([[-128, -3, 0], [1, 5, 127]], np.int8))
    it.invoke()
    return it


def test_per_tensor_hand_values(interp):
    got = interp.get_dequantized_tensor(0)
    want = np.array([[-62.5, 0.0, 1.5], [2.0, 4.0, 65.0]], np.float32)  # 0.5 * (q + 3)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    # The DEQUANTIZE kernel computes the same thing.
    np.testing.assert_array_equal(interp.get_tensor(1), want)


def test_per_channel_uses_quantized_dimension(interp):
    got = interp.get_dequantized_tensor(2)
    want = np.array([[0.1, -0.4, 1.2], [-0.4, 1.0, -2.4]], np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(got, interp.get_tensor(3))


def test_float_tensor_is_a_float32_copy(interp):
    got = interp.get_dequantized_tensor(1)
    got[...] = 0
    assert interp.get_tensor(1)[1, 2] == 65.0


def test_unquantized_integer_tensor_is_an_error(interp):
    with pytest.raises(DTypeError, match="'axes'.*int32 without quantization"):
        interp.get_dequantized_tensor(4)


def test_needs_allocated_tensors():
    it = Interpreter(model_content=_model())
    with pytest.raises(InterpreterStateError, match="allocate_tensors"):
        it.get_dequantized_tensor(0)


def test_intermediates_of_a_quantized_model():
    """Every intermediate of TF's int8 keras_cnn stays readable, and the int8 softmax output
    dequantizes to exactly what the model's own DEQUANTIZE op writes."""
    it = Interpreter(model_path=str(MODELS / "keras_cnn.tf_int8.tflite"),
                     preserve_all_tensors=True)
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    x = np.load(MODELS / "sample_digit.npy").reshape(inp["shape"])
    if inp["dtype"] != np.float32:
        s, z = inp["quantization"]
        x = np.clip(np.round(x / s) + z, -128, 127)
    it.set_tensor(inp["index"], x.astype(inp["dtype"]))
    it.invoke()
    ops = it._get_ops_details()
    by_index = {d["index"]: d for d in it.get_tensor_details()}
    checked = dequantize_ops = 0
    for op in ops:
        out = int(op["outputs"][0])
        if op["op_name"] == "DEQUANTIZE":
            np.testing.assert_array_equal(it.get_dequantized_tensor(int(op["inputs"][0])),
                                          it.get_tensor(out))
            dequantize_ops += 1
        d = by_index[out]
        if d["dtype"] != np.int8:
            continue
        s, z = d["quantization"]
        want = (np.float64(s) * (it.get_tensor(out).astype(np.float64) - z)).astype(np.float32)
        np.testing.assert_array_equal(it.get_dequantized_tensor(out), want)
        checked += 1
    assert checked >= 5 and dequantize_ops == 1


def test_allocating_again_without_a_resize_changes_nothing(litert):
    """As LiteRT: a second allocate_tensors() with no input resized keeps the inputs set
    and the variable state (the float16 LSTM's h / c carry on); a resize re-plans."""
    data = (MODELS / "fp16_lstm.tf_fp16.tflite").read_bytes()
    x = np.random.default_rng(3).normal(size=(1, 5, 8)).astype(np.float32)
    runs = []
    for interp in (Interpreter(model_content=data), litert.Interpreter(model_content=data)):
        interp.allocate_tensors()
        (inp,), (out,) = interp.get_input_details(), interp.get_output_details()
        interp.set_tensor(inp["index"], x)
        interp.invoke()
        interp.allocate_tensors()
        interp.invoke()  # the input is still set, the state carried
        runs.append(interp.get_tensor(out["index"]).copy())
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-5, atol=1e-6)
