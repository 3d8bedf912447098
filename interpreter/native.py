"""The optional native (C) kernel set: loading it and choosing it.

``edgelite.interpreter._native`` is built from interpreter/native/*.c at install
(setup.py; optional: without a C compiler the install succeeds and the numpy kernels
run). An Interpreter uses it when ``native`` is None (the default) and the extension
loaded, unless the environment variable ``EDGELITE_NATIVE=0`` is set; ``native=False``
forces numpy, ``native=True`` refuses to start without it. Integer results are identical
on both backends (the C kernels compute the numpy kernels' formulas).
"""

from __future__ import annotations

import os

from edgelite.errors import EdgeliteError

try:  # the compiled module is optional
    from . import _native as module
except ImportError:  # pragma: no cover - depends on the build
    module = None

ENV = "EDGELITE_NATIVE"


def built() -> bool:
    """The extension is compiled and importable."""
    return module is not None


def disabled_by_env() -> bool:
    return os.environ.get(ENV, "").strip().lower() in ("0", "false", "no", "off")


def choose(native: bool | None) -> bool:
    """Whether an Interpreter asked for ``native`` runs the native kernels."""
    if native is None:
        return built() and not disabled_by_env()
    if native and not built():
        raise EdgeliteError(
            "native=True but edgelite's native kernels are not built (no C compiler at "
            "install?); reinstall with a compiler or pass native=False")
    return bool(native)


def backend_name(native: bool) -> str:
    return "native" if native else "numpy"


def available_backend() -> str:
    """What a default Interpreter runs here: "native" or "numpy" (and why not native)."""
    if not built():
        return "numpy (native kernels not built)"
    if disabled_by_env():
        return f"numpy ({ENV}=0)"
    return "native"
