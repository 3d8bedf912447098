"""Compute int64 arithmetic LiteRT has no int64 kernel for in int32 where the values
provably fit; refuse the rest.

LiteRT refuses int64 FLOOR_DIV ("Type 'INT64' is not supported by floor_div"), DIV, ABS,
SIGN, SQUARED_DIFFERENCE and POW in Prepare (measured; TF's own converter writes Flex ops
there), so a file with one does not load. They come from index and shape arithmetic on
int64 tensors (tf.shape / tf.argmax / tf.where results, `//` on int64 ids); most fold to
constants, and the rest almost always hold small values. This pass bounds every int64
tensor such an op reads with interval arithmetic (constants, tensors cast from a
narrower type, shapes and indices, ops that only move values, + - * // % of bounded
values); when the operands and the result all lie in int32 (so INT32_MIN / -1 does not
qualify) the op becomes CAST -> the int32 op -> CAST, which gives the same values.
Otherwise it raises one line naming the op: the model must cast to int32 itself.
(Integer SQUARE, which LiteRT refuses for int32 too, is lowered to MUL: activations.py.)

Required for export: without it the file would not load in LiteRT.
"""

from __future__ import annotations

import numpy as np

from edgelite.errors import UnsupportedOpError
from edgelite.names import quoted
from ..ir import Graph, Op, Tensor

INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
_I32, _I64 = np.dtype(np.int32), np.dtype(np.int64)
DIVISIONS = ("FLOOR_DIV", "DIV")
NARROWED = DIVISIONS + ("ABS", "SIGN", "SQUARED_DIFFERENCE", "POW")  # no int64 kernel

# Ops whose output values are some of their inputs' (input positions that carry data).
_MOVERS = {
    "RESHAPE": (0,), "SQUEEZE": (0,), "EXPAND_DIMS": (0,), "TRANSPOSE": (0,), "GATHER": (0,),
    "GATHER_ND": (0,), "SLICE": (0,), "STRIDED_SLICE": (0,), "TILE": (0,), "REVERSE_V2": (0,),
    "BROADCAST_TO": (0,), "UNPACK": (0,), "SPLIT": (1,), "SPLIT_V": (0,), "SELECT": (1, 2),
    "SELECT_V2": (1, 2), "MAXIMUM": (0, 1), "MINIMUM": (0, 1), "PADV2": (0, 2),
    "CONCATENATION": None, "PACK": None,  # None: every input
}
# Ops whose outputs are indexes or sizes (below 2^31 in TFLite): every output, or the
# positions given -- UNIQUE's and TOPK_V2's first output is values taken from input 0.
_INDEXES = {"SHAPE": None, "SIZE": None, "RANK": None, "ARG_MAX": None, "ARG_MIN": None,
            "WHERE": None, "UNIQUE": (1,), "TOPK_V2": (1,)}
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
            positions = _INDEXES[kind]
            if positions is None or op.outputs.index(t) in positions:
                return 0, INT32_MAX
            return self.of(op.inputs[0], depth)  # values moved from the input
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
        if not args or any(a is None for a in args):
            return None
        return _arithmetic(kind, *args)


def _union(bounds):
    if not bounds or any(b is None for b in bounds):
        return None
    return min(b[0] for b in bounds), max(b[1] for b in bounds)


def _arithmetic(kind: str, a, b=None):
    """Bounds of kind's result for operands in [a0, a1] (and [b0, b1]); None: unknown."""
    m = max(abs(a[0]), abs(a[1]))
    unary = {"NEG": (-a[1], -a[0]), "ABS": (0, m), "SIGN": (-1, 1)}
    if kind in unary or b is None:
        return unary.get(kind)
    if kind == "ADD":
        return a[0] + b[0], a[1] + b[1]
    if kind == "SUB":
        return a[0] - b[1], a[1] - b[0]
    if kind == "MUL":
        corners = [x * y for x in a for y in b]
        return min(corners), max(corners)
    if kind in DIVISIONS:
        if b[0] <= -1 <= b[1]:  # a / -1 = -a
            return -m, m
        # b >= 1 keeps the quotient between 0 and a; b <= -2 at least halves it
        return min(a[0], 0, -(m // 2 + 1)), max(a[1], 0, m // 2 + 1)
    if kind == "FLOOR_MOD":  # |a mod b| < |b|
        n = max(abs(b[0]), abs(b[1]))
        return -n, n
    if kind == "SQUARED_DIFFERENCE":
        d = max(abs(a[0] - b[1]), abs(a[1] - b[0]))
        return 0, d * d
    if kind == "POW" and b[0] >= 0 and (m <= 1 or b[1] <= 64):
        top = m ** b[1] if m > 1 else 1
        return -top, top
    if kind == "RANGE":
        return min(a[0], b[0]), max(a[1], b[1])
    return None


def _fits(bounds) -> bool:
    return bounds is not None and INT32_MIN <= bounds[0] and bounds[1] <= INT32_MAX


def _problem(graph: Graph, op: Op, bounds: Bounds) -> str | None:
    """Why op cannot run in int32 (None: it can)."""
    args = []
    for t in op.inputs:
        b = bounds.of(t)
        if not _fits(b):
            what = f"values in [{b[0]}, {b[1]}]" if b is not None else "a model input" \
                if graph.producer(t) is None else "values edgelite cannot bound"
            return f"{quoted(t.name)} ({what}) may not fit int32"
        args.append(b)
    if not _fits(_arithmetic(op.type, *args)):
        return (f"its result may not fit int32 (operands in "
                f"{', '.join(f'[{lo}, {hi}]' for lo, hi in args)})")
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
    problem = _problem(graph, op, bounds)
    if problem is not None:
        raise UnsupportedOpError(
            f"operator {quoted(op.name)} ({op.type}): int64 {op.type}, which LiteRT cannot "
            f"run (its kernel takes no INT64): {problem}; cast the operands to int32 in "
            "the model")
    y = op.outputs[0]
    narrow = [_as_int32(graph, op, t, k) for k, t in enumerate(op.inputs)]
    result = graph.tensor(f"{y.name}/int32", _I32, y.shape)
    graph.insert_op(Op(op.type, narrow, [result], dict(op.options), op.name,
                       origin=op.origin), before=op)
    graph.replace_op(op, Op("CAST", [result], [y], {}, op.name, origin=op.origin))


def run(graph: Graph) -> int:
    ops = [op for op in graph.ops_of(*NARROWED) if op.outputs[0].dtype == _I64]
    if not ops:
        return 0
    bounds = Bounds(graph)
    for op in ops:
        _narrow(graph, op, bounds)
    return len(ops)
