#!/usr/bin/env python
"""The run loop's fixed costs (issue 26): per-op overhead of a chain of small ops, import
time, peak memory of a MobileNetV2 int8 invoke, and CPU use while idle -- edgelite
(numpy and native backends, 1 and 2 threads) against LiteRT's default kernels, in one
run (a benchmark, not a test; numbers in bench/RESULTS.md).

    python bench/overhead.py                          # this checkout
    python bench/overhead.py --roots /work/main .     # before / after, interleaved

Each root runs in its own worker process (EDGELITE_ROOT=root); the parent hands out the
timing blocks round-robin -- every runner of every root, then again, ``--rounds`` times
-- so machine load falls on all of them alike, and reports medians.

* chain: ``--ops`` (200) ops of one kind on [1, 8] tensors, built with the test builder
  (tests/interpreter/tflite_builder.py): ADD with a constant, RESHAPE, FULLY_CONNECTED
  8x8 with bias, LOGISTIC, QUANTIZE (int8 -> int8, alternating scales), MEAN over axis 0;
  float32 and int8 (``--kinds``, ``--dtypes`` pick some). Reported: microseconds per op
  (invoke time / ops).
* import: ``import edgelite.interpreter`` in a fresh process (median of ``--imports``),
  and whether the 690 KB generated schema module got loaded.
* memory: peak resident memory (ru_maxrss) of a fresh process that loads MobileNetV2 224
  int8 (``--model``, or several; built with TensorFlow by bench/native_backend.py if absent),
  allocates, and invokes 3 times; also the same process's peak before loading the model
  (imports only).
* idle: CPU time the process uses in the 1 s after an invoke with 2 threads (a pool that
  spins would show ~1000 ms per busy thread).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
KINDS = ("ADD", "RESHAPE", "FC", "LOGISTIC", "QUANTIZE", "MEAN")
DTYPES = ("float", "int8")
INT8_ONLY = ("QUANTIZE",)  # int8 -> int8 requantization (a table lookup)
DEFAULT_MODEL = Path("/tmp/edgelite-bench-native/mobilenet_v2_i8.tflite")


# --------------------------------------------------------------------------- models

def chain(kind: str, n: int, dtype: str) -> bytes:
    """``n`` ops of ``kind`` in a row on [1, 8] tensors."""
    sys.path.insert(0, str(HERE.parent))
    from tests.interpreter.tflite_builder import ModelBuilder

    b = ModelBuilder()
    q = dtype == "int8"
    act = dict(scale=0.05, zero_point=3) if q else {}
    dt = np.int8 if q else np.float32
    x = first = b.tensor("x", [1, 8], dt, **act)
    for i in range(n):
        y_act = act
        if q and kind == "LOGISTIC":
            y_act = dict(scale=1 / 256, zero_point=-128)  # TFLite's fixed output
        elif kind == "QUANTIZE":
            y_act = dict(scale=0.05 + 0.01 * (i % 2), zero_point=3)
        y = b.tensor(f"y{i}", [1, 8], dt, **y_act)
        if kind == "ADD":
            c = b.tensor(f"c{i}", [1, 8], dt, data=np.ones((1, 8)), **act)
            b.op("ADD", [x, c], [y])
        elif kind in ("LOGISTIC", "QUANTIZE"):
            b.op(kind, [x], [y])
        elif kind == "MEAN":
            b.op("MEAN", [x, b.const(f"a{i}", np.array([0], np.int32))], [y], keep_dims=True)
        elif kind == "RESHAPE":
            shape = b.const(f"s{i}", np.array([1, 8], np.int32))
            b.op("RESHAPE", [x, shape], [y], new_shape=[1, 8])
        else:
            w = b.tensor(f"w{i}", [8, 8], dt, data=np.eye(8),
                         **(dict(scale=0.01, zero_point=0) if q else {}))
            bias = b.tensor(f"b{i}", [8], np.int32 if q else np.float32, data=np.zeros(8),
                            **(dict(scale=0.0005, zero_point=0) if q else {}))
            b.op("FULLY_CONNECTED", [x, w, bias], [y])
        x = y
    return b.build(inputs=[first], outputs=[x])


# --------------------------------------------------------------------------- worker

def _interpreter(runtime: str, content: bytes, threads: int):
    if runtime == "litert":
        from ai_edge_litert.interpreter import Interpreter
        return Interpreter(model_content=content, num_threads=threads)
    from edgelite.interpreter import Interpreter
    return Interpreter(model_content=content, num_threads=threads,
                       native=runtime == "native")


class Worker:
    """One root's runners, kept between blocks (models built once)."""

    def __init__(self, ops: int):
        self.ops = ops
        self.runners: dict[tuple, object] = {}

    def runner(self, key: tuple):
        if key not in self.runners:
            kind, dtype, runtime, threads = key
            it = _interpreter(runtime, chain(kind, self.ops, dtype), threads)
            it.allocate_tensors()
            d = it.get_input_details()[0]
            it.set_tensor(d["index"], np.ones(d["shape"], d["dtype"]))
            for _ in range(5):
                it.invoke()
            self.runners[key] = it
        return self.runners[key]

    def block(self, key: tuple, invokes: int) -> float:
        """Median microseconds per op over ``invokes`` invokes."""
        it = self.runner(key)
        times = []
        for _ in range(invokes):
            t = time.perf_counter()
            it.invoke()
            times.append(time.perf_counter() - t)
        return statistics.median(times) / self.ops * 1e6


