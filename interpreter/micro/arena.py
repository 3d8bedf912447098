"""The tensor arena TensorFlow Lite Micro needs for a model: ``micro_arena(model, target)``.

TFLM's arena has a head and a tail (tensorflow/lite/micro/micro_allocator.cc):

- the head (non-persistent) holds the activation tensors and the scratch buffers ops
  request in Prepare, placed by TFLM's GreedyMemoryPlanner. plan.py recomputes that
  plan exactly (checked against TFLM's RecordingMicroAllocator "head" on every sample
  model, tests/interpreter/micro/test_arena.py).
- the tail (persistent) holds TFLM's own objects (the arena allocator, the memory planner,
  the MicroAllocator, the builtin-data allocator), one TfLiteEvalTensor per tensor, one
  NodeAndRegistration per op, each op's parsed builtin options and its OpData (Init) and
  per-channel arrays / lookup tables (Prepare), the scratch-buffer handles, variable
  tensors' buffers, and the interpreter's TfLiteTensor structs for the model's inputs and
  outputs.

The tail is computed from TFLM's struct sizes and the op data sizes below, every kernel
allocation rounded up to the 16-byte alignment TFLM's persistent allocator uses. The op
data table (OP_BYTES) comes from TFLM's kernel sources and was checked against
TFLM's RecordingMicroAllocator figures on the 64-bit host build (the ``tflite-micro``
package); entries for ops only one sample model uses were calibrated on that model, so
they are the least certain. An op missing from the table is counted with
``DEFAULT_OP_BYTES`` and named in the report (``estimated_ops``).

Bound: on every sample model the host report is >= the smallest arena TFLM accepts and
at most 5 % above it (measured 0.7 % to 4.2 %; tests/interpreter/micro/test_arena.py
asserts both with TFLM as the oracle); the head is exact. The 32-bit figure uses the
32-bit sizes of the structs with pointers (TfLiteEvalTensor 12, TfLiteTensor 40,
NodeAndRegistration 32, ...) and the host sizes of op data and of TFLM's own objects,
which are never smaller on a 32-bit target: an upper bound by construction, not measured
(no 32-bit TFLM build here).

Besides the final plan, TFLM needs room while it plans: the scratch-buffer requests, the
AllocationInfo array and the planner's working lists live in the head temporarily (before
the interpreter allocates its input / output tensors in the tail), so the arena is the
larger of tail + plan peak and tail (without those tensors) + planning workspace.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .plan import ARENA_ALIGNMENT, PlannedBuffer, align_up, peak, plan, tensor_bytes
from ..loader.model import load_model
from ..loader.model_objects import num_elements

TARGETS = ("32bit", "host")


@dataclass(frozen=True)
class Sizes:
    """Struct sizes TFLM's tail is made of, for one target."""
    pointer: int
    eval_tensor: int  # TfLiteEvalTensor: data, dims, type
    tensor: int  # TfLiteTensor (TF_LITE_STATIC_MEMORY build)
    node_and_registration: int  # TfLiteNode + registration pointer
    affine_quantization: int  # TfLiteAffineQuantization: scale, zero_point, dimension
    allocation_info: int  # AllocationInfo (planning workspace)
    scratch_request: int  # internal::ScratchBufferRequest
    resource_variable: int  # MicroResourceVariables::MicroResourceVariable
    fixed: int  # allocator, planner, MicroAllocator, builtin-data allocator, slack


# host: measured on the tflite-micro package (64-bit); 32bit: the same structs with 4-byte
# pointers and size_t (micro_allocator.h, common.h, micro_allocation_info.h).
SIZES = {
    "host": Sizes(pointer=8, eval_tensor=24, tensor=64, node_and_registration=64,
                  affine_quantization=24, allocation_info=32, scratch_request=16,
                  resource_variable=40, fixed=520),
    "32bit": Sizes(pointer=4, eval_tensor=12, tensor=40, node_and_registration=32,
                   affine_quantization=12, allocation_info=24, scratch_request=12,
                   resource_variable=20, fixed=520),
}
PLANNER_BYTES_PER_BUFFER = 40  # GreedyMemoryPlanner::per_buffer_size(): 10 ints
MAX_SCRATCH_PER_OP = 12  # kMaxScratchBuffersPerOp

