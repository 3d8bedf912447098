"""What one Interpreter was asked for, as one frozen object.

The constructor checks its arguments and builds a ``Settings`` once; it is then passed
down whole -- to the Program of every allocate_tensors() (program.py), to allocate() for
each subgraph (allocation.py), to the batch split's per-sample allocations (split_plan.py),
to the support report (support.py) -- and kernels see its parts through their OpContext
(``ctx.quant``, ``ctx.threads``). Nothing threads the values one by one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .kernel_set import DEFAULT_CONFIG, QuantConfig
from .kernels.base import Kernel
from .kernels.custom import NO_CUSTOM


@dataclass(frozen=True)
class Settings:
    # whose integer arithmetic the kernels reproduce (kernel set, rounding) and whether
    # the native (C) kernels run (kernel_set.py, native.py)
    quant: QuantConfig = DEFAULT_CONFIG
    threads: int = 1  # num_threads: edgelite's pool, which big kernels split work over
    blas_threads: int | None = 1  # numpy's BLAS threads inside invoke() (None: untouched)
    preserve_all_tensors: bool = False  # every tensor keeps its value after invoke()
    split_batch: bool = True  # run a batch's samples in chunks over the threads
    memory_limit: int | None = None  # bytes per allocation (None: memory.default_memory_limit())
    max_loop_iterations: int | None = None  # a WHILE op's bound per invoke() (None: none)
    custom_kernels: Mapping[str, Kernel] = field(default_factory=lambda: NO_CUSTOM)  # by name


DEFAULT_SETTINGS = Settings()
