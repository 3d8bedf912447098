"""The converter's IR: a Graph of TFLite-level Ops over named Tensors.

Lowering turns TF nodes into these ops (op types are TFLite builtin names such as "CONV_2D",
options are the TFLite option fields in snake_case), passes rewrite the graph, and export.py
serialises it. Every tensor keeps the GraphDef name it came from ("node" for output 0,
"node:k" for output k), so float and quantized models can be compared tensor by tensor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from ..interpreter.errors import GraphError
from ..schema import ops as schema_ops


# The tflite enums, as IntEnums built from the generated schema (no hand-copied values).
Padding = IntEnum("Padding", schema_ops.PADDING)
Activation = IntEnum("Activation", schema_ops.ACTIVATION)  # fused_activation_function


# Ops that exist only inside the converter and must be rewritten away before export.
PSEUDO_OPS = frozenset({"IDENTITY", "MATMUL"})


@dataclass(eq=False)
class QuantParams:
    """Affine quantization: real = scale * (q - zero_point), per tensor or per `axis` slice."""

    scale: np.ndarray
    zero_point: np.ndarray
    axis: int = 0
    min: np.ndarray | None = None
    max: np.ndarray | None = None


@dataclass(eq=False)
class Tensor:
    name: str
    dtype: np.dtype
    shape: tuple[int, ...] | None = None      # None until shapes are inferred
    data: np.ndarray | None = None            # set for constants
    quant: QuantParams | None = None
    shape_signature: tuple[int, ...] | None = None  # -1 where the user left a dim dynamic
    # Real-value range known from the graph itself (FakeQuant nodes), used by quantization.
    range: tuple[float, float] | None = None

    @property
    def is_const(self) -> bool:
        return self.data is not None

    def __repr__(self) -> str:
        kind = "const " if self.is_const else ""
        return f"Tensor({kind}{self.name!r}, {np.dtype(self.dtype).name}, {self.shape})"


@dataclass(eq=False)
class Op:
    type: str                      # TFLite builtin op name, e.g. "CONV_2D"
    inputs: list[Tensor | None]    # None marks an omitted optional input
    outputs: list[Tensor]
    options: dict = field(default_factory=dict)
    name: str = ""                 # the TF node it came from
    custom_code: str | None = None  # for type == "CUSTOM"
    origin: str = ""               # the TF op type it came from ("FusedBatchNormV3", ...)

    def __repr__(self) -> str:
        ins = ", ".join(t.name if t is not None else "-" for t in self.inputs)
        outs = ", ".join(t.name for t in self.outputs)
        return f"Op({self.type} [{ins}] -> [{outs}] {self.options})"


class Graph:
    """A single subgraph: ops in topological order, graph inputs and outputs."""

    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.inputs: list[Tensor] = []
        self.outputs: list[Tensor] = []
        self._names: set[str] = set()

    # -- construction -------------------------------------------------------------------------
    def unique_name(self, base: str) -> str:
        name, k = base, 1
        while name in self._names:
            name, k = f"{base}_{k}", k + 1
        self._names.add(name)
        return name

    def tensor(self, name: str, dtype, shape=None, data=None) -> Tensor:
        """A new tensor with a name unique in this graph (suffixed if needed)."""
        if data is not None:
            data = np.asarray(data, dtype=dtype)
            shape = tuple(data.shape)
        return Tensor(self.unique_name(name), np.dtype(dtype), shape, data)

    def const(self, name: str, data, dtype=None) -> Tensor:
        data = np.asarray(data, dtype=dtype)
        return self.tensor(name, data.dtype, data=data)

    def add_op(self, type_: str, inputs, outputs, options=None, name="") -> Op:
        op = Op(type_, list(inputs), list(outputs), dict(options or {}), name)
        self.ops.append(op)
        return op

    # -- queries (computed on demand; graphs are small) ---------------------------------------
    def producer(self, t: Tensor) -> Op | None:
        for op in self.ops:
            if any(o is t for o in op.outputs):
                return op
        return None

    def consumers(self, t: Tensor) -> list[Op]:
        return [op for op in self.ops if any(i is t for i in op.inputs)]

    def use_count(self, t: Tensor) -> int:
        """How many op inputs plus graph outputs read `t`."""
        uses = sum(1 for op in self.ops for i in op.inputs if i is t)
        return uses + sum(1 for o in self.outputs if o is t)

    def is_output(self, t: Tensor) -> bool:
        return any(o is t for o in self.outputs)

    def tensors(self) -> list[Tensor]:
        """Every tensor reachable from ops and graph inputs/outputs, in first-seen order."""
        seen: dict[int, Tensor] = {}
        for t in self.inputs:
            seen.setdefault(id(t), t)
        for op in self.ops:
            for t in [*op.inputs, *op.outputs]:
                if t is not None:
                    seen.setdefault(id(t), t)
        for t in self.outputs:
            seen.setdefault(id(t), t)
        return list(seen.values())

    def op_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for op in self.ops:
            counts[op.type] = counts.get(op.type, 0) + 1
        return dict(sorted(counts.items()))

    # -- rewriting ----------------------------------------------------------------------------
    def set_const_input(self, op: Op, i: int, data: np.ndarray) -> None:
        """Give op input i new constant data, in place when nothing else reads the tensor."""
        old = op.inputs[i]
        data = np.asarray(data, dtype=old.dtype)
        if self.use_count(old) == 1:
            old.data, old.shape = data, tuple(data.shape)
        else:
            op.inputs[i] = self.const(old.name, data)

    def replace_uses(self, old: Tensor, new: Tensor) -> None:
        """Make every reader of `old` (ops and graph outputs) read `new` instead."""
        for op in self.ops:
            op.inputs = [new if i is old else i for i in op.inputs]
        self.outputs = [new if o is old else o for o in self.outputs]

    def bypass(self, op: Op, keep: Tensor) -> None:
        """Remove single-output `op`, rewiring its readers to `keep`.

        `keep` takes over the removed output's name (so a graph output keeps its name and
        conv+bias+relu is named after the relu), unless `keep` is a graph input/output or a
        constant, whose names must not change.
        """
        out = op.outputs[0]
        self.ops.remove(op)
        if not (self.is_output(keep) or keep in self.inputs or keep.is_const):
            keep.name = out.name  # a fused chain is named after its last node, as in TFLite
        if out.range is not None:
            keep.range = out.range  # a FakeQuant range describes the chain's final value
        self.replace_uses(out, keep)

    def remove_dead_ops(self) -> int:
        """Drop ops none of whose outputs is used. Returns how many were removed."""
        removed = 0
        changed = True
        while changed:
            changed = False
            for op in reversed(self.ops):
                if all(self.use_count(o) == 0 for o in op.outputs):
                    self.ops.remove(op)
                    removed += 1
                    changed = True
        return removed

    def check(self) -> None:
        """Every op input is a graph input, a constant, or produced by an earlier op."""
        ready = {id(t) for t in self.inputs}
        for op in self.ops:
            for t in op.inputs:
                if t is not None and not t.is_const and id(t) not in ready:
                    raise GraphError(f"op {op.type} ({op.name}) reads {t.name!r} before it "
                                     "is produced")
            ready.update(id(o) for o in op.outputs)
        for t in self.outputs:
            if not t.is_const and id(t) not in ready:
                raise GraphError(f"graph output {t.name!r} is never produced")
