"""The native (C) element-wise kernels' records: 8-bit table lookups, unary and binary.

The int8 / uint8 kernels of many ops end in a table the numpy kernel builds in prepare()
by the kernel set's arithmetic and looks up in eval():

* a 256-entry table per input value (requantize.apply_lut): LOGISTIC, TANH, HARD_SWISH,
  LEAKY_RELU, the RELUs, QUANTIZE's int8 <-> uint8 requantization, and DEQUANTIZE's
  per-tensor float(double(s) * (q - z)) (float32 entries);
* a 65536-entry table per input pair (arithmetic.eval_quantized): ADD, SUB, MUL, with a
  per-element path offset where LiteRT's code paths differ (arithmetic.eval_paths).

The C kernels (native/lut.c, native/elementwise.c) make the same lookups in one pass,
broadcasting by strides instead of numpy's index arrays, so their outputs are the
tables' values, bit for bit, in every kernel set. ADD / SUB / MUL split their values into
tasks over the C pool inside their native step (native_split.SPLIT_ELEMENTS); the table
lookups' large outputs (SPLIT_VALUES) are split into value ranges over the Interpreter's
threads (parallel.py); the C code releases the GIL.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ... import native as native_backend
from ..base import Chosen, OpContext
from ...parallel import row_ranges, run_slices, worth_splitting
from . import native_split

MAX_DIMS = 8  # native.h EL_MAX_DIMS
# Values below which an element-wise op runs on one thread. These kernels take well under
# a nanosecond per value, so a slice must be large for the hand-off (a thread wake-up) to
# pay; measured on 2 busy cores, splitting 400K-value MULs made them 2-4x slower (the
# caller waiting for a woken worker that got no core), where a 1.2M-value one still gains
# on an idle machine.
SPLIT_VALUES = 2**20


def _ranges(ctx: OpContext, size: int) -> tuple[tuple[int, int], ...]:
    """[begin, end) value ranges, one per slice the op's output is worth splitting into."""
    parts = worth_splitting(ctx.threads, size) if size >= SPLIT_VALUES else 1
    return tuple(row_ranges(size, parts))


def _plain(*arrays) -> bool:
    """The operands a native step can bind: C-contiguous numpy arrays (arena views)."""
    return all(isinstance(a, np.ndarray) and a.flags.c_contiguous for a in arrays)


def _step(bind: str, *args):
    """The run loop's step tuple of the module's ``bind`` step on ``args``
    (docs/native-run-loop.md); None where the built extension predates ``bind`` (a source
    tree updated without rebuilding it): the op keeps its eval."""
    module = native_backend.module
    fn = getattr(module, bind, None)
    return None if fn is None else (module.run_native_step, fn(*args), None, None)


def has_step(ctx: OpContext, bind: str) -> bool:
    """The interpreter runs the native backend and the built extension has ``bind`` (a
    source tree updated without a rebuild may lack it): prepare() may then leave out the
    numpy eval's scratch."""
    return ctx.quant.native and getattr(native_backend.module, bind, None) is not None


def plain_step(arrays, bind: str, *args):
    """The step of ``bind`` on ``args`` where ``arrays`` (the op's input and output) are
    plain arena buffers, else None: the op keeps its eval."""
    return _step(bind, *args) if _plain(*arrays) else None


def run_contiguous(make_step: Callable, x: np.ndarray, out: np.ndarray) -> None:
    """Run the native step ``make_step(x, out)`` once on operands that need not be arena
    buffers (a constant or dynamic input, a strided output): on a contiguous float32 copy
    of x, into out or a contiguous buffer copied to it -- the eval of an op whose record
    keeps no numpy scratch because its native step runs."""
    x = np.ascontiguousarray(x, np.float32)
    target = out if out.flags.c_contiguous else np.empty(out.shape, np.float32)
    make_step(x, target)()
    if target is not out:
        np.copyto(out, target)


def one_slice_step(ranges, arrays, bind: str, *args):
    """plain_step where the op runs as one slice (``ranges``: its slices), else None: the
    op keeps its eval, which hands the slices to the pool."""
    return plain_step(arrays, bind, *args) if len(ranges) == 1 else None


