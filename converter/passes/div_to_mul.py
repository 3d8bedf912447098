"""Divide by a float constant as TensorFlow does: x / c becomes x * (1 / c).

TF rewrites every float Div / RealDiv (and Xdivy) whose denominator is a constant into
Mul(x, Reciprocal(c)) and folds the reciprocal (grappler, constant_folding.cc
ReduceDivToReciprocalMul: "strength reduce floating point division by a constant"; integer
Div is left alone). Its converter and its own session run that graph, so TF's golden outputs
and TF's .tflite (a MUL by 1/c) both compute x * float32(1 / c) -- which differs from x / c in
the last bit for most c that are not powers of two (3, 0.1, ...). This pass makes edgelite
compute the same numbers with the same op count: a DIV (no fused activation) of a float32
tensor by a float32 constant becomes a MUL by the constant's correctly rounded float32
reciprocal, bit-exact with TF for a scalar c. (For a constant of 8 or more elements TF folds
the reciprocal with Eigen's vectorised kernel, an approximate reciprocal plus a Newton step:
1 / 2 = 0.49999997 on AVX; that value depends on the machine's instruction set, so it is not
reproduced; the difference is one unit in the last place of the reciprocal.)

c / x (a constant numerator) stays a DIV, as in TF. Division by zero gives the same values
either way: x * inf = x / 0 for every x (both NaN for x = 0).

Grappler rewrites graph Div nodes only: a DIV a lowering rule writes for a TF kernel's own
arithmetic stays a division (KERNEL_DIVISIONS: CropAndResize's (y2 - y1) * (H - 1) /
(crop_h - 1), where a last-bit difference moves a box edge off the image).
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Op

F32 = np.dtype(np.float32)
KERNEL_DIVISIONS = frozenset({"CropAndResize"})  # TF op types whose kernels divide


def run(graph: Graph) -> int:
    n = 0
    for op in graph.ops_of("DIV"):
        x, c = op.inputs[:2]
        if x is None or c is None or x.is_const or not c.is_const \
                or op.origin in KERNEL_DIVISIONS:
            continue
        if op.options.get("fused_activation_function", 0) or x.dtype != F32 or c.dtype != F32:
            continue
        with np.errstate(divide="ignore"):
            recip = (np.float32(1) / c.data).astype(np.float32)
        mul = Op("MUL", [x, graph.const(f"{c.name}/reciprocal", recip)], list(op.outputs),
                 dict(op.options), op.name, origin=op.origin)
        graph.replace_op(op, mul)
        n += 1
    return n
