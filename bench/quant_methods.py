#!/usr/bin/env python
"""Quantization accuracy: TensorFlow's own int8 and TFLite-style min/max vs edgelite's
calibration methods and transforms, on held-out data.

    python bench/quant_methods.py            # the tables (markdown) on stdout (~5 min)
    python bench/quant_methods.py --write    # also rewrite the table block of docs/results.md
                                             # (between its markers)
    python bench/quant_methods.py --only digits   # one table: digits | fashion | random

Tables (one column per model and weight scheme):
  digits    tf1_cnn, keras_cnn and MobileNetV2 digits (models/mobilenet_v2_digits.pb:
            tf-keras' MobileNetV2, alpha 0.35, 64x64), trained on sklearn's 8x8 digits;
            calibrated on models/digits_calib.npy (100 training samples), evaluated on the 397
            held-out digits of models/digits_test.npz; per-channel and per-tensor weights.
  fashion   fashion_xception and fashion_mobilenet_v2 (models/build_fashion.py), trained on
            Fashion-MNIST; calibrated on the 50 samples of models/fashion_calib.npz (left out
            of training), evaluated on the 400 held-out test images of models/fashion_test.npz.
  random    random-weight image models, per-tensor weights, output at the logits, "accuracy" =
            top-1 agreement with the float model: small MobileNet
            (models/tf1_mobilenet_unfolded_bn.pb) and, when models/cache/mobilenet_v2.pb
            exists, MobileNetV2 224.  Calibrated on the `calib` photo crops of
            models/cache/<name>.quant_data.npz and evaluated on its `eval` crops (disjoint
            pixels; bench/mobilenet_data.py makes the files, else the golden inputs serve as
            both).
The first row is TensorFlow's own full-integer int8 (.tf_int8.tflite, TF's converter with the
same calibration samples as representative_dataset; per-channel weights, so only in the
per-channel columns), run in edgelite's interpreter (bit-exact with LiteRT: tests/models).
Each cell: output SQNR vs the float model in dB (converter/quantize/metrics.sqnr, all outputs of
all evaluation samples), in parentheses the SQNR at the logits (the final SOFTMAX's input) where
the model ends in one / accuracy against the labels; the best output SQNR per column in bold.
Read the logits figure first: an int8 softmax's probabilities carry the error of a few
uncertain samples (a logit error moves p = 0.5 a lot and p = 0.999 not at all), so on a few
hundred images their SQNR moves by dB where the logits' moves by tenths (fashion_xception:
probabilities 32.8 to 36.3 dB across the rows, logits 31.4 to 32.0 dB).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from edgelite.converter.quantize.metrics import sqnr
from edgelite.converter.runner import ModelRunner

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
MNV2_LOGITS = "mobilenetv2_1.00_224/predictions/BiasAdd"
TF_INT8 = "TensorFlow int8 (TF's converter)"
RESULTS = ROOT / "docs" / "results.md"
BLOCK_BEGIN = "<!-- quant-methods table: begin (python bench/quant_methods.py --write) -->"
BLOCK_END = "<!-- quant-methods table: end -->"

# (row label, QuantizeOptions fields); the first row is the baseline. The transforms are
# measured as they are (force_transforms: no held-out check), "auto" as a user runs it.
FORCED = dict(force_transforms=True)
CONFIGS: list[tuple[str, dict]] = [
    ("minmax (TFLite)", {}),
    ("moving-average", dict(calib_method="moving-average")),
    ("percentile 99.99", dict(calib_method="percentile:99.99")),
    ("percentile 99.9", dict(calib_method="percentile:99.9")),
    ("mse", dict(calib_method="mse")),
    ("entropy", dict(calib_method="entropy")),
    ("minmax + equalize", dict(equalize=True, **FORCED)),
    ("minmax + bias correction", dict(bias_correction=True, **FORCED)),
    ("minmax + adaround", dict(adaround=True, **FORCED)),
    ("minmax + equalize + bias correction", dict(equalize=True, bias_correction=True,
                                                 **FORCED)),
    ("mse + equalize + bias correction", dict(calib_method="mse", equalize=True,
                                              bias_correction=True, **FORCED)),
    ("auto (--calib-method auto)", dict(calib_method="auto")),
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
    tf_int8: Path | None = None   # TensorFlow's own int8 .tflite of the graph, if committed
    reference: list = field(default_factory=list)
    reference_logits: list | None = None

    def convert(self, quantize: QuantizeOptions | None = None) -> bytes:
        return convert_detailed(self.graph, ConvertOptions(outputs=self.outputs,
                                                           quantize=quantize)).model


@dataclass
class Cell:
    sqnr: float
    accuracy: float
    seconds: float
    logits: float | None = None   # SQNR at the final softmax's input, where there is one
    hits: np.ndarray | None = field(default=None, repr=False)  # top-1 right, per sample

    def __str__(self) -> str:
        at_logits = "" if self.logits is None else f" ({self.logits:.2f})"
        return f"{self.sqnr:.2f}{at_logits} dB / {100 * self.accuracy:.1f} %"


def _scheme(per_channel: bool) -> str:
    return "per-channel" if per_channel else "per-tensor"


# --------------------------------------------------------------------------- cases

DIGIT_MODELS = {"tf1_cnn": "tf1_cnn", "keras_cnn": "keras_cnn",
                "mobilenet_v2_digits": "MobileNetV2 digits"}
FASHION_MODELS = {"fashion_xception": "Xception fashion",
                  "fashion_mobilenet_v2": "MobileNetV2 fashion"}


def _tf_int8(name: str, per_channel: bool) -> Path | None:
    path = MODELS / f"{name}.tf_int8.tflite"
    return path if per_channel and path.exists() else None


def _trained_case(name: str, label: str, calib: str, test: str, per_channel: bool) -> Case:
    """A model trained on real data: calibrated on `calib`, evaluated on `test`'s x / y."""
    data = np.load(MODELS / test)
    return Case(f"{label} ({_scheme(per_channel)})", MODELS / f"{name}.pb", MODELS / calib,
                data["x"], data["y"], per_channel, tf_int8=_tf_int8(name, per_channel))


