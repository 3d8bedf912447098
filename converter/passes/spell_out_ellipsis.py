"""Spell out a STRIDED_SLICE's ellipsis, as TF's converter does (prepare_tf.cc,
ConvertTFStridedSlice): x[..., 0] on a rank-3 x becomes x[:, :, 0].

With the input's rank known, constant begin / end / strides and no new axis, the k dims the
ellipsis stands for become k full-range entries (begin and end mask bits, stride 1) and the
later entries' mask bits move up by k - 1: the same slice without the ellipsis_mask, which
makes a STRIDED_SLICE version 6 -- a version LiteRT's reference kernels (BUILTIN_REF) do not
register, so a file with it does not load there. Shapes are inferred op by op first where an
ellipsis needs its input's rank.
"""

from __future__ import annotations

import numpy as np

from ..ir import PSEUDO_OPS, Graph
from ..shape_inference import infer_op_shapes


def _spelled(op):
    x, *operands = op.inputs[:4]
    masks = op.options
    e = masks.get("ellipsis_mask", 0)
    if not e or e & (e - 1) or masks.get("new_axis_mask", 0) or x.shape is None \
            or not all(t is not None and t.is_const and t.data.ndim == 1 for t in operands):
        return None
    pos, n = e.bit_length() - 1, len(operands[0].data)
    k = len(x.shape) - (n - 1)
    if k < 0 or pos >= n:
        return None

    def moved(m: int, fill: bool) -> int:
        lo, hi = m & ((1 << pos) - 1), m >> (pos + 1)
        return lo | (((1 << k) - 1) << pos if fill else 0) | (hi << (pos + k))

    values = [np.concatenate([t.data[:pos], np.full(k, fill, t.data.dtype), t.data[pos + 1:]])
              for t, fill in zip(operands, (0, 0, 1))]
    return values, dict(masks, begin_mask=moved(masks.get("begin_mask", 0), True),
                        end_mask=moved(masks.get("end_mask", 0), True), ellipsis_mask=0,
                        shrink_axis_mask=moved(masks.get("shrink_axis_mask", 0), False))


def run(graph: Graph) -> int:
    if not any(op.options.get("ellipsis_mask", 0) for op in graph.ops_of("STRIDED_SLICE")):
        return 0
    n = 0
    for op in list(graph.ops):
        if op.type == "STRIDED_SLICE" and op.options.get("ellipsis_mask", 0):
            spelled = _spelled(op)
            if spelled is not None:
                values, op.options = spelled
                for i, v in enumerate(values, 1):
                    op.inputs[i] = graph.const(op.inputs[i].name, v)
                n += 1
        if any(t.shape is None for t in op.outputs) and op.type != "CUSTOM" \
                and op.type not in PSEUDO_OPS:
            infer_op_shapes(op)
    return n
