"""The Interpreter keywords of LiteRT's Python API (ai_edge_litert.interpreter.Interpreter /
tf.lite.Interpreter) and what each means for edgelite.

* ``OpResolverType`` -- LiteRT's enum, same members and values. ``AUTO`` and ``BUILTIN``
  select LiteRT's default kernels (XNNPACK where it takes the op, the optimized builtin
  kernels otherwise): edgelite's ``kernels="default"``. ``BUILTIN_REF`` selects the
  reference kernels: ``kernels="reference"``. ``BUILTIN_WITHOUT_DEFAULT_DELEGATES`` is the
  optimized builtin kernels without XNNPACK; edgelite has no set of its own for them and
  uses ``kernels="reference"`` (the optimized integer kernels requantize with the same
  fixed-point MultiplyByQuantizedMultiplier as the reference ones;
  docs/interpreter-differences.md lists where they may still differ).
  Anything else (a string, an int) is refused, as LiteRT refuses it.
* ``num_threads`` -- None (the default) or an int >= 1, checked as LiteRT checks it
  (interpreter.py: "type of num_threads should be int", "num_threads should >= 1").
* ``experimental_delegates`` -- None or an empty list; edgelite runs no delegates, so a
  delegate is refused in one line, and so is ``load_delegate()`` (always a ValueError:
  LiteRT raises one for a delegate that fails to start -- the error CPU-fallback code
  catches -- and OSError for a library it cannot open).
"""

from __future__ import annotations

import enum

import numpy as np

from edgelite.errors import OptionError
from .kernel_set import KernelSet


class OpResolverType(enum.Enum):
    """LiteRT's op resolver choice (ai_edge_litert.interpreter.OpResolverType)."""

    AUTO = 0
    BUILTIN = 1
    BUILTIN_REF = 2
    BUILTIN_WITHOUT_DEFAULT_DELEGATES = 3


RESOLVER_KERNELS = {
    OpResolverType.AUTO: KernelSet.DEFAULT,
    OpResolverType.BUILTIN: KernelSet.DEFAULT,
    OpResolverType.BUILTIN_REF: KernelSet.REFERENCE,
    OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES: KernelSet.REFERENCE,
}


def resolver_kernels(resolver) -> KernelSet:
    """The kernel set an ``experimental_op_resolver_type`` selects; OptionError (a
    ValueError) for anything but an OpResolverType member (LiteRT's enum is accepted by
    member name too, so code importing it from ai_edge_litert works here)."""
    if not isinstance(resolver, OpResolverType):
        name = getattr(resolver, "name", None)
        if isinstance(resolver, enum.Enum) and name in OpResolverType.__members__:
            resolver = OpResolverType[name]
        else:
            raise OptionError(f"Unrecognized passed in op resolver type: {resolver}; use one "
                              f"of edgelite.interpreter.OpResolverType "
                              f"{[t.name for t in OpResolverType]}")
    return RESOLVER_KERNELS[resolver]


def check_num_threads(num_threads) -> None:
    """None or an int >= 1, as LiteRT; OptionError (a ValueError) otherwise."""
    if num_threads is None:
        return
    if not isinstance(num_threads, int):
        raise OptionError(f"type of num_threads should be int, got "
                          f"{type(num_threads).__name__} {num_threads!r}")
    if num_threads < 1:
        raise OptionError(f"num_threads should >= 1 (or None for the default), got "
                          f"{num_threads}")


def check_delegates(delegates) -> None:
    """None or an empty list; a delegate is refused (edgelite runs every op itself)."""
    if delegates is None:
        return
    delegates = list(delegates)
    if delegates:
        raise OptionError(f"experimental_delegates: edgelite runs no delegates (got "
                          f"{len(delegates)}: {type(delegates[0]).__name__}); its own kernels "
                          "run every op -- pass experimental_delegates=None or []")


def load_delegate(library, options=None):
    """LiteRT's ``load_delegate``: edgelite runs no delegates, so this always refuses
    (OptionError, a ValueError, as LiteRT's "Failed to load delegate from ...")."""
    raise OptionError(f"Failed to load delegate from {library!r}: edgelite runs no delegates "
                      "(its own kernels run every op); drop the delegate")


def check_loop_bound(value) -> int | None:
    """A valid ``max_loop_iterations`` (None or a positive int): edgelite's own keyword,
    checked with LiteRT's argument checks."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise OptionError(f"max_loop_iterations should be a positive int or None, got {value!r}")
    return int(value)
