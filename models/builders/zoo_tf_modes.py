"""TensorFlow's own conversions of the sample GraphDefs in every mode its converter offers
(dev-only; needs TensorFlow; ~6 min on 2 cores).

    python models/builders/zoo_tf_modes.py               # from the repository root
    python models/builders/zoo_tf_modes.py keras_cnn     # some models only

For every frozen graph in models/ (the TF2 ``.functional.pb`` freeze where a model has two,
not mobilenet_v2_digits, whose float file alone is 1.6 MB), TF's v1 ``from_frozen_graph``
converter at batch 1 writes:

  float    no optimization
  dr       Optimize.DEFAULT, no dataset: dynamic-range (hybrid) int8 weights, float activations
  fp16     Optimize.DEFAULT + supported_types [float16]: float16 weights, DEQUANTIZE at load
  int8     Optimize.DEFAULT + representative dataset + TFLITE_BUILTINS_INT8 (float I/O);
           where TF refuses an op in int8, again with TFLITE_BUILTINS added (float fallback)
  16x8     Optimize.DEFAULT + representative dataset +
           EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8 (float I/O); where TF
           refuses an op in 16x8, again with TFLITE_BUILTINS added (TF's float fallback for
           it; "float_fallback" in the manifest)

into models/tf_modes/<model>.<mode>.tflite, and models/tf_modes/manifest.json: per file its
inputs (node name, golden-file key, batch-1 shape, dtype), size and op list, or the one-line
reason TF's converter gave when it refused; a file over MAX_BYTES is listed, not kept, and
where models/ already holds TF's file of that model and mode ("existing": keras_cnn.tf.tflite,
...) the entry points to it instead (each conversion runs in a subprocess: TF's
calibrator segfaults on some While loops).  Calibration data are the inputs of the model's
golden file (models/<model>.golden.npz); tests/models/test_tf_modes.py runs every file in
edgelite against LiteRT.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

MODELS = Path(__file__).resolve().parent.parent
OUT = MODELS / "tf_modes"
MODES = ("float", "dr", "fp16", "int8", "16x8")
SKIP = {"mobilenet_v2_digits"}  # 1.9 MB graph: its files would dwarf the rest of models/
# the Fashion-MNIST networks' float16 files (94 / 127 KB) add no kernel the small models' lack
SKIP_MODES = {("fashion_mobilenet_v2", "fp16"), ("fashion_xception", "fp16")}
MAX_BYTES = 120_000  # a file larger than this is not kept (listed with its size instead)
# TF files of the same model and mode that models/ already holds (built by the model's own
# script): the manifest points to them instead of keeping a second copy.
EXISTING = {"float": (".tf.tflite", ".tf_float.tflite"), "int8": (".tf_int8.tflite",)}
CALIB_SAMPLES = 8


def model_names() -> list[str]:
    names = set()
    for pb in sorted(MODELS.glob("*.pb")):
        stem = pb.name[: -len(".pb")]
        base = stem[: -len(".functional")] if stem.endswith(".functional") else stem
        names.add(base)
    return sorted(n for n in names if n not in SKIP)


def graph_path(name: str) -> Path:
    functional = MODELS / f"{name}.functional.pb"
    return functional if functional.exists() else MODELS / f"{name}.pb"


# --------------------------------------------------------------------------- in the child


def golden_key(golden, node: str) -> str:
    for key in (f"inputs/{node}", node, "input"):
        if key in golden.files:
            return key
    raise KeyError(f"no golden input for {node}")


def io_spec(tf, pb: Path, golden):
    """(inputs [(node, key, shape, dtype)], outputs [node]) of a frozen graph: its
    Placeholders (not TF's unused_control_flow_input stand-ins) and its sink nodes."""
    gd = tf.compat.v1.GraphDef()
    gd.ParseFromString(pb.read_bytes())
    consumed = {i.split(":")[0].lstrip("^") for n in gd.node for i in n.input}
    inputs, outputs = [], []
    for n in gd.node:
        if n.op == "Placeholder" and not n.name.startswith("unused_control_flow_input"):
            key = golden_key(golden, n.name)
            x = golden[key]
            inputs.append((n.name, key, [1] + list(x.shape[1:]), str(x.dtype)))
        elif n.name not in consumed and n.op not in ("NoOp", "Const", "Placeholder"):
            outputs.append(n.name)
    return inputs, outputs


def convert(name: str, mode: str) -> None:
    sys.path.insert(0, str(MODELS))
    from builders.common import np, tf  # deterministic TF set-up

    golden = np.load(MODELS / f"{name}.golden.npz")
    inputs, outputs = io_spec(tf, graph_path(name), golden)
    conv = tf.compat.v1.lite.TFLiteConverter.from_frozen_graph(
        str(graph_path(name)),
        input_arrays=[n for n, *_ in inputs],
        output_arrays=outputs,
        input_shapes={n: shape for n, _, shape, _ in inputs},
    )
    if mode != "float":
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
    if mode == "fp16":
        conv.target_spec.supported_types = [tf.float16]
    if mode in ("int8", "16x8"):
        ops = tf.lite.OpsSet
        conv.target_spec.supported_ops = [
            ops.TFLITE_BUILTINS_INT8 if mode == "int8"
            else ops.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]

        def representative_dataset():
            for i in range(CALIB_SAMPLES):
                yield [golden[key][i % len(golden[key])][None] for _, key, _, _ in inputs]

        conv.representative_dataset = representative_dataset
    fallback = False
    try:
        data = conv.convert()
    except Exception:  # noqa: BLE001
        if mode not in ("int8", "16x8"):
            raise
        # an op without an integer kernel: TF's documented fallback keeps it float
        conv.target_spec.supported_ops = [*conv.target_spec.supported_ops,
                                          tf.lite.OpsSet.TFLITE_BUILTINS]
        data, fallback = conv.convert(), True
    (OUT / f"{name}.{mode}.tflite").write_bytes(data)
    print(json.dumps({"inputs": inputs, "outputs": outputs, "float_fallback": fallback}))


# --------------------------------------------------------------------------- the driver


def op_counts(data: bytes) -> dict[str, int]:
    from collections import Counter

    from ai_edge_litert.interpreter import Interpreter

    interp = Interpreter(model_content=data)
    return dict(sorted(Counter(d["op_name"] for d in interp._get_ops_details()).items()))


def error_line(proc) -> str:
    """The one line saying why a conversion failed (the exception, or the signal)."""
    if proc.returncode < 0:
        return f"TF's converter crashed (signal {-proc.returncode})"
    lines = [ln.strip() for ln in proc.stderr.splitlines() if "cuInit" not in ln]
    mlir = [ln[ln.index("error:"):] for ln in lines if "error:" in ln]  # the converter's reason
    python = [ln for ln in lines if "Error" in ln]
    return ((mlir or python or ["failed"])[0])[:300]


def existing_file(name: str, mode: str) -> str | None:
    for suffix in EXISTING.get(mode, ()):
        if (MODELS / f"{name}{suffix}").exists():
            return f"{name}{suffix}"
    return None


def use_existing(manifest: dict) -> None:
    """Entries whose model and mode models/ already holds a TF file of: point to it."""
    for fname, entry in manifest.items():
        name, mode = fname.rsplit(".", 2)[:2]
        other = existing_file(name, mode)
        if other and "tf_error" not in entry:
            (OUT / fname).unlink(missing_ok=True)
            entry.pop("not_kept", None)
            entry["existing"] = other


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "--one":
        convert(argv[1], argv[2])
        return 0
    if argv == ["--use-existing"]:  # only the last step, on the manifest as it is
        manifest_path = OUT / "manifest.json"
        manifest = json.loads(manifest_path.read_text())
        use_existing(manifest)
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        return 0
    OUT.mkdir(exist_ok=True)
    manifest_path = OUT / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    for name in argv or model_names():
        for mode in MODES:
            if (name, mode) in SKIP_MODES:
                continue
            fname = f"{name}.{mode}.tflite"
            proc = subprocess.run([sys.executable, __file__, "--one", name, mode],
                                  capture_output=True, text=True, timeout=900)
            path = OUT / fname
            if proc.returncode != 0:
                path.unlink(missing_ok=True)
                manifest[fname] = {"tf_error": error_line(proc)}
            else:
                spec = json.loads(proc.stdout.strip().splitlines()[-1])
                data = path.read_bytes()
                entry = {**spec, "bytes": len(data)}
                try:
                    entry["ops"] = op_counts(data)
                except Exception as exc:  # noqa: BLE001 - recorded, not fatal
                    entry["litert_error"] = str(exc).splitlines()[0][:300]
                if len(data) > MAX_BYTES:
                    path.unlink()
                    entry["not_kept"] = f"{len(data)} bytes > {MAX_BYTES}"
                manifest[fname] = entry
            print(fname, "->", {k: v for k, v in manifest[fname].items() if k != "ops"},
                  flush=True)
            manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    use_existing(manifest)
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
