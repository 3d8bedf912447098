#!/usr/bin/env python
"""What each remedy for a classifier's last layers (MEAN, logits, SOFTMAX) buys: the table
of docs/last-layers.md (not a test; ~2 min a model on 2 idle cores).

    python bench/last_layers.py                       # the four trained models
    python bench/last_layers.py --only fashion_xception

Each variant is an int8 conversion (min/max ranges unless said) calibrated on the model's
calibration samples; per-tensor range variants take one tensor's range from another method
(or min/max stretched). Printed per variant: output SQNR (softmax), logits SQNR, MEAN and
logits op SQNR (as `edgelite compare` gives them), accuracy on the held-out samples, size,
and the share of held-out probabilities the int8 softmax reads as 0.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
RUNS = {  # model: (calibration data, held-out data)
    "fashion_xception": ("fashion_calib.npz", "fashion_test.npz"),
    "fashion_mobilenet_v2": ("fashion_calib.npz", "fashion_test.npz"),
    "mobilenet_v2_digits": ("digits_calib.npy", "digits_test.npz"),
    "keras_cnn": ("digits_calib.npy", "digits_test.npz"),
}
KEEP = {"keep SOFTMAX": ("SOFTMAX",), "keep FC": ("FULLY_CONNECTED",),
        "keep FC + SOFTMAX": ("FULLY_CONNECTED", "SOFTMAX"), "keep MEAN": ("MEAN",),
        "keep MEAN + FC + SOFTMAX": ("MEAN", "FULLY_CONNECTED", "SOFTMAX")}


def measure(name: str) -> None:
    from edgelite.converter import convert_detailed
    from edgelite.converter.accuracy import compare, evaluate
    from edgelite.converter.export import export_tflite
    from edgelite.converter.quantize import CalibConfig, QuantizeOptions, quantize
    from edgelite.converter.quantize.auto import _calibrate
    from edgelite.converter.quantize.calibrate import load_samples, usable_samples

    calib, test = (str(MODELS / f) for f in RUNS[name])
    pb = str(MODELS / f"{name}.pb")
    graph = convert_detailed(pb).graph
    samples = usable_samples(load_samples(calib, [t.name for t in graph.inputs]), None)
    ranges = {m: _calibrate(graph, samples, CalibConfig.parse(m), False)
              for m in ("minmax", "percentile:99.99", "mse")}
    ops = list(graph.ops)
    mean = next(o for o in ops if o.type == "MEAN").outputs[0].name
    logits = [o for o in ops if o.type == "FULLY_CONNECTED"][-1].outputs[0].name

    def build(keep=(), override=None, stretch=None, method=None) -> bytes:
        g = copy.deepcopy(graph)
        given = dict(ranges[method or "minmax"])
        for tensor, m in (override or {}).items():
            given[tensor] = ranges[m][tensor]
        for tensor, factor in (stretch or {}).items():
            lo, hi = ranges["minmax"][tensor]
            given[tensor] = (lo * factor, hi * factor)
        quantize(g, QuantizeOptions(calib=calib, keep_float=keep), samples=samples,
                 ranges_given=given)
        return export_tflite(g)

    variants = [("int8 min/max", {})] + [(k, dict(keep=v)) for k, v in KEEP.items()] + [
        ("MEAN range percentile 99.99", dict(override={mean: "percentile:99.99"})),
        ("MEAN range mse", dict(override={mean: "mse"})),
        ("logits range mse", dict(override={logits: "mse"})),
        ("logits range min/max x 1.25", dict(stretch={logits: 1.25})),
        ("mse, every tensor", dict(method="mse"))]
    print(f"## {name}")
    print("| variant | output dB | logits dB | MEAN op dB | logits op dB | accuracy | bytes "
          "| probs read 0 |")
    print("|---|---|---|---|---|---|---|---|")
    for label, kw in variants:
        model = build(**kw)
        report = compare(pb, model, test)
        rows = {t.name: t for t in report.tensors}
        accuracy = evaluate([model], test, test).models[0].accuracy
        probs = rows.get("probs")
        zero = (probs.advice.fraction if probs is not None and probs.advice is not None
                and probs.advice.fraction is not None else None)

        def op_db(tensor: str) -> str:
            t = rows.get(tensor)
            return "-" if t is None or t.op_sqnr_db is None else f"{t.op_sqnr_db:.2f}"

        print(f"| {label} | {report.output_sqnr_db:.2f} | {rows[logits].sqnr_db:.2f} | "
              f"{op_db(mean)} | {op_db(logits)} | {100 * accuracy:.2f} % | {len(model):,} | "
              f"{'-' if zero is None else f'{100 * zero:.1f} %'} |", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(RUNS))
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    for name in [args.only] if args.only else RUNS:
        measure(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
