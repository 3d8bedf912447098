"""Read a frozen TensorFlow GraphDef (.pb or .pbtxt), choose inputs/outputs, prune.

No TensorFlow needed: the GraphDef is parsed with edgelite's own subset of TensorFlow's protos
(schema/graph.proto). Tensor references follow TF's spelling: "node" is output 0 of node,
"node:1" output 1, and "^node" a control dependency (ignored -- a frozen inference graph needs
no ordering beyond its data flow).
"""

from __future__ import annotations

import os
from typing import NamedTuple

from google.protobuf import message as pb_message
from google.protobuf import text_format

from edgelite.errors import GraphError, ModelFormatError
from edgelite.fileio import read_regular
from edgelite.names import quoted, shown
from ..schema import graph_pb2
from .files import quoted_path
from .tf_tensor import shape_from_proto

# Limits that keep a hostile file from exhausting memory.
MAX_GRAPHDEF_BYTES = 2 << 30

# Ops that produce nothing an output could need; never chosen as default outputs.
NON_OUTPUT_OPS = frozenset({"NoOp", "Assert", "Const", "Placeholder", "PlaceholderWithDefault",
                            "SaveV2", "RestoreV2", "VarHandleOp", "VariableV2",
                            "AssignVariableOp", "Print", "PrintV2"})
INPUT_OPS = frozenset({"Placeholder"})
LOOP_EXITS = frozenset({"Exit", "RefExit"})


class TensorRef(NamedTuple):
    """One output of a node. (A NamedTuple: a 100,000-node graph parses its inputs several
    times, and a frozen dataclass costs several times more to build.)"""

    node: str
    index: int = 0

    @property
    def name(self) -> str:
        """The IR tensor name: the node name for output 0, "node:k" otherwise."""
        # (tensor_name's rule, inlined: read for every input of every node)
        return self.node if self.index == 0 else f"{self.node}:{self.index}"


def tensor_name(node: str, index: int) -> str:
    """Output `index` of node `node` as a tensor name: TensorRef(node, index).name."""
    return node if index == 0 else f"{node}:{index}"


def parse_ref(text: str) -> TensorRef:
    """'node', 'node:2' -> TensorRef. (Control inputs '^node' are filtered out by callers.)"""
    name, sep, idx = text.rpartition(":")
    if sep and idx.isdigit():
        return TensorRef(name, int(idx))
    return TensorRef(text, 0)


def ref_node(text: str) -> str:
    """The node a reference names: 'node', 'node:2' and '^node' -> 'node' (parse_ref's
    node, without building the TensorRef: TFGraph reads every input of every node)."""
    text = text.lstrip("^")
    name, sep, idx = text.rpartition(":")
    return name if sep and idx.isdigit() else text


def data_inputs(node) -> list[TensorRef]:
    refs = []
    for s in node.input:  # (parse_ref inlined: the lowering reads every node's inputs often)
        if s[:1] != "^":
            name, sep, idx = s.rpartition(":")
            refs.append(TensorRef(name, int(idx)) if sep and idx.isdigit() else TensorRef(s))
    return refs


def outputs_read(nodes, outputs: list[TensorRef],
                 known: dict[str, list[TensorRef]] | None = None) -> dict[str, set[int]]:
    """Node name -> the indices of its outputs that `nodes` read or `outputs` name. `known`:
    nodes' data inputs parsed already (TFGraph.node_refs)."""
    known = known or {}
    reads: dict[str, set[int]] = {}
    for node in nodes:
        refs = known.get(node.name)  # (an empty list is known too: a Const reads nothing)
        _note_reads(reads, data_inputs(node) if refs is None else refs)
    _note_reads(reads, outputs)
    return reads


def _note_reads(reads: dict[str, set[int]], refs) -> None:
    for ref in refs:
        indices = reads.get(ref.node)
        if indices is None:  # (not setdefault: that builds a set for every read)
            indices = reads[ref.node] = set()
        indices.add(ref.index)


