#!/usr/bin/env python
"""What 16x8 buys on the real trained models: `--calib-method auto` with `--fallback float`
(the default) and with `--fallback int16` (auto may also run the ops that gain most with
int16 activations), against TensorFlow's int8 file (not a test; ~2 min on 2 idle cores).

    python bench/fallback16.py
    python bench/fallback16.py --only fashion_xception

Calibrated on the 50 samples of models/fashion_calib.npz, scored on the 400 held-out test
images of models/fashion_test.npz: output SQNR against the float model and top-1 accuracy.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
NAMES = ("fashion_mobilenet_v2", "fashion_xception")


def _outputs(model: bytes, x: np.ndarray) -> np.ndarray:
    from edgelite.interpreter import Interpreter
    interp = Interpreter(model_content=model)
    interp.allocate_tensors()
    (inp,), (out,) = interp.get_input_details(), interp.get_output_details()
    ys = []
    for sample in x:
        interp.set_tensor(inp["index"], sample[None])
        interp.invoke()
        ys.append(interp.get_tensor(out["index"])[0].copy())
    return np.array(ys)


def measure(name: str, calib: Path) -> None:
    from edgelite.converter import ConvertOptions, convert_detailed
    from edgelite.converter.quantize import QuantizeOptions
    test = np.load(MODELS / "fashion_test.npz")
    x, labels = test["x"].astype(np.float32), test["y"]
    ref = _outputs(convert_detailed(MODELS / f"{name}.pb").model, x)

    def row(label: str, y: np.ndarray, seconds: float | None = None) -> None:
        db = 10 * np.log10(np.sum(ref ** 2) / np.sum((y - ref) ** 2))
        took = "" if seconds is None else f"  ({seconds:.0f} s)"
        print(f"  {label:34s} {db:6.2f} dB  top-1 {np.mean(y.argmax(1) == labels):.4f}{took}")

    print(name)
    row("TensorFlow int8", _outputs((MODELS / f"{name}.tf_int8.tflite").read_bytes(), x))
    for fallback in ("float", "int16"):
        start = time.perf_counter()
        options = QuantizeOptions(calib=str(calib), calib_method="auto", fallback=fallback)
        result = convert_detailed(MODELS / f"{name}.pb", ConvertOptions(quantize=options))
        wide = len(result.quantization.auto.chosen.wide)
        row(f"auto, --fallback {fallback} ({wide} op(s) 16x8)",
            _outputs(result.model, x), time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=NAMES, default=list(NAMES))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        calib = Path(tmp) / "calib.npy"
        np.save(calib, np.load(MODELS / "fashion_calib.npz")["x"].astype(np.float32))
        for name in args.only:
            measure(name, calib)
    return 0


if __name__ == "__main__":
    sys.exit(main())
