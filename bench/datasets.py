#!/usr/bin/env python
"""Datasets at scale: `edgelite eval` throughput in one process, in 2 worker processes and on
a local Ray cluster, and peak memory of an eval over a memory-mapped dataset several times
RAM's size (a sparse file: large on disk, quick to make).

    EDGELITE_ROOT=. python bench/datasets.py [--samples 3000] [--huge-gib 72]

The model is models/fashion_mobilenet_v2.tf_int8.tflite (a MobileNetV2 on 28x28x1 inputs);
inputs are random, written as a folder of .npy shards of 250 samples with paired labels.
Every mode must print the same report bytes; the script checks that and prints samples/s.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "fashion_mobilenet_v2.tf_int8.tflite"
SHARD = 250


def shards(folder: Path, n: int) -> None:
    rng = np.random.default_rng(0)
    for name in ("x", "y"):
        (folder / name).mkdir()
    for k, start in enumerate(range(0, n, SHARD)):
        m = min(SHARD, n - start)
        np.save(folder / "x" / f"{k:05d}.npy", rng.random((m, 28, 28, 1), np.float32))
        np.save(folder / "y" / f"{k:05d}.npy", rng.integers(0, 10, m))


def eval_cli(*args) -> tuple[bytes, float]:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "edgelite.cli.main", "eval", str(MODEL),
                          *map(str, args), "--json"], capture_output=True, check=True)
    return out.stdout, time.perf_counter() - start


def sparse_npy(path: Path, samples: int) -> None:
    header = {"descr": "<f4", "fortran_order": False, "shape": (samples, 28, 28, 1)}
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, header)
        f.truncate(f.tell() + samples * 28 * 28 * 4)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=3000)
    parser.add_argument("--huge-gib", type=float, default=72.0,
                        help="size of the memory-mapped dataset (default: 3x a 24 GiB RAM)")
    parser.add_argument("--huge-samples", type=int, default=2000,
                        help="samples evaluated from it (its first ones)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shards(folder, args.samples)
        data = ["--data", folder / "x", "--labels", folder / "y"]
        huge = folder / "huge.npy"
        n = int(args.huge_gib * 2**30) // (28 * 28 * 4)
        sparse_npy(huge, n)
        labels = folder / "huge_y.npy"
        np.save(labels, np.zeros(n, np.int64))  # 8 bytes a sample: small next to the data
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        _, seconds = eval_cli("--data", huge, "--labels", labels, "--samples",
                              args.huge_samples)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(f"  eval over a {os.path.getsize(huge) / 2**30:.0f} GiB memory-mapped .npy "
              f"({n} samples; first {args.huge_samples}): {seconds:.2f} s, peak RSS "
              f"{max(peak, before) / 1024:.0f} MiB")
        rows, reports = [], {}
        for mode, extra in (("single process", []), ("--workers 2", ["--workers", 2]),
                            ("--ray local", ["--ray", "local"])):
            reports[mode], seconds = eval_cli(*data, *extra)
            rows.append((mode, seconds, args.samples / seconds))
        same = len(set(reports.values())) == 1
        print(f"{args.samples} samples, {MODEL.name}; reports byte-identical: {same}")
        for mode, seconds, rate in rows:
            print(f"  {mode:15s} {seconds:7.2f} s  {rate:8.1f} samples/s (wall, incl. start)")


if __name__ == "__main__":
    main()
