"""Collapse consecutive STRIDED_SLICEs.

  STRIDED_SLICE(STRIDED_SLICE(x))      -> one STRIDED_SLICE of x (every reader of the first
                                          slice that is a slice is rewritten; the first goes
                                          when nothing else reads it), written without masks
                                          but the end of a negative stride (version 1 / 2)
  STRIDED_SLICE that only adds axes    -> RESHAPE (only removing some stays a slice): a
                                          new-axis mask is version 6, which LiteRT's
                                          reference kernels do not register
  STRIDED_SLICE that selects everything -> removed

A YOLO head's `p[0]` then `[:, 0:2]`, `[:, 2:4]`, `[:, 4:5]`, `[:, 5:]` becomes four slices of
p. (spell_out_ellipsis.py writes a lone slice's ellipsis out.)

A slice is resolved against its input's static shape into one (start, count, step, shrink)
per input dimension -- TF's ValidateStridedSliceOp rules: masks, negative indices wrapped
once, begin and end clamped to the dimension (to [-1, n - 1] for negative strides) -- and a
composition of two is again one such list, so only ops with constant begin / end / strides,
known shapes and no `offset` are touched; a slice with new axes is only ever turned into a
RESHAPE (when it selects everything), never composed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Op
from ..shape_inference import infer_shapes

I32 = np.int32


@dataclass(frozen=True)
class Dim:
    """One input dimension's part of a slice: indices start + k * step, k < count."""

    start: int
    count: int
    step: int
    shrink: bool = False


@dataclass(frozen=True)
class Resolved:
    dims: tuple[Dim, ...]  # one per input dimension
    new_axes: bool  # the output has axes of size 1 the input has not


def _bits(mask: int, i: int) -> bool:
    return bool((mask >> i) & 1)


def _clamp_index(v: int, n: int, step: int, masked: bool, is_begin: bool) -> int:
    if masked:  # the whole dimension in the stride's direction
        if step > 0:
            return 0 if is_begin else n
        return n - 1 if is_begin else -1
    if v < 0:
        v += n
    return min(max(v, 0), n) if step > 0 else min(max(v, -1), n - 1)


def resolve(op: Op) -> Resolved | None:
    """The slice as one Dim per input dimension, or None where this pass leaves it alone."""
    x = op.inputs[0]
    if len(op.inputs) != 4 or x.shape is None or op.options.get("offset") or \
            x.shape_signature is not None and -1 in x.shape_signature:
        return None
    if not all(t is not None and t.is_const for t in op.inputs[1:]):
        return None
    begin, end, strides = (np.asarray(t.data).reshape(-1).astype(np.int64).tolist()
                           for t in op.inputs[1:])
    if not len(begin) == len(end) == len(strides):
        return None
    o = op.options
    masks = {k: int(o.get(k, 0) or 0) for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                                 "new_axis_mask", "shrink_axis_mask")}
    rank, m = len(x.shape), len(begin)
    ellipses = [i for i in range(m) if _bits(masks["ellipsis_mask"], i)]
    if len(ellipses) > 1:
        return None
    real = sum(1 for i in range(m) if not _bits(masks["new_axis_mask"], i)
               and not _bits(masks["ellipsis_mask"], i))
    dims: list[Dim] = []
    new_axes = False
    for i in range(m):
        if _bits(masks["ellipsis_mask"], i):  # the dimensions no other entry takes
            if rank < real:
                return None
            dims += [Dim(0, x.shape[len(dims) + k], 1) for k in range(rank - real)]
            continue
        if _bits(masks["new_axis_mask"], i):
            if _bits(masks["shrink_axis_mask"], i):
                return None
            new_axes = True
            continue
        if len(dims) >= rank or strides[i] == 0:
            return None
        n = x.shape[len(dims)]
        if _bits(masks["shrink_axis_mask"], i):  # begin alone (TF ignores end and masks)
            idx = begin[i] + n if begin[i] < 0 else begin[i]
            if not 0 <= idx < n or strides[i] < 0 or _bits(masks["begin_mask"], i):
                return None
            dims.append(Dim(idx, 1, 1, True))
            continue
        s = strides[i]
        b = _clamp_index(begin[i], n, s, _bits(masks["begin_mask"], i), True)
        e = _clamp_index(end[i], n, s, _bits(masks["end_mask"], i), False)
        dims.append(Dim(b, max(0, -(-(e - b) // s)), s))
    dims += [Dim(0, n, 1) for n in x.shape[len(dims):]]
    return Resolved(tuple(dims), new_axes)


def compose(outer: tuple[Dim, ...], inner: tuple[Dim, ...]) -> tuple[Dim, ...]:
    """`inner` applied to the output of `outer` (no new axes in either), as one slice of
    outer's input."""
    it = iter(inner)
    out = []
    for d in outer:
        if d.shrink:
            out.append(d)
            continue
        e = next(it)
        out.append(Dim(d.start + e.start * d.step, e.count, d.step * e.step, e.shrink))
    return tuple(out)


def _write(graph: Graph, op: Op, x, dims: tuple[Dim, ...]) -> None:
    """Make `op` the plain STRIDED_SLICE of x selecting `dims`."""
    begin, end, strides = [], [], []
    end_mask = shrink = 0
    for i, d in enumerate(dims):
        begin.append(d.start)
        strides.append(d.step)
        stop = d.start + d.count * d.step
        if d.shrink:
            shrink |= 1 << i
            stop = d.start + 1
        elif stop < 0:  # a negative stride down to index 0: "to the start" is the mask
            end_mask |= 1 << i
            stop = 0
        end.append(stop)
    name = op.outputs[0].name
    op.inputs[:] = [x] + [graph.const(f"{name}/{what}", np.array(v, I32))
                          for what, v in (("begin", begin), ("end", end),
                                          ("strides", strides))]
    op.options.update(begin_mask=0, end_mask=end_mask, ellipsis_mask=0, new_axis_mask=0,
                      shrink_axis_mask=shrink)


def _selects_all(r: Resolved, shape) -> bool:
    return all(d.start == 0 and d.count == n and d.step == 1 and (not d.shrink or n == 1)
               for d, n in zip(r.dims, shape))


def run(graph: Graph) -> int:
    slices = graph.ops_of("STRIDED_SLICE")
    if not slices:
        return 0
    if any(t.shape is None for op in slices for t in (op.inputs[0], op.outputs[0])):
        infer_shapes(graph, strict=False)
    n = 0
    for op in reversed(slices):  # readers first: they collapse into their producer's input
        y = op.outputs[0]
        if not graph.consumers(y) and not graph.is_output(y):
            continue  # dead (a producer whose readers all collapsed)
        r = resolve(op)
        if r is None or y.shape is None:
            continue
        x = op.inputs[0]
        everything = _selects_all(r, x.shape)
        if everything and tuple(y.shape) == tuple(x.shape):
            if not (graph.is_output(y) and graph.is_output(x)):
                graph.bypass(op, x)
                n += 1
            continue
        if r.new_axes:
            if everything:  # only axes of size 1 added (and maybe some removed): a RESHAPE
                op.type = "RESHAPE"
                op.inputs[:] = [x, graph.const(f"{y.name}/shape", np.array(y.shape, I32))]
                op.options = dict(new_shape=[int(d) for d in y.shape])
                n += 1
            continue
        producer = graph.producer(x)
        outer = resolve(producer) if producer is not None and \
            producer.type == "STRIDED_SLICE" else None
        if outer is not None and not outer.new_axes:
            _write(graph, op, producer.inputs[0], compose(outer.dims, r.dims))
            n += 1
    return n
