"""Every int8 (and 16x8) file of the suite runs in edgelite with kernels="micro" exactly as in
TensorFlow Lite Micro (the tflite-micro runtime, tests/support/runtimes.py), on its
evaluation inputs:

* TensorFlow's files: models/*.tf_int8*.tflite, models/tf_modes/*.int8.tflite and
  *.16x8.tflite;
* edgelite's own int8 conversions of the digit GraphDefs (``--quantize int8``, float / int8 /
  uint8 io, per-channel and per-tensor weights), on the 397 digits of models/digits_test.npz
  (float io; FEW_DIGITS* otherwise): the FULLY_CONNECTED rounding difference between TFLM
  and LiteRT's reference kernels shows on a few of them only.

Other files run on their golden inputs (the first SAMPLES). Where TFLM refuses a file,
REFUSALS holds the reason asserted on, so the list of files that run cannot shrink unseen.
DIFFERS lists the files not bit-exact yet (strict xfail: the entry must go when they are).
"""

import json

import numpy as np
import pytest

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import IOType, QuantizeOptions, QuantMode
from edgelite.interpreter import Interpreter
from tests.conftest import MODELS
from tests.support import assert_micro_exact_samples, micro_refusal

TF_MODES = MODELS / "tf_modes"
MANIFEST = json.loads((TF_MODES / "manifest.json").read_text())
DIGIT_MODELS = ("keras_cnn", "tf1_cnn", "qat_cnn", "mobilenet_v2_digits")
SAMPLES = 8


def _tf_files() -> list[str]:
    files = sorted(p.name for p in MODELS.glob("*.tf_int8*.tflite"))
    for mode in ("int8", "16x8"):
        files += sorted(f"tf_modes/{p.name}" for p in TF_MODES.glob(f"*.{mode}.tflite")
                        if "existing" not in MANIFEST.get(p.name, {}))
    return files


TF_FILES = _tf_files()

# TFLM's reason for refusing a file (a substring of its message).
REFUSALS = {
    # (its SUB's output multiplier is above 1, which TFLM's sub aborts on: add_paths.py)
    "misc_isfinite.tf_int8.tflite": "Didn't find op for builtin opcode 'SELECT'",
    "shape_audio.tf_int8.tflite": "Non-constant >paddings< tensor is not supported",
    "shape_values.tf_int8.tflite": "Didn't find op for builtin opcode 'RANGE'",
    "sparse_cnn.tf_int8.tflite": "Didn't find op for builtin opcode 'DENSIFY'",
    "tf_modes/op_zoo_array.int8.tflite": "Didn't find op for builtin opcode 'TILE'",
    "tf_modes/op_zoo_math.int8.tflite": "Didn't find op for builtin opcode 'POW'",
    "tf_modes/qat_cnn.16x8.tflite": "dequantize_common.cc",  # a float16 DEQUANTIZE
    "tf_modes/text_classifier.16x8.tflite": "Type 'INT16' is not supported by gather",
}
# Files TFLM loads but whose results are not a computation to reproduce: {file: why}.
NO_ORACLE = {
    "sparse_mlp16.tf_int8.tflite": "TFLM has no sparse tensors: its FULLY_CONNECTED reads the "
                                   "block-sparse weight buffer as if it were dense",
}
# Files TFLM runs and kernels="micro" does not match yet: {file: what differs}.
DIFFERS: dict[str, str] = {
}
# The digit MobileNetV2 costs ~20 ms per image in each interpreter: its first images only;
# int8 / uint8 io changes only the first QUANTIZE and the last DEQUANTIZE of a file, whose
# float-io twin runs on all 397 digits.
FEW_DIGITS = {"mobilenet_v2_digits": 32}
FEW_DIGITS_IO = 64


def _input_names(model: bytes) -> list[tuple[str, dict]]:
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    return [(d["name"].removeprefix("serving_default_").split(":")[0], d)
            for d in interp.get_input_details()]


def _golden_keys(base: str) -> dict[str, str]:
    """Graph input node -> key of the golden file (models/tf_modes/manifest.json)."""
    for fname, entry in MANIFEST.items():
        if fname.startswith(f"{base}.") and "inputs" in entry:
            return {node: key for node, key, *_ in entry["inputs"]}
    return {}


def _feeds(model: bytes, base: str, count: int) -> list[list[np.ndarray]]:
    """Per sample, one array per model input: float inputs as they are, int8 / uint8 / int16
    inputs quantized with the tensor's own parameters, integer ids unchanged."""
    details = _input_names(model)
    if base in DIGIT_MODELS:
        arrays = [np.load(MODELS / "digits_test.npz")["x"][:count]]
    else:
        golden, key_of = np.load(MODELS / f"{base}.golden.npz"), _golden_keys(base)
        candidates = [k for k in golden.files if not k.startswith(("output", "label"))]
        arrays = [golden[key_of.get(name, name if name in golden.files else candidates[i])]
                  for i, (name, _) in enumerate(details)]
    samples = min(count, *(len(a) for a in arrays))
    feeds = []
    for s in range(samples):
        sample = []
        for (_, d), a in zip(details, arrays):
            x = a[s:s + 1].reshape(d["shape"])
            if np.issubdtype(d["dtype"], np.integer) and d["quantization"][0] != 0:
                scale, zero = d["quantization"]
                info = np.iinfo(d["dtype"])
                x = np.clip(np.round(x / scale) + zero, info.min, info.max)
            sample.append(x.astype(d["dtype"]))
        feeds.append(sample)
    return feeds


def _check(fname: str, model: bytes, count: int) -> None:
    base = fname.removeprefix("tf_modes/").split(".")[0]
    feeds = _feeds(model, base, count)
    assert feeds
    assert_micro_exact_samples(model, feeds)


@pytest.mark.parametrize("fname", [
    pytest.param(f, marks=pytest.mark.xfail(strict=True, reason=DIFFERS[f]))
    if f in DIFFERS else f for f in TF_FILES if f not in NO_ORACLE])
def test_tf_file_bit_exact_with_micro(fname):
    model = (MODELS / fname).read_bytes()
    refusal = micro_refusal(model)
    if fname in REFUSALS:
        assert refusal is not None and REFUSALS[fname] in refusal, refusal
        return
    assert refusal is None, refusal
    count = len(np.load(MODELS / "digits_test.npz")["y"]) if \
        fname.split(".")[0] in DIGIT_MODELS else SAMPLES
    _check(fname, model, count)


def test_tf_file_lists_are_current():
    """Every listed file exists: an entry cannot outlive its file."""
    for fname in list(REFUSALS) + list(NO_ORACLE) + list(DIFFERS):
        assert fname in TF_FILES, fname


@pytest.mark.parametrize("name", DIGIT_MODELS)
@pytest.mark.parametrize("io", ["float", "int8", "uint8"])
@pytest.mark.parametrize("per_channel", [True, False], ids=["per_channel", "per_tensor"])
def test_edgelite_int8_file_bit_exact_with_micro(name, io, per_channel):
    options = QuantizeOptions(mode=QuantMode.INT8, calib=str(MODELS / "digits_calib.npy"),
                              io_type=IOType(io), per_channel=per_channel)
    model = convert_detailed(MODELS / f"{name}.pb", ConvertOptions(quantize=options)).model
    assert micro_refusal(model) is None
    count = len(np.load(MODELS / "digits_test.npz")["y"]) if io == "float" else FEW_DIGITS_IO
    _check(name, model, min(count, FEW_DIGITS.get(name, count)))
