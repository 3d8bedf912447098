"""Selective quantization: keep chosen ops in float (--keep-float), or search for the fewest
ops to keep in float so the model meets a target on the calibration data: an output SQNR
(--min-sqnr DB) or an accuracy drop against labels (--max-accuracy-drop D --labels Y).

--keep-float PATTERN matches an op by its type ("CONV_2D", case-insensitive), by the TF node
it came from (op.name) or by the name of one of its output tensors (the GraphDef node name
the tensor keeps, e.g. "conv1/Relu" for a conv + bias + relu chain). The rewrite leaves the
matched ops float, with DEQUANTIZE before and QUANTIZE after where storage changes.

The search, on the calibration samples, with
    SQNR = 10 log10( sum(ref^2) / sum((ref - q)^2) )   over all model outputs (metrics.sqnr)
    drop = top-1 accuracy of the float model - top-1 accuracy of the quantized one
1. quantize everything; done if the goal is met;
2. sensitivity: for every candidate op (an integer op that is not exact in integer
   arithmetic), the SQNR of the model with only that op kept float (SQNR ranks the ops for
   both goals: accuracy on a few hundred samples moves in steps and ties);
3. greedy: keep candidates in float in decreasing sensitivity, re-measuring after each,
   until the goal is met;
4. prune: try dropping each kept op again (least sensitive first); drop it if the goal
   still holds -- so no kept op is redundant.
The size cost is what the kept ops' constants take as float32 instead of int8 / int32.

With ``Fallback.INT16`` (--fallback int16) the ops the search picks run 16x8 instead of
float: int16 activations, the same int8 weights (int64 biases), QUANTIZE int8 <-> int16
around them -- cheaper than float, and TFLite Micro runs it. A picked op without a 16x8
kernel falls back to float as before (split_fallback).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Iterable, Sequence

import numpy as np

from edgelite.errors import EdgeliteError
from ...interpreter.kernels import OPS
from edgelite.names import quoted
from ..ir import Graph, Op
from ..sample_data import names_list
from .rules import INT16_OPS, INTEGER_OPS, WEIGHT_AXIS

# Integer ops that reproduce float exactly given their input (no candidates for --min-sqnr).
EXACT_OPS = frozenset(n for n, op in OPS.items() if op.exact)


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
            f"--keep-float {', '.join(quoted(p) for p in unmatched)} matches no op: give an op "
            f"type ({', '.join(types)}) or a node name (e.g. {', '.join(map(quoted, names))})")
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


class Fallback(Enum):
    """Where --min-sqnr / --max-accuracy-drop move a sensitive op."""
    FLOAT = "float"
    INT16 = "int16"  # 16x8: int16 activations, int8 weights


def split_fallback(graph: Graph, names: Iterable[str], fallback: Fallback
                   ) -> tuple[frozenset[str], frozenset[str]]:
    """(ops to run 16x8, ops to keep float) among the ops named (by output name)."""
    names = frozenset(names)
    if fallback is Fallback.FLOAT:
        return frozenset(), names
    wide = frozenset(op.outputs[0].name for op in graph.ops
                     if op.outputs[0].name in names and op.type in INT16_OPS)
    return wide, names - wide


class GoalKind(Enum):
    MIN_SQNR = "min-sqnr"                       # value in dB
    MAX_ACCURACY_DROP = "max-accuracy-drop"     # value a fraction: 0.01 = one point


@dataclass(frozen=True)
class Measurement:
    """The quantized model on the calibration samples."""
    sqnr: float                                 # dB against the float model's outputs
    accuracy: float | None = None               # top-1 against the labels (accuracy goal)

    def __str__(self) -> str:
        acc = "" if self.accuracy is None else f", accuracy {100 * self.accuracy:.2f}%"
        return f"{self.sqnr:.2f} dB{acc}"


@dataclass(frozen=True)
class Goal:
    kind: GoalKind
    value: float
    float_accuracy: float | None = None         # the reference for MAX_ACCURACY_DROP

    def met(self, m: Measurement) -> bool:
        if self.kind is GoalKind.MIN_SQNR:
            return m.sqnr >= self.value
        # one sample is 1/N: compare in samples' worth, not in float noise
        return round(self.float_accuracy - m.accuracy, 9) <= self.value

    def __str__(self) -> str:
        if self.kind is GoalKind.MIN_SQNR:
            return f"min-sqnr {self.value:g} dB"
        return (f"max-accuracy-drop {100 * self.value:g} points (float accuracy "
                f"{100 * self.float_accuracy:.2f}%)")


@dataclass
class SelectiveReport:
    goal: Goal
    initial: Measurement | None = None    # everything quantized
    final: Measurement | None = None
    met: bool = False
    kept: list[str] = field(default_factory=list)          # ops kept float by the search
    sensitivity: list[tuple[str, float]] = field(default_factory=list)  # (op, dB) best first
    float_weight_bytes: int = 0           # the kept ops' constants as float32 ...
    int_weight_bytes: int = 0             # ... and as int8 / int32
    evaluations: int = 0
    fallback: Fallback = Fallback.FLOAT
    wide: list[str] = field(default_factory=list)  # of `kept`, the ops run 16x8

    @property
    def initial_db(self) -> float:
        return self.initial.sqnr

    @property
    def final_db(self) -> float:
        return self.final.sqnr

    @property
    def size_cost(self) -> int:
        return self.float_weight_bytes - self.int_weight_bytes

    def summary(self) -> str:
        if not self.kept and self.met:
            return f"{self.goal}: met with every op quantized ({self.initial})"
        verdict = "met" if self.met else "NOT met"
        floats = [n for n in self.kept if n not in self.wide]
        wide = f"running {len(self.wide)} op(s) 16x8 {names_list(self.wide)}" \
            if self.wide else ""
        kept = f"keeping {len(floats)} op(s) in float {names_list(floats)}" if floats else ""
        return (f"{self.goal} {verdict}: {self.initial} -> {self.final} "
                f"{'; '.join(p for p in (wide, kept) if p)}; weights "
                f"{self.int_weight_bytes} B as int -> {self.float_weight_bytes} B as float "
                f"(+{self.size_cost} B)")


def search(evaluate: Callable[[frozenset[str]], Measurement], names: Sequence[str],
           goal: Goal, float_graph: Graph, fallback: Fallback = Fallback.FLOAT
           ) -> SelectiveReport:
    """Find few ops (from `names`) to move to `fallback` so that goal.met(evaluate(kept))."""
    report = SelectiveReport(goal, fallback=fallback)
    cache: dict[frozenset[str], Measurement] = {}

    def measure(keep: Iterable[str]) -> Measurement:
        key = frozenset(keep)
        if key not in cache:
            cache[key] = evaluate(key)
            report.evaluations += 1
        return cache[key]

    def met(keep: Iterable[str]) -> bool:
        return goal.met(measure(keep))

    report.initial = report.final = measure(())
    if met(()):
        report.met = True
        return report
    report.sensitivity = sorted(((n, measure([n]).sqnr) for n in names), key=lambda p: -p[1])
    kept: list[str] = []
    for name, _ in report.sensitivity:
        kept.append(name)
        if met(kept):
            break
    if met(kept):
        for name in list(reversed(kept)):       # least sensitive first
            trial = [n for n in kept if n != name]
            if met(trial):
                kept = trial
    report.kept = kept
    report.final = measure(kept)
    report.met = met(kept)
    wide, floats = split_fallback(float_graph, kept, fallback)
    report.wide = [n for n in kept if n in wide]
    report.float_weight_bytes, report.int_weight_bytes = float_cost(float_graph, floats)
    return report