def worker_main(ops: int) -> None:
    w = Worker(ops)
    for line in sys.stdin:
        cmd = json.loads(line)
        print(json.dumps(w.block(tuple(cmd["key"]), cmd["invokes"])), flush=True)


# --------------------------------------------------------------------------- fresh processes

IMPORT_CODE = """
import sys, time
t = time.perf_counter()
import edgelite.interpreter
print(time.perf_counter() - t, 'edgelite.schema.generated_tflite' in sys.modules)
"""

MEMORY_CODE = """
import resource, sys, numpy as np
runtime, path = sys.argv[1], sys.argv[2]
if runtime == 'litert':
    from ai_edge_litert.interpreter import Interpreter
    make = lambda: Interpreter(model_path=path, num_threads=1)
else:
    from edgelite.interpreter import Interpreter
    make = lambda: Interpreter(model_path=path, num_threads=1, native=runtime == 'native')
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
it = make()
it.allocate_tensors()
d = it.get_input_details()[0]
it.set_tensor(d['index'], np.zeros(d['shape'], d['dtype']))
for _ in range(3):
    it.invoke()
print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

IDLE_CODE = """
import resource, sys, time, numpy as np
runtime, path = sys.argv[1], sys.argv[2]
if runtime == 'litert':
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_path=path, num_threads=2)
else:
    from edgelite.interpreter import Interpreter
    it = Interpreter(model_path=path, num_threads=2, native=runtime == 'native')
it.allocate_tensors()
d = it.get_input_details()[0]
it.set_tensor(d['index'], np.zeros(d['shape'], d['dtype']))
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t0, c0 = time.perf_counter(), cpu()
for _ in range(5):
    it.invoke()