def _run(ranges, fn, *args) -> None:
    if len(ranges) == 1:
        fn(*args, *ranges[0])
    else:
        run_slices(len(ranges), fn, [(*args, a, b) for a, b in ranges])


# --------------------------------------------------------------------------- unary


@dataclass(frozen=True, eq=False)
class NativeLut:
    """out[i] = table[bits of x[i]]; 1-byte entries, or 4-byte ones (float32 outputs).
    Each slice is (table, begin, end): a table may serve only part of the values
    (QUANTIZE's vector blocks and scalar tail, quantize.eval_block_lut)."""

    slices: tuple  # (table, begin, end) per slice, run on the op's threads
    threads: int

    def native_step(self, inputs, outputs):
        """The slices in order as one native step where they are not split over threads
        (the pieces of a table and its tail stay), else None (the eval)."""
        x, out = inputs[0], outputs[0]
        split = self.threads > 1 and self.slices[-1][2] >= SPLIT_VALUES
        if split or len(self.slices) > 4 or not _plain(x, out):
            return None
        return _step("lut_step", x, out, self.slices)


def eval_lut(rec: NativeLut, inputs, outputs) -> None:
    fn, x, out = native_backend.module.lut, inputs[0], outputs[0]
    if len(rec.slices) == 1:
        table, begin, end = rec.slices[0]
        fn(x, table, out, begin, end)
    else:
        run_slices(rec.threads, lambda t, a, b: fn(x, t, out, a, b), rec.slices)


def lut(ctx: OpContext, table: np.ndarray, tail: np.ndarray | None = None,
        split: int = 0) -> Chosen | None:
    """The native lookup of ``table`` (make_lut's layout, indexed by the input's bits)
    for input 0 -- values from ``split`` on in ``tail`` where given -- or None where the
    native backend is off or cannot take it."""
    x = ctx.input(0)
    size = math.prod(x.shape)
    tables = (table,) if tail is None else (table, tail)
    if not ctx.quant.native or size == 0 or x.dtype.itemsize != 1 or any(
            t.shape != (256,) or t.dtype.itemsize not in (1, 4) for t in tables):
        return None
    tables = tuple(np.ascontiguousarray(t) for t in tables)
    pieces = [(tables[0], 0, size)] if tail is None else \
        [(tables[0], 0, split), (tables[1], split, size)]
    slices = tuple((t, begin + a, begin + b) for t, begin, end in pieces if end > begin
                   for a, b in _ranges(ctx, end - begin))
    return Chosen(eval_lut, NativeLut(slices, ctx.threads))


# --------------------------------------------------------------------------- binary


@functools.lru_cache(maxsize=4096)
def broadcast_shape(shape_a: tuple, shape_b: tuple) -> tuple[int, ...]:
    """np.broadcast_shapes of two shapes (tuples), remembered: a graph's ops repeat a few
    shapes, and preparing 100,000 of them spent a tenth of the time here. ValueError when
    they do not broadcast."""
    return tuple(np.broadcast_shapes(shape_a, shape_b))


