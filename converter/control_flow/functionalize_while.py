"""TF1 while loops (control-flow frames) -> functional While nodes with cond / body functions.

A TF1 `tf.while_loop` -- and what `convert_variables_to_constants_v2` writes for a While by
default -- is a cycle of primitive nodes in an execution *frame* named by the Enter nodes'
`frame_name`. For each loop variable i:

    x_i -> Enter_i -> Merge_i(Enter_i, NextIteration_i) -> Switch_i(Merge_i, LoopCond)
             Switch_i:1 (true)  -> ... body ... -> NextIteration_i   (back edge to Merge_i)
             Switch_i:0 (false) -> Exit_i -> after the loop

LoopCond(p) holds the predicate p, computed from the Merges (the cond). An Enter with
`is_constant` brings a loop invariant into the frame. Frames nest: an inner loop's Enters
read tensors of the outer loop's body.

The algorithm (after TF's functionalize_while.cc, rewritten here):
 1. Frames. Visit the nodes in topological order, ignoring the back edges out of
    NextIteration. An Enter opens a child frame of its input's frame (named by frame_name);
    an Exit returns to its input's parent frame; any other node is in the deepest frame of
    its inputs, control inputs included (a body's constants hang on the loop by a control
    edge), or in the root frame if it has none.
 2. Loops, innermost first. In frame F: each non-constant Enter is a loop variable; its
    Merge, the Switch reading that Merge and F's LoopCond, the NextIteration feeding the
    Merge back and the Exit reading Switch:0 follow. Invariant Enters become extra loop
    variables returned unchanged by the body -- except Enters of a constant, which are
    copied into the functions as constants (so they fold there).
    - cond function: args = the Merges (and invariants), returns LoopCond's input;
    - body function: args = the Switches' true outputs (and invariants), returns each
      NextIteration's input (and the invariants).
    Both are cut out of the graph by slices.cut_function, which refuses a node reading
    something of the frame it was not given as an argument.
 3. Replace. One While node reads the Enters' inputs; each Exit becomes an Identity of the
    While's matching output under the Exit's name (readers are unchanged); the frame's
    nodes are removed. The While sits in F's parent frame, so the outer loop, processed
    next, carries it in its body.
Data-dependent conds left inside the bodies are functionalized afterwards
(functionalize_cond.py), function by function.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from edgelite.errors import GraphError
from edgelite.names import quoted
from ..graphdef import TensorRef, data_inputs, parse_ref
from .functions import Library
from .slices import SOURCE_OPS, consumers, control_and_data, cut_function, new_node, unique

FRAME_OPS = frozenset({"Enter", "RefEnter", "Exit", "RefExit", "NextIteration",
                       "RefNextIteration", "LoopCond"})


@dataclass(eq=False)
class Frame:
    name: str
    parent: "Frame | None"
    depth: int
    members: list = field(default_factory=list)


def functionalize_loops(nodes: dict, library: Library) -> dict:
    """Replace every TF1 loop in `nodes` (name -> NodeDef, in order) by a While node."""
    root = Frame("", None, 0)
    frame_of = _assign_frames(nodes, root)
    frames = {}
    for name, frame in frame_of.items():
        frame.members.append(nodes[name])
        frames[id(frame)] = frame
    for frame in sorted(frames.values(), key=lambda f: -f.depth):
        if frame is not root:
            _functionalize(nodes, frame, frame_of, library)
    return nodes


def _assign_frames(nodes: dict, root: Frame) -> dict:
    """node name -> Frame (step 1), in one topological pass without the back edges."""
    indegree = {}
    readers: dict[str, list[str]] = {}
    for node in nodes.values():
        deps = [d for d in dict.fromkeys(control_and_data(node)) if d in nodes and not _is_back_edge(nodes, d)]
        indegree[node.name] = len(deps)
        for d in deps:
            readers.setdefault(d, []).append(node.name)
    ready = [n for n, k in indegree.items() if k == 0]
    frame_of: dict = {}
    by_name: dict[str, Frame] = {}
    while ready:
        name = ready.pop()
        node = nodes[name]
        frame_of[name] = _frame(node, nodes, frame_of, by_name, root)
        for r in readers.get(name, ()):
            indegree[r] -= 1
            if indegree[r] == 0:
                ready.append(r)
    if len(frame_of) != len(nodes):
        stuck = next(n for n in nodes if n not in frame_of)
        raise GraphError(f"the graph has a cycle through node {quoted(stuck)} that is not a "
                         "TF1 while loop (no NextIteration closes it)")
    return frame_of


def _is_back_edge(nodes: dict, name: str) -> bool:
    return nodes[name].op in ("NextIteration", "RefNextIteration")


def _frame(node, nodes, frame_of, by_name, root) -> Frame:
    inputs = [frame_of[d] for d in control_and_data(node) if d in frame_of]
    if node.op in ("Enter", "RefEnter"):
        parent = frame_of.get(parse_ref(node.input[0]).node, root) if node.input else root
        fname = node.attr["frame_name"].s.decode("utf-8", "replace")
        frame = by_name.setdefault(fname, Frame(fname, parent, parent.depth + 1))
        if frame.parent is not parent:
            raise GraphError(f"node {quoted(node.name)} (Enter) enters frame {quoted(fname)} "
                             "from two different frames; the loop is malformed")
        return frame
    if node.op in ("Exit", "RefExit"):
        inner = inputs[0] if inputs else root
        if inner.parent is None:
            raise GraphError(f"node {quoted(node.name)} (Exit) is not inside a loop")
        return inner.parent
    return max(inputs, key=lambda f: f.depth, default=root)


@dataclass
class _LoopVar:
    enter: object
    merge: object
    switch: object
    next_iteration: object
    exit: object | None


def _functionalize(nodes: dict, frame: Frame, frame_of: dict, library: Library) -> None:
    what = f"the loop {quoted(frame.name)}"
    members = [n for n in frame.members if nodes.get(n.name) is n]
    readers = consumers(nodes)
    conds = [n for n in members if n.op == "LoopCond"]
    if len(conds) != 1:
        raise GraphError(f"{what} has {len(conds)} LoopCond nodes (expected 1); the loop is "
                         "malformed")
    loop_cond = conds[0]
    enters = [n for n in members if n.op in ("Enter", "RefEnter")]
    variables = [_variable(nodes, e, readers, loop_cond, what) for e in enters
                 if not _is_constant(e)]
    invariants = [e for e in enters if _is_constant(e) and not _const_input(nodes, e)]
    const_enters = {e.name: e for e in enters if _is_constant(e) and _const_input(nodes, e)}
    merges = {v.merge.name for v in variables}
    switches = {v.switch.name for v in variables}
    inv_names = {e.name for e in invariants}
    in_frame = {n.name for n in members}

    def inside(node) -> bool:
        return node.name in in_frame

    def cond_argument(ref: TensorRef) -> str | None:
        if ref.node in merges or ref.node in inv_names:
            if ref.index != 0:
                raise GraphError(f"{what}: {quoted(ref.name)} is read inside the loop; only "
                                 "output 0 of a loop Merge can be")
            return ref.node
        return _no_switch(ref, switches, what)

    def body_argument(ref: TensorRef) -> str | None:
        if ref.node in switches:
            if ref.index != 1:
                raise GraphError(f"{what}: the body reads {quoted(ref.name)}, the loop's exit "
                                 "value")
            return ref.node
        if ref.node in merges:
            raise GraphError(f"{what}: the body reads {quoted(ref.name)} without its Switch")
        return ref.node if ref.node in inv_names else None

    scope = unique(nodes, f"{frame.name}/While")
    cond_args = [v.merge.name for v in variables] + [e.name for e in invariants]
    body_args = [v.switch.name for v in variables] + [e.name for e in invariants]
    cond = cut_function(nodes, library.unique_name(f"{scope}/cond"), cond_args,
                        [loop_cond.input[0]], cond_argument, inside, what)
    body = cut_function(nodes, library.unique_name(f"{scope}/body"), body_args,
                        [v.next_iteration.input[0] for v in variables] +
                        [e.name for e in invariants], body_argument, inside, what)
    for fn in (cond, body):
        _inline_constant_enters(fn, nodes, const_enters)
        library.add(fn)
    loop = new_node(scope, "While", [_outer(nodes, v.enter) for v in variables] +
                    [_outer(nodes, e) for e in invariants], cond=cond.name, body=body.name)
    exits = {v.exit.name: k for k, v in enumerate(variables) if v.exit is not None}
    for name in list(nodes):
        if name in in_frame:
            del nodes[name]
    nodes[scope] = loop
    frame_of[scope] = frame.parent
    frame.parent.members.append(loop)
    for name, k in exits.items():
        node = new_node(name, "Identity", [f"{scope}:{k}" if k else scope])
        nodes[name] = node
        frame_of[name] = frame.parent
        frame.parent.members.append(node)


def _is_constant(enter) -> bool:
    return "is_constant" in enter.attr and enter.attr["is_constant"].b


def _const_input(nodes: dict, enter):
    """The Const node an invariant Enter brings in, if it is one."""
    src = nodes.get(parse_ref(enter.input[0]).node) if enter.input else None
    return src if src is not None and src.op in SOURCE_OPS and not src.input else None


def _outer(nodes: dict, enter) -> str:
    refs = data_inputs(enter)
    if len(refs) != 1:
        raise GraphError(f"node {quoted(enter.name)} (Enter) has {len(refs)} data inputs "
                         "(expected 1)")
    return enter.input[0]


def _no_switch(ref: TensorRef, switches: set, what: str) -> None:
    if ref.node in switches:
        raise GraphError(f"{what}: the condition reads {quoted(ref.name)}, a Switch of the "
                         "loop")
    return None


def _inline_constant_enters(fn, nodes: dict, const_enters: dict) -> None:
    """Enters of constants read by `fn` become copies of the constant under the Enter's name
    (cut_function copied the Enter itself, reading a constant outside the frame)."""
    for i, node in enumerate(fn.nodes):
        if node.name in const_enters:
            src = _const_input(nodes, const_enters[node.name])
            copy = type(src)()
            copy.CopyFrom(src)
            copy.name = node.name
            fn.nodes[i] = copy
    fn.by_name = {n.name: n for n in fn.nodes}


def _variable(nodes: dict, enter, readers: dict, loop_cond, what: str) -> _LoopVar:
    def only(found, role):
        if len(found) != 1:
            raise GraphError(f"{what}: loop variable {quoted(enter.name)} has {len(found)} "
                             f"{role} nodes (expected 1); the loop is malformed")
        return found[0]
    merge = only([n for n in readers.get(enter.name, ()) if n.op in ("Merge", "RefMerge")],
                 "Merge")
    back = [nodes.get(parse_ref(s).node) for s in merge.input if not s.startswith("^")]
    nexts = [n for n in back if n is not None and n.op in ("NextIteration", "RefNextIteration")]
    if len(back) != 2 or len(nexts) != 1 or not nexts[0].input:
        raise GraphError(f"{what}: Merge {quoted(merge.name)} should read the Enter "
                         f"{quoted(enter.name)} and one NextIteration; the loop is malformed")
    switch = only([n for n in readers.get(merge.name, ()) if n.op in ("Switch", "RefSwitch")
                   and len(n.input) > 1 and parse_ref(n.input[1]).node == loop_cond.name],
                  "Switch")
    exits = [n for n in readers.get(switch.name, ()) if n.op in ("Exit", "RefExit")]
    if len(exits) > 1:
        raise GraphError(f"{what}: loop variable {quoted(enter.name)} has {len(exits)} Exit "
                         "nodes (expected at most 1)")
    return _LoopVar(enter, merge, switch, nexts[0], exits[0] if exits else None)
