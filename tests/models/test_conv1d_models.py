"""Issue 25's op-count models (models/builders/zoo_conv1d.py): Keras Conv1D stacks and a DS-CNN,
whose bias, batch norm, activation and Flatten edgelite folds as TensorFlow's converter does,
and TF's int8 IsFinite file, whose SUB has an output multiplier above 1.

Float outputs against TF's goldens, float op counts and int8 SQNR against TF's int8 file run in
tests/models/test_real_world.py and test_beyond_cnn.py (every model with a family); here: the
int8 op counts, what the folds leave, the SQNR the folds win back, and TF's int8 file.
"""

import json

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, QuantizeOptions, convert_detailed
from edgelite.interpreter import Interpreter
from edgelite.interpreter.loader.model import load_model
from tests.conftest import MODELS
from tests.support import assert_bit_exact

CONV1D = ["aud_conv1d", "aud_conv1d_wave", "aud_conv1d_sep"]
NAMES = CONV1D + ["aud_dscnn", "misc_isfinite"]
FOLDS = frozenset({"hoist_channel_ops", "fold_flatten_into_fc"})


def _info(name: str) -> dict:
    return json.loads((MODELS / f"{name}.tf_ops.json").read_text())


def _convert(name: str, int8: bool, disabled=frozenset()) -> bytes:
    info = _info(name)
    q = QuantizeOptions(calib=str(MODELS / f"{name}.calib.npz")) if int8 else None
    options = ConvertOptions(inputs=info["inputs"], outputs=info["outputs"], quantize=q,
                             input_shapes={k: tuple(v) for k, v in info["input_shapes"].items()},
                             disabled_passes=frozenset(disabled))
    return convert_detailed(MODELS / f"{name}.pb", options).model


def _ops(model: bytes) -> list[str]:
    return [op.name for op in load_model(model).subgraphs[0].operators]


def _sqnr_db(name: str, model: bytes) -> float:
    golden = np.load(MODELS / f"{name}.golden.npz")
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    got = []
    for x in golden["input"]:
        interp.set_tensor(interp.get_input_details()[0]["index"], x[None])
        interp.invoke()
        got.append(interp.get_tensor(interp.get_output_details()[0]["index"])[0])
    ref = golden["output"].astype(np.float64)
    return float(10 * np.log10(np.sum(ref**2) / np.sum((ref - np.stack(got)) ** 2)))


@pytest.mark.parametrize("name", NAMES)
def test_op_counts_not_above_tensorflows(name):
    info = _info(name)
    float_ops, int8_ops = _ops(_convert(name, False)), _ops(_convert(name, True))
    assert len(float_ops) <= info["n_ops"], (float_ops, info["ops"])
    assert len(int8_ops) <= info["tf_int8"]["n_ops"], (int8_ops, info["tf_int8"]["ops"])


@pytest.mark.parametrize("name", CONV1D)
def test_conv1d_bias_batch_norm_and_activation_fold_into_the_conv(name):
    """No arithmetic or activation op left, and no SQUEEZE -> EXPAND_DIMS pair between layers;
    without the folds the same graph keeps them all (TF 14 / 10 / 9 ops, as edgelite now)."""
    ops = _ops(_convert(name, False))
    assert not set(ops) & {"ADD", "SUB", "MUL", "RELU", "RELU6"}, ops
    assert ops.index("EXPAND_DIMS") == 0 and ops.count("EXPAND_DIMS") == 1  # the input's
    assert ops.count("CONV_2D") == _info(name)["op_counts"]["CONV_2D"]
    unfolded = _ops(_convert(name, False, FOLDS))
    assert {"ADD", "MUL", "SQUEEZE", "EXPAND_DIMS"} <= set(unfolded)
    assert len(unfolded) >= len(ops) + 8


def test_conv1d_int8_sqnr_gap_closed():
    """The unfolded bias and batch norm each requantize the conv's output to int8 with one
    scale for all channels (the conv's, before the batch norm's per-channel factors): on the
    waveform model that costs 5 dB. Folded, the factors live in the per-channel weight
    scales and edgelite's int8 file matches TF's SQNR."""
    name = "aud_conv1d_wave"
    tf_default = _info(name)["tf_int8"]["sqnr_db_by_runtime"]["default"]["y"]
    folded = _sqnr_db(name, _convert(name, True))
    unfolded = _sqnr_db(name, _convert(name, True, FOLDS))
    assert folded >= tf_default - 0.5 and folded - unfolded >= 3.0, (folded, unfolded, tf_default)


def test_dscnn_fully_connected_reads_the_pool():
    for int8 in (False, True):
        model = load_model(_convert("aud_dscnn", int8))
        ops = model.subgraphs[0].operators
        pool = next(op for op in ops if op.name == "AVERAGE_POOL_2D")
        fc = next(op for op in ops if op.name == "FULLY_CONNECTED")
        assert fc.inputs[0] == pool.outputs[0] and "RESHAPE" not in [op.name for op in ops]


def test_tensorflows_int8_isfinite_file_bit_exact():
    """TF's int8 file writes IsFinite's x - x as SUB with output scale 7.8e-9: an output
    multiplier of ~14, which LiteRT runs past its reference formula (add_paths.py)."""
    data = (MODELS / "misc_isfinite.tf_int8.tflite").read_bytes()
    sub = next(op for op in load_model(data).subgraphs[0].operators if op.name == "SUB")
    tensors = load_model(data).subgraphs[0].tensors
    s_in = max(float(tensors[i].quantization.scale[0]) for i in sub.inputs)
    s_out = float(tensors[sub.outputs[0]].quantization.scale[0])
    assert 2 * s_in / (2**20 * s_out) > 1.0
    x = np.load(MODELS / "misc_isfinite.golden.npz")["input"]
    for i in range(len(x)):
        assert_bit_exact(data, [x[i:i + 1]])


@pytest.mark.parametrize("name", NAMES)
def test_int8_file_bit_exact_with_litert(name):
    """edgelite's int8 file of each model, on its golden inputs, in both LiteRT kernel sets."""
    model = _convert(name, True)
    x = np.load(MODELS / f"{name}.golden.npz")["input"]
    for i in range(0, len(x), 4):
        assert_bit_exact(model, [x[i:i + 1]])
