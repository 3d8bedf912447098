"""converter/quantize/rules.py: the quantizer's rules, derived from the ops' OpDef records.

* int8: a graph of TRANSPOSE_CONV, STRIDED_SLICE, REDUCE_MAX, TILE, PACK and SUM quantizes to
  int8 end to end, and LiteRT runs the result bit for bit as edgelite does;
* int16x8 (rules.INT16_OPS, the Q0.15 FIXED_OUTPUT; TFLite's 16x8 mode): int16 activations
  (symmetric), int8 weights, int64 bias, ops without a 16x8 kernel kept float; converted
  GraphDefs load in LiteRT and run bit-exact in edgelite with both kernel sets."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import IOType, QuantizeOptions, QuantMode
from edgelite.converter.quantize.params import QType
from edgelite.converter.quantize.rules import FIXED_OUTPUT, INT16_OPS, INTEGER_OPS
from edgelite.errors import EdgeliteError
from edgelite.interpreter.loader.model import load_model
from tests.conftest import MODELS
from tests.support import KERNEL_SETS, assert_bit_exact, run_edgelite, run_litert

from ..lower.lowering import F32, I32, floats, graph, rng

OPS = ["TRANSPOSE_CONV", "STRIDED_SLICE", "REDUCE_MAX", "TILE", "PACK", "SUM"]


def structural_graph():
    r = rng()
    g = graph(x=(1, 4, 4, 3))
    g.const("sizes", np.array([1, 8, 8, 5], np.int32))
    g.const("w", floats(r, 3, 3, 5, 3))  # HW, out, in
    g.node("up", "Conv2DBackpropInput", ["sizes", "w", "x"], T=F32, strides=[1, 2, 2, 1],
           padding="SAME")
    for name, v in (("b", [0, 1, 0, 0]), ("e", [1, 7, 8, 5]), ("s", [1, 2, 1, 1])):
        g.const(name, np.array(v, np.int32))
    g.node("sl", "StridedSlice", ["up", "b", "e", "s"], T=F32, Index=I32)  # (1, 3, 8, 5)
    g.const("ax2", np.array([2], np.int32))
    g.node("mx", "Max", ["sl", "ax2"], T=F32, Tidx=I32, keep_dims=True)  # (1, 3, 1, 5)
    g.const("mult", np.array([1, 1, 2, 1], np.int32))
    g.node("tl", "Tile", ["mx", "mult"], T=F32, Tmultiples=I32)  # (1, 3, 2, 5)
    g.node("pk", "Pack", ["tl", "tl"], T=F32, N=2, axis=1)  # (1, 2, 3, 2, 5)
    g.const("ax1", np.array([2], np.int32))
    g.node("y", "Sum", ["pk", "ax1"], T=F32, Tidx=I32, keep_dims=False)  # (1, 2, 2, 5)
    return g


@pytest.fixture(scope="module")
def quantized(tmp_path_factory):
    x = np.random.default_rng(5).uniform(-1, 1, (32, 1, 4, 4, 3)).astype(np.float32)
    path = tmp_path_factory.mktemp("calib") / "calib.npy"
    np.save(path, x.reshape(32, 4, 4, 3)[:, None])
    result = convert_detailed(structural_graph().bytes(), ConvertOptions(
        inputs=["x"], outputs=["y"], quantize=QuantizeOptions(calib=str(path))))
    return result.model, x


def test_every_op_runs_int8(quantized):
    model, _ = quantized
    sub = load_model(model).subgraphs[0]
    names = [op.name for op in sub.operators]
    # float in, float out; inside, int8 only (PACK's shared parameters requantize its
    # input with an int8 -> int8 QUANTIZE, as CONCATENATION's do)
    assert [n for n in names if n != "QUANTIZE"] == OPS + ["DEQUANTIZE"]
    assert names[0] == "QUANTIZE"


def test_litert_agrees_bit_for_bit(quantized):
    # LiteRT's BUILTIN_REF resolver registers TILE only up to version 2 (register_ref.cc),
    # so it cannot load an int8 TILE (version 3): the default set here; the reference
    # arithmetic of each op is checked per op (tests/interpreter/kernels).
    model, x = quantized
    for sample in x[:4]:
        assert_bit_exact(model, [sample], kernels=("default",))


# --------------------------------------------------------------------------- int16x8


def _convert(name: str) -> bytes:
    q = QuantizeOptions(mode=QuantMode.INT16X8, calib=str(MODELS / "digits_calib.npy"))
    return convert_detailed(MODELS / f"{name}.pb", ConvertOptions(quantize=q)).model


@pytest.mark.parametrize("name", ["tf1_cnn", "keras_cnn"])
def test_int16x8_bit_exact_with_litert(name):
    model = _convert(name)
    x = np.load(MODELS / "digits_test.npz")["x"][:6].astype(np.float32)
    for kernels in KERNEL_SETS:
        for i in range(len(x)):
            ours = run_edgelite(model, [x[i:i + 1]], kernels)
            theirs = run_litert(model, [x[i:i + 1]], kernels)
            for a, b in zip(ours, theirs):
                np.testing.assert_array_equal(a, b)


def test_int16_rules():
    assert {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL", "SOFTMAX",
            "LOGISTIC", "TANH", "AVERAGE_POOL_2D", "MAX_POOL_2D", "CONCATENATION",
            "RESHAPE"} <= INT16_OPS <= INTEGER_OPS
    assert "RELU_N1_TO_1" not in INT16_OPS and "HARD_SWISH" not in INT16_OPS  # no LiteRT int16
    for op in ("SOFTMAX", "LOGISTIC", "TANH"):
        assert FIXED_OUTPUT[op][QType.INT16] == (2.0**-15, 0)


@pytest.mark.parametrize("name", ["tf1_cnn", "keras_cnn"])
def test_int16x8_structure(name):
    """int16 activations with zero point 0, int8 weights, int64 bias; an op with no 16x8
    kernel (keras_cnn's MEAN, until it has one) stays float between DEQUANTIZE / QUANTIZE."""
    model = load_model(_convert(name))
    sg = model.subgraphs[0]
    kinds = {}
    for op in sg.operators:
        if op.name not in ("QUANTIZE", "DEQUANTIZE"):
            x = sg.tensors[op.inputs[0]]
            assert (x.dtype == np.int16) == (op.name in INT16_OPS), op.name
        if op.name in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            x, w = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]]
            assert (x.dtype, w.dtype) == (np.int16, np.int8), op.name
            assert list(x.quantization.zero_point) == [0]
            if len(op.inputs) > 2 and op.inputs[2] >= 0:
                assert sg.tensors[op.inputs[2]].dtype == np.int64
            kinds[op.name] = kinds.get(op.name, 0) + 1
    assert kinds.get("CONV_2D", 0) >= 1 and kinds.get("FULLY_CONNECTED", 0) >= 1


