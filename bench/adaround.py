#!/usr/bin/env python
"""AdaRound (--adaround): its cost and its effect on held-out data.

    python bench/adaround.py                    # MobileNetV2 digits + Xception fashion (~1 min)
    python bench/adaround.py --all              # + tf1_cnn, keras_cnn, MobileNetV2 fashion
    python bench/adaround.py --per-tensor       # per-tensor weights instead of per-channel

Each model is converted to int8 (min/max calibration, --force-transforms: the held-out
check of converter/quantize/auto.py is left out, so the transform itself is measured) without
and with AdaRound, on the calibration data of bench/quant_methods.py (models/digits_calib.npy,
100 samples; models/fashion_calib.npz, 50), and scored on the held-out data
(models/digits_test.npz: 397 digits; models/fashion_test.npz: 400 images):
  convert   seconds for the whole conversion (calibration, rewrite, AdaRound)
  adaround  of which AdaRound itself (apply_adaround: the staged run and every layer's loop)
  out       output SQNR vs the float model, dB (all held-out samples)
  top-1     accuracy against the labels
  layers    AdaRound's summary: layer output MSE on the calibration rows, nearest -> learned
The machine is shared: times are noisy; the SQNRs are exact.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import quant_methods  # noqa: E402  (bench/quant_methods.py: the cases and their data)

from edgelite.converter import ConvertOptions, convert_detailed  # noqa: E402
from edgelite.converter.quantize import QuantizeOptions, adaround  # noqa: E402
from edgelite.converter.quantize.metrics import sqnr  # noqa: E402
from edgelite.converter.runner import run_all  # noqa: E402

MAIN = [("digits", "mobilenet_v2_digits"), ("fashion", "fashion_xception")]
MORE = [("digits", "tf1_cnn"), ("digits", "keras_cnn"), ("fashion", "fashion_mobilenet_v2")]


class Timed:
    """Wraps quantize's apply_adaround to add up the seconds it takes."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.inner = adaround.apply_adaround

    def __call__(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return self.inner(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - t0


def row(case, use_adaround: bool) -> str:
    quantize_package = importlib.import_module("edgelite.converter.quantize")
    timed = Timed()
    quantize_package.apply_adaround = timed
    try:
        t0 = time.perf_counter()
        result = convert_detailed(case.graph, ConvertOptions(quantize=QuantizeOptions(
            calib=str(case.calib), per_channel=case.per_channel, adaround=use_adaround,
            force_transforms=True)))
        seconds = time.perf_counter() - t0
    finally:
        quantize_package.apply_adaround = timed.inner
    samples = [{"input": x} for x in case.x]
    if not case.reference:
        case.reference = run_all(case.convert(), samples)
    outputs = run_all(result.model, samples)
    top1 = np.mean([o[0].reshape(-1).argmax() for o in outputs] == case.y)
    ada = result.quantization.adaround
    summary = ada.summary() if ada is not None else "-"
    return (f"{case.label:34s} {'adaround' if use_adaround else 'nearest':9s} "
            f"{seconds:7.1f} {timed.seconds:8.1f} {sqnr(case.reference, outputs):8.2f} "
            f"{100 * top1:6.2f}  {summary}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[1])
    ap.add_argument("--all", action="store_true", help="also the smaller models")
    ap.add_argument("--per-tensor", action="store_true", help="per-tensor int8 weights")
    args = ap.parse_args(argv)
    make = {"digits": quant_methods.digits_case, "fashion": quant_methods.fashion_case}
    print(f"{'model':34s} {'rounding':9s} {'convert':>7s} {'adaround':>8s} {'out dB':>8s} "
          f"{'top-1':>6s}  layers")
    for kind, name in MAIN + (MORE if args.all else []):
        case = make[kind](name, not args.per_tensor)
        for use in (False, True):
            print(row(case, use), flush=True)


if __name__ == "__main__":
    main()
