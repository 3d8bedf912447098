"""Additive attention masks before a quantized SOFTMAX: masked = a bounded floor, not -1e9.

Attention writes SOFTMAX(scores + t) with t = 0 where a key may be attended and t = -1e9
(Keras' MultiHeadAttention: (1 - mask) * -1e9; BERT: -10000; Hugging Face: float32's
lowest) where it may not, or t a constant (a causal mask). Quantized over its calibrated
range, t's tensor and the sum get a scale of ~1e9 / 255: every unmasked score rounds to the
same code and the softmax spreads the weight evenly (TF's converter does this, and its int8
files lose the attention). A multiplier of 1e9 in the int8 MUL also overflows LiteRT's int32
MultiplyByQuantizedMultiplier once the output range is narrower.

A masked key only needs a weight that rounds to 0: with the scores in [lo, hi] (calibrated),
any t <= floor = -(hi - lo + MARGIN) puts a masked logit at least MARGIN below every row's
maximum, weight below e^-MARGIN. So before the rewrite the mask's large constant becomes
`floor` (the constant of t = MUL(m, c) with m in [0, 1], or the constant t itself, clamped),
t's range becomes [floor, max(t)] and the sum's [lo + floor, hi + max(t)]: the scores keep a
resolution of about (2 (hi - lo) + MARGIN) / 255. A selected mask (where(mask, scores, c),
Keras 3) only needs c = lo - MARGIN. The float model is unchanged.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Op, Tensor

MASK_BELOW = -1e4   # a constant this low in an additive softmax term means "masked"
MARGIN = 10.0       # e^-10 = 4.5e-5 < 1/512: a masked weight rounds to 0 in 1/256 steps


def _term_range(graph: Graph, t: Tensor, ranges) -> tuple[float, float] | None:
    if t.is_const:
        return (float(np.min(t.data)), float(np.max(t.data))) if t.data.size else None
    return ranges.get(t.name)


def _mask_multiply(graph: Graph, t: Tensor, ranges) -> tuple[Op, int] | None:
    """(MUL, index of its constant) if t = m * c with a scalar c <= MASK_BELOW and m in
    [0, 1] (calibrated), read by nothing but the softmax's ADD."""
    op = graph.producer(t)
    if op is None or op.type != "MUL" or graph.use_count(t) != 1 \
            or op.options.get("fused_activation_function", 0):
        return None
    for i in (0, 1):
        c, m = op.inputs[i], op.inputs[1 - i]
        if c.is_const and c.data.size == 1 and float(c.data.reshape(-1)[0]) <= MASK_BELOW:
            r = ranges.get(m.name)
            if r is not None and r[0] >= 0.0 and r[1] <= 1.0:
                return op, i
    return None


def _clamp_selected(graph: Graph, sel: Op, ranges: dict) -> bool:
    """SELECT_V2(cond, scores, c) (either order; Keras 3 writes where(mask, scores, -1e9)):
    the constant c <= MASK_BELOW becomes MARGIN below the scores' minimum."""
    for k in (1, 2):
        scores, c = sel.inputs[k], sel.inputs[3 - k]
        s = ranges.get(scores.name)
        if s is None or scores.is_const or not c.is_const or not c.data.size \
                or float(np.max(c.data)) > MASK_BELOW:
            continue
        floor = s[0] - MARGIN
        graph.set_const_input(sel, 3 - k, np.full_like(c.data, floor))
        ranges[sel.outputs[0].name] = (floor, s[1])
        return True
    return False


def clamp_additive_masks(graph: Graph, ranges: dict) -> int:
    """Rewrite every SOFTMAX(ADD(scores, mask term)) as described above, and every
    SOFTMAX(SELECT_V2(mask, scores, -1e9)) alike; returns how many."""
    n = 0
    for sm in [op for op in graph.ops if op.type == "SOFTMAX"]:
        add = graph.producer(sm.inputs[0])
        if add is None or graph.use_count(sm.inputs[0]) != 1:
            continue
        if add.type == "SELECT_V2":
            n += _clamp_selected(graph, add, ranges)
            continue
        if add.type != "ADD" or add.options.get("fused_activation_function", 0):
            continue
        for k in (0, 1):
            scores, term = add.inputs[k], add.inputs[1 - k]
            s, r = ranges.get(scores.name), _term_range(graph, term, ranges)
            if s is None or r is None or r[0] > MASK_BELOW or scores.is_const:
                continue
            floor = -(s[1] - s[0] + MARGIN)
            if term.is_const:
                graph.set_const_input(add, 1 - k, np.maximum(term.data, floor))
            else:
                found = _mask_multiply(graph, term, ranges)
                if found is None:
                    continue
                mul, i = found
                graph.set_const_input(mul, i, np.full_like(mul.inputs[i].data, floor))
                ranges[term.name] = (floor, max(0.0, r[1]))
            ranges[add.outputs[0].name] = (s[0] + floor, s[1] + max(0.0, r[1]))
            n += 1
            break
    return n
