#!/usr/bin/env python
"""Bias correction, layer by layer: does it ever make a layer's own error worse?

    python bench/bias_correction.py                  # the sample models (~2 min)
    python bench/bias_correction.py --cache DIR      # + DIR/resnet50.pb, DIR/mobilenet_v2.pb
    python bench/bias_correction.py --all            # + equalize / mse with bias correction

For each model and setting, `edgelite compare` (converter/accuracy/compare.py) runs the float
and the int8 model on the calibration data and on held-out data:
  out       output SQNR vs the float model (dB, all outputs of all samples)
  logits    SQNR of the last CONV_2D / FULLY_CONNECTED output (before a softmax, whose
            int8 output step 1/256 lets a few uncertain samples dominate `out`)
  top-1     top-1 agreement with the float model
  worst op  the lowest op SQNR of a CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED (the layers
            bias correction changes): the error that layer adds by itself
  lower     how many of those layers have a lower op SQNR than without bias correction
            (by more than 0.01 dB), and the largest drop
Data: the digits models calibrate on models/digits_calib.npy (100) and are held out on the
397 images of models/digits_test.npz; the image models calibrate on their golden inputs and
are held out on the same images mirrored left-right (no other images ship with them). The
cache models (random weights) are measured at their logits, per-channel int8 weights.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.accuracy.compare import CompareReport, compare
from edgelite.converter.quantize import QuantizeOptions

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
LAYERS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")

SETTINGS = {"minmax": {}, "minmax + bias correction": dict(bias_correction=True)}
MORE = {"equalize": dict(equalize=True),
        "equalize + bias correction": dict(equalize=True, bias_correction=True),
        "mse": dict(calib_method="mse"),
        "mse + equalize + bias correction": dict(calib_method="mse", equalize=True,
                                                 bias_correction=True)}


@dataclass
class Case:
    label: str
    graph: Path
    calib: np.ndarray
    held_out: np.ndarray
    per_channel: bool = True
    outputs: list[str] | None = None


@dataclass
class Row:
    setting: str
    calib: CompareReport
    held_out: CompareReport


def digits_cases() -> list[Case]:
    calib, test = np.load(MODELS / "digits_calib.npy"), np.load(MODELS / "digits_test.npz")["x"]
    return [Case(f"{name} ({'per-channel' if pc else 'per-tensor'})", MODELS / f"{name}.pb",
                 calib, test, pc)
            for name in ("tf1_cnn", "keras_cnn", "qat_cnn", "mobilenet_v2_digits")
            for pc in (True, False)]


def image_case(graph: Path, label: str, outputs=None, per_channel=True) -> Case | None:
    golden = graph.with_name(graph.stem + ".golden.npz")
    if not graph.exists() or not golden.exists():
        return None
    x = np.load(golden)["input"].astype(np.float32)
    return Case(label, graph, x, x[:, :, ::-1].copy(), per_channel, outputs)


def cases(cache: Path | None) -> list[Case]:
    out = digits_cases()
    for name in ("efficientnet_like", "tf1_mobilenet_unfolded_bn"):
        out += [image_case(MODELS / f"{name}.pb", f"{name} ({kind})", per_channel=pc)
                for kind, pc in (("per-channel", True), ("per-tensor", False))]
    if cache is not None:
        out.append(image_case(cache / "resnet50.pb", "ResNet50 random (logits)",
                              ["resnet50/predictions/BiasAdd"]))
        out.append(image_case(cache / "mobilenet_v2.pb", "MobileNetV2 random (logits)",
                              ["mobilenetv2_1.00_224/predictions/BiasAdd"]))
    return [c for c in out if c is not None]


def measure(case: Case, settings: dict, tmp: Path) -> list[Row]:
    calib = tmp / "calib.npy"
    np.save(calib, case.calib)
    reference = convert_detailed(case.graph, ConvertOptions(outputs=case.outputs)).model
    rows = []
    for setting, fields in settings.items():
        q = QuantizeOptions(calib=str(calib), per_channel=case.per_channel, **fields)
        model = convert_detailed(case.graph, ConvertOptions(outputs=case.outputs,
                                                            quantize=q)).model
        rows.append(Row(setting, compare(reference, model, case.calib),
                        compare(reference, model, case.held_out)))
    return rows


def layer_sqnr(report: CompareReport) -> dict[str, float]:
    return {t.name: t.op_sqnr_db for t in report.tensors
            if t.op in LAYERS and t.op_sqnr_db is not None}


def lower(base: CompareReport, other: CompareReport) -> tuple[int, float]:
    """Layers whose op SQNR dropped by more than 0.01 dB, and the largest drop."""
    a, b = layer_sqnr(base), layer_sqnr(other)
    drops = [a[n] - b[n] for n in a if n in b and math.isfinite(a[n]) and b[n] < a[n] - 0.01]
    return len(drops), max(drops, default=0.0)


def logits(report: CompareReport) -> float:
    last = [t for t in report.tensors if t.op in ("CONV_2D", "FULLY_CONNECTED")]
    return max(last, key=lambda t: t.order).sqnr_db if last else math.nan


def table(case: Case, rows: list[Row]) -> str:
    lines = [f"\n{case.label}: {len(case.calib)} calibration / {len(case.held_out)} held-out",
             "| setting | out (cal) | logits (cal) | top-1 (cal) | worst op (cal) | lower (cal) "
             "| out (held-out) | logits (held-out) | top-1 (held-out) | worst op (held-out) |",
             "|---" * 10 + "|"]
    for row in rows:
        cells = []
        for report in (row.calib, row.held_out):
            worst = min(layer_sqnr(report).values(), default=math.nan)
            top1 = report.top1_agreement
            cells.append([f"{report.output_sqnr_db:.2f}", f"{logits(report):.2f}",
                          "-" if top1 is None else f"{100 * top1:.1f} %", f"{worst:.2f}"])
        n, drop = lower(rows[0].calib, row.calib)
        lines.append(f"| {row.setting} | {' | '.join(cells[0])} | {n} ({drop:.2f} dB) | "
                     f"{' | '.join(cells[1])} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", type=Path, help="folder with resnet50.pb / mobilenet_v2.pb "
                    "and their .golden.npz (models/cache)")
    ap.add_argument("--all", action="store_true", help="also equalization and mse")
    ap.add_argument("--only", help="models whose label contains this text")
    args = ap.parse_args(argv)
    settings = {**SETTINGS, **(MORE if args.all else {})}
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases(args.cache):
            if args.only and args.only not in case.label:
                continue
            print(table(case, measure(case, settings, Path(tmp))), flush=True)


if __name__ == "__main__":
    sys.exit(main())
