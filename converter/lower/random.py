"""Random numbers: RandomUniform as a range of values the converter reasons about.

What a frozen graph keeps of TF's random ops is training-time dropout. Its mask is noise
compared with (or added to) the drop rate:

    tf.nn.dropout (TF >= 1.13)  keep = RandomUniform(shape) >= rate
                                y = where(keep, x / (1 - rate), 0)
    tf.nn.dropout (TF < 1.13)   keep = floor(keep_prob + RandomUniform(shape))
                                y = x / keep_prob * keep

Once the rate is a constant (`--set keep_prob=1.0`: rate 0), every value the noise can take
gives the same mask, and the mask is a constant; the noise is then read by nothing.

A RandomUniform becomes a converter-only UNIFORM_NOISE op whose options hold the closed
range [low, high] of its values: TensorFlow's generator (random::Uint32ToFloat and its
double / half versions, tensorflow/core/lib/random/random_distributions.h) fills the
mantissa of 1.m and subtracts 1, so float32 values are 0 ... 1 - 2^-23 (1 - eps of the dtype).
As each op reading it is lowered (`settle`), the range is carried through ADD / SUB / MUL
with a scalar constant (computed in the tensor's dtype: rounding is monotonic, so the ends
of the range are the extreme results), and a comparison with a constant (GREATER_EQUAL,
GREATER, LESS, LESS_EQUAL) that the whole range answers alike -- or a FLOOR over a range
within one integer -- becomes a constant (a FILL of the noise's shape while that shape is
not known yet). After the lowering (`settle_graph`),
noise nothing reads is dropped; noise still read is reported unsupported (written as a
CUSTOM op with --allow-custom-ops): training-time randomness has no inference model.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Op, all_graphs
from .context import LowerCtx, attr_dtype
from .spec import ANY, FLOAT, INDEX, Attr, In, Lowering, spec

NOISE = "UNIFORM_NOISE"   # converter-only (ir.PSEUDO_OPS): never exported
SHIFTS = ("ADD", "SUB", "MUL")
# comparison -> (true when, false when), given the range [lo, hi] of x and the constant c:
# x >= c holds for every x when lo >= c and for none when hi < c, ...
DECIDED = {
    "GREATER_EQUAL": (lambda lo, hi, c: lo >= c, lambda lo, hi, c: hi < c),
    "GREATER": (lambda lo, hi, c: lo > c, lambda lo, hi, c: hi <= c),
    "LESS": (lambda lo, hi, c: hi < c, lambda lo, hi, c: lo >= c),
    "LESS_EQUAL": (lambda lo, hi, c: hi <= c, lambda lo, hi, c: lo > c),
}
FLIPPED = {"GREATER_EQUAL": "LESS_EQUAL", "GREATER": "LESS", "LESS": "GREATER",
           "LESS_EQUAL": "GREATER_EQUAL"}   # c op x  ==  x FLIPPED[op] c


def random_uniform(ctx: LowerCtx, node) -> None:
    """RandomUniform / StatelessRandomUniform(V2): values in [0, 1) of the dtype; the
    UNIFORM_NOISE op reads the shape (often SHAPE of a tensor, constant only once shapes
    are inferred)."""
    dims = ctx.input(node, 0)
    shape = tuple(int(d) for d in dims.data.reshape(-1)) if dims.is_const else None
    dtype = attr_dtype(node, "dtype", np.dtype(np.float32))
    high = 1.0 - float(np.finfo(dtype).eps)
    out = ctx.output(node, dtype, shape=shape)
    ctx.graph.add_op(NOISE, [dims], [out], dict(low=0.0, high=high), name=node.name)


def settle(graph: Graph, op: Op) -> bool:
    """Carry a noise range through `op` (a shift) or decide it (a comparison, a FLOOR within
    one integer); True if `op` was replaced."""
    if not graph.has_ops(NOISE):  # (nearly every graph: no op can read noise)
        return False
    found = _noise_operand(graph, op)
    if found is None or any(graph.is_output(t) for t in op.outputs):
        return False
    noise, x, c = found
    lo, hi = noise.options["low"], noise.options["high"]
    if op.type == "FLOOR":
        return np.floor(lo) == np.floor(hi) and _uniform(graph, op, noise, np.floor(lo))
    if op.type in DECIDED:
        kind = op.type if op.inputs[0] is x else FLIPPED[op.type]
        value = np.asarray(c, np.float64)
        true, false = (np.asarray(f(lo, hi, value)) for f in DECIDED[kind])
        if not np.all(true | false):
            return False
        if x.shape is not None:  # the mask itself
            shape = np.broadcast_shapes(x.shape, value.shape)
            return _constant(graph, op, np.broadcast_to(true, shape))
        return value.ndim == 0 and _uniform(graph, op, noise, bool(true))
    if c.ndim != 0 or op.options.get("fused_activation_function", 0):
        return False
    k = np.asarray(c, x.dtype)
    ends = np.array([lo, hi], x.dtype)
    if op.type == "ADD":
        ends = ends + k
    elif op.type == "MUL":
        ends = ends * k
    else:
        ends = ends - k if op.inputs[0] is x else k - ends
    out = op.outputs[0]
    graph.remove_op(op)
    out.shape = x.shape
    graph.add_op(NOISE, noise.inputs, [out], dict(low=float(ends.min()),
                                                   high=float(ends.max())),
                 name=op.name).origin = noise.origin
    return True


def _noise_operand(graph: Graph, op: Op):
    """(noise op, its tensor, the constant operand's data) if `op` reads noise and a
    constant; (noise op, tensor, None) for a FLOOR of noise; else None."""
    if op.type == "FLOOR":
        src = graph.producer(op.inputs[0])
        return (src, op.inputs[0], None) if src is not None and src.type == NOISE else None
    if op.type not in DECIDED and op.type not in SHIFTS or len(op.inputs) != 2:
        return None
    for x, c in (op.inputs, op.inputs[::-1]):
        src = graph.producer(x)
        if src is not None and src.type == NOISE and c.is_const:
            return src, x, c.data
    return None


def _constant(graph: Graph, op: Op, value: np.ndarray) -> bool:
    graph.remove_op(op)
    t = op.outputs[0]
    t.data, t.shape = np.array(value, t.dtype), tuple(np.shape(value))
    return True


def _uniform(graph: Graph, op: Op, noise: Op, value) -> bool:
    """`op`'s output becomes `value` everywhere: a constant where the noise's shape is
    known, else FILL(its shape, value) (folded once shapes are inferred)."""
    out = op.outputs[0]
    if noise.outputs[0].shape is not None:
        return _constant(graph, op, np.full(noise.outputs[0].shape, value, out.dtype))
    graph.remove_op(op)
    scalar = graph.const(f"{op.name}/value", np.array(value, out.dtype))
    graph.add_op("FILL", [noise.inputs[0], scalar], [out], name=op.name).origin = op.origin
    return True


def settle_graph(graph: Graph, allow_custom_ops: bool) -> list[Op]:
    """Drop the noise nothing reads (in `graph` and its subgraphs); return the noise ops
    still read (written as CUSTOM ops named after their TF op with allow_custom_ops)."""
    live = []
    for g in all_graphs(graph):
        for op in [op for op in g.ops if op.type == NOISE]:
            t = op.outputs[0]
            if not g.consumers(t) and not g.is_output(t):
                g.remove_op(op)
                continue
            live.append(op)
            if allow_custom_ops:
                op.type, op.options = "CUSTOM", {}
                op.custom_code = op.origin or "RandomUniform"
                if op.inputs[0].is_const:
                    t.shape = tuple(int(d) for d in op.inputs[0].data.reshape(-1))
    return live


_SHAPE = In("the shape", INDEX, "T", ranks=(1,))
_DTYPE = Attr("dtype", "type", True, dtypes=FLOAT)
_SEED = In("the seed", INDEX, "Tseed")
RULES = {
    "RandomUniform": Lowering(random_uniform, spec(_SHAPE, attrs=(_DTYPE,))),
    "StatelessRandomUniform": Lowering(random_uniform, spec(_SHAPE, _SEED, attrs=(_DTYPE,))),
    "StatelessRandomUniformV2": Lowering(random_uniform, spec(
        In("the shape", INDEX, "Tshape", ranks=(1,)), In("the key", ANY, None),
        In("the counter", ANY, None), In("the algorithm", INDEX, None), attrs=(_DTYPE,))),
}
