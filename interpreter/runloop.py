"""invoke()'s inner loop: a subgraph's prepared steps, run in order.

A step is ``(eval, record, inputs, outputs)`` (allocation.py builds the tuple once, with
the arena views bound), so running one is a single call: no lookups, no option parsing,
no allocation. Two things are paid once per run instead of once per op:

* numpy's floating-point warnings are off for the whole run (``quiet()``): kernels
  compute IEEE results (inf, NaN, wrapped integers) on purpose, as LiteRT's do, and
  entering ``np.errstate`` costs 3-5 us -- more than a small op's arithmetic. Every
  place that runs steps (invoke, a signature's subgraph, the batch split's workers, the
  profiler, constant folding) enters it once; kernels do not enter it themselves.
* with the native extension built, ``run()`` is its C loop (native/module.c,
  ``run_steps``): the same calls without the Python loop's per-op bytecode, and a
  ``NativeStep`` (a C kernel with its arguments bound at allocate time, e.g.
  ``copy_step`` below) runs without any Python call at all. Kernels written in C join
  by making their step a NativeStep (native.h: ``el_step_new``).

When a step raises, the exception carries ``step_index`` (the position of the step in
the list) on either loop, so invoke() can name the op that failed.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from . import native

Step = tuple  # (eval, record, inputs, outputs)


def quiet() -> np.errstate:
    """numpy's floating-point warnings off, for one whole run of steps."""
    return np.errstate(all="ignore")


def run_python(steps: Sequence[Step]) -> None:
    """The loop in Python (what the C loop does, for builds without the extension)."""
    i = 0
    try:
        for eval_fn, record, inputs, outputs in steps:
            eval_fn(record, inputs, outputs)
            i += 1
    except BaseException as exc:
        exc.step_index = i
        raise


_run_native = getattr(native.module, "run_steps", None)
run = _run_native if _run_native is not None else run_python


def failed_step(exc: BaseException) -> int | None:
    """The index of the step that raised ``exc`` in ``run``, if it was one."""
    return getattr(exc, "step_index", None)


def copy_step(source: np.ndarray, target: np.ndarray) -> Step | None:
    """A native step copying ``source``'s bytes into ``target`` (RESHAPE, SQUEEZE,
    EXPAND_DIMS: the same elements in the same order), or None when the extension is not
    built or an array is not a plain C-contiguous buffer of the same size."""
    make = getattr(native.module, "copy_step", None)
    if make is None or source is None or target is None or source.dtype.kind == "O" \
            or target.dtype.kind == "O" or source.nbytes != target.nbytes \
            or not (source.flags.c_contiguous and target.flags.c_contiguous) \
            or not target.flags.writeable:
        return None
    return make(source, target)
