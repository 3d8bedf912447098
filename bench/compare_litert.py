#!/usr/bin/env python
"""edgelite vs LiteRT, side by side in one process, on the same .tflite files, inputs and
thread count (a benchmark, not a test). See bench/RESULTS.md for recorded numbers.

    python bench/compare_litert.py                       # everything, 2 threads
    python bench/compare_litert.py --only models,dispatch --threads 2 --runs 20

Sections (--only):
  models    latency of edgelite / LiteRT default (XNNPACK) / LiteRT BUILTIN_REF on the digits
            CNN (models/keras_cnn.pb), MobileNetV2 224 and EfficientNet-B0 224
            (models/cache/*.pb, skipped when absent), each float and full int8, all converted
            by edgelite; the three runtimes take turns so that machine noise hits them alike
            (in blocks, see time_blocks). Also checks the outputs agree (int8:
            bit-exact vs LiteRT default).
  batch     time per sample at batch 32 vs batch 1 (edgelite and LiteRT default)
  dispatch  per-op overhead: a chain of 200 tiny ADD ops, and the digits CNN
            ((invoke time - summed kernel time) / ops, from Interpreter.profile())
  startup   `import edgelite.interpreter` + load + allocate_tensors() of MobileNetV2 in a
            fresh interpreter process (in-process time and whole-process wall time)
  convert   full-int8 MobileNetV2 with 100 calibration samples: `edgelite convert` vs
            TensorFlow's TFLiteConverter (/tmp/tfenv/bin/python, or $TF_PYTHON), both whole
            processes, start-up included

Models are converted once into --cache (default /tmp/edgelite-bench). Machine noise: run
on an idle machine; the medians of interleaved runs are reported.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
CACHE_MODELS = MODELS / "cache"
TF_PYTHON = os.environ.get("TF_PYTHON", "/tmp/tfenv/bin/python")


def log(*args) -> None:
    print(*args, flush=True)


# --------------------------------------------------------------------------- models


def _convert(pb: Path, out: Path, calib: Path | None) -> Path:
    if out.exists() and out.stat().st_mtime > pb.stat().st_mtime:
        return out
    import edgelite
    from edgelite.converter import QuantizeOptions
    from edgelite.converter.quantize import QuantMode

    quant = QuantizeOptions(mode=QuantMode.INT8, calib=str(calib)) if calib else None
    out.write_bytes(edgelite.convert(str(pb), quantize=quant))
    return out


def imagenet_inputs(name: str) -> np.ndarray:
    """Real preprocessed 224x224 photo crops (the golden inputs of models/cache)."""
    return np.load(CACHE_MODELS / f"{name}.golden.npz")["input"].astype(np.float32)


def build_models(cache: Path) -> list[tuple[str, Path, np.ndarray]]:
    """(label, .tflite path, one float input sample) for every available model."""
    cache.mkdir(parents=True, exist_ok=True)
    out = []
    digits = np.load(MODELS / "digits_test.npz")
    x_digit = digits["x"][:1].astype(np.float32)
    pb = MODELS / "keras_cnn.pb"
    out.append(("digits CNN float", _convert(pb, cache / "keras_cnn_f.tflite", None), x_digit))
    out.append(("digits CNN int8", _convert(pb, cache / "keras_cnn_i8.tflite",
                                            MODELS / "digits_calib.npy"), x_digit))
    for name, label in (("mobilenet_v2", "MobileNetV2"), ("efficientnet_b0", "EfficientNet-B0"),
                        ("resnet50", "ResNet50")):
        pb = CACHE_MODELS / f"{name}.pb"
        if not pb.exists():
            log(f"  ({pb} not found: {label} skipped)")
            continue
        images = imagenet_inputs(name)
        calib = cache / f"{name}_calib.npy"
        if not calib.exists():
            np.save(calib, images)
        out.append((f"{label} float", _convert(pb, cache / f"{name}_f.tflite", None),
                    images[:1]))
        out.append((f"{label} int8", _convert(pb, cache / f"{name}_i8.tflite", calib),
                    images[:1]))
    return out


# --------------------------------------------------------------------------- runtimes


class Runner:
    """One interpreter with its input set; ``invoke()`` and ``output()``."""

    def __init__(self, kind: str, path: Path, x: np.ndarray, threads: int):
        from ai_edge_litert.interpreter import Interpreter as LiteRT
        from ai_edge_litert.interpreter import OpResolverType

        from edgelite.interpreter import Interpreter

        self.kind = kind
        if kind == "edgelite":
            self.interp = Interpreter(model_path=str(path), num_threads=threads)
        elif kind == "edgelite1":
            self.interp = Interpreter(model_path=str(path), num_threads=1)
        elif kind == "litert":
            self.interp = LiteRT(model_path=str(path), num_threads=threads)
        else:
            self.interp = LiteRT(model_path=str(path), num_threads=threads,
                                 experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        d = self.interp.get_input_details()[0]
        if tuple(d["shape"]) != x.shape:
            self.interp.resize_tensor_input(d["index"], list(x.shape))
        self.interp.allocate_tensors()
        d = self.interp.get_input_details()[0]
        self.interp.set_tensor(d["index"], x.astype(d["dtype"]))
        self.out_index = self.interp.get_output_details()[0]["index"]

    def invoke(self) -> float:
        t0 = time.perf_counter()
        self.interp.invoke()
        return time.perf_counter() - t0

    def output(self) -> np.ndarray:
        return self.interp.get_tensor(self.out_index)


def time_blocks(runners: list[Runner], runs: int, warmup: int = 2, rounds: int = 2,
                budget_s: float = 60.0) -> list[float]:
    """Median invoke time of each runner. Each runner runs in blocks (warm-up, then
    runs // rounds timed invokes), the runners taking turns, ``rounds`` times over, with a
    pause between blocks: LiteRT keeps idle worker threads spinning for a while after a
    call (XNNPACK's pthreadpool; so does OpenBLAS, which edgelite limits to one thread
    inside invoke()), which would steal the second core from the other runtime if calls
    were interleaved one by one."""
    times = [[] for _ in runners]
    per_block = max(1, runs // rounds)
    for _ in range(rounds):
        for r, ts in zip(runners, times):
            time.sleep(0.3)
            for _ in range(warmup):
                r.invoke()
            start = time.perf_counter()
            for i in range(per_block):
                ts.append(r.invoke())
                if i >= 2 and time.perf_counter() - start > budget_s / (rounds * len(runners)):
                    break
    return [statistics.median(ts) for ts in times]


def section_models(models, threads: int, runs: int) -> list[dict]:
    log(f"\n## Latency, batch 1, {threads} threads (medians)\n")
    log("| model | edgelite ms | (1 thread) | LiteRT XNNPACK ms | LiteRT REF ms "
        "| edgelite / XNNPACK | REF / edgelite | outputs |")
    log("|---|---:|---:|---:|---:|---:|---:|---|")
    rows = []
    for label, path, x in models:
        runners = [Runner(k, path, x, threads) for k in ("edgelite", "edgelite1", "litert",
                                                          "ref")]
        e, e1, lt, ref = time_blocks(runners, runs)
        runners.pop(1)
        ours, theirs = runners[0].output(), runners[1].output()
        if ours.dtype.kind == "f":
            agree = f"max abs diff {float(np.max(np.abs(ours - theirs))):.1e}"
        else:
            agree = "bit-exact" if np.array_equal(ours, theirs) else (
                f"{int(np.sum(ours != theirs))} of {ours.size} differ")
        rows.append(dict(model=label, edgelite=e, litert=lt, ref=ref))
        log(f"| {label} | {e * 1e3:.2f} | {e1 * 1e3:.2f} | {lt * 1e3:.3f} | {ref * 1e3:.2f} "
            f"| {e / lt:.1f}x | {ref / e:.2f}x | {agree} |")
    return rows


def section_batch(models, threads: int, runs: int) -> None:
    log(f"\n## Batch 32 vs batch 1 (time per sample, {threads} threads)\n")
    log("| model | edgelite b1 ms | edgelite b32 ms/sample | edgelite ratio | LiteRT b1 ms "
        "| LiteRT b32 ms/sample | LiteRT ratio |")
    log("|---|---:|---:|---:|---:|---:|---:|")
    for label, path, x in models:
        big = label.startswith(("MobileNet", "Efficient"))
        x32 = np.concatenate([x] * 32)
        res = {}
        for kind in ("edgelite", "litert"):
            one = Runner(kind, path, x, threads)
            many = Runner(kind, path, x32, threads)
            t1, t32 = time_blocks([one, many], max(3, runs // 4) if big else runs)
            res[kind] = (t1, t32 / 32)
        (e1, e32), (l1, l32) = res["edgelite"], res["litert"]
        log(f"| {label} | {e1 * 1e3:.3f} | {e32 * 1e3:.3f} | {e32 / e1:.2f} | {l1 * 1e3:.4f} "
            f"| {l32 * 1e3:.4f} | {l32 / l1:.2f} |")


def _add_chain(n: int) -> bytes:
    sys.path.insert(0, str(ROOT))
    from tests.interpreter.tflite_builder import ModelBuilder

    b = ModelBuilder()
    x = b.tensor("x", (1, 4))
    c = b.const("c", np.ones((1, 4), np.float32))
    prev = x
    for i in range(n):
        y = b.tensor(f"y{i}", (1, 4))
        b.op("ADD", [prev, c], [y])
        prev = y
    return b.build([x], [prev])


def section_dispatch(models, threads: int, runs: int, cache: Path) -> None:
    """Measured before any LiteRT interpreter of this section exists: LiteRT's idle
    worker threads spin for a while after each call and would share the machine."""
    from edgelite.interpreter import Interpreter

    log("\n## Per-op dispatch overhead (small ops: nothing is split over threads)\n")
    time.sleep(1.0)
    for label, path, x in models:
        if not label.startswith("digits"):
            continue
        interp = Interpreter(model_path=str(path), num_threads=threads)
        interp.allocate_tensors()
        d = interp.get_input_details()[0]
        interp.set_tensor(d["index"], x.astype(d["dtype"]))
        start = time.perf_counter()
        while time.perf_counter() - start < 1.0:  # warm up (caches, clock speed)
            interp.invoke()
        invokes = []
        for _ in range(max(runs, 500)):
            t0 = time.perf_counter()
            interp.invoke()
            invokes.append(time.perf_counter() - t0)
        prof = interp.profile(runs=max(runs, 500), warmup=5)
        ops = len(prof.ops)
        med = statistics.median(invokes)
        loop = (prof.wall_seconds - prof.op_seconds) / ops
        log(f"- {label}: {ops} ops, invoke median {med * 1e6:.1f} us (min {min(invokes) * 1e6:.1f})"
            f" = {med / ops * 1e6:.2f} us/op all-in (min {min(invokes) / ops * 1e6:.2f}); "
            f"outside the kernels (loop + call, from the profiled runs) {loop * 1e6:.2f} us/op")
        top = ", ".join(f"{t.op_type} {t.seconds * 1e6:.1f}" for t in prof.by_type)
        log(f"  (profiled mean per type, us: {top})")
    n = 200
    chain = cache / f"add_chain_{n}.tflite"
    chain.write_bytes(_add_chain(n))
    x = np.zeros((1, 4), np.float32)
    runners = [Runner(k, chain, x, threads) for k in ("edgelite", "litert", "ref")]
    e, lt, ref = time_blocks(runners, max(runs, 50))
    log(f"- chain of {n} ADD ops on [1, 4] floats: edgelite {e / n * 1e6:.2f} us/op, "
        f"LiteRT XNNPACK {lt / n * 1e6:.3f} us/op, LiteRT REF {ref / n * 1e6:.3f} us/op")


STARTUP = """
import time, sys
t0 = time.perf_counter()
import edgelite.interpreter as ei
t1 = time.perf_counter()
interp = ei.Interpreter(model_path=sys.argv[1])
t2 = time.perf_counter()
interp.allocate_tensors()
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, t3 - t0)
"""


def _startup_runs(path: Path, env: dict, runs: int) -> list[float]:
    """Medians of (import, load, allocate, in-process total, whole process) seconds."""
    rows = []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", STARTUP, str(path)], check=True,
                             capture_output=True, text=True, env=env).stdout.split()
        rows.append([float(v) for v in out] + [time.perf_counter() - t0])
    return [statistics.median(c) for c in zip(*rows)]


def section_startup(models, cache: Path) -> None:
    log("\n## import edgelite.interpreter + load + allocate (fresh process)\n")
    # Bytecode as a pip install leaves it: allow .pyc files (one untimed run writes them).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for label, path, _ in models:
        if not label.startswith("MobileNetV2"):
            continue
        _startup_runs(path, env, 1)
        med = _startup_runs(path, env, 5)
        log(f"- {label}: import {med[0] * 1e3:.0f} ms + load {med[1] * 1e3:.0f} ms + allocate "
            f"{med[2] * 1e3:.0f} ms = {med[3] * 1e3:.0f} ms in-process; whole process "
            f"(python start-up included) {med[4] * 1e3:.0f} ms (median of 5)")
    # Without any .pyc (PYTHONDONTWRITEBYTECODE and an empty cache): every import
    # compiles the sources, the 690 KB generated schema bindings above all.
    empty = cache / "no-pycache"
    env_cold = dict(env, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=str(empty))
    label, path, _ = next(m for m in models if m[0].startswith("MobileNetV2"))
    med = _startup_runs(path, env_cold, 3)
    log(f"- without .pyc files ({label}): {med[3] * 1e3:.0f} ms in-process, of which import "
        f"{med[0] * 1e3:.0f} ms")


TF_CONVERT = """
import sys, numpy as np
import tensorflow as tf
pb, calib, out = sys.argv[1:4]
data = np.load(calib)
conv = tf.compat.v1.lite.TFLiteConverter.from_frozen_graph(
    pb, input_arrays=["input"], output_arrays=["probs"], input_shapes={"input": [1, 224, 224, 3]})
