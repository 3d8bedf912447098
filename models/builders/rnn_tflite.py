"""TensorFlow's own .tflite files of the issue-13 models, LiteRT runs of them, and edgelite's
view of them (models/build_rnn.py; dev-only, needs TensorFlow).

Suffixes (models/<name>.<suffix>.tflite):
  tf_float     TF's converter on the live Keras model (from_keras_model) or on the concrete
               function (from_concrete_functions), float
  tf_int8      the same, full int8 (TFLITE_BUILTINS_INT8, 16 seeded random calibration
               samples), float input / output
  tf_int8_io   the same with int8 input and output (inference_input/output_type = int8)
  tf_frozen    TF's v1 converter (from_frozen_graph) on the committed default-lowered .pb, float

Every int8 conversion runs in a subprocess (builders/rnn_worker.py): TF 2.21's calibrator
segfaults on While-loop models, and a segfault must not end the build.  The failure (signal or
exception) goes to the manifest instead of a file.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import MODELS_DIR, atomic_write, interpreter, np, tf
from .rnn import OUTPUT, Frozen

N_CALIB = 16  # representative samples for TF's int8 calibration
FLOAT_REL_TOL = 1e-4  # LiteRT on TF's float .tflite vs TF, relative to max |reference|
EDGELITE_PYTHON = MODELS_DIR.parent / ".venv" / "bin" / "python"  # the worktree's venv


# --------------------------------------------------------------------------- TF's converter


def representative(name: str, inputs: dict):
    """A representative_dataset: N_CALIB seeded samples (not the golden ones), one at a time."""
    from .rnn import random_inputs

    calib = random_inputs(name, inputs, N_CALIB, offset=1)

    def gen():
        for i in range(N_CALIB):
            yield [calib[k][i:i + 1] for k in inputs]

    return gen


def converter_for(name: str, mode: str, keras_model=None, function=None, inputs=None):
    """A configured tf.lite.TFLiteConverter (mode: float / int8 / int8_io)."""
    if keras_model is not None:
        conv = tf.lite.TFLiteConverter.from_keras_model(keras_model)
    else:
        conv = tf.lite.TFLiteConverter.from_concrete_functions([function])
    if mode != "float":
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = representative(name, inputs)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        if mode == "int8_io":
            conv.inference_input_type = tf.int8
            conv.inference_output_type = tf.int8
    return conv


def _scrub(text: str) -> str:
    """A failure line without this machine's paths (site-packages/... stays)."""
    return re.sub(r"/\S*/site-packages/", "", text)[:400]


