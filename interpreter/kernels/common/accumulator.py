"""The int32 accumulators of the int8 / uint8 CONV_2D, DEPTHWISE_CONV_2D and
FULLY_CONNECTED kernels, computed exactly on float BLAS.

TFLite's integer kernels compute, per output value,

    acc = bias + sum_k (w[k] - zp_w) * (x[k] - zp_x)          in int32

and an int32 overflow wraps (two's complement): the int32 loops of
reference_integer_ops::ConvPerChannel / DepthwiseConvPerChannel / FullyConnected (signed
overflow is undefined in C++, but wraps as compiled), TFLite's optimized kernels and
XNNPACK's microkernels (which fold the bias and the zero-point terms into an int32
initial value and add the products to it) all give ``wrap_int32(exact value)``, since
two's-complement addition wraps alike in any order. Measured
(tests/interpreter/kernels/common/test_accumulator.py) with LiteRT's BUILTIN_REF kernels and its
default set, both where XNNPACK takes the op and where TFLite's optimized kernel does
(uint8 depthwise with a filter quantized on axis 3): a bias of 2^31 - 1 plus a positive
sum comes out as a large negative accumulator, and XNNPACK's fp32 requantization converts
that wrapped int32 to float.

Here the sum runs on float BLAS, where it is exact while every partial sum is an integer
that the float type holds exactly: 2^24 for float32, 2^53 for float64. At prepare() the
weights, zero points and bias are known, so the kernel can bound every partial sum and
the final int32 value (``TermBounds``) and choose (``plan_accumulator``):

* ``FLOAT32``: one float32 product -- every partial sum is within 2^24;
* ``CHUNKED``: the reduction (K) split into consecutive ranges each of which is float32-
  exact; each range is one float32 product and the partial results are summed in
  float64 (exact: |sum| <= K * 255 * 255 + 2^31 stays far below 2^53 for any tensor
  a model can hold), instead of one float64 product at half the speed;
* ``FLOAT64``: one float64 product (the depthwise tap sums, which are not split);

and, independently, whether ``bias + sum`` can leave int32: then (``wraps``) the output
stage wraps the exact float64 value to int32 (``wrap_int32_float``) before requantizing;
where the bound proves it cannot, nothing is added to the fast path.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from ... import quant_math as qm

FLOAT32_EXACT = 2**24  # integers of magnitude up to this are exact in float32


class GemmPath(enum.Enum):
    FLOAT32 = "float32"  # one float32 product
    CHUNKED = "float32 chunks"  # float32 products over K ranges, summed in float64
    FLOAT64 = "float64"  # one float64 product


# The reduction is split only at multiples of this many k (and at K): the bounds are kept
# per block of rows, so that planning a layer of O x K weights costs O x K / 64 int64s,
# not O x K. Any 258 consecutive terms are float32-exact (258 * 65025 < 2^24, see
# float32_chunks), so a chunk always holds at least one whole block.
BLOCK = 64


@dataclass(frozen=True)
class TermBounds:
    """Bounds on the reduction ``sum_k w[k, o] * (x[k] - zp_x)`` over every int8 / uint8
    ``x``, per output column ``o``.

    With x - zp_x in [-lo_x, hi_x] (lo_x, hi_x >= 0: the zero point lies in the type's
    range; padding contributes 0 too), a term with w >= 0 lies in [-w lo_x, w hi_x] and
    one with w < 0 in [-|w| hi_x, |w| lo_x]. Any partial sum -- a sum over any subset of
    the terms, which is all a BLAS kernel ever forms, whatever its order or blocking --
    therefore lies in

        [-(P lo_x + N hi_x), P hi_x + N lo_x]

    with P / N the sums of the positive weights / of |negative weights| over the subset;
    both ends are attained (each term reaches its extremes independently).
    ``pos`` / ``neg``: those sums cumulated over k up to each block edge ``edges[i]``
    (shape (len(edges), O), int64; edges = 0, 64, 128, ..., K)."""

    edges: np.ndarray
    pos: np.ndarray
    neg: np.ndarray
    lo_x: int  # -(smallest x - zp_x)
    hi_x: int  # largest x - zp_x

    def extremes(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Per column, (lowest, highest) partial sum over k in [edges[start], edges[stop])."""
        p = self.pos[stop] - self.pos[start]
        n = self.neg[stop] - self.neg[start]
        return -(p * self.lo_x + n * self.hi_x), p * self.hi_x + n * self.lo_x

    def reach(self, start: int, stop: int) -> int:
        """The largest |partial sum| over k in [edges[start], edges[stop]), all columns."""
        low, high = self.extremes(start, stop)
        return int(max(high.max(), -low.min())) if high.size else 0


