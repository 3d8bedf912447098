"""Fused activation functions (the ``fused_activation_function`` option).

TFLite applies a fused activation as a clamp to ``[activation_min, activation_max]``
computed by ``CalculateActivationRange`` in tensorflow/lite/kernels/kernel_util.h:

    NONE          -> [lowest, max]   (no clamp)
    RELU          -> [0, max]
    RELU_N1_TO_1  -> [-1, 1]
    RELU6         -> [0, 6]
    anything else -> [lowest, max]   (TANH / SIGN_BIT are silently ignored there)

Silently ignoring TANH or SIGN_BIT would compute something the model author did not
ask for, so edgelite refuses them with UnsupportedOpError instead.
"""

from __future__ import annotations

import numpy as np

from ....schema.ops import ACTIVATION, ACTIVATION_NAME
from ..base import OpContext

# ActivationFunctionType values, from the schema.
NONE = ACTIVATION["NONE"]
RELU = ACTIVATION["RELU"]
RELU_N1_TO_1 = ACTIVATION["RELU_N1_TO_1"]
RELU6 = ACTIVATION["RELU6"]

# A clamp is (low, high); high None means "no upper bound" (RELU), the whole clamp None
# means "no activation".
Clamp = tuple | None


def activation_clamp(ctx: OpContext, dtype: np.dtype) -> Clamp:
    """The clamp for the op's fused activation, as CalculateActivationRange computes it."""
    code = int(ctx.option("fused_activation_function", NONE))
    if code == NONE:
        return None
    kind = np.dtype(dtype).type
    if code == RELU:
        return (kind(0), None)
    if code == RELU6:
        return (kind(0), kind(6))
    if code == RELU_N1_TO_1:
        if np.issubdtype(kind, np.unsignedinteger):
            raise ctx.unsupported("RELU_N1_TO_1 on an unsigned integer tensor")
        return (kind(-1), kind(1))
    name = ACTIVATION_NAME.get(code, f"unknown code {code}")
    raise ctx.unsupported(
        f"fused activation {name} is not supported (TFLite's kernels ignore it; "
        "only NONE, RELU, RELU_N1_TO_1 and RELU6 are applied)"
    )


def apply_clamp(clamp: Clamp, out: np.ndarray) -> None:
    """Clamp ``out`` in place; NaN stays NaN like std::min(std::max(x, lo), hi)."""
    if clamp is None:
        return
    low, high = clamp
    if high is None:  # RELU: no upper bound
        high = np.inf if out.dtype.kind == "f" else np.iinfo(out.dtype).max
    clamp_inplace(out, low, high)


SMALL_CLAMP = 2048  # elements


def clamp_inplace(out: np.ndarray, low, high) -> None:
    """out = min(max(out, low), high) in place (NaN stays NaN). np.clip's loop is several
    times faster than np.maximum + np.minimum on large arrays, but its Python wrapper
    costs more than two ufunc calls on small ones."""
    if out.size > SMALL_CLAMP:
        np.clip(out, low, high, out=out)
    else:
        np.maximum(out, low, out=out)
        np.minimum(out, high, out=out)