# Persistent bytes an op's kernel allocates in Init (its OpData) and Prepare (besides the
# per-channel arrays computed below), each allocation rounded up to 16; and the bytes of
# its parsed builtin options (TfLite*Params). Host sizes (upper bounds for 32-bit).
OP_BYTES = {
    "CONV_2D": (96, 32), "DEPTHWISE_CONV_2D": (96, 32), "TRANSPOSE_CONV": (112, 32),
    "FULLY_CONNECTED": (80, 24), "SOFTMAX": (80, 8), "LOG_SOFTMAX": (64, 0),
    "AVERAGE_POOL_2D": (48, 40), "MAX_POOL_2D": (48, 40),
    "ADD": (64, 8), "SUB": (64, 8), "MUL": (48, 8), "DIV": (48, 8),
    "QUANTIZE": (32, 0), "DEQUANTIZE": (48, 0), "LOGISTIC": (32, 0), "TANH": (32, 0),
    "RELU": (32, 0), "RELU6": (32, 0), "LEAKY_RELU": (32, 8), "HARD_SWISH": (48, 0),
    "MEAN": (64, 8), "SUM": (64, 8), "REDUCE_MAX": (64, 8), "REDUCE_MIN": (64, 8),
    "CONCATENATION": (48, 8), "STRIDED_SLICE": (112, 32), "PAD": (48, 0), "PADV2": (48, 0),
    "MIRROR_PAD": (32, 8), "RESHAPE": (0, 40), "SQUEEZE": (0, 40), "EXPAND_DIMS": (0, 0),
    "GATHER": (48, 8), "UNPACK": (16, 8), "PACK": (16, 8), "SPLIT": (16, 8),
    "SPLIT_V": (16, 8), "REVERSE_V2": (96, 0), "GREATER": (32, 0), "LESS": (32, 0),
    "EQUAL": (32, 0), "NOT_EQUAL": (32, 0), "GREATER_EQUAL": (32, 0), "LESS_EQUAL": (32, 0),
    "IF": (16, 8), "WHILE": (16, 8), "CALL_ONCE": (16, 8), "VAR_HANDLE": (16, 16),
    "READ_VARIABLE": (16, 0), "ASSIGN_VARIABLE": (16, 0), "BATCH_MATMUL": (160, 8),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (640, 24), "RESIZE_BILINEAR": (32, 8),
    "RESIZE_NEAREST_NEIGHBOR": (32, 8), "DEPTH_TO_SPACE": (16, 4), "SPACE_TO_DEPTH": (16, 4),
}
DEFAULT_OP_BYTES = (160, 48)
PER_CHANNEL_OPS = {"CONV_2D": 0, "DEPTHWISE_CONV_2D": 3, "TRANSPOSE_CONV": 0}


@dataclass(frozen=True)
class MicroArenaReport:
    """TFLM's arena for one model and target; ``total`` is the arena size to declare."""
    target: str
    total: int
    head: int  # the memory plan's peak (activations + scratch buffers)
    planning: int  # head room TFLM needs while it plans
    tail: int  # persistent part
    parts: dict = field(default_factory=dict)  # tail by kind, bytes
    buffers: tuple[PlannedBuffer, ...] = ()
    estimated_ops: tuple[str, ...] = ()  # ops counted with DEFAULT_OP_BYTES

    def lines(self) -> list[str]:
        parts = ", ".join(f"{k} {v}" for k, v in self.parts.items())
        return [f"micro arena ({self.target}): {self.total} bytes (tail {self.tail}, "
                f"head {self.head})",
                f"  head: plan peak {self.head} bytes, planning workspace {self.planning}",
                f"  tail: {parts}",
                *([f"  op data estimated for: {', '.join(self.estimated_ops)}"]
                  if self.estimated_ops else [])]


def _tensor(sg, i):
    return sg.tensors[i] if 0 <= i < len(sg.tensors) else None


def scratch_requests(model) -> dict[tuple[int, int], list[int]]:
    """The scratch buffers each op asks for in Prepare (TFLM reference kernels), bytes in
    request order: reduce_common.cc (MEAN / SUM: an int32 accumulator per output element
    for int8 / int16, then the input-iterator and resolved-axis index arrays;
    REDUCE_MAX / MIN: the two index arrays), mirror_pad.cc (two int arrays of the input's
    rank), transpose_conv.cc (the int32 / int64 accumulator over the output),
    unidirectional_sequence_lstm.cc (four buffers of the cell state's size)."""
    out: dict[tuple[int, int], list[int]] = {}
    for s, sg in enumerate(model.subgraphs):
        for op in sg.operators:
            x = _tensor(sg, op.inputs[0]) if op.inputs else None
            y = _tensor(sg, op.outputs[0]) if op.outputs else None
            if x is None or y is None:
                continue
            rank = len(x.shape)
            req: list[int] = []
            if op.name in ("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN"):
                axis = _tensor(sg, op.inputs[1])
                n_axis = num_elements(axis.shape) if axis is not None else 0
                if op.name in ("MEAN", "SUM") and x.type_code in (7, 9):  # int16, int8
                    req.append(4 * num_elements(y.shape))
                req += [4 * rank, 4 * n_axis]
            elif op.name == "MIRROR_PAD":
                req = [4 * rank, 4 * rank]
            elif op.name == "TRANSPOSE_CONV":
                x = _tensor(sg, op.inputs[2])
                if x is not None and x.type_code in (7, 9):
                    req = [(8 if x.type_code == 7 else 4) * num_elements(y.shape)]
            elif op.name == "UNIDIRECTIONAL_SEQUENCE_LSTM":
                cell = _tensor(sg, op.inputs[19]) if len(op.inputs) > 19 else None
                if cell is not None:
                    req = [tensor_bytes(cell)] * 4
            if req:
                out[(s, op.index)] = req
    return out


