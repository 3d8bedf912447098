"""Spell out a STRIDED_SLICE's new axes as a RESHAPE in front of it, as TF's converter does
(prepare_tf.cc, ConvertTFStridedSlice): x[:, None, :] on x [B, T] becomes
STRIDED_SLICE(RESHAPE(x, [B, 1, T]), full ranges).

A new_axis_mask (or an ellipsis next to one) makes a STRIDED_SLICE version 6, which LiteRT's
reference kernels (BUILTIN_REF) do not register, so a file with one does not load there --
Keras' `mask[:, None, :]` and TF's `x[tf.newaxis]` write them. With the input's shape and
the begin / end / strides constant, the new axes become size-1 dims of a RESHAPE of the
input and full-range entries of the slice; an ellipsis becomes the full-range entries of
the dims it stands for (its rule: TF's BuildDenseSpec, an ellipsis bit wins over a new-axis
bit, a new-axis bit over a shrink bit). One dimension known only at run time (-1 in the
input's shape signature, a dynamic batch) is -1 in the RESHAPE's shape; two keep the slice.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Op

I32 = np.int32
MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _bit(mask: int, i: int) -> bool:
    return bool(mask >> i & 1)


def _dense(op: Op):
    """(reshaped input shape, begin, end, strides, masks) without new axes or an ellipsis,
    or None when the slice is left alone."""
    x, *operands = op.inputs[:4]
    if len(op.inputs) != 4 or x.shape is None or op.options.get("offset") or \
            list(x.shape_signature or ()).count(-1) > 1 or \
            not all(t is not None and t.is_const and t.data.ndim == 1 for t in operands):
        return None
    m = {k: int(op.options.get(k, 0) or 0) for k in MASKS}
    values = [np.asarray(t.data).astype(np.int64).tolist() for t in operands]
    n = len(values[0])
    if not m["new_axis_mask"] or any(len(v) != n for v in values) or \
            bin(m["ellipsis_mask"]).count("1") > 1:
        return None
    kinds = ["ellipsis" if _bit(m["ellipsis_mask"], i) else
             "new" if _bit(m["new_axis_mask"], i) else "dim" for i in range(n)]
    rank = len(x.shape)
    spare = rank - kinds.count("dim")
    if spare < 0:
        return None
    dims = x.shape_signature if x.shape_signature is not None else x.shape
    shape, axis = [], 0
    out = {"begin": [], "end": [], "strides": [], "begin_mask": 0, "end_mask": 0,
           "shrink_axis_mask": 0}

    def entry(b, e, s, bmask, emask, shrink):
        j = len(out["begin"])
        out["begin"].append(b)
        out["end"].append(e)
        out["strides"].append(s)
        out["begin_mask"] |= bmask << j
        out["end_mask"] |= emask << j
        out["shrink_axis_mask"] |= shrink << j

    for i, kind in enumerate(kinds):
        if kind == "new":
            shape.append(1)
            entry(0, 1, 1, 1, 1, 0)
            continue
        count = spare if kind == "ellipsis" else 1
        for _ in range(count):
            shape.append(int(dims[axis]))
            axis += 1
            if kind == "ellipsis":
                entry(0, 0, 1, 1, 1, 0)
        if kind == "dim":
            entry(values[0][i], values[1][i], values[2][i], int(_bit(m["begin_mask"], i)),
                  int(_bit(m["end_mask"], i)), int(_bit(m["shrink_axis_mask"], i)))
    shape += [int(d) for d in dims[axis:]]
    return shape, out


def run(graph: Graph) -> int:
    n = 0
    for op in [op for op in graph.ops_of("STRIDED_SLICE")
               if op.options.get("new_axis_mask", 0)]:
        dense = _dense(op)
        if dense is None:
            continue
        shape, out = dense
        x, name = op.inputs[0], op.outputs[0].name
        static = [int(np.prod(x.shape)) // max(1, -int(np.prod(shape))) if d == -1 else d
                  for d in shape]
        reshaped = graph.tensor(f"{name}/new_axes", x.dtype, tuple(static))
        if -1 in shape:
            reshaped.shape_signature = tuple(shape)
        graph.insert_op(Op("RESHAPE", [x, graph.const(f"{name}/new_axes_shape",
                                                       np.asarray(shape, I32))],
                           [reshaped], {"new_shape": shape}), before=op)
        op.inputs[:4] = [reshaped] + [graph.const(f"{name}/{k}", np.asarray(out[k], I32))
                                      for k in ("begin", "end", "strides")]
        op.options.update(begin_mask=out["begin_mask"], end_mask=out["end_mask"],
                          shrink_axis_mask=out["shrink_axis_mask"], ellipsis_mask=0,
                          new_axis_mask=0)
        n += 1
    return n
