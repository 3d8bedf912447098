#!/usr/bin/env python
"""edgelite's numpy backend vs its native (C) kernels vs LiteRT's default kernels (XNNPACK),
in one run, on MobileNetV2, EfficientNet-B0, ResNet50 and InceptionV3 at 224 (float and full
int8), random weights, built here with TensorFlow's converter, at 1 and 2 threads (a
benchmark, not a test; see bench/RESULTS.md). ``--only ResNet`` runs one model.

    python bench/native_backend.py [--runs 10] [--cache /tmp/edgelite-bench-native] [--per-type]

Checks the two backends' int8 outputs are identical; ``--per-type`` also prints each int8
model's time per op type on both backends (Interpreter.profile).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np


MODELS = {  # label -> (keras.applications class, file stem, float model too)
    "MobileNetV2 224": ("MobileNetV2", "mobilenet_v2", True),
    "EfficientNet-B0 224": ("EfficientNetB0", "efficientnet_b0", True),
    "ResNet50 224": ("ResNet50", "resnet50", True),
    "InceptionV3 224": ("InceptionV3", "inception_v3", True),
}


def build(cache: Path) -> dict[tuple[str, str], Path]:
    """(model label, "float" / "int8") -> .tflite path, each built once (weights=None,
    fixed seed)."""
    cache.mkdir(parents=True, exist_ok=True)
    paths = {}
    for label, (cls, stem, with_float) in MODELS.items():
        kinds = ("float", "int8") if with_float else ("int8",)
        wanted = {k: cache / f"{stem}_{'f' if k == 'float' else 'i8'}.tflite" for k in kinds}
        if not all(p.exists() for p in wanted.values()):
            _convert(cls, wanted)
        paths.update({(label, k): p for k, p in wanted.items()})
    return paths


def _convert(cls: str, paths: dict[str, Path]) -> None:
    import tensorflow as tf

    tf.keras.utils.set_random_seed(0)
    model = getattr(tf.keras.applications, cls)(input_shape=(224, 224, 3), weights=None)
    if "float" in paths:
        paths["float"].write_bytes(tf.lite.TFLiteConverter.from_keras_model(model).convert())
    rng = np.random.default_rng(0)

    def data():
        for _ in range(8):
            yield [rng.uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32)]

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = data
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = conv.inference_output_type = tf.int8
    paths["int8"].write_bytes(conv.convert())


def timer(interp, x, runs: int):
    d = interp.get_input_details()[0]
    interp.set_tensor(d["index"], x)
    interp.invoke()
    interp.invoke()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        interp.invoke()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3, interp.get_tensor(interp.get_output_details()[0]["index"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/edgelite-bench-native"))
    ap.add_argument("--only", default="", help="run only models whose label contains this")
    ap.add_argument("--per-type", action="store_true", help="also time each int8 op type")
    args = ap.parse_args()
    from ai_edge_litert.interpreter import Interpreter as LiteRT
    from edgelite.interpreter import Interpreter

    paths = {key: p for key, p in build(args.cache).items() if args.only in key[0]}
    rng = np.random.default_rng(1)
    print("| model | threads | numpy ms | native ms | LiteRT default ms | numpy/native | native/LiteRT |")
    print("|---|---|---|---|---|---|---|")
    for (label, kind), path in paths.items():
        probe = Interpreter(model_path=str(path))
        d = probe.get_input_details()[0]
        x = rng.integers(-128, 128, d["shape"]).astype(np.int8) if kind == "int8" else \
            rng.uniform(-1, 1, d["shape"]).astype(np.float32)
        for threads in (1, 2):
            row = {}
            for name, make in (
                ("numpy", lambda: Interpreter(model_path=str(path), num_threads=threads, native=False)),
                ("native", lambda: Interpreter(model_path=str(path), num_threads=threads, native=True)),
                ("litert", lambda: LiteRT(model_path=str(path), num_threads=threads)),
            ):
                interp = make()
                interp.allocate_tensors()
                row[name] = timer(interp, x, args.runs)
            if kind == "int8":
                assert np.array_equal(row["numpy"][1], row["native"][1]), "backends differ"
            n, c, lt = (row[k][0] for k in ("numpy", "native", "litert"))
            print(f"| {label} {kind} | {threads} | {n:.1f} | {c:.1f} | {lt:.1f} | "
                  f"{n / c:.2f}x | {c / lt:.1f}x |", flush=True)
    for (label, kind), path in paths.items():
        if kind == "int8" and args.per_type:
            per_type_table(label, path, args.runs)


def per_type_table(label: str, path: Path, runs: int) -> None:
    """Time per op type of an int8 model, 1 thread, both backends (Interpreter.profile)."""
    from edgelite.interpreter import Interpreter

    def make(flag):
        interp = Interpreter(model_path=str(path), native=flag)
        interp.allocate_tensors()
        return interp
    profile_types(f"{label} int8", make, np.int8, runs, ("numpy", "native"))


def profile_types(label: str, make, dtype, runs: int, names: tuple) -> None:
    """Print the time per op type (1 thread) of ``make(False)`` against ``make(True)``
    (interpreters with their tensors allocated)."""
    per_type = {}
    for flag in (False, True):
        interp = make(flag)
        d = interp.get_input_details()[0]
        interp.set_tensor(d["index"], np.zeros(d["shape"], dtype))
        for t in interp.profile(runs=runs).top_types():
            per_type.setdefault(t.op_type, {})[flag] = (t.count, t.seconds * 1e3)
    print(f"\n| {label} op type (1 thread) | count | {names[0]} ms | {names[1]} ms | speedup |")
    print("|---|---|---|---|---|")
    for op, v in sorted(per_type.items(), key=lambda kv: -kv[1][False][1]):
        (count, a), (_, b) = v[False], v[True]
        print(f"| {op} | {count} | {a:.2f} | {b:.2f} | {a / b:.2f}x |")

if __name__ == "__main__":
    main()