def _channels(sg, op) -> int:
    """Per-channel quantization parameters TFLM keeps for the op (two int32 arrays)."""
    if op.name in PER_CHANNEL_OPS:
        w = _tensor(sg, op.inputs[1])
        return w.shape[PER_CHANNEL_OPS[op.name]] if w is not None and w.shape else 0
    if op.name == "FULLY_CONNECTED":
        w = _tensor(sg, op.inputs[1])
        q = w.quantization if w is not None else None
        return q.scale.size if q is not None and q.scale.size > 1 else 0
    return 0


def _io_tensors(model, sizes: Sizes) -> int:
    """The interpreter's input / output TfLiteTensor structs (persistent), the arrays of
    pointers to them, and each quantized one's TfLiteAffineQuantization + zero points."""
    sg = model.subgraphs[0]
    total = 0
    for ids in (sg.inputs, sg.outputs):
        total += align_up(sizes.pointer * len(ids))
        for i in ids:
            total += sizes.tensor
            q = sg.tensors[i].quantization
            if q is not None and q.scale.size and q.zero_point.size:
                total += align_up(sizes.affine_quantization)
                total += align_up(4 + 4 * q.scale.size)
    return total


def _variable_handles(model) -> dict[tuple[int, int], tuple]:
    """(subgraph, tensor) of each VAR_HANDLE output -> the variable it names: (container,
    shared name), the pair MicroResourceVariables::CreateIdIfNoneFound keys on."""
    handles = {}
    for s, sg in enumerate(model.subgraphs):
        for op in sg.operators:
            if op.name == "VAR_HANDLE" and op.outputs:
                handles[(s, op.outputs[0])] = (op.options.get("container") or b"",
                                               op.options.get("shared_name") or b"")
    return handles


def resource_variable_count(model) -> int:
    """How many resource variables TFLM creates for the model (its distinct VAR_HANDLE
    container / shared-name pairs): the ``num_variables`` a firmware passes to
    ``MicroResourceVariables::Create`` (0: the model keeps no such state)."""
    m = model if hasattr(model, "subgraphs") else load_model(model)
    return len(set(_variable_handles(m).values()))


def _resource_variables(model, sizes: Sizes) -> int:
    """MicroResourceVariables (micro_resource_variable.cc), created for the model's distinct
    VAR_HANDLE variables: the object, its variable array, and each variable's buffer
    (allocated by ASSIGN_VARIABLE with the size of the value assigned)."""
    handles = _variable_handles(model)
    if not handles:
        return 0
    names = set(handles.values())
    buffers: dict[object, int] = {}
    for s, sg in enumerate(model.subgraphs):
        for op in sg.operators:
            if op.name == "ASSIGN_VARIABLE" and len(op.inputs) == 2:
                name = handles.get((s, op.inputs[0]))
                value = _tensor(sg, op.inputs[1])
                if name is not None and value is not None:
                    buffers[name] = max(buffers.get(name, 0), align_up(tensor_bytes(value)))
    return (align_up(2 * sizes.pointer) + align_up(sizes.resource_variable * len(names))
            + sum(buffers.values()))


def _temp_tensor(t, sizes: Sizes) -> int:
    """A TfLiteTensor a kernel's Prepare allocates in the head (AllocateTempTfLiteTensor),
    with its TfLiteAffineQuantization and zero-point array when quantized."""
    q = t.quantization
    if q is None or not q.scale.size or not q.zero_point.size:
        return sizes.tensor
    return sizes.tensor + sizes.affine_quantization + align_up(4 + 4 * q.scale.size, 8)


