"""Compute int64 FLOOR_DIV / DIV in int32 where the values provably fit; refuse the rest.

LiteRT has no int64 division: floor_div.cc refuses it in Prepare ("Type 'INT64' is not
supported by floor_div") and div.cc likewise, so a file with one does not load (TF's own
converter writes FlexFloorDiv there). Such divisions come from index and shape arithmetic
on int64 tensors (tf.shape / tf.argmax / tf.where results, `//` on int64 ids); most fold
to constants, and the rest almost always hold small values. This pass bounds every int64
tensor the division reads with interval arithmetic (constants, tensors cast from a
narrower type, shapes and indices, ops that only move values, + - * // % of bounded
values); when both operands lie in int32 (and not INT32_MIN / -1, whose quotient does
not) the op becomes CAST -> int32 division -> CAST, which gives the same result.
Otherwise it raises one line naming the op: the model must cast to int32 itself.

Required for export: without it the file would not load in LiteRT.
"""

from __future__ import annotations

import numpy as np

from ...interpreter.errors import UnsupportedOpError
from ...interpreter.names import quoted
from ..ir import Graph, Op, Tensor

INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
_I32, _I64 = np.dtype(np.int32), np.dtype(np.int64)
DIVISIONS = ("FLOOR_DIV", "DIV")

# Ops whose output values are some of their inputs' (input positions that carry data).
_MOVERS = {
    "RESHAPE": (0,), "SQUEEZE": (0,), "EXPAND_DIMS": (0,), "TRANSPOSE": (0,), "GATHER": (0,),
    "GATHER_ND": (0,), "SLICE": (0,), "STRIDED_SLICE": (0,), "TILE": (0,), "REVERSE_V2": (0,),
    "BROADCAST_TO": (0,), "UNPACK": (0,), "SPLIT": (1,), "SPLIT_V": (0,), "SELECT": (1, 2),
    "SELECT_V2": (1, 2), "MAXIMUM": (0, 1), "MINIMUM": (0, 1), "PADV2": (0, 2),
    "CONCATENATION": None, "PACK": None,  # None: every input
}
# Ops whose (first) output is an index or a size: below 2^31 in TFLite.
_INDEXES = {"SHAPE", "SIZE", "RANK", "ARG_MAX", "ARG_MIN", "WHERE", "UNIQUE", "TOPK_V2"}
_MAX_DEPTH = 400