busy = (cpu() - c0) / (time.perf_counter() - t0)
c1 = cpu()
time.sleep(1.0)
print(busy, (cpu() - c1) * 1e3)
"""


def _python(root: str | None, code: str, *args: str) -> str:
    env = dict(os.environ)
    if root:
        env["EDGELITE_ROOT"] = str(Path(root).resolve())
    return subprocess.run([sys.executable, "-c", code, *args], env=env, check=True,
                          capture_output=True, text=True).stdout.split("\n")[-2]


# --------------------------------------------------------------------------- parent

def _start(root: str | None, ops: int) -> subprocess.Popen:
    env = dict(os.environ)
    if root:
        env["EDGELITE_ROOT"] = str(Path(root).resolve())
    return subprocess.Popen([sys.executable, __file__, "--worker", "--ops", str(ops)],
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def _ask(proc: subprocess.Popen, key: tuple, invokes: int) -> float:
    proc.stdin.write(json.dumps({"key": list(key), "invokes": invokes}) + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def bench_chains(roots, args) -> None:
    workers = [_start(root, args.ops) for root in roots]
    pairs = [(kind, dtype) for kind in args.kinds.split(",") for dtype in args.dtypes.split(",")
             if not (kind in INT8_ONLY and dtype == "float")]
    runners = [(w, (kind, dtype, runtime, threads))
               for kind, dtype in pairs for threads in (1, 2)
               for w, runtimes in enumerate([("numpy", "native")] * len(roots))
               for runtime in runtimes]
    runners += [(0, (kind, dtype, "litert", threads))
                for kind, dtype in pairs for threads in (1, 2)]
    results: dict[tuple, list[float]] = {}
    for _ in range(args.rounds):
        for w, key in runners:
            results.setdefault((w, key), []).append(_ask(workers[w], key, args.invokes))
    for proc in workers:
        proc.stdin.close()
        proc.wait()
    names = [Path(r).resolve().name if r else "edgelite" for r in roots]
    print(f"\n## Per-op overhead: chains of {args.ops} ops on [1, 8] (us per op, median of "
          f"{args.rounds} interleaved blocks of {args.invokes} invokes)\n")
    cols = [(w, rt) for w in range(len(roots)) for rt in ("numpy", "native")]
    header = " | ".join(f"{names[w]} {rt}" for w, rt in cols)
    print(f"| op | dtype | threads | {header} | LiteRT default |")
    print("|---|---|---:|" + "---:|" * (len(cols) + 1))
    for kind, dtype in pairs:
        for threads in (1, 2):
            cells = [statistics.median(results[w, (kind, dtype, rt, threads)])
                     for w, rt in cols]
            lite = statistics.median(results[0, (kind, dtype, "litert", threads)])
            print(f"| {kind} | {dtype} | {threads} | " +
                  " | ".join(f"{c:.2f}" for c in cells) + f" | {lite:.3f} |")


def bench_import(roots, args) -> None:
    print(f"\n## import edgelite.interpreter, fresh process (median of {args.imports})\n")
    samples: dict[int, list] = {}
    for _ in range(args.imports):
        for i, root in enumerate(roots):
            seconds, loaded = _python(root, IMPORT_CODE).split()
            samples.setdefault(i, []).append((float(seconds), loaded))
    for i, root in enumerate(roots):
        ms = statistics.median(s for s, _ in samples[i]) * 1e3
        print(f"- {Path(root).resolve().name if root else 'edgelite'}: {ms:.0f} ms, generated "
              f"schema module loaded: {samples[i][0][1]}")


def bench_memory(roots, args) -> None:
    model = Path(args.model[0])
    if not model.exists():
        sys.path.insert(0, str(HERE))
        from native_backend import build
        model = build(model.parent)["int8"]
    for other in args.model[1:]:  # more models: their peak memory only
        peak_memory(roots, Path(other))
    peak_memory(roots, model)
    idle_cpu(roots, model)


def _runs(roots) -> list:
    """(label, root, runtime) of LiteRT and of each root's numpy and native backends."""
    return [("LiteRT default", None, "litert")] + [
        (f"{Path(r).resolve().name if r else 'edgelite'} {rt}", r, rt)
        for r in roots for rt in ("numpy", "native")]


def peak_memory(roots, model: Path) -> None:
    print(f"\n## Peak memory, {model.name}: load + allocate + 3 invokes, fresh process "
          "(ru_maxrss, MB; median of 3)\n")
    print("| runtime | after imports | peak | peak - LiteRT's peak |")
    print("|---|---:|---:|---:|")
    runs = _runs(roots)
    samples: dict[str, list] = {}
    for _ in range(3):
        for name, root, rt in runs:
            before, peak = _python(root, MEMORY_CODE, rt, str(model)).split()
            samples.setdefault(name, []).append((int(before) / 1024, int(peak) / 1024))
    lite = statistics.median(p for _, p in samples["LiteRT default"])
    for name, _, _ in runs:
        before = statistics.median(b for b, _ in samples[name])
        peak = statistics.median(p for _, p in samples[name])
        print(f"| {name} | {before:.0f} | {peak:.0f} | {peak - lite:+.0f} |")


def idle_cpu(roots, model: Path) -> None:
    runs = _runs(roots)
    print(f"\n## CPU while idle: the 1 s after 5 invokes of {model.name} with 2 threads\n")
    print("| runtime | CPU / wall during the invokes | CPU ms in the idle second |")
    print("|---|---:|---:|")
    for name, root, rt in runs:
        busy, idle = _python(root, IDLE_CODE, rt, str(model)).split()
        print(f"| {name} | {float(busy):.2f} | {float(idle):.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--roots", nargs="*", default=[None],
                        help="edgelite checkouts to compare (EDGELITE_ROOT); default: this one")
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--kinds", default=",".join(KINDS), help="chain ops, comma-separated")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="float, int8")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--invokes", type=int, default=50)
    parser.add_argument("--imports", type=int, default=7)
    parser.add_argument("--model", nargs="+", default=[str(DEFAULT_MODEL)],
                        help="int8 .tflite files for the memory table (the first also "
                        "for the idle CPU; built if absent)")
    parser.add_argument("--only", default="chains,import,memory",
                        help="comma-separated: chains, import, memory")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker_main(args.ops)
        return
    only = set(args.only.split(","))
    print(f"# bench/overhead.py, {time.strftime('%Y-%m-%d %H:%M')}, load average "
          f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")
    if "chains" in only:
        bench_chains(args.roots, args)
    if "import" in only:
        bench_import(args.roots, args)
    if "memory" in only:
        bench_memory(args.roots, args)


if __name__ == "__main__":
    main()
