"""What keeps an op from running whatever the shapes (allocation.py's first step): no
kernel, an unknown builtin code, a tensor type numpy cannot hold, a sparse tensor. One
UnsupportedOpError lists every such item of a model at once; support.py classifies them
for ``edgelite inspect``."""

from __future__ import annotations

from typing import Mapping

from edgelite.errors import UnsupportedOpError
from edgelite.names import quoted
from .kernels import KERNELS, OPS
from .kernels.base import Kernel, storage_dtype
from .kernels.custom import NO_CUSTOM, find_custom_kernel
from .loader.model import Operator, Subgraph

# Ops that run on STRING tensors (object arrays of bytes, kept outside the arena), as
# LiteRT's kernels do: gather.cc and reshape.cc take kTfLiteString; LiteRT's
# concatenation.cc refuses it in Prepare, so edgelite does not take it either.
STRING_OPS = frozenset(name for name, op in OPS.items() if op.strings)


def _describe(op: Operator, subgraph: Subgraph) -> str:
    outs = [subgraph.tensors[t].name for t in op.outputs if t >= 0]
    target = f" (output {quoted(outs[0])})" if outs else ""
    name = f"CUSTOM {quoted(op.custom_code)}" if op.name == "CUSTOM" else op.name
    where = f"subgraph {subgraph.index} " if subgraph.index else ""
    return f"{where}operator {op.index} {name}{target}"


describe_op = _describe  # "subgraph 1 operator 3 FILL (output 'y')", for messages


def kernel_for(op: Operator, custom: Mapping[str, Kernel] = NO_CUSTOM) -> Kernel | None:
    """The kernel that runs ``op``: a builtin's from KERNELS, a CUSTOM op's by its custom
    code (kernels/custom: ``custom`` first, then registered, then built-in ones)."""
    if op.name == "CUSTOM":
        return find_custom_kernel(op.custom_code, custom)
    return KERNELS.get(op.name)


def static_problem(op: Operator, subgraph: Subgraph,
                   custom: Mapping[str, Kernel] = NO_CUSTOM) -> tuple[str, str] | None:
    """(kind, reason) when ``op`` cannot run whatever the shapes (no kernel, a tensor type
    numpy cannot hold, a sparse tensor), else None; kinds as support.py names them."""
    if op.name.startswith("UNKNOWN_BUILTIN_"):
        return "unknown builtin", f"unknown builtin code {op.builtin_code} (newer schema " \
            "than edgelite's?)"
    if kernel_for(op, custom) is None:
        return ("custom", "custom op, no kernel") if op.name == "CUSTOM" else \
            ("no kernel", "no kernel")
    if -1 in op.outputs:
        return "shape", "an output is omitted (-1)"
    for t in op.inputs + op.outputs:
        tensor = subgraph.tensors[t] if t >= 0 else None
        if tensor is None:
            continue
        dtype = storage_dtype(tensor)
        if dtype is None or dtype.kind == "O" and not (
                op.name in STRING_OPS and is_string(tensor)):
            return "dtype", f"tensor {quoted(tensor.name)} has type {tensor.type_name}"
        if tensor.is_sparse and tensor.data is None:  # not expanded at load
            return "sparse", f"tensor {quoted(tensor.name)} is sparse"
    return None


def is_string(tensor) -> bool:
    """A STRING tensor (held as an object array of bytes, outside the arena)."""
    return tensor.type_name == "STRING"


def unsupported_items(subgraph: Subgraph, custom: Mapping[str, Kernel] = NO_CUSTOM
                      ) -> list[str]:
    """One line per op or tensor of ``subgraph`` edgelite cannot run."""
    problems = []
    for op in subgraph.operators:
        found = static_problem(op, subgraph, custom)
        if found:
            problems.append(f"  {_describe(op, subgraph)}: {found[1]}")
    for t in subgraph.inputs + subgraph.outputs:
        tensor = subgraph.tensors[t]
        dtype = storage_dtype(tensor)
        if dtype is None or dtype.kind == "O" and not is_string(tensor):
            where = f"subgraph {subgraph.index} " if subgraph.index else "model "
            problems.append(f"  {where}input/output tensor {t} {quoted(tensor.name)} has "
                            f"type {tensor.type_name}")
    return problems


def check_supported(subgraphs: Subgraph | list[Subgraph],
                    custom: Mapping[str, Kernel] = NO_CUSTOM) -> None:
    """UnsupportedOpError listing every item of ``subgraphs`` edgelite cannot run."""
    if isinstance(subgraphs, Subgraph):
        subgraphs = [subgraphs]
    problems = [line for sg in subgraphs for line in unsupported_items(sg, custom)]
    if problems:
        raise UnsupportedOpError(
            f"edgelite's interpreter cannot run this model ({len(problems)} unsupported "
            "item(s)):\n" + "\n".join(problems)
        )
