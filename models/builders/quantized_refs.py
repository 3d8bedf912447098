"""TensorFlow's quantized references for the digit CNNs (models/build_quantized.py): int8
(float and int8 io) and legacy uint8 conversions, their LiteRT accuracy per kernel set and I/O
quantization, and main(), which also builds the QAT graph (builders/qat.py)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from .common import (
    INPUT_NAME,
    MODELS_DIR,
    OUTPUT_NAME,
    RESOLVERS,
    as_float32,
    atomic_write,
    interpreter,
    load_data,
    np,
    npy_bytes,
    op_types,
    print_written,
    run_frozen_probs,
    tf,
    v1_converter,
    write_graph,
    write_json,
    write_npz,
)
from .digits import INPUT_SHAPE, N_GOLDEN
from .qat import QAT_NAME, build_qat_cnn, qat_ranges, tf_int8_qat

N_CALIB = 100
MODELS = ("tf1_cnn", "keras_cnn")
# Legacy uint8 (TOCO scheme): real = (q - mean) / std, so (0, 255) means input range [0, 1].
UINT8_INPUT_STATS = (0.0, 255.0)
# Range given to every activation tensor without one (the graphs have no FakeQuant nodes).
UINT8_DEFAULT_RANGES = (0.0, 6.0)
# Accuracy floors (the float models score 0.9345 / 0.9622); catches a broken conversion.
MIN_ACC = 0.90


# --------------------------------------------------------------------------- TF converters


def _v1_converter(pb_path: Path, input_shape: list = INPUT_SHAPE):
    return v1_converter(pb_path, {INPUT_NAME: input_shape}, [OUTPUT_NAME])


def tf_int8(pb_path: Path, calib: np.ndarray, io_type, input_shape: list = INPUT_SHAPE) -> bytes:
    """TF full-integer int8 (post-training, calibrated on `calib`, batch 1, in order) of a
    graph with one input `input` (batch-1 shape `input_shape`) and one output `probs`."""
    conv = _v1_converter(pb_path, input_shape)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = io_type
    conv.inference_output_type = io_type

    def representative_dataset():
        for i in range(len(calib)):
            yield [calib[i : i + 1]]

    conv.representative_dataset = representative_dataset
    return conv.convert()


def tf_uint8(pb_path: Path) -> bytes:
    """TOCO-style legacy uint8 via the TF1 API (no calibration: fixed default ranges)."""
    conv = _v1_converter(pb_path)
    conv.inference_type = tf.uint8
    conv.quantized_input_stats = {INPUT_NAME: UINT8_INPUT_STATS}
    conv.default_ranges_stats = UINT8_DEFAULT_RANGES
    return conv.convert()


# --------------------------------------------------------------------------- LiteRT


def _quantize_input(x: np.ndarray, detail) -> np.ndarray:
    if detail["dtype"] == np.float32:
        return x.astype(np.float32)
    scale, zp = detail["quantization"]
    info = np.iinfo(detail["dtype"])
    r = x.astype(np.float32) / np.float32(scale)
    q = np.sign(r) * np.floor(np.abs(r) + np.float32(0.5)) + zp  # std::round, as TFLite's QUANTIZE
    return np.clip(q, info.min, info.max).astype(detail["dtype"])


def litert_outputs(model: bytes, x: np.ndarray, resolver: str) -> np.ndarray:
    """Raw output tensors (quantized for integer io) of all images, batch 1."""
    interp = interpreter(model, resolver)
    (inp,) = interp.get_input_details()
    (out,) = interp.get_output_details()
    outs = []
    for i in range(len(x)):
        interp.set_tensor(inp["index"], _quantize_input(x[i : i + 1], inp))
        interp.invoke()
        outs.append(interp.get_tensor(out["index"])[0].copy())
    return np.stack(outs)


def _qparams(t) -> dict:
    qp = t["quantization_parameters"]
    scales, zps = qp["scales"], qp["zero_points"]
    d = {"name": t["name"], "dtype": np.dtype(t["dtype"]).name, "shape": t["shape"].tolist()}
    if len(scales) == 1:
        d["scale"] = as_float32(scales[0])
        d["zero_point"] = int(zps[0])
    elif len(scales) > 1:
        d["per_channel_axis"] = int(qp["quantized_dimension"])
        d["n_scales"] = len(scales)
    return d


def describe(model: bytes) -> dict:
    """Op list and I/O quantization of a .tflite (builtin kernels, no delegate).

    For float input/output the quantized boundary tensors are reported too: the output of the
    leading QUANTIZE and the input of the trailing DEQUANTIZE.
    """
    interp = interpreter(model, "builtin")
    ops = interp._get_ops_details()
    tensors = {t["index"]: t for t in interp.get_tensor_details()}
    (inp,) = interp.get_input_details()
    (out,) = interp.get_output_details()
    names = [op["op_name"] for op in ops]
    desc = {
        "ops": names,
        "op_counts": dict(sorted(Counter(names).items())),
        "input": _qparams(inp),
        "output": _qparams(out),
    }
    if names[0] == "QUANTIZE":
        desc["quantize_output"] = _qparams(tensors[ops[0]["outputs"][0]])
    if names[-1] == "DEQUANTIZE":
        desc["dequantize_input"] = _qparams(tensors[ops[-1]["inputs"][0]])
    return desc


def evaluate(model: bytes, x: np.ndarray, y: np.ndarray) -> dict:
    """Test accuracy per LiteRT kernel set, and how far the kernel sets disagree."""
    raw = {r: litert_outputs(model, x, r) for r in RESOLVERS}
    acc = {r: round(float(np.mean(np.argmax(out, axis=1) == y)), 6) for r, out in raw.items()}
    # [max abs difference of the raw outputs (quantized units for integer io), images differing]
    differ = {}
    for a, b in (("builtin", "ref"), ("default", "ref"), ("default", "builtin")):
        diff = np.abs(raw[a].astype(np.float64) - raw[b].astype(np.float64))
        n = int(np.sum(diff.reshape(len(x), -1).max(1) > 0))
        differ[f"{a}_vs_{b}"] = [float(f"{diff.max():.6g}"), n]
    return {"accuracy": acc["ref"], "accuracy_by_kernels": acc, "kernel_sets_differ": differ}


# --------------------------------------------------------------------------- main


def main() -> int:
    x_train, y_train, x_test, y_test = load_data()
    calib = np.ascontiguousarray(x_train[:N_CALIB], dtype=np.float32)
    assert calib.shape == (N_CALIB, 8, 8, 1)
    atomic_write(MODELS_DIR / "digits_calib.npy", npy_bytes(calib))
    # the committed test set must be the one load_data() gives
    with np.load(MODELS_DIR / "digits_test.npz") as z:
        assert np.array_equal(z["x"], x_test) and np.array_equal(z["y"], y_test)
    print(f"calibration: first {N_CALIB} training images; test: {len(y_test)} images")

    # Top level: metadata, then one object per model with one entry per TF .tflite, keyed
    # by the file-name suffix ("tf_int8", "tf_int8_io", "tf_uint8").
    reference = {
        "tensorflow": tf.__version__,
        "calibration": {
            "file": "digits_calib.npy",
            "samples": N_CALIB,
            "note": "first 100 training images, fed in order at batch 1 as representative_dataset",
        },
        "uint8": {
            "quantized_input_stats": {INPUT_NAME: list(UINT8_INPUT_STATS)},
            "default_ranges_stats": list(UINT8_DEFAULT_RANGES),
        },
        "n_test": int(len(y_test)),
        "accuracy": "test accuracy with BUILTIN_REF kernels; accuracy_by_kernels: all kernel sets",
        "kernel_sets": {k: f"OpResolverType.{v}" for k, v in RESOLVERS.items()},
        "kernel_sets_differ": "[max abs difference of the raw outputs (quantized units for "
        "integer io), number of test images whose outputs differ]",
    }
    table = []

    def add_file(entry: dict, name: str, suffix: str, data: bytes) -> None:
        fname = f"{name}.{suffix}.tflite"
        atomic_write(MODELS_DIR / fname, data)
        desc = describe(data)
        ev = evaluate(data, x_test, y_test)
        acc = ev["accuracy_by_kernels"]
        print(f"  {fname}: {len(data)} bytes, ops {desc['ops']}")
        print(f"    acc default/builtin/ref: {acc['default']:.4f} / {acc['builtin']:.4f} / "
              f"{acc['ref']:.4f}; kernel sets differ: {ev['kernel_sets_differ']}")
        assert min(acc.values()) > MIN_ACC, (fname, ev)
        entry[suffix] = {"file": fname, "size": len(data), **ev, **desc}
        table.append((fname, len(data), acc))

    for name in MODELS:
        pb = MODELS_DIR / f"{name}.pb"
        print(f"\n[{name}]")
        with (MODELS_DIR / f"{name}.tf_ops.json").open() as f:
            float_acc = json.load(f)["tflite_float_test_accuracy"]
        entry = reference[name] = {"float_tflite_test_accuracy": float_acc}
        add_file(entry, name, "tf_int8", tf_int8(pb, calib, tf.float32))
        add_file(entry, name, "tf_int8_io", tf_int8(pb, calib, tf.int8))
        add_file(entry, name, "tf_uint8", tf_uint8(pb))

    print(f"\n[{QAT_NAME}] training (tf.compat.v1 graph mode, FakeQuant in the graph)")
    gd = build_qat_cnn(x_train, y_train)
    ops = op_types(gd)
    print(f"  op types: {ops}")
    for op in ("FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxArgs",
               "FakeQuantWithMinMaxVarsPerChannel"):
        assert op in ops, f"{QAT_NAME}: missing {op}"
    write_graph(gd, f"{QAT_NAME}.pb", as_text=False)
    probs = run_frozen_probs(gd, x_test)
    qat_float_acc = float(np.mean(np.argmax(probs, axis=1) == y_test))
    print(f"  TF frozen-graph test accuracy: {qat_float_acc:.4f}")
    assert qat_float_acc > MIN_ACC
    write_npz(
        MODELS_DIR / f"{QAT_NAME}.golden.npz",
        input=x_test[:N_GOLDEN].astype(np.float32),
        output=probs[:N_GOLDEN].astype(np.float32),
        labels=y_test[:N_GOLDEN].astype(np.int64),
    )
    entry = reference[QAT_NAME] = {
        "tf_frozen_graph_test_accuracy": round(qat_float_acc, 6),
        "graphdef_op_counts": ops,
    }
    qat_tfl = tf_int8_qat(MODELS_DIR / f"{QAT_NAME}.pb")
    add_file(entry, QAT_NAME, "tf_int8", qat_tfl)
    fname = entry["tf_int8"]["file"]
    ranges = qat_ranges(gd, qat_tfl)
    ranges = {
        "model": f"{QAT_NAME}.pb",
        "tflite": fname,
        "nudging": "qmin = 1 if narrow_range else 0, qmax = 2^num_bits - 1; "
        "scale = (max - min) / (qmax - qmin); zp = clamp(round(qmin - min / scale), qmin, qmax); "
        "nudged_min = (qmin - zp) * scale; nudged_max = (qmax - zp) * scale (float32, as TF)",
        **ranges,
    }
    for e in ranges["activation_fake_quants"]:
        t = e["tflite_tensor"] or {}
        print(f"  {e['name']} ({e['op']}): [{e['min']:.6g}, {e['max']:.6g}] -> nudged "
              f"[{e['nudged_min']:.6g}, {e['nudged_max']:.6g}], scale {e['nudged_scale']:.6g} "
              f"zp {e['zero_point_int8']}; tflite {t.get('scale')} / {t.get('zero_point')}")
        # issue 4's acceptance: TF's tensor ranges equal the (nudged) fake-quant ranges
        assert t.get("zero_point") == e["zero_point_int8"], e
        assert e["tflite_scale_rel_diff"] < 1e-6, e
    write_json(MODELS_DIR / f"{QAT_NAME}.ranges.json", ranges, compact=True)
    write_json(MODELS_DIR / "quantized_reference.json", reference, compact=True)

    print("\nsummary (LiteRT test accuracy on %d images)" % len(y_test))
    print(f"  {'file':32s} {'bytes':>6s}  default builtin  ref")
    for fname, size, a in table:
        print(f"  {fname:32s} {size:6d}  {a['default']:.4f}  {a['builtin']:.4f}  {a['ref']:.4f}")
    print_written()
    return 0
