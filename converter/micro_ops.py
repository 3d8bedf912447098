"""What TensorFlow Lite Micro can run: its op resolver's entries and its kernels' types.

One table for ``edgelite export --c-array`` (the ``Add...()`` call of each op) and for
``edgelite convert --target micro`` (every op of the result checked before it is written).

Sources (tensorflow/tflite-micro, tensorflow/lite/micro/):

* micro_mutable_op_resolver.h: ``MicroMutableOpResolver<N>`` has one ``AddX()`` method per
  builtin op (``RESOLVER_METHOD``) and a few for custom ops registered by name
  (``CUSTOM_METHOD``: ``AddDetectionPostprocess`` registers "TFLite_Detection_PostProcess",
  the signal library's ``AddRfft`` registers "SignalRfft", ...). N counts registrations:
  one per distinct builtin op and one per custom op name.
* Operator versions: TFLM ignores them. ``FindOp`` looks an op up by builtin code (or custom
  name) only, and ``GetRegistrationFromOpCode`` (micro_op_resolver.cc) never reads
  ``OperatorCode.version``; so any version TensorFlow's rules give (what edgelite writes,
  converter/export.py) is accepted -- tests/converter/test_micro_ops.py checks it in TFLM.
* kernels/*.cc: TFLM has no uint8 kernels except QUANTIZE (uint8 <-> int8), DEQUANTIZE and
  ops that only move bytes (the rule is the interpreter's, interpreter/micro/uint8.py, so
  ``Interpreter(kernels="micro")`` refuses the same ops); DEQUANTIZE takes int8 / int16 /
  uint8 only (no float16 weights); QUANTIZE writes per-tensor parameters only
  (quantize_common.cc: one output scale); no kernel takes float activations with int8
  weights ("Hybrid models are not supported on TFLite Micro") but EMBEDDING_LOOKUP's
  (embedding_lookup.cc's EvalHybrid). The ops of ``FLOAT_ONLY`` have float kernels only
  (exp.cc, floor.cc, ceil.cc, round.cc, floor_div.cc, floor_mod.cc, l2_pool_2d.cc, and
  elementwise.cc's SIN / COS / LOG / SQRT / SQUARE); those of ``NO_INT16`` take no int16
  activations. ``CONSTANT_INPUTS`` and ``MAX_RANK``: the inputs some kernels need
  constant, and the rank limits of some.
* Sparse tensors: TFLM has none (no source under tensorflow/lite/micro/ reads a tensor's
  SparsityParameters), so a kernel given a sparse (e.g. block-sparse) constant reads its
  compressed values as if they were the dense tensor: wrong results, and no error
  (tests/converter/test_micro_ops.py runs TF's sparse files in TFLM).

Every problem refuses ``convert --target micro`` and ``export`` in one message, unless
forced (``--force``): then the file is written and each problem is a warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from edgelite.errors import EdgeliteError, UnsupportedOpError
from ..interpreter.micro.uint8 import ADVICE as UINT8_ADVICE_SHORT, uint8_refusal
from ..interpreter.loader.model import load_model
from ..interpreter.loader.model_objects import Model, Operator, Subgraph
from edgelite.names import quoted


def _pairs(text: str) -> dict[str, str]:
    words = text.split()
    return dict(zip(words[::2], words[1::2]))


# builtin op -> MicroMutableOpResolver method (micro_mutable_op_resolver.h), as "OP Method"
# pairs. The tables of this module are text: they name TFLM's ops, not ops the converter
# writes (tests/test_op_registry.py checks that every op name the converter's code holds as
# a string has an interpreter kernel; an op TFLM has and edgelite does not is no such name).
RESOLVER_METHOD = _pairs("""
    ABS AddAbs   ADD AddAdd   ADD_N AddAddN   ARG_MAX AddArgMax   ARG_MIN AddArgMin
    ASSIGN_VARIABLE AddAssignVariable   AVERAGE_POOL_2D AddAveragePool2D
    BATCH_MATMUL AddBatchMatMul   BATCH_TO_SPACE_ND AddBatchToSpaceNd
    BROADCAST_ARGS AddBroadcastArgs   BROADCAST_TO AddBroadcastTo   CALL_ONCE AddCallOnce
    CAST AddCast   CEIL AddCeil   CONCATENATION AddConcatenation   CONV_2D AddConv2D
    COS AddCos   CUMSUM AddCumSum   DEPTH_TO_SPACE AddDepthToSpace
    DEPTHWISE_CONV_2D AddDepthwiseConv2D   DEQUANTIZE AddDequantize   DIV AddDiv
    DYNAMIC_UPDATE_SLICE AddDynamicUpdateSlice   EMBEDDING_LOOKUP AddEmbeddingLookup
    ELU AddElu   EQUAL AddEqual   EXP AddExp   EXPAND_DIMS AddExpandDims   FILL AddFill
    FLOOR AddFloor   FLOOR_DIV AddFloorDiv   FLOOR_MOD AddFloorMod
    FULLY_CONNECTED AddFullyConnected   GATHER AddGather   GATHER_ND AddGatherNd
    GREATER AddGreater   GREATER_EQUAL AddGreaterEqual   HARD_SWISH AddHardSwish   IF AddIf
    L2_NORMALIZATION AddL2Normalization   L2_POOL_2D AddL2Pool2D   LEAKY_RELU AddLeakyRelu
    LESS AddLess   LESS_EQUAL AddLessEqual   LOG AddLog   LOGICAL_AND AddLogicalAnd
    LOGICAL_NOT AddLogicalNot   LOGICAL_OR AddLogicalOr   LOGISTIC AddLogistic
    LOG_SOFTMAX AddLogSoftmax   MAXIMUM AddMaximum   MAX_POOL_2D AddMaxPool2D
    MIRROR_PAD AddMirrorPad   MEAN AddMean   MINIMUM AddMinimum   MUL AddMul   NEG AddNeg
    NOT_EQUAL AddNotEqual   PACK AddPack   PAD AddPad   PADV2 AddPadV2   PRELU AddPrelu
    QUANTIZE AddQuantize   READ_VARIABLE AddReadVariable   REDUCE_ALL AddReduceAll
    REDUCE_MAX AddReduceMax   REDUCE_MIN AddReduceMin   RELU AddRelu   RELU6 AddRelu6
    RESHAPE AddReshape   RESIZE_BILINEAR AddResizeBilinear
    RESIZE_NEAREST_NEIGHBOR AddResizeNearestNeighbor   REVERSE_V2 AddReverseV2
    ROUND AddRound   RSQRT AddRsqrt   SELECT_V2 AddSelectV2   SHAPE AddShape   SIN AddSin
    SLICE AddSlice   SOFTMAX AddSoftmax   SPACE_TO_BATCH_ND AddSpaceToBatchNd
    SPACE_TO_DEPTH AddSpaceToDepth   SPLIT AddSplit   SPLIT_V AddSplitV   SQUEEZE AddSqueeze
    SQRT AddSqrt   SQUARE AddSquare   SQUARED_DIFFERENCE AddSquaredDifference
    STRIDED_SLICE AddStridedSlice   SUB AddSub   SUM AddSum   SVDF AddSvdf   TANH AddTanh
    TRANSPOSE_CONV AddTransposeConv   TRANSPOSE AddTranspose   UNPACK AddUnpack
    UNIDIRECTIONAL_SEQUENCE_LSTM AddUnidirectionalSequenceLSTM   VAR_HANDLE AddVarHandle
    WHILE AddWhile   ZEROS_LIKE AddZerosLike
