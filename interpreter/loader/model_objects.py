"""The plain objects a .tflite file is read into (see model.py), and graph checks on them.

Frozen dataclasses, tuples, read-only mappings and read-only numpy views of the file's
bytes: nothing here refers to flatbuffers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

from ...schema import ops as schema_ops
from edgelite.errors import ModelFormatError
from edgelite.names import quoted


def num_elements(shape: Iterable[int]) -> int:
    """The product of ``shape`` in Python ints. numpy's int64 product wraps around
    (dims [2**62 + 1, 4] give 4 elements and pass a size check), so every element
    count in the interpreter comes from here."""
    n = 1
    for d in shape:
        n *= int(d)
    return n


@dataclass(frozen=True)
class Quantization:
    scale: np.ndarray  # float32, one per tensor or per channel
    zero_point: np.ndarray  # int64, same length as scale (or empty)
    quantized_dimension: int
    min: np.ndarray | None  # float32 calibration range, if present
    max: np.ndarray | None


@dataclass(frozen=True)
class DimensionMetadata:
    """One traversed dimension of a sparse tensor (schema DimensionMetadata): DENSE (all
    ``dense_size`` positions stored) or SPARSE_CSR (``segments`` / ``indices``, int64)."""

    is_csr: bool
    dense_size: int
    segments: np.ndarray | None  # SPARSE_CSR: where each parent's stored run starts
    indices: np.ndarray | None   # SPARSE_CSR: the coordinate of each stored position


@dataclass(frozen=True)
class Sparsity:
    """A constant tensor stored sparse (schema SparsityParameters; sparsity.py)."""

    traversal_order: tuple[int, ...]  # original dims, then block dims, in storage order
    block_map: tuple[int, ...]  # block dim j divides original dim block_map[j]
    dim_metadata: tuple[DimensionMetadata, ...]  # one per traversed dim, in that order
    # the stored values as the file holds them (1-D; what LiteRT's get_tensor returns)
    values: np.ndarray | None = None


@dataclass(frozen=True)
class Tensor:
    index: int
    name: str
    type_code: int  # TensorType value
    dtype: np.dtype | None  # None for types numpy cannot hold (INT4, RESOURCE, ...)
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...]  # -1 for unknown dimensions; = shape when absent
    buffer: int
    data: np.ndarray | None  # read-only view of the constant value, else None
    quantization: Quantization | None
    is_variable: bool
    is_sparse: bool
    sparsity: Sparsity | None = None  # a sparse constant's encoding (``data``: dense value)

    @property
    def is_constant(self) -> bool:
        return self.data is not None or self.is_sparse

    @property
    def type_name(self) -> str:
        return schema_ops.TENSOR_TYPE_NAME.get(self.type_code, f"type {self.type_code}")


@dataclass(frozen=True)
class Operator:
    index: int
    name: str  # "CONV_2D", "CUSTOM", or "UNKNOWN_BUILTIN_<code>"
    builtin_code: int
    custom_code: str | None
    version: int
    inputs: tuple[int, ...]  # -1 marks an omitted optional input
    outputs: tuple[int, ...]
    intermediates: tuple[int, ...]
    options: Mapping[str, Any]  # builtin options (snake_case keys); empty when absent
    custom_options: bytes | None


@dataclass(frozen=True)
class Subgraph:
    index: int
    name: str
    tensors: tuple[Tensor, ...]
    operators: tuple[Operator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass(frozen=True)
class SignatureDef:
    key: str
    subgraph_index: int
    inputs: Mapping[str, int]  # signature input name -> tensor index, in file order
    outputs: Mapping[str, int]


@dataclass(frozen=True)
class Model:
    version: int
    description: str
    subgraphs: tuple[Subgraph, ...]
    signature_defs: tuple[SignatureDef, ...]
    metadata: Mapping[str, bytes]
    has_identifier: bool


def check_execution_order(sg: Subgraph) -> None:
    """Every input is available when its op runs; every tensor is produced once."""
    inputs = set(sg.inputs)  # (a set: a file may list thousands of inputs)
    available = set(inputs)
    available.update(t.index for t in sg.tensors if t.is_constant or t.is_variable)
    produced: dict[int, int] = {}
    for op in sg.operators:
        for t in op.inputs:
            if t >= 0 and t not in available:
                tensor = sg.tensors[t]
                raise ModelFormatError(
                    f"subgraph {sg.index}: operator {op.index} ({op.name}) reads tensor "
                    f"{t} {quoted(tensor.name)} before any operator produces it and it is "
                    "neither a constant nor a subgraph input (operators out of order, or a "
                    "cycle)"
                )
        for t in op.outputs:
            if t < 0:
                continue
            if t in produced or t in inputs or sg.tensors[t].is_constant:
                first = f"operator {produced[t]}" if t in produced else "the file"
                raise ModelFormatError(
                    f"subgraph {sg.index}: tensor {t} {quoted(sg.tensors[t].name)} is written "
                    f"by operator {op.index} ({op.name}) but already defined by {first}"
                )
            produced[t] = op.index
            available.add(t)
    for t in sg.outputs:
        if t not in available:
            raise ModelFormatError(
                f"subgraph {sg.index}: output tensor {t} {quoted(sg.tensors[t].name)} is "
                "never produced"
            )
