#!/usr/bin/env python
"""Conversion time against graph size: generated GraphDef chains of 1k, 10k and 100k nodes.

    python bench/scale_convert.py                    # float: 1k, 10k, 100k nodes
    python bench/scale_convert.py --sizes 1000,2000,4000 --int8 --branches
    python bench/scale_convert.py --profile 20000    # cProfile of one conversion, top 25

The GraphDefs are built here with edgelite's own graph.proto (no TensorFlow):
  chain     Placeholder x[1, 8] -> (Relu | AddV2 c | Mul c | BiasAdd c)* -> Identity
  branches  the same, and every 16 nodes a fork: Relu(h) and Mul(h, c) joined by AddV2, or
            ConcatV2 along channels followed by MatMul with a [16, 8] constant
  --shape wide    every branch reads x: Relu(Mul(x, c)), summed by a running AddV2
  --shape consts  links AddV2(h, Mul(c1, Sub(c2, c3))): constant expressions to fold
  --shape conv    Conv2D 3x3 SAME on [1, 8, 8, 8] + BiasAdd + Relu links
Each constant is its own Const node, so "nodes" counts them. Reported: GraphDef nodes, ops in
the .tflite, CPU seconds of this process per conversion (time.process_time: other processes
on a shared machine inflate it far less than wall time, which is shown too; best of
--repeat), the time ratio to the previous row and the growth exponent log(time ratio) /
log(size ratio) (1.0 = linear, 2.0 = quadratic). int8 adds calibration on --calib-samples
random samples, which runs the float model in edgelite's interpreter (export + allocate +
invoke). --stages times convert_detailed's steps within one more call (CPU seconds).
"""

from __future__ import annotations

import argparse
import cProfile
import math
import os
import pstats
import sys
import tempfile
import time

import numpy as np

import edgelite.converter as converter_module
from edgelite.converter import ConvertOptions, convert_detailed
from edgelite.converter.quantize import QuantizeOptions, QuantMode
from edgelite.schema import graph_pb2

WIDTH = 8           # channels of every activation
FLOAT, INT32 = 1, 3  # TensorFlow DataType values (types.proto)


class ChainBuilder:
    """Appends nodes to a GraphDef; `head` is the tensor the next node reads."""

    def __init__(self) -> None:
        self.gd = graph_pb2.GraphDef()
        self.rng = np.random.default_rng(0)
        x = self.gd.node.add(name="x", op="Placeholder")
        x.attr["dtype"].type = FLOAT
        for d in (1, WIDTH):
            x.attr["shape"].shape.dim.add(size=d)
        self.head = "x"
        self.count = 0

    def _name(self, kind: str) -> str:
        self.count += 1
        return f"n{self.count}/{kind}"

    def const(self, value: np.ndarray, dtype: int = FLOAT) -> str:
        name = self._name("c")
        node = self.gd.node.add(name=name, op="Const")
        node.attr["dtype"].type = dtype
        t = node.attr["value"].tensor
        t.dtype = dtype
        for d in value.shape:
            t.tensor_shape.dim.add(size=d)
        t.tensor_content = value.astype(value.dtype.newbyteorder("<")).tobytes()
        return name

    def op(self, op: str, inputs: list[str], **attrs) -> str:
        name = self._name(op)
        node = self.gd.node.add(name=name, op=op)
        node.input.extend(inputs)
        node.attr["T"].type = FLOAT
        for k, v in attrs.items():
            if isinstance(v, bool):
                node.attr[k].b = v
            else:
                node.attr[k].i = v
        return name

    def small(self, scale: float = 0.1) -> np.ndarray:
        return (self.rng.standard_normal(WIDTH) * scale).astype(np.float32)

    def step(self, k: int) -> None:
        """One chain link (1 or 2 nodes)."""
        kind = k % 4
        if kind == 0:
            self.head = self.op("Relu", [self.head])
        elif kind == 1:
            self.head = self.op("AddV2", [self.head, self.const(self.small())])
        elif kind == 2:
            self.head = self.op("Mul", [self.head, self.const(1.0 + self.small(0.01))])
        else:
            self.head = self.op("BiasAdd", [self.head, self.const(self.small())])

    def fork(self, k: int) -> None:
        """A two-way branch joined again (4 or 7 nodes)."""
        a = self.op("Relu", [self.head])
        b = self.op("Mul", [self.head, self.const(0.5 + self.small(0.01))])
        if k % 2:
            self.head = self.op("AddV2", [a, b])
            return
        axis = self.const(np.array(-1, np.int32), INT32)
        cat = self.gd.node.add(name=self._name("ConcatV2"), op="ConcatV2")
        cat.input.extend([a, b, axis])
        cat.attr["T"].type = FLOAT
        cat.attr["N"].i = 2
        w = self.const((self.rng.standard_normal((2 * WIDTH, WIDTH)) * 0.2).astype(np.float32))
        self.head = self.op("MatMul", [cat.name, w], transpose_a=False, transpose_b=False)


def build_wide(nodes: int) -> bytes:
    """Every branch reads x (one tensor with nodes/4 readers): Mul(x, c) -> Relu, summed into
    a running AddV2 total."""
    b = ChainBuilder()
    total = None
    while len(b.gd.node) < nodes - 4:
        branch = b.op("Relu", [b.op("Mul", ["x", b.const(1.0 + b.small(0.01))])])
        total = branch if total is None else b.op("AddV2", [total, branch])
    return _finish(b, total)


def build_consts(nodes: int) -> bytes:
    """A chain whose every link adds a constant expression the converter folds:
    AddV2(h, Mul(c1, Sub(c2, c3))) -- three Const nodes and two constant ops per link."""
    b = ChainBuilder()
    while len(b.gd.node) < nodes - 6:
        diff = b.op("Sub", [b.const(b.small()), b.const(b.small())])
        b.head = b.op("AddV2", [b.head, b.op("Mul", [b.const(b.small()), diff])])
    return _finish(b, b.head)


