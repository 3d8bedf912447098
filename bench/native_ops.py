#!/usr/bin/env python
"""Per-op time of edgelite's numpy kernels against its native (C) ones, on a model's own
ops and shapes (a benchmark, not a test; see bench/RESULTS.md).

    python bench/native_ops.py MODEL.tflite [...] [--ops ADD,MUL,...] [--rounds 15]
        [--kernels default] [--threads 1]

Two Interpreters of each model (native=False / native=True) are allocated and invoked
once on random inputs; then, op by op, the two backends' prepared calls run interleaved
(A B A B ...) ``rounds`` times, so a busy machine slows both alike, and the medians are
reported in microseconds with their ratio. Also checks every output of the two
backends is identical, and prints the whole-model median latency of each backend
(invokes interleaved too).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

DEFAULT_OPS = ("ADD", "SUB", "MUL", "LOGISTIC", "TANH", "HARD_SWISH", "QUANTIZE",
               "DEQUANTIZE", "AVERAGE_POOL_2D", "MAX_POOL_2D", "MEAN", "SOFTMAX")


def _interpreters(path: Path, kernels: str, threads: int):
    from edgelite.interpreter import Interpreter

    pair = [Interpreter(model_path=str(path), native=flag, kernels=kernels,
                        num_threads=threads) for flag in (False, True)]
    rng = np.random.default_rng(0)
    for interp in pair:
        interp.allocate_tensors()
    for d in pair[0].get_input_details():
        dtype = np.dtype(d["dtype"])
        x = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max + 1, d["shape"]) \
            if dtype.kind in "iu" else rng.uniform(-1, 1, d["shape"])
        for interp in pair:
            interp.set_tensor(d["index"], x.astype(dtype))
    for interp in pair:
        interp.invoke()
    for da, db in zip(*(i.get_output_details() for i in pair)):
        if not np.array_equal(pair[0].get_tensor(da["index"]), pair[1].get_tensor(db["index"])):
            raise SystemExit(f"{path.name}: output {da['name']!r} differs between backends")
    return pair


def _timed(step) -> float:
    eval_fn, record, inputs, outputs = step
    t = time.perf_counter()
    eval_fn(record, inputs, outputs)
    return time.perf_counter() - t


def per_op(path: Path, ops, rounds: int, kernels: str, threads: int) -> None:
    numpy_it, native_it = _interpreters(path, kernels, threads)
    # The interpreters' prepared (eval, record, inputs, outputs) calls, in step order.
    steps = list(zip(numpy_it._steps, native_it._steps))
    model_ops = numpy_it._subgraph.operators
    tensors = numpy_it._subgraph.tensors
    indices = numpy_it._require_allocated("bench").step_ops
    totals = defaultdict(lambda: [0, 0.0, 0.0])
    print(f"\n### {path.name} (kernels={kernels}, threads={threads})\n")
    print("| op | output shape | numpy us | native us | numpy/native |")
    print("|---|---|---|---|---|")
    for i, (a, b) in zip(indices, steps):
        op = model_ops[i]
        if op.name not in ops:
            continue
        ta, tb = [], []
        for _ in range(rounds):
            ta.append(_timed(a))
            tb.append(_timed(b))
        ma, mb = statistics.median(ta) * 1e6, statistics.median(tb) * 1e6
        shape = list(tensors[op.outputs[0]].shape)
        print(f"| {op.name} | {shape} | {ma:.0f} | {mb:.0f} | {ma / mb:.2f} |")
        total = totals[op.name]
        total[0] += 1
        total[1] += ma
        total[2] += mb
    print("\n| op type | count | numpy us | native us | numpy/native |")
    print("|---|---|---|---|---|")
    for name, (count, ma, mb) in sorted(totals.items(), key=lambda kv: -kv[1][1]):
        print(f"| {name} | {count} | {ma:.0f} | {mb:.0f} | {ma / mb:.2f} |")
    la, lb = [], []
    for _ in range(max(3, rounds // 3)):
        for interp, acc in ((numpy_it, la), (native_it, lb)):
            t = time.perf_counter()
            interp.invoke()
            acc.append(time.perf_counter() - t)
    ma, mb = statistics.median(la) * 1e3, statistics.median(lb) * 1e3
    print(f"\nwhole model: numpy backend {ma:.2f} ms, native backend {mb:.2f} ms "
          f"({ma / mb:.2f}x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", type=Path, nargs="+")
    ap.add_argument("--ops", default=",".join(DEFAULT_OPS))
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--kernels", default="default")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    for path in args.models:
        per_op(path, set(args.ops.split(",")), args.rounds, args.kernels, args.threads)


if __name__ == "__main__":
    main()
