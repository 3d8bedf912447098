"""What every kernel sees: the op context given to prepare(), the output specs it returns.

Kernels follow TFLite Micro's split:

* ``prepare(ctx: OpContext) -> (tuple[OutputSpec, ...], record)`` runs once per
  allocate_tensors(). It validates shapes and dtypes, infers every output shape, and
  computes everything eval() needs (padding, transposed weights, clamp ranges, scratch
  buffers, strided views) into a small frozen dataclass ``record``. Buffers whose
  contents must persist between invokes (a zero border) come from ``scratch()``; pure
  temporaries from ``temporary()``, which shares memory between ops.
* ``eval(record, inputs, outputs)`` runs on every invoke(). ``inputs`` holds one numpy
  array per op input (None for an omitted optional input, -1 in the file), ``outputs``
  one preallocated array per op output (views into the arena). eval() writes the result
  into ``outputs`` with ``out=`` / ``np.copyto`` and returns nothing.

Outputs whose shape is only known at invoke time (TFLite's dynamic tensors: a WHILE
whose loop-carried tensor grows, an IF whose branches disagree, a READ_VARIABLE of a
variable of unknown rank): prepare() returns their spec with ``dynamic=True`` (the shape
is then a placeholder), and eval() receives ``outputs`` as a *list* of None, one per
output, and stores a new array in each slot (``outputs[i] = result``) -- the op resizes
its outputs. allocation.py keeps such tensors out of the arena, and prepares the ops
that read them again at invoke for the shapes they actually get (cached per shape); a
graph without dynamic outputs never pays for any of this.

Ops that call other subgraphs or keep state between invokes (control_flow.py,
variables.py) reach the model's other subgraphs and its resource variables through
``ctx.program`` (program.Program); ``ctx.subgraph`` is the index of the op's own
subgraph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from flatbuffers import flexbuffers

from edgelite.errors import DTypeError, ModelFormatError, ShapeError, UnsupportedOpError
from edgelite.names import quoted
from ..loader.model_objects import num_elements  # noqa: F401 (kernels import it from here)
from ..kernel_set import DEFAULT_CONFIG, QuantConfig


RESOURCE_TYPE = 13  # TensorType.RESOURCE: a resource handle
RESOURCE_DTYPE = np.dtype(np.int32)  # held as its int32 resource id, as in LiteRT


def storage_dtype(tensor) -> np.dtype | None:
    """The numpy dtype a model.Tensor is held in: its own, or int32 for a RESOURCE handle
    (var_handle.cc writes the resource id as an int32)."""
    return RESOURCE_DTYPE if tensor.type_code == RESOURCE_TYPE else tensor.dtype


@dataclass(frozen=True)
class TensorInfo:
    """One operand as prepare() sees it: current shape (after resizes), dtype, constant."""

    index: int
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    data: np.ndarray | None  # the (read-only) value of a constant tensor, else None
    quantization: Any = None  # model.Quantization or None
    is_variable: bool = False  # a variable tensor (state a kernel updates in place)
    sparsity: Any = None  # model.Sparsity of a constant stored sparse (its data is dense)

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class OutputSpec:
    """Shape and dtype prepare() infers for one output."""

    shape: tuple[int, ...]
    dtype: np.dtype
    dynamic: bool = False  # the shape is only known at invoke (see the module docstring)


@dataclass(frozen=True)
class OpContext:
    """Everything prepare() may look at for one operator."""

    index: int  # operator index in the subgraph
    op_name: str  # "CONV_2D", ...
    options: Mapping[str, Any]  # builtin options as a dict (snake_case keys); {} when absent
    inputs: tuple[TensorInfo | None, ...]  # None for an omitted optional input
    outputs: tuple[TensorInfo, ...]  # as declared in the file (shape may be stale)
    quant: QuantConfig = DEFAULT_CONFIG  # which LiteRT integer arithmetic to reproduce
    threads: int = 1  # threads big kernels may split their work over (parallel.py)
    workspace: "Workspace | None" = None  # shared memory for temporaries (temporary())
    subgraph: int = 0  # index of the subgraph the op belongs to
    program: Any = None  # program.Program: the other subgraphs, resource variables
    intermediates: tuple[TensorInfo | None, ...] = ()  # the op's intermediates (LSTM scales)
    # A CUSTOM op's custom_options bytes as the file holds them (LiteRT's
    # custom_initial_data), None when absent; flexbuffer_options() decodes a flexbuffer.
    custom_options: bytes | None = None
    custom_code: str | None = None  # a CUSTOM op's name ("TFLite_Detection_PostProcess")

    def describe(self) -> str:
        out = f", output {quoted(self.outputs[0].name)}" if self.outputs else ""
        where = f"subgraph {self.subgraph} " if self.subgraph else ""
        name = self.op_name if self.custom_code is None else \
            f"{self.op_name} {quoted(self.custom_code)}"
        return f"{where}operator {self.index} ({name}{out})"

    # ---------------------------------------------------------------- errors

    def shape_error(self, message: str) -> ShapeError:
        return ShapeError(f"{self.describe()}: {message}")

    def dtype_error(self, message: str) -> DTypeError:
        return DTypeError(f"{self.describe()}: {message}")

    def unsupported(self, message: str) -> UnsupportedOpError:
        return UnsupportedOpError(f"{self.describe()}: {message}")

    # ---------------------------------------------------------------- operands

    def check_arity(self, min_inputs: int, max_inputs: int, num_outputs: int = 1) -> None:
        n = len(self.inputs)
        if not min_inputs <= n <= max_inputs:
            want = str(min_inputs) if min_inputs == max_inputs else f"{min_inputs}..{max_inputs}"
            raise self.shape_error(f"expects {want} inputs, the file gives {n}")
        if len(self.outputs) != num_outputs:
            raise self.shape_error(
                f"expects {num_outputs} output(s), the file gives {len(self.outputs)}"
            )

    def input(self, i: int) -> TensorInfo:
        """Required input ``i`` (error if the file omits it)."""
        if i >= len(self.inputs) or self.inputs[i] is None:
            raise self.shape_error(f"input {i} is required but missing")
        return self.inputs[i]

    def optional_input(self, i: int) -> TensorInfo | None:
        return self.inputs[i] if i < len(self.inputs) else None

    def constant_input(self, i: int, what: str) -> np.ndarray:
        """Value of input ``i``, which must be a constant (e.g. an axis or a shape)."""
        t = self.input(i)
        if t.data is None:
            raise self.unsupported(
                f"the {what} (input {i}, tensor {quoted(t.name)}) must be a constant tensor; "
                "computed values (dynamic shapes) are not supported"
            )
        return t.data

    def option(self, key: str, default: Any) -> Any:
        value = self.options.get(key, default)
        return default if value is None else value

    def require_dtype(self, t: TensorInfo, allowed: tuple, role: str) -> None:
        if t.dtype.type not in allowed:
            names = ", ".join(np.dtype(a).name for a in allowed)
            raise self.unsupported(
                f"{role} tensor {quoted(t.name)} has type {t.dtype.name}; this kernel "
                f"supports {names}"
            )

    def output_dtype(self, i: int = 0) -> np.dtype:
        return self.outputs[i].dtype

    def flexbuffer_options(self) -> Any:
        """The op's custom_options decoded as a flexbuffer (``flatbuffers.flexbuffers.Loads``:
        a map becomes a dict); {} when the file has none. Bytes that are not a valid
        flexbuffer raise one ModelFormatError naming the op."""
        return decode_flexbuffer(self, self.custom_options)


MAX_FLEXBUFFER_BYTES = 2**20  # custom options larger than this are refused, not decoded


def decode_flexbuffer(ctx: OpContext, data: bytes | None) -> Any:
    """OpContext.flexbuffer_options: ``data`` decoded with flexbuffers.Loads."""
    if not data:
        return {}
    if len(data) > MAX_FLEXBUFFER_BYTES:
        raise ModelFormatError(f"{ctx.describe()}: custom options of {len(data)} bytes, over "
                               f"the {MAX_FLEXBUFFER_BYTES}-byte limit")
    try:
        return flexbuffers.Loads(bytes(data))
    except Exception as exc:  # crafted bytes: offsets out of range, cycles, bad types
        raise ModelFormatError(
            f"{ctx.describe()}: its custom options ({len(data)} bytes) are not a valid "
            f"flexbuffer ({type(exc).__name__}); the file is damaged or was written for "
            "another kernel") from None


class Kernel(NamedTuple):
    """One registry entry: the two functions of an op."""

    prepare: Callable[[OpContext], tuple[tuple[OutputSpec, ...], Any]]
    eval: Callable[[Any, tuple, tuple], None]


class Chosen(NamedTuple):
    """A record that names the eval to run: registry entries that pick an implementation
    in prepare() (float or integer kernels, one strategy of several, a kernel set's
    arithmetic) return one, and allocate_tensors() puts ``eval`` itself in the invoke()
    list, so the choice costs nothing per invoke. Each strategy has its own record type
    and its own eval: an eval never asks its record which strategy it is."""

    eval: Callable[[Any, tuple, tuple], None]
    record: Any


def run_chosen(rec: Chosen, inputs, outputs) -> None:
    """The eval of a registry entry whose prepare() returns a Chosen: invoke() calls the
    chosen eval directly; this serves the other callers (constant folding)."""
    rec.eval(rec.record, inputs, outputs)


def normalize_axis(ctx: OpContext, axis: int, rank: int) -> int:
    """Negative axes count from the end, as in TFLite (e.g. concatenation.cc)."""
    a = int(axis)
    if a < 0:
        a += rank
    if not 0 <= a < rank:
        raise ctx.shape_error(f"axis {axis} is out of range for a rank-{rank} tensor")
    return a


MAX_SCRATCH_BYTES = 2**31  # per scratch buffer; larger requests are refused, not tried


def _work_bytes(ctx: OpContext, shape: tuple[int, ...], dtype) -> int:
    """Bytes of a work buffer, refused over MAX_SCRATCH_BYTES."""
    nbytes = num_elements(shape) * np.dtype(dtype).itemsize
    if nbytes > MAX_SCRATCH_BYTES:
        raise ctx.shape_error(
            f"needs a {nbytes}-byte work buffer of shape {list(shape)}, over the "
            f"{MAX_SCRATCH_BYTES}-byte limit (are the input shapes right?)"
        )
    return nbytes


def reserve(ctx: OpContext, shape: tuple[int, ...], dtype) -> None:
    """Size-check and charge to the memory budget a work array prepare() is about to
    compute itself (index tables, interpolation weights) -- before numpy allocates it."""
    nbytes = _work_bytes(ctx, shape, dtype)
    if ctx.workspace is not None:
        ctx.workspace.charge(ctx, nbytes)


def scratch(ctx: OpContext, shape: tuple[int, ...], dtype, fill=None) -> np.ndarray:
    """A kernel's private work buffer, allocated once in prepare() (size-checked, and
    charged to the allocation's memory budget)."""
    nbytes = _work_bytes(ctx, shape, dtype)
    if ctx.workspace is not None:
        ctx.workspace.charge(ctx, nbytes)
    if fill is None:
        return np.empty(shape, dtype)
    if fill == 0:
        return np.zeros(shape, dtype)  # calloc: the pages are zeroed as they are touched
    return np.full(shape, fill, dtype)


