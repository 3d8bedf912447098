"""Selective quantization: keep chosen ops in float (--keep-float), or search for the fewest
ops to keep in float so the model meets an output SQNR target (--min-sqnr).

--keep-float PATTERN matches an op by its type ("CONV_2D", case-insensitive), by the TF node
it came from (op.name) or by the name of one of its output tensors (the GraphDef node name
the tensor keeps, e.g. "conv1/Relu" for a conv + bias + relu chain). The rewrite leaves the
matched ops float, with DEQUANTIZE before and QUANTIZE after where storage changes.

--min-sqnr DB, on the calibration samples, with
    SQNR = 10 log10( sum(ref^2) / sum((ref - q)^2) )   over all model outputs (metrics.sqnr)
1. quantize everything; done if SQNR >= DB;
2. sensitivity: for every candidate op (an integer op that is not exact in integer
   arithmetic), the SQNR of the model with only that op kept float;
3. greedy: keep candidates in float in decreasing sensitivity, re-measuring after each,
   until SQNR >= DB;
4. prune: try dropping each kept op again (least sensitive first); drop it if the target
   still holds -- so no kept op is redundant.
The size cost is what the kept ops' constants take as float32 instead of int8 / int32.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from ...interpreter.errors import EdgeliteError
from ..ir import Graph, Op
from .rules import INTEGER_OPS, WEIGHT_AXIS

# Integer ops that reproduce float exactly given their input (no candidates for --min-sqnr).
EXACT_OPS = frozenset({"RESHAPE", "SQUEEZE", "PAD", "MAX_POOL_2D", "RESIZE_NEAREST_NEIGHBOR",
                       "RELU", "RELU6"})


def op_matches(op: Op, pattern: str) -> bool:
    return (pattern.upper() == op.type or pattern == op.name
            or any(t.name == pattern for t in op.outputs))


def keep_float_ops(graph: Graph, patterns: Iterable[str]) -> set[int]:
    """ids of the ops matched by `patterns`; an error names any pattern matching nothing."""
    kept, unmatched = set(), []
    for p in patterns:
        hits = [op for op in graph.ops if op_matches(op, p)]
        if not hits:
            unmatched.append(p)
        kept.update(id(op) for op in hits)
    if unmatched:
        types = sorted({op.type for op in graph.ops})
        names = [op.outputs[0].name for op in graph.ops if op.type in INTEGER_OPS][:6]
        raise EdgeliteError(
            f"--keep-float {', '.join(repr(p) for p in unmatched)} matches no op: give an op "
            f"type ({', '.join(types)}) or a node name (e.g. {', '.join(map(repr, names))})")
    return kept


def candidates(graph: Graph, kept: set[int]) -> list[str]:
    """Output names of the ops --min-sqnr may keep in float, in graph order."""
    return [op.outputs[0].name for op in graph.ops
            if op.type in INTEGER_OPS and op.type not in EXACT_OPS and id(op) not in kept
            and all(t.dtype == np.float32 for t in op.outputs)]


def float_cost(graph: Graph, names: Iterable[str]) -> tuple[int, int]:
    """(bytes as float32, bytes quantized) of the constants of the ops named."""
    names = set(names)
    as_float = as_int = 0
    for op in graph.ops:
        if op.outputs[0].name not in names:
            continue
        for i, t in enumerate(op.inputs):
            if t is not None and t.is_const and t.dtype == np.float32:
                as_float += t.data.size * 4
                as_int += t.data.size * (4 if op.type in WEIGHT_AXIS and i == 2 else 1)
    return as_float, as_int


@dataclass
class SelectiveReport:
    target_db: float
    initial_db: float = float("nan")      # everything quantized
    final_db: float = float("nan")
    met: bool = False
    kept: list[str] = field(default_factory=list)          # ops kept float by the search
    sensitivity: list[tuple[str, float]] = field(default_factory=list)  # best first
    float_weight_bytes: int = 0           # the kept ops' constants as float32 ...
    int_weight_bytes: int = 0             # ... and as int8 / int32
    evaluations: int = 0

    @property
    def size_cost(self) -> int:
        return self.float_weight_bytes - self.int_weight_bytes

    def summary(self) -> str:
        if not self.kept:
            return (f"min-sqnr {self.target_db:g} dB: met with every op quantized "
                    f"({self.initial_db:.2f} dB)")
        verdict = "met" if self.met else "NOT met"
        return (f"min-sqnr {self.target_db:g} dB {verdict}: {self.initial_db:.2f} -> "
                f"{self.final_db:.2f} dB keeping {len(self.kept)} op(s) in float "
                f"({', '.join(self.kept)}); weights {self.int_weight_bytes} B as int -> "
                f"{self.float_weight_bytes} B as float (+{self.size_cost} B)")


def search(evaluate: Callable[[frozenset[str]], float], names: Sequence[str],
           target: float, float_graph: Graph) -> SelectiveReport:
    """Find few ops (from `names`) to keep float so that evaluate(kept) >= target."""
    report = SelectiveReport(target)
    cache: dict[frozenset[str], float] = {}

    def score(keep: Iterable[str]) -> float:
        key = frozenset(keep)
        if key not in cache:
            cache[key] = evaluate(key)
            report.evaluations += 1
        return cache[key]

    report.initial_db = report.final_db = score(())
    if report.initial_db >= target:
        report.met = True
        return report
    report.sensitivity = sorted(((n, score([n])) for n in names), key=lambda p: -p[1])
    kept: list[str] = []
    for name, _ in report.sensitivity:
        kept.append(name)
        if score(kept) >= target:
            break
    if score(kept) >= target:
        for name in list(reversed(kept)):       # least sensitive first
            trial = [n for n in kept if n != name]
            if score(trial) >= target:
                kept = trial
    report.kept = kept
    report.final_db = score(kept)
    report.met = report.final_db >= target
    report.float_weight_bytes, report.int_weight_bytes = float_cost(float_graph, kept)
    return report

