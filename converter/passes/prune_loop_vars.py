"""Drop WHILE loop variables nothing reads: passed through the body unchanged, unused inside,
or only updated by the body for a result nothing reads.

TensorFlow makes every tensor a loop body captures a loop variable: a Keras LSTM's weights
and biases, the TensorArray handles of a TF1 loop, the unstacked input of a TensorList that
is read as a constant copy inside (lower/functional.py). Such a variable is copied into the
loop and back out on every iteration and, in an int8 model, would need quantization
parameters of its own. A variable k goes when

  - the body returns it unchanged (output k is input k) and neither cond nor body reads it
    otherwise: the loop's result k is its operand k; or
  - nothing reads the loop's result k, cond does not read it, and in the body only the ops
    computing output k read it (written, never used: e.g. the list below once its readers
    read the state instead).

A list of one item the body overwrites with a state variable's new value on every step --
DYNAMIC_UPDATE_SLICE(list [1, ...], EXPAND_DIMS(v), zeros) with v the body's output j, as
Keras writes an RNN's output when only the last step is returned -- holds after the loop
what variable j holds, if the loop runs at least once (a static trip count >= 1): a reader
taking its item (STRIDED_SLICE of item 0 or -1, axis 0 shrunk) reads the loop's result j.
The variable is removed from the WHILE and from both subgraphs.
"""

from __future__ import annotations

from ..ir import Graph, Op, all_graphs
from .loops import counters, ints, takes_item, trip_count


def _unused(g: Graph, k: int) -> bool:
    t = g.inputs[k]
    passthrough = g.outputs.count(t)  # the body returns it once, as output k
    return g.use_count(t) == passthrough


def _passed_through(op: Op, k: int) -> bool:
    cond, body = op.subgraphs["cond"], op.subgraphs["body"]
    return (body.outputs[k] is body.inputs[k] and body.outputs.count(body.inputs[k]) == 1
            and _unused(body, k) and _unused(cond, k))


def _only_updates_itself(graph: Graph, op: Op, k: int) -> bool:
    """Nothing reads result k and, in the body, input k only feeds ops whose results go
    to output k alone."""
    cond, body = op.subgraphs["cond"], op.subgraphs["body"]
    x, out = body.inputs[k], body.outputs[k]
    if graph.use_count(op.outputs[k]) or cond.use_count(cond.inputs[k]) or out is x or \
            body.outputs.count(out) != 1 or body.is_output(x) or out.is_const:
        return False
    cone = set()   # ops whose every result feeds only cone ops (or is output k, once)
    for o in reversed(list(body.ops)):
        if all((t is out and body.use_count(t) == 1) or
               (not body.is_output(t) and body.use_count(t) and
                all(id(c) in cone for c in body.consumers(t))) for t in o.outputs):
            cone.add(id(o))
    return bool(body.use_count(x)) and all(id(c) in cone for c in body.consumers(x))


def _droppable(graph: Graph, op: Op, k: int) -> bool:
    return not graph.is_output(op.outputs[k]) and \
        (_passed_through(op, k) or _only_updates_itself(graph, op, k))


def _last_state_of_list(op: Op, k: int) -> int | None:
    """j when body output k is DYNAMIC_UPDATE_SLICE(input k [1, ...], EXPAND_DIMS / RESHAPE
    of body output j, zeros) and the loop runs at least once."""
    body = op.subgraphs["body"]
    out, lst = body.outputs[k], body.inputs[k]
    dus = None if out.is_const else body.producer(out)
    if dus is None or dus.type != "DYNAMIC_UPDATE_SLICE" or dus.inputs[0] is not lst or \
            lst.shape is None or not lst.shape or lst.shape[0] != 1 or \
            ints(dus.inputs[2]) is None or any(ints(dus.inputs[2])):
        return None
    expand = None if dus.inputs[1].is_const else body.producer(dus.inputs[1])
    if expand is None or expand.type not in ("EXPAND_DIMS", "RESHAPE"):
        return None
    v = expand.inputs[0]
    if v.shape is None or tuple(v.shape) != tuple(lst.shape[1:]) or not body.is_output(v):
        return None
    j = list(body.outputs).index(v)
    steps = trip_count(op.subgraphs["cond"], counters(op, body))
    return j if j != k and steps is not None and steps >= 1 else None


def _read_state_not_list(graph: Graph, op: Op) -> int:
    n = 0
    for k in range(len(op.outputs)):
        j = _last_state_of_list(op, k)
        if j is None:
            continue
        for reader in list(graph.consumers(op.outputs[k])):
            if takes_item(reader, 0, 1) and reader.inputs[0] is op.outputs[k]:
                graph.bypass(reader, op.outputs[j])
                n += 1
    return n


def _prune(graph: Graph, op: Op) -> int:
    cond, body = op.subgraphs["cond"], op.subgraphs["body"]
    n = _read_state_not_list(graph, op)
    drop = [k for k in range(len(op.inputs)) if _droppable(graph, op, k)]
    if not drop:
        return n
    for k in drop:
        graph.replace_uses(op.outputs[k], op.inputs[k])
    keep = [k for k in range(len(op.inputs)) if k not in set(drop)]
    op.inputs = [op.inputs[k] for k in keep]
    op.outputs = [op.outputs[k] for k in keep]
    body.inputs, body.outputs = [body.inputs[k] for k in keep], [body.outputs[k] for k in keep]
    cond.inputs = [cond.inputs[k] for k in keep]
    body.remove_dead_ops()
    return n + len(drop)


def run(graph: Graph) -> int:
    graphs = all_graphs(graph)
    if not any(g.has_ops("WHILE") for g in graphs):
        return 0
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
