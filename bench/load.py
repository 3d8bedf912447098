#!/usr/bin/env python
"""Latency under load: edgelite's thread settings vs LiteRT's when the CPU is shared (a
benchmark, not a test; bench/RESULTS.md "Latency under load" records its numbers).

    python bench/load.py                                   # every model found, loads 0,1,2
    python bench/load.py --models mobilenet_v2_i8 --rounds 8 --block 5
    python bench/load.py --files /tmp/edgelite-bench-native/*_i8.tflite   # given files

A device app always shares its CPU. For every model, each configuration below is timed
with 0, 1 and 2 competing busy processes (``python -c "while True: pass"``, one core
each) running beside this one:

  edgelite default        Interpreter() with no thread arguments (what users get)
  edgelite 1 + BLAS 1     num_threads=1: no splitting, numpy's BLAS limited to 1 thread
  edgelite 2 + BLAS 1     num_threads=2: edgelite's own non-spinning pool splits the big ops
  edgelite 1 + BLAS N     num_threads=1, blas_threads=None: numpy's BLAS keeps its own
                          thread count (one per core; the pre-issue-10 default)
  LiteRT 2 / LiteRT 1     ai_edge_litert's Interpreter, default kernels (XNNPACK),
                          num_threads=2 / 1, on the same .tflite file and input

The configurations take turns in blocks, and the loads take turns too: each of
``--rounds`` rounds starts the busy processes of every load in turn and times every
configuration under it, so that the noise of a shared machine hits every configuration
and load alike. A block is a pause (``--pause``: threads the previous runtime left
spinning, OpenBLAS's or XNNPACK's, go to sleep), then ``--warmup`` seconds of untimed
back-to-back invokes, then ``--block`` timed ones: a device app invokes frame after
frame. The untimed warm-up matters for fairness: a thread that has just slept gets a few
milliseconds of CPU ahead of the busy processes (the scheduler's credit for sleepers), so
without it a 2 ms LiteRT block would run entirely on that credit and look unaffected by
the load while a 25 ms edgelite block could not. Reported per configuration: the median
and p90 latency at each load, and the slowdown under load of the median and of the mean
(``table`` says why both). The script also reports how many cores processes other than
its own kept busy during each phase (/proc/stat): on a shared machine that noise is part
of the result.

Models: the digits CNN (models/keras_cnn.pb) and the trained MobileNetV2 of the digits
(models/mobilenet_v2_digits.pb, 64x64), float and int8 (calibrated on
models/digits_calib.npy); MobileNetV2 224 (models/cache/mobilenet_v2.pb, built by
``python models/build_real_world.py --only mobilenet_v2``; skipped when absent), float and
int8 calibrated on its golden inputs. All converted by edgelite into --cache.
"""

from __future__ import annotations

import argparse
import inspect
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare_litert  # noqa: E402
from compare_litert import CACHE_MODELS, MODELS, _convert, imagenet_inputs, log  # noqa: E402


# --------------------------------------------------------------------------- models


def model_files(cache: Path) -> dict[str, tuple[Path, np.ndarray]]:
    """{key: (.tflite path, one float input sample)} for every model available."""
    cache.mkdir(parents=True, exist_ok=True)
    digits = np.load(MODELS / "digits_test.npz")["x"][:1].astype(np.float32)
    calib = MODELS / "digits_calib.npy"
    out = {}
    for name in ("keras_cnn", "mobilenet_v2_digits"):
        pb = MODELS / f"{name}.pb"
        out[f"{name}_f"] = (_convert(pb, cache / f"{name}_f.tflite", None), digits)
        out[f"{name}_i8"] = (_convert(pb, cache / f"{name}_i8.tflite", calib), digits)
    pb = CACHE_MODELS / "mobilenet_v2.pb"
    if pb.exists():
        images = imagenet_inputs("mobilenet_v2")
        calib = cache / "mobilenet_v2_calib.npy"
        if not calib.exists():
            np.save(calib, images)
        out["mobilenet_v2_f"] = (_convert(pb, cache / "mobilenet_v2_f.tflite", None),
                                 images[:1])
        out["mobilenet_v2_i8"] = (_convert(pb, cache / "mobilenet_v2_i8.tflite", calib),
                                  images[:1])
    else:
        log(f"({pb} not found: MobileNetV2 224 skipped; build it with "
            "`python models/build_real_world.py --only mobilenet_v2`)")
    return out


