"""Every .tflite TensorFlow's converter writes from the sample graphs -- float, dynamic-range,
float16, int8 and 16x8 (models/tf_modes/, built by models/builders/zoo_tf_modes.py) -- runs
in edgelite's interpreter as it runs in LiteRT, with each of the two kernel sets:

* int8 and 16x8 files (integer arithmetic from the first QUANTIZE to the last DEQUANTIZE):
  every output equal to LiteRT's, bit for bit;
* float, dynamic-range and float16 files, and int8 / 16x8 files in which TF kept some ops
  float (its fallback: an op with a float32 output other than DEQUANTIZE): within LiteRT's own spread between
  its reference and default kernels, or 1e-5 x max |LiteRT| where that spread is smaller.

Where one of LiteRT's resolvers lacks an op version TF wrote (its reference resolver has no
ELU; neither has int8 DEPTH_TO_SPACE v2), that kernel set has no oracle: edgelite's outputs
must have LiteRT's other set's shapes and types and be finite; a file no LiteRT runs is checked against TensorFlow's float outputs (the golden
file) within its quantization error, or edgelite refuses it in one line. GAPS lists what does
not run yet, REFUSALS what edgelite refuses where LiteRT computes garbage."""

import json

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from edgelite.errors import EdgeliteError
from edgelite.interpreter.loader.model import load_model
from tests.conftest import MODELS
from tests.support import KERNEL_SETS, litert_interpreter

FOLDER = MODELS / "tf_modes"
MANIFEST = json.loads((FOLDER / "manifest.json").read_text())
FILES = sorted(f for f, e in MANIFEST.items() if "tf_error" not in e and "not_kept" not in e)
INTEGER_MODES = ("int8", "16x8")
SAMPLES = 3
REL_TOL = 1e-5
GOLDEN_TOL = 0.05  # x max |TF|: an 8-bit model without any LiteRT to compare with
MAX_TOTAL_BYTES = 1_700_000

# Files edgelite does not run as LiteRT does yet: each fails (strict xfail, so the entry must
# go when its file runs) -- {file: why}.
GAPS: dict[str, str] = {}
# What edgelite refuses on purpose, in one line, where LiteRT computes garbage: its reference
# SUM reads int16 data as uint8 bytes (kernels/reduce.py). {(file, kernel set): message}
REFUSALS = {(f"{name}.16x8.tflite", "reference"): "reads the int16 data as uint8"
            for name in ("rnn_cond", "rnn_tf1_cond")}


def _path(fname: str):
    """The file: in models/tf_modes/, or the copy models/ already holds ("existing")."""
    other = MANIFEST[fname].get("existing")
    return MODELS / other if other else FOLDER / fname


def _mode(fname: str) -> str:
    return fname.rsplit(".", 2)[1]


def _golden(fname: str):
    return np.load(MODELS / f"{fname.split('.')[0]}.golden.npz")


def _feeds(fname: str) -> dict[str, list[np.ndarray]]:
    """Graph input node -> SAMPLES batch-1 arrays from the model's golden inputs."""
    golden = _golden(fname)
    return {node: [golden[key][i:i + 1].astype(dtype) for i in range(SAMPLES)]
            for node, key, _, dtype in MANIFEST[fname]["inputs"]}


def _node(tensor_name: str) -> str:
    """The graph input a file's input tensor stands for: TF names it after the node
    ("x"), or after the signature ("serving_default_x:0")."""
    return tensor_name.removeprefix("serving_default_").split(":")[0]


def _run(interp, feeds: dict[str, list[np.ndarray]]) -> list[list[np.ndarray]]:
    """Outputs per sample; variable tensors (a fused LSTM's state) reset before each."""
    interp.allocate_tensors()
    runs = []
    for sample in range(SAMPLES):
        interp.reset_all_variables()
        for detail in interp.get_input_details():
            interp.set_tensor(detail["index"], feeds[_node(detail["name"])][sample])
        interp.invoke()
        runs.append([interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()])
    return runs


def _float_compute(data: bytes) -> bool:
    """Whether an op of the file computes in float32 (TF's float fallback in an integer
    file): its outputs are then compared by the float rule."""
    model = load_model(data)
    return any(op.name not in ("QUANTIZE", "DEQUANTIZE")
               and any(sg.tensors[t].dtype == np.float32 for t in op.outputs if t >= 0)
               for sg in model.subgraphs for op in sg.operators)