def term_bounds(weights: np.ndarray, x_dtype, zp_x: int) -> TermBounds:
    """``weights``: the integer (w - zp_w) as (K, O)."""
    info = np.iinfo(x_dtype)
    k = len(weights)
    edges = np.append(np.arange(0, k, BLOCK), k)
    # Per block: sum w and sum |w|, so P = (|w| + w) / 2 and N = (|w| - w) / 2.
    total = np.add.reduceat(weights, edges[:-1], axis=0, dtype=np.int64)
    size = np.add.reduceat(np.abs(weights), edges[:-1], axis=0, dtype=np.int64)
    zeros = np.zeros((1, weights.shape[1]), np.int64)
    pos = np.concatenate([zeros, (size + total) // 2]).cumsum(axis=0)
    neg = np.concatenate([zeros, (size - total) // 2]).cumsum(axis=0)
    return TermBounds(edges, pos, neg, zp_x - int(info.min), int(info.max) - zp_x)


def may_leave_int32(bounds: TermBounds, bias: np.ndarray | None) -> bool:
    """Whether ``bias[o] + sum_k w[k, o] * (x[k] - zp_x)`` can fall outside int32 for
    some input (the bounds are attained: each term reaches its extremes independently)."""
    low, high = bounds.extremes(0, len(bounds.edges) - 1)
    if bias is not None:
        b = np.asarray(bias, np.int64).reshape(-1)
        low, high = low + b, high + b
    return bool(low.size) and bool(low.min() < qm.INT32_MIN or high.max() > qm.INT32_MAX)


def float32_chunks(bounds: TermBounds) -> tuple[tuple[int, int], ...]:
    """Consecutive [start, stop) ranges of k covering K, each float32-exact and ending
    on a block edge: as few as the greedy split needs, then of (about) equal length
    where that still fits, since BLAS runs a short remainder slowly. One block alone is
    always exact: |w - zp_w| <= 255 and |x - zp_x| <= 255, so 64 terms stay below
    64 * 65025 < 2^24."""
    last = len(bounds.edges) - 1
    stops = []
    start = 0
    while start < last:  # the longest exact range from start: binary search on its end
        lo, hi = start + 1, last
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if bounds.reach(start, mid) <= FLOAT32_EXACT:
                lo = mid
            else:
                hi = mid - 1
        stops.append(lo)
        start = lo
    count = len(stops)
    equal = [last * (i + 1) // count for i in range(count)]
    if all(bounds.reach(a, b) <= FLOAT32_EXACT for a, b in zip([0] + equal[:-1], equal)):
        stops = equal
    edges = [int(e) for e in bounds.edges]
    return tuple((edges[a], edges[b]) for a, b in zip([0] + stops[:-1], stops))


@dataclass(frozen=True)
class AccumulatorPlan:
    """How one kernel gets its exact accumulators (see the module docstring).

    ``acc_dtype`` is the dtype of the summed accumulator the output stage reads: float32
    only for a single float32 product whose value the output stage can take as it is
    (no wrap; with XNNPACK's fp32 requantization, a bias exact in float32)."""

    path: GemmPath
    chunks: tuple[tuple[int, int], ...]  # K ranges, one float product each
    wraps: bool  # bias + sum may leave int32: wrap it like TFLite's int32 accumulator
    acc_dtype: np.dtype

    @property
    def gemm_dtype(self) -> np.dtype:
        return np.dtype(np.float64 if self.path is GemmPath.FLOAT64 else np.float32)

    @property
    def needs_part(self) -> bool:
        """Whether the float products go to a scratch before the accumulator."""
        return len(self.chunks) > 1 or self.gemm_dtype != self.acc_dtype

    def matmul(self, a: np.ndarray, b: np.ndarray, acc: np.ndarray,
               part: np.ndarray | None) -> None:
        """acc = a @ b exactly. ``a``: (..., rows, K), ``b``: (..., K, cols), both in
        gemm_dtype; ``part``: a scratch shaped like ``acc`` in gemm_dtype (needs_part)."""
        if part is None:
            np.matmul(a, b, out=acc)
            return
        for i, (start, stop) in enumerate(self.chunks):
            np.matmul(a[..., start:stop], b[..., start:stop, :], out=part)
            if i == 0:
                np.copyto(acc, part)
            else:
                np.add(acc, part, out=acc)


def plan_accumulator(weights: np.ndarray, x_dtype, zp_x: int, bias: np.ndarray | None,
                     float32_bias: bool, split: bool = True) -> AccumulatorPlan:
    """The plan for ``bias + sum_k weights[k, o] * (x[k] - zp_x)``.

    ``weights``: integer (w - zp_w) as (K, O); ``float32_bias``: the output stage adds
    the bias in float32 (XNNPACK's fp32 requantization), which is exact only for biases
    that float32 holds; ``split``: whether the kernel can run K in chunks (else FLOAT64
    where one float32 product is not exact)."""
    bounds = term_bounds(weights, x_dtype, zp_x)
    wraps = may_leave_int32(bounds, bias)
    whole = ((0, len(weights)),)
    if bounds.reach(0, len(bounds.edges) - 1) <= FLOAT32_EXACT:
        path, chunks = GemmPath.FLOAT32, whole
    elif split:
        path, chunks = GemmPath.CHUNKED, float32_chunks(bounds)
    else:
        path, chunks = GemmPath.FLOAT64, whole
    exact_bias = not float32_bias or bias_fits_float32(bias)
    acc32 = path is GemmPath.FLOAT32 and not wraps and exact_bias
    return AccumulatorPlan(path, chunks, wraps, np.dtype(np.float32 if acc32 else np.float64))


def bias_fits_float32(bias: np.ndarray | None) -> bool:
    """Whether every bias value is exactly representable in float32."""
    if bias is None:
        return True
    b = np.asarray(bias, np.int64)
    return bool(np.all(b.astype(np.float32).astype(np.int64) == b))


def wrap_int32_float(acc: np.ndarray) -> None:
    """In place: the exact integers of float64 ``acc`` (|acc| < 2^53) wrapped to int32
    as two's complement, ``acc - 2^32 * floor((acc + 2^31) / 2^32)`` -- every step is
    exact in float64 (integers below 2^53, scaling by powers of two)."""
    turns = acc + 2.0**31
    np.multiply(turns, 2.0**-32, out=turns)
    np.floor(turns, out=turns)
    np.multiply(turns, 2.0**32, out=turns)
    np.subtract(acc, turns, out=acc)
