"""What `--set NAME=VALUE` would do for an unsupported-op report (bind.py binds them).

A TF1 training graph is unconvertible as it stands for reasons a value fixes: a placeholder
that is not an input has nothing to become; one that is an input decides tf.conds at run
time, so both branches are converted (the training branch with its RandomUniform); a
placeholder_with_default may default to training; a keep_prob input leaves dropout's noise
compared with a value only known at run time. One line per placeholder says which, and the
--set that resolves it.
"""

from __future__ import annotations

from edgelite.names import quoted
from ..graphdef import data_inputs
from ..ir import Graph, inputs_upstream
from ..tf_tensor import dtype_name
from .random import NOISE

IF_OPS = ("If", "StatelessIf")
MAX_STEPS = 64        # graph steps searched between a placeholder and what it decides
MAX_NAMED = 3         # conds / noise named per line


def set_hints(tf, ctx, report) -> list[str]:
    """Hint lines (no prefix) for the report of a lowering that met unsupported ops."""
    hints = []
    placeholders = report.ops.get("Placeholder")
    if placeholders is not None and not placeholders.supported:
        for name in placeholders.unsupported_nodes:
            node = tf.nodes.get(name)
            decides = _conds_fed(tf, name)
            what = f"; it decides {_listed(decides, 'tf.cond')}" if decides else ""
            hints.append(f"placeholder {quoted(name)}{_signature(node)} is not an input"
                         f"{what}: give it a value with --set {name}={_example(node)} (or "
                         "list it in --inputs)")
    for node in tf.nodes.values():
        decides = _conds_fed(tf, node.name) if node.op == "PlaceholderWithDefault" else None
        if decides:
            hints.append(f"placeholder {quoted(node.name)}{_signature(node)} takes its default, "
                         f"which decides {_listed(decides, 'tf.cond')}; --set "
                         f"{node.name}={_example(node)} overrides it")
    deciding: dict[str, list[str]] = {}
    for cond, pred, graph in ctx.undecided_conds:
        for name in inputs_upstream(graph, [pred]):
            deciding.setdefault(name, []).append(cond)
    for name, conds in deciding.items():
        node = tf.nodes.get(name)
        hints.append(f"input {quoted(name)}{_signature(node)} decides {_listed(conds, 'tf.cond')} "
                     "at run time, so every branch is converted; --set "
                     f"{name}={_example(node)} keeps the one it selects")
    for name, noise in _noise_inputs(ctx.graph).items():
        node = tf.nodes.get(name)
        hints.append(f"input {quoted(name)}{_signature(node)} sets the rate of dropout noise "
                     f"{_listed(noise, '')}; --set {name}=VALUE (e.g. keep_prob=1.0) makes "
                     "the mask a constant and the noise goes")
    return hints


def _signature(node) -> str:
    """' (bool [])', from the placeholder's attributes; '' when unknown."""
    if node is None or "dtype" not in node.attr:
        return ""
    shape = ""
    if "shape" in node.attr and not node.attr["shape"].shape.unknown_rank:
        dims = [d.size for d in node.attr["shape"].shape.dim]
        shape = " [" + ", ".join("?" if d < 0 else str(d) for d in dims) + "]"
    return f" ({dtype_name(node.attr['dtype'].type)}{shape})"


def _example(node) -> str:
    if node is not None and "dtype" in node.attr and \
            dtype_name(node.attr["dtype"].type) == "bool":
        return "false"
    return "VALUE"


def _listed(names: list[str], what: str) -> str:
    shown_names = ", ".join(quoted(n) for n in names[:MAX_NAMED])
    more = f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else ""
    return f"{what} {shown_names}{more}".strip()


def _conds_fed(tf, name: str) -> list[str]:
    """The If nodes whose predicate is computed from node `name` (searched forward)."""
    readers: dict[str, list] = {}
    for node in tf.nodes.values():
        for ref in data_inputs(node):
            readers.setdefault(ref.node, []).append(node)
    found, seen, frontier = [], {name}, [name]
    for _ in range(MAX_STEPS):
        nxt = []
        for src in frontier:
            for node in readers.get(src, ()):
                refs = data_inputs(node)
                if node.op in IF_OPS and refs and refs[0].node == src:
                    found.append(node.name)
                elif node.name not in seen and node.op not in IF_OPS:
                    seen.add(node.name)
                    nxt.append(node.name)
        if not nxt:
            break
        frontier = nxt
    return sorted(set(found))


def _noise_inputs(graph: Graph) -> dict[str, list[str]]:
    """Input name -> the live noise (main graph) compared with values computed from it."""
    out: dict[str, list[str]] = {}
    for op in graph.ops:
        if op.type != NOISE:
            continue
        noise = op.outputs[0]
        others = [x for reader in graph.consumers(noise) for x in reader.inputs
                  if x is not None and x is not noise]
        for name in inputs_upstream(graph, others):
            out.setdefault(name, []).append(noise.name)
    return out
