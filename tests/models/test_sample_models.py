"""End to end on the bundled sample models: GraphDef -> .tflite -> edgelite and LiteRT.

Goldens are TensorFlow's outputs for the frozen graphs (models/build_models.py).
"""

import json

import numpy as np
import pytest

import edgelite
from edgelite.converter import ConvertOptions, convert_detailed
from tests.conftest import litert_module

MODELS = ["tf1_cnn", "keras_cnn", "mobilenet_v2_digits", "fashion_xception",
          "fashion_mobilenet_v2"]
# After folding and fusion; exact, so a missed fusion fails.
EXPECTED_OPS = {
    "tf1_cnn": {"CONV_2D": 2, "FULLY_CONNECTED": 1, "MAX_POOL_2D": 1, "RESHAPE": 1,
                "SOFTMAX": 1},
    "keras_cnn": {"AVERAGE_POOL_2D": 1, "CONV_2D": 2, "DEPTHWISE_CONV_2D": 1,
                  "FULLY_CONNECTED": 1, "MEAN": 1, "SOFTMAX": 1},
    # tf-keras MobileNetV2: 52 BN and 35 ReLU6 folded; the 10 ADDs are the residuals
    "mobilenet_v2_digits": {"ADD": 10, "CONV_2D": 35, "DEPTHWISE_CONV_2D": 17,
                            "FULLY_CONNECTED": 1, "MEAN": 1, "RESIZE_BILINEAR": 1,
                            "SOFTMAX": 1},
    # Xception-style: the residual ADD's output is read by the next block's shortcut before
    # its RELU, so the RELU stays an op (TF's converter: the same)
    "fashion_xception": {"ADD": 3, "CONV_2D": 11, "DEPTHWISE_CONV_2D": 7, "FULLY_CONNECTED": 1,
                         "MAX_POOL_2D": 2, "MEAN": 1, "RELU": 2, "SOFTMAX": 1},
    "fashion_mobilenet_v2": {"ADD": 3, "CONV_2D": 15, "DEPTHWISE_CONV_2D": 7,
                             "FULLY_CONNECTED": 1, "MEAN": 1, "SOFTMAX": 1},
}
# TF's float .tflite is not committed (size; the fashion models' TF int8 files are); its op
# list is
NO_TF_TFLITE = {"mobilenet_v2_digits", "fashion_xception", "fashion_mobilenet_v2"}


def run_edgelite(model: bytes, x: np.ndarray) -> np.ndarray:
    interp = edgelite.Interpreter(model_content=model)
    inp = interp.get_input_details()[0]
    interp.resize_tensor_input(inp["index"], list(x.shape))
    interp.allocate_tensors()
    interp.set_tensor(inp["index"], x)
    interp.invoke()
    return interp.get_tensor(interp.get_output_details()[0]["index"])


def run_litert(model: bytes, x: np.ndarray, resolver=None) -> np.ndarray:
    kwargs = {} if resolver is None else {"experimental_op_resolver_type": resolver}
    interp = litert_module().Interpreter(model_content=model, **kwargs)
    inp = interp.get_input_details()[0]
    interp.resize_tensor_input(inp["index"], list(x.shape))
    interp.allocate_tensors()
    interp.set_tensor(inp["index"], x)
    interp.invoke()
    return interp.get_tensor(interp.get_output_details()[0]["index"])


def assert_close(actual, reference, rel=1e-5):
    err = np.abs(actual.astype(np.float64) - reference).max()
    assert err <= rel * np.abs(reference).max(), f"max abs error {err:.3g}"


@pytest.fixture(scope="module", params=MODELS)
def sample(request):
    from tests.conftest import MODELS as DIR
    name = request.param
    golden = np.load(DIR / f"{name}.golden.npz")
    result = convert_detailed(DIR / f"{name}.pb")
    return name, DIR, golden, result


def test_converted_model_matches_tensorflow(sample):
    name, _, golden, result = sample
    assert_close(run_edgelite(result.model, golden["input"]), golden["output"])


def test_converted_model_runs_identically_in_litert(sample, litert):
    # Float sums in other orders (im2col blocks, FMA tiles, XNNPACK's) land through a deep
    # network at distances of the order of LiteRT's two kernel sets' from each other: ours
    # stay within 1e-6 of the output's magnitude, or 3x that spread where it is larger
    # (fashion_mobilenet_v2: LiteRT 6.0e-7, ours 7.2e-7 / 1.25e-6); a wrong tap or rounding
    # step is orders of magnitude beyond either.
    name, _, golden, result = sample
    ours = run_edgelite(result.model, golden["input"])
    theirs = [run_litert(result.model, golden["input"], resolver)
              for resolver in (None, litert.OpResolverType.BUILTIN_REF)]
    scale = np.abs(theirs[1]).max()
    spread = np.abs(theirs[0].astype(np.float64) - theirs[1]).max() / scale
    for other in theirs:
        assert_close(other, golden["output"])
        assert_close(ours, other, rel=max(1e-6, 3 * spread))


def test_tensorflow_tflite_runs_in_edgelite(sample):
    name, models, golden, _ = sample
    if name in NO_TF_TFLITE:
        pytest.skip(f"{name}: TF's .tflite is not committed (size); its op list is")
    tf_model = (models / f"{name}.tf.tflite").read_bytes()
    xs = golden["input"]
    ours = np.concatenate([run_edgelite(tf_model, xs[i:i + 1]) for i in range(len(xs))])
    theirs = np.concatenate([run_litert(tf_model, xs[i:i + 1]) for i in range(len(xs))])
    assert_close(ours, theirs, rel=1e-6)
    assert_close(ours, golden["output"])


def test_fusion_op_counts(sample):
    name, models, _, result = sample
    counts = result.graph.op_counts()
    assert counts == EXPECTED_OPS[name]
    # BN, bias, ReLU all fused (but a RELU whose input another op reads too)
    assert not {"MUL", "RELU6"} & set(counts)
    tf_counts = json.loads((models / f"{name}.tf_ops.json").read_text())["op_counts"]
    assert counts == tf_counts  # the same ops TensorFlow's converter writes


def test_pbtxt_converts_to_the_same_model():
    from tests.conftest import MODELS as DIR
    assert edgelite.convert(DIR / "tf1_cnn.pbtxt") == edgelite.convert(DIR / "tf1_cnn.pb")


def test_names_survive(sample):
    name, _, _, result = sample
    interp = edgelite.Interpreter(model_content=result.model)
    assert interp.get_input_details()[0]["name"] == "input"
    assert interp.get_output_details()[0]["name"] == "probs"
    side = 28 if name.startswith("fashion_") else 8
    assert list(interp.get_input_details()[0]["shape_signature"]) == [-1, side, side, 1]


def test_disable_fold_batchnorm_keeps_mul_add():
    from tests.conftest import MODELS as DIR
    result = convert_detailed(DIR / "keras_cnn.pb",
                              ConvertOptions(disabled_passes=frozenset({"fold_batchnorm"})))
    assert result.graph.op_counts()["MUL"] == 3
    golden = np.load(DIR / "keras_cnn.golden.npz")
    assert_close(run_edgelite(result.model, golden["input"]), golden["output"])
