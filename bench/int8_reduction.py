#!/usr/bin/env python
"""int8 CONV_2D / FULLY_CONNECTED with long reductions: how edgelite's exact float
accumulation (interpreter/kernels/common/accumulator.py) runs on ResNet50's layers, against
LiteRT's default kernels (XNNPACK) on the same layers (a benchmark, not a test).

    python bench/int8_reduction.py                  # ResNet50's layers, 1 thread
    python bench/int8_reduction.py --threads 2 --runs 30 --weights uniform

A full ResNet50 int8 file is not committed: every distinct conv / FC layer shape of
ResNet50 (224 x 224, batch 1) is built as a one-op int8 model with the test builder
(tests/interpreter/tflite_builder.py), with

  weights  "bell" (default): per output channel, normal values scaled so the largest
           |w| is 127 -- what per-channel symmetric quantization of trained weights
           looks like; "uniform": uniform in [-127, 127], the worst case for the bounds;
  input    zero point -128 (the output of a ReLU), random values.

Each layer runs in edgelite with three accumulation plans:

  auto     the current planner: one float32 GEMM where every partial sum is provably
           within 2^24 (the signed bound of TermBounds), else float32 chunks of K;
  before   the planner before chunking: float32 where 255 * max_o sum_k |w| <= 2^24,
           else one float64 GEMM;
  float64  one float64 GEMM always;

and in LiteRT's default resolver. Times are medians (--stat min: minimums) of interleaved
blocks; "network" sums
each layer's time times the number of such layers in ResNet50. Outputs are checked
bit-exact against LiteRT (every plan).

Recorded (AMD EPYC Zen 4 KVM, 2 vCPUs shared with other sessions, load average 4-5,
numpy 2.4 / OpenBLAS 0.3.31, ai-edge-litert 2.3.0; ``--runs 30 --stat min``, 1 thread):

  bell weights, all 24 layer shapes, network sums: auto 92.9 ms, before 148.9 ms, float64
  264.4 ms, LiteRT 10.1 ms -- 9.2x LiteRT instead of 14.8x. The K >= 2048 layers: K = 2304
  and 2048 now take one float32 product (the signed bound), K = 4608 two float32 chunks;
  per layer 2.2-4.1x faster than before (3x3 256 @14: 2.26 vs 9.28 ms, LiteRT 0.23).
  uniform weights, K >= 2048 only: every such layer chunked (2-3 chunks); auto 23.5 ms,
  before 56.8 ms, LiteRT 2.3 ms (10.3x vs 25.0x); chunked 2.0-3.5x faster than float64.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from edgelite.interpreter import Interpreter  # noqa: E402
from edgelite.interpreter.kernels.common import accumulator as qa  # noqa: E402
from edgelite.interpreter.kernels import conv, depthwise_conv, fully_connected  # noqa: E402
from tests.interpreter.tflite_builder import ModelBuilder  # noqa: E402


@dataclass(frozen=True)
class Layer:
    label: str
    count: int  # how many such layers ResNet50 has
    hw: int  # input height = width
    cin: int
    cout: int
    k: int  # kernel size (0: FULLY_CONNECTED)
    stride: int = 1

    @property
    def depth(self) -> int:
        return self.cin if self.k == 0 else self.k * self.k * self.cin


# ResNet50 v1.5 (torchvision / Keras layout: stride 2 in the 3x3 conv of a block's first
# unit), 224 x 224: every distinct conv / FC shape and its multiplicity.
RESNET50 = [
    Layer("conv1 7x7/2 3->64 @224", 1, 224, 3, 64, 7, 2),
    Layer("1x1 64->64 @56", 1, 56, 64, 64, 1),
    Layer("3x3 64->64 @56", 3, 56, 64, 64, 3),
    Layer("1x1 64->256 @56", 4, 56, 64, 256, 1),
    Layer("1x1 256->64 @56", 2, 56, 256, 64, 1),
    Layer("1x1 256->128 @56", 1, 56, 256, 128, 1),
    Layer("3x3/2 128->128 @56", 1, 56, 128, 128, 3, 2),
    Layer("1x1/2 256->512 @56 (proj)", 1, 56, 256, 512, 1, 2),
    Layer("1x1 128->512 @28", 4, 28, 128, 512, 1),
    Layer("1x1 512->128 @28", 3, 28, 512, 128, 1),
    Layer("3x3 128->128 @28", 3, 28, 128, 128, 3),
    Layer("1x1 512->256 @28", 1, 28, 512, 256, 1),
    Layer("3x3/2 256->256 @28", 1, 28, 256, 256, 3, 2),
    Layer("1x1/2 512->1024 @28 (proj)", 1, 28, 512, 1024, 1, 2),
    Layer("1x1 256->1024 @14", 6, 14, 256, 1024, 1),
    Layer("1x1 1024->256 @14", 5, 14, 1024, 256, 1),
    Layer("3x3 256->256 @14", 5, 14, 256, 256, 3),
    Layer("1x1 1024->512 @14", 1, 14, 1024, 512, 1),
    Layer("3x3/2 512->512 @14", 1, 14, 512, 512, 3, 2),
    Layer("1x1/2 1024->2048 @14 (proj)", 1, 14, 1024, 2048, 1, 2),
    Layer("1x1 512->2048 @7", 3, 7, 512, 2048, 1),
    Layer("1x1 2048->512 @7", 2, 7, 2048, 512, 1),
    Layer("3x3 512->512 @7", 2, 7, 512, 512, 3),
    Layer("FC 2048->1000", 1, 1, 2048, 1000, 0),
]


def weights(rng, shape, kind: str) -> np.ndarray:
    """int8 weights, output channel first."""
    if kind == "uniform":
        return rng.integers(-127, 128, size=shape).astype(np.int8)
    w = rng.normal(size=shape)
    peak = np.abs(w).reshape(shape[0], -1).max(axis=1).reshape((-1,) + (1,) * (len(shape) - 1))
    return np.round(w / peak * 127).astype(np.int8)


def layer_model(layer: Layer, rng, kind: str) -> tuple[bytes, np.ndarray]:
    b = ModelBuilder()
    s_x, zp_x = 0.05, -128
    w_shape = (layer.cout, layer.depth) if layer.k == 0 else \
        (layer.cout, layer.k, layer.k, layer.cin)
    w = weights(rng, w_shape, kind)
    w_scales = rng.uniform(0.001, 0.004, layer.cout).astype(np.float32)
    if layer.k == 0:
        x_shape, y_shape = (1, layer.cin), (1, layer.cout)
    else:
        out = -(-layer.hw // layer.stride)
        x_shape, y_shape = (1, layer.hw, layer.hw, layer.cin), (1, out, out, layer.cout)
    x = b.tensor("x", x_shape, np.int8, scale=s_x, zero_point=zp_x)
    wt = b.tensor("w", w_shape, np.int8, data=w, scale=w_scales,
                  zero_point=np.zeros(layer.cout, np.int64), quantized_dimension=0)
    bias = b.tensor("b", (layer.cout,), np.int32,
                    data=rng.integers(-20000, 20000, layer.cout).astype(np.int32),
                    scale=np.float32(s_x) * w_scales, zero_point=np.zeros(layer.cout, np.int64))
    # Output scale ~ the spread of the accumulators, so outputs use the int8 range.
    s_out = float(s_x * w_scales.mean() * 128 * np.sqrt(layer.depth) * 40)
    y = b.tensor("y", y_shape, np.int8, scale=s_out, zero_point=-10)
    if layer.k == 0:
        b.op("FULLY_CONNECTED", [x, wt, bias], [y], version=4, fused_activation_function="RELU")
    else:
        b.op("CONV_2D", [x, wt, bias], [y], version=3, padding="SAME", stride_h=layer.stride,
             stride_w=layer.stride, dilation_h_factor=1, dilation_w_factor=1,
             fused_activation_function="RELU")
    feed = rng.integers(-128, 128, size=x_shape).astype(np.int8)
    return b.build([x], [y]), feed


# --------------------------------------------------------------------------- plans

_PLANNER = qa.plan_accumulator


def _before(weights, x_dtype, zp_x, bias, float32_bias, split=True):
    """The planner before chunking (requantize.exact_float_dtype): float32 when
    max |x - zp_x| * max_o sum_k |w| <= 2^24, else float64."""
    plan = _PLANNER(weights, x_dtype, zp_x, bias, float32_bias, split=False)
    info = np.iinfo(x_dtype)
    x_max = max(zp_x - int(info.min), int(info.max) - zp_x)
    l1 = int(np.abs(np.asarray(weights, np.int64)).sum(axis=0).max())
    if x_max * l1 <= qa.FLOAT32_EXACT:
        return plan
    return qa.AccumulatorPlan(qa.GemmPath.FLOAT64, ((0, len(weights)),), plan.wraps,
                              np.dtype(np.float64))


def _float64(weights, x_dtype, zp_x, bias, float32_bias, split=True):
    plan = _PLANNER(weights, x_dtype, zp_x, bias, float32_bias, split)
    return qa.AccumulatorPlan(qa.GemmPath.FLOAT64, ((0, len(weights)),), plan.wraps,
                              np.dtype(np.float64))


PLANS = {"auto": _PLANNER, "before": _before, "float64": _float64}


@contextlib.contextmanager
def planner(name: str):
    """Prepare with plan ``name`` (the kernels import plan_accumulator by name)."""
    modules = (conv, depthwise_conv, fully_connected)
    for m in modules:
        m.plan_accumulator = PLANS[name]
    try:
        yield
    finally:
        for m in modules:
            m.plan_accumulator = _PLANNER


# --------------------------------------------------------------------------- timing


class Runner:
    def __init__(self, model: bytes, feed: np.ndarray, threads: int, plan: str | None):
        if plan is None:
            from ai_edge_litert.interpreter import Interpreter as LiteRT
            self.interp = LiteRT(model_content=model, num_threads=threads)
            self.interp.allocate_tensors()
            self.plan = None
        else:
            self.interp = Interpreter(model_content=model, num_threads=threads)
            with planner(plan):
                self.interp.allocate_tensors()
            (_, record, _, _), = self.interp._steps
            record = getattr(record, "record", record)
            self.plan = record.plan
        self.interp.set_tensor(self.interp.get_input_details()[0]["index"], feed)
        self.out = self.interp.get_output_details()[0]["index"]

    def invoke(self) -> float:
        t0 = time.perf_counter()
        self.interp.invoke()
        return time.perf_counter() - t0

    def output(self) -> np.ndarray:
        return self.interp.get_tensor(self.out)


def time_blocks(runners, runs: int, stat, rounds: int = 3) -> list[float]:
    """``stat`` (median or min) of each runner's invoke times; the runners take turns in
    blocks of runs // rounds (after a warm-up), with a short pause between blocks (both
    runtimes' BLAS / thread pools keep spinning briefly after a call)."""
    times = [[] for _ in runners]
    for _ in range(rounds):
        for r, ts in zip(runners, times):
            time.sleep(0.05)
            r.invoke()
            ts.extend(r.invoke() for _ in range(max(1, runs // rounds)))
    return [stat(ts) for ts in times]


def describe(plan) -> str:
    if plan.path is qa.GemmPath.CHUNKED:
        return f"{len(plan.chunks)} f32 chunks"
    return plan.path.value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--weights", choices=["bell", "uniform"], default="bell")
    ap.add_argument("--stat", choices=["median", "min"], default="median",
                    help="min: the least disturbed run, on a busy machine")
    ap.add_argument("--only-long", action="store_true",
                    help="only the layers with K >= 2048 (where the plans differ)")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"# int8 long reductions: {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, threads={args.threads}, weights={args.weights}, "
          f"runs={args.runs}, {args.stat}, load average {os.getloadavg()[0]:.1f}\n")
    print("| layer | x | K | plan auto / before | auto ms | before ms | float64 ms | LiteRT ms "
          "| auto / LiteRT | before / LiteRT | before / auto |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    totals = np.zeros(4)
    for layer in RESNET50:
        if args.only_long and layer.depth < 2048:
            continue
        model, feed = layer_model(layer, rng, args.weights)
        runners = [Runner(model, feed, args.threads, p) for p in ("auto", "before", "float64")]
        runners.append(Runner(model, feed, args.threads, None))
        times = time_blocks(runners, args.runs, getattr(statistics, args.stat) if
                            args.stat == "median" else min)
        expected = runners[-1].output()
        for r in runners[:-1]:
            if not np.array_equal(r.output(), expected):
                raise SystemExit(f"{layer.label}: not bit-exact with LiteRT")
        totals += np.array(times) * layer.count
        auto, before, f64, lite = times
        plans = f"{describe(runners[0].plan)} / {describe(runners[1].plan)}"
        print(f"| {layer.label} | {layer.count} | {layer.depth} | {plans} "
              f"| {auto * 1e3:.2f} | {before * 1e3:.2f} | {f64 * 1e3:.2f} | {lite * 1e3:.2f} "
              f"| {auto / lite:.1f}x | {before / lite:.1f}x | {before / auto:.2f}x |",
              flush=True)
    auto, before, f64, lite = totals
    print(f"| **network (sum x count)** | | | | {auto * 1e3:.1f} | {before * 1e3:.1f} "
          f"| {f64 * 1e3:.1f} | {lite * 1e3:.1f} | {auto / lite:.1f}x | {before / lite:.1f}x "
          f"| {before / auto:.2f}x |")


if __name__ == "__main__":
    main()
