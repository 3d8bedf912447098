#!/usr/bin/env python
"""Samples per second of the converter's tools -- `eval` and `compare` -- against LiteRT
running the same .tflite files over the same samples (a benchmark, not a test).

    python bench/tool_throughput.py                 # MobileNetV2-digits, 397 test digits
    python bench/tool_throughput.py --model keras_cnn --repeats 5

Models: models/<model>.pb converted by edgelite to float and to full int8 (calibrated on
models/digits_calib.npy); data: models/digits_test.npz. Each repeat runs, in turn:
  edgelite eval     converter.accuracy.evaluate on the int8 model (integer models run
                    batched on one interpreter: runner.ModelRunner.run_many, exact) and on
                    the float one (one sample per invoke: float batches are not
                    bit-identical)
  edgelite compare  converter.accuracy.compare float vs int8 (every tensor, batch 1; each
                    sample's tensors read once and folded into running sums in C)
  LiteRT            ai_edge_litert's Interpreter (default kernels, XNNPACK), one sample per
                    invoke over the same samples: the float and the int8 file
The medians of the interleaved repeats are printed as samples / s; machine noise hits all
alike, so read the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"


def build(model: str, tmp: Path) -> tuple[Path, Path]:
    from edgelite.converter import ConvertOptions, convert_detailed
    from edgelite.converter.quantize import QuantizeOptions, QuantMode
    pb = MODELS / f"{model}.pb"
    float_path, int8_path = tmp / "float.tflite", tmp / "int8.tflite"
    float_path.write_bytes(convert_detailed(pb).model)
    q = QuantizeOptions(mode=QuantMode.INT8, calib=str(MODELS / "digits_calib.npy"))
    int8_path.write_bytes(convert_detailed(pb, ConvertOptions(quantize=q)).model)
    return float_path, int8_path


def litert_rate(path: Path, x: np.ndarray) -> float:
    from ai_edge_litert.interpreter import Interpreter
    interp = Interpreter(model_path=str(path), num_threads=1)
    interp.allocate_tensors()
    d = interp.get_input_details()[0]
    out = interp.get_output_details()[0]["index"]
    scale, zero = d["quantization"]
    start = time.perf_counter()
    for i in range(len(x)):
        v = x[i:i + 1].reshape(d["shape"])
        if d["dtype"] != np.float32:
            v = np.clip(np.round(v / scale) + zero, -128, 127).astype(d["dtype"])
        interp.set_tensor(d["index"], v)
        interp.invoke()
        interp.get_tensor(out)
    return len(x) / (time.perf_counter() - start)


def timed(fn, n: int) -> float:
    start = time.perf_counter()
    fn()
    return n / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="mobilenet_v2_digits")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from edgelite.converter.accuracy import compare, evaluate
    test = MODELS / "digits_test.npz"
    with np.load(test) as d:
        x = d["x"].astype(np.float32)
    n = len(x)
    rates: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        float_path, int8_path = build(args.model, Path(tmp))
        runs = {
            "edgelite eval int8": lambda: evaluate([str(int8_path)], str(test), str(test)),
            "edgelite eval float": lambda: evaluate([str(float_path)], str(test), str(test)),
            "edgelite compare": lambda: compare(str(float_path), str(int8_path), str(test)),
        }
        for _ in range(args.repeats):
            for name, fn in runs.items():
                rates.setdefault(name, []).append(timed(fn, n))
            rates.setdefault("LiteRT int8", []).append(litert_rate(int8_path, x))
            rates.setdefault("LiteRT float", []).append(litert_rate(float_path, x))
    print(f"{args.model}, {n} samples, median of {args.repeats} interleaved repeats")
    print(f"{'':24s} {'samples/s':>10s}")
    for name, values in rates.items():
        print(f"{name:24s} {statistics.median(values):10.1f}")
    lite = {k: statistics.median(rates[f"LiteRT {k}"]) for k in ("int8", "float")}
    for k in ("int8", "float"):
        print(f"eval {k} / LiteRT {k}: "
              f"{statistics.median(rates[f'edgelite eval {k}']) / lite[k]:.2f}x")


if __name__ == "__main__":
    main()
