"""Eigen's float32 tanh and logistic, as LiteRT's tensor_utils::ApplyActivationToVector
computes them for the recurrent kernels (``.array().tanh()`` / ``.logistic()`` on an
Eigen Map): bit for bit, so that hybrid LSTMs / RNNs / SVDFs match LiteRT exactly.

* tanh -- Eigen's ptanh_float: x clamped to +-7.90738964 (the build without FMA), then
  the odd/even rational function ``(x + x^3 p(x^2)) / q(x^2)`` (p: 4, q: 5 coefficients,
  Horner steps each a float32 multiply then add). Eigen uses it for packets and single
  values alike.
* logistic -- Eigen's scalar_logistic_op<float>, whose two paths differ in the last
  bits: the packet path computes exp(x/2) with a Cephes-style range reduction and a
  degree-5 polynomial, squares it and returns ``e / (1 + e)`` (0 below -104); the
  single-value path is ``e / (1 + e)`` with ``e = expf(min(x, 16.6355324))``. Eigen's
  assignment loop runs the single-value path on the head of a vector until its
  destination is 16-byte aligned and on the tail that does not fill a 4-lane packet
  (measured against the installed LiteRT: 4-lane packets, no FMA) -- see
  ``scalar_lanes``.

Both were measured against LiteRT's float TANH / LOGISTIC kernels (which call the same
Eigen functions): 0 differences in 88,000 / 48,000 random inputs.
"""

from __future__ import annotations

import numpy as np

from ....schema.ops import ACTIVATION, ACTIVATION_NAME
from ... import libm
from ..base import OpContext

_F32 = np.float32
PACKET = 4  # float lanes of the Eigen packets LiteRT's x86 build uses

# The recurrent kernels' fused activation (LSTM / RNN / SVDF): ApplyActivationToVector's
# float path, in place.
_ACTIVATIONS = {ACTIVATION[n] for n in ("NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH")}


def activation_code(ctx: OpContext) -> int:
    """The fused activation of an LSTM / RNN (applied to the cell gate and the cell
    output): one ApplyActivationToVector computes; SIGN_BIT is refused."""
    code = int(ctx.option("fused_activation_function", ACTIVATION["NONE"]))
    if code not in _ACTIVATIONS:
        raise ctx.unsupported(
            f"fused activation {ACTIVATION_NAME.get(code, code)} is not supported by the "
            "recurrent kernels (NONE, RELU, RELU_N1_TO_1, RELU6 and TANH are)"
        )
    return code


def apply_activation(code: int, x: np.ndarray) -> None:
    """ApplyActivationToVector in place (float32)."""
    if code == ACTIVATION["TANH"]:
        np.tanh(x, out=x)
    elif code == ACTIVATION["RELU"]:
        np.maximum(x, 0, out=x)
    elif code == ACTIVATION["RELU6"]:
        np.clip(x, 0, 6, out=x)
    elif code == ACTIVATION["RELU_N1_TO_1"]:
        np.clip(x, -1, 1, out=x)


_TANH_CLAMP = _F32(7.90738964080810547)
_TANH_P = tuple(_F32(c) for c in (1.394553628e-8, 2.102733560e-5, 3.520756727e-3,
                                  1.340216100e-1))
_TANH_Q = tuple(_F32(c) for c in (8.015776984e-7, 3.326951409e-4, 2.597254514e-2,
                                  4.673548340e-1, 1.0))


def _horner(x2: np.ndarray, coefficients) -> np.ndarray:
    acc = np.full_like(x2, coefficients[0])
    for c in coefficients[1:]:
        acc *= x2
        acc += c
    return acc


def tanh(a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """ptanh_float of a float32 array (into ``out`` when given)."""
    x = np.clip(np.asarray(a, _F32), -_TANH_CLAMP, _TANH_CLAMP)
    x2 = x * x
    x3 = x2 * x
    p = _horner(x2, _TANH_P)
    p *= x3
    p += x  # x * (1 + x^2 p) = x^3 p + x
    p /= _horner(x2, _TANH_Q)
    if out is None:
        return p
    out[...] = p
    return out


_EXP_HI, _EXP_LO = _F32(16.6355324), _F32(-104.0)


def _logistic_packet(a: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):  # far below -104: masked to 0
        return _logistic_packet_values(a)


def _logistic_packet_values(a: np.ndarray) -> np.ndarray:
    x = np.minimum(a, _EXP_HI) * _F32(0.5)  # exp(x) = exp(x / 2)^2
    m = x * _F32(1.44269504088896341)  # m = floor(x / ln 2 + 1/2)
    m += _F32(0.5)
    np.floor(m, out=m)
    r = m * _F32(-0.693359375)  # r = x - m ln 2, ln 2 in two parts
    r += x
    t = m * _F32(2.12194440e-4)
    r += t
    r2 = r * r
    even = r2 * _F32(4.1898667812347412109375e-2)
    even += _F32(0.49999141693115234375)
    odd = r2 * _F32(8.33471305668354034423828125e-3)
    odd += _F32(0.16666877269744873046875)
    p = r * odd
    p += even
    p *= r2
    p += r + _F32(1)
    p *= np.exp2(m).astype(_F32)  # 2^m exactly (pldexp_fast)
    p *= p
    out = p / (p + _F32(1))
    out[a < _EXP_LO] = 0
    return out


def _logistic_scalar(a: np.ndarray) -> np.ndarray:
    e = libm.expf(np.minimum(a, _EXP_HI))
    return (e / (e + _F32(1))).astype(_F32)


def scalar_lanes(offset: int, size: int) -> np.ndarray:
    """Which of ``size`` elements written from float offset ``offset`` of a 16-byte
    aligned buffer Eigen computes one at a time (the unaligned head, the short tail)."""
    head = min((-offset) % PACKET, size)
    tail = (size - head) % PACKET
    lanes = np.zeros(size, bool)
    lanes[:head] = True
    lanes[size - tail:] = True
    return lanes


def logistic(a: np.ndarray, scalar: np.ndarray) -> None:
    """scalar_logistic_op in place on a float32 array; ``scalar`` (same shape) marks the
    elements computed by the single-value path."""
    packet = _logistic_packet(a)
    if scalar.any():
        packet[scalar] = _logistic_scalar(a[scalar])
    a[...] = packet


def activate(code: int, x: np.ndarray) -> None:
    """ApplyActivationToVector in place, TANH as Eigen computes it."""
    if code == ACTIVATION["TANH"]:
        tanh(x, out=x)
    else:
        apply_activation(code, x)
