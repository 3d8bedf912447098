"""Ops that must stay float whatever the options say, and the check that every tensor the
integer rewrite needs has a range."""

from __future__ import annotations

import numpy as np

from edgelite.errors import EdgeliteError
from ...interpreter.kernels import OPS
from edgelite.names import quoted
from ..ir import Graph, all_graphs
from .params import QType, activation
from .rules import FIXED_OUTPUT, INTEGER_OPS, SAME_AS_INPUT


def non_finite_ops(graph: Graph, ranges, calibrated: bool) -> frozenset[str]:
    """Ops about NaN and inf, which int8 cannot hold, stay float (named by their first output,
    as --keep-float takes them): IsFinite's SUB and EQUAL (x - x == 0: calibrated, x - x is
    the single value 0, which a quantized comparison cannot take; TF 2.21's int8 file makes
    them int8 with the output scale 7.8e-9, which LiteRT's SUB does not rescale to -- see
    interpreter/kernels/common/add_paths.py -- and gets True from EQUAL's own rescaling; float
    costs no op more), and after calibration the ops writing or reading a float activation it gave no
    range because it held NaN or inf on every sample (the log of a negative number)."""
    def unranged(t) -> bool:
        return (calibrated and t is not None and t.dtype == np.float32 and not t.is_const
                and t.range is None and t.name not in ranges and not graph.is_input(t))
    return frozenset(op.outputs[0].name for op in graph.ops if op.outputs and (
        op.origin == "IsFinite" or any(map(unranged, (*op.inputs, *op.outputs)))))


COMPARISONS = frozenset(n for n, op in OPS.items() if op.comparison)


def outside_kernels(graph: Graph, ranges, qtype: QType) -> frozenset[str]:
    """Ops whose integer kernels cannot take what calibration saw stay float: a comparison
    of a tensor whose scale would be 1 or more (comparisons.cc then shifts by a negative
    amount: undefined), a DIV whose divisor's range comes within half a step of 0 (a
    divisor quantized to the zero point: div.cc refuses it at invoke). Index arithmetic a graph does in float (loop counters, box areas) is where
    they come from."""
    def span(t) -> tuple[float, float] | None:
        if t.is_const:
            return (float(t.data.min()), float(t.data.max())) if t.data.size else None
        return t.range or ranges.get(t.name)

    def coarse(t) -> bool:
        r = span(t)
        return r is not None and float(activation(r[0], r[1], qtype).scale[0]) >= 1.0

    kept = set()
    for op in graph.ops:
        floats = [t for t in op.inputs if t is not None and t.dtype == np.float32]
        if op.type in COMPARISONS and any(map(coarse, floats)):
            kept.add(op.outputs[0].name)
        elif op.type == "DIV" and len(op.inputs) > 1 and op.inputs[1].dtype == np.float32:
            r = span(op.inputs[1])  # a divisor within half a step of 0 quantizes to 0
            half = float(activation(*r, qtype).scale[0]) / 2 if r is not None else 0.0
            if r is not None and r[0] - half <= 0.0 <= r[1] + half:
                kept.add(op.outputs[0].name)
    return frozenset(kept)


def never_ran(graph: Graph, inner: dict[int, dict]) -> frozenset[str]:
    """Ops of a subgraph that calibration never ran (a loop whose body no sample entered,
    an IF branch never taken) stay float: no range was seen for their activations. The
    subgraph's inputs and outputs are not asked: the caller's tensors give them theirs."""
    kept = set()
    for k, sub in enumerate(all_graphs(graph)[1:], 1):
        seen = inner.get(k, {})
        edge = {id(t) for t in (*sub.inputs, *sub.outputs)}

        def unranged(t) -> bool:
            return (t is not None and t.dtype == np.float32 and not t.is_const
                    and id(t) not in edge and t.range is None and t.name not in seen)
        kept |= {op.outputs[0].name for op in sub.ops
                 if op.outputs and any(map(unranged, (*op.inputs, *op.outputs)))}
    return frozenset(kept)


def check_ranges(graph: Graph, ranges, given: set[str],
                  kept_float: frozenset[str] = frozenset()) -> None:
    """One error naming every tensor that needs a range and has none."""
    need = [t for t in graph.inputs if t.dtype == np.float32 and t.name not in given]
    for op in graph.ops:
        if op.outputs and op.outputs[0].name in kept_float:
            continue
        if op.type in INTEGER_OPS and op.type not in set(FIXED_OUTPUT) | SAME_AS_INPUT:
            need += [t for t in op.outputs if t.dtype == np.float32]
    missing = [t.name for t in need if t.range is None and t.name not in ranges]
    if missing:
        listed = ", ".join(quoted(n) for n in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise EdgeliteError(
            f"{len(missing)} tensor(s) have no range: {listed}{more}. Calibrate with --calib "
            "DATA, or give ranges with --input-range / --mean-std (inputs) or "
            "--default-range MIN,MAX")