def _litert(data: bytes, kernels: str, feeds):
    """LiteRT's outputs with one kernel set, or None when that resolver lacks an op."""
    try:
        interp = litert_interpreter(data, kernels)
    except (ValueError, RuntimeError) as exc:  # an op version it lacks; a failed prepare
        assert "Didn't find op for builtin opcode" in str(exc) or "failed to prepare" in str(exc)
        return None
    return _run(interp, feeds)


def _assert_close(y, r, tol_from, what: str) -> None:
    tol = max(tol_from, REL_TOL * np.max(np.abs(r), initial=0.0))
    err = np.max(np.abs(y.astype(np.float64) - r), initial=0.0)
    assert err <= tol, f"{what}: {err} > {tol}"


def test_manifest_covers_every_mode_of_every_model():
    names = {f.split(".")[0] for f in MANIFEST}
    assert {"keras_cnn", "tf1_cnn", "text_classifier", "rnn_lstm", "op_zoo_math"} <= names
    for name in names:  # (the Fashion-MNIST networks' float16 files are left out: size)
        modes = ("float", "dr", "int8", "16x8") if name.startswith("fashion_") else \
            ("float", "dr", "fp16", "int8", "16x8")
        assert {f"{name}.{m}.tflite" for m in modes} <= set(MANIFEST)
    kept = [FOLDER / f for f in FILES if "existing" not in MANIFEST[f]]
    assert all(p.exists() for p in kept)
    assert sum(p.stat().st_size for p in kept) < MAX_TOTAL_BYTES


@pytest.mark.parametrize("fname", [
    pytest.param(f, marks=pytest.mark.xfail(strict=True, reason=GAPS[f])) if f in GAPS else f
    for f in FILES])
def test_runs_like_litert(fname):
    data = _path(fname).read_bytes()
    feeds = _feeds(fname)
    ref = {k: _litert(data, k, feeds) for k in KERNEL_SETS}
    exact = _mode(fname) in INTEGER_MODES and not _float_compute(data)
    for kernels in KERNEL_SETS:
        if (fname, kernels) in REFUSALS:
            with pytest.raises(EdgeliteError, match=REFUSALS[fname, kernels]):
                _run(Interpreter(model_content=data, kernels=kernels), feeds)
            continue
        if ref["reference"] is None and ref["default"] is None:
            try:  # no LiteRT runs it: edgelite refuses it in one line, or matches TF
                ours = _run(Interpreter(model_content=data, kernels=kernels), feeds)
            except EdgeliteError as exc:
                assert "\n" not in str(exc).strip() or "unsupported item" in str(exc)
                continue
        else:
            ours = _run(Interpreter(model_content=data, kernels=kernels), feeds)
        other = "default" if kernels == "reference" else "reference"
        want, spread_from = ref[kernels], ref[other]
        if want is None and spread_from is None:  # no LiteRT loads it: TF's float outputs
            golden = _golden(fname)
            outputs = [k for k in golden.files if k == "output" or k.startswith("outputs/")]
            for sample, got in enumerate(ours):
                for y, key in zip(got, outputs):
                    r = golden[key][sample:sample + 1]
                    _assert_close(y, r, GOLDEN_TOL * np.max(np.abs(r)), f"{kernels} vs TF")
            continue
        if want is None:  # this LiteRT resolver lacks an op: no oracle for this kernel set
            for got, r_all in zip(ours, spread_from):
                for y, r in zip(got, r_all):
                    assert y.shape == r.shape and y.dtype == r.dtype and np.isfinite(y).all()
            continue
        for sample, (got, r_all) in enumerate(zip(ours, want)):
            for j, (y, r) in enumerate(zip(got, r_all)):
                assert y.shape == r.shape and y.dtype == r.dtype
                if exact or r.dtype.kind != "f":
                    np.testing.assert_array_equal(y, r, err_msg=f"{kernels} sample {sample}")
                    continue
                spread = 0.0 if spread_from is None else \
                    np.max(np.abs(r - spread_from[sample][j]), initial=0.0)
                _assert_close(y, r, spread, f"{kernels} sample {sample} output {j}")
