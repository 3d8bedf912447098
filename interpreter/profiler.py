"""Per-op timing of an allocated interpreter: ``Interpreter.profile()`` returns a Profile.

    prof = interp.profile(runs=20, warmup=2)
    print(prof.table(top=10))
    prof.by_type[0].op_type, prof.by_type[0].share

invoke() stays a bare loop over the prepared calls; profiling runs its own copy of that
loop with ``time.perf_counter()`` around every call, so the timings include each kernel's
Python overhead (argument unpacking, numpy call setup) but not the loop itself. Times are
medians over the profiled runs, in seconds (each op's own median: a run delayed by a busy
machine does not inflate them, and they compare with a median latency). ``share`` is a
fraction of the summed op time (op times, not the wall time, so the shares of all ops, and
of all op types, sum to 1).
Ops folded at allocate_tensors() (all-constant inputs) do not run and are not listed.
The rows are subgraph 0's ops: an op that calls other subgraphs (WHILE, IF) counts the
time of everything it runs, its loop body included.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from typing import Sequence

from edgelite.names import shown
from .runloop import quiet


@dataclass(frozen=True)
class OpTiming:
    """One executed operator."""

    index: int  # operator index in subgraph 0
    op_type: str  # "CONV_2D", ...
    output: str  # name of its first output tensor
    seconds: float  # median time per invoke
    share: float  # of the summed op time


@dataclass(frozen=True)
class TypeTiming:
    """All executed operators of one type."""

    op_type: str
    count: int
    seconds: float  # summed median time per invoke
    share: float


@dataclass(frozen=True)
class Profile:
    runs: int
    warmup: int
    wall_seconds: float  # mean wall time of one profiled invoke (timer calls included)
    ops: tuple[OpTiming, ...]  # in execution order
    by_type: tuple[TypeTiming, ...]  # slowest type first

    @property
    def op_seconds(self) -> float:
        """Summed op time of one invoke."""
        return sum(op.seconds for op in self.ops)

    def top_ops(self, n: int | None = None) -> tuple[OpTiming, ...]:
        """The ``n`` slowest ops (all when None), slowest first."""
        ranked = sorted(self.ops, key=lambda op: (-op.seconds, op.index))
        return tuple(ranked if n is None else ranked[:n])

    def top_types(self, n: int | None = None) -> tuple[TypeTiming, ...]:
        return self.by_type if n is None else self.by_type[:n]

    def to_dict(self, top: int | None = None) -> dict:
        return {
            "runs": self.runs, "warmup": self.warmup, "wall_seconds": self.wall_seconds,
            "op_seconds": self.op_seconds, "num_ops": len(self.ops),
            "by_type": [asdict(t) for t in self.top_types(top)],
            "ops": [asdict(op) for op in self.top_ops(top)],
        }

    def table(self, top: int | None = 10) -> str:
        """Two text tables: per op type, then per op (``top`` rows each; None: all)."""
        lines = [f"per op type ({len(self.by_type)} types, {len(self.ops)} ops, "
                 f"{self.op_seconds * 1e3:.3f} ms of op time per invoke):",
                 f"  {'type':<26}{'count':>6}{'ms':>10}{'share':>8}"]
        for t in self.top_types(top):
            lines.append(f"  {shown(t.op_type, 26):<26}{t.count:>6}{t.seconds * 1e3:>10.3f}"
                         f"{t.share:>8.1%}")
        lines += ["per op:", f"  {'#':>4}  {'type':<22}{'ms':>10}{'share':>8}  output"]
        for op in self.top_ops(top):
            lines.append(f"  {op.index:>4}  {shown(op.op_type, 22):<22}"
                         f"{op.seconds * 1e3:>10.3f}{op.share:>8.1%}  {shown(op.output)}")
        return "\n".join(lines)


def run_profile(steps: Sequence[tuple], labels: Sequence[tuple[int, str, str]], runs: int,
                warmup: int) -> Profile:
    """Time ``steps`` (the interpreter's (eval, record, inputs, outputs) list) over ``runs``
    invokes after ``warmup`` untimed ones. ``labels``: (op index, op type, output name) per
    step."""
    if runs < 1 or warmup < 0:
        raise ValueError(f"runs must be >= 1 and warmup >= 0, got runs={runs}, "
                         f"warmup={warmup}")
    if len(labels) != len(steps):
        raise ValueError(f"{len(labels)} labels for {len(steps)} steps")
    with quiet():  # as in invoke (runloop.py)
        for _ in range(warmup):
            for eval_fn, record, inputs, outputs in steps:
                eval_fn(record, inputs, outputs)
        times = [[0.0] * len(steps) for _ in range(runs)]
        clock = time.perf_counter
        start = clock()
        for run in times:
            for i, (eval_fn, record, inputs, outputs) in enumerate(steps):
                t0 = clock()
                eval_fn(record, inputs, outputs)
                run[i] = clock() - t0
        wall = (clock() - start) / runs
    seconds = [statistics.median(column) for column in zip(*times)] if steps else []
    return _summarize(seconds, labels, runs, warmup, wall)


def _summarize(seconds, labels, runs, warmup, wall) -> Profile:
    total = sum(seconds)

    def share(s: float) -> float:
        return s / total if total > 0 else 1.0 / len(seconds)

    ops = tuple(OpTiming(index, op_type, output, s, share(s))
                for (index, op_type, output), s in zip(labels, seconds, strict=True))
    per_type: dict[str, list[float]] = {}
    for op in ops:
        per_type.setdefault(op.op_type, []).append(op.seconds)
    by_type = tuple(sorted(
        (TypeTiming(name, len(ts), sum(ts), sum(share(s) for s in ts))
         for name, ts in per_type.items()),
        key=lambda t: (-t.seconds, t.op_type)))
    return Profile(runs, warmup, wall, ops, by_type)
