"""Einsum -> TRANSPOSE / RESHAPE / BATCH_MATMUL, or FULLY_CONNECTED for a dense layer.

TFLite has no einsum; TF's converter rewrites tf.Einsum before legalizing it
(tensorflow/compiler/mlir/tensorflow/transforms/einsum.cc): every index of a two-operand
equation is a batch index (in both operands and the output), a contracted one (both operands,
not the output), or a free index of one operand (in it and the output); an index found in one
operand only and not in the output is summed away first. Each operand is transposed to
[batch, free, contracted] (or [batch, contracted, free], read with adj_x / adj_y), reshaped to
rank batch + 2, multiplied with BATCH_MATMUL, reshaped back and transposed to the output's
order. Here the operands are also swapped when the output lists the second one's free indices
first, which saves the final transpose of attention's `aecd,abcd->acbe`.

A constant operand without batch indices is a dense layer (Keras EinsumDense, the projections
of MultiHeadAttention: `abc,cde->abde`, `abcd,cde->abe`): FULLY_CONNECTED with weights
[free, contracted], which flattens its input to rows of the contracted size itself.

One-operand equations are a sum over the dropped indices and a transpose. A sum is written
as MEAN times the count (see _Emitter.reduce_sum). An index repeated
in one operand (a diagonal or trace) has no TFLite lowering and is refused.
"""

from __future__ import annotations

import math
import string

import numpy as np

from edgelite.errors import ShapeError, UnsupportedOpError
from edgelite.names import quoted
from ..ir import PSEUDO_OPS, Activation, Tensor
from ..passes.fold_constants import try_fold
from ..shape_inference import infer_op_shapes
from .context import LowerCtx, attr_str, fail
from .spec import FLOAT, Attr, In, Lowering, spec

_LETTERS = frozenset(string.ascii_letters)
_ELLIPSIS = "..."


# --------------------------------------------------------------------------- the equation
def parse(equation: str, ranks: list[int]) -> tuple[list[list[str]], list[str]]:
    """The labels of each operand and of the output, "..." expanded into labels ".0", ".1",
    ... (right-aligned across operands, as broadcasting aligns them). Raises ValueError with
    the reason when the equation is malformed or takes a diagonal."""
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->", 1)
    else:
        lhs, out = eq, None
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"names {len(terms)} operand(s) but the node has {len(ranks)}")
    n_ell = 0
    for term, rank in zip(terms, ranks):
        _check_term(term)
        if _ELLIPSIS in term:
            n_ell = max(n_ell, rank - (len(term) - 3))
    ell = [f".{k}" for k in range(n_ell)]
    labels = []
    for i, (term, rank) in enumerate(zip(terms, ranks)):
        letters = len(term) - (3 if _ELLIPSIS in term else 0)
        if _ELLIPSIS in term:
            if rank < letters:
                raise ValueError(f"operand {i} has rank {rank}, below the {letters} indices of "
                                 f"'{term}'")
            head, tail = term.split(_ELLIPSIS)
            labels.append(list(head) + ell[n_ell - (rank - letters):] + list(tail))
        elif rank != letters:
            raise ValueError(f"operand {i} has rank {rank} but '{term}' names {letters} "
                             "indices")
        else:
            labels.append(list(term))
        repeated = sorted({c for c in labels[-1] if labels[-1].count(c) > 1})
        if repeated:
            raise ValueError(f"index '{repeated[0]}' appears twice in operand {i} (a diagonal "
                             "or trace); TFLite has no op for it")
    if out is None:  # implicit form: "..." first, then the indices used once, sorted
        counts = [c for ls in labels for c in ls if not c.startswith(".")]
        out_labels = ell + sorted(c for c in set(counts) if counts.count(c) == 1)
    else:
        _check_term(out)
        head, _, tail = out.partition(_ELLIPSIS)
        out_labels = list(head) + (ell if _ELLIPSIS in out else []) + list(tail)
        seen = set().union(*map(set, labels))
        for c in out_labels:
            if out_labels.count(c) > 1:
                raise ValueError(f"index '{c}' appears twice in the output")
            if c not in seen:
                raise ValueError(f"output index '{c}' is in no operand")
    return labels, out_labels


def _check_term(term: str) -> None:
    rest = term.replace(_ELLIPSIS, "", 1)
    if _ELLIPSIS in rest or not set(rest) <= _LETTERS:
        raise ValueError(f"'{term}' is not a list of letters with at most one '...'")


# --------------------------------------------------------------------------- shapes
def static_shape(ctx: LowerCtx, node, t: Tensor) -> tuple[int, ...]:
    """t's shape; the shapes of the ops lowered so far are worked out first if needed
    (Shape ops of static tensors fold, as the fold_shapes pass folds them)."""
    if t.shape is None:
        for op in list(ctx.graph.ops):
            if op not in ctx.graph.ops or all(o.shape is not None for o in op.outputs):
                continue
            if op.type == "SHAPE" and op.inputs[0].shape is not None:
                out = op.outputs[0]
                out.data = np.asarray(op.inputs[0].shape, dtype=out.dtype)
                out.shape = tuple(out.data.shape)
                ctx.graph.remove_op(op)
            elif op.type in PSEUDO_OPS:
                _pseudo_shape(op)
            elif not try_fold(ctx.graph, op) and op.type != "CUSTOM":
                infer_op_shapes(op)
    producer = ctx.graph.producer(t)
    if t.shape is None or (producer is not None and producer.type == "RESHAPE"
                           and not producer.inputs[1].is_const):  # a shape from values
        raise fail(ShapeError, node, f"the shape of {quoted(t.name)} is not static; give the "
                   "model's input shapes (--input-shape) so the node can be lowered")
    return tuple(t.shape)


