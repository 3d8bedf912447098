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
"""

from __future__ import annotations

from collections import Counter

from . import native as native_backend
from .kernels.arithmetic import FloatBinaryRecord
from .kernels.base import Chosen
from .kernels.common.native_float_ops import NativeUnaryF32


def _record(entry):
    record = entry[2]
    return record.record if isinstance(record, Chosen) else record


def fuse_swish(entries: list, steps: tuple, step_ops: tuple, arrays, keep: set[int]
               ) -> tuple[tuple, tuple]:
    """(steps, step_ops) with each fusable LOGISTIC + MUL pair as one step (module doc);
    ``entries``: the prepared (op, kernel, record, mode) of each step; ``keep``: tensors
    that must hold their values after invoke()."""
    module = native_backend.module
    bind = getattr(module, "swish_f32_step", None)
    if bind is None:
        return steps, step_ops
    reads = Counter(t for entry in entries for t in entry[0].inputs)
    fused, ops, i = [], [], 0
    while i < len(entries):
        pair = _swish(entries, steps, i, reads, keep, arrays, module)
        fused.append(steps[i] if pair is None else
                     (module.run_native_step, bind(*pair), None, None))
        ops.append(step_ops[i])
        i += 1 if pair is None else 2
    return tuple(fused), tuple(ops)


def _swish(entries, steps, i, reads, keep, arrays, module) -> tuple | None:
    """(x, out, threads, tasks) of swish_f32_step where steps i and i + 1 fuse, else None."""
    if i + 1 >= len(entries) or entries[i][0].name != "LOGISTIC" or \
            entries[i + 1][0].name != "MUL" or \
            not all(steps[k][0] is module.run_native_step for k in (i, i + 1)):
        return None
    logistic, mul = _record(entries[i]), _record(entries[i + 1])
    if not isinstance(logistic, NativeUnaryF32) or logistic.kernel != "logistic_f32" or \
            not isinstance(mul, FloatBinaryRecord) or mul.clamp is not None:
        return None
    (x,), (s,) = entries[i][0].inputs, entries[i][0].outputs
    mop = entries[i + 1][0]
    y = mop.outputs[0]
    if tuple(mop.inputs) not in ((x, s), (s, x)) or reads[s] != 1 or s in keep or \
            arrays[x].shape != arrays[y].shape:
        return None
    return arrays[x], arrays[y], logistic.threads, logistic.tasks
