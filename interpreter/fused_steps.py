"""Native steps fused at allocate_tensors(): a LOGISTIC whose only reader is the MUL right
after it, multiplying the LOGISTIC's own input -- swish (SiLU), x * sigmoid(x), as Keras
writes it and TF's converter leaves it (EfficientNet: 65 pairs, a third of its float time)
-- runs as one C pass, ``swish_f32`` (native/transcend_f32.c: the LOGISTIC's float32
steps, then the MUL's one product, so the same bits -- a NaN's sign aside, which is the
first operand's on x86 and the MUL may take the sigmoid first), which reads x once and
writes the MUL's output without writing the sigmoid between them (two passes over memory
fewer).

Only where nothing can tell: both ops are float32 native steps of the same size (no
broadcast), the MUL has no fused activation, and the sigmoid is no graph output, kept
signature tensor or other op's input, nor preserve_all_tensors. The two ops are adjacent,
so the MUL's output may be written one step early: no tensor's lifetime starts or ends
between them (planner.py gives the output memory no live tensor at either step). The
profiler shows the fused step under the LOGISTIC.

A swish right after a float32 CONV_2D (conv_blas.c) or DEPTHWISE_CONV_2D (depthwise_f32.c)
native step without a fused activation, on that op's output, goes further: the convolution
takes the swish as its activation (EL_ACT_SWISH: swish_f32's values on each block of rows
while it is in cache, so the same bits again) and writes the MUL's output; neither its
own output nor the sigmoid is written, and a split convolution carries the swish's work to
the pool without a hand-off of its own. Its output must have no reader but the pair, and
the MUL's output, planned from two steps later, must not share memory with the
convolution's input (the one tensor live at the convolution that may die before the MUL).
The profiler shows the three under the convolution.

An 8-bit swish (int8 / uint8 LOGISTIC then MUL(x, s) on LiteRT's integer kernels) is a
function of x's byte alone: allocate runs the two ops' own kernels once over the 256
values (the LOGISTIC's table, the MUL's C arithmetic -- XNNPACK's formula or the pair
table) and the pair becomes one 256-entry table lookup (``lut_step``), the same bytes by
construction. The same conditions hold (adjacent, s read by the MUL alone, no broadcast).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np

from . import native as native_backend
from .kernels.arithmetic import FloatBinaryRecord
from .kernels.base import Chosen
from .kernels.common.native_conv_blas import ConvBlas
from .kernels.common.native_depthwise_f32 import NativeDepthwiseF32
from .kernels.common.native_float_ops import NativeUnaryF32
from .kernels.common.native_ops import NativeBinary, NativeLut, eval_lut

SWISH = 2  # native_float.h's EL_ACT_SWISH: a float convolution's fused swish


def _record(entry):
    record = entry[2]
    return record.record if isinstance(record, Chosen) else record


def _is_swish(entries, i: int, reads: Counter, keep) -> bool:
    """Entries i, i + 1 are LOGISTIC(x) -> s and MUL(x, s) (either order) on the float32
    C kernels, the MUL without a fused activation, nothing else reading s."""
    if i < 0 or i + 1 >= len(entries) or entries[i][0].name != "LOGISTIC" or \
            entries[i + 1][0].name != "MUL":
        return False
    logistic, mul = _record(entries[i]), _record(entries[i + 1])
    if not isinstance(logistic, NativeUnaryF32) or logistic.kernel != "logistic_f32" or \
            not isinstance(mul, FloatBinaryRecord) or mul.clamp is not None:
        return False
    (x,), (s,) = entries[i][0].inputs, entries[i][0].outputs
    return tuple(entries[i + 1][0].inputs) in ((x, s), (s, x)) and reads[s] == 1 and \
        s not in keep


def _swish_conv(entries, i: int, reads: Counter, keep):
    """Convolution i's record with the swish of entries i + 1, i + 2 as its activation, or
    None: a float32 CONV_2D / DEPTHWISE_CONV_2D C kernel without a fused activation whose
    output only that swish reads."""
    if i + 2 >= len(entries) or not _is_swish(entries, i + 1, reads, keep):
        return None
    record, (y,) = _record(entries[i]), entries[i][0].outputs
    if entries[i + 1][0].inputs[0] != y or reads[y] != 2 or y in keep:
        return None
    if isinstance(record, ConvBlas) and not record.bounds[0]:
        return replace(record, bounds=(SWISH, 0.0, 0.0))
    if isinstance(record, NativeDepthwiseF32) and not record.clamp[0]:
        return replace(record, clamp=(SWISH, 0.0, 0.0))
    return None


def planned_outputs(entries: list, keep: set[int]) -> list:
    """Each step's outputs as the arena planner should see them: a convolution that will
    take its swish (module doc) also writes the MUL's output, so that output gets memory
    no tensor live at the convolution has (its input above all)."""
    reads = Counter(t for entry in entries for t in entry[0].inputs)
    outputs = [tuple(entry[0].outputs) for entry in entries]
    for i in range(len(entries) - 2):
        if _swish_conv(entries, i, reads, keep) is not None:
            outputs[i] += tuple(entries[i + 2][0].outputs)
    return outputs


def fuse_swish(entries: list, steps: tuple, step_ops: tuple, arrays, keep: set[int]
               ) -> tuple[tuple, tuple]:
    """(steps, step_ops) with each fusable convolution + swish and LOGISTIC + MUL pair as
    one step (module doc); ``entries``: the prepared (op, kernel, record, mode) of each
    step; ``keep``: tensors that must hold their values after invoke()."""
    module = native_backend.module
    if getattr(module, "swish_f32_step", None) is None:
        return steps, step_ops
    native = [step[0] is module.run_native_step for step in steps]
    where = (Counter(t for entry in entries for t in entry[0].inputs), keep, arrays, module)
    fused, ops, i = [], [], 0
    while i < len(entries):
        step, width = _fused(entries, native, i, where)
        fused.append(steps[i] if step is None else step)
        ops.append(step_ops[i])
        i += width
    return tuple(fused), tuple(ops)


def _fused(entries, native, i: int, where: tuple) -> tuple:
    """(the step of the first of FUSIONS that applies at step i, how many steps it
    replaces), or (None, 1)."""
    for build, width in FUSIONS:
        step = build(entries, native, i, *where)
        if step is not None:
            return step, width
    return None, 1


def _conv_step(entries, native, i, reads, keep, arrays, module):
    """The native step of convolution i taking the swish after it, or None."""
    act = _swish_conv(entries, i, reads, keep) if all(native[i:i + 3]) else None
    if act is None:
        return None
    op, out = entries[i][0], arrays[entries[i + 2][0].outputs[0]]
    if out.shape != arrays[op.outputs[0]].shape or \
            np.may_share_memory(out, arrays[op.inputs[0]]):    # (planned_outputs' work)
        return None
    return act.native_step([arrays[t] if t >= 0 else None for t in op.inputs], [out])


def _swish_step(entries, native, i, reads, keep, arrays, module):
    """The swish_f32 step of the LOGISTIC + MUL at i, i + 1, or None."""
    if not (all(native[i:i + 2]) and _is_swish(entries, i, reads, keep)):
        return None
    x, y = entries[i][0].inputs[0], entries[i + 1][0].outputs[0]
    if arrays[x].shape != arrays[y].shape:
        return None
    step = module.swish_f32_step(arrays[x], arrays[y], *_threads(entries[i]))
    return module.run_native_step, step, None, None


def _threads(entry) -> tuple:
    logistic = _record(entry)
    return logistic.threads, logistic.tasks


def _swish_table_step(entries, native, i, reads, keep, arrays, module):
    """The 8-bit LOGISTIC + MUL at i, i + 1 as one table lookup (module doc), or None."""
    if i + 1 >= len(entries) or entries[i][0].name != "LOGISTIC" or \
            entries[i + 1][0].name != "MUL":
        return None
    logistic, mul = _record(entries[i]), _record(entries[i + 1])
    if not isinstance(logistic, NativeLut) or len(logistic.slices) != 1 or \
            not isinstance(mul, NativeBinary) or mul.offsets is not None:
        return None
    (x,), (s,) = entries[i][0].inputs, entries[i][0].outputs
    pair, y = tuple(entries[i + 1][0].inputs), entries[i + 1][0].outputs[0]
    table, begin, end = logistic.slices[0]
    size = arrays[x].size
    if pair not in ((x, s), (s, x)) or reads[s] != 1 or s in keep or table.size != 256 or \
            (begin, end) != (0, size) or arrays[y].size != size or len(mul.dims) != 3:
        return None     # (a MUL of one collapsed dimension: no broadcast)
    xs = np.arange(256, dtype=np.uint8).view(arrays[x].dtype)
    sig = np.empty(256, arrays[s].dtype)
    module.lut(xs, table, sig, 0, 256)
    a, b = (xs, sig) if pair == (x, s) else (sig, xs)
    swish = np.empty(256, arrays[y].dtype)
    module.binary(a, b, mul.table, None, mul.params, mul.scale, swish,
                  np.array([256, 1, 1], np.int64), 0, 256, 1, 1)
    record = NativeLut(((swish, 0, size),), logistic.threads)
    inputs, outputs = (arrays[x],), (arrays[y],)
    return record.native_step(inputs, outputs) or (eval_lut, record, inputs, outputs)


# the fusions fuse_swish tries at each step, in order, and the steps each replaces
FUSIONS = ((_conv_step, 3), (_swish_step, 2), (_swish_table_step, 2))