def _prepare_temps(model, sizes: Sizes, n_scratch: int) -> int:
    """Head room while an op's Prepare runs: the scratch-request buffer and temporary
    TfLiteTensors for the op's inputs and outputs (at most all of them at once)."""
    worst = 0
    for sg in model.subgraphs:
        for op in sg.operators:
            ids = [i for i in (*op.inputs, *op.outputs) if 0 <= i < len(sg.tensors)]
            worst = max(worst, sum(_temp_tensor(sg.tensors[i], sizes) for i in ids))
    return align_up(sizes.scratch_request * (n_scratch + MAX_SCRATCH_PER_OP)) + worst


def _transposed_operands(sg, op, sizes: Sizes) -> int:
    """batch_matmul.cc: the reference kernel reads the right operand transposed and the
    left one as is, so Prepare allocates persistent copies -- an eval tensor, its dims and
    the data -- of the right operand unless adj_y, and of the left one if adj_x."""
    if op.name != "BATCH_MATMUL" or len(op.inputs) < 2:
        return 0
    total = 0
    for i, transposed in ((op.inputs[1], not op.options.get("adj_y", False)),
                          (op.inputs[0], bool(op.options.get("adj_x", False)))):
        t = _tensor(sg, i)
        if transposed and t is not None:
            total += (align_up(sizes.eval_tensor) + align_up(4 * (len(t.shape) + 1))
                      + align_up(tensor_bytes(t)))
    return total


def _tail(model, sizes: Sizes, n_scratch: int) -> dict[str, int]:
    n_tensors = sum(len(sg.tensors) for sg in model.subgraphs)
    n_ops = sum(len(sg.operators) for sg in model.subgraphs)
    op_data = builtin = per_channel = 0
    for sg in model.subgraphs:
        for op in sg.operators:
            data, params = OP_BYTES.get(op.name, DEFAULT_OP_BYTES)
            op_data += data + _transposed_operands(sg, op, sizes)
            builtin += align_up(params, 8)
            c = _channels(sg, op)
            per_channel += 2 * align_up(4 * c) if c else 0
    variables = sum(align_up(tensor_bytes(t)) for sg in model.subgraphs
                    for t in sg.tensors if t.is_variable)
    return {
        "TFLM objects": sizes.fixed + ARENA_ALIGNMENT * len(model.subgraphs),
        "TfLiteEvalTensor": align_up(sizes.eval_tensor * n_tensors),
        "NodeAndRegistration": align_up(sizes.node_and_registration * n_ops),
        "builtin options": builtin,
        "op data": op_data,
        "per-channel data": per_channel,
        "scratch handles": align_up(sizes.pointer * n_scratch),
        "variables": variables,
        "resource variables": _resource_variables(model, sizes),
        "input/output tensors": _io_tensors(model, sizes),
    }


def micro_arena_report(model: bytes, target: str = "32bit") -> MicroArenaReport:
    """The arena TFLM needs for the .tflite ``model`` on ``target`` ("32bit" or "host",
    the 64-bit build the tflite-micro Python package runs)."""
    if target not in SIZES:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    sizes = SIZES[target]
    m = model if hasattr(model, "subgraphs") else load_model(model)
    scratch = scratch_requests(m)
    n_scratch = sum(len(v) for v in scratch.values())
    buffers = plan(m, scratch)
    head = peak(buffers)
    n_alloc = sum(len(sg.tensors) for sg in m.subgraphs) + n_scratch
    # CommitStaticMemoryPlan: above the scratch-request buffer, the subgraph offsets and
    # the AllocationInfo array, the planner gets the rest of the head (9 ints per buffer)
    planning = (align_up(sizes.scratch_request * (n_scratch + MAX_SCRATCH_PER_OP)
                         + sizes.pointer * len(m.subgraphs) + sizes.allocation_info * n_alloc)
                + PLANNER_BYTES_PER_BUFFER * len(buffers))
    parts = _tail(m, sizes, n_scratch)
    tail = sum(parts.values())
    # the input / output TfLiteTensors are allocated after planning; the scratch handles
    # and variables after Prepare
    before_plan = tail - parts["input/output tensors"]
    before_prepare = before_plan - parts["scratch handles"] - parts["variables"]
    preparing = _prepare_temps(m, sizes, n_scratch)
    total = max(tail + head, before_plan + planning, before_prepare + preparing)
    estimated = tuple(sorted({op.name for sg in m.subgraphs for op in sg.operators
                              if op.name not in OP_BYTES}))
    return MicroArenaReport(target, total, head, planning, tail, parts, buffers, estimated)


def micro_arena(model: bytes, target: str = "32bit") -> int:
    """The tensor arena size (bytes) to declare for ``model`` in TFLM on ``target``."""
    return micro_arena_report(model, target).total
