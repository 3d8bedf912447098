"""Operator versions: the number a .tflite file writes next to each op code.

A TFLite op's version says which of its kernel's variants a model needs (int8 data, a
newer option, more dimensions, ...); a runtime resolves (op, version) to a kernel and
refuses a version it does not register (LiteRT registers BROADCAST_TO only from 2).
TensorFlow's converter numbers every operator from its *signature* -- operand types,
shapes and quantization, and its options -- with ``GetBuiltinOperatorVersion``
(tensorflow/compiler/mlir/lite/tools/versioning/op_version.cc, the copy the converter
links; tensorflow/lite/tools/versioning/op_version.cc is the runtime's older twin), and
one op code carries the highest version of the operators that use it (``UpdateOpVersion``).

Each op's rule is a fact of its record (``OpDef(version=...)``), written next to it in its
kernel module; an op without a rule there is version 1. The helpers below are the patterns
several rules share. ``OpSignature`` is what the rules see, built the same way from a file
read by model.py (``signature_of``) and by the converter's export.py from what it writes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

import numpy as np

from ...schema import ops as schema_ops
from ...schema.ops import TensorType as T
from ..loader.model_objects import Operator, Subgraph, Tensor


@dataclass(frozen=True)
class TensorSig:
    """One operand as the version rules see it (op_signature.h, OpSignatureTensorSpec)."""

    type: int | None  # TensorType code; None for an omitted optional operand (kTfLiteNoType)
    shape: tuple[int, ...] = ()
    scales: int = 0           # how many quantization scales (0: not quantized)
    scale: float = 0.0        # the first scale (float32), 0.0 when there is none
    quantized_dimension: int = 0
    sparse: bool = False

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def quantized(self) -> bool:
        """The operand has quantization parameters. (op_signature.cc asks whether the
        tensor has a quantization table at all; TF's writer gives every tensor one, empty
        for float, so in its files every operand counts as quantized. What the rules
        mean -- int16 data with or without parameters -- is this.)"""
        return self.scales > 0

    def scales_along(self, dim: int) -> bool:
        """One scale per slice of dimension ``dim`` (a non-empty one): per-channel
        parameters as op_signature.cc recognises them."""
        return 0 <= dim < self.rank and self.scales > 0 and self.scales == self.shape[dim]

    @property
    def per_axis(self) -> bool:
        """Several scales along the quantized dimension (DEQUANTIZE / QUANTIZE's test)."""
        return self.scales > 1 and self.scales_along(self.quantized_dimension)


OMITTED = TensorSig(None)


@dataclass(frozen=True)
class OpSignature:
    """An operator's operand types, shapes, quantization and options (op_signature.h)."""

    inputs: tuple[TensorSig, ...]
    outputs: tuple[TensorSig, ...]
    # builtin options, snake_case keys as schema/ops.py spells them, schema defaults filled
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def input(self, i: int) -> TensorSig:
        """Input ``i``; OMITTED past the end (op_version.cc would read out of range)."""
        return self.inputs[i] if i < len(self.inputs) else OMITTED

    def output(self, i: int) -> TensorSig:
        return self.outputs[i] if i < len(self.outputs) else OMITTED

    def types(self) -> tuple[int | None, int | None, int | None]:
        """(input 0, input 1, output 0) types: data, weights and result of the
        convolution / fully-connected family, whose rules are tables over these three."""
        return self.input(0).type, self.input(1).type, self.output(0).type

    def option(self, key: str, default: Any = 0) -> Any:
        return self.options.get(key, default)

    @property
    def int16_in_out(self) -> bool:
        """Input 0 and output 0 are both int16 (16x8 quantization)."""
        return self.input(0).type == T.INT16 and self.output(0).type == T.INT16

    @property
    def broadcasts_beyond_4d(self) -> bool:
        """Inputs 0 and 1 differ in shape and some input has more than 4 dimensions
        (op_version.cc, NeedBroadcastForBinaryInputs and GetInputMaxDims > 4)."""
        if len(self.inputs) < 2 or self.inputs[0].shape == self.inputs[1].shape:
            return False
        return max(t.rank for t in self.inputs) > 4


VersionRule = Callable[[OpSignature], int]


def first_version(sig: OpSignature) -> int:
    """Ops op_version.cc has no case for: version 1 whatever the operands."""
    return 1


def by_input_type(table: Mapping[int, int], *, index: int = 0,
                  default: int = 1) -> VersionRule:
    """The version ``table`` gives input ``index``'s type, else ``default``: the many
    op_version.cc cases that only look at one operand's type."""
    table = MappingProxyType(dict(table))

    def rule(sig: OpSignature) -> int:
        return table.get(sig.input(index).type, default)
    return rule


Condition = Callable[[OpSignature], bool]


def first_match(*steps: tuple[Condition, int]) -> VersionRule:
    """op_version.cc's usual form: the version of the first condition that holds, else 1."""
    def rule(sig: OpSignature) -> int:
        return next((version for holds, version in steps if holds(sig)), 1)
    return rule


def input_type(*types: int, index: int = 0) -> Condition:
    """Input ``index`` has one of ``types``."""
    return lambda sig: sig.input(index).type in types


def rank_above(n: int) -> Condition:
    """Input 0 has more than ``n`` dimensions."""
    return lambda sig: sig.input(0).rank > n


def option_set(*keys: str) -> Condition:
    """One of the options ``keys`` is set (true or non-zero)."""
    return lambda sig: any(sig.option(key) for key in keys)


# The shared cases of op_version.cc, by the types they raise the version for.
INT8_2 = by_input_type({T.INT8: 2})
INT8_2_INT16_3 = by_input_type({T.INT8: 2, T.INT16: 3})
INT8_OR_INT16_2 = by_input_type({T.INT8: 2, T.INT16: 2})


def hybrid_2_asymmetric_3(sig: OpSignature) -> int:
    """RNN, UNIDIRECTIONAL_SEQUENCE_RNN and the bidirectional sequence ops: int8 weights
    (input 1) with a float32 output -- a hybrid op -- 3 with asymmetric_quantize_inputs,
    else 2; 1 otherwise."""
    if sig.input(1).type == T.INT8 and sig.output(0).type == T.FLOAT32:
        return 3 if sig.option("asymmetric_quantize_inputs", False) else 2
    return 1


def int8_2_int16_in_out_3(sig: OpSignature) -> int:
    """Pools, LOGISTIC and TANH: 16x8 quantized (int16 in and out) 3, int8 input 2."""
    if sig.int16_in_out:
        return 3
    return 2 if sig.input(0).type == T.INT8 else 1


# ----------------------------------------------------------------------------- signatures

def tensor_sig(type_code: int, shape, scale=None, quantized_dimension: int = 0,
               sparse: bool = False) -> TensorSig:
    """An operand from what a file stores: its type, shape, quantization scales (None or
    empty: not quantized) and quantized dimension."""
    shape = tuple(int(d) for d in shape)
    if scale is None or not len(scale):
        return TensorSig(int(type_code), shape, sparse=sparse)
    scale = np.asarray(scale, np.float32).reshape(-1)
    return TensorSig(int(type_code), shape, scales=scale.size, scale=float(scale[0]),
                     quantized_dimension=int(quantized_dimension), sparse=sparse)


def file_tensor_sig(tensor: Tensor) -> TensorSig:
    """A tensor read by model.py, as the rules see it."""
    q = tensor.quantization
    return tensor_sig(tensor.type_code, tensor.shape, None if q is None else q.scale,
                      0 if q is None else q.quantized_dimension, tensor.is_sparse)


@functools.lru_cache(maxsize=1024)  # one entry per builtin op name (a few hundred)
def _defaults(op_name: str) -> Mapping[str, Any]:
    return MappingProxyType(schema_ops.default_options(op_name))


def with_defaults(op_name: str, options: Mapping[str, Any]) -> Mapping[str, Any]:
    """``options`` over the schema's defaults for ``op_name``: a file may leave the options
    table out, which means the defaults. (TF's ParseOpData leaves its parameter structs
    zeroed then; its writer always writes the table, so its own files never differ.)"""
    return MappingProxyType({**_defaults(op_name), **options})


def signature_of(op: Operator, subgraph: Subgraph) -> OpSignature:
    """The signature of a builtin operator of a file read by model.py
    (op_signature.cc, GetOpSignature)."""
    def sig(index: int) -> TensorSig:
        return OMITTED if index < 0 else file_tensor_sig(subgraph.tensors[index])
    return OpSignature(tuple(sig(i) for i in op.inputs), tuple(sig(i) for i in op.outputs),
                       with_defaults(op.name, op.options))
