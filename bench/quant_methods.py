#!/usr/bin/env python
"""Quantization accuracy: TFLite-style min/max vs edgelite's calibration methods and transforms.

    python bench/quant_methods.py              # markdown table on stdout (~2-4 min)
    python bench/quant_methods.py --digits     # only the trained digit models (~1 min)

Models and data:
  tf1_cnn, keras_cnn   calibrated on models/digits_calib.npy (100 samples), evaluated on the
                       397 held-out digits of models/digits_test.npz; int8 with per-channel
                       (default) and per-tensor weights.
  MobileNetV2 digits   models/mobilenet_v2_digits.pb: tf-keras' MobileNetV2 (alpha 0.35,
                       64x64), trained on the digits; same data, per-tensor and per-channel.
  small MobileNet     models/tf1_mobilenet_unfolded_bn.pb (conv, 2 x depthwise + pointwise,
                       RELU6, random weights), per-tensor int8 weights.
  MobileNetV2          (when models/cache/mobilenet_v2.pb exists) per-tensor int8 weights.
  Both are calibrated on the `calib` photo crops of models/cache/<name>.quant_data.npz and
  evaluated on its `eval` crops (disjoint pixels; bench/mobilenet_data.py makes the files,
  else the golden inputs serve as both). Their weights are random (MobileNetV2: tf-keras
  application, weights=None), so the softmax probabilities carry little (MobileNetV2's are
  all far below int8 softmax's fixed output step 1/256): the output is taken at the logits,
  and "accuracy" is top-1 agreement with the float model.
Each cell: output SQNR vs the float model in dB (converter/quantize/metrics.sqnr, all
outputs of all evaluation samples) / accuracy.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from edgelite.converter.quantize.metrics import sqnr
from edgelite.converter.runner import run_all

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
MNV2_LOGITS = "mobilenetv2_1.00_224/predictions/BiasAdd"

# (row label, QuantizeOptions fields); the first row is the baseline
CONFIGS: list[tuple[str, dict]] = [
    ("minmax (TFLite)", {}),
    ("moving-average", dict(calib_method="moving-average")),
    ("percentile 99.99", dict(calib_method="percentile:99.99")),
    ("percentile 99.9", dict(calib_method="percentile:99.9")),
    ("mse", dict(calib_method="mse")),
    ("entropy", dict(calib_method="entropy")),
    ("minmax + equalize", dict(equalize=True)),
    ("minmax + bias correction", dict(bias_correction=True)),
    ("minmax + equalize + bias correction", dict(equalize=True, bias_correction=True)),
    ("mse + equalize + bias correction", dict(calib_method="mse", equalize=True,
                                              bias_correction=True)),
]


@dataclass
class Case:
    label: str
    graph: Path
    calib: Path
    x: np.ndarray
    y: np.ndarray | None          # labels; None: top-1 agreement with the float model
    per_channel: bool = True
    outputs: list[str] | None = None
    reference: list = field(default_factory=list)

    def convert(self, quantize: QuantizeOptions | None = None) -> bytes:
        return convert_detailed(self.graph, ConvertOptions(outputs=self.outputs,
                                                           quantize=quantize)).model


@dataclass
class Cell:
    sqnr: float
    accuracy: float
    seconds: float

    def __str__(self) -> str:
        return f"{self.sqnr:.2f} dB / {100 * self.accuracy:.1f} %"


DIGIT_MODELS = {"tf1_cnn": "tf1_cnn", "keras_cnn": "keras_cnn",
                "mobilenet_v2_digits": "MobileNetV2 digits"}


def digits_case(name: str, per_channel: bool) -> Case:
    test = np.load(MODELS / "digits_test.npz")
    label = f"{DIGIT_MODELS[name]} ({'per-channel' if per_channel else 'per-tensor'})"
    return Case(label, MODELS / f"{name}.pb", MODELS / "digits_calib.npy", test["x"],
                test["y"], per_channel)


def digits_cases() -> list[Case]:
    return [digits_case(name, pc) for pc in (True, False) for name in DIGIT_MODELS]


def image_case(name: str, label: str, logits: str, tmp: Path) -> Case | None:
    """A random-weight image model, per-tensor weights, output at its logits."""
    pb = MODELS / "cache" / f"{name}.pb"
    pb = pb if pb.exists() else MODELS / f"{name}.pb"
    if not pb.exists():
        return None
    data = MODELS / "cache" / f"{name}.quant_data.npz"
    if data.exists():
        d = np.load(data)
        calib, x = d["calib"], d["eval"]
    else:
        calib = x = np.load(pb.with_name(f"{name}.golden.npz"))["input"]
    np.save(tmp / f"{name}_calib.npy", calib)
    return Case(label, pb, tmp / f"{name}_calib.npy", x, None, False, [logits])


def _samples(x: np.ndarray) -> list[dict]:
    return [{"input": xi} for xi in x]


def measure(case: Case, fields: dict) -> Cell:
    t0 = time.time()
    if not case.reference:
        case.reference = run_all(case.convert(), _samples(case.x))
    q = QuantizeOptions(mode=QuantMode.INT8, calib=str(case.calib),
                        per_channel=case.per_channel, **fields)
    outputs = run_all(case.convert(q), _samples(case.x))
    top = np.array([o[0].reshape(-1).argmax() for o in outputs])
    truth = case.y if case.y is not None else np.array(
        [r[0].reshape(-1).argmax() for r in case.reference])
    return Cell(sqnr(case.reference, outputs), float((top == truth).mean()), time.time() - t0)


def run(cases: list[Case], configs=CONFIGS, log=None) -> dict[tuple[str, str], Cell]:
    results = {}
    for case in cases:
        for label, fields in configs:
            results[case.label, label] = cell = measure(case, fields)
            if log:
                log(f"{case.label:28s} {label:38s} {cell}  ({cell.seconds:.1f} s)")
    return results


def table(cases: list[Case], results, configs=CONFIGS) -> str:
    """Markdown: one row per method, one column per model; the best SQNR per column bold."""
    best = {c.label: max(results[c.label, lbl].sqnr for lbl, _ in configs) for c in cases}
    lines = ["| method | " + " | ".join(c.label for c in cases) + " |",
             "|---|" + "---|" * len(cases)]
    for label, _ in configs:
        cells = []
        for c in cases:
            cell = results[c.label, label]
            text = str(cell)
            cells.append(f"**{text}**" if cell.sqnr == best[c.label] else text)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--digits", action="store_true", help="only the models trained on the digits")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        cases = digits_cases()
        if not args.digits:
            cases += [c for c in (
                image_case("tf1_mobilenet_unfolded_bn", "small MobileNet, random (per-tensor)",
                           "fc/logits", Path(tmp)),
                image_case("mobilenet_v2", "MobileNetV2 224, random (per-tensor)", MNV2_LOGITS,
                           Path(tmp)),
            ) if c is not None]
        results = run(cases, log=lambda line: print(line, file=sys.stderr, flush=True))
    print(table(cases, results))


if __name__ == "__main__":
    main()
