#!/usr/bin/env python
"""Does `--calib-method auto` beat plain min/max on data it never saw?

    python bench/auto_heldout.py                       # every case (~1 h on 2 busy cores)
    python bench/auto_heldout.py --only tf1_cnn --draws 3
    python bench/auto_heldout.py --write               # also bench/AUTO_HELDOUT.md's
                                                       # first table (its "## Before" part,
                                                       # the rule before issue 25, is kept)

auto chooses by cross-validation on the calibration samples alone; with a few dozen of them
its held-out folds are small, and a candidate can win there by luck (issue 25: a face
classifier calibrated on 32 faces got min/max + AdaRound, +3.9 dB on its folds, then lost
0.29 dB and 3 of 64 top-1 on 64 new faces). Here each trained model is calibrated on
DRAWS random draws of CALIB samples from its calibration pool and evaluated on EVAL test
samples, disjoint from every calibration sample:

  digits   tf1_cnn, keras_cnn (and MobileNetV2 digits with --slow): pool
           models/digits_calib.npy (100 training digits), evaluation models/digits_test.npz
  fashion  fashion_xception, fashion_mobilenet_v2: pool models/fashion_calib.npz (50 images
           left out of training), evaluation models/fashion_test.npz

Per draw, min/max and auto are calibrated on the same samples and scored against the float
model on the evaluation samples: SQNR at the logits (the final softmax's input) and at the
outputs, top-1 against the labels. Per model the table gives the means over the draws, the
mean and the worst (lowest) difference auto - min/max, the top-1 samples auto wins and loses
against min/max over all draws, and auto's choices. The cases reuse bench/quant_methods.py's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from quant_methods import Case, digits_case, fashion_case, score

ROOT = Path(__file__).resolve().parent.parent
OUTPUT_FILE = ROOT / "bench" / "AUTO_HELDOUT.md"
CALIB, EVAL, DRAWS, SEED = 32, 128, 4, 25
CASES = {
    "tf1_cnn": lambda pc: digits_case("tf1_cnn", pc),
    "keras_cnn": lambda pc: digits_case("keras_cnn", pc),
    "fashion_xception": lambda pc: fashion_case("fashion_xception", pc),
    "fashion_mobilenet_v2": lambda pc: fashion_case("fashion_mobilenet_v2", pc),
}
SLOW = {"mobilenet_v2_digits": lambda pc: digits_case("mobilenet_v2_digits", pc)}
SCHEMES = {"tf1_cnn": (True, False), "keras_cnn": (True, False)}  # others: per-channel
BEFORE = "## Before"  # AUTO_HELDOUT.md's record of the rule before issue 25 (kept by --write)


@dataclass
class Draw:
    minmax: tuple[float, float, np.ndarray]   # logits dB, outputs dB, top-1 hits per sample
    auto: tuple[float, float, np.ndarray]
    chosen: str


def _pool(case: Case) -> np.ndarray:
    data = np.load(case.calib)
    return data if isinstance(data, np.ndarray) else data["x"]


def run_case(case: Case, draws: int, calib: int, log) -> list[Draw]:
    """Each draw: min/max and auto calibrated on `calib` samples of the case's pool."""
    pool = _pool(case)
    rng = np.random.default_rng(SEED)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for d in range(draws):
            path = Path(tmp) / f"calib{d}.npy"
            np.save(path, pool[np.sort(rng.choice(len(pool), calib, replace=False))])
            cells, chosen = {}, ""
            for name, method in (("minmax", "minmax"), ("auto", "auto")):
                t0 = time.time()
                q = QuantizeOptions(mode=QuantMode.INT8, calib=str(path),
                                    per_channel=case.per_channel, calib_method=method)
                result = convert_detailed(case.graph, ConvertOptions(outputs=case.outputs,
                                                                     quantize=q))
                cell = score(case, result.model, t0)
                cells[name] = (cell.logits, cell.sqnr, cell.hits)
                report = result.quantization.auto
                chosen = report.chosen.label() if report is not None else chosen
                log(f"{case.label:34s} draw {d}: {name:6s} {cell}  ({cell.seconds:.0f} s)"
                    + (f"  chose {chosen}" if report is not None else ""))
            out.append(Draw(cells["minmax"], cells["auto"], chosen))
    return out


