"""`--quantize int16x8`: TFLite's 16x8 scheme (symmetric int16 activations, int8 weights,
int64 biases) -- the parameters, the files against TensorFlow's own 16x8 conversions of the
same graphs, and edgelite's kernels against LiteRT's on them."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import IOType, QuantizeOptions, QuantMode
from edgelite.converter.quantize.params import QType, activation, symmetric_activation
from edgelite.interpreter import Interpreter
from edgelite.interpreter.errors import EdgeliteError
from tests.conftest import MODELS, litert_module

CNNS = ("keras_cnn", "tf1_cnn")


def test_int16_activations_are_symmetric():
    p = symmetric_activation(0.0, 1.0)
    assert p.scale[0] == np.float32(1 / 32767) and p.zero_point[0] == 0  # TF's input scale
    p = activation(-3.0, 2.0, QType.INT16)
    assert p.scale[0] == np.float32(3 / 32767) and p.zero_point[0] == 0
    assert activation(0.0, 0.0, QType.INT16).scale[0] == 1.0
    assert QType.INT16.bias_dtype == np.int64 and QType.INT8.bias_dtype == np.int32


def _convert(name: str, tmp_path, **options):
    golden = np.load(MODELS / f"{name}.golden.npz")
    calib = tmp_path / "calib.npy"
    np.save(calib, golden["input"][:16])
    q = QuantizeOptions(mode=QuantMode.INT16X8, calib=str(calib), **options)
    return convert_detailed(MODELS / f"{name}.pb", ConvertOptions(quantize=q)), golden


def _tensors(model: bytes):
    interp = litert_module().Interpreter(model_content=model)
    return interp, {t["index"]: t for t in interp.get_tensor_details()}


@pytest.mark.parametrize("name", CNNS)
def test_file_is_what_tensorflow_writes(name, tmp_path):
    result, _ = _convert(name, tmp_path)
    ours, ours_t = _tensors(result.model)
    tf, _ = _tensors((MODELS / "tf_modes" / f"{name}.16x8.tflite").read_bytes())
    op_names = [op["op_name"] for op in ours._get_ops_details()]
    assert op_names == [op["op_name"] for op in tf._get_ops_details()]
    for op in ours._get_ops_details():
        if op["op_name"] in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            x, w, b = (ours_t[i] for i in op["inputs"][:3])
            assert (x["dtype"], w["dtype"], b["dtype"]) == (np.int16, np.int8, np.int64)
    for t in ours_t.values():  # every int16 activation symmetric
        if t["dtype"] == np.int16:
            assert t["quantization_parameters"]["zero_points"].tolist() == [0]


@pytest.mark.parametrize("name", CNNS)
@pytest.mark.parametrize("kernels", ["reference", "default"])
def test_bit_exact_with_litert_and_as_accurate_as_tensorflow(name, kernels, tmp_path):
    result, golden = _convert(name, tmp_path)
    litert = litert_module()
    resolver = {"reference": litert.OpResolverType.BUILTIN_REF,
                "default": litert.OpResolverType.AUTO}[kernels]
    runs = {}
    for who, model in (("ours", result.model),
                       ("tf", (MODELS / "tf_modes" / f"{name}.16x8.tflite").read_bytes())):
        for runtime in ("edgelite", "litert"):
            interp = (Interpreter(model_content=model, kernels=kernels) if runtime == "edgelite"
                      else litert.Interpreter(model_content=model,
                                              experimental_op_resolver_type=resolver))
            interp.allocate_tensors()
            ys = []
            for x in golden["input"][16:32]:
                interp.set_tensor(interp.get_input_details()[0]["index"], x[None])
                interp.invoke()
                ys.append(interp.get_tensor(interp.get_output_details()[0]["index"])[0])
            runs[who, runtime] = np.array(ys)
    np.testing.assert_array_equal(runs["ours", "edgelite"], runs["ours", "litert"])
    ref = golden["output"][16:32]

    def sqnr(y):
        return 10 * np.log10(np.sum(ref ** 2) / np.sum((y - ref) ** 2))

    assert sqnr(runs["ours", "litert"]) >= sqnr(runs["tf", "litert"]) - 1.0
    assert sqnr(runs["ours", "litert"]) >= 30.0


@pytest.mark.parametrize("options,message", [
    (dict(io_type=IOType.UINT8), "takes --io-type float or int16"),
    (dict(adaround=True), "--adaround: not available with --quantize int16x8"),
    (dict(mean_std={"input": (128.0, 255.0)}), "needs mean 0"),
])
def test_refusals(options, message, tmp_path):
    with pytest.raises(EdgeliteError, match=message):
        _convert("tf1_cnn", tmp_path, **options)
