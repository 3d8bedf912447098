"""The int16x8 rules (rules.INT16_OPS, the Q0.15 FIXED_OUTPUT) and --quantize int16x8
(TFLite's 16x8 mode): int16 activations (symmetric), int8 weights, int64 bias; ops without
a 16x8 kernel kept float. Converted GraphDefs load in LiteRT and run bit-exact in edgelite
with both kernel sets."""

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import IOType, QuantizeOptions, QuantMode
from edgelite.converter.quantize.params import QType
from edgelite.converter.quantize.rules import FIXED_OUTPUT, INT16_OPS, INTEGER_OPS
from edgelite.interpreter.errors import EdgeliteError
from edgelite.interpreter.model import load_model
from tests.conftest import MODELS
from tests.interpreter.quant_oracle import KERNEL_SETS, run_litert, run_ours


def _convert(name: str) -> bytes:
    q = QuantizeOptions(mode=QuantMode.INT16X8, calib=str(MODELS / "digits_calib.npy"))
    return convert_detailed(MODELS / f"{name}.pb", ConvertOptions(quantize=q)).model


@pytest.mark.parametrize("name", ["tf1_cnn", "keras_cnn"])
def test_int16x8_bit_exact_with_litert(name):
    model = _convert(name)
    x = np.load(MODELS / "digits_test.npz")["x"][:6].astype(np.float32)
    for kernels in KERNEL_SETS:
        for i in range(len(x)):
            ours = run_ours(model, [x[i:i + 1]], kernels)
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


@pytest.mark.parametrize("extra", [{"io_type": IOType.INT8}, {"mean_std": {"input": (0, 1)}}])
def test_int16x8_integer_io_refused(extra):
    q = QuantizeOptions(mode=QuantMode.INT16X8, calib=str(MODELS / "digits_calib.npy"), **extra)
    with pytest.raises(EdgeliteError, match="int16x8 keeps float inputs and outputs"):
        convert_detailed(MODELS / "tf1_cnn.pb", ConvertOptions(quantize=q))