def _pseudo_shape(op) -> None:
    """Output shapes of the converter-only ops (the interpreter cannot prepare them)."""
    shapes = [t.shape for t in op.inputs]
    if any(sh is None for sh in shapes):
        return
    if op.type == "MATMUL":
        (a0, a1), (b0, b1) = shapes
        op.outputs[0].shape = (a1 if op.options["transpose_a"] else a0,
                               b0 if op.options["transpose_b"] else b1)
    else:  # IDENTITY, ERF, ERFC: element-wise
        op.outputs[0].shape = shapes[0]


# --------------------------------------------------------------------------- lowering
class _Emitter:
    """Adds the ops of one Einsum node, each output tensor shaped (later rules and passes
    read the shapes)."""

    def __init__(self, ctx: LowerCtx, node) -> None:
        self.ctx, self.node, self.k = ctx, node, 0

    def op(self, type_, inputs, shape, options=None, dtype=None) -> Tensor:
        dtype = dtype or inputs[0].dtype
        self.k += 1
        t = self.ctx.graph.tensor(f"{self.node.name}/{type_.lower()}_{self.k}", dtype,
                                  tuple(int(d) for d in shape))
        op = self.ctx.graph.add_op(type_, inputs, [t], options, name=self.node.name)
        op.origin = self.node.op
        try_fold(self.ctx.graph, op)
        return t

    def transpose(self, x: Tensor, labels: list[str], order: list[str]) -> Tensor:
        if labels == order:
            return x
        perm = [labels.index(c) for c in order]
        return self.op("TRANSPOSE", [x, self.const("perm", np.array(perm, np.int32))],
                       [x.shape[p] for p in perm])

    def reshape(self, x: Tensor, shape) -> Tensor:
        shape = [int(d) for d in shape]
        if list(x.shape) == shape:
            return x
        return self.op("RESHAPE", [x, self.const("shape", np.array(shape, np.int32))], shape,
                       dict(new_shape=shape))

    def reduce_sum(self, x: Tensor, labels: list[str], keep: set[str]) -> tuple[Tensor, list]:
        axes = [i for i, c in enumerate(labels) if c not in keep]
        if not axes:
            return x, labels
        shape = [d for i, d in enumerate(x.shape) if i not in axes]
        # n * MEAN, not SUM: LiteRT's reference int8 SUM reads int8 data as uint8
        # (interpreter/kernels/reduce.py), so a quantized SUM is wrong in one kernel set.
        y = self.op("MEAN", [x, self.const("axes", np.array(axes, np.int32))], shape,
                    dict(keep_dims=False))
        n = math.prod(x.shape[i] for i in axes)
        if n != 1:
            y = self.op("MUL", [y, self.const("count", np.float32(n))], shape,
                        dict(fused_activation_function=Activation.NONE))
        return y, [c for c in labels if c in keep]

    def const(self, suffix: str, data) -> Tensor:
        return self.ctx.graph.const(f"{self.node.name}/{suffix}_{self.k}", data)


def einsum(ctx: LowerCtx, node) -> None:
    ins = ctx.inputs(node)
    if len(ins) > 2:
        raise fail(UnsupportedOpError, node, f"has {len(ins)} operands; TFLite's lowering "
                   "takes one or two (split the einsum into pairwise ones)")
    shapes = [static_shape(ctx, node, t) for t in ins]
    equation = attr_str(node, "equation")
    try:
        labels, out = parse(equation, [len(s) for s in shapes])
    except ValueError as e:
        raise fail(UnsupportedOpError, node, f"equation '{equation}': {e}") from None
    sizes: dict[str, int] = {}
    for i, (ls, shape) in enumerate(zip(labels, shapes)):
        for c, d in zip(ls, shape):
            if sizes.setdefault(c, d) != d and 1 not in (sizes[c], d):
                raise fail(ShapeError, node, f"index '{c}' has size {sizes[c]} and {d} "
                           f"(operand {i}) in equation '{equation}'")
            sizes[c] = max(sizes[c], d)
    em = _Emitter(ctx, node)
    if len(ins) == 1:
        x, ls = em.reduce_sum(ins[0], labels[0], set(out))
        _finish(ctx, node, em.transpose(x, ls, out))
        return
    (a, la), (b, lb) = [em.reduce_sum(t, ls, set(out) | set(other))
                        for t, ls, other in ((ins[0], labels[0], labels[1]),
                                             (ins[1], labels[1], labels[0]))]
    for c in set(la) & set(lb):
        if c not in out and a.shape[la.index(c)] != b.shape[lb.index(c)]:
            raise fail(ShapeError, node, f"contracted index '{c}' has sizes "
                       f"{a.shape[la.index(c)]} and {b.shape[lb.index(c)]}")
    _finish(ctx, node, _contract(em, a, la, b, lb, out))