class Bounds:
    """Value bounds [lo, hi] of integer tensors (None: unknown), worked out on demand."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.memo: dict[int, tuple[Tensor, tuple[int, int] | None]] = {}  # id -> (t, bounds)

    def of(self, t: Tensor, depth: int = 0) -> tuple[int, int] | None:
        key = id(t)
        if key not in self.memo:
            self.memo[key] = t, None if depth > _MAX_DEPTH else self._compute(t, depth)
        return self.memo[key][1]

    def _compute(self, t: Tensor, depth: int):
        if t.dtype.kind == "b":
            return 0, 1
        if t.dtype.kind not in "iu":
            return None
        if t.is_const:
            data = np.asarray(t.data)
            return (int(data.min()), int(data.max())) if data.size else (0, 0)
        if t.dtype.itemsize < 8:
            info = np.iinfo(t.dtype)
            return int(info.min), int(info.max)
        op = self.graph.producer(t)
        if op is None:
            return None  # a model input (or a subgraph's): any int64
        return self._through(op, t, depth + 1)

    def _through(self, op: Op, t: Tensor, depth: int):
        kind = op.type
        if kind in _INDEXES:
            return 0, INT32_MAX
        if kind == "CAST":
            return self.of(op.inputs[0], depth)
        if kind in _MOVERS:
            picks = _MOVERS[kind]
            ins = op.inputs if picks is None else [op.inputs[i] for i in picks
                                                   if i < len(op.inputs)]
            return _union([self.of(x, depth) for x in ins if x is not None])
        if kind == "PAD":
            return _union([self.of(op.inputs[0], depth), (0, 0)])
        args = [self.of(x, depth) for x in op.inputs[:2]]
        if any(a is None for a in args):
            return None
        return _arithmetic(kind, *args)


def _union(bounds):
    if not bounds or any(b is None for b in bounds):
        return None
    return min(b[0] for b in bounds), max(b[1] for b in bounds)


def _arithmetic(kind: str, a, b=None):
    if kind == "NEG":
        return -a[1], -a[0]
    if kind == "ABS":
        return 0, max(abs(a[0]), abs(a[1]))
    if b is None:
        return None
    if kind == "ADD":
        return a[0] + b[0], a[1] + b[1]
    if kind == "SUB":
        return a[0] - b[1], a[1] - b[0]
    if kind == "MUL":
        corners = [x * y for x in a for y in b]
        return min(corners), max(corners)
    if kind in DIVISIONS:  # |a / b| <= |a| for an integer b != 0
        m = max(abs(a[0]), abs(a[1]))
        return -m, m
    if kind == "FLOOR_MOD":  # |a mod b| < |b|
        m = max(abs(b[0]), abs(b[1]))
        return -m, m
    if kind == "RANGE":
        return min(a[0], b[0]), max(a[1], b[1])
    return None


def _fits(bounds) -> bool:
    return bounds is not None and INT32_MIN <= bounds[0] and bounds[1] <= INT32_MAX


def _problem(graph: Graph, a: Tensor, b: Tensor, ba, bb) -> str | None:
    """Why the division cannot run in int32 (None: it can). Besides operands outside
    int32, INT32_MIN / -1 overflows (and traps in C++)."""
    for t, bounds in ((a, ba), (b, bb)):
        if not _fits(bounds):
            source = "a model input" if graph.producer(t) is None and not t.is_const else \
                "values edgelite cannot bound"
            return f"of {quoted(t.name)}, {source} that may not fit int32"
    if ba[0] == INT32_MIN and bb[0] <= -1 <= bb[1]:
        return (f"of {quoted(a.name)}, which may be -2^31, by {quoted(b.name)}, which may be "
                "-1: the quotient 2^31 does not fit int32")
    return None


def _as_int32(graph: Graph, op: Op, t: Tensor, k: int) -> Tensor:
    """t (int64, values in int32) as an int32 tensor: constants converted, a CAST from a
    narrower type undone (or made a CAST to int32), anything else cast in front of op."""
    if t.is_const:
        return graph.const(f"{op.name}/int32_operand{k}", np.asarray(t.data).astype(np.int32))
    producer = graph.producer(t)
    if producer is not None and producer.type == "CAST" and _narrower(producer.inputs[0]):
        t = producer.inputs[0]  # cast the source instead (the wide CAST may become dead)
        if t.dtype == _I32:
            return t
    out = graph.tensor(f"{t.name}/int32", _I32, t.shape)
    graph.insert_op(Op("CAST", [t], [out], {}, op.name, origin=op.origin), before=op)
    return out


def _narrower(t: Tensor) -> bool:
    """Every value of t's type is an int32 value."""
    return t.dtype.kind == "b" or (t.dtype.kind in "iu" and t.dtype.itemsize < 4) or \
        t.dtype == _I32


def _narrow(graph: Graph, op: Op, bounds: Bounds) -> None:
    a, b = op.inputs[:2]
    problem = _problem(graph, a, b, bounds.of(a), bounds.of(b))
    if problem is not None:
        raise UnsupportedOpError(
            f"operator {quoted(op.name)} ({op.type}): int64 division, which LiteRT cannot "
            f"run (its {op.type.lower()} kernel takes no INT64), {problem}; cast the "
            "operands to int32 in the model")
    y = op.outputs[0]
    narrow = [_as_int32(graph, op, a, 0), _as_int32(graph, op, b, 1)]
    quotient = graph.tensor(f"{y.name}/int32", _I32, y.shape)
    graph.insert_op(Op(op.type, narrow, [quotient], dict(op.options), op.name,
                       origin=op.origin), before=op)
    graph.replace_op(op, Op("CAST", [quotient], [y], {}, op.name, origin=op.origin))


def run(graph: Graph) -> int:
    ops = [op for op in graph.ops if op.type in DIVISIONS and op.outputs[0].dtype == _I64]
    if not ops:
        return 0
    bounds = Bounds(graph)
    for op in ops:
        _narrow(graph, op, bounds)
    return len(ops)
