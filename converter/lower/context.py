"""What a lowering rule sees: the node's inputs as IR tensors, typed attributes, outputs."""

from __future__ import annotations

import numpy as np

from edgelite.errors import EdgeliteError, GraphError, ShapeError, UnsupportedOpError
from edgelite.names import quoted, shown
from ..graphdef import TensorRef, data_inputs, tensor_name
from ..ir import Graph, Tensor
from ..tf_tensor import numpy_dtype, shape_from_proto, tensor_to_numpy


def node_prefix(node) -> str:
    """How every lowering message starts: node 'name' (OpType)."""
    return f"node {quoted(node.name)} ({shown(node.op)})"


def fail(cls: type[EdgeliteError], node, what: str) -> EdgeliteError:
    """An error of class `cls` reading "node 'name' (OpType): what"."""
    return cls(f"{node_prefix(node)}: {what}")


class LowerCtx:
    """Maps TF tensor names to IR tensors while rules translate nodes one by one."""

    def __init__(self, graph: Graph, library=None, allow_custom_ops: bool = False) -> None:
        self.graph = graph
        self.tensors: dict[str, Tensor] = {}
        self.dead_refs: set[str] = set()    # untaken Switch outputs (see control.py)
        self.dead_nodes: set[str] = set()   # nodes reading a dead tensor: not lowered
        # Function calls (functional.py): the library, the functions being lowered (a
        # recursion guard), the node budget shared by every inlined / called function, and
        # the prefix of this function's node names in reports and tensor names.
        self.library = library if library is not None else {}
        self.allow_custom_ops = allow_custom_ops
        self.call_stack: tuple[str, ...] = ()
        self.budget = [0]
        self.scope = ""
        self.report = None  # the SupportReport nodes are counted in (set by the caller)
        self._refs: tuple | None = None  # (node, its data inputs): the node being lowered
        self.node_refs: dict = {}  # node name -> its data inputs, parsed by TFGraph.prune
        self.batch_size = 1  # what an unknown leading dim of a list's element shape takes
        # complex values carried as float parts (spectral.py): id(stand-in) -> (stand-in, re, im)
        self.complex_parts: dict[int, tuple] = {}
        # node name -> the output indices live nodes (and the requested outputs) read; set by
        # lower_nodes for the graph it lowers
        self.reads: dict[str, set[int]] | None = None
        # (If node, predicate) of every cond left to run time, shared with child contexts:
        # the unsupported-op report names the placeholders deciding them (hints.py)
        self.undecided_conds: list = []

    def child(self, graph: Graph, fn_name: str, scope: str) -> "LowerCtx":
        """A context for lowering function `fn_name` into `graph` (a new subgraph, or this
        one when inlining); names of its nodes get `scope` in front."""
        c = LowerCtx(graph, self.library, self.allow_custom_ops)
        c.call_stack = self.call_stack + (fn_name,)
        c.budget, c.scope = self.budget, scope
        c.batch_size = self.batch_size
        c.undecided_conds = self.undecided_conds
        return c

    def display(self, node) -> str:
        """The node's name as reports show it (qualified inside library functions)."""
        return self.scope + node.name

    def outputs_read(self, node, count: int) -> list[int]:
        """Which of node's `count` outputs are read (all when unknown), in order."""
        if self.reads is None:
            return list(range(count))
        return sorted(k for k in self.reads.get(node.name, ()) if k < count)

    def is_dead_ref(self, ref: TensorRef) -> bool:
        return ref.name in self.dead_refs or ref.node in self.dead_nodes

    def has_dead(self) -> bool:
        """Whether any tensor is dead (a graph without tf.cond has none)."""
        return bool(self.dead_refs or self.dead_nodes)

    def refs(self, node) -> list[TensorRef]:
        """data_inputs(node), parsed once while the node is looked at and lowered (a large
        graph's lowering read every node's inputs six times), or once for the whole graph
        (`node_refs`: TFGraph.prune's)."""
        if self._refs is None or self._refs[0] is not node:
            known = self.node_refs.get(node.name)
            self._refs = (node, data_inputs(node) if known is None else known)
        return self._refs[1]

    def is_dead(self, node) -> bool:
        """A node (other than Merge) reading a dead tensor is itself dead."""
        if not self.has_dead():  # (a graph without tf.cond)
            return False
        return node.op != "Merge" and any(self.is_dead_ref(r) for r in self.refs(node))

    # -- inputs -------------------------------------------------------------------------------
    def tensor_of(self, node, i: int, ref: TensorRef) -> Tensor:
        """The IR tensor input i of node reads; an output its producer lacks is an error."""
        t = self.tensors.get(ref.name)
        if t is None:
            n = 0
            while TensorRef(ref.node, n).name in self.tensors:
                n += 1
            raise fail(GraphError, node, f"input {i} reads {quoted(ref.name)}, but node "
                       f"{quoted(ref.node)} has {n} output(s) edgelite can convert; the "
                       "GraphDef is malformed")
        return t

    def inputs(self, node) -> list[Tensor]:
        return [self.tensor_of(node, i, r) for i, r in enumerate(self.refs(node))]

    def input(self, node, i: int) -> Tensor:
        refs = self.refs(node)
        if i >= len(refs):
            raise fail(GraphError, node, f"has {len(refs)} inputs; input {i} is missing")
        return self.tensor_of(node, i, refs[i])

    def const_input(self, node, i: int, what: str) -> np.ndarray:
        """Input i as a numpy array; it must be constant once folding has run."""
        t = self.input(node, i)
        if not t.is_const:
            raise fail(UnsupportedOpError, node, f"{what} (input {i}, {quoted(t.name)}) must "
                       "be a constant")
        return t.data

    # -- outputs ------------------------------------------------------------------------------
    def output(self, node, dtype=np.float32, index: int = 0, shape=None) -> Tensor:
        """A fresh IR tensor for output `index` of node, named after it."""
        name = tensor_name(node.name, index)
        t = self.graph.tensor(self.scope + name, dtype, shape)
        self.tensors[name] = t
        return t

    def alias(self, node, t: Tensor, index: int = 0) -> None:
        self.tensors[tensor_name(node.name, index)] = t

    def emit(self, type_: str, node, inputs, options=None, dtype=None, n_outputs: int = 1):
        """Add one op computing node's outputs; returns its (first) output tensor."""
        if dtype is None:
            dtype = _first_dtype(inputs)
        outs = [self.output(node, dtype, k) for k in range(n_outputs)]
        self.graph.add_op(type_, inputs, outs, options, name=node.name)
        return outs[0]

    def const(self, node, suffix: str, data, dtype=None) -> Tensor:
        return self.graph.const(f"{node.name}/{suffix}", data, dtype)

    def step(self, node, type_: str, inputs, suffix: str, dtype, options=None) -> Tensor:
        """One intermediate op of node's lowering; its output is named node/suffix."""
        out = self.graph.tensor(f"{node.name}/{suffix}", dtype)
        self.graph.add_op(type_, inputs, [out], options, name=node.name)
        return out


