"""One record per TFLite op: every fact the interpreter and the converter need about it.

An ``OpDef`` is declared, by keyword, in the kernel module that implements the op, next to
its kernels; ``kernels/__init__.py`` collects the records of every module into ``OPS``, and
every table anyone needs is derived from them (``KERNELS`` here; the quantizer's rules,
the passes' op sets and the batch split's traits in their own modules). Nothing about an op
is written down twice; ``tests/test_op_registry.py`` and
``tests/interpreter/kernels/test_opdef.py`` check that the views agree with what the
converter emits and the schema defines.

    RELU = OpDef("RELU", float=Kernel(prepare, eval), integer=Kernel(q_prepare, q_eval),
                 quant=QuantRule.OWN_RANGE, per_sample=True, exact=True)

The facts:

* ``float`` / ``integer``: the kernels. ``float`` serves every input that is not a
  quantized int8 / uint8 tensor (it may be type-generic: RESHAPE moves any bytes);
  ``integer`` the quantized ones (int8 / uint8 with parameters). ``integer=TYPE_GENERIC``
  says the float kernel already handles quantized data exactly (it only moves or selects
  values), so it serves them too. The choice is made once, in prepare().
* ``quant``: how the converter's quantizer treats the op (QuantRule); ``fixed_output``
  gives the output parameters of FIXED_OUTPUT ops per output dtype.
* ``affine``: for ops computing ``y = x (*) W + b`` over channels, which operands are the
  data, the weights and the bias, and the weights' output / input channel axes (the output
  axis is the per-channel quantization axis).
* ``fused_activation``: the op has a ``fused_activation_function`` option that LiteRT's
  kernels apply, so the converter may fuse a following RELU / RELU6 / RELU_N1_TO_1 into
  it. (CONCATENATION and L2_NORMALIZATION have the option, and edgelite's kernels apply
  it, but LiteRT's reference kernels refuse anything but NONE there -- concatenation.cc,
  l2norm.cc -- and its XNNPACK CONCATENATION ignores it: not set.)
* ``per_sample``: given operands that all lead with the batch (batch_split.py checks
  every non-constant tensor's shape), the op never mixes samples, so the batch may run
  in chunks. An op that only keeps them apart for some options (TRANSPOSE, GATHER,
  STRIDED_SLICE, PACK, ...) is not per_sample. ``reduction``: input 1 holds axes
  (MEAN, SUM, ..., ARG_MAX), and the op keeps samples apart when those (constant) axes
  leave out dim 0. ``last_axis``: a per_sample op that works along the last axis
  (SOFTMAX, L2_NORMALIZATION) keeps samples apart only when that axis is not the batch
  (input rank >= 2).
* ``uint8``: the integer kernel takes uint8 as well as int8 (False where LiteRT has int8
  kernels only -- EXP, LOG, SQRT, RSQRT, ABS, ELU, SQUARED_DIFFERENCE, quantized
  REDUCE_PROD): the quantizer's uint8 mode keeps such ops float.
* ``int16``: the integer kernel also runs 16x8 models (TFLite's
  EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8: symmetric int16 activations,
  int8 weights, int64 biases), so the quantizer's int16x8 mode may emit the op.
* ``exact``: the integer kernel computes exactly what the float one does on the same
  values (it introduces no error of its own: selective quantization never keeps it float).
* ``stateful``: the op does more than compute its outputs from its inputs -- it calls
  other subgraphs or reads / writes state kept between invokes (WHILE, IF, CALL_ONCE,
  the resource-variable ops): never folded at allocate time even when its inputs are
  all constants, since folding would run it once instead of on every invoke.
* ``version``: the operator version a .tflite file gives the op, as a function of its
  signature (operand types, shapes, quantization, options: versions.py); TensorFlow's
  converter's rule for the op (op_version.cc), or 1 for an op it has no rule for.
"""

from __future__ import annotations