""")
# custom op name -> the method registering it under that name.
CUSTOM_METHOD = {
    "TFLite_Detection_PostProcess": "AddDetectionPostprocess",
    "CIRCULAR_BUFFER": "AddCircularBuffer", "TFLM_DECODE": "AddDecode",
    "SignalDelay": "AddDelay", "SignalEnergy": "AddEnergy",
    "SignalFftAutoScale": "AddFftAutoScale", "SignalFilterBank": "AddFilterBank",
    "SignalFilterBankLog": "AddFilterBankLog",
    "SignalFilterBankSquareRoot": "AddFilterBankSquareRoot",
    "SignalFilterBankSpectralSubtraction": "AddFilterBankSpectralSubtraction",
    "SignalFramer": "AddFramer", "SignalIrfft": "AddIrfft", "SignalOverlapAdd": "AddOverlapAdd",
    "SignalPCAN": "AddPCAN", "SignalRfft": "AddRfft", "SignalStacker": "AddStacker",
    "SignalWindow": "AddWindow",
    # Vela's Ethos-U NPU op; AddEthosU registers it only in a TFLM built for Ethos-U
    # (kernels/ethos_u/ethosu.cc), elsewhere it registers nothing
    "ethos-u": "AddEthosU",
}
FLOAT_ONLY = frozenset("""
    CEIL COS EXP FLOOR FLOOR_DIV FLOOR_MOD L2_POOL_2D LOG ROUND SIN SQRT SQUARE
