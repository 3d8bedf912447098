"""TF1 conds (Switch / Merge outside loops) -> functional If nodes with then / else functions.

A TF1 `tf.cond(p, f, g)` routes every tensor x the branches read through Switch(x, p):
output 1 is live when p is true (the then branch reads it), output 0 when false; each result
leaves through a Merge of the two branches' values. Constants in a branch hang on a pivot
(Identity of Switch(p, p)) by a control edge.

The algorithm (after TF's functionalize_cond.cc, rewritten here):
 1. Branch states. In topological order, each node gets the set of (predicate, branch)
    pairs under which it runs: a Switch's output k adds (p, k) to the Switch's own state;
    a Merge's inputs must differ in exactly one predicate, taken both ways -- the Merge
    leaves that cond and gets the common part (its context S); any other node gets the
    union over its data and control inputs (both branches of one predicate at once is an
    error). A predicate is named by its tensor, read through Identity nodes (TF1 routes it
    through a per-cond "pred_id" Identity).
 2. Conds, innermost first (largest S first). Merges with the same (S, p) whose branches
    share a node are one cond (one tf.cond with several results); unrelated conds on the
    same predicate stay apart. For each: the then function is cut out backwards from the
    Merges' true inputs, stopping at the cond's Switches' true outputs (its arguments),
    taking only nodes whose state holds (p, 1); the else function likewise with (p, 0).
 3. Replace. One If node reads p and the Switches' data inputs; each Merge becomes an
    Identity of the If's matching output under the Merge's name; the branch nodes go. The
    If's state is S, so an enclosing cond, processed next, carries it in its branch.
Whether p is constant is decided later, by the lowering: a constant predicate inlines the
taken branch (the untaken one is never lowered nor reported), any other becomes an IF op.
"""

from __future__ import annotations

from edgelite.errors import GraphError
from ...schema import graph_pb2
from edgelite.names import quoted
from ..graphdef import TensorRef, data_inputs, parse_ref
from .functions import Library
from .slices import consumers, control_and_data, cut_function, new_node, unique

SWITCH_OPS = ("Switch", "RefSwitch")
MERGE_OPS = ("Merge", "RefMerge")


def functionalize_conds(nodes: dict, library: Library, wanted=frozenset()) -> dict:
    """Replace every TF1 cond in `nodes` (name -> NodeDef, no loops left) by an If node.
    `wanted`: tensors asked for as outputs (a Merge's value_index, "merge:1", among them)."""
    if not any(n.op in SWITCH_OPS for n in nodes.values()):
        return nodes
    states, contexts = _branch_states(nodes)
    groups: dict = {}
    for name, key in contexts.items():
        groups.setdefault(key, []).append(nodes[name])
    for (context, pred), merges in sorted(groups.items(), key=lambda kv: -len(kv[0][0])):
        for cond in _split(nodes, merges, context, pred, states):
            _functionalize(nodes, cond, context, pred, states, library, wanted)
    return nodes


def _pred_key(nodes: dict, switch) -> str:
    ref = parse_ref(switch.input[1]) if len(switch.input) > 1 else TensorRef(switch.name)
    seen = 0
    while ref.index == 0 and ref.node in nodes and nodes[ref.node].op == "Identity" \
            and nodes[ref.node].input and seen < len(nodes):
        ref, seen = parse_ref(nodes[ref.node].input[0]), seen + 1
    return ref.name


def _branch_states(nodes: dict) -> tuple[dict, dict]:
    """(node name -> frozenset of (pred, branch), Merge name -> (context, pred))."""
    order = _topological(nodes)
    states: dict[str, frozenset] = {}
    contexts: dict[str, tuple] = {}

    def of_ref(ref: TensorRef) -> frozenset:
        base = states.get(ref.node, frozenset())
        node = nodes.get(ref.node)
        if node is not None and node.op in SWITCH_OPS:
            return base | {(_pred_key(nodes, node), ref.index)}
        return base

    for node in order:
        if node.op in MERGE_OPS:
            ins = [of_ref(r) for r in data_inputs(node)]
            common = frozenset.intersection(*ins) if ins else frozenset()
            diff = frozenset().union(*ins) - common
            preds = {p for p, _ in diff}
            if len(preds) != 1 or len(diff) != 2 or len(ins) != 2:
                raise GraphError(f"node {quoted(node.name)} (Merge) does not join the two "
                                 "branches of one cond; edgelite converts tf.cond and "
                                 "tf.while_loop control flow only")
            states[node.name] = common
            contexts[node.name] = (common, preds.pop())
            continue
        state = frozenset().union(
            *(of_ref(parse_ref(s)) if not s.startswith("^") else states.get(s[1:], frozenset())
              for s in node.input))
        if len({p for p, _ in state}) != len(state):
            raise GraphError(f"node {quoted(node.name)} reads both branches of one cond "
                             "without a Merge; the graph is malformed")
        states[node.name] = state
    return states, contexts


def _topological(nodes: dict) -> list:
    indegree, readers = {}, {}
    for node in nodes.values():
        deps = [d for d in dict.fromkeys(control_and_data(node)) if d in nodes]
        indegree[node.name] = len(deps)
        for d in deps:
            readers.setdefault(d, []).append(node.name)
    ready = [n for n, k in indegree.items() if k == 0]
    order = []
    while ready:
        name = ready.pop()
        order.append(nodes[name])
        for r in readers.get(name, ()):
            indegree[r] -= 1
            if not indegree[r]:
                ready.append(r)
    if len(order) != len(nodes):
        stuck = next(n for n in nodes if indegree.get(n))
        raise GraphError(f"the graph has a cycle through node {quoted(stuck)}; only "
                         "tf.while_loop cycles can be converted")
    return order