def build_conv(nodes: int) -> bytes:
    """A deep chain of Conv2D (3x3, SAME, 8 -> 8 channels on 8x8) + BiasAdd + Relu links."""
    b = ChainBuilder()
    x = b.gd.node[0]
    x.attr["shape"].shape.ClearField("dim")
    for d in (1, 8, 8, WIDTH):
        x.attr["shape"].shape.dim.add(size=d)
    while len(b.gd.node) < nodes - 5:
        w = b.const((b.rng.standard_normal((3, 3, WIDTH, WIDTH)) * 0.1).astype(np.float32))
        conv = b.op("Conv2D", [b.head, w])
        node = b.gd.node[-1]
        node.attr["strides"].list.i.extend([1, 1, 1, 1])
        node.attr["padding"].s = b"SAME"
        b.head = b.op("Relu", [b.op("BiasAdd", [conv, b.const(b.small())])])
    return _finish(b, b.head)


SHAPES = {"wide": build_wide, "consts": build_consts, "conv": build_conv}


def _finish(b: ChainBuilder, head: str) -> bytes:
    out = b.gd.node.add(name="y", op="Identity")
    out.input.append(head)
    out.attr["T"].type = FLOAT
    return b.gd.SerializeToString()


def build(nodes: int, branches: bool, shape: str = "chain") -> bytes:
    if shape in SHAPES:
        return SHAPES[shape](nodes)
    b = ChainBuilder()
    k = 0
    while len(b.gd.node) < nodes - 1:
        if branches and k % 16 == 15:
            b.fork(k // 16)
        else:
            b.step(k)
        k += 1
    return _finish(b, b.head)


def convert(data: bytes, quant: QuantizeOptions | None) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, ops) of one conversion."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = convert_detailed(data, ConvertOptions(quantize=quant))
    return time.process_time() - cpu, time.perf_counter() - wall, len(result.graph.ops)


def stages(data: bytes, quant: QuantizeOptions | None) -> dict[str, float]:
    """CPU seconds per step of one convert_detailed call: its steps are wrapped with timers
    for the call (so the collector pauses and everything else are the real ones); "other" is
    the rest (quantize_dequantize, op counts, reset_state ...)."""
    times: dict[str, float] = {}
    steps = {"_graph": "load", "lower_graph": "lower", "run_passes": "passes",
             "infer_shapes": "shapes", "quantize": "quantize", "after_quantization": "quantize",
             "export_tflite": "export"}
    saved = {name: getattr(converter_module, name) for name in steps}

    def timed(name: str):
        def call(*args, **kwargs):
            t0 = time.process_time()
            try:
                return saved[name](*args, **kwargs)
            finally:
                label = steps[name]
                times[label] = times.get(label, 0.0) + time.process_time() - t0
        return call

    for name in steps:
        setattr(converter_module, name, timed(name))
    try:
        t0 = time.process_time()
        convert_detailed(data, ConvertOptions(quantize=quant))
        total = time.process_time() - t0
    finally:
        for name, fn in saved.items():
            setattr(converter_module, name, fn)
    times["other"] = total - sum(times.values())
    return times


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000", help="GraphDef node counts")
    ap.add_argument("--branches", action="store_true", help="add forks and concats")
    ap.add_argument("--shape", choices=["chain", *SHAPES], default="chain",
                    help="wide: one input read by every branch; consts: constant "
                         "expressions to fold; conv: Conv2D + BiasAdd + Relu links")
    ap.add_argument("--int8", action="store_true", help="also quantize int8 with calibration")
    ap.add_argument("--calib-samples", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--profile", type=int, metavar="NODES", help="cProfile one conversion")
    ap.add_argument("--stages", action="store_true",
                    help="also time each step (lower, passes, shapes, quantize, export)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        calib = os.path.join(tmp, "calib.npy")
        np.save(calib, np.random.default_rng(1).standard_normal(
            (args.calib_samples, 1, WIDTH)).astype(np.float32))
        modes = [("float", None)]
        if args.int8:
            modes.append(("int8", QuantizeOptions(mode=QuantMode.INT8, calib=calib)))
        if args.profile:
            data = build(args.profile, args.branches, args.shape)
            prof = cProfile.Profile()
            prof.runcall(convert_detailed, data, ConvertOptions(quantize=modes[-1][1]))
            pstats.Stats(prof, stream=sys.stdout).sort_stats("cumulative").print_stats(25)
            pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(25)
            return 0
        sizes = [int(s) for s in args.sizes.split(",")]
        shape = "chain + forks" if args.branches else args.shape
        print(f"| {shape} | nodes | ops | mode | CPU s | wall s | ratio | growth exponent |")
        print("|---|---:|---:|---|---:|---:|---:|---:|")
        for label, quant in modes:
            prev = None
            for n in sizes:
                data = build(n, args.branches, args.shape)
                cpu, wall, ops = min(convert(data, quant) for _ in range(args.repeat))
                ratio = growth = ""
                if prev is not None:
                    ratio = f"{cpu / prev[1]:.1f}x"
                    growth = f"{math.log(cpu / prev[1]) / math.log(n / prev[0]):.2f}"
                print(f"| | {n} | {ops} | {label} | {cpu:.2f} | {wall:.2f} | {ratio} | "
                      f"{growth} |", flush=True)
                prev = (n, cpu)
                if args.stages:
                    steps = ", ".join(f"{k} {v:.2f}" for k, v in stages(data, quant).items())
                    print(f"| | | | steps: {steps} | | | | |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