def convert_in_subprocess(name: str, mode: str) -> tuple[bytes | None, str]:
    """(file bytes, "") or (None, why TF's converter failed)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "model.tflite")
        proc = subprocess.run(
            [sys.executable, "-X", "faulthandler", "-m", "builders.rnn_worker", name, mode,
             str(out)], cwd=MODELS_DIR, capture_output=True, text=True)
        if proc.returncode == 0:
            return out.read_bytes(), ""
    if proc.returncode < 0:
        sig = signal.Signals(-proc.returncode).name
        frames = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip().startswith("File")]
        where = frames[0] if frames else "no Python frame"
        return None, _scrub(f"{sig} in TF's converter; innermost Python frame: {where}")
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return None, _scrub(f"exit {proc.returncode}: " + (errors[-1] if errors else lines[-1]))


def convert_frozen(pb: Path, frozen: Frozen) -> tuple[bytes | None, str]:
    shapes = {k: list(shape) for k, (shape, _) in frozen.inputs.items()}
    return _attempt(lambda: tf.compat.v1.lite.TFLiteConverter.from_frozen_graph(
        str(pb), list(shapes), list(frozen.outputs), shapes))


def _attempt(make_converter) -> tuple[bytes | None, str]:
    """(bytes, "") or (None, the first error line of TF's converter)."""
    try:
        return make_converter().convert(), ""
    except Exception as exc:  # noqa: BLE001 - TF's converter raises many kinds; recorded
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        errors = [ln for ln in lines if "error" in ln.lower()]
        return None, _scrub(f"{type(exc).__name__}: " + (errors[0] if errors else lines[0]))


def tf_conversions(frozen: Frozen) -> dict:
    """{suffix: (bytes or None, failure)} for every conversion frozen.tflite asks for."""
    out = {}
    for mode in frozen.tflite:
        if mode == "frozen":
            out["tf_frozen"] = convert_frozen(MODELS_DIR / f"{frozen.name}.pb", frozen)
        elif mode == "float":
            out["tf_float"] = _attempt(
                lambda: converter_for(frozen.name, mode, frozen.keras, frozen.function))
        else:
            out[f"tf_{mode}"] = convert_in_subprocess(frozen.name, mode)
    return out


def keep(entry: dict, fname: str, data: bytes | None, why: str) -> bool:
    """Write models/<fname>, or record in entry["tf_failures"] why TF could not make it."""
    if data is None:
        entry["tf_failures"][fname] = why
        print(f"  {fname}: TF FAILED: {why}")
        return False
    atomic_write(MODELS_DIR / fname, data)
    return True


# --------------------------------------------------------------------------- LiteRT


def _quantize(x: np.ndarray, detail: dict) -> np.ndarray:
    scale, zp = detail["quantization"]
    if detail["dtype"] == np.float32 or detail["dtype"] == np.int32 or scale == 0:
        return x.astype(detail["dtype"])
    info = np.iinfo(detail["dtype"])
    return np.clip(np.round(x / scale) + zp, info.min, info.max).astype(detail["dtype"])


def _dequantize(y: np.ndarray, detail: dict) -> np.ndarray:
    scale, zp = detail["quantization"]
    if detail["dtype"] == np.float32:
        return y.astype(np.float32)
    return ((y.astype(np.float64) - zp) * scale).astype(np.float32)


def litert_outputs(model: bytes, golden: dict) -> dict:
    """LiteRT (builtin kernels) on each golden sample alone, in order, in one interpreter,
    with reset_all_variables() before each invoke: TF's fused UNIDIRECTIONAL_SEQUENCE_LSTM
    keeps its h / c state in variable tensors, so even a stateless Keras LSTM's file carries
    the state of one invoke into the next.

    Returns the raw outputs (the file's dtype), the inputs as fed (quantized for int8 I/O),
    the dequantized outputs, and whether invoking sample 0 twice without a reset gives the
    same output twice."""
    interp = interpreter(model, "builtin")
    ins = interp.get_input_details()
    (out,) = interp.get_output_details()
    assert len(ins) == len(golden), (len(ins), list(golden))
    feeds = [(d, _quantize(x, d)) for d, x in zip(ins, golden.values())]  # one input each
    raw = []
    n = len(next(iter(golden.values())))
    for i in range(n):
        interp.reset_all_variables()
        for d, x in feeds:
            interp.set_tensor(d["index"], x[i:i + 1])
        interp.invoke()
        raw.append(interp.get_tensor(out["index"])[0].copy())
    interp.invoke()  # sample n - 1 again, no reset
    again = interp.get_tensor(out["index"])[0]
    raw = np.stack(raw)
    return {"raw": raw, "fed": feeds[0][1], "float": _dequantize(raw, out),
            "repeat_same": bool(np.array_equal(again, raw[-1])),
            "io": {"inputs": [_desc(d) for d in ins], "output": _desc(out)}}


def _desc(d: dict) -> dict:
    return {"name": d["name"], "shape": d["shape"].tolist(),
            "shape_signature": d["shape_signature"].tolist(), "dtype": d["dtype"].__name__}


def rel_err(y: np.ndarray, ref: np.ndarray) -> float:
    return float(np.max(np.abs(y.astype(np.float64) - ref)) / np.max(np.abs(ref)))


def sqnr_db(y: np.ndarray, ref: np.ndarray) -> float:
    ref = ref.astype(np.float64)
    noise = float(np.sum((y.astype(np.float64) - ref) ** 2))
    return float("inf") if noise == 0 else 10 * float(np.log10(np.sum(ref**2) / noise))


# --------------------------------------------------------------------------- edgelite


EDGELITE_OPS = """
import json, sys
from edgelite.interpreter.loader.model import load_model
res = {}
for path in sys.argv[1:]:
    m = load_model(open(path, "rb").read())
    res[path] = [[op.name for op in sg.operators] for sg in m.subgraphs]
print(json.dumps(res))
"""


def edgelite_ops(paths: list[Path]) -> dict:
    """{file name: [op names per subgraph]}, read by edgelite's own loader (worktree venv)."""
    proc = subprocess.run([str(EDGELITE_PYTHON), "-c", EDGELITE_OPS, *map(str, paths)],
                          capture_output=True, text=True, check=True)
    return {Path(k).name: v for k, v in json.loads(proc.stdout).items()}


__all__ = ["OUTPUT", "FLOAT_REL_TOL", "tf_conversions", "keep", "converter_for", "litert_outputs",
           "rel_err", "sqnr_db", "edgelite_ops", "representative"]
