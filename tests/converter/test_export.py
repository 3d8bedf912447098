"""export.py writes TensorFlow's operator versions: the sample models convert to the
versions TF's own files have, and nothing but the OperatorCode versions changed."""

import json

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter import export
from edgelite.converter.export import export_tflite
from edgelite.converter.ir import Graph, Op, QuantParams
from edgelite.converter.quantize import IOType, QuantizeOptions, QuantMode
from edgelite.interpreter.kernels import OPS
from edgelite.interpreter.kernels.versions import signature_of
from edgelite.interpreter.loader.model import load_model
from edgelite.schema import generated_tflite as tfl
from edgelite.schema.model_io import pack_model
from tests.conftest import MODELS, sample_files

CALIB = str(MODELS / "digits_calib.npy")
FASHION_CALIB = str(MODELS / "fashion_calib.npz")   # the 28x28 Fashion-MNIST models
DIGIT_MODELS = ("tf1_cnn", "keras_cnn", "qat_cnn", "mobilenet_v2_digits")


def _options(name: str, mode: str | None = None, io: str | None = None) -> ConvertOptions:
    meta = MODELS / f"{name}.tf_ops.json"
    kw = {}
    if meta.exists() and "inputs" in (meta := json.loads(meta.read_text())):
        kw = dict(inputs=meta["inputs"], outputs=meta["outputs"],
                  input_shapes={k: tuple(v) for k, v in meta["input_shapes"].items()})
    if mode is not None:
        q = {} if io is None else {"io_type": IOType(io)}
        own = MODELS / f"{name}.calib.npz"  # the models that come with their own
        calib = str(own) if own.exists() else FASHION_CALIB if name.startswith("fashion_") \
            else CALIB
        kw["quantize"] = QuantizeOptions(mode=QuantMode(mode), calib=calib, **q)
    return ConvertOptions(**kw)


def _convert(name: str, mode: str | None = None, io: str | None = None) -> bytes:
    return convert_detailed(MODELS / f"{name}.pb", _options(name, mode, io)).model


def _versions(data: bytes) -> dict[str, int]:
    """op name -> the version of its OperatorCode (one per op, checked)."""
    model = load_model(data)
    versions: dict[str, int] = {}
    for op in model.subgraphs[0].operators:
        assert versions.setdefault(op.name, op.version) == op.version, op.name
    return versions


def _tf_pairs():
    """(model, mode, io type, TF's file) for every TF-written sample file."""
    for path in sample_files("*.tf*.tflite"):
        name, kind = path.name.split(".")[:2]
        if not (MODELS / f"{name}.pb").exists():
            continue  # TF's converter made it from a live Keras model only (kws_stream)
        if name.startswith(("rnn_", "text_lstm", "license_lstm")) and "int8" in kind:
            continue  # their own calibration data: tests/models/test_rnn_convert.py, test_lstm_int8.py
        if kind == "tf_dr":
            continue  # dynamic-range: tests/models/test_hybrid_models.py
        mode, io = {"tf": (None, None), "tf_float": (None, None), "tf_frozen": (None, None),
                    "tf_int8": ("int8", None), "tf_int8_io": ("int8", "int8"),
                    "tf_uint8": ("uint8", None)}[kind]
        yield pytest.param(name, mode, io, path, id=path.name)


# Ops whose operands differ from TF's: TF's float file of a QAT graph quantizes its
# per-channel FakeQuant'd weights at run time (a per-channel QUANTIZE: version 3);
# edgelite folds the weights' FakeQuant at conversion and quantizes activations only.
# edgelite keeps IsFinite's x - x and == 0 float (exact, no op more); TF's int8 file makes them
# int8 (converter/quantize/__init__.py, _non_finite_ops).
SIGNATURE_DIFFERS = {("misc_qat.tf.tflite", "QUANTIZE"): (1, 3),
                     ("misc_isfinite.tf_int8.tflite", "SUB"): (1, 2),
                     ("misc_isfinite.tf_int8.tflite", "EQUAL"): (1, 2)}


