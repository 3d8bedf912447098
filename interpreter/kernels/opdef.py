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

* the kernel slots, one per kind of operand, chosen once in prepare() by ``choose``
  from the data input (``affine.data``, else input 0) and, for ``hybrid``, the weights:

  - ``float``: every input that no other slot takes (it may be type-generic: RESHAPE
    moves any bytes);
  - ``integer``: quantized int8 / uint8 data (with quantization parameters);
    ``integer=TYPE_GENERIC`` says the float kernel already handles such data exactly (it
    only moves or selects values), so it serves them too;
  - ``int16``: quantized int16 data (16x8: symmetric int16 activations, int8 weights,
    int64 biases); ``int16=TYPE_GENERIC``: the float kernel serves them;
  - ``hybrid``: float32 data with int8 / uint8 weights (dynamic range: the weights are
    ``affine.weights``, else input 1).

  An empty slot sends its operands to ``float`` (which may then refuse them). The native
  backend has no slot of its own: a kernel's prepare() puts its C implementation in the
  record it returns where the extension loaded and covers the case (requantize.NativeStage,
  common.native_depthwise.NativeDepthwise), and eval runs it -- so numpy stays the readable
  reference next to it, and adding a native kernel touches only its op's module.
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
* ``quantize16``: the quantizer's int16x8 mode (TFLite's
  EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8) may emit an op with an
  ``int16`` slot; False keeps it int8 there (EQUAL, NOT_EQUAL, SUM and REDUCE_PROD run
  16x8 files written by others, but the converter does not write them).
* ``exact``: the integer kernel computes exactly what the float one does on the same
  values (it introduces no error of its own: selective quantization never keeps it float).
* ``subgraphs``: the subgraphs the op calls, as (role, option) pairs: the IR's name for
  each (``Op.subgraphs`` keys) and the builtin option holding its index (WHILE: cond /
  body, IF: then / else, CALL_ONCE: init), in the order TFLM walks them.
* ``state``: the op reads or writes state kept between invokes (the resource-variable
  ops, CALL_ONCE's has-run flag). ``stateful`` (derived: ``state`` or ``subgraphs``):
  never folded at allocate time even when its inputs are all constants, since folding
  would run it once instead of on every invoke.
* ``broadcast_rank``: the op broadcasts its operands implicitly (TF's
  ResultsBroadcastableShape trait; the kernel repeats elements itself) up to this output
  rank; 0: it does not.
* ``shape_operands``: the inputs whose values fix the output shape (a computed one makes
  the output dynamic: interpreter/dynamic.py). ``shape_only``: the outputs depend on the
  input's shape only (SHAPE, RANK: folded once the shape is known).
* ``reshapes``: only the shape changes, the bytes stay (RESHAPE, SQUEEZE, EXPAND_DIMS).
* ``strings``: the kernel runs on STRING tensors (gather.cc, reshape.cc).
* ``activation``: the op is this fused activation (ActivationFunctionType code), so it
  may be fused into the op before it (RELU, RELU6, RELU_N1_TO_1).
* ``neutral``: a binary arithmetic op whose second operand leaves the first unchanged
  at this value (ADD / SUB 0, MUL / DIV 1).
* ``comparison``: the op compares two operands into a bool tensor.
* ``boundary``: the op converts between float and quantized values (QUANTIZE,
  DEQUANTIZE: what the quantizer puts at the edges of integer regions).
* ``version``: the operator version a .tflite file gives the op, as a function of its
  signature (operand types, shapes, quantization, options: versions.py); TensorFlow's
  converter's rule for the op (op_version.cc), or 1 for an op it has no rule for.
"""

from __future__ import annotations

import enum
from dataclasses import KW_ONLY, dataclass
from typing import Mapping

import numpy as np

from .base import Chosen, Kernel, OpContext, run_chosen
from .hybrid import is_hybrid
from .common.requantize import is_quantized, is_quantized16
from .versions import VersionRule, first_version

TYPE_GENERIC = "type-generic"  # integer= / int16=TYPE_GENERIC: the float kernel serves them


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
    int16: Kernel | str | None = None    # a Kernel, TYPE_GENERIC, or None
    hybrid: Kernel | None = None
    quant: QuantRule = QuantRule.FLOAT_ONLY
    fixed_output: Mapping[type, tuple[float, int]] | None = None  # np.int8 -> (scale, zp)
    affine: Affine | None = None
    fused_activation: bool = False
    per_sample: bool = False
    reduction: bool = False
    last_axis: bool = False
    uint8: bool = True
    quantize16: bool = True
    exact: bool = False
    subgraphs: tuple[tuple[str, str], ...] = ()
    state: bool = False
    broadcast_rank: int = 0
    shape_operands: tuple[int, ...] = ()
    shape_only: bool = False
    reshapes: bool = False
    strings: bool = False
    activation: int | None = None
    neutral: float | None = None
    comparison: bool = False
    boundary: bool = False
    version: VersionRule = first_version

    @property
    def stateful(self) -> bool:
        """Calls subgraphs or keeps state between invokes: never folded."""
        return self.state or bool(self.subgraphs)

    @property
    def kernel(self) -> Kernel:
        """The registry entry: the op's only kernel, or ``choose`` picking among its slots
        in prepare() (invoke() then runs the chosen eval directly: base.Chosen)."""
        slots = {id(k) for k in (self.float, self.integer, self.int16, self.hybrid)
                 if isinstance(k, Kernel)}
        assert slots, f"{self.name} has no kernel"
        if len(slots) == 1:
            return self.float if self.float is not None else self.integer
        return Kernel(self._prepare, run_chosen)

    def choose(self, ctx: OpContext) -> Kernel:
        """The one dispatcher: the slot that serves the operands of ``ctx``."""
        a = self.affine
        index, weights = (a.data, a.weights) if a is not None else (0, 1)
        data = ctx.inputs[index] if index < len(ctx.inputs) else None
        if isinstance(self.integer, Kernel) and is_quantized(data):
            return self.integer
        if isinstance(self.int16, Kernel) and is_quantized16(data):
            return self.int16
        if self.hybrid is not None and is_hybrid(ctx, weights, index):
            return self.hybrid
        return self.float if self.float is not None else self.integer

    def _prepare(self, ctx: OpContext):
        kernel = self.choose(ctx)
        specs, record = kernel.prepare(ctx)
        if not isinstance(record, Chosen):
            record = Chosen(kernel.eval, record)
        return specs, record

    @property
    def has_integer(self) -> bool:
        """int8 / uint8 tensors with parameters run (and the quantizer may emit them)."""
        return self.integer is not None

    @property
    def has_int16(self) -> bool:
        """The quantizer's int16x8 mode may emit the op."""
        return self.int16 is not None and self.quantize16


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