conv.optimizations = [tf.lite.Optimize.DEFAULT]
conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
def representative_dataset():
    for i in range(len(data)):
        yield [data[i:i + 1]]
conv.representative_dataset = representative_dataset
open(out, "wb").write(conv.convert())
"""


def calib100(cache: Path) -> Path:
    """100 preprocessed 224x224 crops: the golden inputs, the calibration / evaluation crops
    of mobilenet_v2.quant_data.npz when present, and their mirror images."""
    path = cache / "mobilenet_v2_calib100.npy"
    if path.exists():
        return path
    parts = [imagenet_inputs("mobilenet_v2")]
    extra = CACHE_MODELS / "mobilenet_v2.quant_data.npz"
    if extra.exists():
        with np.load(extra) as d:
            parts += [d[k] for k in d.files]
    base = np.concatenate(parts).astype(np.float32)
    samples = np.concatenate([base, base[:, :, ::-1], base[:, ::-1]])
    while len(samples) < 100:
        samples = np.concatenate([samples, samples[:, ::-1, ::-1]])
    np.save(path, np.ascontiguousarray(samples[:100]))
    return path


def _timed(cmd, env=None) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    return time.perf_counter() - t0


def section_convert(cache: Path, threads: int, repeats: int = 2) -> None:
    pb = CACHE_MODELS / "mobilenet_v2.pb"
    if not pb.exists():
        log("\n(conversion: models/cache/mobilenet_v2.pb not found, skipped)")
        return
    calib = calib100(cache)
    log(f"\n## Full-int8 MobileNetV2 conversion, 100 calibration samples (whole process, "
        f"{threads} threads)\n")
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    edgelite_cli = [sys.executable, "-m", "edgelite.cli.main", "convert", str(pb), "-o",
                    str(cache / "conv_edgelite.tflite"), "--quantize", "int8", "--calib",
                    str(calib)]
    ours = min(_timed(edgelite_cli, env) for _ in range(repeats))
    line = f"- edgelite convert: {ours:.2f} s"
    if Path(TF_PYTHON).exists():
        tf_cmd = [TF_PYTHON, "-c", TF_CONVERT, str(pb), str(calib), str(cache / "conv_tf.tflite")]
        env_tf = dict(env, TF_CPP_MIN_LOG_LEVEL="3", TF_NUM_INTRAOP_THREADS=str(threads),
                      TF_NUM_INTEROP_THREADS=str(threads))
        theirs = min(_timed(tf_cmd, env_tf) for _ in range(repeats))
        line += f"; TensorFlow TFLiteConverter: {theirs:.2f} s; TF / edgelite = " \
                f"{theirs / ours:.2f}x"
    else:
        line += f" (TensorFlow not found at {TF_PYTHON}: no comparison)"
    log(line + f" (best of {repeats})")


# --------------------------------------------------------------------------- main


def machine() -> str:
    model = platform.processor() or "?"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    import ai_edge_litert

    return (f"{model}, {os.cpu_count()} logical CPUs; Python {platform.python_version()}, "
            f"numpy {np.__version__}, ai-edge-litert "
            f"{getattr(ai_edge_litert, '__version__', '?')}; {time.strftime('%Y-%m-%d')}")


def _cpu_sample():
    """(machine busy seconds, machine total seconds, this process's CPU seconds) so far;
    None where /proc/stat is missing."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:9]]
    except OSError:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + fields[4]
    own = sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
              for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return (sum(fields) - idle) / tick, sum(fields) / tick, own


def other_load(before, after) -> str:
    """How busy the machine was with other processes between two samples."""
    if before is None or after is None:
        return "unknown"
    busy = after[0] - before[0]
    total = after[1] - before[1]
    own = after[2] - before[2]
    return f"{max(0.0, busy - own) / total:.0%} of the CPUs" if total > 0 else "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--only", default="models,batch,dispatch,startup,convert")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/edgelite-bench"))
    args = ap.parse_args()
    only = set(args.only.split(","))
    sample = _cpu_sample()
    log(f"# edgelite vs LiteRT\n\n{machine()}\n")
    log(f"command: python bench/compare_litert.py --threads {args.threads} --runs {args.runs} "
        f"--only {args.only}")
    models = build_models(args.cache)
    if "models" in only:
        section_models(models, args.threads, args.runs)
    if "batch" in only:
        section_batch(models, args.threads, args.runs)
    if "dispatch" in only:
        section_dispatch(models, args.threads, args.runs, args.cache)
    if "startup" in only:
        section_startup(models, args.cache)
    if "convert" in only:
        section_convert(args.cache, args.threads)
    log(f"\nother processes kept {other_load(sample, _cpu_sample())} busy during the run")


if __name__ == "__main__":
    main()