def digits_case(name: str, per_channel: bool) -> Case:
    return _trained_case(name, DIGIT_MODELS[name], "digits_calib.npy", "digits_test.npz",
                         per_channel)


def digits_cases() -> list[Case]:
    return [digits_case(name, pc) for pc in (True, False) for name in DIGIT_MODELS]


def fashion_case(name: str, per_channel: bool) -> Case:
    """A Fashion-MNIST model: uint8 pixels fed as they are (the graph rescales)."""
    return _trained_case(name, FASHION_MODELS[name], "fashion_calib.npz", "fashion_test.npz",
                         per_channel)


def fashion_cases() -> list[Case]:
    return [fashion_case(name, pc) for pc in (True, False) for name in FASHION_MODELS]


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


def random_cases(tmp: Path) -> list[Case]:
    cases = (image_case("tf1_mobilenet_unfolded_bn", "small MobileNet, random (per-tensor)",
                        "fc/logits", tmp),
             image_case("mobilenet_v2", "MobileNetV2 224, random (per-tensor)", MNV2_LOGITS,
                        tmp))
    return [c for c in cases if c is not None]


# --------------------------------------------------------------------------- measuring


def _samples(x: np.ndarray) -> list[dict]:
    return [{"input": xi} for xi in x]


def _with_logits(model: bytes, x: np.ndarray) -> tuple[list, list | None]:
    """(outputs per sample, the final SOFTMAX's input per sample -- the logits -- or None
    when the model has no softmax)."""
    runner = ModelRunner(model, keep_all=True)
    softmax = [op for op in runner.interp._get_ops_details() if op["op_name"] == "SOFTMAX"]
    outputs, logits = [], []
    for sample in _samples(x):
        outputs.append(runner.run(sample))
        if softmax:
            logits.append([runner.interp.get_dequantized_tensor(softmax[-1]["inputs"][0])])
    return outputs, logits or None


def score(case: Case, model: bytes, t0: float) -> Cell:
    """`model`'s outputs on the case's samples against the float model's (computed once)."""
    if not case.reference:
        case.reference, case.reference_logits = _with_logits(case.convert(), case.x)
    outputs, logits = _with_logits(model, case.x)
    top = np.array([o[0].reshape(-1).argmax() for o in outputs])
    truth = case.y if case.y is not None else np.array(
        [r[0].reshape(-1).argmax() for r in case.reference])
    at_logits = (sqnr(case.reference_logits, logits)
                 if logits is not None and case.reference_logits is not None else None)
    return Cell(sqnr(case.reference, outputs), float((top == truth).mean()), time.time() - t0,
                at_logits, top == truth)


def measure(case: Case, fields: dict) -> Cell:
    t0 = time.time()
    q = QuantizeOptions(mode=QuantMode.INT8, calib=str(case.calib),
                        per_channel=case.per_channel, **fields)
    return score(case, case.convert(q), t0)


