"""Kernels for CUSTOM ops, looked up by the op's custom code (its name in the file).

A CUSTOM operator names its kernel by a string (``OperatorCode.custom_code``) and
carries its options as opaque bytes (``Operator.custom_options``: usually a flexbuffer
map, sometimes a raw C struct). LiteRT runs such an op only when the application
registered a kernel for the name (``MutableOpResolver::AddCustom``); edgelite does the
same, with kernels of the builtin contract (kernels/base.py: prepare(ctx) -> (specs,
record), eval(record, inputs, outputs)); prepare() reads the option bytes as
``ctx.custom_options`` or decoded as ``ctx.flexbuffer_options()``.

Where a kernel comes from, first match wins:

1. ``Interpreter(..., custom_kernels={"Name": Kernel(prepare, eval)})``: that
   interpreter only;
2. ``register_custom_kernel("Name", kernel)``: every interpreter of the process;
3. BUILTIN_CUSTOM: the custom ops TensorFlow's own tools write into files --
   ``TFLite_Detection_PostProcess`` (detection_postprocess.py; LiteRT's builtin resolver
   has it too) and MediaPipe's ``Convolution2DTransposeBias``
   (conv2d_transpose_bias.py).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from ..base import Kernel
from . import conv2d_transpose_bias, detection_postprocess

BUILTIN_CUSTOM: Mapping[str, Kernel] = MappingProxyType({
    "Convolution2DTransposeBias": conv2d_transpose_bias.KERNEL,
    "TFLite_Detection_PostProcess": detection_postprocess.KERNEL,
})

_registered: dict[str, Kernel] = {}

NO_CUSTOM: Mapping[str, Kernel] = MappingProxyType({})


def as_kernel(name, kernel) -> Kernel:
    """``kernel`` checked: a Kernel (or a (prepare, eval) pair of callables) for a
    non-empty string ``name``; TypeError otherwise."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"a custom op name must be a non-empty string, got {name!r}")
    if isinstance(kernel, tuple) and len(kernel) == 2 and all(callable(f) for f in kernel):
        return Kernel(*kernel)
    raise TypeError(
        f"the kernel for custom op {name!r} must be edgelite.interpreter.Kernel(prepare, "
        f"eval) (two callables), got {type(kernel).__name__}")


def custom_kernels_map(kernels) -> Mapping[str, Kernel]:
    """An Interpreter's ``custom_kernels`` argument checked (None: no entries)."""
    if kernels is None:
        return NO_CUSTOM
    if not isinstance(kernels, Mapping):
        raise TypeError("custom_kernels must be a dict of custom op name -> "
                        f"Kernel(prepare, eval), got {type(kernels).__name__}")
    return MappingProxyType({name: as_kernel(name, k) for name, k in kernels.items()})


def register_custom_kernel(name: str, kernel) -> None:
    """Make ``kernel`` (Kernel(prepare, eval)) run every CUSTOM op named ``name`` in every
    Interpreter allocated afterwards, unless that Interpreter's own ``custom_kernels``
    has the name. Replaces an earlier registration, and overrides a built-in kernel."""
    _registered[name] = as_kernel(name, kernel)


def unregister_custom_kernel(name: str) -> None:
    """Undo register_custom_kernel(name) (nothing happens when it was not registered)."""
    _registered.pop(name, None)


def find_custom_kernel(code: str | None, overrides: Mapping[str, Kernel] | None = None
                       ) -> Kernel | None:
    """The kernel for custom code ``code`` (see the module docstring), or None."""
    if code is None:
        return None
    for table in (overrides or NO_CUSTOM, _registered, BUILTIN_CUSTOM):
        kernel = table.get(code)
        if kernel is not None:
            return kernel
    return None