def load_graphdef(source: str | os.PathLike | bytes) -> graph_pb2.GraphDef:
    """Parse a binary (.pb) or text (.pbtxt) GraphDef from a path or bytes.

    The format is sniffed, not taken from the extension: binary parsing is tried first and
    text parsing second, and a file that is neither gets one ModelFormatError.
    """
    where = "GraphDef" if isinstance(source, bytes) else quoted_path(source)
    if isinstance(source, bytes):
        data = source
    else:
        data = read_regular(source, where, ModelFormatError, MAX_GRAPHDEF_BYTES)
    if not data:
        raise ModelFormatError(f"{where}: file is empty")
    gd = graph_pb2.GraphDef()
    text_like = (not isinstance(source, bytes) and os.fspath(source).endswith((".pbtxt", ".txt"))
                 or _looks_like_text(data))
    parsers = (_parse_text, _parse_binary) if text_like else (_parse_binary, _parse_text)
    errors = []
    for parse in parsers:
        try:
            parse(gd, data)
            if gd.node:
                return gd
            errors.append(f"{parse.__name__[7:]}: no nodes")
        except (pb_message.DecodeError, text_format.ParseError, UnicodeDecodeError,
                ValueError, RecursionError) as e:
            first_line = (str(e).splitlines() or [type(e).__name__])[0]  # may quote the file
            errors.append(f"{parse.__name__[7:]}: {shown(first_line, 200)}")
        gd.Clear()
    raise ModelFormatError(f"{where}: not a TensorFlow GraphDef (neither binary .pb nor text "
                           f".pbtxt parses: {'; '.join(errors)}). Export a frozen graph with "
                           "convert_variables_to_constants and tf.io.write_graph.")


def _looks_like_text(data: bytes) -> bool:
    head = data[:256].lstrip()
    return head.startswith((b"node", b"versions", b"library", b"#"))


def _parse_binary(gd, data: bytes) -> None:
    gd.ParseFromString(data)
    for node in gd.node:  # a random byte string can "parse"; real nodes have names and ops
        if not node.name or not node.op:
            raise ValueError("node without a name or op")


def _parse_text(gd, data: bytes) -> None:
    text_format.Parse(data.decode("utf-8"), gd, allow_unknown_field=True)


