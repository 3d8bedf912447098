#!/usr/bin/env python
"""edgelite's float models with and without the native float32 kernels (native/
depthwise_f32.c) vs LiteRT's default kernels (XNNPACK), in one run, interleaved, at 1 and 2
threads; then each model's time per op type (1 thread) with and without them. Models: the
float ones bench/native_backend.py builds (MobileNetV2, EfficientNet-B0, ResNet50,
InceptionV3 at 224). A benchmark, not a test.

    python bench/native_float.py [--runs 7] [--rounds 3] [--only MobileNet]

"without" is the native backend with the float C kernels (depthwise, LOGISTIC / TANH / EXP /
ELU, the conv's bias + activation stage) switched off for the run (their prepare hooks
answer None), i.e. the numpy float kernels beside the native int8 ones.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
from pathlib import Path

import numpy as np

from native_backend import build, profile_types, timer


@contextlib.contextmanager
def float_kernels(on: bool):
    """The float C kernels on, or switched off (their prepare hooks answer None)."""
    from edgelite.interpreter.kernels import activations, depthwise_conv, unary
    from edgelite.interpreter.kernels.common import native_float_ops

    hooks = [(depthwise_conv, "native_depthwise_f32"), (activations, "native_unary_f32"),
             (unary, "native_unary_f32"),
             (native_float_ops, "output_stage")]
    saved = [getattr(mod, name) for mod, name in hooks]
    if not on:
        for mod, name in hooks:
            setattr(mod, name, lambda *a, **k: None)
    try:
        yield
    finally:
        for (mod, name), real in zip(hooks, saved):
            setattr(mod, name, real)


def make(path: Path, threads: int, on: bool):
    from edgelite.interpreter import Interpreter

    with float_kernels(on):
        interp = Interpreter(model_path=str(path), num_threads=threads, native=True)
        interp.allocate_tensors()
    return interp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median)")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/edgelite-bench-native"))
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    from ai_edge_litert.interpreter import Interpreter as LiteRT

    paths = {label: p for (label, kind), p in build(args.cache).items()
             if kind == "float" and args.only in label}
    rng = np.random.default_rng(1)
    print("| model | threads | without ms | with ms | LiteRT default ms | without/LiteRT "
          "| with/LiteRT | max abs diff |")
    print("|---|---|---|---|---|---|---|---|")
    for label, path in paths.items():
        for threads in (1, 2):
            runners = {"without": make(path, threads, False), "with": make(path, threads, True),
                       "litert": LiteRT(model_path=str(path), num_threads=threads)}
            runners["litert"].allocate_tensors()
            x = rng.uniform(-1, 1, runners["with"].get_input_details()[0]["shape"])
            x = x.astype(np.float32)
            times = {k: [] for k in runners}
            outs = {}
            for _ in range(args.rounds):
                for k, interp in runners.items():
                    ms, outs[k] = timer(interp, x, args.runs)
                    times[k].append(ms)
            a, b, lt = (statistics.median(times[k]) for k in ("without", "with", "litert"))
            diff = float(np.max(np.abs(outs["with"] - outs["without"])))
            print(f"| {label} float | {threads} | {a:.1f} | {b:.1f} | {lt:.1f} | "
                  f"{a / lt:.2f}x | {b / lt:.2f}x | {diff:.2g} |", flush=True)
    for label, path in paths.items():
        per_type(label, path, args.runs)


def per_type(label: str, path: Path, runs: int) -> None:
    profile_types(f"{label} float", lambda on: make(path, 1, on), np.float32, runs,
                  ("without", "with"))

if __name__ == "__main__":
    main()