def test_cli_int16x8(tmp_path):
    from click.testing import CliRunner

    from edgelite.cli.main import main as cli

    out = tmp_path / "m.tflite"
    r = CliRunner().invoke(cli, ["convert", str(MODELS / "tf1_cnn.pb"), "-o", str(out),
                                 "--quantize", "int16x8",
                                 "--calib", str(MODELS / "digits_calib.npy")])
    assert r.exit_code == 0, r.output
    assert out.read_bytes() == _convert("tf1_cnn")


@pytest.mark.parametrize("name", ["tf1_cnn", "keras_cnn"])
def test_int16x8_file_is_what_tensorflow_writes(name):
    """The same ops in the same order as TF's 16x8 file of the graph (models/tf_modes/),
    and an SQNR against TF's float outputs no more than 1 dB below that file's."""
    model = _convert(name)
    ours = load_model(model).subgraphs[0]
    tf_file = (MODELS / "tf_modes" / f"{name}.16x8.tflite").read_bytes()
    assert [op.name for op in ours.operators] == \
        [op.name for op in load_model(tf_file).subgraphs[0].operators]
    golden = np.load(MODELS / f"{name}.golden.npz")
    ref = golden["output"][:16]

    def sqnr(data: bytes) -> float:
        y = np.concatenate([run_litert(data, [x[None]], "reference")[0] for x in golden["input"][:16]])
        return 10 * np.log10(np.sum(ref ** 2) / np.sum((y - ref) ** 2))

    assert sqnr(model) >= max(sqnr(tf_file) - 1.0, 30.0)


@pytest.mark.parametrize("extra,message", [
    ({"io_type": IOType.INT8}, "takes --io-type float or int16, not int8"),
    ({"io_type": IOType.UINT8}, "takes --io-type float or int16, not uint8"),
    ({"mean_std": {"input": (128.0, 255.0)}}, "needs mean 0"),
    ({"adaround": True}, "--adaround: not available with --quantize int16x8"),
])
def test_int16x8_refusals(extra, message):
    q = QuantizeOptions(mode=QuantMode.INT16X8, calib=str(MODELS / "digits_calib.npy"), **extra)
    with pytest.raises(EdgeliteError, match=message):
        convert_detailed(MODELS / "tf1_cnn.pb", ConvertOptions(quantize=q))
