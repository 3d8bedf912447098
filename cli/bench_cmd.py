"""`edgelite bench`: latency, throughput, memory and a per-op profile of one model.

Timed invokes are plain ``invoke()`` calls (no per-op timers); the per-op profile comes
from separate runs of ``Interpreter.profile()`` afterwards. Inputs are seeded random data
of each input's dtype (floats uniform in [-1, 1), integers over their whole range).
"""

from __future__ import annotations

import dataclasses
import json
import resource
import sys
import time

import click
import numpy as np

from ..interpreter import Interpreter, blas
from edgelite.errors import EdgeliteError
from edgelite.names import quoted, shown
from ..interpreter.profiler import Profile
from .deadline import timeout_option
from .text import fit

OP_TYPE_WIDTH = 22  # the narrower of the profile table's two op type columns


def random_inputs(interp: Interpreter, seed: int = 0) -> dict[int, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for d in interp.get_input_details():
        shape, dtype = tuple(d["shape"]), np.dtype(d["dtype"])
        if dtype.kind == "f":
            feeds[d["index"]] = rng.uniform(-1, 1, shape).astype(dtype)
        elif dtype.kind in "iu":
            info = np.iinfo(dtype)
            feeds[d["index"]] = rng.integers(info.min, int(info.max) + 1, shape, dtype=dtype)
        elif dtype.kind == "b":
            feeds[d["index"]] = rng.integers(0, 2, shape).astype(bool)
        else:
            raise EdgeliteError(f"cannot make random data for input {quoted(d['name'])} of "
                                f"type {dtype}")
    return feeds


def peak_rss_bytes() -> int:
    """Peak resident set size of this process (ru_maxrss: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def percentile(values, q: float) -> float:
    return float(np.percentile(np.asarray(values, np.float64), q))


def bench_model(model: str, threads: int | None = None, batch: int | None = None,
                runs: int = 20, warmup: int = 3, profile_runs: int | None = None,
                kernels: str = "default") -> tuple[dict, object]:
    """Load, allocate, warm up, time ``runs`` invokes, then profile. Returns (results
    dict, Profile)."""
    t0 = time.perf_counter()
    interp = Interpreter(model_path=model, num_threads=threads, kernels=kernels)
    t_load = time.perf_counter() - t0
    if batch is not None:
        for d in interp.get_input_details():
            if len(d["shape"]) >= 1 and d["shape"][0] != batch:
                interp.resize_tensor_input(d["index"], [batch] + list(d["shape"][1:]))
    t0 = time.perf_counter()
    interp.allocate_tensors()
    t_alloc = time.perf_counter() - t0
    for index, x in random_inputs(interp).items():
        interp.set_tensor(index, x)
    first = interp.get_input_details()[0]["shape"]
    samples = int(first[0]) if len(first) >= 1 else 1
    for _ in range(warmup):
        interp.invoke()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        interp.invoke()
        times.append(time.perf_counter() - t0)
    prof = interp.profile(runs=profile_runs or runs, warmup=0)
    median = percentile(times, 50)
    result = {
        "model": model,
        "batch": samples,
        "threads": {"requested": threads, "used": interp.num_threads, "split_ops": sum(
                        1 for _, record, _, _ in interp._steps if getattr(record, "slices", ())),
                    "batch_split": interp.batch_split,
                    "blas_during_invoke": interp.blas_limit or blas.get_threads(),
                    "blas_settable": blas.available()},
        "kernels": kernels,
        "runs": runs,
        "warmup": warmup,
        "load_s": t_load,
        "allocate_s": t_alloc,
        "latency_s": {"median": median, "p90": percentile(times, 90), "min": min(times),
                      "mean": float(np.mean(times))},
        "throughput_per_s": samples / median if median > 0 else float("inf"),
        "arena_bytes": interp.arena_size,
        "peak_rss_bytes": peak_rss_bytes(),
        "num_ops": len(prof.ops),
        # the profile's summed op time per invoke, and as a fraction of the median latency
        "op_seconds": prof.op_seconds,
        "op_share_of_latency": prof.op_seconds / median if median > 0 else None,
    }
    return result, prof


def report(result: dict, prof, top: int) -> str:
    from ..converter.files import shown_path  # here: `edgelite --help` loads no converter
    lat, th = result["latency_s"], result["threads"]
    used = f"{th['used']}" + ("" if th["requested"] else ", the default,")
    blas_text = f"numpy's BLAS {th['blas_during_invoke']} thread(s) inside" + (
        "" if th["blas_settable"] else " (not controlled: threadpoolctl missing or no BLAS)")
    if th.get("batch_split"):
        workers, chunk = th["batch_split"]
        threads = (f"{used} (the batch split by sample: {workers} workers, {chunk} sample(s) "
                   f"per invoke each; the profile below times the batched ops; {blas_text})")
    else:
        threads = f"{used} ({th['split_ops']} big ops split their rows over them; {blas_text})"
    lines = [
        f"model      {shown_path(result['model'])} (batch {result['batch']}, "
        f"{result['num_ops']} ops, "
        f"{result['kernels']} kernels)",
        f"threads    {threads}",
        f"load       {result['load_s'] * 1e3:.1f} ms, allocate {result['allocate_s'] * 1e3:.1f} ms",
        f"latency    median {lat['median'] * 1e3:.3f} ms, p90 {lat['p90'] * 1e3:.3f} ms, "
        f"min {lat['min'] * 1e3:.3f} ms ({result['runs']} runs after {result['warmup']} "
        "warm-up)",
        f"throughput {result['throughput_per_s']:.1f} samples/s",
        f"arena      {result['arena_bytes']:,} bytes",
        f"peak RSS   {result['peak_rss_bytes'] / 2**20:.1f} MiB",
        f"op time    {_op_time(result)}",
        "",
        prof.table(top),
    ]
    return "\n".join(lines)


AGREE = 1.1  # op time above this fraction of the latency: the profile ran differently


def _op_time(result: dict) -> str:
    """The profile's summed op time against the plain latency: the share the ops take of
    it (the rest is the interpreter between them), or, where the sum exceeds the latency,
    why the tables below are shares of a different run."""
    ms, share = result["op_seconds"] * 1e3, result["op_share_of_latency"]
    if share is None:
        return f"{ms:.3f} ms per profiled invoke"
    head = f"{ms:.3f} ms per profiled invoke = {share:.0%} of the median latency"
    if share <= AGREE:
        return f"{head} (the rest: the interpreter between ops)"
    why = ("the batch is not split by sample there" if result["threads"].get("batch_split")
           else "each op is timed on its own, with timer calls between ops")
    return (f"{head}: the profile runs ops one at a time ({why}), so read its shares, not "
            "its sums, against the latency")


@click.command("bench")
@click.argument("model", type=click.Path(exists=True, dir_okay=False))
@click.option("--threads", type=int, default=None,
              help="The Interpreter's num_threads: big convolutions split their output rows "
              "over N threads, with numpy's BLAS single-threaded inside (threadpoolctl). "
              "Default: the Interpreter's (1: on a shared CPU a second thread costs more "
              "than it gains).")
@click.option("--batch", type=int, default=None,
              help="Resize the inputs' batch (first) dimension to B.")
@click.option("--runs", type=int, default=20, show_default=True, help="Timed invokes.")
@click.option("--warmup", type=int, default=3, show_default=True,
              help="Untimed invokes first.")
@click.option("--top", type=int, default=10, show_default=True,
              help="Rows of the per-op-type and per-op profile tables.")
@click.option("--kernels", type=click.Choice(["default", "reference"]), default="default",
              show_default=True, help="Which LiteRT integer arithmetic int8 kernels follow.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead.")
@timeout_option
def bench_command(model, threads, batch, runs, warmup, top, as_json, kernels) -> None:
    """Time a .tflite model: warm-up, median / p90 latency, throughput, arena size, peak
    RSS and a per-op profile (per op type and per op, top N)."""
    if runs < 1 or warmup < 0 or top < 1 or (batch is not None and batch < 1) or (
            threads is not None and threads < 1):
        raise click.BadParameter("--runs, --top, --batch and --threads must be >= 1, "
                                 "--warmup >= 0")
    result, prof = bench_model(model, threads, batch, runs, warmup, kernels=kernels)
    if as_json:
        result["profile"] = prof.to_dict(top)
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(report(result, displayable(prof), top))


def displayable(prof: Profile) -> Profile:
    """The profile with its op names (custom codes) and output tensor names escaped and
    cut to the table's columns: names come from the model file."""
    return dataclasses.replace(
        prof,
        ops=tuple(dataclasses.replace(op, op_type=fit(op.op_type, OP_TYPE_WIDTH),
                                      output=shown(op.output)) for op in prof.ops),
        by_type=tuple(dataclasses.replace(t, op_type=fit(t.op_type, OP_TYPE_WIDTH))
                      for t in prof.by_type))