def given_files(paths: list[str]) -> dict[str, tuple[Path, np.ndarray]]:
    """{key: (.tflite path, one input sample)} for .tflite files named on the command line
    (e.g. /tmp/edgelite-bench-native/*_i8.tflite from bench/native_backend.py): a fixed
    random float image in [-1, 1] of the model's input shape (converted to the input's
    dtype by Runner), or fixed random integers over the whole range of an integer input."""
    from edgelite.interpreter import Interpreter
    out = {}
    for name in paths:
        path = Path(name)
        d = Interpreter(model_path=str(path)).get_input_details()[0]
        rng = np.random.default_rng(0)
        if np.dtype(d["dtype"]).kind in "iu":
            info = np.iinfo(d["dtype"])
            x = rng.integers(info.min, info.max, d["shape"], endpoint=True).astype(d["dtype"])
        else:
            x = rng.uniform(-1, 1, d["shape"]).astype(np.float32)
        out[path.stem] = (path, x)
    return out


LABELS = {"keras_cnn": "digits CNN", "mobilenet_v2_digits": "MobileNetV2 digits 64x64",
          "mobilenet_v2": "MobileNetV2 224"}


def label(key: str) -> str:
    base, kind = key.rsplit("_", 1)
    return f"{LABELS.get(base, base)} {'int8' if kind == 'i8' else 'float'}"


# --------------------------------------------------------------------------- runtimes


@dataclass(frozen=True)
class Config:
    name: str
    make: Callable[[str], object]  # .tflite path -> an interpreter


def _edgelite(**kwargs) -> Callable[[str], object]:
    def make(path: str):
        from edgelite.interpreter import Interpreter
        return Interpreter(model_path=path, **kwargs)
    return make


def _litert(threads: int) -> Callable[[str], object]:
    def make(path: str):
        from ai_edge_litert.interpreter import Interpreter as LiteRT
        return LiteRT(model_path=path, num_threads=threads)
    return make


CONFIGS = (
    Config("edgelite default", _edgelite()),  # 2 + BLAS 1 (also timed below: noise shows)
    Config("edgelite 1 + BLAS 1", _edgelite(num_threads=1, blas_threads=1)),
    Config("edgelite 2 + BLAS 1", _edgelite(num_threads=2, blas_threads=1)),
    Config("edgelite 1 + BLAS N", _edgelite(num_threads=1, blas_threads=None)),
    Config("LiteRT 2", _litert(2)),
    Config("LiteRT 1", _litert(1)),
)


class Runner(compare_litert.Runner):
    """One configuration's interpreter with its input set (``invoke()`` -> seconds)."""

    def __init__(self, config: Config, path: Path, x: np.ndarray) -> None:
        self.config = config
        self.interp = config.make(str(path))
        self.interp.allocate_tensors()
        d = self.interp.get_input_details()[0]
        self.interp.set_tensor(d["index"], x.astype(d["dtype"]))
        self.out_index = self.interp.get_output_details()[0]["index"]


# --------------------------------------------------------------------------- load


def _cpu_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine since boot."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return sum(values) - idle, sum(values)