@pytest.mark.parametrize("name, mode, io, tf_path", list(_tf_pairs()))
def test_versions_are_tensorflows(name, mode, io, tf_path):
    ours, theirs = _versions(_convert(name, mode, io)), _versions(tf_path.read_bytes())
    both = set(ours) & set(theirs)
    assert both  # (the dilated Conv1D sample shares only CONV_2D: TF writes RESHAPEs)
    for op in sorted(both):
        want = SIGNATURE_DIFFERS.get((tf_path.name, op), (theirs[op], theirs[op]))
        assert (ours[op], theirs[op]) == want, op


def test_stridedslice_ellipses_are_spelled_out_as_tensorflow_does():
    """op_zoo_array's h[..., 0] (converter/passes/spell_out_ellipsis.py): no ellipsis_mask
    (STRIDED_SLICE version 6) in either file."""
    for data in (_convert("op_zoo_array"), (MODELS / "op_zoo_array.tf.tflite").read_bytes()):
        sg = load_model(data).subgraphs[0]
        slices = [op for op in sg.operators if op.name == "STRIDED_SLICE"]
        assert slices and not any(op.options["ellipsis_mask"] for op in slices)
        assert all(OPS[op.name].version(signature_of(op, sg)) == 1 for op in slices)


def test_raised_versions():
    """The versions the sample conversions raise (same as TF's files, test above)."""
    assert _versions(_convert("keras_cnn", "int8")) == {
        "QUANTIZE": 1, "CONV_2D": 3, "DEPTHWISE_CONV_2D": 3, "AVERAGE_POOL_2D": 2, "MEAN": 2,
        "FULLY_CONNECTED": 4, "SOFTMAX": 2, "DEQUANTIZE": 2}
    image = _versions(_convert("op_zoo_image"))
    assert (image["RESIZE_BILINEAR"], image["RESIZE_NEAREST_NEIGHBOR"],
            image["TRANSPOSE_CONV"]) == (3, 3, 4)        # half_pixel_centers; fused RELU
    # weights-only modes: per-channel int8 weights DEQUANTIZE 5, float16 ones 3
    assert _versions(_convert("tf1_cnn", "dynamic"))["DEQUANTIZE"] == 5
    assert _versions(_convert("tf1_cnn", "float16"))["DEQUANTIZE"] == 3


CONVERSIONS = [(name, None) for name in ("efficientnet_like", "keras_dynamic_shape",
                                         "op_zoo_array", "op_zoo_image", "op_zoo_math",
                                         "text_classifier", "tf1_cond_is_training",
                                         "tf1_cond_placeholder_default",
                                         "tf1_mobilenet_unfolded_bn")]
CONVERSIONS += [(name, mode) for name in DIGIT_MODELS
                for mode in (None, "int8", "uint8", "dynamic", "float16")]


@pytest.mark.parametrize("name, mode", CONVERSIONS)
def test_only_the_operator_versions_changed(name, mode, monkeypatch):
    """Byte for byte, a conversion is what edgelite wrote before it numbered versions
    (every op 1) once its OperatorCode versions are set back to 1; and the versions it
    wrote are the rules' versions of the file read back."""
    data = _convert(name, mode)
    model = tfl.ModelT.InitFromPackedBuf(data, 0)
    for code in model.operatorCodes:
        code.version = 1
    with monkeypatch.context() as m:
        m.setattr(export, "_version", lambda *args: 1)
        assert pack_model(model) == _convert(name, mode)
    sg = load_model(data).subgraphs[0]
    recomputed: dict[str, int] = {}
    for op in sg.operators:
        v = OPS[op.name].version(signature_of(op, sg))
        recomputed[op.name] = max(recomputed.get(op.name, 1), v)
    assert recomputed == _versions(data)


def test_one_operator_code_per_op_with_its_highest_version():
    """Like TF's writer: operators of one op share one OperatorCode, whose version is the
    highest they need (an int8 DEQUANTIZE is 2, a float16 one 3); CUSTOM stays 1."""
    g = Graph()
    x = g.tensor("x", np.int8, (1, 4))
    x.quant = QuantParams(np.array([0.5], np.float32), np.array([0], np.int64))
    g.inputs = [x]
    half = g.const("half", np.arange(4, dtype=np.float16).reshape(1, 4))
    a, b, s = (g.tensor(n, np.float32, (1, 4)) for n in ("a", "b", "s"))
    out = g.tensor("out", np.float32, (1, 4))
    g.add_op("DEQUANTIZE", [x], [a])
    g.add_op("DEQUANTIZE", [half], [b])
    g.add_op("ADD", [a, b], [s])
    g.insert_op(Op("CUSTOM", [s], [out], custom_code="MyOp"))
    g.outputs = [out]
    model = tfl.ModelT.InitFromPackedBuf(export_tflite(g), 0)
    codes = [(c.builtinCode, c.customCode, c.version) for c in model.operatorCodes]
    assert codes == [(tfl.BuiltinOperator.DEQUANTIZE, None, 3),
                     (tfl.BuiltinOperator.ADD, None, 1),
                     (tfl.BuiltinOperator.CUSTOM, b"MyOp", 1)]
    assert [op.opcodeIndex for op in model.subgraphs[0].operators] == [0, 0, 1, 2]