def summary_row(label: str, draws: list[Draw]) -> str:
    mm = np.array([d.minmax[:2] for d in draws])
    au = np.array([d.auto[:2] for d in draws])
    diff = au - mm
    wins = sum(int(np.sum(d.auto[2] & ~d.minmax[2])) for d in draws)
    losses = sum(int(np.sum(d.minmax[2] & ~d.auto[2])) for d in draws)
    n = len(draws[0].auto[2])
    top1 = f"{100 * np.mean([d.minmax[2].mean() for d in draws]):.1f} / " \
           f"{100 * np.mean([d.auto[2].mean() for d in draws]):.1f} %"
    choices = Counter(d.chosen for d in draws)
    chose = "; ".join(f"{c} x{k}" if k > 1 else c for c, k in choices.most_common())
    return (f"| {label} | {len(draws)} x {n} | {mm[:, 0].mean():.2f} / {au[:, 0].mean():.2f} | "
            f"{diff[:, 0].mean():+.2f} ({diff[:, 0].min():+.2f}) | "
            f"{diff[:, 1].mean():+.2f} ({diff[:, 1].min():+.2f}) | {top1} | "
            f"+{wins} -{losses} | {chose} |")


HEADER = ("| model | draws x eval samples | logits dB: min/max / auto | auto - min/max at the "
          "logits: mean (worst) | at the outputs: mean (worst) | top-1 min/max / auto | "
          "top-1 samples auto wins / loses | auto chose |\n|---|---|---|---|---|---|---|---|")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[1])
    ap.add_argument("--only", action="append", choices=sorted({**CASES, **SLOW}),
                    help="only this model (repeatable)")
    ap.add_argument("--draws", type=int, default=DRAWS, help="calibration draws per model")
    ap.add_argument("--calib", type=int, default=CALIB, help="calibration samples per draw")
    ap.add_argument("--eval", type=int, default=EVAL, help="evaluation samples")
    ap.add_argument("--slow", action="store_true", help="also MobileNetV2 digits")
    ap.add_argument("--write", action="store_true", help="write bench/AUTO_HELDOUT.md")
    args = ap.parse_args(argv)
    chosen = {**CASES, **(SLOW if args.slow or args.only else {})}
    t0 = time.time()
    rows = []
    for name, make in chosen.items():
        if args.only and name not in args.only:
            continue
        for per_channel in SCHEMES.get(name, (True,)):
            case = make(per_channel)
            case = replace(case, x=case.x[:args.eval], y=case.y[:args.eval])
            draws = run_case(case, args.draws, args.calib,
                             lambda line: print(line, file=sys.stderr, flush=True))
            rows.append(summary_row(case.label, draws))
    seconds = time.time() - t0
    text = "\n".join([HEADER, *rows]) + "\n"
    print(text, end="")
    print(f"({seconds / 60:.1f} min)", file=sys.stderr)
    if args.write:
        old = OUTPUT_FILE.read_text() if OUTPUT_FILE.exists() else ""
        before = old[old.index(BEFORE):] if BEFORE in old else ""
        OUTPUT_FILE.write_text(
            "# --calib-method auto against min/max on held-out data\n\nGenerated by "
            f"`python bench/auto_heldout.py --write` ({seconds / 60:.1f} min, {args.draws} "
            f"draws of {args.calib} calibration samples, {args.eval} evaluation samples); do "
            "not edit by hand. Conditions: see the docstring of bench/auto_heldout.py.\n\n"
            + text + (f"\n{before}" if before else ""))


if __name__ == "__main__":
    main()