class _Cond:
    def __init__(self, nodes: dict, context, pred: str, states: dict) -> None:
        self.nodes, self.context, self.pred, self.states = nodes, context, pred, states
        self.merges: list = []
        self.seen: set[str] = set()

    def is_switch(self, node) -> bool:
        return node.op in SWITCH_OPS and _pred_key(self.nodes, node) == self.pred \
            and self.states.get(node.name) == self.context

    def inside(self, node, k: int) -> bool:
        return (self.pred, k) in self.states.get(node.name, ()) and not self.is_switch(node)

    def branch_inputs(self, merge) -> tuple[str, str]:
        """(then input, else input) of a Merge of this cond."""
        ins = [s for s in merge.input if not s.startswith("^")]
        takes_true = [(self.pred, 1) in self._state_of(parse_ref(s)) for s in ins]
        if takes_true.count(True) != 1:
            raise GraphError(f"node {quoted(merge.name)} (Merge) does not join one true and "
                             "one false branch")
        return (ins[0], ins[1]) if takes_true[0] else (ins[1], ins[0])

    def _state_of(self, ref: TensorRef):
        node = self.nodes[ref.node]
        base = self.states.get(ref.node, frozenset())
        return base | {(self.pred, ref.index)} if self.is_switch(node) else base

    def walk(self, ref_text: str, k: int) -> set[str]:
        """Names of the branch-k nodes and cond Switches the tensor is computed from."""
        out, stack = set(), [parse_ref(ref_text).node]
        while stack:
            name = stack.pop()
            node = self.nodes.get(name)
            if name in out or node is None:
                continue
            if self.is_switch(node):
                out.add(name)
            elif self.inside(node, k):
                out.add(name)
                stack.extend(r.node for r in data_inputs(node))
        return out


def _split(nodes: dict, merges: list, context, pred: str, states: dict) -> list[_Cond]:
    """The Merges of (context, pred) grouped into conds: Merges whose branches share a node."""
    conds: list[_Cond] = []
    for merge in merges:
        probe = _Cond(nodes, context, pred, states)
        then_ref, else_ref = probe.branch_inputs(merge)
        seen = probe.walk(then_ref, 1) | probe.walk(else_ref, 0)
        joined = [c for c in conds if c.seen & seen]
        for c in joined:
            probe.merges += c.merges
            seen |= c.seen
            conds.remove(c)
        probe.merges.append(merge)
        probe.seen = seen
        conds.append(probe)
    for c in conds:  # keep the Merges in graph order (their outputs' order)
        c.merges.sort(key=lambda m: merges.index(m))
    return conds


def _functionalize(nodes: dict, cond: _Cond, context, pred: str, states: dict,
                   library: Library, wanted) -> None:
    first = cond.merges[0].name
    what = f"the cond of {quoted(first)}"
    scope = unique(nodes, (first.rpartition("/")[0] or first) + "/If")
    switches = [n for n in nodes.values() if n.name in cond.seen and cond.is_switch(n)]
    args = [s.name for s in switches]
    pairs = [cond.branch_inputs(m) for m in cond.merges]

    def argument(k: int):
        def arg(ref: TensorRef) -> str | None:
            node = nodes.get(ref.node)
            if node is None or not cond.is_switch(node):
                return None
            if ref.index != k:
                raise GraphError(f"{what}: a branch reads {quoted(ref.name)}, the other "
                                 "branch's side of a Switch")
            return ref.node
        return arg

    readers = consumers(nodes)
    # Merge output 1 (value_index: which branch ran) is an extra If output when read.
    indexed = any(f"{m.name}:1" in wanted or any(
        parse_ref(s).name == f"{m.name}:1" for r in readers.get(m.name, ()) for s in r.input)
        for m in cond.merges)
    fns = []
    for k, side in ((1, "then"), (0, "else")):
        rets = [p[0] if k else p[1] for p in pairs]
        fn = cut_function(nodes, library.unique_name(f"{scope}/{side}"), args, rets,
                          argument(k), lambda n, k=k: cond.inside(n, k), what)
        if indexed:
            _return_constant(fn, f"{scope}/{side}_index", k)
        fns.append(library.add(fn))
    if_node = new_node(scope, "If", [pred] + [s.input[0] for s in switches],
                       then_branch=fns[0].name, else_branch=fns[1].name)
    for name in cond.seen:
        nodes.pop(name, None)
    nodes[scope] = if_node
    states[scope] = context
    index = [f"{scope}:{len(pairs)}"] if indexed else []
    for k, merge in enumerate(cond.merges):
        nodes[merge.name] = new_node(merge.name, "IdentityN" if indexed else "Identity",
                                     [f"{scope}:{k}" if k else scope] + index)
        states[merge.name] = context


def _return_constant(fn, name: str, value: int) -> None:
    """Make `fn` also return an int32 constant (a Merge's value_index)."""
    node = new_node(name, "Const", [])
    node.attr["dtype"].type = graph_pb2.DT_INT32
    node.attr["value"].tensor.dtype = graph_pb2.DT_INT32
    node.attr["value"].tensor.int_val.append(value)
    fn.nodes.append(node)
    fn.by_name[name] = node
    fn.rets.append(name)