def _process_ticks(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    except OSError:
        return 0


class Phase:
    """``busy`` competing processes for the length of a ``with`` block, and how many
    cores processes that are neither this one nor those kept busy meanwhile
    (``others_cores``: other jobs on a shared machine)."""

    def __init__(self, busy: int) -> None:
        self.busy = busy
        self.procs: list[subprocess.Popen] = []
        self.others_cores = float("nan")
        self.seconds = 0.0

    def __enter__(self) -> "Phase":
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                      for _ in range(self.busy)]
        time.sleep(0.5 if self.busy else 0.0)  # let them reach full speed
        self._start = (_cpu_ticks(), self._ours(), time.perf_counter())
        return self

    def _ours(self) -> int:
        return _process_ticks(os.getpid()) + sum(_process_ticks(p.pid) for p in self.procs)

    def __exit__(self, *exc) -> None:
        (busy0, _), ours0, t0 = self._start
        (busy1, _), ours1 = _cpu_ticks(), self._ours()
        hz = os.sysconf("SC_CLK_TCK")
        self.seconds = time.perf_counter() - t0
        self.others_cores = max(0.0, ((busy1 - busy0) - (ours1 - ours0)) / hz / self.seconds)
        for p in self.procs:  # only the processes this phase started
            p.kill()
            p.wait()


# --------------------------------------------------------------------------- timing


def time_loads(runners: list[Runner], args) -> dict:
    """{busy: ([invoke times per runner], mean cores used by other jobs)}. The loads take
    turns too (each round: every load, every configuration), so that a change in what
    other jobs do to the machine hits every load level alike."""
    times = {b: [[] for _ in runners] for b in args.loads}
    others = {b: [] for b in args.loads}
    for _ in range(args.rounds):
        for busy in args.loads:
            with Phase(busy) as phase:
                for runner, ts in zip(runners, times[busy]):
                    time.sleep(args.pause)
                    warm = time.perf_counter() + args.warmup
                    runner.invoke()
                    while time.perf_counter() < warm:
                        runner.invoke()
                    ts.extend(runner.invoke() for _ in range(args.block))
            others[busy].append((phase.others_cores, phase.seconds))
    return {b: (times[b], sum(c * s for c, s in others[b]) / sum(s for _, s in others[b]))
            for b in args.loads}


def check_outputs(runners: list[Runner], quantized: bool) -> str:
    """How the outputs of every configuration compare with LiteRT 1's."""
    ref = runners[-1].output()
    worst = max(float(np.max(np.abs(r.output().astype(np.float64) - ref))) for r in runners)
    if quantized:
        return "bit-exact" if worst == 0 else f"NOT bit-exact (max diff {worst:g})"
    return f"max abs diff {worst:.1e}"


def run_model(key: str, path: Path, x: np.ndarray, args) -> dict:
    runners = [Runner(c, path, x) for c in CONFIGS]
    for r in runners:
        r.invoke()
    result = {"model": key, "outputs": check_outputs(runners, key.endswith("_i8")),
              "loads": {}}
    for busy, (times, others) in time_loads(runners, args).items():
        result["loads"][busy] = {
            "others_cores": others,
            "ms": {r.config.name: (1e3 * statistics.median(ts),
                                   1e3 * float(np.percentile(ts, 90)),
                                   1e3 * statistics.fmean(ts))
                   for r, ts in zip(runners, times)}}
    return result


def table(result: dict, loads) -> str:
    """Median (p90) per load, then the slowdown of the median and of the mean per busy
    load: a job shorter than the scheduler's time slice (LiteRT's 2 ms int8 MobileNetV2)
    mostly finishes before a busy process preempts it, so its median barely moves while
    its p90 and mean grow; a 25 ms job is preempted every time. The mean is the fair
    measure of the CPU share a runtime keeps."""
    ms = {b: result["loads"][b]["ms"] for b in loads}
    slow = [b for b in loads if b and 0 in loads]
    head = "| configuration | " + " | ".join(
        f"{b} busy ms (p90)" if b else "idle ms (p90)" for b in loads)
    head += "".join(f" | slowdown {b} busy median / mean" for b in slow) + " |"
    lines = [head, "|---" + "|---:" * (len(loads) + len(slow)) + "|"]
    for c in CONFIGS:
        cells = [f"{ms[b][c.name][0]:.2f} ({ms[b][c.name][1]:.2f})" for b in loads]
        cells += [f"{ms[b][c.name][0] / ms[0][c.name][0]:.2f}x / "
                  f"{ms[b][c.name][2] / ms[0][c.name][2]:.2f}x" for b in slow]
        lines.append(f"| {c.name} | " + " | ".join(cells) + " |")
    others = ", ".join(f"{b} busy: {result['loads'][b]['others_cores']:.2f}" for b in loads)
    lines.append(f"\n(cores kept busy by other processes meanwhile -- {others}; "
                 f"outputs vs LiteRT 1: {result['outputs']})")
    return "\n".join(lines)