""".split())
# ops whose TFLM kernels take float and int8 (some int32) but not int16 activations (their
# kernels' type switches: add_n.cc, arg_min_max.cc, div.cc, resize_bilinear.cc, ...)
NO_INT16 = FLOAT_ONLY | frozenset("""
    ADD_N ARG_MAX ARG_MIN BATCH_TO_SPACE_ND CUMSUM DEPTH_TO_SPACE DIV ELU EMBEDDING_LOOKUP
    GATHER GATHER_ND HARD_SWISH L2_NORMALIZATION LOG_SOFTMAX MIRROR_PAD NEG RESIZE_BILINEAR
    SPACE_TO_BATCH_ND SPACE_TO_DEPTH ZEROS_LIKE
""".split())
# inputs TFLM's kernels read once, in Prepare, and so need as constants ("Non-constant
# >paddings< tensor is not supported": pad_common.cc, broadcast_to.cc, expand_dims.cc, fill.cc,
# resize_bilinear.cc, resize_nearest_neighbor.cc)
CONSTANT_INPUTS = {"BROADCAST_TO": (1, "shape"), "EXPAND_DIMS": (1, "axis"),
                   "FILL": (0, "dims"), "PAD": (1, "paddings"), "PADV2": (1, "paddings"),
                   "RESIZE_BILINEAR": (1, "size"), "RESIZE_NEAREST_NEIGHBOR": (1, "size")}
# the highest input rank of kernels with fixed-size loops (strided_slice_common.cc kMaxDim,
# batch_to_space_nd.cc / space_to_batch_nd.cc, l2norm.cc, slice.cc, broadcast_to.cc)
MAX_RANK = {"STRIDED_SLICE": 4, "BATCH_TO_SPACE_ND": 4, "SPACE_TO_BATCH_ND": 4,
            "L2_NORMALIZATION": 4, "SLICE": 5, "BROADCAST_TO": 5}
HYBRID_OPS = frozenset({"EMBEDDING_LOOKUP"})  # int8 table, float output: EvalHybrid
DEQUANTIZE_INPUTS = frozenset({"INT8", "INT16", "UINT8"})
UINT8_ADVICE = ("TFLite Micro has no uint8 kernels (it dropped them); use --quantize int8 "
                "--io-type uint8 for uint8 inputs and outputs")


@dataclass(frozen=True)
class MicroProblem:
    """One reason TFLM cannot run an op: where it is and what is missing."""

    op: str          # "CONV_2D", or "CUSTOM <name>" (name escaped)
    where: str       # "subgraph 0 op 3"
    reason: str
    registrable: bool  # TFLM's resolver has the op (the problem is its types or shapes)

    def line(self) -> str:
        return f"{self.op} ({self.where}): {self.reason}"


def op_label(op: Operator) -> str:
    return f"CUSTOM {quoted(op.custom_code)}" if op.name == "CUSTOM" else op.name


def resolver_method(op: Operator) -> str | None:
    """The MicroMutableOpResolver method registering ``op``, None when TFLM has none."""
    if op.name == "CUSTOM":
        return CUSTOM_METHOD.get(op.custom_code or "")
    return RESOLVER_METHOD.get(op.name)


def resolver_methods(model: Model) -> list[str]:
    """The distinct Add...() methods the model needs, sorted (every subgraph's ops)."""
    return sorted({m for sg in model.subgraphs for op in sg.operators
                   if (m := resolver_method(op)) is not None})


def _types(sg: Subgraph, indices) -> list[tuple[str, bool]]:
    """(type name, is constant) of each present tensor of ``indices``."""
    return [(sg.tensors[i].type_name, sg.tensors[i].data is not None)
            for i in indices if 0 <= i < len(sg.tensors)]


def _type_problem(sg: Subgraph, op: Operator) -> str | None:
    """Why TFLM's kernel for ``op`` does not take its tensor types, or None."""
    ins, outs = _types(sg, op.inputs), _types(sg, op.outputs)
    everything = ins + outs
    if op.name == "DEQUANTIZE":
        kind = ins[0][0] if ins else None
        if kind not in DEQUANTIZE_INPUTS:
            return f"DEQUANTIZE of {str(kind).lower()} (TFLM dequantizes int8, int16, uint8 only)"
        return None
    uint8 = uint8_refusal(op, sg)
    if uint8:
        return f"{uint8}; {UINT8_ADVICE_SHORT}"
    if op.name == "QUANTIZE" and _per_channel(sg, op.outputs[:1]):
        return "per-channel output parameters (TFLM's QUANTIZE writes one scale)"
    if op.name in FLOAT_ONLY and any(t == "INT8" for t, _ in everything):
        return "TFLM has only a float kernel for this op"
    if op.name in NO_INT16 and any(t == "INT16" and not const for t, const in everything):
        return "TFLM has no int16 kernel for this op (int16 activations)"
    float_acts = any(t == "FLOAT32" and not const for t, const in everything)
    int8_weights = any(t == "INT8" and const for t, const in ins)
    if float_acts and int8_weights and op.name not in HYBRID_OPS:
        return ("float activations with int8 weights (hybrid): TFLM has no hybrid kernels; "
                "quantize fully (--quantize int8)")
    return None


def _per_channel(sg: Subgraph, indices) -> bool:
    return any(0 <= i < len(sg.tensors) and sg.tensors[i].quantization is not None
               and sg.tensors[i].quantization.scale.size > 1 for i in indices)


def _sparse_problem(sg: Subgraph, op: Operator) -> str | None:
    """A sparse operand, which TFLM reads as if it were dense."""
    for i in op.inputs:
        if 0 <= i < len(sg.tensors) and sg.tensors[i].is_sparse:
            return (f"reads sparse tensor {quoted(sg.tensors[i].name)}: TFLM has no sparse "
                    "tensors, its kernel would take the compressed values for the dense "
                    "ones (wrong results, silently); convert without sparsity")
    return None


def _shape_problem(sg: Subgraph, op: Operator) -> str | None:
    """A constant input TFLM needs and the file computes, or an input of too high a rank."""
    if op.name in CONSTANT_INPUTS:
        k, what = CONSTANT_INPUTS[op.name]
        i = op.inputs[k] if k < len(op.inputs) else -1
        if 0 <= i < len(sg.tensors) and sg.tensors[i].data is None:
            return f"its {what} input is computed; TFLM needs it constant"
    rank = MAX_RANK.get(op.name)
    if rank is not None and op.inputs and 0 <= op.inputs[0] < len(sg.tensors) \
            and len(sg.tensors[op.inputs[0]].shape) > rank:
        return (f"{len(sg.tensors[op.inputs[0]].shape)}-D input; TFLM's kernel takes at "
                f"most {rank}-D")
    return None


def micro_problems(model: Model) -> list[MicroProblem]:
    """Every op of every subgraph TFLM cannot run: no resolver entry, no kernel for its
    tensor types, or an input its kernel cannot take (computed, or of too high a rank)."""
    problems = []
    for sg in model.subgraphs:
        for op in sg.operators:
            where = f"subgraph {sg.index} op {op.index}"
            if resolver_method(op) is None:
                problems.append(MicroProblem(op_label(op), where,
                                             "TFLM's op resolver has no entry for it", False))
                continue
            reason = (_type_problem(sg, op) or _sparse_problem(sg, op)
                      or _shape_problem(sg, op))
            if reason:
                problems.append(MicroProblem(op_label(op), where, reason, True))
    return problems


def problems_text(problems: list[MicroProblem], what: str) -> str:
    """One message listing every problem, one per line."""
    return (f"{what}: TensorFlow Lite Micro cannot run {len(problems)} op(s):\n"
            + "\n".join(p.line() for p in problems))


class Target(Enum):
    """What ``convert`` writes for: any TFLite runtime, or TFLite Micro (checked)."""

    DEFAULT = "default"
    MICRO = "micro"


FORCE_HINT = "or write it anyway with --force"


def check_micro_options(quantize, force: bool = False) -> None:
    """Refuse, before converting, a quantization mode TFLM cannot run (``quantize``: the
    QuantizeOptions or None), unless ``force`` (check_micro_model then lists its ops)."""
    if quantize is not None and quantize.mode.value == "uint8" and not force:
        raise EdgeliteError(f"--target micro: --quantize uint8 cannot run: {UINT8_ADVICE} "
                            f"({FORCE_HINT})")


def check_micro_model(data: bytes, force: bool = False) -> tuple[str, ...]:
    """Raise one UnsupportedOpError listing every op of the converted model TFLM cannot run;
    with ``force``, return those lines instead (warnings). Operator versions need no
    change: TFLM ignores them (module doc)."""
    problems = micro_problems(load_model(data))
    if problems and not force:
        raise UnsupportedOpError(problems_text(problems, "--target micro") + (
            f"\nkeep those ops out of the graph, or quantize fully (--quantize int8); "
            f"{FORCE_HINT}"))
    return tuple(p.line() for p in problems)


__all__ = ["Target", "check_micro_options", "check_micro_model", "RESOLVER_METHOD",
           "CUSTOM_METHOD", "FLOAT_ONLY", "NO_INT16", "UINT8_ADVICE", "FORCE_HINT",
           "MicroProblem", "micro_problems", "problems_text", "resolver_method", "resolver_methods"]