class Workspace:
    """Memory for kernels' temporaries -- buffers whose contents never outlive one
    eval() (im2col matrices, accumulators, products) -- shared by every op of an
    allocation, since ops run one at a time: each op's temporaries are laid out from
    the start of the current block. When an op needs more than the block holds, a
    larger block is started for it and the ops after it (earlier ops keep theirs alive
    through their views). Compared with one buffer per op this keeps the working set
    of a network small enough to stay in cache.

    ``budget`` (memory.MemoryBudget): charged for every block and every scratch()
    buffer before it is made, so an allocation's work buffers stay under its limit."""

    ALIGNMENT = 64

    def __init__(self, budget=None) -> None:
        self._block = np.empty(0, np.uint8)
        self._offset = 0
        self._budget = budget

    def charge(self, ctx: OpContext, nbytes: int) -> None:
        if self._budget is not None:
            self._budget.take_work(ctx.describe(), nbytes)

    def begin_op(self) -> None:
        self._offset = 0

    def take(self, ctx: OpContext, shape: tuple[int, ...], dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        nbytes = num_elements(shape) * dtype.itemsize
        if self._offset + nbytes > self._block.size:
            size = max(2 * self._block.size, nbytes + self.ALIGNMENT)
            self.charge(ctx, size)
            self._block = np.empty(size, np.uint8)
            self._offset = 0
        start = self._offset + (-(self._block.ctypes.data + self._offset) % self.ALIGNMENT)
        if start + nbytes > self._block.size:  # alignment pushed it past the end
            self.charge(ctx, self._block.size + nbytes + self.ALIGNMENT)
            self._block = np.empty(self._block.size + nbytes + self.ALIGNMENT, np.uint8)
            start = -self._block.ctypes.data % self.ALIGNMENT
        self._offset = start + nbytes
        return self._block[start:start + nbytes].view(dtype).reshape(shape)


def temporary(ctx: OpContext, shape: tuple[int, ...], dtype) -> np.ndarray:
    """An uninitialised work buffer whose contents eval() does not need to keep between
    invokes: from the allocation's shared Workspace (size-checked like scratch())."""
    if ctx.workspace is None:
        return scratch(ctx, shape, dtype)
    _work_bytes(ctx, shape, dtype)
    return ctx.workspace.take(ctx, tuple(shape), dtype)