def _update_slice_graph(dtype, index_dtype) -> tuple[Graph, list[np.ndarray]]:
    """Two DYNAMIC_UPDATE_SLICE ops as a lowered TensorListSetItem gives them: the second
    writes over the first's result at constant int32 starts, the first at computed
    ``index_dtype`` ones; (graph, feeds)."""
    g = Graph()
    x, u = g.tensor("x", dtype, (4, 3)), g.tensor("u", dtype, (1, 3))
    starts = g.tensor("starts", index_dtype, (2,))
    g.inputs = [x, u, starts]
    a, b = g.tensor("a", dtype, (4, 3)), g.tensor("b", dtype, (4, 3))
    g.add_op("DYNAMIC_UPDATE_SLICE", [x, u, starts], [a])
    g.add_op("DYNAMIC_UPDATE_SLICE", [a, u, g.const("first", np.int32([-1, 0]))], [b])
    g.outputs = [b]
    feeds = [np.arange(12).reshape(4, 3).astype(dtype), np.full((1, 3), 7, dtype),
             np.array([9, 2], index_dtype)]
    return g, feeds


@pytest.mark.parametrize("dtype,index_dtype,version", [
    (np.float32, np.int32, 1), (np.float32, np.int64, 2), (np.float16, np.int32, 3),
    (np.int16, np.int64, 4), (np.int8, np.int64, 2), (np.bool_, np.int32, 1)])
def test_dynamic_update_slice_exports_as_litert_expects(dtype, index_dtype, version, litert,
                                                        tmp_path):
    """One OperatorCode with op_version.cc's version (the highest of the two operators:
    int64 starts 2, float16 3, int16 4); the empty DynamicUpdateSliceOptions table reads
    back as no options; LiteRT loads that version and computes what edgelite does; `edgelite
    inspect` lists both operators and plans the arena."""
    from edgelite.cli.inspect_cmd import describe
    from edgelite.interpreter import Interpreter

    g, feeds = _update_slice_graph(np.dtype(dtype), np.dtype(index_dtype))
    assert g.op_counts() == {"DYNAMIC_UPDATE_SLICE": 2}
    data = export_tflite(g)
    model = tfl.ModelT.InitFromPackedBuf(data, 0)
    assert [(c.builtinCode, c.version) for c in model.operatorCodes] == \
        [(tfl.BuiltinOperator.DYNAMIC_UPDATE_SLICE, version)]
    assert {op.builtinOptionsType for op in model.subgraphs[0].operators} == \
        {tfl.BuiltinOptions.DynamicUpdateSliceOptions}
    assert [op.options for op in load_model(data).subgraphs[0].operators] == [{}, {}]
    assert _versions(data) == {"DYNAMIC_UPDATE_SLICE": version}

    results = []
    for interp in (Interpreter(model_content=data), litert.Interpreter(model_content=data)):
        interp.allocate_tensors()
        for d, v in zip(interp.get_input_details(), feeds):
            interp.set_tensor(d["index"], v)
        interp.invoke()
        results.append(interp.get_tensor(interp.get_output_details()[0]["index"]))
    want = feeds[0].copy()
    want[3] = want[0] = 7  # starts [9, 2] clamp to [3, 0]; [-1, 0] to [0, 0]
    np.testing.assert_array_equal(results[0], want)
    np.testing.assert_array_equal(results[1], want)

    path = tmp_path / "dus.tflite"
    path.write_bytes(data)
    text = describe(str(path))
    assert "ops (2): DYNAMIC_UPDATE_SLICE x2" in text
    assert "arena: not planned" not in text and "arena: " in text
