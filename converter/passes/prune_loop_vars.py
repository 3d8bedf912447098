"""Drop WHILE loop variables nothing reads: passed through the body unchanged, unused inside.

TensorFlow makes every tensor a loop body captures a loop variable: a Keras LSTM's weights
and biases, the TensorArray handles of a TF1 loop, the unstacked input of a TensorList that
is read as a constant copy inside (lower/functional.py). Such a variable is copied into the
loop and back out on every iteration and, in an int8 model, would need quantization
parameters of its own. When the body returns variable k unchanged (output k is input k) and
neither cond nor body reads it otherwise, the loop's result k is its operand k: the variable
is removed from the WHILE and from both subgraphs, and the caller reads the operand.
"""

from __future__ import annotations

from ..ir import Graph, Op, all_graphs


def _unused(g: Graph, k: int) -> bool:
    t = g.inputs[k]
    passthrough = g.outputs.count(t)  # the body returns it once, as output k
    return g.use_count(t) == passthrough


def _removable(op: Op, k: int) -> bool:
    cond, body = op.subgraphs["cond"], op.subgraphs["body"]
    return (body.outputs[k] is body.inputs[k] and body.outputs.count(body.inputs[k]) == 1
            and _unused(body, k) and _unused(cond, k))


def _prune(graph: Graph, op: Op) -> int:
    cond, body = op.subgraphs["cond"], op.subgraphs["body"]
    drop = [k for k in range(len(op.inputs))
            if _removable(op, k) and not graph.is_output(op.outputs[k])]
    if not drop:
        return 0
    for k in drop:
        graph.replace_uses(op.outputs[k], op.inputs[k])
    keep = [k for k in range(len(op.inputs)) if k not in set(drop)]
    op.inputs = [op.inputs[k] for k in keep]
    op.outputs = [op.outputs[k] for k in keep]
    body.inputs, body.outputs = [body.inputs[k] for k in keep], [body.outputs[k] for k in keep]
    cond.inputs = [cond.inputs[k] for k in keep]
    return len(drop)


def run(graph: Graph) -> int:
    graphs = all_graphs(graph)
    callers: dict[int, int] = {}  # subgraph id -> how many ops call it
    for g in graphs:
        for op in g.ops:
            for sub in op.subgraphs.values():
                callers[id(sub)] = callers.get(id(sub), 0) + 1
    changed = 0
    for g in graphs:
        for op in list(g.ops):
            if op.type == "WHILE" and all(callers[id(s)] == 1 for s in op.subgraphs.values()) \
                    and op.subgraphs["cond"] is not op.subgraphs["body"]:
                changed += _prune(g, op)
    return changed