def _finish(ctx: LowerCtx, node, y: Tensor) -> None:
    """The result is the node's output; a tensor this node computed takes its name."""
    producer = ctx.graph.producer(y)
    if producer is not None and producer.name == node.name:
        y.name = ctx.scope + node.name
    ctx.alias(node, y)


def _contract(em: _Emitter, a, la, b, lb, out) -> Tensor:
    free_a = [c for c in out if c in la and c not in lb]
    free_b = [c for c in out if c in lb and c not in la]
    # the operand whose free indices come first in the output is the left one
    if (a.is_const and not b.is_const) or (not b.is_const and free_a and free_b and
                                           out.index(free_b[0]) < out.index(free_a[0])):
        a, la, b, lb, free_a, free_b = b, lb, a, la, free_b, free_a
    batch = [c for c in out if c in la and c in lb]
    contracted = [c for c in (lb if a.is_const else la) if c in lb and c in la and c not in out]
    m = math.prod(a.shape[la.index(c)] for c in free_a)
    k = math.prod(a.shape[la.index(c)] for c in contracted)
    n = math.prod(b.shape[lb.index(c)] for c in free_b)
    size = {c: max(d for ls, t in ((la, a), (lb, b)) for c2, d in zip(ls, t.shape) if c2 == c)
            for c in set(la) | set(lb)}
    if b.is_const and not batch:  # a dense layer: FULLY_CONNECTED
        x = em.transpose(a, la, free_a + contracted)
        w = np.transpose(b.data, [lb.index(c) for c in free_b + contracted]).reshape(n, k)
        keep = len(free_a) >= 1 and len(contracted) == 1
        y = em.op("FULLY_CONNECTED", [x, em.const("weights", np.ascontiguousarray(w)), None],
                  [size[c] for c in free_a] + [n] if keep else [m, n],
                  dict(fused_activation_function=Activation.NONE, keep_num_dims=keep))
    else:
        batch, free_a, free_b = _broadcast_batch(out, la, lb, batch, free_a, free_b)
        m = math.prod(size[c] for c in free_a)
        n = math.prod(size[c] for c in free_b)
        x, adj_x = _arrange(em, a, la, [c for c in batch if c in la], free_a, contracted)
        z, adj_y = _arrange(em, b, lb, [c for c in batch if c in lb], free_b, contracted,
                            right=True)
        bshape = [size[c] for c in batch]
        y = em.op("BATCH_MATMUL", [x, z], bshape + [m, n], dict(adj_x=adj_x, adj_y=adj_y))
    y = em.reshape(y, [size[c] for c in batch + free_a + free_b])
    return em.transpose(y, batch + free_a + free_b, out)


def _broadcast_batch(out, la, lb, batch, free_a, free_b):
    """Free indices leading the output become batch indices of the one operand that has
    them: BATCH_MATMUL broadcasts a missing leading batch dimension (`...ij,jk->...ik` or
    `abij,bjk->abik` need no reshape). Taken while the output keeps each operand's last
    free index after them, and only if each operand lacks a leading run of the new batch
    order; otherwise the batch indices stay those of both operands."""
    last = [out.index(f[-1]) for f in (free_a, free_b) if f]
    p = min(last) if last else 0
    if not any(c in free_a or c in free_b for c in out[:p]):
        return batch, free_a, free_b
    order = out[:p] + [c for c in batch if c not in out[:p]]
    for labels in (la, lb):
        present = [c in labels for c in order]
        if present != sorted(present):  # a missing index after a present one
            return batch, free_a, free_b
    return (order, [c for c in free_a if c not in order], [c for c in free_b if c not in order])


def _arrange(em: _Emitter, t, labels, batch, free, contracted, right: bool = False):
    """t as [batch..., rows, cols] for BATCH_MATMUL and its adj flag: [batch, free,
    contracted] on the left ([batch, contracted, free] on the right), or the other order
    read transposed when t already has it."""
    plain = batch + (contracted + free if right else free + contracted)
    swapped = batch + (free + contracted if right else contracted + free)
    adj = labels == swapped and labels != plain and len(free) + len(contracted) > 0
    order = swapped if adj else plain
    t = em.transpose(t, labels, order)
    dims = dict(zip(order, t.shape))
    first, second = (free, contracted) if right == adj else (contracted, free)
    return em.reshape(t, [dims[c] for c in batch] + [math.prod(dims[c] for c in first),
                                                      math.prod(dims[c] for c in second)]), adj


# TF's Einsum takes any numeric type; TFLite's BATCH_MATMUL and FULLY_CONNECTED compute in
# float32 (integers come from quantization).
_EINSUM = spec(variadic=In("operand", FLOAT), n_attr="N",
               attrs=(Attr("equation", "s", True),))
RULES = {"Einsum": Lowering(einsum, _EINSUM)}
