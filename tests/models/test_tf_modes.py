"""Every .tflite TensorFlow's converter writes from the sample graphs -- float, dynamic-range,
float16, int8 and 16x8 (models/tf_modes/, built by models/builders/zoo_tf_modes.py) -- runs
in edgelite's interpreter as it runs in LiteRT, with each of the two kernel sets:

* int8 and 16x8 files (integer arithmetic from the first QUANTIZE to the last DEQUANTIZE):
  every output equal to LiteRT's, bit for bit;
* float, dynamic-range and float16 files, and int8 / 16x8 files in which TF kept some ops
  float (its fallback, "float_fallback" in the manifest): within LiteRT's own spread between
  its reference and default kernels, or 1e-5 x max |LiteRT| where that spread is smaller.

The manifest also says which conversions TensorFlow refused; those stay refused (asserted,
so a TensorFlow upgrade that converts them shows up here)."""

import json

import numpy as np
import pytest

from edgelite.interpreter import Interpreter
from tests.conftest import MODELS, litert_module

FOLDER = MODELS / "tf_modes"
MANIFEST = json.loads((FOLDER / "manifest.json").read_text())
FILES = sorted(f for f, e in MANIFEST.items() if "tf_error" not in e and "not_kept" not in e)


def _path(fname: str):
    """The file: in models/tf_modes/, or the copy models/ already holds ("existing")."""
    other = MANIFEST[fname].get("existing")
    return MODELS / other if other else FOLDER / fname
KERNEL_SETS = ("reference", "default")
INTEGER_MODES = ("int8", "16x8")
SAMPLES = 3
REL_TOL = 1e-5
MAX_TOTAL_BYTES = 1_600_000

# edgelite refuses these until the kernel lands: {file: the op named in the refusal}. The test
# asserts the refusal, so an entry must go when its file runs.
PENDING: dict[str, str] = {}


def _mode(fname: str) -> str:
    return fname.rsplit(".", 2)[1]


def _feeds(fname: str) -> dict[str, list[np.ndarray]]:
    """Input tensor name (TF names a file's inputs after their nodes) -> SAMPLES batch-1
    arrays from the model's golden inputs."""
    golden = np.load(MODELS / f"{fname.split('.')[0]}.golden.npz")
    return {node: [golden[key][i:i + 1].astype(dtype) for i in range(SAMPLES)]
            for node, key, _, dtype in MANIFEST[fname]["inputs"]}


def _run(interp, feeds: dict[str, list[np.ndarray]]) -> list[list[np.ndarray]]:
    """Outputs per sample (``feeds``: input name -> one array per sample); variable
    tensors (a fused LSTM's state) are reset before each."""
    interp.allocate_tensors()
    runs = []
    for sample in range(SAMPLES):
        interp.reset_all_variables()
        for detail in interp.get_input_details():
            interp.set_tensor(detail["index"], feeds[detail["name"]][sample])
        interp.invoke()
        runs.append([interp.get_tensor(d["index"]).copy() for d in interp.get_output_details()])
    return runs


def _litert(data: bytes, kernels: str, feeds):
    mod = litert_module()
    resolver = {"reference": mod.OpResolverType.BUILTIN_REF,
                "default": mod.OpResolverType.AUTO}[kernels]
    return _run(mod.Interpreter(model_content=data, experimental_op_resolver_type=resolver),
                feeds)


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


@pytest.mark.parametrize("fname", FILES)
def test_runs_like_litert(fname):
    data = _path(fname).read_bytes()
    feeds = _feeds(fname)
    if fname in PENDING:
        with pytest.raises(Exception, match=PENDING[fname]):
            _run(Interpreter(model_content=data), feeds)
        return
    ref = {k: _litert(data, k, feeds) for k in KERNEL_SETS}
    exact = _mode(fname) in INTEGER_MODES and not MANIFEST[fname].get("float_fallback")
    for kernels in KERNEL_SETS:
        ours = _run(Interpreter(model_content=data, kernels=kernels), feeds)
        for sample, (got, want, other) in enumerate(zip(ours, ref[kernels], ref[
                "default" if kernels == "reference" else "reference"])):
            for y, r, o in zip(got, want, other):
                assert y.shape == r.shape and y.dtype == r.dtype
                if exact or r.dtype.kind != "f":
                    np.testing.assert_array_equal(y, r, err_msg=f"{kernels} sample {sample}")
                    continue
                spread = np.max(np.abs(r - o), initial=0.0)
                tol = max(spread, REL_TOL * np.max(np.abs(r), initial=0.0))
                err = np.max(np.abs(y - r), initial=0.0)
                assert err <= tol, f"{kernels} sample {sample}: {err} > {tol}"