class TFGraph:
    """The GraphDef's nodes by name, with the consumer map, for choosing and pruning.

    TF1 control flow is raised to functional While / If nodes first (control_flow/), so the
    graph is acyclic; `library` holds the functions they and the GraphDef's calls use.
    Default inputs / outputs are chosen on the nodes as the file has them."""

    def __init__(self, gd: graph_pb2.GraphDef | None = None, nodes=None, library=None) -> None:
        from .control_flow import Library
        self.nodes: dict = {}
        read: set[str] = set()  # the input references as written
        # (name, op) of each node as written, for the defaults
        self._original: list[tuple[str, str]] = []
        for node in (gd.node if gd is not None else nodes):  # (one pass: protobuf fields
            name = node.name                                  # are slow to read)
            if name in self.nodes:
                raise ModelFormatError(f"GraphDef has two nodes named {quoted(name)}")
            self.nodes[name] = node
            self._original.append((name, node.op))
            read.update(node.input)
        # the nodes read: a plain 'node' reference is its node (parsed only when it is not)
        self.consumed = {s if ":" not in s and s[:1] != "^" else ref_node(s) for s in read}
        self._ops = dict(self._original)
        self.library = library if library is not None else Library()
        self._gd = gd  # functionalized on the first prune(), which knows the outputs
        self.node_refs: dict[str, list[TensorRef]] = {}  # the last prune's nodes' data inputs
    def node(self, name: str, what: str):
        try:
            return self.nodes[name]
        except KeyError:
            hint = _close_names(name, self.nodes)
            raise GraphError(f"{what} {quoted(name)} is not a node of this graph"
                             f"{'; did you mean ' + hint + '?' if hint else ''}") from None

    def default_inputs(self) -> list[TensorRef]:
        return [TensorRef(name) for name, op in self._original if op in INPUT_OPS]

    def default_outputs(self) -> list[TensorRef]:
        outs = [TensorRef(name) for name, op in self._original
                if name not in self.consumed and op not in NON_OUTPUT_OPS]
        # A loop's unused results (Exit of a counter) are outputs only if nothing else is.
        outs = [r for r in outs if self._op_of(r) not in LOOP_EXITS] or outs
        if not outs:
            raise GraphError("could not find the graph's outputs (every node is consumed); "
                             "name them with --outputs")
        return outs

    def _op_of(self, ref: TensorRef) -> str:
        return self._ops.get(ref.node, "")

    def resolve(self, names: list[str] | None, default, what: str) -> list[TensorRef]:
        if not names:
            return default()
        refs = [parse_ref(n) for n in names]
        for r in refs:
            self.node(r.node, what)
        return refs

    def prune(self, inputs: list[TensorRef], outputs: list[TensorRef]) -> list:
        """The nodes the outputs need, in topological order, stopping at the inputs.

        Iterative DFS (no recursion limit on deep graphs); a cycle is reported by name.
        Every shape a kept node declares is checked (tf_tensor.shape_from_proto) with the
        node's name in the message.
        """
        if self._gd is not None:
            from .control_flow import functionalize
            self.nodes, library = functionalize(self._gd, {r.name for r in outputs},
                                                dict(self.nodes))
            self.library.update(library)  # (the lowering may hold the library already)
            self._gd = None
            for r in outputs:
                if r.node not in self.nodes:
                    raise GraphError(f"output {quoted(r.name)} is computed inside a loop or "
                                     "cond, which becomes a WHILE / IF subgraph; name a node "
                                     "outside it (e.g. the loop's Exit)")
        stop = {r.node for r in inputs}
        self.node_refs = {}
        order, state = [], {}  # state: 1 = on the stack, 2 = done
        for out in outputs:
            if state.get(out.node) == 2:
                continue
            state[out.node] = 1
            stack = [(out.node, iter(self._deps(out.node, stop)))]
            while stack:
                name, deps = stack[-1]
                nxt = next(deps, None)
                if nxt is None:
                    stack.pop()
                    state[name] = 2
                    order.append(self.nodes[name])
                    continue
                s = state.get(nxt)
                if s == 1:
                    raise GraphError(f"the graph has a cycle through node {quoted(nxt)} that "
                                     "is not TF control flow (tf.while_loop); the GraphDef "
                                     "is malformed")
                if s is None:
                    state[nxt] = 1
                    stack.append((nxt, iter(self._deps(nxt, stop))))
        for node in order:
            _check_shapes(node)
        return order

    def _deps(self, name: str, stop: set[str]) -> list[str]:
        if name in stop:
            return []
        node = self.nodes.get(name)
        if node is None:  # e.g. a loop's node cut out of a malformed frame, or a lost output
            raise GraphError(f"node {quoted(name)} is needed but not in the graph; the "
                             "GraphDef is incomplete")
        deps = []
        refs = self.node_refs[name] = data_inputs(node)
        for ref in refs:
            if ref.node not in self.nodes:
                raise GraphError(f"node {quoted(name)} ({shown(node.op)}) reads "
                                 f"{quoted(ref.name)}, which is not in the graph; the GraphDef "
                                 "is incomplete")
            deps.append(ref.node)
        return deps


def _check_shapes(node) -> None:
    """The node's shape attributes (Placeholder's shape, _output_shapes, ...) are sane."""
    where = None  # (the message's start, made for the nodes that have shapes)
    attrs = node.attr
    for key in attrs:  # (not attrs.values(): a Python-level view, slow on a protobuf map)
        value = attrs[key]
        kind = value.WhichOneof("value")
        if kind == "shape":
            shapes = (value.shape,)
        elif kind == "list" and value.list.shape:
            shapes = value.list.shape
        else:
            continue
        where = where or f"node {quoted(node.name)} ({shown(node.op)})"
        for shape in shapes:
            shape_from_proto(shape, where)


def _close_names(name: str, names) -> str:
    import difflib
    close = difflib.get_close_matches(name, list(names), n=3, cutoff=0.5)
    return ", ".join(quoted(n) for n in close)