@functools.lru_cache(maxsize=4096)
def collapse(shape_a: tuple, shape_b: tuple
             ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(shape, strides of a, strides of b) in values over the broadcast output shape, with
    dimensions of 1 dropped and neighbours merged where both inputs step through them
    alike (both contiguous, or both repeated): (1, H, W, C) * (1, 1, 1, C) is
    (H*W, C) with strides (C, 1) and (0, 1). (Remembered per pair of shapes: tuples.)"""
    out = broadcast_shape(tuple(shape_a), tuple(shape_b))
    rank = len(out)
    pad_a = (1,) * (rank - len(shape_a)) + tuple(shape_a)
    pad_b = (1,) * (rank - len(shape_b)) + tuple(shape_b)
    dims = []  # [size, a moves, b moves]
    for n, da, db in zip(out, pad_a, pad_b):
        if n == 1:
            continue
        moves = (da != 1, db != 1)
        if dims and (dims[-1][1], dims[-1][2]) == moves:
            dims[-1][0] *= n
        else:
            dims.append([n, *moves])
    if not dims:
        dims = [[1, True, True]]
    shape = tuple(d[0] for d in dims)

    def strides(index):
        result, step = [], 1
        for d in reversed(dims):
            result.append(step if d[index] else 0)
            step *= d[0] if d[index] else 1
        return tuple(reversed(result))

    return shape, strides(1), strides(2)


TABLE, XNN_ADD, XNN_MUL = 0, 1, 2  # native.h el_binary_kind


@dataclass(frozen=True)
class Formula:
    """A binary op's arithmetic that elementwise.c computes directly rather than by its
    table (arithmetic.XnnAdd / XnnMul: they vectorize)."""

    kind: int  # XNN_ADD / XNN_MUL
    zero_points: tuple[int, int, int]  # z1, z2, z_out
    bounds: tuple[int, int]  # the output clamp [lo, hi]
    multipliers: tuple[int, int, int] = (0, 0, 0)  # XNN_ADD: ma, mb, shift
    scale: float = 0.0  # XNN_MUL: the float32 scale


@dataclass(frozen=True, eq=False)
class NativeBinary:
    """out = table[offsets | x1 << 8 | x2] (bytes), or the Formula, over the broadcast
    output."""

    table: np.ndarray | None  # (paths * 65536,) output bytes; None: a Formula
    offsets: np.ndarray | None  # uint32 path << 16 per output value; None: one path
    params: np.ndarray  # int64 [kind, is_uint8, z1, z2, z_out, lo, hi, ma, mb, shift]
    scale: float
    dims: np.ndarray  # int64 [collapsed shape, strides of x1, strides of x2]
    split: tuple  # (size, threads, tasks): the values, split over the C pool

    def _args(self, a, b, out) -> tuple:
        size, threads, tasks = self.split
        return (a, b, self.table, self.offsets, self.params, self.scale, out, self.dims, 0,
                size, threads, tasks)

    def native_step(self, inputs, outputs):
        """The op as one native step (its tasks split over the C pool inside it), or None
        where an operand is not a plain buffer (the eval)."""
        a, b, out = inputs[0], inputs[1], outputs[0]
        return plain_step((a, b, out), "binary_step", *self._args(a, b, out))


def eval_binary(rec: NativeBinary, inputs, outputs) -> None:
    native_backend.module.binary(*rec._args(inputs[0], inputs[1], outputs[0]))


def binary(ctx: OpContext, table: np.ndarray, offsets: np.ndarray | None,
           formula: Formula | None = None) -> Chosen | None:
    """The native kernel of a binary op: ``formula`` computed directly where given, else
    its table (arithmetic.py's layout) looked up; None where the backend is off or the
    operands do not fit it."""
    x1, x2 = ctx.input(0), ctx.input(1)
    shape, sa, sb = collapse(x1.shape, x2.shape)
    size = math.prod(shape)
    if not ctx.quant.native or size == 0 or len(shape) > MAX_DIMS \
            or x1.dtype.itemsize != 1 or x2.dtype.itemsize != 1:
        return None
    params = np.zeros(10, np.int64)
    params[1] = x1.dtype == np.uint8
    scale = 0.0
    if formula is not None and offsets is None:
        params[0] = formula.kind
        params[2:7] = formula.zero_points + formula.bounds
        params[7:10] = formula.multipliers
        scale, table = formula.scale, None
    else:
        table = np.ascontiguousarray(table).view(np.uint8)
    if offsets is not None:
        offsets = np.ascontiguousarray(offsets, np.uint32).reshape(-1)
    dims = np.array(shape + sa + sb, np.int64)
    tasks = native_split.tasks(ctx.threads, size, size // 64, native_split.SPLIT_ELEMENTS)
    return Chosen(eval_binary, NativeBinary(table, offsets, params, scale, dims,
                                            (size, ctx.threads if tasks > 1 else 1, tasks)))


# --------------------------------------------------------------------------- sums


def sum_dims(shape, axes) -> tuple[int, int, int] | None:
    """(outer, count, inner) viewing ``shape`` as (outer, count, inner) with the reduced
    ``axes`` in the middle, or None where they are not one block (dimensions of 1 aside)."""
    big = [i for i, d in enumerate(shape) if d != 1]
    at = [k for k, i in enumerate(big) if i in axes]
    if at and at != list(range(at[0], at[-1] + 1)):
        return None
    first, stop = (at[0], at[-1] + 1) if at else (len(big), len(big))
    outer = math.prod(shape[i] for i in big[:first])
    count = math.prod(shape[i] for i in big[first:stop])
    return outer, count, math.prod(shape[i] for i in big[stop:])


@dataclass(frozen=True, eq=False)
class NativeSums:
    """A quantized reduction's int64 sums (native/reduce.c), then its numpy ``finish``."""

    finish: Callable  # finish(record, sums, output)
    record: object
    is_uint8: int
    dims: tuple  # (outer, count, inner)
    total: np.ndarray  # int64 sums, shaped like np.add.reduce(..., keepdims=...)'s

    def native_step(self, inputs, outputs):
        """The sums and the finish as one native step (native/steps.c mean_step) where
        the record's finish has that C form -- ``float_stage()``: XNNPACK's float32
        (scale, bias) -- and the operands are plain arena buffers, else None."""
        stage = getattr(self.record, "float_stage", None)
        x, out = inputs[0], outputs[0]
        if stage is None or not _plain(x, out):
            return None
        return _step("mean_step", x, self.is_uint8, *self.dims, self.total, *stage(),
                     self.record.lo, self.record.hi, out, np.zeros(self.dims[2], np.int32))


def eval_sums(rec: NativeSums, inputs, outputs) -> None:
    native_backend.module.sum8(inputs[0], rec.is_uint8, *rec.dims, rec.total)
    rec.finish(rec.record, rec.total, outputs[0])


def sums(ctx: OpContext, axes, finish: Callable, record) -> Chosen | None:
    """The native sums of input 0 over ``axes`` followed by ``finish``, or None where the
    backend is off or the axes do not form one block."""
    x = ctx.input(0)
    dims = sum_dims(x.shape, axes)
    if not ctx.quant.native or dims is None or x.dtype.itemsize != 1 or 0 in x.shape:
        return None
    total = np.zeros(_reduced_shape(x.shape, axes, record.keep_dims), np.int64)
    return Chosen(eval_sums, NativeSums(finish, record, int(x.dtype == np.uint8), dims, total))


def _reduced_shape(shape, axes, keep_dims: bool) -> tuple[int, ...]:
    if keep_dims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


# --------------------------------------------------------------------------- QUANTIZE

Q_XNN, Q_REFERENCE, Q_OPTIMIZED = 0, 1, 2  # native.h el_quantize_mode
_Q_TYPES = {np.dtype(np.int8): 0, np.dtype(np.uint8): 1, np.dtype(np.int16): 2}


@dataclass(frozen=True, eq=False)
class NativeQuantize:
    """float32 -> q per tensor (native/quantize.c) by one of quantize.py's formulas."""

    kinds: tuple  # (mode, output type)
    scale: float  # a float32 value: 1 / s (XNN), s (REFERENCE), float32(1 / double(s))
    scale64: float  # OPTIMIZED: double(s)
    split: int  # OPTIMIZED: values before it take the vector loop's formula
    bounds: tuple  # (zp, lo, hi)
    ranges: tuple  # [begin, end) value ranges, one per slice

    def native_step(self, inputs, outputs):
        """One native step where the op runs as one slice, else None (the eval)."""
        x, out = inputs[0], outputs[0]
        if len(self.ranges) != 1 or not _plain(x, out):
            return None
        return _step("quantize_step", x, out, self.kinds, self.scale, self.scale64,
                     self.split, self.bounds, *self.ranges[0])


def eval_quantize(rec: NativeQuantize, inputs, outputs) -> None:
    _run(rec.ranges, native_backend.module.quantize, inputs[0], outputs[0], rec.kinds,
         rec.scale, rec.scale64, rec.split, rec.bounds)


def quantize(ctx: OpContext, mode: int, scale, bounds: tuple, scale64: float = 0.0,
             split: int = 0) -> Chosen | None:
    """The native QUANTIZE of input 0 (float32) into output 0, or None where the
    backend is off."""
    x, y = ctx.input(0), ctx.outputs[0]
    size = math.prod(x.shape)
    if not ctx.quant.native or size == 0 or x.dtype != np.float32 \
            or y.dtype not in _Q_TYPES:
        return None
    return Chosen(eval_quantize, NativeQuantize(
        (mode, _Q_TYPES[y.dtype]), float(np.float32(scale)), float(scale64), int(split),
        tuple(int(v) for v in bounds), _ranges(ctx, size)))