def _first_dtype(inputs) -> np.dtype:
    """The dtype of the first input present (float32 if none is)."""
    for t in inputs:
        if t is not None:
            return t.dtype
    return np.float32


# -- typed attribute access ---------------------------------------------------------------------
def _attr(node, key: str, kind: str, default):
    value = node.attr.get(key)  # (one lookup: protobuf map access is slow)
    if value is None:
        if default is _REQUIRED:
            raise fail(GraphError, node, f"lacks attribute {key}")
        return default
    found = value.WhichOneof("value")
    if found != kind:
        raise fail(GraphError, node, f"attribute {key} should be of kind {kind!r}, found "
                   f"{found!r}")
    return getattr(value, kind)


_REQUIRED = object()
_ABSENT = object()  # what _attr gives for a missing attribute whose caller has a default


def attr_int(node, key, default=_REQUIRED) -> int:
    return int(_attr(node, key, "i", default))


def attr_float(node, key, default=_REQUIRED) -> float:
    return float(_attr(node, key, "f", default))


def attr_bool(node, key, default=_REQUIRED) -> bool:
    return bool(_attr(node, key, "b", default))


def attr_str(node, key, default=_REQUIRED) -> str:
    v = _attr(node, key, "s", default)
    return v.decode("utf-8", "backslashreplace") if isinstance(v, bytes) else v


def attr_ints(node, key, default=_REQUIRED) -> list[int]:
    v = _attr(node, key, "list", default)
    return list(v.i) if not isinstance(v, list) else v


def attr_dtype(node, key="T", default=_REQUIRED) -> np.dtype:
    v = _attr(node, key, "type", _REQUIRED if default is _REQUIRED else _ABSENT)
    return default if v is _ABSENT else dtype_value(node, key, v)


def dtype_value(node, key: str, v: int) -> np.dtype:
    """The numpy dtype of type attribute `key`, whose DataType value `v` is read already."""
    try:
        return numpy_dtype(v, "")
    except UnsupportedOpError:  # (the message names the node: made only when needed)
        return numpy_dtype(v, f"{node_prefix(node)}: attribute {key}")


def attr_shape(node, key="shape", default=_REQUIRED):
    v = _attr(node, key, "shape", default)
    return v if v is None or isinstance(v, tuple) else shape_from_proto(v)


def attr_tensor(node, key="value") -> np.ndarray:
    proto = _attr(node, key, "tensor", _REQUIRED)
    try:
        return tensor_to_numpy(proto, "")
    except EdgeliteError:
        pass  # again, for the message naming the node (made only when one is needed)
    return tensor_to_numpy(proto, node_prefix(node))


def nhwc_pair(node, key: str, default=(1, 1, 1, 1)) -> tuple[int, int]:
    """A 4-element NHWC attribute (strides, ksize, dilations) -> (h, w)."""
    v = attr_ints(node, key, list(default))
    if len(v) != 4 or v[0] != 1 or v[3] != 1:
        raise fail(ShapeError, node, f"{key}={v[:8]} is not supported; only [1, h, w, 1] "
                   "(NHWC, no batch/channel striding) is")
    return v[1], v[2]


def require_nhwc(node) -> None:
    fmt = attr_str(node, "data_format", "NHWC")
    if fmt != "NHWC":
        raise fail(UnsupportedOpError, node, f"uses data_format {quoted(fmt)}; TFLite kernels "
                   "are NHWC. Re-export the model with NHWC layout (channels_last).")


def axis_in_rank(node, axis: int, rank: int | None, what: str = "axis",
                 extra: int = 0) -> int:
    """`axis` checked against a known rank (+extra for ops that add a dimension), as TF does:
    -(rank + extra) <= axis < rank + extra. Returns it unchanged."""
    if rank is not None and not -(rank + extra) <= axis < rank + extra:
        raise fail(ShapeError, node, f"{what} {axis} is out of range for rank {rank + extra} "
                   f"(valid: {-(rank + extra)} to {rank + extra - 1})")
    return axis