import enum
from dataclasses import KW_ONLY, dataclass
from typing import Mapping

import numpy as np

from .base import Kernel
from .requantize import by_input_dtype
from .versions import VersionRule, first_version

TYPE_GENERIC = "type-generic"  # integer=TYPE_GENERIC: the float kernel serves int8 / uint8


class QuantRule(enum.Enum):
    """How full-integer quantization treats an op (TFLite's 8-bit quantization spec)."""

    FLOAT_ONLY = "float only"        # no integer kernel: kept float, DEQUANTIZE/QUANTIZE around
    OWN_RANGE = "own range"          # the output gets its own (calibrated) parameters
    FIXED_OUTPUT = "fixed output"    # the output's parameters are fixed (fixed_output)
    SAME_AS_INPUT = "same as input"  # every output reuses the data input's (its first float
                                     # input: SPLIT's follows the axis): values moved or selected
    SHARED = "shared"                # every input shares the output's parameters
    RECURRENT = "recurrent"          # TFLite's integer LSTM: int8 data, output and h state,
                                     # int8 weights, int32 biases, an int16 cell state with
                                     # a power-of-two scale, the gate / hidden intermediates
                                     # (converter/quantize/lstm.py)


@dataclass(frozen=True)
class Affine:
    """``y = x (*) W + b`` over channels: operand indices and the weight layout."""

    data: int      # operand index of x
    weights: int   # of W (a constant)
    bias: int      # of b (may be omitted)
    out_axis: int  # W's output-channel axis: the per-channel quantization axis
    in_axis: int   # W's input-channel axis


@dataclass(frozen=True)
class OpDef:
    name: str  # the TFLite builtin name, as in schema/ops.py's BUILTIN_CODE
    _: KW_ONLY  # every other fact is given by keyword
    float: Kernel | None = None
    integer: Kernel | str | None = None  # a Kernel, TYPE_GENERIC, or None
    quant: QuantRule = QuantRule.FLOAT_ONLY
    fixed_output: Mapping[type, tuple[float, int]] | None = None  # np.int8 -> (scale, zp)
    affine: Affine | None = None
    fused_activation: bool = False
    per_sample: bool = False
    reduction: bool = False
    last_axis: bool = False
    uint8: bool = True
    int16: bool = False
    exact: bool = False
    stateful: bool = False
    version: VersionRule = first_version

    @property
    def kernel(self) -> Kernel:
        """The registry entry: the float kernel, the integer one, or both with the choice
        made in prepare() on the dtype of input 0."""
        if isinstance(self.integer, Kernel):
            if self.float is None:
                return self.integer
            return by_input_dtype(self.float, self.integer)
        assert self.float is not None, f"{self.name} has no kernel"
        return self.float

    @property
    def has_integer(self) -> bool:
        """int8 / uint8 tensors with parameters run (and the quantizer may emit them)."""
        return self.integer is not None


# The output parameters the integer LOGISTIC / SOFTMAX / TANH kernels assume (TFLite's
# quantization spec; kernels/activations.cc and softmax checks).
# int16 (16x8): symmetric, 1/32768 for all three (activations.cc / softmax.cc int16 checks).
PROBABILITY_OUTPUT = {np.int8: (1 / 256, -128), np.uint8: (1 / 256, 0), np.int16: (1 / 32768, 0)}
TANH_OUTPUT = {np.int8: (1 / 128, 0), np.uint8: (1 / 128, 128), np.int16: (1 / 32768, 0)}


def collect(*modules) -> dict[str, OpDef]:
    """{name: OpDef} from the ``OPS`` tuples of ``modules``; a name declared twice is a
    bug in the registry."""
    ops: dict[str, OpDef] = {}
    for module in modules:
        for op in module.OPS:
            if op.name in ops:
                raise ValueError(f"op {op.name} is declared twice (in {module.__name__})")
            ops[op.name] = op
    return ops