def overhead(files: dict) -> None:
    """What the thread controls cost per invoke: entering and leaving the BLAS limit
    (two library calls when numpy's count differs, none when it already matches), the
    one-thread guard, and their sum on the smallest real model (digits CNN int8, one
    thread: the best of 20 blocks of 50 invokes, BLAS limited vs left alone)."""
    import timeit

    from edgelite.interpreter import Interpreter, blas
    from edgelite.interpreter.guard import CallGuard

    def limit() -> None:
        with blas.threads(1):
            pass
    n = 20000
    us = {"BLAS limit, numpy's count differs": timeit.timeit(limit, number=n) / n * 1e6}
    with blas.threads(1):
        us["BLAS limit, count already 1"] = timeit.timeit(limit, number=n) / n * 1e6
    guard = CallGuard()
    us["guard enter + leave"] = timeit.timeit(
        lambda: (guard.enter("invoke()"), guard.leave()), number=n) / n * 1e6
    path, x = files["keras_cnn_i8"]
    best = {}
    for blas_threads in (1, None):
        interp = Interpreter(model_path=str(path), num_threads=1, blas_threads=blas_threads)
        interp.allocate_tensors()
        d = interp.get_input_details()[0]
        interp.set_tensor(d["index"], x.astype(d["dtype"]))
        best[blas_threads] = min(timeit.repeat(interp.invoke, number=50, repeat=20)) / 50
    log("per-invoke cost of the thread controls: " +
        ", ".join(f"{k} {v:.1f} us" for k, v in us.items()) +
        f"; digits CNN int8 invoke {best[1] * 1e6:.1f} us limited, "
        f"{best[None] * 1e6:.1f} us left alone")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="",
                    help="comma-separated keys (e.g. mobilenet_v2_i8,keras_cnn_f); "
                    "default: all found")
    ap.add_argument("--loads", default="0,1,2", help="numbers of busy processes")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--block", type=int, default=5, help="timed invokes per block")
    ap.add_argument("--warmup", type=float, default=0.2,
                    help="seconds of untimed invokes per block (at least one invoke)")
    ap.add_argument("--pause", type=float, default=0.3, help="seconds between blocks")
    ap.add_argument("--files", nargs="*", default=[],
                    help=".tflite files to time instead of the converted sample models")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/edgelite-bench"))
    args = ap.parse_args()
    args.loads = [int(b) for b in args.loads.split(",")]

    import threadpoolctl

    from edgelite.interpreter import Interpreter, blas, parallel
    log(f"command: python bench/load.py {' '.join(sys.argv[1:])}")
    log(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"threadpoolctl {threadpoolctl.__version__}; {blas.status()}; numpy's BLAS "
        f"threads outside invoke(): {blas.get_threads()}")
    blas_default = inspect.signature(Interpreter).parameters["blas_threads"].default
    log(f"edgelite default: num_threads={parallel.default_threads()}, "
        f"blas_threads={blas_default}")
    files = given_files(args.files) if args.files else model_files(args.cache)
    if "keras_cnn_i8" in files:
        overhead(files)
    keys = [k for k in args.models.split(",") if k] or list(files)
    for key in keys:
        path, x = files[key]
        log(f"\n### {label(key)} ({path.name})\n")
        result = run_model(key, path, x, args)
        log("")
        log(table(result, args.loads))


if __name__ == "__main__":
    main()