def measure_tf_int8(case: Case) -> Cell:
    """TensorFlow's own int8 file, against the same float reference."""
    return score(case, case.tf_int8.read_bytes(), time.time())


def run(cases: list[Case], configs=CONFIGS, log=None,
        tf_int8: bool = True) -> dict[tuple[str, str], Cell]:
    """{(case label, row label): Cell}; the TF_INT8 row for cases with a TF int8 file."""
    results = {}
    for case in cases:
        rows = [(TF_INT8, None)] if tf_int8 and case.tf_int8 else []
        for label, fields in rows + list(configs):
            cell = measure_tf_int8(case) if fields is None else measure(case, fields)
            results[case.label, label] = cell
            if log:
                log(f"{case.label:32s} {label:38s} {cell}  ({cell.seconds:.1f} s)")
    return results


# --------------------------------------------------------------------------- markdown


def table(cases: list[Case], results, configs=CONFIGS) -> str:
    """Markdown: one row per method (TF's int8 first, where measured), one column per model;
    the best SQNR per column bold, "-" where a row does not apply."""
    labels = [lbl for lbl, _ in configs]
    if any((c.label, TF_INT8) in results for c in cases):
        labels.insert(0, TF_INT8)
    best = {c.label: max(results[c.label, lbl].sqnr for lbl in labels
                         if (c.label, lbl) in results) for c in cases}
    lines = ["| method | " + " | ".join(c.label for c in cases) + " |",
             "|---|" + "---|" * len(cases)]
    for label in labels:
        cells = []
        for c in cases:
            cell = results.get((c.label, label))
            text = "-" if cell is None else str(cell)
            cells.append(f"**{text}**" if cell and cell.sqnr == best[c.label] else text)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


TABLES = {
    "digits": ("Trained on sklearn's digits (397 held-out digits, calibration on 100 "
               "training digits)", lambda tmp: digits_cases()),
    "fashion": ("Trained on Fashion-MNIST (400 held-out test images, calibration on 50 "
                "training images)", lambda tmp: fashion_cases()),
    "random": ("Random weights (SQNR at the logits; accuracy = top-1 agreement with the float "
               "model)", random_cases),
}


def float_accuracies(cases: list[Case]) -> str:
    """One line: each labelled column's float accuracy on its evaluation data."""
    parts = []
    for c in cases:
        if c.y is not None and c.reference:
            top = np.array([r[0].reshape(-1).argmax() for r in c.reference])
            parts.append(f"{c.label.split(' (')[0]} {100 * np.mean(top == c.y):.2f} %")
    return "Float model accuracy: " + ", ".join(dict.fromkeys(parts)) + "." if parts else ""


def report(only=None, log=None) -> str:
    """All tables, each with its heading and the float accuracies, as markdown."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for key, (heading, make) in TABLES.items():
            if only and key not in only:
                continue
            cases = make(Path(tmp))
            if not cases:
                continue
            results = run(cases, log=log)
            out += [f"#### {heading}", "", table(cases, results), ""]
            acc = float_accuracies(cases)
            if acc:
                out += [acc, ""]
    return "\n".join(out).rstrip() + "\n"


def write(markdown: str, seconds: float) -> None:
    """The block of docs/results.md between its markers (the rest of the file is prose)."""
    header = ("Generated by `python bench/quant_methods.py --write` "
              f"({seconds / 60:.1f} min on this machine); do not edit by hand.\n\n")
    text = RESULTS.read_text()
    pattern = re.compile(re.escape(BLOCK_BEGIN) + ".*?" + re.escape(BLOCK_END), re.S)
    if not pattern.search(text):
        sys.exit(f"docs/results.md has no {BLOCK_BEGIN!s} ... {BLOCK_END!s} block")
    block = f"{BLOCK_BEGIN}\n{header}{markdown}{BLOCK_END}"
    RESULTS.write_text(pattern.sub(lambda _: block, text))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[1])
    ap.add_argument("--only", action="append", choices=sorted(TABLES),
                    help="only this table (repeatable)")
    ap.add_argument("--write", action="store_true",
                    help="rewrite the table block of docs/results.md")
    args = ap.parse_args(argv)
    t0 = time.time()
    markdown = report(args.only, log=lambda line: print(line, file=sys.stderr, flush=True))
    seconds = time.time() - t0
    print(markdown, end="")
    print(f"({seconds:.0f} s)", file=sys.stderr)
    if args.write:
        if args.only:
            sys.exit("--write regenerates every table: leave out --only")
        write(markdown, seconds)


if __name__ == "__main__":
    main()
